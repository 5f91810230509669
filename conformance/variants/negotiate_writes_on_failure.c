/* breaks: CORE-VERSION-NEGOTIATE-8 ABI-OUT-1
 * profile: core
 * what: dlpack_version_negotiate clears *out_choice before deciding, so a refusal leaves it
 *   written (an out-parameter written on failure) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_version_negotiate(DLPackVersion p, uint32_t flags, const DLPackVersion *max,
                                               dlpack_helpers_version_choice *out) {
  dlpack_helpers_status (*real)(DLPackVersion, uint32_t, const DLPackVersion *, dlpack_helpers_version_choice *) =
      (dlpack_helpers_status (*)(DLPackVersion, uint32_t, const DLPackVersion *, dlpack_helpers_version_choice *))dlsym(RTLD_NEXT, "dlpack_version_negotiate");
  if (out) memset(out, 0, sizeof *out);
  return real(p, flags, max, out);
}
