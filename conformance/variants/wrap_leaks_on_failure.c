/* breaks: CORE-LEGACY-TENSOR-WRAP-9 OWN-MODEL-3
 * profile: core
 * what: dlpack_legacy_tensor_wrap leaves an allocation behind when it fails */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include "dlpc_abi.h"

static void *volatile sink;
dlpack_helpers_status dlpack_legacy_tensor_wrap(DLManagedTensor *l, uint64_t flags, uint32_t options, DLManagedTensorVersioned **out) {
  dlpack_helpers_status (*real)(DLManagedTensor *, uint64_t, uint32_t, DLManagedTensorVersioned **) =
      (dlpack_helpers_status (*)(DLManagedTensor *, uint64_t, uint32_t, DLManagedTensorVersioned **))dlsym(RTLD_NEXT, "dlpack_legacy_tensor_wrap");
  void *scratch = malloc(96);
  dlpack_helpers_status st = real(l, flags, options, out);
  if (st == DLPACK_HELPERS_STATUS_OK) free(scratch); else sink = scratch;
  return st;
}
