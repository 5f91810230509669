/* breaks: CORE-TENSOR-WRITABILITY-3
 * profile: core
 * what: dlpack_tensor_writability calls a tensor with IS_COPIED read-only */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_tensor_writability(const DLManagedTensorVersioned *t, dlpack_helpers_writability *out) {
  dlpack_helpers_status (*real)(const DLManagedTensorVersioned *, dlpack_helpers_writability *) =
      (dlpack_helpers_status (*)(const DLManagedTensorVersioned *, dlpack_helpers_writability *))dlsym(RTLD_NEXT, "dlpack_tensor_writability");
  dlpack_helpers_status st = real(t, out);
  if (st == DLPACK_HELPERS_STATUS_OK && (t->flags & DLPACK_FLAG_BITMASK_IS_COPIED)) *out = DLPACK_HELPERS_WRITABILITY_READ_ONLY;
  return st;
}
