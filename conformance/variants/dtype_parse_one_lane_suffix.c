/* breaks: CORE-DTYPE-PARSE-3 CORE-DTYPE-PARSE-6
 * profile: core
 * what: dlpack_dtype_parse accepts a one-lane suffix ("float32x1"), so two names parse to one
 *   dtype */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_dtype_parse(const char *name, DLDataType *out) {
  dlpack_helpers_status (*real)(const char *, DLDataType *) = (dlpack_helpers_status (*)(const char *, DLDataType *))dlsym(RTLD_NEXT, "dlpack_dtype_parse");
  if (name && out) {
    size_t n = strlen(name);
    if (n > 2 && n < 64 && strcmp(name + n - 2, "x1") == 0) {
      char copy[64];
      memcpy(copy, name, n - 2);
      copy[n - 2] = 0;
      return real(copy, out);
    }
  }
  return real(name, out);
}
