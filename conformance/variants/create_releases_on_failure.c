/* breaks: CORE-TENSOR-CREATE-8
 * profile: core
 * what: dlpack_tensor_create calls release(release_ctx) when it fails (a double free for the caller) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(void *, DLDevice, int32_t, const int64_t *, const int64_t *, DLDataType, uint64_t,
                                    uint64_t, void (*)(void *), void *, DLManagedTensorVersioned **);
dlpack_helpers_status dlpack_tensor_create(void *data, DLDevice dev, int32_t ndim, const int64_t *shape, const int64_t *strides,
                                           DLDataType dtype, uint64_t off, uint64_t flags, void (*release)(void *), void *ctx,
                                           DLManagedTensorVersioned **out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_tensor_create");
  dlpack_helpers_status st = real(data, dev, ndim, shape, strides, dtype, off, flags, release, ctx, out);
  if (st != DLPACK_HELPERS_STATUS_OK && release) release(ctx);
  return st;
}
