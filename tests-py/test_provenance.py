"""Issue 25: producers as they ship, through the package and the C API.

- Writability by provenance: a tensor that came through the legacy struct has an *assumed*
  read-only bit (the legacy struct cannot say), which goes back to a legacy consumer in place; a
  producer's *stated* read-only bit never does (a copy under ``copy=None``, ``BufferError`` under
  ``copy=False``); ``legacy_writable=True`` is the C option ``DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE``.
- ``__dlpack_device__`` answering ``(kDLCPU, None)`` (PaddlePaddle 3.3) is CPU device 0; ``None``
  with any other device type stays ``BAD_PRODUCER_RESULT`` (``TypeError``).
- A subclass that overrides ``__dlpack__`` gets its override called, even when a base class
  publishes a C exchange API table.

The same rules against the real frameworks are in ``tests-frameworks/`` (``scripts/test frameworks``).
"""
import ctypes
import enum
import gc
import warnings
from ctypes import POINTER, byref, c_void_p

import numpy as np
import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib
from producers import Counter

PV = POINTER(_lib.DLManagedTensorVersioned)
ORIGIN_NONE, ORIGIN_STATED, ORIGIN_LEGACY = (_lib.READ_ONLY_ORIGIN_NONE, _lib.READ_ONLY_ORIGIN_STATED,
                                             _lib.READ_ONLY_ORIGIN_LEGACY)
BAD_PRODUCER_RESULT = 68


class _LegacyOnly:
    """A producer of the legacy protocol only (as JAX, TensorFlow, MLX, Warp, ONNX Runtime
    are): ``__dlpack__(stream=None)``, a ``"dltensor"`` capsule of writable NumPy memory."""

    def __init__(self, arr):
        self.arr = arr

    def __dlpack__(self, stream=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return self.arr.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)


class _LegacyConsumer:
    """Hands ``np.from_dlpack`` only what a legacy-only consumer asks for: ``__dlpack__()``."""

    def __init__(self, producer):
        self.producer = producer

    def __dlpack__(self, **_):
        return self.producer.__dlpack__()

    def __dlpack_device__(self):
        return self.producer.__dlpack_device__()


def _origin(t_ptr):
    out = ctypes.c_int32(-1)
    assert lib.dlpack_tensor_read_only_origin(t_ptr, byref(out)) == 0
    return out.value


def test_c_api_tells_assumed_from_stated():
    """The C query on the library's own imports: a legacy capsule is assumed, a versioned
    read-only one stated, a writable one none; with the writability assertion, none."""
    consumed = PV()
    arr = np.arange(4.0)
    for capsule, flags, want in [
        (_LegacyOnly(arr).__dlpack__(), 0, ORIGIN_LEGACY),
        (_LegacyOnly(arr).__dlpack__(), _lib.IMPORT_LEGACY_WRITABLE, ORIGIN_NONE),
        (arr.__dlpack__(max_version=(1, 3)), 0, ORIGIN_NONE),
    ]:
        how = ctypes.c_uint32()
        assert lib.dlpack_capsule_import(capsule, flags, byref(consumed), byref(how)) == 0
        assert _origin(consumed) == want
        lib.dlpack_tensor_delete(consumed)
    ro = np.arange(3.0)
    ro.flags.writeable = False
    assert lib.dlpack_capsule_import(ro.__dlpack__(max_version=(1, 3)), 0, byref(consumed), None) == 0
    assert _origin(consumed) == ORIGIN_STATED
    lib.dlpack_tensor_delete(consumed)


def test_legacy_born_tensor_goes_back_to_a_legacy_consumer_in_place():
    src = np.arange(6.0).reshape(2, 3)
    with dh.import_tensor(_LegacyOnly(src)) as t:
        assert t.readonly and t.readonly_origin == "assumed"
        back = np.from_dlpack(_LegacyConsumer(t))  # NumPy reads the legacy struct: read-only
        assert back.ctypes.data == src.ctypes.data and not back.flags.writeable
        np.testing.assert_array_equal(back, src)
        # versioned consumers still see READ_ONLY
        assert not np.from_dlpack(t).flags.writeable
        with dh.import_tensor(t.__dlpack__(max_version=(1, 3))) as v:
            assert v.readonly and v.flags & 1
        # a Tensor of this Tensor keeps the fact (the versioned hop states READ_ONLY)
        with dh.import_tensor(t) as again:
            assert again.readonly_origin == "assumed"
            assert np.from_dlpack(_LegacyConsumer(again)).ctypes.data == src.ctypes.data


def test_stated_read_only_reaches_a_legacy_consumer_only_as_a_copy():
    src = np.arange(6.0).reshape(2, 3)[:, ::2]
    src.flags.writeable = False
    with dh.import_tensor(src) as t:
        assert t.readonly_origin == "stated"
        copied = np.from_dlpack(_LegacyConsumer(t))
        assert copied.ctypes.data != src.ctypes.data
        np.testing.assert_array_equal(copied, src)
        with pytest.raises(BufferError, match="stated read-only"):
            t.__dlpack__(copy=False)
        # the copy is the consumer's own: writing to it never reaches the producer
        with dh.import_tensor(t.__dlpack__(copy=True)) as c:
            assert c.data_ptr != t.data_ptr


def test_legacy_writable_is_the_c_option():
    c = Counter()
    src = np.arange(4.0)
    with dh.import_tensor(_LegacyOnly(src), legacy_writable=True) as t:
        assert not t.readonly and t.readonly_origin is None
        a = np.from_dlpack(t)
        a[0] = 42.0  # the caller asserted it may
        assert src[0] == 42.0
    with dh.import_tensor(c.legacy_capsule(), legacy_writable=True) as t:  # raw capsules too
        assert not t.readonly
    gc.collect()
    assert c.calls == 1
    with dh.import_tensor(np.arange(3.0), legacy_writable=True) as t:  # versioned: its own flags
        assert not t.readonly
    ro = np.arange(3.0)
    ro.flags.writeable = False
    with dh.import_tensor(ro, legacy_writable=True) as t:
        assert t.readonly and t.readonly_origin == "stated"


class _Dev(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2


class _DeviceAnswer:
    def __init__(self, answer):
        self.answer = answer

    def __dlpack_device__(self):
        return self.answer


@pytest.mark.parametrize("answer", [(1, None), (_Dev.kDLCPU, None)])
def test_cpu_device_id_none_is_device_0(answer):
    obj = _DeviceAnswer(answer)
    assert dh.device(obj) == (1, 0)
    assert dh.is_cpu_accessible(obj)
    out = _lib.DLDevice()
    assert lib.dlpack_object_get_device(obj, byref(out)) == 0
    assert (out.device_type, out.device_id) == (1, 0)


@pytest.mark.parametrize("answer", [(2, None), (_Dev.kDLCUDA, None), (None, 0), (None, None)])
def test_device_id_none_elsewhere_stays_an_error(answer):
    obj = _DeviceAnswer(answer)
    with pytest.raises(TypeError, match="BAD_PRODUCER_RESULT"):
        dh.device(obj)
    out = _lib.DLDevice()
    assert lib.dlpack_object_get_device(obj, byref(out)) == BAD_PRODUCER_RESULT
    if answer[0] is not None:
        assert "only for kDLCPU" in lib.dlpack_last_error_message().decode()


def _exchange_capsule():
    """A DLPack 1.3 table (as a ``"dlpack_exchange_api"`` capsule) whose import function exports
    ``obj.arr`` through a versioned capsule; ``calls`` records each use."""
    api = _lib.DLPackExchangeAPI()
    api.header.version = _lib.DLPackVersion(1, 3)
    calls = []

    def export(obj_ptr, out):
        calls.append(1)
        obj = ctypes.cast(obj_ptr, ctypes.py_object).value
        res = PV()
        if lib.dlpack_capsule_consume(obj.arr.__dlpack__(max_version=(1, 3)), byref(res)) != 0:
            return -1
        out[0] = res
        return 0

    fn = type(api.managed_tensor_from_py_object_no_sync)(export)
    api.managed_tensor_from_py_object_no_sync = fn
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [c_void_p, ctypes.c_char_p, c_void_p]
    cap = new(ctypes.addressof(api), b"dlpack_exchange_api", None)
    return cap, calls, (api, fn)


def test_a_subclass_overriding_dlpack_gets_its_override_called():
    cap, calls, keep = _exchange_capsule()

    class Base:
        __dlpack_c_exchange_api__ = cap

        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kw):
            return self.arr.__dlpack__(**kw)

        def __dlpack_device__(self):
            return (1, 0)

    class Plain(Base):
        pass

    overrides = []

    class Override(Base):
        def __dlpack__(self, **kw):
            overrides.append(kw)
            return super().__dlpack__(**kw)

    for cls, table in [(Base, True), (Plain, True), (Override, False)]:
        calls.clear()
        overrides.clear()
        with dh.import_tensor(cls(np.arange(3.0))) as t:
            assert bool(t.how & _lib.IMPORTED_EXCHANGE_API) == table, cls
        assert (len(calls), len(overrides)) == ((1, 0) if table else (0, 1)), cls
    out = POINTER(_lib.DLPackExchangeAPI)()
    assert lib.dlpack_exchange_api_find(Override(np.arange(2.0)), byref(out)) == 70  # NO_EXCHANGE_API
    assert "overrides __dlpack__" in lib.dlpack_last_error_message().decode()
    del keep
