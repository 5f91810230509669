/* breaks: PY-LEGACY-CAPSULE-CONSUME-7
 * profile: python
 * python: yes
 * what: dlpack_legacy_capsule_consume returns the pointer and leaves the capsule named "dltensor" */
#define PY_SSIZE_T_CLEAN
#include <Python.h>  /* defines _GNU_SOURCE (for RTLD_NEXT) */
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_legacy_capsule_consume(void *capsule, DLManagedTensor **out) {
  __typeof__(dlpack_legacy_capsule_consume) *real =
      (__typeof__(dlpack_legacy_capsule_consume) *)dlsym(RTLD_NEXT, "dlpack_legacy_capsule_consume");
  dlpack_helpers_status st = real(capsule, out);
  if (st == DLPACK_HELPERS_STATUS_OK) PyCapsule_SetName((PyObject *)capsule, "dltensor");
  return st;
}
