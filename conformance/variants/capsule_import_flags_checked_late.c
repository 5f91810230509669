/* breaks: PY-CAPSULE-IMPORT-3
 * profile: python
 * what: dlpack_capsule_import refuses a versioned tensor of another major version (consuming the capsule and releasing the tensor) before it checks its own flags */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include "dlpc_abi.h"

typedef dlpack_helpers_status (*fn)(void *, uint32_t, DLManagedTensorVersioned **, uint32_t *);
dlpack_helpers_status dlpack_capsule_import(void *capsule, uint32_t flags, DLManagedTensorVersioned **out,
                                            uint32_t *how) {
  fn real = (fn)dlsym(RTLD_NEXT, "dlpack_capsule_import");
  const char *(*get_name)(void *) = (const char *(*)(void *))dlsym(RTLD_DEFAULT, "PyCapsule_GetName");
  void *(*get_ptr)(void *, const char *) = (void *(*)(void *, const char *))dlsym(RTLD_DEFAULT, "PyCapsule_GetPointer");
  uint32_t known = 2u | 4u;
  if (capsule && out && (flags & ~known) && get_name && get_ptr) {
    const char *name = get_name(capsule);
    if (name && strcmp(name, "dltensor_versioned") == 0) {
      DLManagedTensorVersioned *t = (DLManagedTensorVersioned *)get_ptr(capsule, name);
      if (t && t->version.major != 1) return real(capsule, flags & known, out, how);
    }
  }
  return real(capsule, flags, out, how);
}
