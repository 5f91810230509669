/* breaks: PY-STATUS-PYTHON-EXCEPTION-2
 * profile: python
 * what: dlpack_status_python_exception names an unknown status "Exception" instead of "RuntimeError" */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "dlpc_abi.h"

const char *dlpack_status_python_exception(dlpack_helpers_status status) {
  const char *(*real)(dlpack_helpers_status) =
      (const char *(*)(dlpack_helpers_status))dlsym(RTLD_NEXT, "dlpack_status_python_exception");
  if (status < 0 || status > 1000) return "Exception";
  return real(status);
}
