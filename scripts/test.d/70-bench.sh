# Benchmarks stay working: one quick run of the whole suite, report written to a temporary file
# (docs/performance.md is only written by a full `scripts/bench`). Nothing here asserts time.
# Issue 26's peer rows (nanobind, the SDK's C extension) run when scripts/bench has built the
# peer modules (cached in target/bench-peers); otherwise they are skipped with the reason printed.
# needs: venv release
source "$(dirname "$0")/../common.sh"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
"$PY" benches/bench.py --quick --out "$TMP/performance.md"
grep -q "## 1. C helpers" "$TMP/performance.md"
grep -q "### Issue 26" "$TMP/performance.md"
grep -q "## 4. Scaling" "$TMP/performance.md"
echo "benchmark smoke run OK"
