/* breaks: ABI-ERROR-OBJECT-2 CORE-TENSOR-CHECK-VERSION-OR-DELETE-WITH-ERROR-1
 * profile: core
 * what: dlpack_tensor_check_version_or_delete_with_error runs the base call before refusing a too-small err */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(DLManagedTensorVersioned *, dlpack_helpers_version_compat *, dlpack_helpers_error *);
dlpack_helpers_status dlpack_tensor_check_version_or_delete_with_error(DLManagedTensorVersioned *t,
                                                                       dlpack_helpers_version_compat *c,
                                                                       dlpack_helpers_error *err) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_tensor_check_version_or_delete_with_error");
  if (err && err->struct_size < sizeof *err) {
    real(t, c, 0); /* the check comes too late: the tensor may already be released */
  }
  return real(t, c, err);
}
