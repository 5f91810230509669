/* breaks: CORE-TENSOR-ALLOC-8
 * profile: core
 * what: the deleter of a tensor made by dlpack_tensor_alloc releases nothing (buffer and tensor leak) */
#include "real.h"

static void leak(DLManagedTensorVersioned *t) { (void)t; }

dlpack_helpers_status dlpack_tensor_alloc(DLDevice d, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                          DLDataType dt, uint64_t flags, DLManagedTensorVersioned **out) {
  __typeof__(&dlpack_tensor_alloc) real = REAL(dlpack_tensor_alloc);
  dlpack_helpers_status st = real(d, ndim, shape, strides, dt, flags, out);
  if (st == DLPACK_HELPERS_STATUS_OK) (*out)->deleter = leak;
  return st;
}
