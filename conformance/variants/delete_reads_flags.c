/* breaks: CORE-TENSOR-DELETE-4
 * profile: core
 * what: dlpack_tensor_delete reads the flags (and the version) before the deleter, as a
 *   release that "checks" the tensor would: beyond the fields a future major keeps */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

volatile uint64_t sink;

void dlpack_tensor_delete(DLManagedTensorVersioned *t) {
  void (*real)(DLManagedTensorVersioned *) = (void (*)(DLManagedTensorVersioned *))dlsym(RTLD_NEXT, "dlpack_tensor_delete");
  if (t) sink = t->flags + (uint64_t)t->dl_tensor.ndim;
  real(t);
}
