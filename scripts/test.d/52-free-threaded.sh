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
setup_free_threaded
rc=$?
set -e
if [ "$rc" = 3 ]; then
  echo "SKIP: free-threaded part: no free-threaded CPython can be built on this machine (reason above)"
  exit 0
fi
[ "$rc" = 0 ] || fail "setup_free_threaded failed (exit $rc): see above"
WHEEL="$(ls "$FTWHEELS"/dlpack_helpers-*.whl)"
case "$(basename "$WHEEL")" in
  *-cp313-cp313t-*"$WHEEL_PLAT"*.whl) echo "ok: $(basename "$WHEEL") (the abi3 wheel's floor, $WHEEL_PLAT)" ;;
  *) fail "the free-threaded wheel is not tagged cp313-cp313t-$WHEEL_PLAT: $(basename "$WHEEL")" ;;
esac
# The same floor and the same single library file as the abi3 wheel (63-wheel checks that one).
for w in "$FTWHEELS"/built/dlpack_helpers-*.whl "$WHEEL"; do
  show="$("$FTVENV/bin/auditwheel" show "$w" 2>&1 | tr -s ' \n' '  ')" || fail "auditwheel show $(basename "$w"): $show"
  case "$show" in
    *"consistent with the following platform tag: \"$WHEEL_PLAT\""*) ;;
    *) fail "auditwheel show $(basename "$w") does not report $WHEEL_PLAT: $show" ;;
  esac
done
X="$(mktemp -d)"; trap 'rm -rf "$X"' EXIT
"$FTPY" -m zipfile -e "$WHEEL" "$X"
mapfile -t elves < <(cd "$X" && find . -type f -exec sh -c 'head -c4 "$1" | grep -q "ELF" && echo "${1#./}"' _ {} \; | sort)
want=("dlpack_helpers/_native.cpython-313t-$(uname -m)-linux-gnu.so" "dlpack_helpers/lib/libdlpack_helpers.so.0.1")
[ "${elves[*]}" = "${want[*]}" ] || fail "the cp313t wheel's binaries are [${elves[*]}], expected [${want[*]}]"
for f in "${elves[@]}"; do
  newest="$(objdump -T "$X/$f" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n1)"
  echo "   $f: $(stat -c %s "$X/$f") bytes, newest glibc symbol version $newest"
done
echo "ok: auditwheel show: consistent with \"$WHEEL_PLAT\" (built and repaired); one library file, the extension for cp313t"

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
