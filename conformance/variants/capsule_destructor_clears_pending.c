/* breaks: PY-CAPSULE-DESTRUCTOR-5
 * profile: python
 * python: yes
 * what: dlpack_capsule_destructor clears an exception that was pending on entry */
#define PY_SSIZE_T_CLEAN
#include <Python.h>  /* defines _GNU_SOURCE (for RTLD_NEXT) */
#include <dlfcn.h>
#include "dlpc_abi.h"

void dlpack_capsule_destructor(void *capsule) {
  void (*real)(void *) = (void (*)(void *))dlsym(RTLD_NEXT, "dlpack_capsule_destructor");
  PyErr_Clear();
  real(capsule);
}
