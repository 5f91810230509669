/* breaks: CORE-DLTENSOR-FITS-ALLOCATION-5
 * profile: core
 * what: dlpack_dltensor_fits_allocation lets a tensor end one byte past the allocation */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_dltensor_fits_allocation(const DLTensor *t, uint64_t flags, const void *base,
                                                      uint64_t size, bool *out) {
  dlpack_helpers_status (*real)(const DLTensor *, uint64_t, const void *, uint64_t, bool *) =
      (dlpack_helpers_status (*)(const DLTensor *, uint64_t, const void *, uint64_t, bool *))dlsym(RTLD_NEXT, "dlpack_dltensor_fits_allocation");
  if (size + 1 != 0 && (uintptr_t)base + size + 1 > (uintptr_t)base) {
    bool f;
    if (real(t, flags, base, size + 1, &f) == DLPACK_HELPERS_STATUS_OK && out) { *out = f; return DLPACK_HELPERS_STATUS_OK; }
  }
  return real(t, flags, base, size, out);
}
