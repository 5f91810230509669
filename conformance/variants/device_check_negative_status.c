/* breaks: ABI-STATUS-1
 * profile: core
 * what: dlpack_device_check reports a refusal as -1 (an errno-style negative status) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_device_check(DLDevice d, uint32_t flags) {
  dlpack_helpers_status (*real)(DLDevice, uint32_t) = (dlpack_helpers_status (*)(DLDevice, uint32_t))dlsym(RTLD_NEXT, "dlpack_device_check");
  dlpack_helpers_status st = real(d, flags);
  return st == 0 ? 0 : -1;
}
