/* breaks: STREAMS-STREAM-BACKEND-REGISTER-6
 * profile: streams
 * what: a second dlpack_stream_backend_register for a registered device type reports OK (and
 *   silently keeps the first) instead of INVALID_ARGUMENT */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_stream_backend_register(DLDeviceType t, const dlpack_helpers_stream_backend *b) {
  dlpack_helpers_status (*real)(DLDeviceType, const dlpack_helpers_stream_backend *) =
      (dlpack_helpers_status (*)(DLDeviceType, const dlpack_helpers_stream_backend *))dlsym(
          RTLD_NEXT, "dlpack_stream_backend_register");
  dlpack_helpers_status (*check)(DLDeviceType) =
      (dlpack_helpers_status (*)(DLDeviceType))dlsym(RTLD_NEXT, "dlpack_stream_backend_check");
  if (t != 1 && b && b->wait && b->synchronize && t != 2 && t != 10 && check(t) == DLPACK_HELPERS_STATUS_OK)
    return DLPACK_HELPERS_STATUS_OK;
  return real(t, b);
}
