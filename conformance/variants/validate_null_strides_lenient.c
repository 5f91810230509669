/* breaks: CORE-DLTENSOR-VALIDATE-12
 * profile: core
 * what: dlpack_dltensor_validate accepts NULL strides from a DLPack 1.2+ producer without LENIENT_NULL_STRIDES */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(const DLTensor *, DLPackVersion, uint64_t, const dlpack_helpers_validate_options *, dlpack_helpers_layout *);
dlpack_helpers_status dlpack_dltensor_validate(const DLTensor *t, DLPackVersion v, uint64_t flags,
                                               const dlpack_helpers_validate_options *o, dlpack_helpers_layout *out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_dltensor_validate");
  dlpack_helpers_status st = real(t, v, flags, o, out);
  if (st != DLPACK_HELPERS_STATUS_NULL_STRIDES) return st;
  dlpack_helpers_validate_options mine;
  memset(&mine, 0, sizeof mine);
  if (o) memcpy(&mine, o, o->struct_size < sizeof mine ? o->struct_size : sizeof mine);
  mine.struct_size = sizeof mine;
  mine.flags |= DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES;
  return real(t, v, flags, &mine, out);
}
