"""The reliability tests import their helpers (header.py, cabi.py, baselines.py) from here."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
