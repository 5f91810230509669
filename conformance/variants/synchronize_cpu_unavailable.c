/* breaks: STREAMS-STREAM-SYNCHRONIZE-3
 * profile: streams
 * what: dlpack_stream_synchronize treats kDLCPU like a device without a backend */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_stream_synchronize(DLDevice d, void *s) {
  dlpack_helpers_status (*real)(DLDevice, void *) =
      (dlpack_helpers_status (*)(DLDevice, void *))dlsym(RTLD_NEXT, "dlpack_stream_synchronize");
  if (d.device_type == 1 && d.device_id >= 0) return DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE;
  return real(d, s);
}
