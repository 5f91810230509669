# Python embedding: the dlpack_helpers package (native extension, installed into .venv by
# setup_venv with `pip install .`) against real producers (NumPy, PyArrow), its ctypes prototypes
# against the header, and the same wheel installed into a fresh venv.
# needs: venv release
source "$(dirname "$0")/../common.sh"
setup_venv
"$PY" -c 'import numpy, pyarrow, pytest' 2>/dev/null || { echo "error: numpy, pyarrow and pytest are needed in .venv (scripts/requirements.txt)" >&2; exit 1; }
"$PY" -m pytest -q -p no:cacheprovider tests-py
# Install check: the wheel `pip install .` built, installed into a fresh venv,
# must import from any directory without DLPACK_HELPERS_LIBRARY (the library is in the wheel).
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
"$PY" -m venv "$TMP/venv" || { echo "error: python -m venv failed (install the python3-venv package)" >&2; exit 1; }
VPY="$TMP/venv/bin/python"
# NumPy for the check comes from the project venv (a .pth line), not from a second download.
"$PY" -c 'import numpy, os, sys; print(os.path.dirname(os.path.dirname(numpy.__file__)))' \
  > "$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/project-venv.pth"
# --ignore-installed: the project venv (reachable through the .pth) holds the package already.
"$VPY" -m pip install --quiet --disable-pip-version-check --no-deps --ignore-installed "$WHEEL_DIR"/dlpack_helpers-*.whl
mkdir "$TMP/elsewhere"
(cd "$TMP/elsewhere" && env -u DLPACK_HELPERS_LIBRARY -u PYTHONPATH "$VPY" -c '
import os, numpy as np, dlpack_helpers as dh
from dlpack_helpers import _lib
venv = os.path.realpath("'"$TMP"'/venv")
assert os.path.realpath(dh.__file__).startswith(venv), dh.__file__
assert os.path.realpath(dh.lib._name).startswith(venv), dh.lib._name  # the copy in the wheel
assert dh.lib._name == dh._native._library_path(), dh.lib._name  # the one the extension uses
with dh.import_tensor(np.arange(3.0)) as t:
    a = np.from_dlpack(t)
assert a.tolist() == [0.0, 1.0, 2.0]
print("pip-installed dlpack_helpers (fresh venv, no DLPACK_HELPERS_LIBRARY) works:", dh.info()["version"], dh.lib._name)')
