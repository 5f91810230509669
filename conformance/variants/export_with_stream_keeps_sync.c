/* breaks: STREAMS-EXPORT-REQUEST-RESOLVE-WITH-STREAM-10
 * profile: streams
 * what: dlpack_export_request_resolve_with_stream keeps the sync of the stream-less plan
 *   (SYNC_NONE for kDLOneAPI's default) instead of STREAM_WAIT for the queue object it carries */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(const dlpack_helpers_export_request *, const dlpack_helpers_stream *,
                                    DLDevice, DLPackVersion, uint32_t, dlpack_helpers_export_plan *);

dlpack_helpers_status dlpack_export_request_resolve_with_stream(const dlpack_helpers_export_request *r,
                                                                const dlpack_helpers_stream *s, DLDevice t,
                                                                DLPackVersion v, uint32_t f,
                                                                dlpack_helpers_export_plan *out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_export_request_resolve_with_stream");
  dlpack_helpers_status st = real(r, s, t, v, f, out);
  if (st == DLPACK_HELPERS_STATUS_OK && s) out->sync = DLPACK_HELPERS_SYNC_NONE;
  return st;
}
