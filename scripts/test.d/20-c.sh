# C tests: every tests-c/test_*.c, compiled with -Wall -Wextra -Wpedantic -Werror and run twice,
# against the shared library and against the static library.
source "$(dirname "$0")/../common.sh"
CC="${CC:-cc}"
OUT="$ROOT/target/c-tests"
mkdir -p "$OUT"
CFLAGS=(-std=c11 -O1 -g -Wall -Wextra -Wpedantic -Werror -I"$ROOT/include" -I"$ROOT/tests-c")
# The system libraries a Rust static library needs on this target.
STATIC_LIBS=(-lpthread -ldl -lm -lrt -lgcc_s -lc)
shopt -s nullglob
for src in tests-c/test_*.c; do
  name="$(basename "$src" .c)"
  "$CC" "${CFLAGS[@]}" "$src" -o "$OUT/$name.shared" -L"$LIBDIR" -ldlpack_helpers -Wl,-rpath,"$LIBDIR" -lpthread -ldl
  "$CC" "${CFLAGS[@]}" "$src" -o "$OUT/$name.static" "$LIBDIR/libdlpack_helpers.a" "${STATIC_LIBS[@]}"
  for kind in shared static; do
    echo "-- $name ($kind)"
    "$OUT/$name.$kind"
  done
done
