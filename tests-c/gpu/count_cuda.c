/* A counting pass-through of the CUDA driver for scripts/gpu-check's "events" check: every entry
 * point dlpack-helpers looks up is forwarded unchanged to the real driver (COUNT_CUDA_REAL, else
 * libcuda.so.1) and counted, so the check can read how many events the library creates on a real
 * GPU. It exports the same counters as the test doubles (fake_count, fake_reset_counts,
 * fake_last; tests-c/fake/recorder.h). Load it through DLPACK_HELPERS_CUDA_LIBRARY. It is an
 * instrument, not a double: nothing is answered without the real driver. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#define NFN 16
static const char *names[NFN] = {"cuInit", "cuCtxGetCurrent", "cuCtxPushCurrent_v2",
                                 "cuCtxPopCurrent_v2", "cuDeviceGet", "cuDevicePrimaryCtxRetain",
                                 "cuEventCreate", "cuEventRecord", "cuStreamWaitEvent",
                                 "cuStreamSynchronize", "cuPointerGetAttributes", "cuStreamGetCtx",
                                 "cuGetErrorName", 0};
#include "../fake/recorder.h"

typedef int CUresult;
static void *real;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void open_real(void) {
  const char *p = getenv("COUNT_CUDA_REAL");
  real = dlopen(p && *p ? p : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
}
/* The real entry point, or NULL (then the call fails with CUDA_ERROR_NOT_FOUND, 500). */
static void *fn(const char *name) {
  pthread_once(&once, open_real);
  return real ? dlsym(real, name) : 0;
}
#define FORWARD(name, params, args)                      \
  CUresult name params {                                 \
    enter(#name, 0, 0);                                  \
    CUresult(*f) params = (CUresult(*) params)fn(#name); \
    return f ? f args : 500;                             \
  }

FORWARD(cuInit, (unsigned flags), (flags))
FORWARD(cuCtxGetCurrent, (void **c), (c))
FORWARD(cuCtxPushCurrent_v2, (void *c), (c))
FORWARD(cuCtxPopCurrent_v2, (void **c), (c))
FORWARD(cuDeviceGet, (int *d, int ordinal), (d, ordinal))
FORWARD(cuDevicePrimaryCtxRetain, (void **c, int d), (c, d))
FORWARD(cuEventCreate, (void **e, unsigned flags), (e, flags))
FORWARD(cuEventRecord, (void *e, void *s), (e, s))
FORWARD(cuStreamWaitEvent, (void *s, void *e, unsigned flags), (s, e, flags))
FORWARD(cuStreamSynchronize, (void *s), (s))
FORWARD(cuPointerGetAttributes,
        (unsigned n, const int *attributes, void **data, unsigned long long ptr),
        (n, attributes, data, ptr))
FORWARD(cuStreamGetCtx, (void *s, void **c), (s, c))
FORWARD(cuGetErrorName, (CUresult r, const char **s), (r, s))
