/* breaks: ABI-BOOL-1
 * profile: core
 * what: dlpack_device_is_pointer_addressed returns a "true" byte of 2 (a C bool that is not 0
 *   or 1, as an int-to-bool cast done by hand would) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

bool dlpack_device_is_pointer_addressed(DLDevice d) {
  bool (*real)(DLDevice) = (bool (*)(DLDevice))dlsym(RTLD_NEXT, "dlpack_device_is_pointer_addressed");
  union { bool b; unsigned char c; } u;
  u.c = real(d) ? 2 : 0;
  return u.b;
}
