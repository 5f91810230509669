/* breaks: CORE-TENSOR-CHECK-VERSION-OR-DELETE-3
 * profile: core
 * what: dlpack_tensor_check_version_or_delete refuses a major mismatch without releasing the
 *   tensor (a leak: the caller was told it no longer owns it) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_tensor_check_version_or_delete(DLManagedTensorVersioned *t, dlpack_helpers_version_compat *out) {
  dlpack_helpers_status (*check)(const DLManagedTensorVersioned *, dlpack_helpers_version_compat *) =
      (dlpack_helpers_status (*)(const DLManagedTensorVersioned *, dlpack_helpers_version_compat *))dlsym(RTLD_NEXT, "dlpack_tensor_check_version");
  return check(t, out);
}
