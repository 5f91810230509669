/* breaks: STREAMS-EXPORT-REQUEST-RESOLVE-11
 * profile: streams
 * what: dlpack_export_request_resolve plans a copy to the host for copy=False (NEVER) instead of
 *   refusing it with COPY_FORBIDDEN */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(const dlpack_helpers_export_request *, DLDevice, DLPackVersion, uint32_t,
                                    dlpack_helpers_export_plan *);

dlpack_helpers_status dlpack_export_request_resolve(const dlpack_helpers_export_request *r, DLDevice t,
                                                    DLPackVersion v, uint32_t f, dlpack_helpers_export_plan *out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_export_request_resolve");
  dlpack_helpers_status st = real(r, t, v, f, out);
  if (st == DLPACK_HELPERS_STATUS_COPY_FORBIDDEN) {
    dlpack_helpers_export_request copy = *r;
    copy.copy = DLPACK_HELPERS_COPY_ALWAYS;
    st = real(&copy, t, v, f, out);
  }
  return st;
}
