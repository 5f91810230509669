/* breaks: CORE-TENSOR-ALLOC-2 CORE-TENSOR-ALLOC-5
 * profile: core
 * what: dlpack_tensor_alloc masks flags with DLPack 1.0's 0x3 and refuses IS_SUBBYTE_TYPE_PADDED (0x4) as INVALID_FLAGS */
#include "real.h"

dlpack_helpers_status dlpack_tensor_alloc(DLDevice d, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                          DLDataType dt, uint64_t flags, DLManagedTensorVersioned **out) {
  __typeof__(&dlpack_tensor_alloc) real = REAL(dlpack_tensor_alloc);
  /* keep the base's order (NULL first): only a call the base would accept past the NULL check */
  if (out && (shape || ndim <= 0) && (flags & 0x4)) {
    /* the base refuses flags outside 0x7 with INVALID_FLAGS; this one also refuses 0x4 */
    return real(d, ndim, shape, strides, dt, flags | (1ull << 40), out);
  }
  return real(d, ndim, shape, strides, dt, flags, out);
}
