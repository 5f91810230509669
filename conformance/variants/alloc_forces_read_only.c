/* breaks: CORE-TENSOR-ALLOC-5
 * profile: core
 * what: dlpack_tensor_alloc sets DLPACK_FLAG_BITMASK_READ_ONLY on every tensor it makes, whatever flags says */
#include "real.h"

dlpack_helpers_status dlpack_tensor_alloc(DLDevice d, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                          DLDataType dt, uint64_t flags, DLManagedTensorVersioned **out) {
  __typeof__(&dlpack_tensor_alloc) real = REAL(dlpack_tensor_alloc);
  dlpack_helpers_status st = real(d, ndim, shape, strides, dt, flags, out);
  if (st == DLPACK_HELPERS_STATUS_OK) (*out)->flags |= 1;
  return st;
}
