/* breaks: OWN-PY-4
 * profile: core
 * what: dlpack_tensor_delete takes the GIL (PyGILState_Ensure) around the deleter */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

void dlpack_tensor_delete(DLManagedTensorVersioned *t) {
  void (*real)(DLManagedTensorVersioned *) = (void (*)(DLManagedTensorVersioned *))dlsym(RTLD_NEXT, "dlpack_tensor_delete");
  int (*ensure)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Ensure");
  void (*release)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "PyGILState_Release");
  int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
  if (ensure && release && init && init()) { int g = ensure(); real(t); release(g); return; }
  real(t);
}
