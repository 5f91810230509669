/* The stub Python of stub_python.c: the object and capsule layouts it uses. */
#ifndef STUB_PYTHON_H
#define STUB_PYTHON_H
#include <stddef.h>
typedef struct stub_object { ptrdiff_t refcnt; struct stub_object *type; } stub_object;
typedef struct stub_capsule {
  stub_object head;
  void *pointer;
  const char *name;
  void *context;
  void (*destructor)(void *);
} stub_capsule;
extern stub_object PyCapsule_Type;
void *PyCapsule_New(void *ptr, const char *name, void (*destructor)(void *));
void *PyCapsule_GetPointer(void *o, const char *name);
const char *PyCapsule_GetName(void *o);
int PyCapsule_SetName(void *o, const char *name);
void *PyObject_Type(void *o);
void Py_DecRef(void *o);
void PyErr_Clear(void);
/* Free a capsule without running its destructor (the benchmarks' cleanup, the same for every variant). */
void stub_capsule_free(void *o);
#endif
