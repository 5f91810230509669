/* breaks: OWN-REENTRY-2
 * profile: core
 * what: dlpack_tensor_check_version_or_delete runs the deleter after setting its own message (the deleter's message is left) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_tensor_check_version_or_delete(DLManagedTensorVersioned *t, dlpack_helpers_version_compat *c) {
  dlpack_helpers_status (*real)(DLManagedTensorVersioned *, dlpack_helpers_version_compat *) =
      (dlpack_helpers_status (*)(DLManagedTensorVersioned *, dlpack_helpers_version_compat *))dlsym(RTLD_NEXT, "dlpack_tensor_check_version_or_delete");
  if (!t || t->version.major == 1 || !t->deleter) return real(t, c);
  void (*d)(DLManagedTensorVersioned *) = t->deleter;
  t->deleter = 0;
  dlpack_helpers_status st = real(t, c); /* sets the refusal message, calls nothing */
  d(t);
  return st;
}
