/* breaks: CORE-VERSIONED-TO-LEGACY-5
 * profile: core
 * what: dlpack_versioned_to_legacy converts a tensor the producer stated read-only without the option */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_versioned_to_legacy(DLManagedTensorVersioned *t, uint32_t options, uint64_t *dropped, DLManagedTensor **out) {
  dlpack_helpers_status (*real)(DLManagedTensorVersioned *, uint32_t, uint64_t *, DLManagedTensor **) =
      (dlpack_helpers_status (*)(DLManagedTensorVersioned *, uint32_t, uint64_t *, DLManagedTensor **))dlsym(RTLD_NEXT, "dlpack_versioned_to_legacy");
  if (options == 0) options = DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY;
  return real(t, options, dropped, out);
}
