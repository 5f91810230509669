/* breaks: CORE-TENSOR-DELETE-1
 * profile: core
 * what: dlpack_tensor_delete runs the deleter twice (a double free) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

void dlpack_tensor_delete(DLManagedTensorVersioned *t) {
  void (*real)(DLManagedTensorVersioned *) = (void (*)(DLManagedTensorVersioned *))dlsym(RTLD_NEXT, "dlpack_tensor_delete");
  void (*deleter)(DLManagedTensorVersioned *) = t ? t->deleter : 0;
  real(t);
  if (deleter) deleter(t);
}
