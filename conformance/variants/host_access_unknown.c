/* breaks: CORE-DEVICE-HOST-ACCESS-1 CORE-DEVICE-HOST-ACCESS-2 VER-UNKNOWN-3
 * profile: core
 * what: dlpack_device_host_access answers UNKNOWN (3) for device types DLPack 1.3 does not
 *   assign, instead of DEPENDS */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_host_access dlpack_device_host_access(DLDevice d) {
  dlpack_helpers_host_access (*real)(DLDevice) = (dlpack_helpers_host_access (*)(DLDevice))dlsym(RTLD_NEXT, "dlpack_device_host_access");
  int32_t t = (int32_t)d.device_type;
  if (t <= 0 || t == 5 || t == 6 || t >= 19) return 3;
  return real(d);
}
