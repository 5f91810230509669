/* breaks: CORE-DLTENSOR-LAYOUT-17
 * profile: core
 * what: dlpack_dltensor_layout judges contiguity on every dimension, extent-1 ones included */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_dltensor_layout(const DLTensor *t, uint64_t flags, dlpack_helpers_layout *out) {
  dlpack_helpers_status (*real)(const DLTensor *, uint64_t, dlpack_helpers_layout *) =
      (dlpack_helpers_status (*)(const DLTensor *, uint64_t, dlpack_helpers_layout *))dlsym(RTLD_NEXT, "dlpack_dltensor_layout");
  dlpack_helpers_status st = real(t, flags, out);
  if (st != DLPACK_HELPERS_STATUS_OK || !t->strides || (out->properties & DLPACK_HELPERS_LAYOUT_EMPTY)) return st;
  int64_t c = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] == 1 && t->strides[i] != c) out->properties &= ~(uint32_t)DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS;
    c *= t->shape[i];
  }
  return st;
}
