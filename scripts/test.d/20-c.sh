# C tests: every tests-c/test_*.c (flags: tests-c/cflags) run against the shared and the static library.
# needs: release
# Compiled by scripts/c-build.sh, the one way every part and CTest build a C test.
source "$(dirname "$0")/../common.sh"
source "$ROOT/scripts/c-build.sh"
OUT="$ROOT/target/c-tests"
mkdir -p "$OUT"
shopt -s nullglob
for src in tests-c/test_*.c; do
  name="$(basename "$src" .c)"
  for kind in shared static; do
    c_test_build "$src" "$OUT/$name.$kind" "$kind"
  done
  for kind in shared static; do
    echo "-- $name ($kind)"
    "$OUT/$name.$kind"
  done
done
