/* breaks: ABI-STRUCT-1
 * profile: core
 * what: dlpack_tensor_validate reads the whole options struct whatever its struct_size (an old
 *   caller's smaller struct is read past its end, and its garbage obeyed) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_tensor_validate(const DLManagedTensorVersioned *t, const dlpack_helpers_validate_options *o,
                                             dlpack_helpers_layout *out) {
  dlpack_helpers_status (*real)(const DLManagedTensorVersioned *, const dlpack_helpers_validate_options *, dlpack_helpers_layout *) =
      (dlpack_helpers_status (*)(const DLManagedTensorVersioned *, const dlpack_helpers_validate_options *, dlpack_helpers_layout *))dlsym(RTLD_NEXT, "dlpack_tensor_validate");
  if (o && o->struct_size >= sizeof(size_t) && o->struct_size < sizeof *o) {
    dlpack_helpers_validate_options full;
    memcpy(&full, o, sizeof full);
    full.struct_size = sizeof full;
    return real(t, &full, out);
  }
  return real(t, o, out);
}
