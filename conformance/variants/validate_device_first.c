/* breaks: CORE-DLTENSOR-VALIDATE-15
 * profile: core
 * what: dlpack_dltensor_validate checks device_id before the version, ndim, shape and dtype rules (wrong order) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(const DLTensor *, DLPackVersion, uint64_t, const dlpack_helpers_validate_options *, dlpack_helpers_layout *);
dlpack_helpers_status dlpack_dltensor_validate(const DLTensor *t, DLPackVersion v, uint64_t flags,
                                               const dlpack_helpers_validate_options *o, dlpack_helpers_layout *out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_dltensor_validate");
  if (t && t->device.device_id < 0) return DLPACK_HELPERS_STATUS_INVALID_DEVICE;
  return real(t, v, flags, o, out);
}
