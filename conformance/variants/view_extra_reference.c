/* breaks: PY-TENSOR-NEW-VIEW-VALIDATED-9
 * profile: python
 * what: dlpack_tensor_new_view_validated takes two references to owner (one is never dropped) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_tensor_new_view_validated(const DLTensor *t, uint64_t flags, void *owner, DLManagedTensorVersioned **out) {
  dlpack_helpers_status (*real)(const DLTensor *, uint64_t, void *, DLManagedTensorVersioned **) =
      (dlpack_helpers_status (*)(const DLTensor *, uint64_t, void *, DLManagedTensorVersioned **))dlsym(RTLD_NEXT, "dlpack_tensor_new_view_validated");
  void (*incref)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "Py_IncRef");
  dlpack_helpers_status st = real(t, flags, owner, out);
  if (st == DLPACK_HELPERS_STATUS_OK && incref) incref(owner);
  return st;
}
