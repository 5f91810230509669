"""The example extension, built from the installed dlpack_helpers wheel, on real producers
(NumPy, PyArrow, JAX on CPU when installed) and on hand-made capsules for what those never send
(a non-zero byte_offset, a device host code cannot read), with the producer's deleter counted.

Run by scripts/test.d/55-python-sdk.sh with the Python of a fresh venv that has the wheel and the
example installed."""
import ctypes
import gc
import importlib.util
import os
import subprocess
import sys
from ctypes import CFUNCTYPE, POINTER, Structure, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p

import numpy as np
import pytest

import dlpack_helpers as dh
import dlpack_sum_example as ex

HEADER = os.path.join(dh.get_include(), "dlpack_helpers.h")
KEEPS_PYTHON_ERROR = "DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR" in open(HEADER).read()


# ---- a minimal DLPack producer in ctypes (DLPack 1.x ABI) ---------------------------------------
class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensorVersioned(Structure):
    pass


DELETER = CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("major", c_uint32), ("minor", c_uint32), ("manager_ctx", c_void_p),
                                     ("deleter", DELETER), ("flags", c_uint64), ("dl_tensor", DLTensor)]
_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]
_NAME = ctypes.create_string_buffer(b"dltensor_versioned")


class Handmade:
    """``__dlpack__`` over a NumPy buffer with a chosen byte_offset, strides and device; counts
    the deleter calls."""

    def __init__(self, buf, shape, strides, byte_offset, device=(1, 0), dtype=(2, 64, 1)):
        self.buf, self.deleted = buf, 0
        self.shape = (c_int64 * len(shape))(*shape)
        self.strides = (c_int64 * len(strides))(*strides)
        self.deleter = DELETER(self._delete)
        self.mt = DLManagedTensorVersioned(1, 3, None, self.deleter, 0, DLTensor(
            buf.ctypes.data, DLDevice(*device), len(shape), DLDataType(*dtype), self.shape, self.strides,
            byte_offset))

    def _delete(self, _):
        self.deleted += 1

    def __dlpack__(self, **kw):
        return _new_capsule(ctypes.addressof(self.mt), _NAME, None)

    def __dlpack_device__(self):
        return (self.mt.dl_tensor.device.device_type, self.mt.dl_tensor.device.device_id)


# ---- NumPy ------------------------------------------------------------------------------------
def _numpy_views():
    x = np.arange(60, dtype=np.float64).reshape(3, 4, 5) * 0.5 - 3.0
    yield "contiguous", x
    yield "0-d", np.array(2.5)
    yield "empty", x[:, :0]
    yield "transposed", x.T
    yield "strided", x[::2, 1::2, ::3]
    yield "negative-stride", x[::-1, :, ::-2]
    yield "broadcast", np.broadcast_to(np.arange(4.0), (3, 4))
    ro = x.copy()
    ro.flags.writeable = False
    yield "read-only", ro
    yield "float32", x.astype(np.float32)[:, ::-1]


@pytest.mark.parametrize("name,view", list(_numpy_views()), ids=[n for n, _ in _numpy_views()])
def test_sum_of_numpy_views(name, view):
    assert ex.sum(view) == pytest.approx(float(view.sum(dtype=np.float64)), abs=1e-9)


def test_describe_numpy():
    d = ex.describe(np.ones((2, 3), dtype=np.float32))
    assert d["dtype"] == "float32" and d["device"] == "cpu:0" and d["ndim"] == 2 and not d["legacy"]
    assert d["writable"] is True


def test_wrong_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="int64"):
        ex.sum(np.arange(3))


# ---- byte_offset, device, one release ----------------------------------------------------------
def test_byte_offset_and_strides_in_elements_are_honoured():
    buf = np.arange(16.0)
    # elements 3, 5, 7 / 11, 13, 15: start 3 elements in (24 bytes), strides (8, 2) in elements
    p = Handmade(buf, shape=(2, 3), strides=(8, 2), byte_offset=3 * 8)
    assert ex.sum(p) == 3 + 5 + 7 + 11 + 13 + 15
    assert p.deleted == 1


def test_a_device_host_code_cannot_read_is_refused_and_released_once():
    p = Handmade(np.arange(4.0), shape=(4,), strides=(1,), byte_offset=0, device=(2, 0))  # kDLCUDA
    with pytest.raises(BufferError, match="NOT_CPU_ACCESSIBLE"):
        ex.sum(p)
    assert p.deleted == 1


def test_a_view_outside_the_address_space_is_refused_and_released_once():
    p = Handmade(np.arange(4.0), shape=(4,), strides=(2**61,), byte_offset=0)
    with pytest.raises(Exception, match="OVERFLOW"):
        ex.sum(p)
    assert p.deleted == 1


def test_refused_dtype_is_released_once():
    p = Handmade(np.arange(4.0), shape=(4,), strides=(1,), byte_offset=0, dtype=(0, 64, 1))  # int64
    with pytest.raises(TypeError):
        ex.sum(p)
    assert p.deleted == 1


# ---- PyArrow -----------------------------------------------------------------------------------
def test_sum_of_pyarrow_arrays():
    pa = pytest.importorskip("pyarrow")
    a = pa.array(np.linspace(-1.0, 2.0, 31))
    assert ex.sum(a) == pytest.approx(float(np.linspace(-1.0, 2.0, 31).sum()))
    assert ex.sum(a.slice(7, 5)) == pytest.approx(float(np.linspace(-1.0, 2.0, 31)[7:12].sum()))
    assert ex.sum(pa.array([1.5, 2.25], type=pa.float32())) == 3.75
    assert ex.describe(a)["writable"] is False  # Arrow memory is immutable, and says so


def test_pyarrow_refusal_keeps_its_exception_class():
    pa = pytest.importorskip("pyarrow")
    with pytest.raises(TypeError, match="nulls"):  # pyarrow's ArrowTypeError
        ex.sum(pa.array([1.0, None]))


# ---- JAX (CPU), when installed ----------------------------------------------------------------
def test_sum_of_jax_arrays():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4)
    assert ex.sum(x) == pytest.approx(66.0)
    assert ex.sum(x.T[::2]) == pytest.approx(float(np.asarray(x).T[::2].sum()))


# ---- producer exceptions ----------------------------------------------------------------------
class Raising:
    def __init__(self, exc):
        self.exc = exc

    def __dlpack__(self, **kw):
        raise self.exc

    def __dlpack_device__(self):
        return (1, 0)


class Interrupt(BaseException):
    pass


@pytest.mark.xfail(not KEEPS_PYTHON_ERROR, strict=True,
                   reason="the installed library has no DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR")
@pytest.mark.parametrize("exc", [BufferError("b"), TypeError("t"), ValueError("v"), NotImplementedError("n"),
                                 MemoryError("m"), RuntimeError("r"), Interrupt("i")], ids=lambda e: type(e).__name__)
def test_producer_exception_propagates_unchanged(exc):
    with pytest.raises(BaseException) as got:
        ex.sum(Raising(exc))
    assert got.value is exc
    assert got.value.__traceback__ is not None
    frames = [f.name for f in __import__("traceback").extract_tb(got.value.__traceback__)]
    assert "__dlpack__" in frames  # the producer's frame is kept


# ---- one C library -----------------------------------------------------------------------------
def test_the_module_finds_the_library_through_its_run_path_alone():
    """Loaded by file path, without importing dlpack_helpers first: the RUNPATH into the
    dlpack_helpers package resolves the library."""
    spec = importlib.util.find_spec("dlpack_sum_example._sum")
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('_sum', {spec.origin!r})\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "assert 'dlpack_helpers' not in sys.modules\n"
            "import numpy as np\n"
            "print(m.sum(np.arange(4.0)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "6.0", r.stderr


@pytest.mark.parametrize("first", ["extension", "package"])
def test_one_copy_of_the_library_per_process(first):
    imports = ["import dlpack_sum_example", "import dlpack_helpers"]
    if first == "package":
        imports.reverse()
    code = "\n".join(imports) + "\n" + (
        "import dlpack_helpers as dh, dlpack_sum_example as ex, numpy as np, os\n"
        "ex.sum(np.arange(3.0)); dh.import_tensor(np.arange(3.0)).release()\n"
        "maps = {os.path.realpath(l.split()[-1]) for l in open('/proc/self/maps') if 'libdlpack_helpers' in l}\n"
        "print(len(maps), sorted(maps))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("1 "), r.stdout


def test_no_leak_of_released_tensors():
    p = Handmade(np.arange(4.0), shape=(4,), strides=(1,), byte_offset=0)
    for _ in range(1000):
        ex.sum(p)
    gc.collect()
    assert p.deleted == 1000
