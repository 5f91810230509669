# The main job (scripts/demo) must keep working: it exits non-zero when any tensor is read wrongly,
# refused unexpectedly, or not released exactly once.
# needs: none
source "$(dirname "$0")/../common.sh"
"$ROOT/scripts/demo" > "$ROOT/target/demo.log" 2>&1 || { cat "$ROOT/target/demo.log"; echo "FAIL: scripts/demo" >&2; exit 1; }
grep -E '^(C|Python) consumer: ' "$ROOT/target/demo.log"
