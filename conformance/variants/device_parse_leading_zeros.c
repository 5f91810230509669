/* breaks: CORE-DEVICE-PARSE-3
 * profile: core
 * what: dlpack_device_parse accepts an id with leading zeros ("cuda:01") */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_device_parse(const char *name, DLDevice *out) {
  dlpack_helpers_status (*real)(const char *, DLDevice *) = (dlpack_helpers_status (*)(const char *, DLDevice *))dlsym(RTLD_NEXT, "dlpack_device_parse");
  if (name && out) {
    const char *colon = strchr(name, ':');
    size_t n = strlen(name);
    if (colon && colon[1] == '0' && colon[2] >= '0' && colon[2] <= '9' && n < 64) {
      char copy[64];
      size_t head = (size_t)(colon - name) + 1;
      const char *digits = colon + 1;
      while (digits[0] == '0' && digits[1]) ++digits;
      memcpy(copy, name, head);
      strcpy(copy + head, digits);
      return real(copy, out);
    }
  }
  return real(name, out);
}
