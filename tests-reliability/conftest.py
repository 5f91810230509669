"""The reliability tests import their helpers (header.py, cabi.py, baselines.py) from here, and the
dlpack_helpers package from python/ (as tests-py does)."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import dlpack_helpers  # noqa: F401  (pip install ./python)
except ImportError:
    sys.path.insert(0, str(HERE.parent / "python"))
