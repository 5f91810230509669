/* A C consumer of real NumPy tensors, using dlpack-helpers for every DLPack rule.
 *
 * The program embeds Python only to obtain tensors from NumPy (a real producer): it calls
 * `__dlpack__()` (legacy capsule) and `__dlpack__(max_version=(1, 3))` (versioned capsule), takes
 * ownership of each managed tensor by renaming the capsule (the DLPack Python rule), and from then
 * on is plain C: version check, device, CPU accessibility, reading the elements through the
 * DLTensor (shape, strides in elements, byte_offset in bytes), and releasing the tensor exactly
 * once. After each release it checks that NumPy's owner reference was dropped.
 *
 * Build and run: scripts/demo (it compiles this file against the shared library and libpython). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdio.h>
#include <string.h>

#include "dlpack_helpers.h"

static int failures = 0;
#define EXPECT(cond, what)                                 \
  do {                                                     \
    if (!(cond)) {                                         \
      ++failures;                                          \
      printf("    !! unexpected: %s\n", what);             \
    }                                                      \
  } while (0)

/* Sum a float64 tensor through its DLTensor: strides in elements (NULL: compact row-major, legal
 * for legacy tensors and DLPack <= 1.1 producers), byte_offset in bytes. */
static double sum_f64(const DLTensor *t, int64_t *count) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  *count = n;
  if (n == 0) return 0.0;
  const char *base = (const char *)t->data + t->byte_offset;
  int64_t index[64] = {0};
  double total = 0.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0, compact = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      int64_t stride = t->strides ? t->strides[d] : compact;
      offset += index[d] * stride;
      compact *= t->shape[d];
    }
    total += ((const double *)(const void *)base)[offset];
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      if (++index[d] < t->shape[d]) break;
      index[d] = 0;
    }
  }
  return total;
}

/* The library's own names: "float64", "cpu:0" (dlpack_dtype_format / dlpack_device_format);
 * a value without a name prints as the numbers. */
static const char *dtype_name(DLDataType dtype, char *buf, size_t size) {
  if (dlpack_dtype_format(dtype, buf, size, NULL) != DLPACK_HELPERS_STATUS_OK)
    snprintf(buf, size, "(code %u, bits %u, lanes %u)", dtype.code, dtype.bits, dtype.lanes);
  return buf;
}

static const char *device_name(DLDevice device, char *buf, size_t size) {
  if (dlpack_device_format(device, buf, size, NULL) != DLPACK_HELPERS_STATUS_OK)
    snprintf(buf, size, "(%d, %d)", device.device_type, device.device_id);
  return buf;
}

static const char *elements(int64_t n) { return n == 1 ? "element" : "elements"; }

static void describe(const DLTensor *t) {
  char name[64];
  printf("    ndim %d, shape (", t->ndim);
  for (int32_t d = 0; d < t->ndim; ++d) printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
  printf("), strides ");
  if (!t->strides) {
    printf("NULL");
  } else {
    printf("(");
    for (int32_t d = 0; d < t->ndim; ++d) printf("%s%lld", d ? ", " : "", (long long)t->strides[d]);
    printf(")");
  }
  printf(" elements, dtype %s, byte_offset %llu\n", dtype_name(t->dtype, name, sizeof name),
         (unsigned long long)t->byte_offset);
}

/* Take the managed tensor out of a capsule: check the name, rename it (ownership moves now, before
 * anything that can fail), return the pointer. */
static void *take(PyObject *capsule, const char *name, const char *used_name) {
  void *p = PyCapsule_GetPointer(capsule, name);
  if (!p) return NULL;
  if (PyCapsule_SetName(capsule, used_name) != 0) return NULL;
  return p;
}

/* The allocation each array views, [base, base + size) (its NumPy root buffer), filled by main. */
static PyObject *allocations;

/* Before reading: every element must lie inside the allocation the tensor claims to view
 * (negative strides reach below data + byte_offset; an empty tensor touches nothing). */
static int fits_allocation(const DLTensor *t, uint64_t flags, const char *label) {
  PyObject *pair = PyDict_GetItemString(allocations, label); /* borrowed (base, size) */
  void *base = PyLong_AsVoidPtr(PyTuple_GetItem(pair, 0));
  unsigned long long size = PyLong_AsUnsignedLongLong(PyTuple_GetItem(pair, 1));
  bool fits = false;
  dlpack_helpers_status s = dlpack_dltensor_fits_allocation(t, flags, base, size, &fits);
  printf("    fits its allocation [%p, +%llu): %s\n", base, size,
         s != DLPACK_HELPERS_STATUS_OK ? dlpack_last_error_message() : fits ? "yes" : "NO");
  return s == DLPACK_HELPERS_STATUS_OK && fits;
}

static void consume(PyObject *array, const char *label, int versioned, double expected_sum) {
  printf("\n  %s, %s capsule\n", label, versioned ? "versioned" : "legacy");
  Py_ssize_t refs_before = Py_REFCNT(array);
  PyObject *capsule;
  if (versioned) {
    PyObject *kwargs = Py_BuildValue("{s:(ii)}", "max_version", 1, 3);
    PyObject *method = PyObject_GetAttrString(array, "__dlpack__");
    PyObject *empty = PyTuple_New(0);
    capsule = PyObject_Call(method, empty, kwargs);
    Py_DECREF(empty);
    Py_DECREF(method);
    Py_DECREF(kwargs);
  } else {
    capsule = PyObject_CallMethod(array, "__dlpack__", NULL);
  }
  if (!capsule) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *msg = value ? PyObject_Str(value) : NULL;
    printf("    NumPy refused the export: %s: %s\n", ((PyTypeObject *)type)->tp_name,
           msg ? PyUnicode_AsUTF8(msg) : "?");
    printf("    (expected for a read-only array on the legacy path: only the versioned struct can\n"
           "     carry DLPACK_FLAG_BITMASK_READ_ONLY; peer case 18)\n");
    EXPECT(!versioned, "a versioned export failed");
    Py_XDECREF(msg);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return;
  }

  DLDevice device;
  char name[64];
  const DLTensor *t;
  Py_ssize_t refs_held = Py_REFCNT(array); /* NumPy's manager_ctx holds the array while we own the tensor */
  if (versioned) {
    struct DLManagedTensorVersioned *m =
        take(capsule, DLPACK_HELPERS_CAPSULE_VERSIONED, DLPACK_HELPERS_CAPSULE_VERSIONED_USED);
    Py_DECREF(capsule); /* we own the tensor now; the renamed capsule's destructor does nothing */
    if (!m) { PyErr_Print(); ++failures; return; }
    dlpack_helpers_version_compat compat;
    /* Refuse and release a tensor of another major in one step (DLPack 1.0 rule). */
    dlpack_helpers_status s = dlpack_tensor_check_version_or_delete(m, &compat);
    if (s != DLPACK_HELPERS_STATUS_OK) {
      printf("    refused: %s\n", dlpack_last_error_message());
      ++failures;
      return;
    }
    printf("    version %u.%u (%s), flags 0x%llx%s%s\n", m->version.major, m->version.minor,
           compat == DLPACK_HELPERS_VERSION_EXACT ? "same as ours" :
           compat == DLPACK_HELPERS_VERSION_OLDER_MINOR ? "older minor: fully understood" :
                                                         "newer minor: usable",
           (unsigned long long)m->flags, (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? " READ_ONLY" : "",
           (m->flags & DLPACK_FLAG_BITMASK_IS_COPIED) ? " IS_COPIED" : "");
    EXPECT(dlpack_get_device(m, &device) == DLPACK_HELPERS_STATUS_OK, "dlpack_get_device failed");
    t = &m->dl_tensor;
    describe(t);
    printf("    device %s, CPU-accessible: %s\n", device_name(device, name, sizeof name),
           dlpack_is_cpu_accessible(device) ? "yes" : "no");
    EXPECT(dlpack_is_cpu_accessible(device), "NumPy memory is not CPU-accessible");
    if (!fits_allocation(t, m->flags, label)) {
      ++failures;
      dlpack_tensor_delete(m);
      return;
    }
    int64_t n;
    double total = sum_f64(t, &n);
    printf("    read %lld %s through the DLTensor, sum %g (NumPy says %g)\n", (long long)n, elements(n),
           total, expected_sum);
    EXPECT(total == expected_sum, "sum differs from NumPy's");
    dlpack_tensor_delete(m); /* exactly once; m is gone now */
  } else {
    DLManagedTensor *m = take(capsule, DLPACK_HELPERS_CAPSULE_LEGACY, DLPACK_HELPERS_CAPSULE_LEGACY_USED);
    Py_DECREF(capsule);
    if (!m) { PyErr_Print(); ++failures; return; }
    printf("    legacy struct: no version, no flags (writability unknown)\n");
    EXPECT(dlpack_legacy_get_device(m, &device) == DLPACK_HELPERS_STATUS_OK, "dlpack_legacy_get_device failed");
    t = &m->dl_tensor;
    describe(t);
    printf("    device %s, CPU-accessible: %s\n", device_name(device, name, sizeof name),
           dlpack_is_cpu_accessible(device) ? "yes" : "no");
    if (!fits_allocation(t, 0, label)) {
      ++failures;
      dlpack_legacy_tensor_delete(m);
      return;
    }
    int64_t n;
    double total = sum_f64(t, &n);
    printf("    read %lld %s through the DLTensor, sum %g (NumPy says %g)\n", (long long)n, elements(n),
           total, expected_sum);
    EXPECT(total == expected_sum, "sum differs from NumPy's");
    dlpack_legacy_tensor_delete(m);
  }
  Py_ssize_t refs_after = Py_REFCNT(array);
  printf("    released once; NumPy owner references: %zd before export, %zd while held, %zd after release -> %s\n",
         refs_before, refs_held, refs_after, refs_after == refs_before ? "released" : "LEAKED");
  EXPECT(refs_held == refs_before + 1, "the tensor did not hold a reference to its owner");
  EXPECT(refs_after == refs_before, "the owner reference was not released");
}

int main(void) {
  Py_Initialize();
  PyObject *np = PyImport_ImportModule("numpy");
  if (!np) {
    PyErr_Print();
    fprintf(stderr, "c_consumer: NumPy is not importable (run it through scripts/demo)\n");
    return 2;
  }
  dlpack_helpers_info info;
  info.struct_size = sizeof info;
  if (dlpack_get_info(&info) != DLPACK_HELPERS_STATUS_OK) return 1;
  PyObject *ver = PyObject_GetAttrString(np, "__version__");
  printf("C consumer: dlpack-helpers %s (DLPack %u.%u, ABI major %u, legacy accepted: %s), NumPy %s\n",
         info.version, info.dlpack_version.major, info.dlpack_version.minor, info.dlpack_abi_major,
         info.accepts_legacy ? "yes" : "no", PyUnicode_AsUTF8(ver));
  Py_DECREF(ver);

  /* The arrays, built by NumPy itself. */
  const char *setup =
      "import numpy as np\n"
      "writable = np.arange(6, dtype=np.float64).reshape(2, 3)\n"
      "readonly = np.arange(4, dtype=np.float64); readonly.setflags(write=False)\n"
      "zero_d = np.array(3.5)\n"
      "empty = np.zeros((0, 3))\n"
      "strided = np.arange(20, dtype=np.float64).reshape(4, 5)[1:, ::2]\n"
      "reversed = np.arange(5, dtype=np.float64)[::-1]\n"
      "fortran = np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3))\n"
      "def root(a):\n"
      "    while isinstance(a.base, np.ndarray): a = a.base\n"
      "    return a\n"
      "allocations = {k: (root(v).ctypes.data, root(v).nbytes) for k, v in list(globals().items())\n"
      "               if isinstance(v, np.ndarray)}\n";
  PyObject *globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject *r = PyRun_String(setup, Py_file_input, globals, globals);
  if (!r) { PyErr_Print(); return 1; }
  Py_DECREF(r);
  allocations = PyDict_GetItemString(globals, "allocations"); /* borrowed, lives with globals */
  const char *names[] = {"writable", "readonly", "zero_d", "empty", "strided", "reversed", "fortran"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    PyObject *a = PyDict_GetItemString(globals, names[i]); /* borrowed */
    PyObject *sum = PyObject_CallMethod(a, "sum", NULL);
    double expected = PyFloat_AsDouble(sum);
    Py_DECREF(sum);
    consume(a, names[i], 0, expected);
    consume(a, names[i], 1, expected);
  }
  Py_DECREF(globals);
  Py_DECREF(np);
  printf("\nC consumer: %s\n", failures ? "FAILED" : "every tensor read correctly and released exactly once");
  if (Py_FinalizeEx() < 0) return 1;
  return failures ? 1 : 0;
}
