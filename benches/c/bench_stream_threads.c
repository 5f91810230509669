/* Stream backend scaling: dlpack_stream_wait (event record on the producer stream, wait on the
 * consumer stream) from 1, 2, 4 and 8 threads at once, through the CUDA driver test double
 * (tests-c/fake/fake_cuda.c, loaded via DLPACK_HELPERS_CUDA_LIBRARY). Prints
 *   threads ns_per_call_per_thread calls_per_second_total
 * The double takes one mutex per driver call (to count calls), so this measures the library's
 * own synchronisation plus that lock; the library's side is lock-free after initialisation
 * (OnceLock for the driver, the event pool). A benchmark, not a test. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dlpack_helpers.h"

static long iters = 200000;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *worker(void *arg) {
  long id = (long)arg;
  DLDevice d = {kDLCUDA, 0};
  dlpack_helpers_stream consumer = {DLPACK_HELPERS_STREAM_HANDLE, (void *)(0x1000 + id * 16)};
  void *producer = (void *)(0x2000 + id * 16);
  for (long i = 0; i < iters; ++i) {
    if (dlpack_stream_wait(d, producer, &consumer) != 0) {
      fprintf(stderr, "dlpack_stream_wait: %s\n", dlpack_last_error_message());
      exit(1);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--quick") == 0) iters = 2000;
  if (dlpack_stream_backend_check(kDLCUDA) != 0) {
    fprintf(stderr, "no CUDA backend: %s\n", dlpack_last_error_message());
    return 1;
  }
  worker((void *)0); /* initialisation (driver, context, event pool) outside the timing */
  int counts[4] = {1, 2, 4, 8};
  for (int k = 0; k < 4; ++k) {
    int n = counts[k];
    pthread_t th[8];
    double t0 = now_ns();
    for (long i = 0; i < n; ++i) pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < n; ++i) pthread_join(th[i], NULL);
    double dt = now_ns() - t0;
    printf("%d %.1f %.0f\n", n, dt / (double)iters, (double)n * (double)iters / (dt * 1e-9));
  }
  return 0;
}
