/* breaks: CORE-GET-INFO-3 ABI-STRUCT-3
 * profile: core
 * what: dlpack_get_info accepts a struct_size below sizeof(size_t) and answers OK with nothing
 *   filled (no refusal, no message) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_get_info(dlpack_helpers_info *out) {
  dlpack_helpers_status (*real)(dlpack_helpers_info *) = (dlpack_helpers_status (*)(dlpack_helpers_info *))dlsym(RTLD_NEXT, "dlpack_get_info");
  if (out && out->struct_size < sizeof(size_t)) return 0;
  return real(out);
}
