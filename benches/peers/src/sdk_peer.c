/* bench_sdk_peer: a C extension's import through the dlpack_helpers SDK (issue 26).
 *
 * ndim(obj): dlpack_object_import (obj.__dlpack__) then dlpack_tensor_delete, as
 * examples/python_extension does; returns the tensor's ndim. ndim_exchange(obj): the same
 * through the type's C exchange table (DLPACK_HELPERS_IMPORT_EXCHANGE_API).
 * noop(obj): the same METH_O call with no import, the call's own cost (subtracted to get the
 * C import alone). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlpack_helpers.h>

#include <string.h>

static PyObject *fail(dlpack_helpers_status s) {
  if (s == DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET && PyErr_Occurred()) return NULL;
  PyErr_Format(PyExc_BufferError, "%s [%s]", dlpack_last_error_message(), dlpack_status_string(s));
  return NULL;
}

static PyObject *ndim(PyObject *self, PyObject *obj) {
  (void)self;
  DLManagedTensorVersioned *t = NULL;
  dlpack_helpers_status s = dlpack_object_import(obj, NULL, &t, NULL);
  if (s != DLPACK_HELPERS_STATUS_OK) return fail(s);
  long n = t->dl_tensor.ndim;
  dlpack_tensor_delete(t);
  return PyLong_FromLong(n);
}

/* ndim_exchange(obj): the same with DLPACK_HELPERS_IMPORT_EXCHANGE_API: through the type's C
 * exchange table when it has one (dlpack_helpers.Tensor, PyTorch, Paddle), else __dlpack__. */
static PyObject *ndim_exchange(PyObject *self, PyObject *obj) {
  (void)self;
  dlpack_helpers_import_request request;
  memset(&request, 0, sizeof request);
  request.flags = DLPACK_HELPERS_IMPORT_EXCHANGE_API;
  DLManagedTensorVersioned *t = NULL;
  dlpack_helpers_status s = dlpack_object_import(obj, &request, &t, NULL);
  if (s != DLPACK_HELPERS_STATUS_OK) return fail(s);
  long n = t->dl_tensor.ndim;
  dlpack_tensor_delete(t);
  return PyLong_FromLong(n);
}

static PyObject *noop(PyObject *self, PyObject *obj) {
  (void)self;
  (void)obj;
  return PyLong_FromLong(0);
}

static PyMethodDef methods[] = {
    {"ndim", ndim, METH_O, "ndim of obj, imported through dlpack_object_import and released"},
    {"ndim_exchange", ndim_exchange, METH_O, "ndim through the type's C exchange table (else __dlpack__)"},
    {"noop", noop, METH_O, "0: the call alone"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "bench_sdk_peer", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_bench_sdk_peer(void) { return PyModule_Create(&module); }
