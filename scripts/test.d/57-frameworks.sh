# Real frameworks (issue 25): every producer into every consumer among NumPy, PyTorch, JAX,
# TensorFlow, PaddlePaddle, MLX, Warp, ONNX Runtime, PyArrow, tvm-ffi, dlpack_helpers.Tensor and
# the example C extension (built from the wheel's SDK), directly and through dh.import_tensor;
# fails on any case the package loses or any writability it invents (tests-frameworks/). Then
# dpnp/dpctl (oneAPI, kDLOneAPI on Intel's OpenCL CPU runtime) in a venv of their own.
#
# The frameworks live in their own virtual environment, .cache/frameworks/venv, installed from
# scripts/frameworks-requirements.txt (exact pins; about 3.9 GB of wheels, 8.7 GB installed; see
# README) and reused while that file is unchanged. HOME points into .cache/frameworks/home (the
# frameworks' own caches: Warp's kernel cache, Paddle's, JAX's) and the tests run from an empty
# directory (a folder named like a module in the cwd would shadow it).
# needs: venv release
source "$(dirname "$0")/../common.sh"
setup_venv
fail() { echo "FAIL: $*" >&2; exit 1; }

setup_frameworks_venv || fail "the framework virtual environment (.cache/frameworks/venv)"
fpip() { "$FPY" -m pip --disable-pip-version-check --quiet "$@"; }
echo "== the package's wheel and the example C extension (built against the wheel's SDK) into it"
fpip install --no-deps --force-reinstall "$WHEEL_DIR"/dlpack_helpers-*.whl || fail "pip install of the wheel"
fpip install "scikit-build-core>=0.10" "cmake>=3.20" || fail "pip install scikit-build-core cmake"
CMD="$(cd "$FW/run" && "$FPY" -m dlpack_helpers --cmakedir)" || fail "python -m dlpack_helpers --cmakedir"
rm -rf "$FW/example-build"
fpip install --no-build-isolation --no-deps --force-reinstall \
  --config-settings=cmake.define.dlpack_helpers_DIR="$CMD" \
  --config-settings=build-dir="$FW/example-build" "$ROOT/examples/python_extension" \
  || fail "pip install examples/python_extension"

cd "$FW/run"
unset DLPACK_HELPERS_LIBRARY PYTHONPATH
echo "== pytest tests-frameworks (entry points, exchange tables and the refusals they skip, None devices, subclasses)"
"$FPY" -m pytest -q -p no:cacheprovider "$ROOT/tests-frameworks" --ignore="$ROOT/tests-frameworks/test_oneapi.py" \
  || fail "tests-frameworks"
echo "== every producer into every consumer, direct and through dh.import_tensor"
"$FPY" "$ROOT/tests-frameworks/matrix.py" || fail "the producer x consumer matrix"

# oneAPI without a GPU (item 6): dpctl/dpnp on Intel's OpenCL CPU runtime, its own venv. A set
# that cannot be installed (the registry no longer serves a pin, another platform) is skipped
# with the reason; once installed, its tests must pass.
OVENV="$FW/oneapi-venv"
OPY="$OVENV/bin/python"
OREQ="$ROOT/scripts/oneapi-requirements.txt"
oneapi_ready=1
if ! cmp -s "$OREQ" "$OVENV/.requirements" 2>/dev/null; then
  echo "== installing the pinned oneAPI set (scripts/oneapi-requirements.txt: about 0.9 GB of wheels)"
  rm -rf "$OVENV"
  python3 -m venv "$OVENV" || fail "python3 -m venv (oneAPI)"
  if "$OPY" -m pip install --quiet --disable-pip-version-check -r "$OREQ" >"$FW/oneapi-install.log" 2>&1; then
    cp "$OREQ" "$OVENV/.requirements"
  else
    oneapi_ready=""
    echo "SKIP oneAPI: the pinned set of scripts/oneapi-requirements.txt could not be installed:"
    tail -n 5 "$FW/oneapi-install.log" | sed 's/^/  /'
  fi
fi
if [ -n "$oneapi_ready" ]; then
  "$OPY" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$WHEEL_DIR"/dlpack_helpers-*.whl \
    || fail "pip install of the wheel (oneAPI venv)"
  [ -e "$OVENV/lib/libintelocl.so" ] || fail "the oneAPI set has no lib/libintelocl.so (the OpenCL CPU runtime)"
  echo "== pytest tests-frameworks/test_oneapi.py (dpnp on the OpenCL CPU device)"
  OCL_ICD_FILENAMES="$OVENV/lib/libintelocl.so" "$OPY" -m pytest -q -p no:cacheprovider \
    "$ROOT/tests-frameworks/test_oneapi.py" || fail "tests-frameworks/test_oneapi.py"
fi
echo "frameworks: all checks passed"
