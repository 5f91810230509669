/* breaks: CORE-GET-DEVICE-6 ABI-OUT-1
 * profile: core
 * what: dlpack_get_device copies the device out before checking its id, so INVALID_DEVICE
 *   leaves *out_device written */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_get_device(const DLManagedTensorVersioned *t, DLDevice *out) {
  dlpack_helpers_status (*real)(const DLManagedTensorVersioned *, DLDevice *) =
      (dlpack_helpers_status (*)(const DLManagedTensorVersioned *, DLDevice *))dlsym(RTLD_NEXT, "dlpack_get_device");
  dlpack_helpers_status st = real(t, out);
  if (st == 48 && out) *out = t->dl_tensor.device;
  return st;
}
