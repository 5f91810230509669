# Python embedding: the dlpack_helpers package (python/) against real producers (NumPy, PyArrow),
# its ctypes prototypes against the header, and a pip install of the package from the repository.
source "$(dirname "$0")/../common.sh"
"$PY" -c 'import numpy, pyarrow, pytest' 2>/dev/null || { echo "error: numpy, pyarrow and pytest are needed in .venv (scripts/requirements.txt)" >&2; exit 1; }
"$PY" -m pytest -q -p no:cacheprovider tests-py
# The package installs with pip from the repository and finds the library via DLPACK_HELPERS_LIBRARY.
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
"$PY" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation --target "$TMP/site" ./python 2>/dev/null \
  || "$PY" -m pip install --quiet --disable-pip-version-check --no-deps --target "$TMP/site" ./python
(cd "$TMP" && PYTHONPATH="$TMP/site" "$PY" -c '
import numpy as np, dlpack_helpers as dh
assert dh.__file__.startswith("'"$TMP"'"), dh.__file__
with dh.import_tensor(np.arange(3.0)) as t:
    assert np.from_dlpack(t).tolist() == [0.0, 1.0, 2.0]
print("pip-installed dlpack_helpers works:", dh.info()["version"])')
