/* breaks: CORE-DEVICE-CHECK-1 ABI-INT-2
 * profile: core
 * what: dlpack_device_check ignores flag bits it does not define (masks them off) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_device_check(DLDevice d, uint32_t flags) {
  dlpack_helpers_status (*real)(DLDevice, uint32_t) = (dlpack_helpers_status (*)(DLDevice, uint32_t))dlsym(RTLD_NEXT, "dlpack_device_check");
  return real(d, flags & 1u);
}
