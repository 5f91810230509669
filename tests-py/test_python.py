"""The Python embedding against real producers (NumPy, PyArrow) and peer faults."""
import ctypes
import gc
import tracemalloc
from ctypes import byref, c_void_p

import numpy as np
import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib
from producers import NAMES, Counter, Producer, raw_capsule

# ---------------------------------------------------------------- real producers: NumPy


def test_info_reports_python():
    i = dh.info()
    assert i["python"] and i["capabilities"] & _lib.CAP_PYTHON
    assert i["dlpack_version"] == (1, 3)
    # Run-time discovery of the specification (spec/04-versioning.md): 2026.12, all four profiles.
    assert i["spec_version"] == _lib.SPEC_VERSION == 202612
    assert i["profiles"] == (_lib.PROFILE_CORE | _lib.PROFILE_STREAMS | _lib.PROFILE_PYTHON
                             | _lib.PROFILE_EXCHANGE)
    c = _lib.Info()
    c.struct_size = ctypes.sizeof(c)
    assert lib.dlpack_get_info(byref(c)) == 0
    assert c.struct_size == ctypes.sizeof(c) and (c.spec_version, c.profiles) == (202612, 0xF)


@pytest.mark.parametrize("arr", [
    np.arange(12, dtype=np.float32).reshape(3, 4),
    np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2],  # non-contiguous
    np.array(3.5),  # 0-d
    np.zeros((0, 3)),  # empty
    np.array([True, False, True]),  # bool
    np.array([1 + 2j, 3 - 4j], dtype=np.complex64),  # complex
], ids=["float32", "noncontig", "0d", "empty", "bool", "complex"])
def test_numpy_versioned_round_trip(arr):
    with dh.import_tensor(arr) as t:
        assert t.how == 0  # versioned, first attempt
        assert t.version[0] == 1
        assert t.shape == arr.shape
        assert t.strides == tuple(s // arr.itemsize for s in arr.strides)
        assert t.device == (1, 0)
        assert t.is_contiguous() == (arr.flags.c_contiguous or arr.size == 0)
        back = np.from_dlpack(t)
        assert back.dtype == arr.dtype and back.shape == arr.shape
        np.testing.assert_array_equal(back, arr)
        if arr.size:
            assert back.__array_interface__["data"][0] == arr.__array_interface__["data"][0]  # zero-copy
    assert t.released


def test_numpy_dtypes_are_dlpack_codes():
    assert dh.import_tensor(np.array([True])).dtype == (6, 8, 1)
    assert dh.import_tensor(np.zeros(1, np.complex128)).dtype == (5, 128, 1)
    assert dh.import_tensor(np.zeros(1, np.uint8)).dtype == (1, 8, 1)


def test_numpy_legacy_capsule():
    arr = np.arange(5.0)
    with dh.import_tensor(arr.__dlpack__()) as t:  # a "dltensor" capsule, wrapped
        # Peer case 50: the legacy struct cannot say read-only, so the wrap is read-only (1.3
        # rules: strides filled in), and "came from legacy" is reported for a raw capsule too.
        assert t.version == (1, 3) and t.flags == _lib.FLAG_READ_ONLY and t.shape == (5,)
        assert t.readonly and t.how == _lib.IMPORTED_LEGACY
        np.testing.assert_array_equal(np.from_dlpack(t), arr)


def test_case_18_read_only_numpy_is_versioned_with_read_only():
    arr = np.arange(4.0)
    arr.flags.writeable = False
    with dh.import_tensor(arr) as t:
        assert t.how & _lib.IMPORTED_LEGACY == 0
        assert t.readonly
        # Issue 25: a stated read-only never leaves in place through the legacy struct: a copy
        # under copy=None (the consumer's own buffer), BufferError under copy=False.
        assert t.readonly_origin == "stated"
        with pytest.raises(BufferError, match="stated read-only"):
            t.__dlpack__(copy=False)
        with dh.import_tensor(t.__dlpack__()) as copied:
            assert copied.data_ptr != t.data_ptr and copied.how & _lib.IMPORTED_LEGACY
        back = np.from_dlpack(t)
        assert not back.flags.writeable


def test_device_and_cpu_accessible():
    assert dh.device(np.zeros(2)) == (1, 0)
    assert dh.is_cpu_accessible(np.zeros(2))
    assert dh.is_cpu_accessible((13, 0)) and not dh.is_cpu_accessible((2, 0))
    with pytest.raises(AttributeError):
        dh.device(object())
    with pytest.raises(AttributeError):
        dh.import_tensor([1, 2])


# ---------------------------------------------------------------- second real producer: PyArrow


def test_pyarrow_producer():
    pa = pytest.importorskip("pyarrow")  # no cp313t wheel of the pinned PyArrow (free-threaded part)
    arr = pa.array([1, 2, 3, 4], type=pa.int32())
    assert dh.device(arr) == (1, 0)
    with dh.import_tensor(arr) as t:
        assert t.version[0] == 1 and t.how == 0
        assert t.dtype == (0, 32, 1) and t.shape == (4,)
        assert t.readonly  # Arrow memory is immutable
        np.testing.assert_array_equal(np.from_dlpack(t), [1, 2, 3, 4])


# ---------------------------------------------------------------- ownership (peer cases 1, 2, 3, 7, 8)


def test_case_1_failure_after_taking_ownership_releases_once():
    c = Counter()
    cap = c.capsule(major=2)  # a major we cannot read: refused after the rename
    with pytest.raises(BufferError):
        dh.import_tensor(cap)
    assert c.calls == 1
    del cap
    gc.collect()
    assert c.calls == 1 and not c.live


def test_case_1_failure_before_taking_ownership_leaves_it_to_the_capsule():
    c = Counter()
    cap = c.capsule()
    out = ctypes.POINTER(_lib.DLManagedTensor)()
    assert lib.dlpack_legacy_capsule_consume(cap, byref(out)) == 62  # versioned: refused untouched
    assert c.calls == 0
    del cap
    gc.collect()
    assert c.calls == 1 and not c.live


def test_case_1_import_path_failure_releases_once():
    c = Counter()
    p = Producer(lambda kw: c.capsule(major=2))
    with pytest.raises(BufferError, match="UNSUPPORTED_VERSION"):
        dh.import_tensor(p)
    gc.collect()
    assert c.calls == 1 and not c.live


@pytest.mark.parametrize("name,calls", [("used_dltensor", 0), ("dltensor", 1), ("used_dltensor_versioned", 0),
                                        ("dltensor_versioned", 1), ("dltensor_used", 0)])
def test_case_2_destructor_respects_the_name(name, calls):
    c = Counter()
    t = c.legacy() if name in ("dltensor", "used_dltensor") else c.versioned()
    unraisable = []
    import sys
    old, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        cap = raw_capsule(t, name)
        del cap
        gc.collect()
    finally:
        sys.unraisablehook = old
    assert c.calls == calls
    assert bool(unraisable) == (name == "dltensor_used")


def test_case_2_null_deleter_is_skipped():
    c = Counter()
    cap = raw_capsule(c.versioned(deleter=False), "dltensor_versioned")
    del cap
    gc.collect()
    assert c.calls == 0


def test_case_3_unconsumed_capsules_release():
    c = Counter()
    n = 10_000
    for _ in range(n):
        c.capsule()
    gc.collect()
    assert c.calls == n and not c.live


def test_case_7_consumer_calls_deleter_when_done():
    c = Counter()
    t = dh.import_tensor(Producer(lambda kw: c.capsule()))
    arr = np.from_dlpack(t)
    assert c.calls == 0  # zero-copy: alive while used
    del t
    gc.collect()
    assert c.calls == 0  # the NumPy array keeps the view alive
    del arr
    gc.collect()
    assert c.calls == 1
    # synchronous copying import: released when the import returns
    with dh.import_tensor(Producer(lambda kw: c.capsule())) as t:
        copy = np.array(np.from_dlpack(t), copy=True)
    assert c.calls == 2 and copy.shape == (4,)


def test_case_8_names_and_many_imports():
    import re
    from pathlib import Path
    header = (Path(__file__).resolve().parent.parent / "include" / "dlpack_helpers.h").read_text()
    macros = dict(re.findall(r'#define DLPACK_HELPERS_CAPSULE_(\w+) "([^"]*)"', header))
    assert macros == {"LEGACY": "dltensor", "LEGACY_USED": "used_dltensor", "VERSIONED": "dltensor_versioned",
                      "VERSIONED_USED": "used_dltensor_versioned", "EXCHANGE_API": "dlpack_exchange_api"}
    c = Counter()
    p = Producer(lambda kw: c.capsule())
    caps = []
    for _ in range(10_000):
        with dh.import_tensor(p):
            pass
    cap = c.capsule()
    dh.import_tensor(cap).release()
    assert "used_dltensor_versioned" in repr(cap)  # the spec's consumed name, byte for byte
    gc.collect()
    assert c.calls == 10_001 and not c.live and not caps


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_double_consumption_is_refused():
    cap = np.arange(3.0).__dlpack__(max_version=(1, 0))
    dh.import_tensor(cap).release()
    with pytest.raises(ValueError, match="CAPSULE_CONSUMED"):
        dh.import_tensor(cap)
    with pytest.raises(ValueError, match="CAPSULE_NAME"):
        dh.import_tensor(raw_capsule(Counter().versioned(deleter=False), "dltensor_used"))
    with pytest.raises(TypeError):
        out = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
        s = lib.dlpack_capsule_consume(object(), byref(out))
        dh._raise(s)


def test_100k_round_trips_do_not_grow():
    arr = np.arange(16.0)
    for _ in range(10_000):
        dh.import_tensor(arr).release()
    gc.collect()
    rss0 = int(open("/proc/self/statm").read().split()[1])
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    for _ in range(100_000):
        t = dh.import_tensor(arr)
        np.from_dlpack(t)
        t.release()
    gc.collect()
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap0, "filename"))
    tracemalloc.stop()
    rss1 = int(open("/proc/self/statm").read().split()[1])
    assert grown < 64 * 1024, grown
    assert (rss1 - rss0) * 4096 < 8 * 1024 * 1024, (rss1 - rss0) * 4096
    assert arr.base is None and __import__("sys").getrefcount(arr) <= 3


# ---------------------------------------------------------------- negotiation (peer cases 18, 20, 21, 47)


def test_case_18_max_version_is_always_passed():
    p = Producer(lambda kw: np.arange(2.0).__dlpack__(**kw))
    dh.import_tensor(p).release()
    assert p.calls[0]["max_version"] == (1, 3)


def test_case_20_returned_version_is_checked():
    c = Counter()
    with dh.import_tensor(Producer(lambda kw: c.capsule(major=1, minor=9))) as t:
        assert t.version == (1, 9)  # a newer minor is usable
    with pytest.raises(BufferError):
        dh.import_tensor(Producer(lambda kw: c.capsule(major=2, minor=0)))
    with pytest.raises(BufferError):
        dh.import_tensor(Producer(lambda kw: c.capsule(major=0, minor=8)))
    gc.collect()
    assert c.calls == 3 and not c.live
    # the view exporter honours max_version
    with dh.import_tensor(np.arange(2.0)) as t:
        assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(1, 0)))
        assert '"dltensor"' in repr(t.__dlpack__())
        assert '"dltensor"' in repr(t.__dlpack__(max_version=(0, 8)))


def test_case_21_type_error_retries_other_errors_do_not():
    old = Producer(lambda kw: np.arange(3.0).__dlpack__(**kw), "old")
    with dh.import_tensor(old) as t:
        assert t.how == _lib.IMPORTED_AFTER_RETRY | _lib.IMPORTED_LEGACY
        assert t.shape == (3,)
    assert len(old.calls) == 2 and "max_version" not in old.calls[1]
    ni = Producer(lambda kw: np.arange(3.0).__dlpack__(**kw), "notimplemented")
    with pytest.raises(NotImplementedError, match="max_version is not supported"):  # unchanged (issue 11)
        dh.import_tensor(ni)
    assert len(ni.calls) == 1
    # no keyword-less retry when copy or dl_device was requested
    old2 = Producer(lambda kw: np.arange(3.0).__dlpack__(**kw), "old")
    with pytest.raises(TypeError, match="unexpected keyword"):  # the producer's own TypeError (issue 11)
        dh.import_tensor(old2, copy=False)
    assert len(old2.calls) == 1
    with pytest.raises(BufferError, match="cannot export this"):
        dh.import_tensor(Producer(None, "buffer"))
    with pytest.raises(TypeError, match="BAD_PRODUCER_RESULT"):
        dh.import_tensor(Producer(None, "not_a_capsule"))


def test_case_47_device_and_copy():
    arr = np.arange(3.0)
    with dh.import_tensor(arr, dl_device=(1, 0), copy=False) as t:
        assert t.device == (1, 0) and not t.flags & _lib.FLAG_IS_COPIED
    with dh.import_tensor(arr, copy=True) as t:  # NumPy copies and says so
        assert t.flags & _lib.FLAG_IS_COPIED
    with pytest.raises(BufferError):  # NumPy: unsupported device -> BufferError kept
        dh.import_tensor(arr, dl_device=(2, 0), copy=False)
    with dh.import_tensor(arr) as t:
        with pytest.raises(BufferError):  # copy=False, another device: BufferError, not ValueError
            t.__dlpack__(max_version=(1, 3), dl_device=(2, 0), copy=False)
        with pytest.raises(ValueError, match="INVALID_STREAM"):  # kDLCPU takes only None
            t.__dlpack__(max_version=(1, 3), stream=5)


# ---------------------------------------------------------------- the C exchange API


class _Table:
    """A DLPackExchangeAPI built with ctypes whose export goes through NumPy's __dlpack__."""

    def __init__(self, major=1, prev=None, null_from=False):
        self.api = _lib.DLPackExchangeAPI()
        self.api.header.version = _lib.DLPackVersion(major, 3)
        if prev is not None:
            self.api.header.prev_api = ctypes.cast(ctypes.pointer(prev.api), ctypes.POINTER(_lib.DLPackExchangeAPIHeader))
        self.prev = prev
        self.calls = 0

        def export(obj_ptr, out):
            self.calls += 1
            obj = ctypes.cast(obj_ptr, ctypes.py_object).value
            res = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
            if lib.dlpack_capsule_consume(obj.arr.__dlpack__(max_version=(1, 3)), byref(res)) != 0:
                return -1
            out[0] = res
            return 0

        self.cb = type(self.api.managed_tensor_from_py_object_no_sync)(export)
        if not null_from:
            self.api.managed_tensor_from_py_object_no_sync = self.cb
        dummy = ctypes.cast(lib.dlpack_capsule_destructor, c_void_p)  # any non-NULL function
        self.api.managed_tensor_allocator = dummy
        self.api.managed_tensor_to_py_object_no_sync = dummy
        self.api.current_work_stream = dummy

    def capsule(self, name="dlpack_exchange_api"):
        from producers import PyCapsule_New
        return PyCapsule_New(ctypes.addressof(self.api), NAMES[name], None)


def _holder(attr_name, value):
    class Holder:
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kw):
            return self.arr.__dlpack__(**kw)

        def __dlpack_device__(self):
            return (1, 0)
    setattr(Holder, attr_name, value)
    return Holder


def _find(obj):
    out = ctypes.POINTER(_lib.DLPackExchangeAPI)()
    return lib.dlpack_exchange_api_find(obj, byref(out)), out


def test_exchange_api_capsule_is_used():
    table = _Table()
    H = _holder("__dlpack_c_exchange_api__", table.capsule())
    s, out = _find(H(np.arange(3.0)))
    assert s == 0 and ctypes.addressof(out.contents) == ctypes.addressof(table.api)
    with dh.import_tensor(H(np.arange(3.0)), use_exchange_api=True) as t:
        assert t.how == _lib.IMPORTED_EXCHANGE_API and t.shape == (3,)
    assert table.calls == 1
    with dh.import_tensor(H(np.arange(3.0)), use_exchange_api=False) as t:  # refused: __dlpack__
        assert t.how == 0 and t.source == "versioned_capsule"
    assert table.calls == 1
    with dh.import_tensor(H(np.arange(3.0))) as t:  # the default uses a published exchange API (issue 11)
        assert t.how == _lib.IMPORTED_EXCHANGE_API and t.source == "exchange_api"
    assert table.calls == 2
    with dh.import_tensor(H(np.arange(3.0)), copy=False) as t:  # a request __dlpack__ must see: not used
        assert t.how == 0
    assert table.calls == 2


def test_exchange_api_v12_integer_and_prev_api_walk():
    old = _Table(major=1)
    newer = _Table(major=2, prev=old)
    H = _holder("__c_dlpack_exchange_api__", ctypes.addressof(newer.api))
    s, out = _find(H(np.arange(2.0)))
    assert s == 0 and ctypes.addressof(out.contents) == ctypes.addressof(old.api)


def test_exchange_api_null_newer_major_and_null_pointer_fall_back():
    cases = [
        (_holder("__c_dlpack_exchange_api__", 0), 69),  # NULL table
        (_holder("__dlpack_c_exchange_api__", _Table(major=2).capsule()), 10),  # newer major only
        (_holder("__dlpack_c_exchange_api__", _Table(null_from=True).capsule()), 69),  # NULL required pointer
        (_holder("__dlpack_c_exchange_api__", _Table().capsule("not_the_api")), 69),  # wrong capsule name
        (_holder("unrelated", 1), 70),  # none
    ]
    for H, want in cases:
        s, _ = _find(H(np.arange(2.0)))
        assert s == want, (H, s)
        with dh.import_tensor(H(np.arange(2.0)), use_exchange_api=True) as t:  # falls back to __dlpack__
            assert t.how == 0 and t.shape == (2,)
