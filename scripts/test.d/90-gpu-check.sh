# scripts/gpu-check's CPU paths (issue 17). The GPU run itself happens only on a device
# (docs/streams.md); what can go wrong before and around it is tested here:
#   1. no CUDA driver: "VERDICT: NOT RUN (no CUDA driver)" last, exit 0, nothing built or
#      installed (cargo and pip are stubs that record a call; only the driver probe runs Python);
#   2. a simulated device run: the fake CUDA driver (tests-c/fake/fake_cuda.c, which emulates
#      streams, events, contexts and memory) stands in; the driver-level checks run their device
#      code against it and pass (the race's control shows stale reads, the wait removes them; the
#      events check counts through the pass-through tests-c/gpu/count_cuda.c); the framework
#      checks SKIP; the verdict says "simulated"; $OUT/gpu-check.log holds exactly the output;
#   3. checks that raise, crash (SIGSEGV) and hang are each reported as a FAIL line, the checks
#      after them still run, and the VERDICT is still the last line;
#   4. output is unbuffered: while a check hangs, the lines before it are already out (stdout and
#      $OUT), so a run cut at its time limit returns them;
#   5. a package that does not import is a "package: SKIP" line, not a crash;
#   6. the library is built only when cargo is there and the library is missing; without cargo
#      that is "NOT RUN (no library ...)".
source "$(dirname "$0")/../common.sh"
CC="${CC:-cc}"
W="$ROOT/target/gpu-check-test"
rm -rf "$W"
mkdir -p "$W/stubs" "$W/cargo-stub"
"$CC" -std=c11 -O1 -shared -fPIC -o "$W/fake_cuda.so" tests-c/fake/fake_cuda.c -lpthread
FAKE="$W/fake_cuda.so"

fail() { echo "FAIL: $*" >&2; exit 1; }
# Stubs: cargo and pip record that they were called; NOCARGO_PATH keeps no real cargo, and the
# cargo stub is on it only where named.
for tool in cargo pip pip3; do
  dir="$W/stubs"
  if [ "$tool" = cargo ]; then dir="$W/cargo-stub"; fi
  printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\nexit 1\n' "$tool" "$W" >"$dir/$tool"
  chmod +x "$dir/$tool"
done
printf '#!/bin/sh\necho "python $*" >>"%s/calls"\nexec "%s" "$@"\n' "$W" "$PY" >"$W/stubs/python-logged"
chmod +x "$W/stubs/python-logged"
NOCARGO_PATH="$W/stubs"
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do [ -x "$d/cargo" ] || NOCARGO_PATH="$NOCARGO_PATH:$d"; done
last_line() { tail -n 1 "$1"; }
has() { grep -qF -- "$2" "$1" || { cat "$1"; fail "$3: no line '$2'"; }; }

echo "-- 1. no CUDA driver"
: >"$W/calls"
t0=$(date +%s.%N)
set +e
env PATH="$W/cargo-stub:$NOCARGO_PATH" PYTHON="$W/stubs/python-logged" DLPACK_HELPERS_CUDA_LIBRARY=/nonexistent/libcuda.so.1 \
  OUT="$W/out1" bash scripts/gpu-check >"$W/run1" 2>&1
rc=$?
set -e
t1=$(date +%s.%N)
cat "$W/run1"
[ "$rc" -eq 0 ] || fail "no driver: exit status $rc, want 0"
[ "$(last_line "$W/run1")" = "VERDICT: NOT RUN (no CUDA driver)" ] || fail "no driver: last line"
cmp -s "$W/run1" "$W/out1/gpu-check.log" || fail "no driver: \$OUT/gpu-check.log differs from the output"
grep -v '^python .*gpu_check.py --probe$' "$W/calls" && fail "no driver: more than the driver probe ran (above)"
grep -q -- '--probe' "$W/calls" || fail "no driver: the probe did not run"
echo "no driver: nothing built, installed or imported beyond the probe ($(wc -l <"$W/calls") call); $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s"

echo "-- 2. simulated device run (fake CUDA driver)"
set +e
# No HIP override: an override naming a missing file would make HIP "could own memory but
# cannot be asked", and plain host memory would then be unknown, not kDLCPU (issue 12 item 3).
env -u DLPACK_HELPERS_HIP_LIBRARY -u DLPACK_HELPERS_LEVEL_ZERO_LIBRARY \
  DLPACK_HELPERS_CUDA_LIBRARY="$FAKE" PYTHON="$PY" OUT="$W/out2" \
  bash scripts/gpu-check >"$W/run2" 2>&1
rc=$?
set -e
cat "$W/run2"
[ "$rc" -eq 0 ] || fail "simulated: exit status $rc, want 0"
# The package imports here (PASS) or, where it is a native extension not built for this Python,
# takes the fallback (SKIP, tested on purpose in 5.); the counts follow.
summary="summary: 11 passed, 0 failed, 4 skipped"
if grep -q '^package: SKIP dlpack_helpers is not importable' "$W/run2"; then
  summary="summary: 10 passed, 0 failed, 5 skipped"
else
  has "$W/run2" "package: PASS" simulated
fi
for line in "library: PASS" "pointers: PASS device (2, 0); device+4092 (2, 0); cuMemAllocHost (3, 0)" \
    "race: PASS gate wait-value; stale reads without the wait 50/50" "streams: PASS stream=1: control stale True" \
    "thread: PASS from a fresh thread" "context: PASS" "synchronize: PASS status 0" "release: PASS gate wait-value" "cost: PASS" \
    "events: PASS simulated driver, calls counted by the pass-through" "exchange-torch-cupy: SKIP" \
    "$summary"; do
  has "$W/run2" "$line" simulated
done
case "$(last_line "$W/run2")" in "VERDICT: NOT RUN (simulated CUDA driver"*) ;; *) fail "simulated: last line";; esac
cmp -s "$W/run2" "$W/out2/gpu-check.log" || fail "simulated: \$OUT/gpu-check.log differs from the output"

echo "-- 3. checks that raise, crash and hang"
set +e
env DLPACK_HELPERS_CUDA_LIBRARY="$FAKE" PYTHON="$PY" OUT="$W/out3" GPU_CHECK_CHECK_TIMEOUT_S=20 \
  GPU_CHECK_INJECT=thread:raise,synchronize:crash,cost:hang bash scripts/gpu-check >"$W/run3" 2>&1
rc=$?
set -e
cat "$W/run3"
[ "$rc" -eq 1 ] || fail "injected: exit status $rc, want 1"
has "$W/run3" "thread: FAIL raised RuntimeError: injected failure in check thread" injected
has "$W/run3" "synchronize: FAIL the check's process ended with signal 11 before reporting" injected
has "$W/run3" "cost: FAIL timed out after 20 s (killed)" injected
has "$W/run3" "events: PASS" "injected (the check after the hang still ran)"
[ "$(last_line "$W/run3")" = "VERDICT: FAIL (thread, synchronize, cost)" ] || fail "injected: last line"
cmp -s "$W/run3" "$W/out3/gpu-check.log" || fail "injected: \$OUT/gpu-check.log differs from the output"

echo "-- 4. unbuffered: the lines before a hanging check are out while it hangs"
command -v setsid >/dev/null && command -v ps >/dev/null || fail "setsid (util-linux) and ps (procps) are needed"
rm -rf "$W/out4"
env DLPACK_HELPERS_CUDA_LIBRARY="$FAKE" PYTHON="$PY" OUT="$W/out4" GPU_CHECK_INJECT=events:hang \
  setsid bash scripts/gpu-check >"$W/run4" 2>&1 &
pid=$!
seen=""
for _ in $(seq 6000); do  # a liveness bound (10 minutes: a loaded machine is slow), not a speed target
  # "(cost: N s)" is the line printed just before the events check starts (and hangs).
  if grep -q '^  (cost: ' "$W/run4" 2>/dev/null && grep -q '^  (cost: ' "$W/out4/gpu-check.log" 2>/dev/null; then
    seen=yes
    sleep 2  # the events check is hanging now
    break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$pid" 2>/dev/null && running=yes || running=no
# Every process of the run is in the session setsid made (timeout makes its own process group
# inside it): end each one, by its id.
for p in $(ps -o pid= -s "$pid" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
wait "$pid" 2>/dev/null || true
sed -n '/^cost:/p' "$W/run4"
[ "$seen" = yes ] || fail "unbuffered: the cost lines did not appear while the events check hung"
grep -q '^cost: PASS' "$W/out4/gpu-check.log" || fail "unbuffered: \$OUT/gpu-check.log lacks the cost line"
grep -q '^VERDICT' "$W/run4" && fail "unbuffered: the run finished instead of hanging"
[ "$running" = yes ] || fail "unbuffered: the run ended instead of hanging in the events check"
echo "unbuffered: 'cost: PASS' was in stdout and \$OUT/gpu-check.log while the next check hung"

echo "-- 5. a package that does not import"
mkdir -p "$W/broken-site/dlpack_helpers"
echo 'raise ImportError("simulated broken build of the package")' >"$W/broken-site/dlpack_helpers/__init__.py"
set +e
env DLPACK_HELPERS_CUDA_LIBRARY="$FAKE" PYTHON="$PY" GPU_CHECK_SITE="$W/broken-site" bash scripts/gpu-check >"$W/run5" 2>&1
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$W/run5"; fail "broken package: exit status $rc"; }
has "$W/run5" "package: SKIP dlpack_helpers is not importable (ImportError: simulated broken build of the package); the exchange checks use the C entry points" "broken package"
grep -F "package:" "$W/run5"

echo "-- 6. the library: built only when cargo is there and it is missing"
C="$W/checkout"
mkdir -p "$C/scripts" "$C/tests-c/gpu" "$C/tests-c/fake"
cp scripts/gpu-check scripts/gpu_check.py "$C/scripts/"
cp tests-c/gpu/count_cuda.c "$C/tests-c/gpu/"
cp tests-c/fake/recorder.h "$C/tests-c/fake/"
: >"$W/calls"
set +e
env -u DLPACK_HELPERS_LIBRARY PATH="$NOCARGO_PATH" DLPACK_HELPERS_CUDA_LIBRARY="$FAKE" PYTHON="$PY" \
  bash "$C/scripts/gpu-check" >"$W/run6a" 2>&1
rc=$?
set -e
cat "$W/run6a"
[ "$rc" -eq 0 ] || fail "no library, no cargo: exit status $rc"
case "$(last_line "$W/run6a")" in "VERDICT: NOT RUN (no library: "*) ;; *) fail "no library, no cargo: last line";; esac
grep -q '^cargo' "$W/calls" && fail "no library, no cargo: cargo was called"
# A cargo that 'builds' by copying the real library records its call.
printf '#!/bin/sh\necho "cargo $*" >>"%s/calls"\nmkdir -p target/release && cp "%s" target/release/\n' \
  "$W" "$LIBDIR/libdlpack_helpers.so" >"$W/cargo-stub/cargo"
: >"$W/calls"
set +e
env -u DLPACK_HELPERS_LIBRARY PATH="$W/cargo-stub:$NOCARGO_PATH" DLPACK_HELPERS_CUDA_LIBRARY="$FAKE" PYTHON="$PY" \
  bash "$C/scripts/gpu-check" >"$W/run6b" 2>&1
rc=$?
set -e
[ "$rc" -eq 0 ] || { cat "$W/run6b"; fail "no library, cargo: exit status $rc"; }
[ "$(grep -c '^cargo build --release --locked' "$W/calls")" -eq 1 ] || { cat "$W/calls"; fail "no library, cargo: one build expected"; }
has "$W/run6b" "library: PASS dlpack-helpers" "no library, cargo"
: >"$W/calls"
env -u DLPACK_HELPERS_LIBRARY PATH="$W/cargo-stub:$NOCARGO_PATH" DLPACK_HELPERS_CUDA_LIBRARY="$FAKE" PYTHON="$PY" \
  bash "$C/scripts/gpu-check" >"$W/run6c" 2>&1 || true
grep -q '^cargo' "$W/calls" && fail "library present: cargo was called again"
echo "library: built once when missing with cargo present; NOT RUN without cargo; not rebuilt when present"
echo "-- gpu-check CPU paths: all passed"
