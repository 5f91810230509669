/* breaks: STREAMS-POINTER-GET-DEVICE-2
 * profile: streams
 * what: dlpack_pointer_get_device guesses (kDLCPU, 0) for memory whose class is unknown */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_pointer_get_device(const void *p, DLDevice *out) {
  dlpack_helpers_status (*real)(const void *, DLDevice *) =
      (dlpack_helpers_status (*)(const void *, DLDevice *))dlsym(RTLD_NEXT, "dlpack_pointer_get_device");
  dlpack_helpers_status st = real(p, out);
  if (st == DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN) {
    out->device_type = 1;
    out->device_id = 0;
    return DLPACK_HELPERS_STATUS_OK;
  }
  return st;
}
