/* breaks: OWN-FORK-1
 * profile: core
 * what: dlpack_dltensor_validate misbehaves in a child process created by fork (state keyed to the parent's pid) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>
#include "dlpc_abi.h"

static pid_t owner;
typedef dlpack_helpers_status (*fn)(const DLTensor *, DLPackVersion, uint64_t, const dlpack_helpers_validate_options *, dlpack_helpers_layout *);
dlpack_helpers_status dlpack_dltensor_validate(const DLTensor *t, DLPackVersion v, uint64_t flags,
                                               const dlpack_helpers_validate_options *o, dlpack_helpers_layout *out) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_dltensor_validate");
  if (!owner) owner = getpid();
  if (getpid() != owner) return DLPACK_HELPERS_STATUS_PANIC;
  return real(t, v, flags, o, out);
}
