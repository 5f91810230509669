"""The buffer protocol on `dlpack_helpers.Tensor` (PEP 3118; issue 34, peer case 60): a
host-accessible Tensor exports its memory in place to `memoryview` with the right format, item
size, shape, byte strides and writability; what PEP 3118 cannot describe, and memory the host
cannot read, is refused with `BufferError`; the buffer keeps the memory alive, and the producer's
deleter runs exactly once, after the last of the Tensor, its buffers, its other views and the
producer goes, in any order."""
import ctypes
import gc
import itertools
from ctypes import POINTER, byref, c_int64, c_void_p

import numpy as np
import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib
from producers import Counter, take

FORMATS = [(np.int8, "b"), (np.int16, "h"), (np.int32, "i"), (np.int64, "q"), (np.uint8, "B"),
           (np.uint16, "H"), (np.uint32, "I"), (np.uint64, "Q"), (np.float16, "e"), (np.float32, "f"),
           (np.float64, "d"), (np.complex64, "Zf"), (np.complex128, "Zd"), (np.bool_, "?")]

LAYOUTS = {
    "c_order": lambda a: a.reshape(2, 3),
    "fortran_order": lambda a: np.asfortranarray(a.reshape(2, 3)),
    "reversed": lambda a: a[::-1],
    "reversed_2d_strided": lambda a: a.reshape(2, 3)[::-1, ::-2],
    "zero_d": lambda a: a[4:5].reshape(()),
    "empty": lambda a: a[:0].reshape(0, 3),
}


def source(dtype):
    return (np.arange(6) % 2).astype(dtype) if dtype is np.bool_ else (np.arange(6) + 1).astype(dtype)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("dtype,fmt", FORMATS, ids=[f for _, f in FORMATS])
def test_case_60_memoryview_describes_the_tensor(dtype, fmt, layout):
    arr = LAYOUTS[layout](source(dtype))
    t = dh.import_tensor(arr)
    m = memoryview(t)
    assert m.obj is t
    assert m.format == fmt and m.itemsize == arr.itemsize
    assert m.ndim == arr.ndim and m.shape == arr.shape
    assert m.nbytes == arr.nbytes
    assert not m.readonly and not t.readonly
    if arr.size:  # strides of an empty array are NumPy's choice; the buffer's follow the tensor
        assert m.strides == tuple(s * arr.itemsize for s in t.strides) == arr.strides
        assert m.c_contiguous == arr.flags.c_contiguous and m.f_contiguous == arr.flags.f_contiguous
    got = np.asarray(m)
    assert got.dtype == arr.dtype and got.shape == arr.shape
    np.testing.assert_array_equal(got, arr)
    if arr.size:
        assert got.ctypes.data == arr.ctypes.data  # in place, not a copy
    m.release()
    t.release()


def test_case_60_writes_through_the_buffer_reach_the_producer():
    arr = np.zeros((3, 4), dtype=np.int32)
    view = arr[::-1, 1::2]
    with dh.import_tensor(view) as t:
        m = memoryview(t)
        np.asarray(m)[0, 1] = 7  # the last row of arr, column 3
        m.release()
    assert arr[2, 3] == 7 and arr.sum() == 7
    # a writable request (ctypes asks PyBUF_WRITABLE) is granted for a writable contiguous tensor
    flat = np.zeros(4, dtype=np.int32)
    with dh.import_tensor(flat) as t:
        ctypes.c_int32.from_buffer(t).value = 9
    assert flat[0] == 9


PyBUF_WRITABLE, PyBUF_ND, PyBUF_STRIDES = 0x1, 0x8, 0x18
PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS, PyBUF_ANY_CONTIGUOUS = 0x38, 0x58, 0x98


def get_buffer(obj, flags):
    """`PyObject_GetBuffer(obj, flags)` then `PyBuffer_Release`: raises what the exporter raised."""
    view = ctypes.create_string_buffer(256)  # larger than a Py_buffer
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, c_void_p, ctypes.c_int]
    assert get(obj, ctypes.addressof(view), flags) == 0
    ctypes.pythonapi.PyBuffer_Release.argtypes = [c_void_p]
    ctypes.pythonapi.PyBuffer_Release(ctypes.addressof(view))


def test_case_60_layout_the_request_forbids_is_refused():
    strided = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    fortran = np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    c_order = np.arange(6, dtype=np.int32).reshape(2, 3)
    cases = [(strided, 0, "no strides"), (strided, PyBUF_ND, "no strides"),
             (strided, PyBUF_C_CONTIGUOUS, "C-contiguous"), (strided, PyBUF_F_CONTIGUOUS, "Fortran"),
             (strided, PyBUF_ANY_CONTIGUOUS, "contiguous"), (fortran, PyBUF_C_CONTIGUOUS, "C-contiguous"),
             (fortran, PyBUF_ND, "no strides"), (c_order, PyBUF_F_CONTIGUOUS, "Fortran")]
    for arr, flags, words in cases:
        with dh.import_tensor(arr) as t:
            with pytest.raises(BufferError, match=words):
                get_buffer(t, flags)
    for arr, flags in [(strided, PyBUF_STRIDES), (fortran, PyBUF_F_CONTIGUOUS), (fortran, PyBUF_ANY_CONTIGUOUS),
                       (c_order, 0), (c_order, PyBUF_ND | PyBUF_WRITABLE), (c_order, PyBUF_C_CONTIGUOUS)]:
        with dh.import_tensor(arr) as t:
            get_buffer(t, flags)
    with dh.import_tensor(strided) as t:  # a strided request (memoryview's) is fine
        np.testing.assert_array_equal(np.asarray(memoryview(t)), strided)


def _read_only_tensors():
    arr = np.arange(4.0)
    ro = arr.copy()
    ro.flags.writeable = False
    c = Counter()
    yield "numpy_read_only", dh.import_tensor(ro), "stated"
    yield "stated_flag", dh.import_tensor(c.capsule(flags=_lib.FLAG_READ_ONLY)), "stated"
    yield "legacy_capsule", dh.import_tensor(c.legacy_capsule()), "assumed"


def test_case_60_read_only_stays_read_only():
    seen = []
    for name, t, origin in _read_only_tensors():
        assert t.readonly and t.readonly_origin == origin, name
        m = memoryview(t)
        assert m.readonly, name
        np.testing.assert_array_equal(np.asarray(m), np.arange(4.0))
        with pytest.raises(ValueError):
            np.asarray(m)[0] = 1.0  # NumPy keeps the buffer's read-only bit
        with pytest.raises(TypeError):
            m[0] = 1.0
        with pytest.raises(BufferError, match="read-only") as e:
            get_buffer(t, PyBUF_WRITABLE)
        assert origin in str(e.value) or ("legacy" in str(e.value)) == (origin == "assumed"), name
        m.release()
        t.release()
        seen.append(name)
    assert seen == ["numpy_read_only", "stated_flag", "legacy_capsule"]
    # a legacy import the caller declares writable has a writable buffer
    with dh.import_tensor(Counter().legacy_capsule(), legacy_writable=True) as t:
        assert not t.readonly and not memoryview(t).readonly


def _capsule(counter, arr, dtype, device=(1, 0), shape=None, flags=0):
    """A `"dltensor_versioned"` capsule over `arr`'s memory with any dtype/device/shape."""
    shape = arr.shape if shape is None else shape
    mt = _lib.DLManagedTensorVersioned()
    mt.version = _lib.DLPackVersion(1, 3)
    mt.flags = flags
    sh = (c_int64 * max(len(shape), 1))(*shape)
    dl = mt.dl_tensor
    dl.data = arr.ctypes.data
    dl.device = _lib.DLDevice(*device)
    dl.ndim = len(shape)
    dl.dtype = _lib.DLDataType(*dtype)
    dl.shape = ctypes.cast(sh, POINTER(c_int64))
    dl.strides = None
    mt.deleter = counter.v_deleter
    counter.live[ctypes.addressof(mt)] = (mt, arr, sh)
    out = c_void_p()
    assert lib.dlpack_capsule_new(ctypes.pointer(mt), byref(out)) == 0
    return take(out)


@pytest.mark.parametrize("dtype,device,shape,flags,name,words", [
    ((4, 16, 1), (1, 0), (4,), 0, "bfloat16", "bfloat16"),
    ((2, 32, 4), (1, 0), (2,), 0, "float32x4", "lanes > 1"),
    ((0, 4, 1), (1, 0), (8,), 0, "int4", "sub-byte"),
    ((1, 1, 1), (1, 0), (16,), 0, "uint1", "sub-byte"),
    ((3, 64, 1), (1, 0), (2,), 0, None, "opaque handle"),
    ((5, 32, 1), (1, 0), (4,), 0, "complex32", "no PEP 3118 format"),
    ((2, 32, 1), (2, 0), (4,), 0, None, "host code cannot read"),
])
def test_case_60_what_a_buffer_cannot_describe_is_refused(dtype, device, shape, flags, name, words):
    c = Counter()
    arr = np.zeros(16, dtype=np.uint8)
    t = dh.import_tensor(_capsule(c, arr, dtype, device, shape, flags))
    if name is not None:
        assert str(t.dtype) == name
    with pytest.raises(BufferError, match=words) as e:
        memoryview(t)
    assert (name or str(t.dtype)) in str(e.value) or "device" in str(e.value)
    t.release()
    assert c.calls == 1 and not c.live  # a refusal keeps no reference


def test_case_60_float8_is_refused_naming_the_dtype():
    c = Counter()
    arr = np.zeros(4, dtype=np.uint8)
    refused = 0
    for code in range(7, 16):
        try:
            t = dh.import_tensor(_capsule(c, arr, (code, 8, 1)))
        except Exception:
            continue  # a code this DLPack version does not define
        name = str(t.dtype)
        if name.startswith("float8"):
            with pytest.raises(BufferError, match=name):
                memoryview(t)
            refused += 1
        t.release()
    assert refused >= 1
    gc.collect()
    assert not c.live


def test_case_60_host_accessible_device_memory_is_exported():
    """kDLCUDAHost (pinned) memory is host memory: host_access() says always, so it has a buffer."""
    c = Counter()
    arr = np.arange(4, dtype=np.float32)
    t = dh.import_tensor(_capsule(c, arr, (2, 32, 1), (3, 0)))
    assert t.host_access() == "always"
    np.testing.assert_array_equal(np.asarray(memoryview(t)), arr)
    t.release()
    gc.collect()
    assert c.calls == 1


HOLDERS = ("tensor", "buffer", "view", "capsule")


def _drop(holders, name):
    h = holders.pop(name)
    if name == "tensor":
        h.release()  # release() first, then the last reference
    elif name == "buffer":
        h.release()
        h.release()  # memoryview.release() twice: the buffer is released once
    del h
    gc.collect()


@pytest.mark.parametrize("order", list(itertools.permutations(HOLDERS)), ids="-".join)
def test_case_60_deleter_runs_once_after_the_last_holder(order):
    """A counting producer: its capsule is consumed by the import (it holds nothing after), the
    Tensor, its buffer and a NumPy view hold the memory; the deleter runs once, after the last."""
    c = Counter()
    cap = _capsule(c, np.arange(4.0), (2, 64, 1))
    t = dh.import_tensor(cap)
    m = memoryview(t)
    v = np.from_dlpack(t)
    holders = {"tensor": t, "buffer": m, "view": v, "capsule": cap}
    del t, m, v, cap
    for i, name in enumerate(order):
        left = set(order[i + 1:])
        _drop(holders, name)
        if "buffer" in left:
            np.testing.assert_array_equal(np.asarray(holders["buffer"]), np.arange(4.0))  # still valid
        assert c.calls == (0 if left - {"capsule"} else 1), (name, left)
    assert c.calls == 1 and not c.live


@pytest.mark.parametrize("order", list(itertools.permutations(("tensor", "buffer", "view", "producer"))),
                         ids="-".join)
def test_case_60_numpy_producer_lives_until_the_last_holder(order):
    """A real producer (a NumPy array): its memory stays valid while any of the Tensor, its buffer,
    a view or the array itself is held, and is freed once all are gone."""
    import weakref
    src = np.arange(4.0) * 3
    alive = weakref.ref(src)
    t = dh.import_tensor(src)
    m = memoryview(t)
    v = np.from_dlpack(t)
    holders = {"tensor": t, "buffer": m, "view": v, "producer": src}
    del t, m, v, src
    for i, name in enumerate(order):
        left = order[i + 1:]
        _drop(holders, name)
        if "buffer" in left:
            np.testing.assert_array_equal(np.asarray(holders["buffer"]), np.arange(4.0) * 3)
        assert (alive() is not None) == bool(left), (name, left)


def test_case_60_release_while_a_buffer_is_held_keeps_the_memory():
    c = Counter()
    t = dh.import_tensor(_capsule(c, np.arange(4.0), (2, 64, 1)))
    m = memoryview(t)
    sub = m[1:3]  # a second memoryview of the same export
    t.release()
    assert t.released
    with pytest.raises(ValueError, match="released"):
        memoryview(t)  # no new buffer after release
    gc.collect()
    assert c.calls == 0
    np.testing.assert_array_equal(np.asarray(sub), [1.0, 2.0])
    m.release()
    assert c.calls == 0  # `sub` still holds the export
    del t
    gc.collect()
    assert c.calls == 0
    sub.release()
    gc.collect()
    assert c.calls == 1 and not c.live


def test_case_60_many_buffers_and_re_imports_share_one_deleter():
    c = Counter()
    t = dh.import_tensor(_capsule(c, np.arange(4.0), (2, 64, 1)))
    u = dh.import_tensor(t)  # a re-import shares t's owner
    bufs = [memoryview(t) for _ in range(3)] + [memoryview(u) for _ in range(3)]
    t.release()
    u.release()
    del t, u
    gc.collect()
    for b in bufs[::2] + bufs[1::2]:
        assert c.calls == 0
        np.testing.assert_array_equal(np.asarray(b), np.arange(4.0))
        b.release()
    gc.collect()
    assert c.calls == 1 and not c.live


def test_case_60_buffers_taken_while_another_thread_releases():
    """Threads take buffers of one Tensor while another thread releases it (real parallelism under
    free-threaded CPython): each gets a valid buffer or ValueError, never freed memory, and the
    deleter runs once, after the last buffer."""
    import threading
    c = Counter()
    want = np.arange(64.0)
    t = dh.import_tensor(_capsule(c, want.copy(), (2, 64, 1)))
    n = 6
    start = threading.Barrier(n + 1)
    got = [[] for _ in range(n)]
    errors = []

    def take_buffers(k):
        start.wait()
        for _ in range(200):
            try:
                m = memoryview(t)
            except ValueError as e:
                assert "released" in str(e)
                continue
            got[k].append(m)
            if not np.array_equal(np.asarray(m), want):
                errors.append(k)

    def release():
        start.wait()
        t.release()

    threads = [threading.Thread(target=take_buffers, args=(k,)) for k in range(n)]
    threads.append(threading.Thread(target=release))
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert t.released
    bufs = [m for ms in got for m in ms]
    gc.collect()
    assert c.calls == (0 if bufs else 1)
    for m in bufs:
        np.testing.assert_array_equal(np.asarray(m), want)
        m.release()
    del bufs, got
    gc.collect()
    assert c.calls == 1 and not c.live
