/* breaks: STREAMS-TENSOR-DELETE-AFTER-STREAM-6 STREAMS-TENSOR-DELETE-AFTER-STREAM-8
 * profile: streams
 * what: dlpack_tensor_delete_after_stream releases a GPU tensor at once, on the caller's thread,
 *   while the stream may still be using it */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_tensor_delete_after_stream(DLManagedTensorVersioned *t, DLDevice d, void *s) {
  dlpack_helpers_status (*real)(DLManagedTensorVersioned *, DLDevice, void *) =
      (dlpack_helpers_status (*)(DLManagedTensorVersioned *, DLDevice, void *))dlsym(
          RTLD_NEXT, "dlpack_tensor_delete_after_stream");
  if (t && d.device_id >= 0 && (d.device_type == 2 || d.device_type == 10 || d.device_type == 11)) {
    if (t->deleter) t->deleter(t);
    return DLPACK_HELPERS_STATUS_OK;
  }
  return real(t, d, s);
}
