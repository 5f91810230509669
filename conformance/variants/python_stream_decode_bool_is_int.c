/* breaks: PY-PYTHON-STREAM-DECODE-6
 * profile: python
 * python: yes
 * what: dlpack_python_stream_decode decodes True and False as the integers 1 and 0 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>  /* defines _GNU_SOURCE (for RTLD_NEXT) */
#include <dlfcn.h>
#include "dlpc_abi.h"

dlpack_helpers_status dlpack_python_stream_decode(void *obj, DLDevice device, uint32_t flags, dlpack_helpers_stream *out) {
  __typeof__(dlpack_python_stream_decode) *real =
      (__typeof__(dlpack_python_stream_decode) *)dlsym(RTLD_NEXT, "dlpack_python_stream_decode");
  __typeof__(dlpack_stream_decode) *dec = (__typeof__(dlpack_stream_decode) *)dlsym(RTLD_NEXT, "dlpack_stream_decode");
  if (obj && out && flags == 0 && device.device_id >= 0 && PyBool_Check((PyObject *)obj))
    return dec(device, true, obj == Py_True ? 1 : 0, flags, out);
  return real(obj, device, flags, out);
}
