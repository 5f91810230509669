/* breaks: OWN-THREAD-4
 * profile: core
 * what: a global lock is held while dlpack_tensor_delete runs the producer's deleter, and taken by dlpack_tensor_create */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include "dlpc_abi.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
void dlpack_tensor_delete(DLManagedTensorVersioned *t) {
  void (*real)(DLManagedTensorVersioned *) = (void (*)(DLManagedTensorVersioned *))dlsym(RTLD_NEXT, "dlpack_tensor_delete");
  pthread_mutex_lock(&lock);
  real(t);
  pthread_mutex_unlock(&lock);
}
typedef dlpack_helpers_status (*fn)(void *, DLDevice, int32_t, const int64_t *, const int64_t *, DLDataType, uint64_t,
                                    uint64_t, void (*)(void *), void *, DLManagedTensorVersioned **);
dlpack_helpers_status dlpack_tensor_create(void *data, DLDevice dev, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                           DLDataType dtype, uint64_t off, uint64_t flags, void (*release)(void *), void *ctx,
                                           DLManagedTensorVersioned **out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_tensor_create");
  if (pthread_mutex_trylock(&lock) != 0) pthread_mutex_lock(&lock); /* blocks while a delete runs a deleter */
  dlpack_helpers_status st = real(data, dev, ndim, shape, strides, dtype, off, flags, release, ctx, out);
  pthread_mutex_unlock(&lock);
  return st;
}
