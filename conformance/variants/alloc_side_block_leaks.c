/* breaks: CORE-TENSOR-ALLOC-8
 * profile: core
 * what: dlpack_tensor_alloc keeps a 64-byte-aligned side block (posix_memalign) per tensor that its deleter never frees */
#include "real.h"
#include <stdlib.h>

dlpack_helpers_status dlpack_tensor_alloc(DLDevice d, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                          DLDataType dt, uint64_t flags, DLManagedTensorVersioned **out) {
  __typeof__(&dlpack_tensor_alloc) real = REAL(dlpack_tensor_alloc);
  dlpack_helpers_status st = real(d, ndim, shape, strides, dt, flags, out);
  void *side = NULL;
  if (st == DLPACK_HELPERS_STATUS_OK && posix_memalign(&side, 64, 64) == 0) {
    /* kept nowhere: the deleter cannot free it */
    __asm__ volatile("" : : "r"(side) : "memory");
  }
  return st;
}
