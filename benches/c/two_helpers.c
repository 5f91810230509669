/* A static consumer that uses two helpers (dlpack_get_device, dlpack_tensor_delete): linked by
 * benches/sizes.py with and without --gc-sections to see how much of the library it carries.
 * Exits 0 when both helpers answered right. */
#include "dlpack_helpers.h"

#include <stdio.h>
#include <string.h>

static int released = 0;
static void count(DLManagedTensorVersioned *self) {
  (void)self;
  ++released;
}

int main(void) {
  DLManagedTensorVersioned t;
  memset(&t, 0, sizeof t);
  t.version.major = 1;
  t.version.minor = 3;
  t.deleter = count;
  t.dl_tensor.device.device_type = kDLCUDAHost;
  DLDevice d;
  int ok = dlpack_get_device(&t, &d) == DLPACK_HELPERS_STATUS_OK && d.device_type == kDLCUDAHost;
  dlpack_tensor_delete(&t);
  ok = ok && released == 1;
  printf("two_helpers: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
