/* breaks: STREAMS-STREAM-BACKEND-CHECK-10
 * profile: streams
 * what: dlpack_stream_backend_check answers OK for kDLCPU (it has no streams, so no backend) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_stream_backend_check(DLDeviceType t) {
  dlpack_helpers_status (*real)(DLDeviceType) =
      (dlpack_helpers_status (*)(DLDeviceType))dlsym(RTLD_NEXT, "dlpack_stream_backend_check");
  return t == 1 ? DLPACK_HELPERS_STATUS_OK : real(t);
}
