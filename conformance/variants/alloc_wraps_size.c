/* breaks: CORE-TENSOR-ALLOC-4
 * profile: core
 * what: dlpack_tensor_alloc computes the buffer size modulo 2^64 and allocates what the wrapped size says */
#include "real.h"

dlpack_helpers_status dlpack_tensor_alloc(DLDevice d, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                          DLDataType dt, uint64_t flags, DLManagedTensorVersioned **out) {
  __typeof__(&dlpack_tensor_alloc) real = REAL(dlpack_tensor_alloc);
  dlpack_helpers_status st = real(d, ndim, shape, strides, dt, flags, out);
  if (st == DLPACK_HELPERS_STATUS_OVERFLOW && ndim > 0 && ndim <= 8 && shape) {
    /* the wrapped product of the extents, as unsigned 64-bit arithmetic gives it */
    uint64_t n = 1;
    for (int32_t i = 0; i < ndim; ++i) n *= (uint64_t)shape[i];
    int64_t one[1] = {(int64_t)(n & 0xFFFF)};
    return real(d, 1, one, 0, dt, flags, out);
  }
  return st;
}
