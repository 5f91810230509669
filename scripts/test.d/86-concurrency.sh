# Concurrency: tests-c/test_reliability.c's 8 threads hammer the last error message,
# deleters, version checks, stream decoding, a registered backend, and the CUDA and HIP backends'
# one-time initialization and event pools through the fake drivers (tests-c/fake/fake_{cuda,hip}.c):
#   1. plain build, shared and static, 8 threads x 200000 iterations each;
#   2. ThreadSanitizer (gcc -fsanitize=thread), 8 threads x 20000. The test program (its atomics,
#      deleters and backend callbacks, which the library calls from every thread) is instrumented;
#      the Rust library is not (stable Rust cannot build it with TSan), so its std::sync
#      primitives are invisible to TSan. The fake drivers are therefore not instrumented either
#      (their state is ordered by the library's one-time initialization and locks: every report
#      there would be a false positive), and tests-c/tsan.supp drops reports on the library's own
#      allocator calls made under its mutex. Event sharing between threads is caught by the fakes
#      themselves (an event recorded by one thread and waited on by another fails).
#   3. tests-c/first_calls.c: the first call of every lazily initialized path (version info,
#      stream backends, the CUDA/HIP/Level Zero loaders, the Python runtime lookup) from 16
#      threads at once, each in a fresh process, many times: with all three fake runtimes (each
#      init entry point must run exactly once), with only CUDA (HIP and Level Zero absent: their
#      cached errors are shared) and with none; plain and under ThreadSanitizer.
# Work is a fixed number of iterations (no timing); a lost or doubled release fails the test.
# The Python side (8 threads importing/exporting/releasing) is tests-reliability/test_threads.py.
# The test program is compiled by scripts/c-build.sh (flags: tests-c/cflags).
# needs: release
source "$(dirname "$0")/../common.sh"
source "$ROOT/scripts/c-build.sh"
OUT="$ROOT/target/concurrency"
mkdir -p "$OUT"
SRC=tests-c/test_reliability.c
"$CC" -std=c11 -O1 -g -shared -fPIC -o "$OUT/fake_cuda.so" tests-c/fake/fake_cuda.c -lpthread
"$CC" -std=c11 -O1 -g -shared -fPIC -o "$OUT/fake_hip.so" tests-c/fake/fake_hip.c -lpthread
"$CC" -std=c11 -O1 -g -shared -fPIC -o "$OUT/fake_ze.so" tests-c/fake/fake_ze.c -lpthread
# A small library no test loads otherwise, loaded and unloaded in a loop beside pointer queries.
echo 'int dlpack_helpers_churn_probe(void) { return 1; }' > "$OUT/churn.c"
"$CC" -std=c11 -O1 -shared -fPIC -o "$OUT/churn.so" "$OUT/churn.c"
export DLPACK_HELPERS_CHURN_LIBRARY="$OUT/churn.so"
c_test_build "$SRC" "$OUT/reliability.shared" shared
c_test_build "$SRC" "$OUT/reliability.static" static
ITERS="${DLPACK_HELPERS_STRESS_ITERS:-200000}"
for kind in shared static; do
  echo "-- 8 threads x $ITERS iterations ($kind, fake CUDA driver and HIP runtime)"
  DLPACK_HELPERS_STRESS_ITERS="$ITERS" DLPACK_HELPERS_CUDA_LIBRARY="$OUT/fake_cuda.so" \
    DLPACK_HELPERS_HIP_LIBRARY="$OUT/fake_hip.so" "$OUT/reliability.$kind"
done

echo 'int main(void){return 0;}' > "$OUT/probe.c"
"$CC" -fsanitize=thread "$OUT/probe.c" -o "$OUT/probe" 2>"$OUT/probe.err" || {
  cat "$OUT/probe.err"; echo "error: $CC cannot link -fsanitize=thread: install libtsan (Debian: libgcc-12-dev ships it)" >&2; exit 1; }
c_test_build "$SRC" "$OUT/reliability.tsan" shared -fsanitize=thread
echo "-- 8 threads x 20000 iterations under ThreadSanitizer (fake CUDA driver and HIP runtime)"
DLPACK_HELPERS_STRESS_ITERS=20000 DLPACK_HELPERS_CUDA_LIBRARY="$OUT/fake_cuda.so" DLPACK_HELPERS_HIP_LIBRARY="$OUT/fake_hip.so" \
  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 history_size=7 suppressions=$ROOT/tests-c/tsan.supp" "$OUT/reliability.tsan" >"$OUT/tsan.log" 2>&1 \
  || { cat "$OUT/tsan.log"; echo "FAIL: ThreadSanitizer reported a data race (or the test failed)" >&2; exit 1; }
grep -q 'WARNING: ThreadSanitizer' "$OUT/tsan.log" && { cat "$OUT/tsan.log"; echo "FAIL: ThreadSanitizer report" >&2; exit 1; }
grep -E 'threads x|fake CUDA|fake HIP|dlopen/dlclose' "$OUT/tsan.log"

# 3. First calls from 16 threads in fresh processes (FIRST_RUNS processes per path and set-up).
c_test_build tests-c/first_calls.c "$OUT/first_calls" shared
c_test_build tests-c/first_calls.c "$OUT/first_calls.tsan" shared -fsanitize=thread
FIRST_RUNS="${DLPACK_HELPERS_FIRST_CALL_RUNS:-10}"
first_runs=0
first_calls() { # first_calls <program> <set-up name> <path>; env: the fakes of the set-up
  local log="$OUT/first_calls.log"
  for _ in $(seq 1 "$FIRST_RUNS"); do
    TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$ROOT/tests-c/tsan.supp" "$@" >"$log" 2>&1 \
      || { cat "$log"; echo "FAIL: first calls of '${*: -1}' from 16 threads ($prog, $setup)" >&2; exit 1; }
    if grep -q 'WARNING: ThreadSanitizer' "$log"; then cat "$log"; echo "FAIL: ThreadSanitizer report ($setup)" >&2; exit 1; fi
    first_runs=$((first_runs + 1))
  done
}
FAKES=(DLPACK_HELPERS_CUDA_LIBRARY="$OUT/fake_cuda.so" DLPACK_HELPERS_HIP_LIBRARY="$OUT/fake_hip.so"
       DLPACK_HELPERS_LEVEL_ZERO_LIBRARY="$OUT/fake_ze.so")
NONE=(DLPACK_HELPERS_CUDA_LIBRARY=/nonexistent/libcuda.so.1 DLPACK_HELPERS_HIP_LIBRARY=/nonexistent/libamdhip64.so
      DLPACK_HELPERS_LEVEL_ZERO_LIBRARY=/nonexistent/libze_loader.so.1)
CUDA_ONLY=(DLPACK_HELPERS_CUDA_LIBRARY="$OUT/fake_cuda.so" DLPACK_HELPERS_HIP_LIBRARY=/nonexistent/libamdhip64.so
           DLPACK_HELPERS_LEVEL_ZERO_LIBRARY=/nonexistent/libze_loader.so.1)
for prog in first_calls first_calls.tsan; do
  for path in info stream-cuda stream-hip pointer level-zero python all; do
    setup="all fake runtimes"; first_calls env "${FAKES[@]}" "$OUT/$prog" "$path"
  done
  setup="CUDA only"; first_calls env "${CUDA_ONLY[@]}" "$OUT/$prog" all
  setup="no runtime"; first_calls env "${NONE[@]}" "$OUT/$prog" all
done
echo "-- first calls: $first_runs fresh processes x 16 threads (plain and ThreadSanitizer): one answer each, cuInit/hipInit/zeInit once"
echo "-- concurrency: no data race reported, no lost or doubled release"
