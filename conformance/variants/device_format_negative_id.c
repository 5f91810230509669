/* breaks: CORE-DEVICE-FORMAT-2
 * profile: core
 * what: dlpack_device_format names a device with a negative id ("cuda:-1") instead of refusing */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_device_format(DLDevice d, char *buf, size_t n, size_t *out_len) {
  dlpack_helpers_status (*real)(DLDevice, char *, size_t, size_t *) =
      (dlpack_helpers_status (*)(DLDevice, char *, size_t, size_t *))dlsym(RTLD_NEXT, "dlpack_device_format");
  if (buf && d.device_id < 0) {
    DLDevice pos = d;
    pos.device_id = 0;
    char name[64];
    if (real(pos, name, sizeof name, NULL) != 0) return real(d, buf, n, out_len);
    char *colon = strchr(name, ':');
    if (colon) *colon = 0;
    int len = snprintf(NULL, 0, "%s:%d", name, (int)d.device_id);
    if (out_len) *out_len = (size_t)len;
    if ((size_t)len + 1 > n) return 34;
    snprintf(buf, n, "%s:%d", name, (int)d.device_id);
    return 0;
  }
  return real(d, buf, n, out_len);
}
