/* breaks: CORE-TENSOR-SET-FLAGS-5
 * profile: core
 * what: dlpack_tensor_set_flags drops the flag bits it does not know */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_tensor_set_flags(DLManagedTensorVersioned *t, uint64_t set, uint64_t clear) {
  dlpack_helpers_status (*real)(DLManagedTensorVersioned *, uint64_t, uint64_t) =
      (dlpack_helpers_status (*)(DLManagedTensorVersioned *, uint64_t, uint64_t))dlsym(RTLD_NEXT, "dlpack_tensor_set_flags");
  dlpack_helpers_status st = real(t, set, clear);
  if (st == DLPACK_HELPERS_STATUS_OK) t->flags &= 7u;
  return st;
}
