/* breaks: CORE-LAST-ERROR-MESSAGE-1 CORE-LAST-ERROR-MESSAGE-2
 * profile: core
 * what: dlpack_last_error_message returns NULL before the thread's first failure (a NULL
 *   last-error message) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

const char *dlpack_last_error_message(void) {
  const char *(*real)(void) = (const char *(*)(void))dlsym(RTLD_NEXT, "dlpack_last_error_message");
  const char *m = real();
  return (m && !*m) ? 0 : m;
}
