/* breaks: CORE-LEGACY-TENSOR-DELETE-4
 * profile: core
 * what: dlpack_legacy_tensor_delete looks at dl_tensor (ndim) before the deleter, as a release
 *   that "checks" its argument would */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

volatile int32_t sink;

void dlpack_legacy_tensor_delete(DLManagedTensor *t) {
  void (*real)(DLManagedTensor *) = (void (*)(DLManagedTensor *))dlsym(RTLD_NEXT, "dlpack_legacy_tensor_delete");
  if (t) sink = t->dl_tensor.ndim;
  real(t);
}
