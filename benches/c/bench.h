/* Shared timing helpers of the C benchmarks (benchmarks, not tests: nothing here asserts time).
 *
 * BENCH(name, setup, lib_body, inline_body): times N iterations of the library call and of the
 * same logic written inline, alternating, R times each, and prints one line
 *   name <median ns/call lib> <median ns/call inline> <ratio>
 * Every iteration varies its input through `i` and passes its result through KEEP, so neither
 * variant can be hoisted out of the loop or vectorised: both pay the same loop. */
#ifndef BENCH_H
#define BENCH_H
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEP(x) __asm__ volatile("" : : "g"(x) : "memory")

static long bench_n = 2000000; /* iterations per repeat */
static int bench_r = 11;       /* repeats (median) */

static inline double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void bench_args(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      bench_n = 20000;
      bench_r = 3;
    } else if (strcmp(argv[i], "--callgrind") == 0) {
      bench_n = 100000;
      bench_r = 1;
    }
  }
}

/* DEF(name, setup, lib_body, inline_body) defines two loops, loop_lib_<name> and
 * loop_inline_<name> (noinline, so callgrind can count each: --toggle-collect='loop_*');
 * RUN(name) times them alternately, bench_r times each, and prints
 *   name <median ns/call: lib> <inline> <C baseline library through the PLT>              */
#define DEF(name, setup, lib_body, inline_body, clib_body)                                \
  static __attribute__((noinline)) void loop_lib_##name(long n) {                          \
    setup;                                                                                 \
    for (long i = 0; i < n; ++i) { lib_body; }                                             \
  }                                                                                        \
  static __attribute__((noinline)) void loop_inline_##name(long n) {                       \
    setup;                                                                                 \
    for (long i = 0; i < n; ++i) { inline_body; }                                          \
  }                                                                                        \
  static __attribute__((noinline)) void loop_clib_##name(long n) {                         \
    setup;                                                                                 \
    for (long i = 0; i < n; ++i) { clib_body; }                                            \
  }

static void run(const char *name, void (*lib)(long), void (*inl)(long), void (*clib)(long)) {
  double tl[64], ti[64], tc[64];
  lib(bench_n / 10 + 1); /* warm up */
  inl(bench_n / 10 + 1);
  clib(bench_n / 10 + 1);
  for (int r = 0; r < bench_r; ++r) {
    double t0 = now_ns();
    lib(bench_n);
    double t1 = now_ns();
    inl(bench_n);
    double t2 = now_ns();
    clib(bench_n);
    double t3 = now_ns();
    tl[r] = (t1 - t0) / (double)bench_n;
    ti[r] = (t2 - t1) / (double)bench_n;
    tc[r] = (t3 - t2) / (double)bench_n;
  }
  double ml = median(tl, bench_r), mi = median(ti, bench_r), mc = median(tc, bench_r);
  printf("%-24s %8.2f %8.2f %8.2f\n", name, ml, mi, mc);
  fflush(stdout);
}
#define RUN(name) run(#name, loop_lib_##name, loop_inline_##name, loop_clib_##name)

#endif
