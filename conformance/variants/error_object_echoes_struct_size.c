/* breaks: ABI-ERROR-OBJECT-4 CORE-DTYPE-PARSE-WITH-ERROR-3
 * profile: core
 * what: dlpack_dtype_parse_with_error leaves the caller's larger err->struct_size in the object instead of its own sizeof (a caller built against a later, larger dlpack_helpers_error then believes fields the implementation never wrote) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(const char *, DLDataType *, dlpack_helpers_error *);
dlpack_helpers_status dlpack_dtype_parse_with_error(const char *name, DLDataType *out, dlpack_helpers_error *err) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_dtype_parse_with_error");
  size_t declared = err ? err->struct_size : 0;
  dlpack_helpers_status st = real(name, out, err);
  if (st != DLPACK_HELPERS_STATUS_OK && err && declared > sizeof *err) err->struct_size = declared;
  return st;
}
