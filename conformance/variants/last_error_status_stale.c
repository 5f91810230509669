/* breaks: CORE-LAST-ERROR-STATUS-2
 * profile: core
 * what: dlpack_last_error_status keeps the first failure's status: a later failure's message
 * then goes with an unrelated status (issue 34: raise_status attached the wrong message) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

static __thread int32_t first;

int32_t dlpack_last_error_status(void) {
  int32_t (*real)(void) = (int32_t (*)(void))dlsym(RTLD_NEXT, "dlpack_last_error_status");
  int32_t st = real();
  if (first == 0) first = st;
  return first;
}
