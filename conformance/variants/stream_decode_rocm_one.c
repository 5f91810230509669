/* breaks: STREAMS-STREAM-DECODE-1
 * profile: streams
 * what: dlpack_stream_decode applies CUDA's rule on ROCm: 1 is taken as a legacy default stream
 *   (ROCm has none: the array API makes 1 and 2 invalid there) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_stream_decode(DLDevice d, bool has, int64_t v, uint32_t flags, dlpack_helpers_stream *out) {
  dlpack_helpers_status (*real)(DLDevice, bool, int64_t, uint32_t, dlpack_helpers_stream *) =
      (dlpack_helpers_status (*)(DLDevice, bool, int64_t, uint32_t, dlpack_helpers_stream *))dlsym(
          RTLD_NEXT, "dlpack_stream_decode");
  if ((d.device_type == 10 || d.device_type == 11) && d.device_id >= 0 && has && v == 1 && out &&
      !(flags & ~DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM)) {
    out->kind = DLPACK_HELPERS_STREAM_LEGACY_DEFAULT;
    out->handle = (void *)1;
    return DLPACK_HELPERS_STATUS_OK;
  }
  return real(d, has, v, flags, out);
}
