/* breaks: STREAMS-STREAM-WAIT-12
 * profile: streams
 * what: dlpack_stream_wait drains the producer's stream on the host before queueing the wait
 *   (an implicit synchronisation) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_stream_wait(DLDevice d, void *p, const dlpack_helpers_stream *c) {
  dlpack_helpers_status (*real)(DLDevice, void *, const dlpack_helpers_stream *) =
      (dlpack_helpers_status (*)(DLDevice, void *, const dlpack_helpers_stream *))dlsym(RTLD_NEXT, "dlpack_stream_wait");
  dlpack_helpers_status (*sync)(DLDevice, void *) =
      (dlpack_helpers_status (*)(DLDevice, void *))dlsym(RTLD_NEXT, "dlpack_stream_synchronize");
  if (d.device_id >= 0 && c && c->kind >= DLPACK_HELPERS_STREAM_LEGACY_DEFAULT &&
      c->kind <= DLPACK_HELPERS_STREAM_HANDLE && (d.device_type == 2 || d.device_type == 10))
    sync(d, p);
  return real(d, p, c);
}
