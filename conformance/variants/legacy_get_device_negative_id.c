/* breaks: CORE-LEGACY-GET-DEVICE-2
 * profile: core
 * what: dlpack_legacy_get_device passes a negative device_id through (no INVALID_DEVICE) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_legacy_get_device(const DLManagedTensor *t, DLDevice *out) {
  dlpack_helpers_status (*real)(const DLManagedTensor *, DLDevice *) =
      (dlpack_helpers_status (*)(const DLManagedTensor *, DLDevice *))dlsym(RTLD_NEXT, "dlpack_legacy_get_device");
  if (t && out && t->dl_tensor.device.device_id < 0) {
    *out = t->dl_tensor.device;
    return 0;
  }
  return real(t, out);
}
