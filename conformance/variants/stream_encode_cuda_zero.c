/* breaks: STREAMS-STREAM-ENCODE-1 STREAMS-STREAM-ENCODE-4
 * profile: streams
 * what: dlpack_stream_encode sends CUDA's legacy default stream (NULL) as 0, the integer the
 *   array API forbids (the numbering of pytorch/pytorch PR #67618) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_stream_encode(DLDevice d, void *s, bool *has, int64_t *out) {
  dlpack_helpers_status (*real)(DLDevice, void *, bool *, int64_t *) =
      (dlpack_helpers_status (*)(DLDevice, void *, bool *, int64_t *))dlsym(RTLD_NEXT, "dlpack_stream_encode");
  dlpack_helpers_status st = real(d, s, has, out);
  if (st == DLPACK_HELPERS_STATUS_OK && d.device_type == 2 && s == 0 && out) *out = 0;
  return st;
}
