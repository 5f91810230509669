/* breaks: CORE-GET-INFO-5 ABI-STRUCT-2
 * profile: core
 * what: dlpack_get_info fills its whole struct whatever the caller's struct_size (an old
 *   caller's smaller struct is overrun) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_get_info(dlpack_helpers_info *out) {
  dlpack_helpers_status (*real)(dlpack_helpers_info *) = (dlpack_helpers_status (*)(dlpack_helpers_info *))dlsym(RTLD_NEXT, "dlpack_get_info");
  if (!out || out->struct_size < sizeof(size_t)) return real(out);
  dlpack_helpers_info full;
  memset(&full, 0, sizeof full);
  full.struct_size = sizeof full;
  dlpack_helpers_status st = real(&full);
  if (st == 0) {
    size_t keep = out->struct_size;
    memcpy(out, &full, sizeof full);
    out->struct_size = keep < sizeof full ? keep : sizeof full;
  }
  return st;
}
