/* breaks: CORE-DLTENSOR-DATA-ADDRESS-3
 * profile: core
 * what: dlpack_dltensor_data_address returns data + byte_offset wrapped modulo 2^64 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_dltensor_data_address(const DLTensor *t, void **out) {
  dlpack_helpers_status (*real)(const DLTensor *, void **) =
      (dlpack_helpers_status (*)(const DLTensor *, void **))dlsym(RTLD_NEXT, "dlpack_dltensor_data_address");
  dlpack_helpers_status st = real(t, out);
  if (st == DLPACK_HELPERS_STATUS_OVERFLOW) { *out = (void *)((uintptr_t)t->data + (uintptr_t)t->byte_offset); return DLPACK_HELPERS_STATUS_OK; }
  return st;
}
