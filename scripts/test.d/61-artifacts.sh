# Lean artifacts (issue 14): scripts/build (the README's shortest path) lays out sdk/; checked by
# benches/sizes.py: no debug information or LLVM bitcode in the shipped .so and .a, the separate
# debug file named by .gnu_debuglink with the right CRC and the same build id, the SONAME and
# development links, and a static program calling two helpers keeps exactly those two with
# -Wl,--gc-sections. Prints the sizes before (cargo's target/release files) and now; a full
# figure update goes to docs/performance.md with --write-doc (section 6).
source "$(dirname "$0")/../common.sh"
need python3 "CPython 3.10 or newer"
"$ROOT/scripts/build" | tee "$ROOT/target/artifacts-build.log"
VERSION="$(sed -n 's/^version[[:space:]]*=[[:space:]]*"\([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p' Cargo.toml | head -n1)"
SONAME="$(readelf -d "$ROOT/sdk/lib/libdlpack_helpers.so.$VERSION" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')"
[ "$(readlink "$ROOT/sdk/lib/$SONAME")" = "libdlpack_helpers.so.$VERSION" ] || { echo "FAIL: sdk/lib/$SONAME is not a link to the library" >&2; exit 1; }
[ "$(readlink "$ROOT/sdk/lib/libdlpack_helpers.so")" = "$SONAME" ] || { echo "FAIL: sdk/lib/libdlpack_helpers.so is not a link to $SONAME" >&2; exit 1; }
cmp -s include/dlpack_helpers.h sdk/include/dlpack_helpers.h && cmp -s include/dlpack_helpers.hpp sdk/include/dlpack_helpers.hpp \
  || { echo "FAIL: sdk/include differs from include/" >&2; exit 1; }
python3 benches/sizes.py --work "$ROOT/target/sizes"
