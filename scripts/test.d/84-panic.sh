# Panics: the library built with the test-only cargo feature `test-panic` panics inside
# every export while DLPACK_HELPERS_TEST_PANIC is set. tests-reliability/panic_matrix.py calls
# every function the header declares that way and checks the PANIC status (or documented fallback
# value), the message, untouched out-parameters, no abort, and that nothing happened. The feature
# adds no export: the test-panic build exports exactly what the release build exports.
# needs: venv release
source "$(dirname "$0")/../common.sh"
need nm "binutils"
TP="$ROOT/target/test-panic"
echo "== cargo build --features test-panic (target/test-panic)"
cargo build --locked --quiet --features test-panic --target-dir "$TP"
LIB="$TP/debug/libdlpack_helpers.so"
nm -D --defined-only "$LIB" | awk '{print $NF}' | grep '^dlpack_' | sort >"$TP/exports.txt"
nm -D --defined-only "$LIBDIR/libdlpack_helpers.so" | awk '{print $NF}' | grep '^dlpack_' | sort >"$ROOT/target/release-exports.txt"
diff -u "$ROOT/target/release-exports.txt" "$TP/exports.txt" \
  || { echo "FAIL: the test-panic feature changes the exported symbols" >&2; exit 1; }
echo "   test-panic build exports the same $(wc -l <"$TP/exports.txt") functions as the release build"
DLPACK_HELPERS_LIBRARY="$LIB" "$PY" -m pytest -q -s -p no:cacheprovider tests-reliability/panic_matrix.py 2>"$TP/panic-stderr.log" \
  || { tail -n 30 "$TP/panic-stderr.log"; exit 1; }
# Each forced panic printed Rust's panic report to stderr (the default hook); none aborted.
echo "   $(grep -c 'test-panic: forced panic' "$TP/panic-stderr.log") panic reports on stderr, zero aborts"
