/* breaks: CORE-TENSOR-READ-ONLY-ORIGIN-4
 * profile: core
 * what: dlpack_tensor_read_only_origin never recognises its own legacy wrappers */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_tensor_read_only_origin(const DLManagedTensorVersioned *t, dlpack_helpers_read_only_origin *out) {
  dlpack_helpers_status (*real)(const DLManagedTensorVersioned *, dlpack_helpers_read_only_origin *) =
      (dlpack_helpers_status (*)(const DLManagedTensorVersioned *, dlpack_helpers_read_only_origin *))dlsym(RTLD_NEXT, "dlpack_tensor_read_only_origin");
  dlpack_helpers_status st = real(t, out);
  if (st == DLPACK_HELPERS_STATUS_OK && *out == DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY) *out = DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED;
  return st;
}
