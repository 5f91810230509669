/* breaks: CORE-IS-CPU-ACCESSIBLE-1 CORE-IS-CPU-ACCESSIBLE-3
 * profile: core
 * what: dlpack_is_cpu_accessible calls kDLCUDA memory CPU-accessible (as unified addressing
 *   might suggest) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

bool dlpack_is_cpu_accessible(DLDevice d) {
  bool (*real)(DLDevice) = (bool (*)(DLDevice))dlsym(RTLD_NEXT, "dlpack_is_cpu_accessible");
  return d.device_type == 2 ? true : real(d);
}
