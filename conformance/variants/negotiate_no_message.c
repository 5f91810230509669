/* breaks: ABI-ERROR-1
 * profile: core
 * what: dlpack_version_negotiate refuses unknown producer flags without setting a last-error
 *   message (the previous failure's message stays) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_version_negotiate(DLPackVersion p, uint32_t flags, const DLPackVersion *max,
                                               dlpack_helpers_version_choice *out) {
  dlpack_helpers_status (*real)(DLPackVersion, uint32_t, const DLPackVersion *, dlpack_helpers_version_choice *) =
      (dlpack_helpers_status (*)(DLPackVersion, uint32_t, const DLPackVersion *, dlpack_helpers_version_choice *))dlsym(RTLD_NEXT, "dlpack_version_negotiate");
  if (out && (flags & ~3u)) return 2; /* INVALID_ARGUMENT, no message */
  return real(p, flags, max, out);
}
