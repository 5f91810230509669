/* Compiles dlpack_helpers.h alone, or together with an official dlpack/dlpack.h included first
 * (INCLUDE_OFFICIAL_FIRST) or afterwards (INCLUDE_OFFICIAL_AFTER), in C and C++.
 * Built by scripts/test.d/25-abi-oracle.sh with -Wall -Wextra -Wpedantic -Werror. */
#if defined(INCLUDE_OFFICIAL_FIRST)
#include <dlpack/dlpack.h>
#include "dlpack_helpers.h"
#elif defined(INCLUDE_OFFICIAL_AFTER)
#include "dlpack_helpers.h"
#include <dlpack/dlpack.h>
#else
#include "dlpack_helpers.h"
#endif

#include <stdio.h>

static void release(struct DLManagedTensorVersioned *self) { (void)self; }

int main(void) {
  struct DLManagedTensorVersioned t;
  DLDevice dev;
  dlpack_helpers_version_compat compat = -1;
  t.version.major = DLPACK_MAJOR_VERSION;
  t.version.minor = DLPACK_MINOR_VERSION;
  t.manager_ctx = NULL;
  t.deleter = release;
  t.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  t.dl_tensor.data = NULL;
  t.dl_tensor.device.device_type = kDLCUDAHost;
  t.dl_tensor.device.device_id = 0;
  t.dl_tensor.ndim = 0;
  t.dl_tensor.dtype.code = (uint8_t)kDLFloat;
  t.dl_tensor.dtype.bits = 32;
  t.dl_tensor.dtype.lanes = 1;
  t.dl_tensor.shape = NULL;
  t.dl_tensor.strides = NULL;
  t.dl_tensor.byte_offset = 0;
  if (dlpack_tensor_check_version(&t, &compat) != DLPACK_HELPERS_STATUS_OK) return 1;
  if (dlpack_get_device(&t, &dev) != DLPACK_HELPERS_STATUS_OK) return 2;
  if (!dlpack_is_cpu_accessible(dev)) return 3;
  dlpack_tensor_delete(&t);
  printf("DLPack %d.%d headers, compat %d\n", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION, (int)compat);
  return 0;
}
