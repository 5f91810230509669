# Packaging: the CMake build drives cargo and runs the C/C++ tests and examples under CTest; it
# installs into a temporary prefix, which is then moved (relocatable); a separate CMake consumer
# (find_package, shared/static/default targets) and the same consumer through pkg-config (shared
# and --static) are built and run against the moved tree. Also checked: SONAME and file names
# follow cargo-c's rule from Cargo.toml, the CMake version file's compatibility agrees with it,
# pkg-config Version and the header's version macros equal Cargo.toml's, the shared library
# exports exactly the functions declared in the header, and the Rust and Python examples run.
# needs: venv release
source "$(dirname "$0")/../common.sh"
setup_venv
need cmake "installed into .venv from scripts/requirements.txt (cmake>=3.20)"
need pkg-config "the pkg-config (or pkgconf) package"
need make "GNU make, CMake's generator here"
need c++ "a C++ compiler (g++)"
need nm "binutils"
need readelf "binutils"

WORK="$ROOT/target/packaging"
rm -rf "$WORK"
mkdir -p "$WORK"
JOBS="${DLPACK_HELPERS_JOBS:-2}"
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- versions from Cargo.toml and cargo-c's rule ------------------------------------------------
VERSION="$(sed -n 's/^version[[:space:]]*=[[:space:]]*"\([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p' Cargo.toml | head -n1)"
[ -n "$VERSION" ] || fail "no version in Cargo.toml"
MAJOR="${VERSION%%.*}"; REST="${VERSION#*.}"; MINOR="${REST%%.*}"
if [ "$MAJOR" = 0 ]; then SOVER="0.$MINOR"; else SOVER="$MAJOR"; fi
SONAME="libdlpack_helpers.so.$SOVER"
echo "version $VERSION -> SONAME $SONAME"

# ---- top-level CMake build: cargo, CTest (C tests shared+static, C++ header, examples) -----------
STAGE="$WORK/stage"
echo "== cmake configure/build (reusing target/ as CARGO_TARGET_DIR)"
cmake -S "$ROOT" -B "$WORK/build" -DCMAKE_INSTALL_PREFIX="$STAGE" \
  -DDLPACK_HELPERS_CARGO_TARGET_DIR="$ROOT/target" >"$WORK/configure.log" 2>&1 \
  || { cat "$WORK/configure.log"; fail "cmake configure"; }
cmake --build "$WORK/build" -j "$JOBS" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; fail "cmake build"; }
echo "== ctest"
(cd "$WORK/build" && ctest --output-on-failure -j "$JOBS") || fail "ctest"
ctest_count="$(cd "$WORK/build" && ctest -N | sed -n 's/^Total Tests: //p')"
shopt -s nullglob
c_tests=(tests-c/test_*.c)
cpp_tests=(tests-cpp/test_*.cpp)
shopt -u nullglob
want=$((${#c_tests[@]} * 2 + ${#cpp_tests[@]} * 4 + 2))
[ "$ctest_count" = "$want" ] || fail "CTest has $ctest_count tests, expected $want (C tests x2, C++ tests x4, 2 examples)"

echo "== cmake --install"
cmake --install "$WORK/build" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "cmake --install"; }

# ---- move the installed tree: everything below must work from the new place ---------------------
PREFIX="$WORK/moved/prefix"
mkdir -p "$WORK/moved"
mv "$STAGE" "$PREFIX"
echo "== installed tree (moved to $PREFIX)"
(cd "$PREFIX" && find . -mindepth 1 | sort | sed 's/^\.\///')
grep -rq "$STAGE" "$PREFIX/lib" --include='*.cmake' --include='*.pc' && fail "an installed package file records the install prefix $STAGE (not relocatable)"

LIB="$(dirname "$(find "$PREFIX" -name "libdlpack_helpers.so.$VERSION" | head -n1)")"
[ -f "$LIB/libdlpack_helpers.so.$VERSION" ] || fail "libdlpack_helpers.so.$VERSION not installed"
[ "$(readlink "$LIB/$SONAME")" = "libdlpack_helpers.so.$VERSION" ] || fail "$SONAME is not a link to libdlpack_helpers.so.$VERSION"
[ "$(readlink "$LIB/libdlpack_helpers.so")" = "$SONAME" ] || fail "libdlpack_helpers.so is not a link to $SONAME"
[ -f "$LIB/libdlpack_helpers.a" ] || fail "libdlpack_helpers.a not installed"
got_soname="$(readelf -d "$LIB/libdlpack_helpers.so.$VERSION" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')"
[ "$got_soname" = "$SONAME" ] || fail "SONAME is '$got_soname', expected $SONAME"
echo "ok: SONAME $got_soname, links and archive installed"
# Lean by default (no debug information installed); the debug file only as the 'debug' component.
readelf -S -W "$LIB/libdlpack_helpers.so.$VERSION" "$LIB/libdlpack_helpers.a" | grep -q '\.debug_info' \
  && fail "the installed library or archive carries debug information"
[ -e "$LIB/.debug" ] && fail "cmake --install installed lib/.debug without --component debug"
cmake --install "$WORK/build" --component debug --prefix "$PREFIX" >>"$WORK/install.log" 2>&1 || fail "cmake --install --component debug"
[ -f "$LIB/.debug/libdlpack_helpers.so.$VERSION.debug" ] || fail "the debug component did not install lib/.debug/libdlpack_helpers.so.$VERSION.debug"
readelf --string-dump=.gnu_debuglink "$LIB/libdlpack_helpers.so.$VERSION" | grep -q "libdlpack_helpers.so.$VERSION.debug" \
  || fail ".gnu_debuglink does not name the debug file"
echo "ok: lean library and archive; the debug file installs with --component debug"

# ---- exported symbols == functions declared in the header ----------------------------------------
HEADER="$PREFIX/include/dlpack_helpers.h"
# Declarations in the header: a line that starts a prototype (return type, name, '('), outside
# comments. Function-pointer typedefs are '(*Name)' and do not match.
sed -e 's://.*$::' "$HEADER" | awk '
  /\/\*/ { c = 1 } { if (!c) print } /\*\// { c = 0 }' \
  | grep -oE '^[A-Za-z_][A-Za-z0-9_ ]*[ *]+(dlpack_[A-Za-z0-9_]+)\(' \
  | sed -E 's/.*[ *](dlpack_[A-Za-z0-9_]+)\($/\1/' | sort -u >"$WORK/declared.txt"
# Functions only: the version nodes of abi/dlpack_helpers.map are absolute symbols (type A); each
# function's node is checked by scripts/test.d/62-abi.sh.
nm -D --defined-only --without-symbol-versions "$LIB/libdlpack_helpers.so.$VERSION" \
  | awk '$2 != "A" { print $NF }' | sort -u >"$WORK/exported.txt"
[ -s "$WORK/declared.txt" ] || fail "found no function declarations in $HEADER"
if ! diff -u "$WORK/declared.txt" "$WORK/exported.txt"; then
  fail "the shared library's exports differ from the header's functions (- declared only, + exported only)"
fi
echo "ok: exports == header functions ($(wc -l <"$WORK/declared.txt") symbols)"

# ---- version agreement -----------------------------------------------------------------------------
grep -q "^#define DLPACK_HELPERS_VERSION_STRING \"$VERSION\"" "$HEADER" || fail "header version macro != $VERSION"
export PKG_CONFIG_PATH="$LIB/pkgconfig"
unset PKG_CONFIG_LIBDIR
[ "$(pkg-config --modversion dlpack_helpers)" = "$VERSION" ] || fail "pkg-config Version != $VERSION"
probe() {  # probe <requested version> -> TRUE/FALSE from find_package
  cmake -S tests/cmake-consumer/version-probe -B "$WORK/probe-$1" -DREQUEST="$1" \
    -DCMAKE_PREFIX_PATH="$PREFIX" 2>&1 | sed -n 's/.*probe: request .*: found=\(.*\)$/\1/p'
}
expect_probe() {
  local got; got="$(probe "$1")"
  [ "$got" = "$2" ] || fail "find_package(dlpack_helpers $1) found=$got, expected $2 (SONAME $SONAME)"
  echo "ok: find_package(dlpack_helpers $1) -> $got"
}
expect_probe "$MAJOR.$MINOR" 1

# ---- the specification's manifest: installed, found by pkg-config and CMake, true of the tree ----
MANIFEST="$PREFIX/share/dlpack_helpers/abi.toml"
cmp -s "$MANIFEST" spec/abi.toml || fail "share/dlpack_helpers/abi.toml is missing or differs from spec/abi.toml"
[ "$(pkg-config --variable=manifest dlpack_helpers)" -ef "$MANIFEST" ] \
  || fail "pkg-config --variable=manifest is '$(pkg-config --variable=manifest dlpack_helpers)', not $MANIFEST"
got="$(cmake -S tests/cmake-consumer/version-probe -B "$WORK/probe-manifest" -DREQUEST="$MAJOR.$MINOR" \
  -DCMAKE_PREFIX_PATH="$PREFIX" 2>&1 | sed -n 's/.*probe: manifest=//p')"
[ -n "$got" ] && [ "$got" -ef "$MANIFEST" ] || fail "find_package sets dlpack_helpers_MANIFEST to '$got', not $MANIFEST"
python3 scripts/spec.py check --manifest-only --manifest "$MANIFEST" --header "$HEADER" \
  --lib "$LIB/libdlpack_helpers.so.$VERSION" >"$WORK/manifest.log" 2>&1 \
  || { cat "$WORK/manifest.log"; fail "the installed manifest does not describe the installed library and header"; }
echo "ok: share/dlpack_helpers/abi.toml installed (pkg-config manifest, CMake dlpack_helpers_MANIFEST), true of the installed library and header"
expect_probe "$MAJOR.$((MINOR + 1))" 0
expect_probe "$((MAJOR + 1)).0" 0
if [ "$MAJOR" = 0 ]; then
  # SameMinorVersion, like the SONAME 0.<minor>: an older 0.x minor is a different ABI.
  if [ "$MINOR" -gt 0 ]; then expect_probe "0.$((MINOR - 1))" 0; fi
else
  # SameMajorVersion, like the SONAME <major>: any older minor of the same major is compatible.
  if [ "$MINOR" -gt 0 ]; then expect_probe "$MAJOR.$((MINOR - 1))" 1; fi
fi

# ---- CMake consumer (find_package) against the moved tree ----------------------------------------
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(libdlpack_helpers[^]]*\)\].*/\1/p'; }
expect_needed() {  # expect_needed <binary> <libdlpack_helpers NEEDED entry, or empty>
  local got; got="$(needed "$1")"
  [ "$got" = "$2" ] || fail "$(basename "$1") needs '$got', expected '${2:-no libdlpack_helpers}'"
}
echo "== CMake consumer (find_package CONFIG) against $PREFIX"
CONS="$WORK/consumer-cmake"
cmake -S tests/cmake-consumer -B "$CONS" -DCMAKE_PREFIX_PATH="$PREFIX" >"$WORK/consumer.log" 2>&1 \
  || { cat "$WORK/consumer.log"; fail "consumer configure"; }
grep "dlpack_helpers $VERSION" "$WORK/consumer.log"
cmake --build "$CONS" -j "$JOBS" >>"$WORK/consumer.log" 2>&1 || { cat "$WORK/consumer.log"; fail "consumer build"; }
expect_needed "$CONS/consumer_shared" "$SONAME"
expect_needed "$CONS/consumer_default" "$SONAME"
expect_needed "$CONS/consumer_cxx" "$SONAME"
expect_needed "$CONS/consumer_static" ""
for exe in consumer_default consumer_shared consumer_static consumer_cxx; do
  "$CONS/$exe" || fail "$exe"
done
# The static consumer must not need the library at run time at all.
env -u LD_LIBRARY_PATH "$CONS/consumer_static" >/dev/null || fail "consumer_static without the library"

echo "== CMake consumer with DLPACK_HELPERS_USE_STATIC=ON"
cmake -S tests/cmake-consumer -B "$CONS-static" -DCMAKE_PREFIX_PATH="$PREFIX" -DDLPACK_HELPERS_USE_STATIC=ON >"$WORK/consumer-static.log" 2>&1 \
  && cmake --build "$CONS-static" -j "$JOBS" --target consumer_default >>"$WORK/consumer-static.log" 2>&1 \
  || { cat "$WORK/consumer-static.log"; fail "consumer (DLPACK_HELPERS_USE_STATIC)"; }
expect_needed "$CONS-static/consumer_default" ""
"$CONS-static/consumer_default" || fail "consumer_default (static)"

# ---- pkg-config consumer ---------------------------------------------------------------------------
echo "== pkg-config consumer against $PREFIX"
CC="${CC:-cc}"
PC="$WORK/consumer-pkgconfig"
mkdir -p "$PC"
# shellcheck disable=SC2046
"$CC" -std=c99 -Wall -Wextra -Wpedantic -Werror tests/cmake-consumer/consumer.c -o "$PC/consumer_shared" \
  $(pkg-config --cflags --libs dlpack_helpers) -Wl,-rpath,"$(pkg-config --variable=libdir dlpack_helpers)"
expect_needed "$PC/consumer_shared" "$SONAME"
"$PC/consumer_shared" || fail "pkg-config shared consumer"
# --static adds Libs.private; GNU ld would still pick the .so for -ldlpack_helpers when both are
# installed, so the archive is named explicitly (docs/linking.md).
# shellcheck disable=SC2046
"$CC" -std=c99 -Wall -Wextra -Wpedantic -Werror tests/cmake-consumer/consumer.c -o "$PC/consumer_static" \
  $(pkg-config --cflags dlpack_helpers) \
  $(pkg-config --static --libs dlpack_helpers | sed 's/-ldlpack_helpers\b/-l:libdlpack_helpers.a/')
expect_needed "$PC/consumer_static" ""
"$PC/consumer_static" || fail "pkg-config static consumer"
echo "ok: pkg-config shared and static consumers"

# ---- Rust and Python examples --------------------------------------------------------------------
echo "== examples/rust_consumer.rs"
cargo run --release --locked --quiet --example rust_consumer
# The same program as a separate crate depending on this one by path (tests/rust-dependent): it
# builds only the Rust library. Cargo builds every crate type a dependency lists, so a .so or .a
# of ours in its target folder means the C crate types are back on the root package.
echo "== tests/rust-dependent (a crate depending on dlpack-helpers by path)"
RD="$ROOT/target/rust-dependent"
rm -rf "$RD/debug/deps"/libdlpack_helpers*
(cd tests/rust-dependent && cargo build --locked --quiet --target-dir "$RD")
"$RD/debug/rust_consumer" | tail -n 1
c_libs="$(find "$RD" -name 'libdlpack_helpers*.so' -o -name 'libdlpack_helpers*.a' -o -name 'libdlpack_helpers*.so.*')"
[ -z "$c_libs" ] || fail "a dependent crate built the C library: $c_libs"
echo "ok: a dependent crate builds the rlib only ($(find "$RD" -name 'libdlpack_helpers*.rlib' | wc -l) rlib, no .so/.a)"
echo "== examples/python_ctypes.py (against the moved, installed library)"
DLPACK_HELPERS_LIBRARY="$LIB/$SONAME" "$PY" examples/python_ctypes.py

echo "packaging: all checks passed"
