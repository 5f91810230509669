/* Benchmark (not a test): validate + C-contiguity check of a 4-d float32 tensor through the
 * shared library, side by side with a hand-written inline C check of the same rules.
 *
 *   scripts/build
 *   cc -O2 -std=c11 -Isdk/include benches/validate.c -o target/bench-validate \
 *      -Lsdk/lib -ldlpack_helpers -Wl,-rpath,"$PWD/sdk/lib"
 *   target/bench-validate
 */
#define _POSIX_C_SOURCE 199309L
#include "dlpack_helpers.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* The same rules, inline: version, flags, ndim, NULL shape/strides, extents, count overflow,
 * dtype (float32 only), NULL data, C-contiguity with extent-1 dimensions skipped. */
static inline int inline_check(const DLManagedTensorVersioned *m) {
  if (m->version.major != 1) return 10;
  if (m->flags & ~(uint64_t)7 && m->version.minor <= 3) return 28;
  const DLTensor *t = &m->dl_tensor;
  if (t->ndim < 0 || t->ndim > 1024) return 20;
  if (t->ndim && !t->shape) return 21;
  if (t->ndim && !t->strides && m->version.minor >= 2) return 22;
  int64_t n = 1;
  int zero = 0;
  for (int i = 0; i < t->ndim; ++i) {
    int64_t e = t->shape[i];
    if (e < 0) return 23;
    if (e == 0) zero = 1;
    if (e && n > INT64_MAX / e) return 24;
    n *= e;
  }
  if (zero) n = 0;
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) return 26;
  if (n > INT64_MAX / 4) return 24;
  if (n && !t->data) return 25;
  if (n) {
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; --i) {
      if (t->shape[i] == 1) continue;
      if (t->strides[i] != expected) return 29;
      expected *= t->shape[i];
    }
  }
  return 0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  /* argv[1]: "inline" or "lib" runs one side only (for perf stat); default both. */
  const char *only = argc > 1 ? argv[1] : "";
  static float data[2 * 3 * 4 * 5];
  int64_t shape[4] = {2, 3, 4, 5}, strides[4] = {60, 20, 5, 1};
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = 1;
  m.version.minor = 3;
  m.dl_tensor.data = data;
  m.dl_tensor.device.device_type = kDLCPU;
  m.dl_tensor.ndim = 4;
  m.dl_tensor.dtype.code = kDLFloat;
  m.dl_tensor.dtype.bits = 32;
  m.dl_tensor.dtype.lanes = 1;
  m.dl_tensor.shape = shape;
  m.dl_tensor.strides = strides;
  dlpack_helpers_validate_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.flags = DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS;
  const long iters = 20 * 1000 * 1000;
  volatile int sink = 0;
  DLManagedTensorVersioned *volatile pm = &m; /* defeat hoisting out of the loop */
  for (int round = 0; round < 3; ++round) {
    double t0 = now();
    if (strcmp(only, "lib") != 0)
      for (long i = 0; i < iters; ++i) sink += inline_check(pm);
    double t1 = now();
    if (strcmp(only, "inline") != 0)
      for (long i = 0; i < iters; ++i) sink += dlpack_tensor_validate(pm, &o, NULL);
    double t2 = now();
    double a = (t1 - t0) / iters * 1e9, b = (t2 - t1) / iters * 1e9;
    printf("round %d: inline C %.2f ns/call, dlpack_tensor_validate %.2f ns/call, ratio %.2fx\n", round, a, b, b / a);
  }
  return sink == 0 ? 0 : 1;
}
