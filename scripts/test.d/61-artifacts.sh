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
# sdk/'s pkg-config file (issue 35) is relocatable: a copy of sdk/ elsewhere resolves to itself,
# and a program built through it links and runs.
need pkg-config "pkgconf"
MOVED="$ROOT/target/sdk-moved"
rm -rf "$MOVED"; mkdir -p "$MOVED"; cp -a "$ROOT/sdk" "$MOVED/sdk"
pc() { PKG_CONFIG_PATH="$1/lib/pkgconfig" pkg-config "${@:2}" dlpack_helpers; }
[ "$(pc "$MOVED/sdk" --modversion)" = "$VERSION" ] || { echo "FAIL: sdk/lib/pkgconfig/dlpack_helpers.pc: version is not $VERSION" >&2; exit 1; }
libdir="$(cd "$(pc "$MOVED/sdk" --variable=libdir)" && pwd -P)"
[ "$libdir" = "$(cd "$MOVED/sdk/lib" && pwd -P)" ] || { echo "FAIL: the moved sdk's .pc points at $libdir, not at itself" >&2; exit 1; }
[ -f "$(pc "$MOVED/sdk" --variable=manifest)" ] || { echo "FAIL: the .pc's manifest variable names no file" >&2; exit 1; }
printf '#include <dlpack_helpers.h>\nint main(void){return dlpack_device_host_access((DLDevice){kDLCPU,0}) == DLPACK_HELPERS_HOST_ACCESS_ALWAYS ? 0 : 1;}\n' >"$MOVED/pc.c"
# shellcheck disable=SC2046
"${CC:-cc}" -std=c11 "$MOVED/pc.c" $(pc "$MOVED/sdk" --cflags --libs) -Wl,-rpath,"$libdir" -o "$MOVED/pc"
"$MOVED/pc" || { echo "FAIL: a program built through the moved sdk's .pc does not run" >&2; exit 1; }
echo "   sdk/lib/pkgconfig/dlpack_helpers.pc: relocatable (a moved copy resolves to itself; a program built through it runs)"
python3 benches/sizes.py --work "$ROOT/target/sizes"
