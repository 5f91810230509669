/* breaks: STREAMS-STREAM-ENCODE-DECODED-7
 * profile: streams
 * what: dlpack_stream_encode_decoded clears *out_has_stream before refusing a stream */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_stream_encode_decoded(DLDevice d, const dlpack_helpers_stream *s, bool *has,
                                                   int64_t *out) {
  dlpack_helpers_status (*real)(DLDevice, const dlpack_helpers_stream *, bool *, int64_t *) =
      (dlpack_helpers_status (*)(DLDevice, const dlpack_helpers_stream *, bool *, int64_t *))dlsym(
          RTLD_NEXT, "dlpack_stream_encode_decoded");
  dlpack_helpers_status st = real(d, s, has, out);
  if (st == DLPACK_HELPERS_STATUS_INVALID_STREAM && has) *has = false;
  return st;
}
