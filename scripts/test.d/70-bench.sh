# Benchmarks stay working: one quick run of the whole suite, report written to a temporary file
# (docs/performance.md is only written by a full `scripts/bench`). Nothing here asserts time.
# Issue 26's peer rows run too: the run builds the peer modules (nanobind's nb::ndarray<> and the
# SDK's C extension, benches/peers; cached in target/bench-peers), and this part fails if a row
# that needs only .venv (NumPy, nanobind, tvm-ffi, the peers) was skipped. The PyTorch and Paddle
# rows run in the framework part's environment when it exists, and are skipped with a reason when
# it does not (`scripts/test bench` alone).
# needs: venv release
source "$(dirname "$0")/../common.sh"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
"$PY" benches/bench.py --quick --out "$TMP/performance.md"
grep -q "## 1. C helpers" "$TMP/performance.md"
grep -q "### Issue 26" "$TMP/performance.md"
for row in "export" "np.from_dlpack" "C ext import vs nanobind" "import_tensor vs nanobind" \
           "import_tensor vs np.from_dlpack" "table: import_tensor(Tensor) vs tvm_ffi" \
           "table: C ext import of a Tensor vs tvm_ffi" "table: C ext import of a Tensor, the import alone"; do
  grep -qF "| $row | \`" "$TMP/performance.md" || { grep -F "| $row |" "$TMP/performance.md" >&2; echo "error: issue 26 row '$row' was not measured" >&2; exit 1; }
done
if [ -x "$ROOT/.cache/frameworks/venv/bin/python" ]; then grep -F "| table: " "$TMP/performance.md" | grep -E "torch|paddle" || true; fi
grep -q "## 4. Scaling" "$TMP/performance.md"
echo "benchmark smoke run OK"
