"""Run the tests against the package in python/ (or an installed one) and the release library."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
try:
    import dlpack_helpers  # noqa: F401  (pip install . at the root; setup_venv does it)
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("DLPACK_HELPERS_LIBRARY", str(ROOT / "target" / "release" / "libdlpack_helpers.so"))
