/* breaks: STREAMS-STREAM-DECODE-HANDLE-3
 * profile: streams
 * what: dlpack_stream_decode_handle takes a SYCL queue for any device type, not only kDLOneAPI */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_stream_decode_handle(DLDevice d, dlpack_helpers_stream_kind k, void *h,
                                                  dlpack_helpers_stream *out) {
  dlpack_helpers_status (*real)(DLDevice, dlpack_helpers_stream_kind, void *, dlpack_helpers_stream *) =
      (dlpack_helpers_status (*)(DLDevice, dlpack_helpers_stream_kind, void *, dlpack_helpers_stream *))dlsym(
          RTLD_NEXT, "dlpack_stream_decode_handle");
  if (d.device_id >= 0 && d.device_type != 14) d.device_type = 14;
  return real(d, k, h, out);
}
