/* breaks: STREAMS-POINTER-CLASSIFY-8
 * profile: streams
 * what: dlpack_pointer_classify answers memory no reachable runtime claims as host memory even
 *   when a runtime that could own it was unreachable */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_pointer_classify(const void *p, void *z, dlpack_helpers_pointer_info *out) {
  dlpack_helpers_status (*real)(const void *, void *, dlpack_helpers_pointer_info *) =
      (dlpack_helpers_status (*)(const void *, void *, dlpack_helpers_pointer_info *))dlsym(
          RTLD_NEXT, "dlpack_pointer_classify");
  dlpack_helpers_status st = real(p, z, out);
  if (st == DLPACK_HELPERS_STATUS_OK && out->struct_size >= sizeof *out &&
      out->memory_class == DLPACK_HELPERS_MEMORY_UNKNOWN) {
    out->memory_class = DLPACK_HELPERS_MEMORY_HOST;
    out->host_access = DLPACK_HELPERS_HOST_ACCESS_ALWAYS;
    out->device.device_type = 1;
    out->device_id_known = 1;
  }
  return st;
}
