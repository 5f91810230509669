# The main job (scripts/demo) must keep working: it exits non-zero when any tensor is read wrongly,
# refused unexpectedly, or not released exactly once; it shows the installed package (the wheel,
# examples/package_demo.py) and prints devices and dtypes by the library's names.
# needs: none
source "$(dirname "$0")/../common.sh"
"$ROOT/scripts/demo" > "$ROOT/target/demo.log" 2>&1 || { cat "$ROOT/target/demo.log"; echo "FAIL: scripts/demo" >&2; exit 1; }
grep -E '^(C|Python) consumer: ' "$ROOT/target/demo.log"
grep -E '^package demo: ' "$ROOT/target/demo.log"
# The demo shows the product: the installed package at work, and the library's own names.
grep -q '^package demo: every value crossed intact; one library in the process$' "$ROOT/target/demo.log" \
  || { echo "FAIL: the package demo (examples/package_demo.py) did not finish" >&2; exit 1; }
grep -q 'device cpu:0, ' "$ROOT/target/demo.log" && grep -q 'dtype float64, ' "$ROOT/target/demo.log" \
  || { echo "FAIL: the demo does not print devices and dtypes by the library's names (cpu:0, float64)" >&2; exit 1; }
if grep -nE 'read 1 elements|\(code [0-9]+, bits|device \(-?[0-9]+, -?[0-9]+\)|dtype \([0-9]' "$ROOT/target/demo.log"; then
  echo "FAIL: the demo prints numbers where the library has names, or 'read 1 elements'" >&2; exit 1
fi
