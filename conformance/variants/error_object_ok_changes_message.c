/* breaks: CORE-LAST-ERROR-MESSAGE-4 ABI-ERROR-OBJECT-1
 * profile: core
 * what: dlpack_dtype_parse_with_error, on success, leaves the message of an internal failing probe as the thread's last-error message */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(const char *, DLDataType *, dlpack_helpers_error *);
typedef dlpack_helpers_status (*vc)(DLPackVersion, dlpack_helpers_version_compat *);
dlpack_helpers_status dlpack_dtype_parse_with_error(const char *name, DLDataType *out, dlpack_helpers_error *err) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_dtype_parse_with_error");
  dlpack_helpers_status st = real(name, out, err);
  if (st == DLPACK_HELPERS_STATUS_OK) {
    vc check = (vc)dlsym(RTLD_NEXT, "dlpack_version_check");
    DLPackVersion probe = {2, 0};
    check(probe, 0); /* a probe that fails and sets the thread's message */
  }
  return st;
}
