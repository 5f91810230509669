/* First calls from 16 threads at once, in a fresh process (scripts/test.d/86-concurrency.sh runs
 * it many times, plain and under ThreadSanitizer).
 *
 *   first_calls PATH     PATH: info, stream-cuda, stream-hip, pointer, level-zero, python, all
 *
 * Every lazily initialized path of the library is initialized on its first call: the version
 * info, the stream backends (CUDA driver, HIP runtime), the pointer-query loaders (CUDA, HIP,
 * Level Zero), the Python runtime lookup (here: a process without Python). A race there shows
 * only when many threads make that first call at the same moment, and only in a process where
 * nothing initialized it before: so one process per run, 16 threads released by one barrier onto
 * the same first call. `all` makes every first call, each thread starting at a different one.
 *
 * Checks: every thread gets the same answer; with the fake drivers of tests-c/fake/ (named by
 * DLPACK_HELPERS_{CUDA,HIP,LEVEL_ZERO}_LIBRARY) each driver's init entry point (cuInit, hipInit,
 * zeInit) ran exactly once: the first initialization is single-shot (the drivers' documentation
 * does not promise that concurrent init calls are safe). No timing: the barrier is the only
 * ordering, and the counts are exact. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_helpers.h"

#define NTHREADS 16

static pthread_barrier_t start;
static atomic_int failures;
static const char *path;
static int have_cuda, have_hip, have_ze;
static char device_memory[4096]; /* registered with each fake as its device allocation */

#define FAIL(...)                                                       \
  do {                                                                  \
    if (atomic_fetch_add(&failures, 1) < 10) fprintf(stderr, __VA_ARGS__); \
  } while (0)

typedef long (*count_fn)(const char *);

static DLDevice dev(int32_t type, int32_t id) {
  DLDevice d;
  d.device_type = (DLDeviceType)type;
  d.device_id = id;
  return d;
}

/* One first call of each kind; each returns a value every thread must agree on. */
static long call_info(void) {
  dlpack_helpers_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (dlpack_get_info(&info) != DLPACK_HELPERS_STATUS_OK) return -1;
  if (!info.version || strlen(info.version) == 0) return -2;
  return (long)info.major * 1000000 + (long)info.minor * 1000 + info.patch;
}

static long call_stream(DLDeviceType t, int have) {
  dlpack_helpers_status s = dlpack_stream_backend_check(t);
  if (have && s != DLPACK_HELPERS_STATUS_OK) return -1000 - (long)s;
  if (s != DLPACK_HELPERS_STATUS_OK) {
    /* The message is this thread's own, and names the runtime. */
    const char *m = dlpack_last_error_message();
    if (!m || !*m) return -2;
  }
  if (have) {
    dlpack_helpers_stream consumer = {DLPACK_HELPERS_STREAM_HANDLE, (void *)(uintptr_t)0x200};
    s = dlpack_stream_wait(dev(t, 0), (void *)(uintptr_t)0x100, &consumer);
    if (s != DLPACK_HELPERS_STATUS_OK) return -3000 - (long)s;
  }
  return (long)s;
}

static long call_pointer(void *ze_context) {
  dlpack_helpers_pointer_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  dlpack_helpers_status s = dlpack_pointer_classify(device_memory, ze_context, &info);
  if (s != DLPACK_HELPERS_STATUS_OK) return -1000 - (long)s;
  DLDevice d;
  s = dlpack_pointer_get_device(device_memory, &d);
  return (long)info.memory_class * 1000000 + (long)info.backends_asked * 1000 + (long)s;
}

static long call_python(void) {
  const struct DLPackExchangeAPI *api = NULL;
  /* No Python in this process: the lookup finds none and says so (never a crash). */
  dlpack_helpers_status s = dlpack_exchange_api_find((void *)&api, &api);
  DLDevice d;
  dlpack_helpers_status s2 = dlpack_object_get_device((void *)&api, &d);
  return (long)s * 1000 + (long)s2;
}

#define NPATHS 6
static const char *paths[NPATHS] = {"info", "stream-cuda", "stream-hip", "pointer", "level-zero", "python"};

static long call(int k) {
  switch (k) {
    case 0: return call_info();
    case 1: return call_stream(kDLCUDA, have_cuda);
    case 2: return call_stream(kDLROCM, have_hip);
    case 3: return call_pointer(NULL);
    case 4: return call_pointer((void *)(uintptr_t)0x2e0);
    default: return call_python();
  }
}

static long answers[NTHREADS][NPATHS];

static void *first(void *arg) {
  int id = (int)(intptr_t)arg;
  pthread_barrier_wait(&start);
  for (int j = 0; j < NPATHS; ++j) {
    int k = (j + id) % NPATHS; /* `all`: each thread starts at a different first call */
    if (strcmp(path, "all") != 0 && strcmp(path, paths[k]) != 0) continue;
    answers[id][k] = call(k);
  }
  return NULL;
}

static void *open_fake(const char *env) {
  const char *lib = getenv(env);
  if (!lib || !strstr(lib, "fake_")) return NULL;
  return dlopen(lib, RTLD_NOW | RTLD_LOCAL);
}

static void check_once(void *h, const char *what, const char *init) {
  if (!h) return;
  count_fn count = (count_fn)(uintptr_t)dlsym(h, "fake_count");
  if (!count) {
    FAIL("%s: fake_count not found\n", what);
    return;
  }
  long n = count(init);
  /* 0: this path never needed the runtime; more than 1: racing first users each initialized. */
  if (n > 1) FAIL("%s: %s ran %ld times (the first initialization is not single-shot)\n", what, init, n);
  printf("   %s: %s x%ld\n", what, init, n);
}

int main(int argc, char **argv) {
  path = argc > 1 ? argv[1] : "all";
  int known = strcmp(path, "all") == 0;
  for (int k = 0; k < NPATHS; ++k) known |= strcmp(path, paths[k]) == 0;
  if (!known) {
    fprintf(stderr, "usage: first_calls info|stream-cuda|stream-hip|pointer|level-zero|python|all\n");
    return 2;
  }
  /* The fakes are opened (not initialized) before the threads start, to register the device
   * allocation; the library finds them resident and loads them itself on first use. */
  void *cuda = open_fake("DLPACK_HELPERS_CUDA_LIBRARY");
  void *hip = open_fake("DLPACK_HELPERS_HIP_LIBRARY");
  void *ze = open_fake("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY");
  have_cuda = cuda != NULL;
  have_hip = hip != NULL;
  have_ze = ze != NULL;
  if (hip) {
    void (*reg)(const void *, size_t, int, int, int) =
        (void (*)(const void *, size_t, int, int, int))(uintptr_t)dlsym(hip, "fake_hip_register");
    if (reg) reg(device_memory, sizeof device_memory, 2, 0, 0);
  }
  if (ze) {
    void (*reg)(void *, const void *, size_t, unsigned, void *) =
        (void (*)(void *, const void *, size_t, unsigned, void *))(uintptr_t)dlsym(ze, "fake_ze_register");
    if (reg) reg((void *)(uintptr_t)0x2e0, device_memory, sizeof device_memory, 2, (void *)(uintptr_t)0xde0);
  }
  pthread_barrier_init(&start, NULL, NTHREADS);
  pthread_t th[NTHREADS];
  for (int k = 0; k < NTHREADS; ++k)
    if (pthread_create(&th[k], NULL, first, (void *)(intptr_t)k) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  for (int k = 0; k < NTHREADS; ++k) pthread_join(th[k], NULL);
  pthread_barrier_destroy(&start);
  for (int k = 0; k < NPATHS; ++k) {
    if (strcmp(path, "all") != 0 && strcmp(path, paths[k]) != 0) continue;
    for (int id = 1; id < NTHREADS; ++id)
      if (answers[id][k] != answers[0][k])
        FAIL("%s: thread %d answered %ld, thread 0 %ld\n", paths[k], id, answers[id][k], answers[0][k]);
    if (answers[0][k] < 0) FAIL("%s: failed (%ld)\n", paths[k], answers[0][k]);
  }
  check_once(cuda, "fake CUDA", "cuInit");
  check_once(hip, "fake HIP", "hipInit");
  check_once(ze, "fake Level Zero", "zeInit");
  int f = atomic_load(&failures);
  printf("first_calls %s: %d threads, %s\n", path, NTHREADS, f ? "FAILED" : "one answer for all, no failure");
  return f ? 1 : 0;
}
