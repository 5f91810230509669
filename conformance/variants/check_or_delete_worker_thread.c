/* breaks: CORE-TENSOR-CHECK-VERSION-OR-DELETE-3
 * profile: core
 * what: dlpack_tensor_check_version_or_delete hands a refused tensor to a worker thread, which calls the deleter (the caller waits for it) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include "dlpc_abi.h"

static void *release(void *t) {
  DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)t;
  m->deleter(m);
  return 0;
}

typedef dlpack_helpers_status (*fn)(DLManagedTensorVersioned *, dlpack_helpers_version_compat *);
dlpack_helpers_status dlpack_tensor_check_version_or_delete(DLManagedTensorVersioned *t,
                                                            dlpack_helpers_version_compat *out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_tensor_check_version_or_delete");
  if (t && t->version.major != 1 && t->deleter) {
    pthread_t th;
    if (pthread_create(&th, 0, release, t) == 0) pthread_join(th, 0);
    DLManagedTensorVersioned copy = {0};
    copy.version = (DLPackVersion){2, 0};
    return real(&copy, out); /* the refusal and its message, with nothing left to release */
  }
  return real(t, out);
}
