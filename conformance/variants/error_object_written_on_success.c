/* breaks: ABI-ERROR-OBJECT-5 CORE-DTYPE-PARSE-WITH-ERROR-3
 * profile: core
 * what: dlpack_dtype_parse_with_error writes err->status = OK when the parse succeeds */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(const char *, DLDataType *, dlpack_helpers_error *);
dlpack_helpers_status dlpack_dtype_parse_with_error(const char *name, DLDataType *out, dlpack_helpers_error *err) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_dtype_parse_with_error");
  dlpack_helpers_status st = real(name, out, err);
  if (st == DLPACK_HELPERS_STATUS_OK && err && err->struct_size >= sizeof *err) err->status = st;
  return st;
}
