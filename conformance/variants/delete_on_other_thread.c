/* breaks: CORE-TENSOR-DELETE-8
 * profile: core
 * what: dlpack_tensor_delete hands the release to another thread (and waits for it) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include "dlpc_abi.h"

static void *run(void *t) {
  void (*real)(DLManagedTensorVersioned *) = (void (*)(DLManagedTensorVersioned *))dlsym(RTLD_NEXT, "dlpack_tensor_delete");
  real((DLManagedTensorVersioned *)t);
  return 0;
}

void dlpack_tensor_delete(DLManagedTensorVersioned *t) {
  pthread_t th;
  if (pthread_create(&th, 0, run, t) == 0) pthread_join(th, 0);
}
