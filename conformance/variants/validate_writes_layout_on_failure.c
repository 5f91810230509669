/* breaks: CORE-DLTENSOR-VALIDATE-24
 * profile: core
 * what: dlpack_dltensor_validate zeroes *out_layout when a rule fails */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(const DLTensor *, DLPackVersion, uint64_t, const dlpack_helpers_validate_options *, dlpack_helpers_layout *);
dlpack_helpers_status dlpack_dltensor_validate(const DLTensor *t, DLPackVersion v, uint64_t flags,
                                               const dlpack_helpers_validate_options *o, dlpack_helpers_layout *out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_dltensor_validate");
  dlpack_helpers_status st = real(t, v, flags, o, out);
  if (st != DLPACK_HELPERS_STATUS_OK && out) memset(out, 0, sizeof *out);
  return st;
}
