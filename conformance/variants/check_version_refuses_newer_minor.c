/* breaks: VER-MINOR-1 CORE-TENSOR-CHECK-VERSION-2
 * profile: core
 * what: dlpack_tensor_check_version refuses a tensor of DLPack 1.4 or newer as unsupported
 *   (a minor the implementation does not know treated as incompatible) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_tensor_check_version(const DLManagedTensorVersioned *t, dlpack_helpers_version_compat *out) {
  dlpack_helpers_status (*real)(const DLManagedTensorVersioned *, dlpack_helpers_version_compat *) =
      (dlpack_helpers_status (*)(const DLManagedTensorVersioned *, dlpack_helpers_version_compat *))dlsym(RTLD_NEXT, "dlpack_tensor_check_version");
  if (t && t->version.major == 1 && t->version.minor > 3) {
    DLPackVersion bad = {99, t->version.minor};
    dlpack_helpers_status (*vc)(DLPackVersion, dlpack_helpers_version_compat *) =
        (dlpack_helpers_status (*)(DLPackVersion, dlpack_helpers_version_compat *))dlsym(RTLD_NEXT, "dlpack_version_check");
    return vc(bad, NULL); /* UNSUPPORTED_VERSION with a message */
  }
  return real(t, out);
}
