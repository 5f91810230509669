/* breaks: STREAMS-LEVEL-ZERO-CONTEXT-SET-DEVICES-1
 * profile: streams
 * what: dlpack_level_zero_context_set_devices accepts more than
 *   DLPACK_HELPERS_LEVEL_ZERO_MAX_DEVICES entries (registering the first 4096) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_level_zero_context_set_devices(void *c, void *const *devs, size_t n) {
  dlpack_helpers_status (*real)(void *, void *const *, size_t) =
      (dlpack_helpers_status (*)(void *, void *const *, size_t))dlsym(RTLD_NEXT, "dlpack_level_zero_context_set_devices");
  if (n > 4096 && c && devs) n = 4096;
  return real(c, devs, n);
}
