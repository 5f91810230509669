/* breaks: PY-CAPSULE-NEW-VIEW-10
 * profile: python
 * python: yes
 * what: dlpack_capsule_new_view takes a second reference to the owner that nothing drops */
#define PY_SSIZE_T_CLEAN
#include <Python.h>  /* defines _GNU_SOURCE (for RTLD_NEXT) */
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_capsule_new_view(const DLTensor *t, uint64_t flags, void *owner,
                                              dlpack_helpers_export_kind kind, void **out) {
  __typeof__(dlpack_capsule_new_view) *real = (__typeof__(dlpack_capsule_new_view) *)dlsym(RTLD_NEXT, "dlpack_capsule_new_view");
  dlpack_helpers_status st = real(t, flags, owner, kind, out);
  if (st == DLPACK_HELPERS_STATUS_OK) Py_INCREF((PyObject *)owner);
  return st;
}
