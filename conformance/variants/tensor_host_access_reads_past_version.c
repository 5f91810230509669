/* breaks: STREAMS-TENSOR-HOST-ACCESS-2
 * profile: streams
 * what: dlpack_tensor_host_access reads dl_tensor.device before checking the major version (a
 *   tensor of another major may have no such field there) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

volatile int32_t dlpc_sink;

dlpack_helpers_status dlpack_tensor_host_access(const DLManagedTensorVersioned *t, void *z,
                                                dlpack_helpers_host_access *out) {
  dlpack_helpers_status (*real)(const DLManagedTensorVersioned *, void *, dlpack_helpers_host_access *) =
      (dlpack_helpers_status (*)(const DLManagedTensorVersioned *, void *, dlpack_helpers_host_access *))dlsym(
          RTLD_NEXT, "dlpack_tensor_host_access");
  if (t && out) dlpc_sink = t->dl_tensor.device.device_type;
  return real(t, z, out);
}
