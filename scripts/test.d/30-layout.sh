# Validation and layout helpers on real NumPy arrays (non-contiguous, negative strides,
# broadcast, 0-d, empty), through the shared library and ctypes.
source "$(dirname "$0")/../common.sh"
"$PY" -c 'import numpy, pytest' 2>/dev/null || { echo "error: numpy and pytest are missing from .venv (scripts/requirements.txt)" >&2; exit 1; }
"$PY" -m pytest -q tests-py/test_layout_numpy.py
