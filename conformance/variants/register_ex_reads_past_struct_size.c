/* breaks: STREAMS-STREAM-BACKEND-REGISTER-EX-3
 * profile: streams
 * what: dlpack_stream_backend_register_ex reads wait_handle whatever struct_size says (a caller
 *   built against the older, shorter struct has no such field) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

volatile void *dlpc_sink;

dlpack_helpers_status dlpack_stream_backend_register_ex(DLDeviceType t, const dlpack_helpers_stream_backend_ex *b) {
  dlpack_helpers_status (*real)(DLDeviceType, const dlpack_helpers_stream_backend_ex *) =
      (dlpack_helpers_status (*)(DLDeviceType, const dlpack_helpers_stream_backend_ex *))dlsym(
          RTLD_NEXT, "dlpack_stream_backend_register_ex");
  if (b && b->struct_size >= 32) dlpc_sink = (void *)b->wait_handle;
  return real(t, b);
}
