/* A stub of the few CPython C API functions the capsule helpers call (benchmarks only): the
 * library resolves the Python C API with dlsym(RTLD_DEFAULT, ...) from the host process, so a
 * program linked with -rdynamic that defines these symbols is "a process with Python" to it.
 * Capsules are plain heap objects with a reference count; every function the benchmarked
 * paths do not call aborts, so a path that starts calling one shows up at once. Not a test
 * double of Python's behaviour beyond what the success paths need (no GIL, no exceptions). */
#include "stub_python.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

stub_object PyCapsule_Type = {1, NULL};
/* Data symbols the library resolves at start (it requires every one of them to accept the
 * process as having Python); the benchmarked paths never read them. */
stub_object PyLong_Type = {1, NULL}, PyBool_Type = {1, NULL}, _Py_NoneStruct = {1, NULL};
void *PyExc_BufferError, *PyExc_TypeError, *PyExc_AttributeError, *PyExc_ValueError,
    *PyExc_Exception;
static int thread_state;

int Py_IsInitialized(void) { return 1; }
int PyGILState_Ensure(void) { return 0; }
void PyGILState_Release(int s) { (void)s; }
int PyGILState_Check(void) { return 1; }
void *PyGILState_GetThisThreadState(void) { return &thread_state; }
void Py_IncRef(void *o) { if (o) ((stub_object *)o)->refcnt++; }
void Py_DecRef(void *o) {
  stub_object *p = (stub_object *)o;
  if (!p || --p->refcnt > 0 || p == &PyCapsule_Type) return;
  stub_capsule *c = (stub_capsule *)p;
  if (c->destructor) c->destructor(c);
  free(c);
}
void *PyCapsule_New(void *ptr, const char *name, void (*destructor)(void *)) {
  stub_capsule *c = (stub_capsule *)malloc(sizeof *c);
  if (!c) return NULL;
  c->head.refcnt = 1;
  c->head.type = &PyCapsule_Type;
  c->pointer = ptr;
  c->name = name;
  c->context = NULL;
  c->destructor = destructor;
  return c;
}
void *PyCapsule_GetPointer(void *o, const char *name) {
  stub_capsule *c = (stub_capsule *)o;
  if (!c->name || !name || strcmp(c->name, name) != 0) abort(); /* the helpers check first */
  return c->pointer;
}
const char *PyCapsule_GetName(void *o) { return ((stub_capsule *)o)->name; }
int PyCapsule_SetName(void *o, const char *name) { ((stub_capsule *)o)->name = name; return 0; }
void *PyCapsule_GetContext(void *o) { return ((stub_capsule *)o)->context; }
int PyCapsule_SetContext(void *o, void *ctx) { ((stub_capsule *)o)->context = ctx; return 0; }
void *PyObject_Type(void *o) {
  stub_object *t = ((stub_object *)o)->type;
  t->refcnt++;
  return t;
}
void PyErr_Clear(void) {}
void stub_capsule_free(void *o) { free(o); }
void *PyErr_Occurred(void) { return NULL; }

/* Not on the benchmarked paths. */
#define UNUSED(name) void name(void) { fprintf(stderr, "stub Python: %s called\n", #name); abort(); }
UNUSED(PyObject_GetAttrString)
UNUSED(PyMapping_HasKeyString)
UNUSED(PyObject_Call)
UNUSED(PyObject_Str)
UNUSED(PyUnicode_AsUTF8AndSize)
UNUSED(PyTuple_New)
UNUSED(PyTuple_SetItem)
UNUSED(PyDict_New)
UNUSED(PyDict_SetItemString)
UNUSED(PySequence_Check)
UNUSED(PySequence_Size)
UNUSED(PySequence_GetItem)
UNUSED(PyLong_FromLong)
UNUSED(PyLong_AsLongLong)
UNUSED(PyLong_AsVoidPtr)
UNUSED(PyBool_FromLong)
UNUSED(PyErr_Fetch)
UNUSED(PyErr_Restore)
UNUSED(PyErr_NormalizeException)
UNUSED(PyErr_GivenExceptionMatches)
UNUSED(PyErr_SetString)
UNUSED(PyErr_WriteUnraisable)
UNUSED(PyObject_GetAttr)
UNUSED(PyUnicode_InternFromString)
UNUSED(PyCFunction_NewEx)
UNUSED(PyLong_FromVoidPtr)
UNUSED(PyLong_FromUnsignedLong)
UNUSED(Py_AtExit)
UNUSED(PyInterpreterState_Get)
UNUSED(PyInterpreterState_Main)
UNUSED(PyLong_AsUnsignedLongLong)
UNUSED(PyObject_IsInstance)
UNUSED(PyNumber_Index)
UNUSED(PyObject_Vectorcall)
UNUSED(PyObject_VectorcallMethod)
