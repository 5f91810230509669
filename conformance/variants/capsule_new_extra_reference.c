/* breaks: PY-CAPSULE-NEW-1
 * profile: python
 * python: yes
 * what: dlpack_capsule_new returns a capsule with two references (it never dies, the tensor leaks) */
#define PY_SSIZE_T_CLEAN
#include <Python.h>  /* defines _GNU_SOURCE (for RTLD_NEXT) */
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_capsule_new(DLManagedTensorVersioned *t, void **out) {
  __typeof__(dlpack_capsule_new) *real = (__typeof__(dlpack_capsule_new) *)dlsym(RTLD_NEXT, "dlpack_capsule_new");
  dlpack_helpers_status st = real(t, out);
  if (st == DLPACK_HELPERS_STATUS_OK) Py_INCREF((PyObject *)*out);
  return st;
}
