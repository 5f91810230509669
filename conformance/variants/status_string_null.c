/* breaks: CORE-STATUS-STRING-2 CORE-STATUS-STRING-3
 * profile: core
 * what: dlpack_status_string returns NULL for a code it does not know */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

const char *dlpack_status_string(dlpack_helpers_status s) {
  const char *(*real)(dlpack_helpers_status) = (const char *(*)(dlpack_helpers_status))dlsym(RTLD_NEXT, "dlpack_status_string");
  const char *r = real(s);
  return strcmp(r, "UNKNOWN_STATUS") == 0 ? 0 : r;
}
