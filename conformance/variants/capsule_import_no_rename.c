/* breaks: PY-CAPSULE-IMPORT-7 OWN-CAPSULE-1
 * profile: python
 * python: yes
 * what: dlpack_capsule_import takes the tensor but leaves the capsule's unconsumed name (consumed without renaming) */
#define PY_SSIZE_T_CLEAN
#include <Python.h>  /* defines _GNU_SOURCE (for RTLD_NEXT) */
#include <dlfcn.h>
#include <string.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_capsule_import(void *capsule, uint32_t flags, DLManagedTensorVersioned **out, uint32_t *how) {
  __typeof__(dlpack_capsule_import) *real = (__typeof__(dlpack_capsule_import) *)dlsym(RTLD_NEXT, "dlpack_capsule_import");
  const char *name = NULL;
  if (capsule && PyCapsule_CheckExact((PyObject *)capsule)) name = PyCapsule_GetName((PyObject *)capsule);
  PyErr_Clear();
  dlpack_helpers_status st = real(capsule, flags, out, how);
  if (st == DLPACK_HELPERS_STATUS_OK && name &&
      (strcmp(name, "dltensor") == 0 || strcmp(name, "dltensor_versioned") == 0))
    PyCapsule_SetName((PyObject *)capsule, name);
  return st;
}
