/* breaks: CORE-DLTENSOR-LAYOUT-8
 * profile: core
 * what: dlpack_dltensor_layout answers an overflowing tensor with a wrapped 64-bit layout and OK */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_dltensor_layout(const DLTensor *t, uint64_t flags, dlpack_helpers_layout *out) {
  dlpack_helpers_status (*real)(const DLTensor *, uint64_t, dlpack_helpers_layout *) =
      (dlpack_helpers_status (*)(const DLTensor *, uint64_t, dlpack_helpers_layout *))dlsym(RTLD_NEXT, "dlpack_dltensor_layout");
  dlpack_helpers_status st = real(t, flags, out);
  if (st != DLPACK_HELPERS_STATUS_OVERFLOW || !t || !out || t->ndim < 0 || !t->shape) return st;
  uint64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= (uint64_t)t->shape[i];
  memset(out, 0, sizeof *out);
  out->numel = (int64_t)n;
  out->nbytes = (int64_t)(n * ((t->dtype.bits * t->dtype.lanes + 7u) / 8u));
  out->element_bits = t->dtype.bits * t->dtype.lanes;
  return DLPACK_HELPERS_STATUS_OK;
}
