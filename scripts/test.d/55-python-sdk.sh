# The Python package as the C/C++ SDK (issue 11): the package, installed into a fresh venv, answers
# `python -m dlpack_helpers --includedir | --libdir | --cmakedir | --pkgconfigdir | --cflags |
# --libs` with directories that hold the header, the shared library, the CMake package and the
# pkg-config file, and --manifest with the specification's manifest (spec/abi.toml); then the example extension examples/python_extension (C, scikit-build-core,
# find_package(dlpack_helpers CONFIG REQUIRED) with -Ddlpack_helpers_DIR from --cmakedir) is
# built against it with pip and its tests run on NumPy, PyArrow (and JAX on CPU when the project
# venv has it) in that venv.
#
# The package is the wheel of the repository root (pyproject.toml): the manylinux wheel setup_venv
# built and repaired into target/wheels when there is one, else `pip wheel .` here. Everything
# after the wheel exists runs with no Rust toolchain on PATH (a user of the wheel has none), and
# ends with one process that loads the package, the example extension and the library through
# ctypes by its documented name (dlpack_helpers.get_library_path()): /proc/self/maps must show
# one library file. The native package's wheel lays the
# SDK out inside the package: dlpack_helpers/include, dlpack_helpers/lib, lib/cmake/dlpack_helpers,
# lib/pkgconfig. Before the root has a pyproject.toml the same layout is assembled from
# python/dlpack_helpers and a `cmake --install` of this tree.
source "$(dirname "$0")/../common.sh"
setup_venv
need cmake "installed into .venv from scripts/requirements.txt (cmake>=3.20)"
need pkg-config "the pkg-config (or pkgconf) package"
need cc "a C compiler"
fail() { echo "FAIL: $*" >&2; exit 1; }

WORK="$ROOT/target/python-sdk"
rm -rf "$WORK"
mkdir -p "$WORK"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
"$PY" -m venv "$TMP/venv" || fail "python -m venv failed (install the python3-venv package)"
VPY="$TMP/venv/bin/python"
SITE="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# NumPy, PyArrow, pytest (and JAX if present) come from the project venv (a .pth line) instead of a
# second download. A dlpack_helpers installed there comes after this venv's own site-packages on
# sys.path, so the wheel installed here is the one imported (checked below).
"$PY" -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))' > "$SITE/project-venv.pth"
pip_() { "$VPY" -m pip --disable-pip-version-check "$@"; }
echo "== scikit-build-core into the fresh venv"
pip_ install --quiet -c "$ROOT/scripts/constraints.txt" "scikit-build-core>=0.10" || fail "pip install scikit-build-core"

if [ -f "$ROOT/pyproject.toml" ]; then
  shopt -s nullglob
  wheels=("${WHEEL_DIR:-$ROOT/target/wheels}"/dlpack_helpers-*.whl)
  shopt -u nullglob
  if [ "${#wheels[@]}" = 0 ]; then
    echo "== pip wheel of the repository root"
    pip_ wheel --quiet --no-deps -w "$WORK/wheels" "$ROOT" >"$WORK/wheel.log" 2>&1 || { cat "$WORK/wheel.log"; fail "pip wheel ."; }
    wheels=("$WORK"/wheels/dlpack_helpers-*.whl)
  fi
  echo "== pip install ${wheels[0]#"$ROOT/"} into the fresh venv"
  # --ignore-installed: the project venv (on sys.path through the .pth) may have the package too
  pip_ install --quiet --no-deps --ignore-installed "${wheels[0]}" || fail "pip install of the wheel"
else
  echo "== no pyproject.toml at the root yet: the wheel's layout assembled from python/ and cmake --install"
  cmake -S "$ROOT" -B "$WORK/cmake" -DDLPACK_HELPERS_BUILD_TESTS=OFF -DDLPACK_HELPERS_CARGO_TARGET_DIR="$ROOT/target" \
    -DCMAKE_INSTALL_PREFIX="$WORK/prefix" >"$WORK/cmake.log" 2>&1 \
    && cmake --build "$WORK/cmake" -j 2 >>"$WORK/cmake.log" 2>&1 \
    && cmake --install "$WORK/cmake" >>"$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log"; fail "cmake install"; }
  cp -r python/dlpack_helpers "$SITE/"
  rm -rf "$SITE/dlpack_helpers/__pycache__"
  cp -a "$WORK/prefix/include" "$WORK/prefix/lib" "$WORK/prefix/share" "$SITE/dlpack_helpers/"
  # the ctypes package loads the library next to it: the same file as lib/ (one copy per process)
  ln -s lib/libdlpack_helpers.so "$SITE/dlpack_helpers/libdlpack_helpers.so"
fi

# From here on: no cargo, no rustc on PATH (the venv's bin first, for cmake and python).
NO_RUST_PATH=""
IFS=: read -r -a path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
  [ -n "$d" ] && { [ -e "$d/cargo" ] || [ -e "$d/rustc" ]; } && continue
  NO_RUST_PATH="${NO_RUST_PATH:+$NO_RUST_PATH:}$d"
done
export PATH="$TMP/venv/bin:$NO_RUST_PATH"
unset CARGO RUSTC CARGO_HOME RUSTUP_HOME RUSTUP_TOOLCHAIN
if command -v cargo >/dev/null || command -v rustc >/dev/null; then fail "a Rust toolchain is still on PATH"; fi
echo "== no Rust toolchain on PATH from here on"

echo "== python -m dlpack_helpers (from elsewhere, without DLPACK_HELPERS_LIBRARY)"
mkdir -p "$TMP/elsewhere"
cd "$TMP/elsewhere"
unset DLPACK_HELPERS_LIBRARY PYTHONPATH
"$VPY" -c 'import dlpack_helpers, os, sys; sys.exit(0 if os.path.realpath(dlpack_helpers.__file__).startswith(os.path.realpath(sys.argv[1])) else 1)' "$SITE" \
  || fail "the fresh venv does not import its own dlpack_helpers"
ask() { "$VPY" -m dlpack_helpers "$@" || fail "python -m dlpack_helpers $*"; }
INC="$(ask --includedir)"; LIBD="$(ask --libdir)"; CMD="$(ask --cmakedir)"; PCD="$(ask --pkgconfigdir)"
echo "includedir $INC"; echo "libdir $LIBD"; echo "cmakedir $CMD"; echo "pkgconfigdir $PCD"
case "$INC$LIBD$CMD$PCD" in *"$ROOT"*) fail "an SDK directory points into the source tree, not the venv";; esac
[ -f "$INC/dlpack_helpers.h" ] && [ -f "$INC/dlpack_helpers.hpp" ] || fail "no dlpack_helpers.h/.hpp in $INC"
[ -e "$LIBD/libdlpack_helpers.so" ] || fail "no libdlpack_helpers.so in $LIBD"
[ -f "$CMD/dlpack_helpersConfig.cmake" ] || fail "no dlpack_helpersConfig.cmake in $CMD"
[ -f "$PCD/dlpack_helpers.pc" ] || fail "no dlpack_helpers.pc in $PCD"
[ "$(ask --includedir --libdir)" = "$INC $LIBD" ] || fail "several options are not answered in order on one line"
MAN="$(ask --manifest)"; echo "manifest $MAN"
cmp -s "$MAN" "$ROOT/spec/abi.toml" || fail "--manifest is not spec/abi.toml: $MAN"
LIBF="$(ask --library)"; echo "library $LIBF"
[ "$(dirname "$LIBF")" = "$LIBD" ] && [ "$(head -c4 "$LIBF" | tail -c3)" = "ELF" ] || fail "--library is not the ELF file in $LIBD: $LIBF"
"$VPY" -c "
import dlpack_helpers as dh
assert (dh.get_include(), dh.get_library_dir(), dh.get_cmake_dir()) == ('$INC', '$LIBD', '$CMD')" \
  || fail "get_include()/get_library_dir()/get_cmake_dir() differ from the command line"

echo "== a C program compiled with \$(python -m dlpack_helpers --cflags --libs), and with pkg-config"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror "$ROOT/tests/cmake-consumer/consumer.c" -o "$TMP/consumer" $(ask --cflags --libs) \
  || fail "compile with --cflags --libs"
"$TMP/consumer" >/dev/null || fail "the program linked with --libs does not run (its run path must find the library)"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror "$ROOT/tests/cmake-consumer/consumer.c" -o "$TMP/consumer-pc" \
  $(PKG_CONFIG_PATH="$PCD" pkg-config --cflags --libs dlpack_helpers) -Wl,-rpath,"$LIBD" \
  || fail "compile with the wheel's dlpack_helpers.pc"
"$TMP/consumer-pc" >/dev/null || fail "the pkg-config program"

echo "== the wheel's CMake package: dlpack_helpers::static (issue 34 item 9)"
# The wheel ships no libdlpack_helpers.a: linking dlpack_helpers::static, or asking for the
# component static, must stop the configure step with a message that says so and names the
# remedy, not CMake's generic "target was not found". The shared targets still configure.
static_check() {  # $1: name, $2: CMake lines after project(); prints the configure output
  mkdir -p "$TMP/static-$1"
  printf 'int main(void) { return 0; }\n' >"$TMP/static-$1/m.c"
  printf 'cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES C)\n%s\n' "$2" >"$TMP/static-$1/CMakeLists.txt"
  cmake -S "$TMP/static-$1" -B "$TMP/static-$1/build" -Ddlpack_helpers_DIR="$CMD" 2>&1
}
if [ -e "$LIBD/libdlpack_helpers.a" ]; then
  static_check link 'find_package(dlpack_helpers CONFIG REQUIRED COMPONENTS static)
add_executable(app m.c)
target_link_libraries(app PRIVATE dlpack_helpers::static)' >/dev/null || fail "the wheel ships libdlpack_helpers.a but dlpack_helpers::static does not configure"
else
  for v in link component; do
    case $v in
      link) body='find_package(dlpack_helpers CONFIG REQUIRED)
add_executable(app m.c)
target_link_libraries(app PRIVATE dlpack_helpers::static)' ;;
      component) body='find_package(dlpack_helpers CONFIG REQUIRED COMPONENTS static)' ;;
    esac
    if out="$(static_check "$v" "$body")"; then fail "dlpack_helpers::static ($v) configured without libdlpack_helpers.a"; fi
    flat="$(printf '%s' "$out" | tr -s ' \n' '  ')"
    case "$flat" in
      *"has no static library"*"Python wheel ships the shared library only"*"dlpack_helpers::shared"*) ;;
      *) printf '%s\n' "$out"; fail "unclear message for dlpack_helpers::static ($v) without libdlpack_helpers.a";;
    esac
    case "$flat" in *"target was not found"*) printf '%s\n' "$out"; fail "CMake's generic error for dlpack_helpers::static ($v)";; esac
    echo "   $v: refused with the reason"
  done
  static_check shared 'find_package(dlpack_helpers CONFIG REQUIRED COMPONENTS shared)
add_executable(app m.c)
target_link_libraries(app PRIVATE dlpack_helpers::dlpack_helpers)
add_executable(app2 m.c)
target_link_libraries(app2 PRIVATE dlpack_helpers::shared)' >/dev/null || fail "the shared targets no longer configure"
fi

echo "== examples/python_extension built with pip against the installed package"
cp -r "$ROOT/examples/python_extension" "$TMP/example"
rm -rf "$TMP/example/build"
pip_ install --no-build-isolation --no-deps \
  --config-settings=cmake.define.dlpack_helpers_DIR="$CMD" \
  --config-settings=build-dir="$WORK/example-build" "$TMP/example" >"$WORK/example.log" 2>&1 \
  || { cat "$WORK/example.log"; fail "pip install examples/python_extension"; }
grep -q "^dlpack_helpers_DIR:[A-Z]*=$CMD\$" "$WORK/example-build/CMakeCache.txt" \
  || fail "the example did not find dlpack_helpers through --cmakedir"
"$VPY" -m pytest -q -p no:cacheprovider "$ROOT/examples/python_extension/tests" || fail "the example's tests"

echo "== one process, one library: the package, the example extension and ctypes by the documented name"
"$VPY" - "$SITE" <<'PY' || fail "the library is mapped more than once, or from outside the venv"
import ctypes, os, sys
import numpy as np
import dlpack_helpers as dh
import dlpack_sum_example as ex

site = os.path.realpath(sys.argv[1])
path = dh.get_library_path()                  # the documented name for ctypes / dlopen
assert path.startswith(site), path
lib = ctypes.CDLL(path)                       # a ctypes user
lib.dlpack_status_string.restype = ctypes.c_char_p
assert lib.dlpack_status_string(0) == b"OK", lib.dlpack_status_string(0)
assert ex.sum(np.arange(4.0)) == 6.0          # the example extension (DT_NEEDED by SONAME)
with dh.import_tensor(np.arange(3.0)) as t:   # the package's extension
    assert np.from_dlpack(t).tolist() == [0.0, 1.0, 2.0]
assert dh.lib._name == path, dh.lib._name      # dh.lib, the package's own ctypes binding
files = {}
with open("/proc/self/maps") as f:
    for line in f:
        p = line.split(None, 5)
        if len(p) == 6 and os.path.basename(p[5].strip()).startswith("libdlpack_helpers"):
            files[(p[3], p[4])] = p[5].strip()
print("   mapped:", sorted(set(files.values())))
assert sorted(set(files.values())) == [path] and len(files) == 1, files
PY

echo "== a package without the SDK says so"
mkdir -p "$TMP/bare"
cp -r "$SITE/dlpack_helpers" "$TMP/bare/"
rm -rf "$TMP/bare/dlpack_helpers/include" "$TMP/bare/dlpack_helpers/lib/cmake" "$TMP/bare/dlpack_helpers/lib/pkgconfig" \
  "$TMP/bare/dlpack_helpers/share"
for opt in --includedir --cmakedir --pkgconfigdir --manifest --cflags; do
  if out="$(PYTHONPATH="$TMP/bare" "$VPY" -m dlpack_helpers "$opt" 2>&1)"; then fail "$opt succeeded without the SDK: $out"; fi
  case "$out" in *"has no C/C++ SDK"*"pip install ."*) ;; *) fail "unclear message for $opt: $out";; esac
done
echo "python SDK: all checks passed"
