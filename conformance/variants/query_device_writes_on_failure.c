/* breaks: PY-OBJECT-QUERY-DEVICE-11
 * profile: python
 * what: dlpack_object_query_device writes {0, 0} to *out_device when it fails */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_object_query_device(void *obj, uint32_t flags, DLDevice *out) {
  __typeof__(dlpack_object_query_device) *real =
      (__typeof__(dlpack_object_query_device) *)dlsym(RTLD_NEXT, "dlpack_object_query_device");
  dlpack_helpers_status st = real(obj, flags, out);
  if (st != DLPACK_HELPERS_STATUS_OK && out) { out->device_type = (DLDeviceType)0; out->device_id = 0; }
  return st;
}
