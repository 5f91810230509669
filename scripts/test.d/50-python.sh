# Python embedding: the dlpack_helpers package (python/) against real producers (NumPy, PyArrow),
# its ctypes prototypes against the header, and a pip install of the package into a fresh venv.
# needs: venv release
source "$(dirname "$0")/../common.sh"
"$PY" -c 'import numpy, pyarrow, pytest' 2>/dev/null || { echo "error: numpy, pyarrow and pytest are needed in .venv (scripts/requirements.txt)" >&2; exit 1; }
"$PY" -m pytest -q -p no:cacheprovider tests-py
# Install check: `pip install ./python` into a fresh venv must import from any
# directory without DLPACK_HELPERS_LIBRARY (the built library is bundled next to the package).
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
"$PY" -m venv "$TMP/venv" || { echo "error: python -m venv failed (install the python3-venv package)" >&2; exit 1; }
VPY="$TMP/venv/bin/python"
# NumPy for the check comes from the project venv (a .pth line), not from a second download.
"$PY" -c 'import numpy, os, sys; print(os.path.dirname(os.path.dirname(numpy.__file__)))' \
  > "$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/project-venv.pth"
"$VPY" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation ./python 2>/dev/null \
  || "$VPY" -m pip install --quiet --disable-pip-version-check --no-deps ./python
mkdir "$TMP/elsewhere"
(cd "$TMP/elsewhere" && env -u DLPACK_HELPERS_LIBRARY -u PYTHONPATH "$VPY" -c '
import os, numpy as np, dlpack_helpers as dh
from dlpack_helpers import _lib
venv = os.path.realpath("'"$TMP"'/venv")
assert os.path.realpath(dh.__file__).startswith(venv), dh.__file__
assert os.path.realpath(dh.lib._name).startswith(venv), dh.lib._name  # the bundled copy
with dh.import_tensor(np.arange(3.0)) as t:
    a = np.from_dlpack(t)
assert a.tolist() == [0.0, 1.0, 2.0]
print("pip-installed dlpack_helpers (fresh venv, no DLPACK_HELPERS_LIBRARY) works:", dh.info()["version"], dh.lib._name)')
