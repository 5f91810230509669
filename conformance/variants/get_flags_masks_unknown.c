/* breaks: CORE-TENSOR-GET-FLAGS-3
 * profile: core
 * what: dlpack_tensor_get_flags masks the bits DLPack 1.3 does not define */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_tensor_get_flags(const DLManagedTensorVersioned *t, uint64_t *out) {
  dlpack_helpers_status (*real)(const DLManagedTensorVersioned *, uint64_t *) =
      (dlpack_helpers_status (*)(const DLManagedTensorVersioned *, uint64_t *))dlsym(RTLD_NEXT, "dlpack_tensor_get_flags");
  dlpack_helpers_status st = real(t, out);
  if (st == DLPACK_HELPERS_STATUS_OK) *out &= 7u;
  return st;
}
