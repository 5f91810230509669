# PyO3 extension: tests/pyo3-extension, a Python module written with dlpack-helpers' `pyo3`
# feature (Managed::from_pyobject / into_capsule / DLPackExport), built here with PyO3 from
# crates.io against the project's .venv Python, imports and exports tensors with NumPy, with the
# installed dlpack_helpers package, and with PyTorch when a Python that has it is at hand: the
# project .venv, DLPACK_HELPERS_FRAMEWORK_PYTHON (a Python with torch, numpy and pytest), or the
# framework part's environment .cache/frameworks/venv (this part runs after it, 57-frameworks, so
# a full scripts/test always has it). Without PyTorch its tests are skipped and the reason is
# printed.
# needs: venv
source "$(dirname "$0")/../common.sh"
OUT="$ROOT/target/pyo3-extension"
echo "== cargo build (tests/pyo3-extension, PYO3_PYTHON=.venv/bin/python)"
(cd "$ROOT/tests/pyo3-extension" && PYO3_PYTHON="$PY" cargo build --locked --quiet --target-dir "$OUT")
mkdir -p "$OUT/module"
cp "$OUT/debug/libdlpack_rs_ext.so" "$OUT/module/dlpack_rs_ext.abi3.so"
TEST="$ROOT/tests/pyo3-extension/test_extension.py"
echo "== pytest with $PY (NumPy $("$PY" -c 'import numpy; print(numpy.__version__)'))"
PYTHONPATH="$OUT/module" "$PY" -m pytest -q -rs -p no:cacheprovider "$TEST"
if "$PY" -c 'import torch' 2>/dev/null; then
  exit 0  # PyTorch ran above
fi
FW="${DLPACK_HELPERS_FRAMEWORK_PYTHON:-}"
if [ -z "$FW" ] && [ -x "$ROOT/.cache/frameworks/venv/bin/python" ]; then FW="$ROOT/.cache/frameworks/venv/bin/python"; fi
if [ -n "$FW" ] && "$FW" -c 'import torch, numpy, pytest' 2>/dev/null; then
  echo "== pytest with $FW (PyTorch $("$FW" -c 'import torch; print(torch.__version__)'))"
  PYTHONPATH="$OUT/module" "$FW" -m pytest -q -rs -p no:cacheprovider "$TEST"
else
  echo "   PyTorch: skipped: not importable in .venv, and no framework Python" \
       "(DLPACK_HELPERS_FRAMEWORK_PYTHON, or .cache/frameworks/venv from scripts/test frameworks)"
fi
