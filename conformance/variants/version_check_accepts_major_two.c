/* breaks: CORE-VERSION-CHECK-2
 * profile: core
 * what: dlpack_version_check accepts DLPack major 2 as a newer minor (a major mismatch accepted) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_version_check(DLPackVersion v, dlpack_helpers_version_compat *out) {
  dlpack_helpers_status (*real)(DLPackVersion, dlpack_helpers_version_compat *) =
      (dlpack_helpers_status (*)(DLPackVersion, dlpack_helpers_version_compat *))dlsym(RTLD_NEXT, "dlpack_version_check");
  if (v.major == 2) {
    if (out) *out = 2;
    return 0;
  }
  return real(v, out);
}
