/* breaks: CORE-COMPACT-STRIDES-6
 * profile: core
 * what: dlpack_compact_strides returns wrapped strides with OK instead of OVERFLOW */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_compact_strides(int32_t ndim, const int64_t *shape, bool col, int64_t *out) {
  dlpack_helpers_status (*real)(int32_t, const int64_t *, bool, int64_t *) =
      (dlpack_helpers_status (*)(int32_t, const int64_t *, bool, int64_t *))dlsym(RTLD_NEXT, "dlpack_compact_strides");
  dlpack_helpers_status st = real(ndim, shape, col, out);
  if (st != DLPACK_HELPERS_STATUS_OVERFLOW) return st;
  uint64_t acc = 1;
  for (int i = 0; i < ndim; ++i) {
    int k = col ? i : ndim - 1 - i;
    out[k] = (int64_t)acc;
    acc *= (uint64_t)(shape[k] > 1 ? shape[k] : 1);
  }
  return DLPACK_HELPERS_STATUS_OK;
}
