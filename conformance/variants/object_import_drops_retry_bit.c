/* breaks: PY-OBJECT-IMPORT-8 PY-OBJECT-IMPORT-16
 * profile: python
 * what: dlpack_object_import does not report DLPACK_HELPERS_IMPORTED_AFTER_RETRY in *out_how */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_object_import(void *obj, const dlpack_helpers_import_request *req,
                                           DLManagedTensorVersioned **out, uint32_t *how) {
  __typeof__(dlpack_object_import) *real = (__typeof__(dlpack_object_import) *)dlsym(RTLD_NEXT, "dlpack_object_import");
  dlpack_helpers_status st = real(obj, req, out, how);
  if (st == DLPACK_HELPERS_STATUS_OK && how) *how &= ~(uint32_t)DLPACK_HELPERS_IMPORTED_AFTER_RETRY;
  return st;
}
