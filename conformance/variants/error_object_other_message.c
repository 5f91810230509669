/* breaks: ABI-ERROR-OBJECT-4 CORE-DEVICE-PARSE-WITH-ERROR-3
 * profile: core
 * what: dlpack_device_parse_with_error leaves the previous message in err (only the status is written) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(const char *, DLDevice *);
dlpack_helpers_status dlpack_device_parse_with_error(const char *name, DLDevice *out, dlpack_helpers_error *err) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_device_parse");
  dlpack_helpers_status st = real(name, out);
  if (st != DLPACK_HELPERS_STATUS_OK && err && err->struct_size >= sizeof *err) {
    err->struct_size = sizeof *err;
    err->status = st;
    err->reserved = 0;
  }
  return st;
}
