/* breaks: STREAMS-DLTENSOR-HOST-ACCESS-2 STREAMS-DLTENSOR-HOST-ACCESS-5
 * profile: streams
 * what: dlpack_dltensor_host_access passes the device table's DEPENDS through for kDLExtDev
 *   instead of answering UNKNOWN */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_dltensor_host_access(const DLTensor *t, void *z, dlpack_helpers_host_access *out) {
  dlpack_helpers_status (*real)(const DLTensor *, void *, dlpack_helpers_host_access *) =
      (dlpack_helpers_status (*)(const DLTensor *, void *, dlpack_helpers_host_access *))dlsym(
          RTLD_NEXT, "dlpack_dltensor_host_access");
  dlpack_helpers_status st = real(t, z, out);
  if (st == DLPACK_HELPERS_STATUS_OK && t->device.device_type == 12) *out = DLPACK_HELPERS_HOST_ACCESS_DEPENDS;
  return st;
}
