/* dlpack_sum_example._sum: a C extension module built against the dlpack_helpers wheel's SDK.
 *
 * sum(obj) accepts any object implementing DLPack (NumPy, PyArrow, JAX, dlpack_helpers.Tensor,
 * ...) and returns the sum of its float32 or float64 elements as a Python float. The work is
 * done by the C library: dlpack_object_import calls obj.__dlpack__ with the array API's keywords
 * (retrying older producers, consuming the capsule, checking the version), and
 * dlpack_tensor_validate checks every DLPack rule, that host code may read the device, and that
 * every byte the view touches lies inside the address space. The module then walks the elements
 * with strides counted in elements from the first element's address (data + byte_offset), and
 * releases the tensor exactly once, on every path.
 *
 * Errors: the producer's own exception propagates unchanged (same object, type and traceback)
 * when the library supports DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR; otherwise, and for the
 * library's own refusals, the exception class the library names for the status
 * (dlpack_status_python_exception: BufferError, TypeError, ValueError, ...) with its message. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlpack_helpers.h>

#include <stdint.h>
#include <string.h>

/* The Python exception for a failed status, with the library's message. Returns NULL. */
static PyObject *raise_status(dlpack_helpers_status status) {
#ifdef DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET
  if (status == DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET && PyErr_Occurred()) {
    return NULL; /* the producer's exception, left set by the library: pass it on unchanged */
  }
#endif
  const char *name = dlpack_status_python_exception(status);
  PyObject *type = PyExc_RuntimeError;
  if (strcmp(name, "BufferError") == 0) type = PyExc_BufferError;
  else if (strcmp(name, "TypeError") == 0) type = PyExc_TypeError;
  else if (strcmp(name, "ValueError") == 0) type = PyExc_ValueError;
  else if (strcmp(name, "AttributeError") == 0) type = PyExc_AttributeError;
  else if (strcmp(name, "MemoryError") == 0) type = PyExc_MemoryError;
  PyErr_Format(type, "%s [%s]", dlpack_last_error_message(), dlpack_status_string(status));
  return NULL;
}

/* A new reference to the imported tensor of obj, or NULL with an exception set. */
static DLManagedTensorVersioned *import(PyObject *obj, uint32_t *how) {
  dlpack_helpers_import_request request;
  memset(&request, 0, sizeof request); /* max_version 1.3, nothing else passed */
#ifdef DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR
  request.flags |= DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR;
#endif
  DLManagedTensorVersioned *tensor = NULL;
  dlpack_helpers_status s = dlpack_object_import(obj, &request, &tensor, how);
  if (s != DLPACK_HELPERS_STATUS_OK) {
    raise_status(s);
    return NULL;
  }
  return tensor;
}

/* Release the tensor (exactly once, on every path). A producer's deleter may run Python code
 * (NumPy's drops a reference under the GIL), which must not see our pending exception: keep it
 * aside meanwhile. */
static void release(DLManagedTensorVersioned *tensor) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  dlpack_tensor_delete(tensor);
  PyErr_Restore(type, value, traceback);
}

static PyObject *sum(PyObject *self, PyObject *obj) {
  (void)self;
  uint32_t how = 0;
  DLManagedTensorVersioned *tensor = import(obj, &how);
  if (tensor == NULL) return NULL;

  PyObject *result = NULL;
  dlpack_helpers_validate_options options;
  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  /* Host-readable memory, one value per element; the byte range is always checked. */
  options.flags = DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE | DLPACK_HELPERS_VALIDATE_REJECT_VECTOR;
  dlpack_helpers_layout layout;
  dlpack_helpers_status s = dlpack_tensor_validate(tensor, &options, &layout);
  if (s != DLPACK_HELPERS_STATUS_OK) {
    raise_status(s);
    goto done;
  }
  const DLTensor *t = &tensor->dl_tensor;
  if (t->dtype.code != kDLFloat || (t->dtype.bits != 32 && t->dtype.bits != 64)) {
    char name[DLPACK_HELPERS_NAME_MAX];
    size_t len = 0;
    if (dlpack_dtype_format(t->dtype, name, sizeof name, &len) != DLPACK_HELPERS_STATUS_OK) strcpy(name, "?");
    PyErr_Format(PyExc_TypeError, "sum() takes a float32 or float64 tensor, not %s", name);
    goto done;
  }
  double total = 0.0;
  if (layout.numel > 0) {
    void *first = NULL; /* data + byte_offset, from the library (refuses opaque handles) */
    s = dlpack_dltensor_data_address(t, &first);
    if (s != DLPACK_HELPERS_STATUS_OK) {
      raise_status(s);
      goto done;
    }
    int32_t ndim = t->ndim;
    int64_t index[DLPACK_HELPERS_MAX_NDIM] = {0};
    int64_t compact[DLPACK_HELPERS_MAX_NDIM];
    const int64_t *strides = t->strides;
    if (ndim > 0 && strides == NULL) { /* allowed before DLPack 1.2: compact row-major */
      s = dlpack_compact_strides(ndim, t->shape, false, compact);
      if (s != DLPACK_HELPERS_STATUS_OK) {
        raise_status(s);
        goto done;
      }
      strides = compact;
    }
    /* Validation proved every element offset fits in int64_t and in the address space. */
    for (int64_t k = 0; k < layout.numel; k++) {
      int64_t offset = 0; /* in elements */
      for (int32_t d = 0; d < ndim; d++) offset += index[d] * strides[d];
      total += t->dtype.bits == 32 ? (double)((const float *)first)[offset] : ((const double *)first)[offset];
      for (int32_t d = ndim - 1; d >= 0; d--) { /* row-major odometer */
        if (++index[d] < t->shape[d]) break;
        index[d] = 0;
      }
    }
  }
  result = PyFloat_FromDouble(total);
done:
  release(tensor);
  return result;
}

static PyObject *describe(PyObject *self, PyObject *obj) {
  (void)self;
  uint32_t how = 0;
  DLManagedTensorVersioned *tensor = import(obj, &how);
  if (tensor == NULL) return NULL;
  PyObject *result = NULL;
  char dtype[DLPACK_HELPERS_NAME_MAX], device[DLPACK_HELPERS_NAME_MAX];
  size_t len = 0;
  dlpack_helpers_writability writability = 0;
  dlpack_helpers_status s = dlpack_dtype_format(tensor->dl_tensor.dtype, dtype, sizeof dtype, &len);
  if (s == DLPACK_HELPERS_STATUS_OK) s = dlpack_device_format(tensor->dl_tensor.device, device, sizeof device, &len);
  if (s == DLPACK_HELPERS_STATUS_OK) s = dlpack_tensor_writability(tensor, &writability);
  if (s != DLPACK_HELPERS_STATUS_OK) {
    raise_status(s);
    goto done;
  }
  result = Py_BuildValue("{s:s,s:s,s:i,s:O,s:O,s:(II)}", "dtype", dtype, "device", device, "ndim",
                         (int)tensor->dl_tensor.ndim, "legacy",
                         (how & DLPACK_HELPERS_IMPORTED_LEGACY) ? Py_True : Py_False, "writable",
                         writability == DLPACK_HELPERS_WRITABILITY_WRITABLE ? Py_True : Py_False, "version",
                         (unsigned)tensor->version.major, (unsigned)tensor->version.minor);
done:
  release(tensor);
  return result;
}

static PyMethodDef methods[] = {
    {"sum", sum, METH_O,
     "sum(obj) -> float: the sum of a float32/float64 DLPack tensor on a host-readable device."},
    {"describe", describe, METH_O,
     "describe(obj) -> dict: dtype and device names, ndim, legacy, writable, version of the import."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sum", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__sum(void) { return PyModule_Create(&module); }
