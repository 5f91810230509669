/* breaks: CORE-TENSOR-ALLOC-8
 * profile: core
 * what: dlpack_tensor_alloc keeps a 64-byte-aligned side block (posix_memalign) per tensor that its deleter never frees */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(DLDevice, int32_t, const int64_t *, const int64_t *, DLDataType, uint64_t,
                                    DLManagedTensorVersioned **);
dlpack_helpers_status dlpack_tensor_alloc(DLDevice d, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                          DLDataType dt, uint64_t flags, DLManagedTensorVersioned **out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_tensor_alloc");
  dlpack_helpers_status st = real(d, ndim, shape, strides, dt, flags, out);
  void *side = NULL;
  if (st == DLPACK_HELPERS_STATUS_OK && posix_memalign(&side, 64, 64) == 0) {
    /* kept nowhere: the deleter cannot free it */
    __asm__ volatile("" : : "r"(side) : "memory");
  }
  return st;
}
