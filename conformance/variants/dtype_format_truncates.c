/* breaks: CORE-DTYPE-FORMAT-4
 * profile: core
 * what: dlpack_dtype_format writes a truncated, NUL-terminated name into a buffer that is too
 *   small (snprintf-style) while reporting BUFFER_TOO_SMALL */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_dtype_format(DLDataType t, char *buf, size_t n, size_t *out_len) {
  dlpack_helpers_status (*real)(DLDataType, char *, size_t, size_t *) =
      (dlpack_helpers_status (*)(DLDataType, char *, size_t, size_t *))dlsym(RTLD_NEXT, "dlpack_dtype_format");
  dlpack_helpers_status st = real(t, buf, n, out_len);
  if (st == 34 && buf && n > 0) {
    char full[64];
    if (real(t, full, sizeof full, NULL) == 0) {
      memcpy(buf, full, n - 1);
      buf[n - 1] = 0;
    }
  }
  return st;
}
