# Benchmarks stay working: one quick run of the whole suite, report written to a temporary file
# (docs/performance.md is only written by a full `scripts/bench`). Nothing here asserts time.
# needs: venv release
source "$(dirname "$0")/../common.sh"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
"$PY" benches/bench.py --quick --out "$TMP/performance.md"
grep -q "## 1. C helpers" "$TMP/performance.md"
grep -q "## 4. Scaling" "$TMP/performance.md"
echo "benchmark smoke run OK"
