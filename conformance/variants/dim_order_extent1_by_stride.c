/* breaks: CORE-DLTENSOR-DIM-ORDER-5
 * profile: core
 * what: dlpack_dltensor_dim_order sorts extent-1 dimensions by their stride like any other
 * (peer case 59: an extent-1 dimension with stride 1 can come out as the innermost) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

static uint64_t mag(int64_t s) { return s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s; }

dlpack_helpers_status dlpack_dltensor_dim_order(const DLTensor *t, int32_t *out, int32_t capacity) {
  dlpack_helpers_status (*real)(const DLTensor *, int32_t *, int32_t) =
      (dlpack_helpers_status (*)(const DLTensor *, int32_t *, int32_t))dlsym(RTLD_NEXT, "dlpack_dltensor_dim_order");
  dlpack_helpers_status st = real(t, out, capacity);
  if (st != DLPACK_HELPERS_STATUS_OK || t->ndim == 0 || t->strides == NULL) return st;
  /* Every dimension by (|stride|, higher index first), extent ignored: insertion sort. */
  for (int32_t i = 0; i < t->ndim; ++i) out[i] = t->ndim - 1 - i;
  for (int32_t i = 1; i < t->ndim; ++i) {
    int32_t d = out[i], j = i;
    while (j > 0 && mag(t->strides[out[j - 1]]) > mag(t->strides[d])) {
      out[j] = out[j - 1];
      --j;
    }
    out[j] = d;
  }
  return st;
}
