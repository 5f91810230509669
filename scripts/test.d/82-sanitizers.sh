# Sanitizers and leak checks on the C side: every tests-c/test_*.c, against the shared
# AND the static library,
#   1. built with gcc -fsanitize=address,undefined (LeakSanitizer included), any report fails;
#   2. run under valgrind memcheck --leak-check=full; definite or indirect leaks and any memory
#      error fail (--error-exitcode).
# test_reliability.c runs with the fake CUDA driver (tests-c/fake/fake_cuda.c), so the CUDA
# backend's initialization and event pool are covered too. The Rust code itself is not
# instrumented by ASan (that needs nightly); valgrind sees all of it. The tests are compiled by
# scripts/c-build.sh (flags: tests-c/cflags), plus the sanitizer flags.
# needs: release
source "$(dirname "$0")/../common.sh"
source "$ROOT/scripts/c-build.sh"
need valgrind "the valgrind package (Debian/Ubuntu: apt-get install valgrind)"
OUT="$ROOT/target/sanitizers"
mkdir -p "$OUT"
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
# gcc finds libasan/libubsan through its own driver; say which package is missing if it cannot.
echo 'int main(void){return 0;}' > "$OUT/probe.c"
"$CC" "${SAN[@]}" "$OUT/probe.c" -o "$OUT/probe" 2>"$OUT/probe.err" || {
  cat "$OUT/probe.err"; echo "error: $CC cannot link -fsanitize=address,undefined: install libasan and libubsan (Debian: libgcc-12-dev ships them)" >&2; exit 1; }

# The fake CUDA driver, plain and with ASan (a sanitized program loads the sanitized one).
"$CC" -std=c11 -O1 -g -shared -fPIC -o "$OUT/fake_cuda.so" tests-c/fake/fake_cuda.c -lpthread
"$CC" -std=c11 -O1 -g -shared -fPIC "${SAN[@]}" -o "$OUT/fake_cuda.asan.so" tests-c/fake/fake_cuda.c -lpthread
"$CC" -std=c11 -O1 -g -shared -fPIC -o "$OUT/fake_hip.so" tests-c/fake/fake_hip.c -lpthread
"$CC" -std=c11 -O1 -g -shared -fPIC "${SAN[@]}" -o "$OUT/fake_hip.asan.so" tests-c/fake/fake_hip.c -lpthread

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=97:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=98"
VG=(valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect --error-exitcode=99)

runs=0
shopt -s nullglob
for src in tests-c/test_*.c; do
  name="$(basename "$src" .c)"
  env_fake=(); env_fake_asan=(); iters=()
  if [ "$name" = test_reliability ]; then
    env_fake=(DLPACK_HELPERS_CUDA_LIBRARY="$OUT/fake_cuda.so" DLPACK_HELPERS_HIP_LIBRARY="$OUT/fake_hip.so")
    env_fake_asan=(DLPACK_HELPERS_CUDA_LIBRARY="$OUT/fake_cuda.asan.so" DLPACK_HELPERS_HIP_LIBRARY="$OUT/fake_hip.asan.so")
    iters=(DLPACK_HELPERS_STRESS_ITERS=2000)
  fi
  # 1. ASan + UBSan
  c_test_build "$src" "$OUT/$name.asan.shared" shared "${SAN[@]}"
  c_test_build "$src" "$OUT/$name.asan.static" static "${SAN[@]}"
  for kind in shared static; do
    echo "-- $name ($kind) under AddressSanitizer + UndefinedBehaviorSanitizer"
    env "${env_fake_asan[@]}" "${iters[@]}" "$OUT/$name.asan.$kind" >"$OUT/$name.asan.$kind.log" 2>&1 \
      || { cat "$OUT/$name.asan.$kind.log"; echo "FAIL: $name ($kind) under ASan/UBSan" >&2; exit 1; }
    if grep -qE 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$OUT/$name.asan.$kind.log"; then
      cat "$OUT/$name.asan.$kind.log"; echo "FAIL: sanitizer report in $name ($kind)" >&2; exit 1
    fi
    runs=$((runs + 1))
  done
  # 2. valgrind memcheck
  c_test_build "$src" "$OUT/$name.shared" shared
  c_test_build "$src" "$OUT/$name.static" static
  for kind in shared static; do
    echo "-- $name ($kind) under valgrind memcheck"
    env "${env_fake[@]}" DLPACK_HELPERS_STRESS_ITERS=200 "${VG[@]}" "$OUT/$name.$kind" >"$OUT/$name.vg.$kind.log" 2>&1 \
      || { cat "$OUT/$name.vg.$kind.log"; echo "FAIL: valgrind found errors or leaks in $name ($kind)" >&2; exit 1; }
    runs=$((runs + 1))
  done
done
echo "-- sanitizers: $runs runs (ASan+UBSan and valgrind memcheck, shared and static), zero errors, zero definite/indirect leaks"
