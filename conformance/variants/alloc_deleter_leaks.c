/* breaks: CORE-TENSOR-ALLOC-8
 * profile: core
 * what: the deleter of a tensor made by dlpack_tensor_alloc releases nothing (buffer and tensor leak) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include "dlpc_abi.h"

static void leak(DLManagedTensorVersioned *t) { (void)t; }

typedef dlpack_helpers_status (*fn)(DLDevice, int32_t, const int64_t *, const int64_t *, DLDataType, uint64_t,
                                    DLManagedTensorVersioned **);
dlpack_helpers_status dlpack_tensor_alloc(DLDevice d, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                          DLDataType dt, uint64_t flags, DLManagedTensorVersioned **out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_tensor_alloc");
  dlpack_helpers_status st = real(d, ndim, shape, strides, dt, flags, out);
  if (st == DLPACK_HELPERS_STATUS_OK) (*out)->deleter = leak;
  return st;
}
