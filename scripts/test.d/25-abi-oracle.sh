# The DLPack ABI oracle and header compatibility.
# 1. Fetches official DLPack headers from registry packages at test time (never committed):
#    1.3 from apache-tvm-ffi 0.1.15.post2, 1.2 from apache-tvm-ffi 0.1.0, 1.1 from cuda-core 0.3.0,
#    1.0 from cuda-core 0.1.1.
# 2. Compares sizes, alignments, offsets, enum values and macros of the official 1.3 header with
#    the definitions in include/dlpack_helpers.h (tests/abi.rs compares those with the Rust mirrors).
# 3. Compiles dlpack_helpers.h alone, before and after each official header, as C99, C11, C++11 and
#    C++17 with -Wall -Wextra -Wpedantic -Werror, and runs the result.
# 4. Checks that an official 0.x header included first is refused with a clear #error.
# needs: venv release
source "$(dirname "$0")/../common.sh"
CACHE="$ROOT/.cache/oracle"
OUT="$ROOT/target/abi-oracle"
mkdir -p "$CACHE" "$OUT"

fetch() { # fetch <dlpack-version> <pip spec> <path of dlpack.h inside the wheel>
  local ver="$1" spec="$2" inner="$3" dest="$CACHE/dlpack-$1/dlpack"
  if [ ! -f "$dest/dlpack.h" ]; then
    local dl="$CACHE/download-$ver"
    rm -rf "$dl"; mkdir -p "$dl" "$dest"
    "$PY" -m pip download --quiet --no-deps --only-binary :all: "$spec" -d "$dl" \
      || { echo "error: could not download $spec from the package registry (needed for the DLPack $ver oracle header)" >&2; exit 1; }
    "$PY" - "$dl" "$inner" "$dest/dlpack.h" <<'PYEOF'
import sys, zipfile, glob
whl = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(whl) as z, open(sys.argv[3], "wb") as f:
    f.write(z.read(sys.argv[2]))
PYEOF
  fi
  grep -q "define DLPACK_MINOR_VERSION ${ver#1.}\b" "$dest/dlpack.h" \
    || { echo "error: $spec does not carry DLPack $ver" >&2; exit 1; }
}
fetch 1.3 "apache-tvm-ffi==0.1.15.post2" tvm_ffi/include/dlpack/dlpack.h
fetch 1.2 "apache-tvm-ffi==0.1.0" tvm_ffi/include/dlpack/dlpack.h
fetch 1.1 "cuda-core==0.3.0" cuda/core/experimental/dlpack.h
fetch 1.0 "cuda-core==0.1.1" cuda/core/experimental/dlpack.h

echo "-- ABI oracle: official DLPack 1.3 header vs dlpack_helpers.h"
cc -std=c11 -I"$CACHE/dlpack-1.3" -DABI_HEADER='<dlpack/dlpack.h>' tests-c/abi_dump.c -o "$OUT/dump_official"
cc -std=c11 -Iinclude -DABI_HEADER='"dlpack_helpers.h"' tests-c/abi_dump.c -o "$OUT/dump_ours"
"$OUT/dump_official" > "$OUT/official.txt"
"$OUT/dump_ours" > "$OUT/ours.txt"
if ! diff -u "$OUT/official.txt" "$OUT/ours.txt"; then
  echo "FAIL: dlpack_helpers.h differs from the official DLPack 1.3 ABI" >&2; exit 1
fi
echo "   $(wc -l < "$OUT/ours.txt") sizes, offsets, enum values and macros agree"

WARN=(-Wall -Wextra -Wpedantic -Werror)
LINK=(-L"$LIBDIR" -ldlpack_helpers -Wl,-rpath,"$LIBDIR")
n=0
for ver in none 1.0 1.1 1.2 1.3; do
  for order in FIRST AFTER; do
    [ "$ver" = none ] && [ "$order" = AFTER ] && continue
    defs=(); inc=(-Iinclude)
    [ "$ver" != none ] && { defs=(-DINCLUDE_OFFICIAL_$order); inc+=(-I"$CACHE/dlpack-$ver"); }
    for std in c99 c11; do
      cc -std=$std "${WARN[@]}" "${inc[@]}" "${defs[@]}" tests-c/compat_include.c -o "$OUT/compat" "${LINK[@]}"
      "$OUT/compat" >/dev/null; n=$((n+1))
    done
    for std in c++11 c++17; do
      c++ -std=$std "${WARN[@]}" "${inc[@]}" "${defs[@]}" -x c++ tests-c/compat_include.c -o "$OUT/compat" "${LINK[@]}"
      "$OUT/compat" >/dev/null; n=$((n+1))
    done
    echo "   official DLPack $ver ${order/FIRST/before}: C99 C11 C++11 C++17 ok"
  done
done
echo "-- $n header combinations compiled and ran"

echo "-- a DLPack 0.x header included first is refused with #error"
printf '#define DLPACK_DLPACK_H_\n#define DLPACK_VERSION 80\n#define DLPACK_ABI_VERSION 1\n#include "dlpack_helpers.h"\n' > "$OUT/old.c"
if cc -std=c11 -Iinclude -c "$OUT/old.c" -o "$OUT/old.o" 2> "$OUT/old.err"; then
  echo "FAIL: a 0.x DLPack header was accepted" >&2; exit 1
fi
grep -q 'needs DLPack 1.0 or newer' "$OUT/old.err" || { cat "$OUT/old.err"; echo "FAIL: wrong error" >&2; exit 1; }
echo "   refused: $(grep -o 'needs DLPack 1.0 or newer[^"]*' "$OUT/old.err" | head -1)"
