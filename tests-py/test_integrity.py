"""Issue 12 through the C API, against real producers (NumPy, PyArrow) and test doubles:
writability of legacy tensors is never invented (peer case 50), implied strides never clamp
(peer case 49), the producer's exception is kept (KEEP_PYTHON_ERROR, BaseException never
caught), CAPSULE_CONSUMED from a producer, and no lock held while Python runs (exchange API)."""
import ctypes
import faulthandler
import gc
import json
import platform
import subprocess
import sys
import threading
import time
from ctypes import POINTER, byref, c_int64, c_uint32, c_void_p

import numpy as np
import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib
from producers import Counter, Producer, take

PV = POINTER(_lib.DLManagedTensorVersioned)
PL = POINTER(_lib.DLManagedTensor)
READ_ONLY = _lib.FLAG_READ_ONLY
KEEP, WRITABLE = _lib.IMPORT_KEEP_PYTHON_ERROR, _lib.IMPORT_LEGACY_WRITABLE
OVERFLOW, READ_ONLY_STATUS, CAPSULE_CONSUMED = 24, 32, 63
# A hang fails the run (faulthandler exits) instead of hanging CI. A hang deadline, never a speed
# check: each test takes a few seconds, so a loaded or slow machine stays far inside it.
WATCHDOG_S = 600


@pytest.fixture(autouse=True)
def watchdog():
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def message():
    return lib.dlpack_last_error_message().decode()


def import_obj(obj, flags=0):
    """dlpack_object_import → (status, tensor pointer, how)."""
    req = _lib.ImportRequest()
    req.flags = flags
    out, how = PV(), c_uint32()
    s = lib.dlpack_object_import(obj, byref(req), byref(out), byref(how))
    return s, out, how.value


def writability(t):
    w = ctypes.c_int32(-1)
    assert lib.dlpack_tensor_writability(t, byref(w)) == 0
    return {0: "read-only", 1: "writable", 2: "unknown"}[w.value]


class OldProducer:
    """`__dlpack__(stream=None)` without `max_version`: a producer from before the array API
    2023.12, returning whatever `make()` gives (a legacy capsule)."""

    def __init__(self, make):
        self.make = make

    def __dlpack__(self, stream=None):
        return self.make()

    def __dlpack_device__(self):
        return (1, 0)


# ---------------------------------------------------------------- peer case 50: writability


def _check_legacy_import(obj, arr_values):
    s, t, how = import_obj(obj)
    assert s == 0, message()
    assert how & _lib.IMPORTED_LEGACY and how & _lib.IMPORTED_AFTER_RETRY
    assert t.contents.flags & READ_ONLY and writability(t) == "read-only"
    opts = _lib.ValidateOptions()
    opts.struct_size = ctypes.sizeof(opts)
    opts.flags = 32  # REQUIRE_WRITABLE
    assert lib.dlpack_tensor_validate(t, byref(opts), None) == READ_ONLY_STATUS
    lib.dlpack_tensor_delete(t)
    # With the caller's assertion the same producer is writable.
    s, t, how = import_obj(obj, WRITABLE)
    assert s == 0 and how & _lib.IMPORTED_LEGACY and writability(t) == "writable"
    assert lib.dlpack_tensor_validate(t, byref(opts), None) == 0
    lib.dlpack_tensor_delete(t)
    # Through the package: read-only (assumed), NumPy imports it read-only, and the legacy
    # re-export goes back in place, stating what the legacy producer stated (issue 25).
    with dh.import_tensor(obj) as t:
        assert t.readonly and t.how & _lib.IMPORTED_LEGACY and t.readonly_origin == "assumed"
        back = np.from_dlpack(t)
        assert not back.flags.writeable
        np.testing.assert_array_equal(back, arr_values)
        with dh.import_tensor(t.__dlpack__()) as again:
            assert again.data_ptr == t.data_ptr and again.readonly_origin == "assumed"


def test_case_50_numpy_legacy_without_max_version_is_read_only():
    arr = np.arange(6.0)
    _check_legacy_import(OldProducer(lambda: arr.__dlpack__()), arr)


def test_case_50_pyarrow_legacy_is_read_only():
    pa = pytest.importorskip("pyarrow")
    arr = pa.array([1, 2, 3, 4], type=pa.int32())
    _check_legacy_import(OldProducer(lambda: arr.__dlpack__()), [1, 2, 3, 4])


def test_case_50_versioned_writable_stays_writable():
    arr = np.arange(4.0)
    s, t, how = import_obj(arr)
    assert s == 0 and how == 0 and writability(t) == "writable"
    lib.dlpack_tensor_delete(t)


@pytest.mark.parametrize("entry", ["consume", "import", "import_writable"])
def test_case_50_raw_legacy_capsules(entry):
    for cap in (np.arange(5.0).__dlpack__(), Counter().legacy_capsule()):
        out, how = PV(), c_uint32(99)
        if entry == "consume":
            assert lib.dlpack_capsule_consume(cap, byref(out)) == 0
        else:
            flags = WRITABLE if entry == "import_writable" else 0
            assert lib.dlpack_capsule_import(cap, flags, byref(out), byref(how)) == 0
            assert how.value == _lib.IMPORTED_LEGACY
        want = "writable" if entry == "import_writable" else "read-only"
        assert writability(out) == want
        assert out.contents.version.major == 1 and out.contents.dl_tensor.strides  # 1.3 rules
        lib.dlpack_tensor_delete(out)
    # A versioned capsule keeps its own flags and reports nothing.
    out, how = PV(), c_uint32(99)
    assert lib.dlpack_capsule_import(np.arange(3.0).__dlpack__(max_version=(1, 3)), WRITABLE, byref(out), byref(how)) == 0
    assert how.value == 0 and writability(out) == "writable"
    lib.dlpack_tensor_delete(out)


def test_case_50_hand_made_legacy_tensor():
    c = Counter()
    t = c.legacy()
    w = ctypes.c_int32()
    assert lib.dlpack_legacy_tensor_writability(t, byref(w)) == 0 and w.value == 2  # unknown
    out = PV()
    assert lib.dlpack_legacy_to_versioned(t, 0, byref(out)) == 0
    assert writability(out) == "read-only"
    lib.dlpack_tensor_delete(out)
    t = c.legacy()
    assert lib.dlpack_legacy_tensor_wrap(t, 0, WRITABLE, byref(out)) == 0
    assert writability(out) == "writable"
    lib.dlpack_tensor_delete(out)
    assert c.calls == 2 and not c.live


def test_package_capsule_import_with_the_exchange_flag():
    # A capsule has no exchange API: the flag is ignored there, the legacy rule applies.
    with dh.import_tensor(np.arange(3.0).__dlpack__(), use_exchange_api=True) as t:
        assert t.readonly and t.how == _lib.IMPORTED_LEGACY


def test_case_50_new_view_refuses_read_only_legacy():
    arr = np.arange(4.0)
    dl = _lib.DLTensor()
    shape = (c_int64 * 1)(4)
    dl.data, dl.device, dl.ndim = arr.ctypes.data, _lib.DLDevice(1, 0), 1
    dl.dtype, dl.shape = _lib.DLDataType(2, 64, 1), ctypes.cast(shape, POINTER(c_int64))
    out = c_void_p()
    assert lib.dlpack_capsule_new_view(byref(dl), READ_ONLY, arr, _lib.EXPORT_LEGACY, byref(out)) == READ_ONLY_STATUS
    assert lib.dlpack_status_python_exception(READ_ONLY_STATUS) == b"BufferError"
    # The documented opt-in: clear READ_ONLY yourself.
    assert lib.dlpack_capsule_new_view(byref(dl), 0, arr, _lib.EXPORT_LEGACY, byref(out)) == 0
    take(out)
    # Versioned: the flag is kept.
    assert lib.dlpack_capsule_new_view(byref(dl), READ_ONLY, arr, _lib.EXPORT_VERSIONED, byref(out)) == 0
    cap = take(out)
    res = PV()
    assert lib.dlpack_capsule_consume(cap, byref(res)) == 0 and res.contents.flags == READ_ONLY
    lib.dlpack_tensor_delete(res)


# ---------------------------------------------------------------- peer case 49: no clamping


class _Legacy8:
    """A legacy int8 tensor with NULL strides and the given shape (data: one real byte)."""

    def __init__(self, shape):
        self.buf = (ctypes.c_int8 * 1)()
        self.shape = (c_int64 * len(shape))(*shape)
        self.calls = 0
        self.deleter = _lib.LegacyDeleter(self._delete) if hasattr(_lib, "LegacyDeleter") else \
            ctypes.CFUNCTYPE(None, PL)(self._delete)
        mt = _lib.DLManagedTensor()
        dl = mt.dl_tensor
        dl.data, dl.device, dl.ndim = ctypes.addressof(self.buf), _lib.DLDevice(1, 0), len(shape)
        dl.dtype, dl.shape, dl.strides = _lib.DLDataType(0, 8, 1), ctypes.cast(self.shape, POINTER(c_int64)), None
        mt.deleter = self.deleter
        self.mt = mt

    def _delete(self, p):
        self.calls += 1

    def capsule(self):
        out = c_void_p()
        assert lib.dlpack_legacy_capsule_new(ctypes.pointer(self.mt), byref(out)) == 0
        return take(out)


P62 = 2**62
BOUNDARIES = [  # (shape, implied stride of dimension 0 fits in int64_t)
    ((1, 2**63 - 1, 1), True),
    ((0, 2**63 - 1, 1), True),
    ((2, P62, 2), False),  # 2^63
    ((0, P62, 2), False),
    ((0, P62, 4), False),  # 2^64: the peer case's shape
    ((4, P62, 4), False),
]


@pytest.mark.parametrize("shape,fits", BOUNDARIES)
def test_case_49_consume_import_and_view_never_clamp(shape, fits):
    exact = shape[1] * shape[2]
    assert (exact <= 2**63 - 1) == fits
    # Consume with wrapping: OVERFLOW, and the legacy tensor is released exactly once.
    for entry in ("consume", "import", "object"):
        src = _Legacy8(shape)
        cap = src.capsule()
        out = PV()
        if entry == "consume":
            s = lib.dlpack_capsule_consume(cap, byref(out))
        elif entry == "import":
            s = lib.dlpack_capsule_import(cap, 0, byref(out), None)
        else:
            s, out, _ = import_obj(Producer(lambda kw: cap))
        if fits:
            assert s == 0, message()
            assert out.contents.dl_tensor.strides[0] == exact  # exact, never clamped
            lib.dlpack_tensor_delete(out)
        else:
            assert s == OVERFLOW, (entry, s, message())
            assert not out
        del cap
        gc.collect()
        assert src.calls == 1, entry
    # Re-export / new view with NULL strides.
    src = _Legacy8(shape)
    out = c_void_p()
    s = lib.dlpack_capsule_new_view(byref(src.mt.dl_tensor), 0, src, _lib.EXPORT_VERSIONED, byref(out))
    if fits:
        assert s == 0, message()
        cap = take(out)
        res = PV()
        assert lib.dlpack_capsule_consume(cap, byref(res)) == 0
        assert res.contents.dl_tensor.strides[0] == exact
        lib.dlpack_tensor_delete(res)
    else:
        assert s == OVERFLOW, message()


# ---------------------------------------------------------------- the producer's exception


class Boom(BaseException):
    """Not an Exception: must never be caught or cleared."""


RAISES = [BufferError, TypeError, ValueError, NotImplementedError, MemoryError, RuntimeError, Boom, KeyboardInterrupt]
MESSAGE_MODE = {BufferError: 65, TypeError: 66, ValueError: 67, NotImplementedError: 67, MemoryError: 67,
                RuntimeError: 67}


class Raiser:
    def __init__(self, exc_type):
        self.exc_type = exc_type
        self.raised = []

    def _raise(self):
        e = self.exc_type(f"producer says no #{len(self.raised)}")
        self.raised.append(e)
        raise e

    def __dlpack__(self, **kw):
        self._raise()

    def __dlpack_device__(self):
        self._raise()


@pytest.mark.parametrize("exc_type", RAISES, ids=lambda e: e.__name__)
def test_producer_exception_kept_with_the_flag(exc_type):
    p = Raiser(exc_type)
    # With KEEP_PYTHON_ERROR the very exception object stays set (ctypes.PyDLL raises it).
    with pytest.raises(exc_type) as ei:
        import_obj(p, KEEP)
    assert ei.value is p.raised[-1]
    assert ei.value.__traceback__ is not None
    assert "left for the caller" in message()
    if exc_type is TypeError:
        assert len(p.raised) == 2  # the first TypeError was the retry signal, consumed
    p2 = Raiser(exc_type)
    with pytest.raises(exc_type) as ei:
        lib.dlpack_object_query_device(p2, KEEP, byref(_lib.DLDevice()))
    assert ei.value is p2.raised[-1]


@pytest.mark.parametrize("exc_type", RAISES, ids=lambda e: e.__name__)
def test_producer_exception_without_the_flag(exc_type):
    p = Raiser(exc_type)
    if exc_type in MESSAGE_MODE:
        s, out, _ = import_obj(p)
        assert s == MESSAGE_MODE[exc_type] and not out
        assert exc_type.__name__ in message()
        assert sys.exc_info() == (None, None, None)
        d = _lib.DLDevice()
        assert lib.dlpack_object_get_device(Raiser(exc_type), byref(d)) in (65, 66, 67)
    else:
        # Not an Exception: never caught, never cleared, in either mode (also through the
        # package's fast path).
        with pytest.raises(exc_type) as ei:
            import_obj(p)
        assert ei.value is p.raised[-1]
        with pytest.raises(exc_type):
            lib.dlpack_object_get_device(Raiser(exc_type), byref(_lib.DLDevice()))
        p3 = Raiser(exc_type)
        with pytest.raises(exc_type) as ei:
            dh.import_tensor(p3)
        assert ei.value is p3.raised[-1]


def test_missing_dlpack_keeps_attribute_error_with_the_flag():
    with pytest.raises(AttributeError):
        import_obj(object(), KEEP)
    s, _, _ = import_obj(object())
    assert s == 64  # NO_DLPACK_METHOD


class AttributeRaiser:
    """`__dlpack__` exists and raises AttributeError itself (a producer error, not "no
    __dlpack__"): the library's method call must tell the two apart."""

    def __init__(self):
        self.raised = []

    def __dlpack__(self, **kw):
        e = AttributeError("producer's own attribute error")
        self.raised.append(e)
        raise e


class GetattrProducer:
    """`__dlpack__` found through `__getattr__` (no class attribute)."""

    def __getattr__(self, name):
        if name == "__dlpack__":
            return lambda **kw: np.arange(3.0).__dlpack__(**kw)
        raise AttributeError(name)


def test_attribute_error_inside_dlpack_is_the_producers():
    p = AttributeRaiser()
    s, out, _ = import_obj(p)
    assert s == 67 and not out  # PRODUCER_ERROR, not NO_DLPACK_METHOD (64)
    assert "producer's own attribute error" in message()
    assert sys.exc_info() == (None, None, None)
    with pytest.raises(AttributeError) as ei:
        import_obj(p, KEEP)
    assert ei.value is p.raised[-1]
    with pytest.raises(AttributeError) as ei:
        dh.import_tensor(p)
    assert ei.value is p.raised[-1]


def test_dlpack_found_through_getattr():
    s, out, _ = import_obj(GetattrProducer())
    assert s == 0
    lib.dlpack_tensor_delete(out)
    assert dh.import_tensor(GetattrProducer()).shape == (3,)


def test_producer_returning_a_used_capsule_is_capsule_consumed():
    cap = np.arange(3.0).__dlpack__(max_version=(1, 3))
    out = PV()
    assert lib.dlpack_capsule_consume(cap, byref(out)) == 0
    lib.dlpack_tensor_delete(out)
    s, out, _ = import_obj(Producer(lambda kw: cap))
    assert s == CAPSULE_CONSUMED and "already consumed" in message()


# ---------------------------------------------------------------- no lock held while Python runs


class _Meta(type):
    """A metaclass whose `__dlpack_c_exchange_api__` property re-enters the library (an import
    with the exchange flag) and then raises AttributeError (no table)."""
    depth = 0

    @property
    def __dlpack_c_exchange_api__(cls):
        if _Meta.depth < 2:
            _Meta.depth += 1
            try:
                s, t, how = import_obj(np.arange(2.0), _lib.IMPORT_EXCHANGE_API)
                assert s == 0
                lib.dlpack_tensor_delete(t)
                with dh.import_tensor(Reentrant(np.arange(2.0)), use_exchange_api=True) as inner:
                    assert inner.shape == (2,)
            finally:
                _Meta.depth -= 1
        time.sleep(0)  # lets other threads run (releases the GIL)
        raise AttributeError("no table")


class Reentrant(metaclass=_Meta):
    def __init__(self, arr):
        self.arr = arr

    def __dlpack__(self, **kw):
        return self.arr.__dlpack__(**kw)

    def __dlpack_device__(self):
        return (1, 0)


def _run_threads(fn, n=8, rounds=20):
    errors = []

    def work():
        try:
            for _ in range(rounds):
                fn()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WATCHDOG_S)
        assert not t.is_alive(), "a thread hangs (a lock held while foreign code runs?)"
    assert not errors, errors


def test_exchange_lookup_reentry_does_not_hang():
    def once():
        # A fresh type each time: the per-type cache would otherwise answer without a lookup.
        cls = _Meta("R", (Reentrant,), {})
        with dh.import_tensor(cls(np.arange(3.0)), use_exchange_api=True) as t:
            assert t.how == 0 and t.shape == (3,)  # fell back to __dlpack__
    once()
    _run_threads(once)


def test_exchange_lookup_with_gc_callback_releasing_the_gil():
    def sleepy(phase, info):
        time.sleep(0)
    gc.callbacks.append(sleepy)
    try:
        def once():
            for _ in range(5):
                H = type("Plain", (), {"__dlpack__": lambda self, **kw: np.arange(2.0).__dlpack__(**kw),
                                       "__dlpack_device__": lambda self: (1, 0)})
                gc.collect(0)
                with dh.import_tensor(H(), use_exchange_api=True) as t:
                    assert t.shape == (2,)
        _run_threads(once, rounds=3)
    finally:
        gc.callbacks.remove(sleepy)


def _holder(attr, value):
    return type("H", (), {attr: value, "__init__": lambda self, a: setattr(self, "arr", a),
                          "__dlpack__": lambda self, **kw: self.arr.__dlpack__(**kw),
                          "__dlpack_device__": lambda self: (1, 0)})


@pytest.mark.parametrize("value", [-1, -2**63, 2**64, 2**70, "0x10", 1.5])
def test_v12_integer_must_be_a_plain_address(value):
    H = _holder("__c_dlpack_exchange_api__", value)
    out = POINTER(_lib.DLPackExchangeAPI)()
    assert lib.dlpack_exchange_api_find(H(np.arange(2.0)), byref(out)) == 69  # EXCHANGE_API_INVALID
    with dh.import_tensor(H(np.arange(2.0)), use_exchange_api=True) as t:  # falls back
        assert t.how == 0


# DLPack 1.2 integer form: an int that cannot be a readable table's address is refused
# (EXCHANGE_API_INVALID, a message naming the attribute and the rule; an import falls back to
# __dlpack__), never dereferenced. Each case runs in its own process: on a library that reads
# the address, it dies of SIGSEGV, and only that case fails.

_ADDRESS_CHILD = r"""
import ctypes, json, mmap, sys
sys.path[:0] = json.loads(sys.argv[2])
from ctypes import POINTER, byref
import numpy as np
import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib

keep = []
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PAGE = mmap.PAGESIZE
PROT_NONE = 0  # <sys/mman.h> (Python's mmap module does not export it)


def pages(n, prot=mmap.PROT_READ | mmap.PROT_WRITE):
    p = libc.mmap(None, n * PAGE, prot, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    assert p is not None and p != ctypes.c_void_p(-1).value, ctypes.get_errno()
    return p


def unreadable_page():
    # A PROT_NONE page this process keeps reserved until it exits: unreadable, and no other
    # thread's mmap (NumPy's BLAS threads, the allocator) can be handed its address. A page
    # mapped and then unmapped could be reused by one, and the library would then read it.
    return pages(1, PROT_NONE)


def header_at(addr, major, prev):
    h = _lib.DLPackExchangeAPIHeader.from_address(addr)
    h.version = _lib.DLPackVersion(major, 2)
    h.prev_api = ctypes.cast(ctypes.c_void_p(prev), POINTER(_lib.DLPackExchangeAPIHeader))


def table_header(major, prev):
    buf = ctypes.create_string_buffer(64)  # malloc'd: aligned to 16
    keep.append(buf)
    header_at(ctypes.addressof(buf), major, prev)
    return ctypes.addressof(buf)


def value(case):
    if case == "True":
        return True
    if case == "unaligned":  # readable memory, one byte past an aligned buffer
        buf = ctypes.create_string_buffer(128)
        keep.append(buf)
        return ctypes.addressof(buf) + 1
    if case == "unreadable":
        return unreadable_page()
    if case == "header_at_page_end":  # a readable major-1 header; the rest of the table is not
        p = pages(2)
        assert libc.mprotect(p + PAGE, PAGE, PROT_NONE) == 0  # stays reserved
        header_at(p + PAGE - 16, 1, 0)
        return p + PAGE - 16
    if case == "prev_unreadable":  # a readable major-2 header whose prev_api is not readable
        return table_header(2, unreadable_page())
    if case == "prev_first_page":
        return table_header(2, 8)
    return int(case, 0)


def holder(v):
    return type("H", (), {"__c_dlpack_exchange_api__": v,
                          "__dlpack__": lambda self, **kw: np.arange(3.0).__dlpack__(**kw),
                          "__dlpack_device__": lambda self: (1, 0)})


def find(H):
    out = POINTER(_lib.DLPackExchangeAPI)()
    s = lib.dlpack_exchange_api_find(H(), byref(out))
    return ["find", s, lib.dlpack_last_error_message().decode() if s else ""]


def object_import(H):
    req = _lib.ImportRequest()
    req.flags = _lib.IMPORT_EXCHANGE_API
    t, how = POINTER(_lib.DLManagedTensorVersioned)(), ctypes.c_uint32()
    s = lib.dlpack_object_import(H(), byref(req), byref(t), byref(how))
    if s == 0:
        lib.dlpack_tensor_delete(t)
    return ["object_import", s, how.value]


def package(H):
    with dh.import_tensor(H()) as t:
        return ["import_tensor", t.how, list(t.shape)]


v = value(sys.argv[1])
H = holder(v)  # find first, then both imports on the same type: the cached refusal
steps = [find(H), find(H), object_import(H), package(H)]
H = holder(v)  # each import path first, on a fresh type
steps += [object_import(H), find(H)]
H = holder(v)
steps += [package(H), package(H), find(H)]
print(json.dumps(steps))
"""

_BOUND_RULE = {"x86_64": "outside user address space", "aarch64": "first page"}.get(platform.machine(), "")


@pytest.mark.parametrize("case,rule", [
    ("True", "is a bool, not an address"),
    ("1", "first page"),
    ("8", "first page"),
    ("4095", "first page"),
    ("unaligned", "not aligned to 8 bytes"),
    ("unreadable", "not readable memory"),
    (str(2**47 + 8), "not readable memory"),  # above 4-level paging's user space
    (str(2**56 + 8), _BOUND_RULE),  # the bound (x86-64 2**56; aarch64: 2**52 below the tag)
    (str(2**64 - 1), "not aligned"),
    ("header_at_page_end", "56 bytes of the DLPackExchangeAPI"),
    ("prev_unreadable", "prev_api chain (link 1)"),
    ("prev_first_page", "prev_api chain (link 1)"),
])
def test_v12_integer_that_cannot_be_a_table_is_refused_without_a_crash(case, rule):
    r = subprocess.run([sys.executable, "-c", _ADDRESS_CHILD, case, json.dumps(sys.path)],
                       capture_output=True, text=True, timeout=WATCHDOG_S)
    assert r.returncode == 0, f"{case}: exit {r.returncode} (-11 is SIGSEGV)\n{r.stderr[-2000:]}"
    steps = json.loads(r.stdout.strip().splitlines()[-1])
    for step in steps:
        if step[0] == "find":  # every answer, first or cached, is the refusal
            assert step[1] == 69, step  # EXCHANGE_API_INVALID
            assert "type(obj).__c_dlpack_exchange_api__" in step[2] and rule in step[2], step
        elif step[0] == "object_import":  # no usable table: __dlpack__, not the table
            assert step[1] == 0 and not step[2] & _lib.IMPORTED_EXCHANGE_API, step
        else:
            assert step[1:] == [0, [3]], step


def _import_only_table(major, minor):
    """A DLPackExchangeAPI table of that version with only its import function (NULL
    allocator, as apache-tvm-ffi publishes), which exports `obj.arr` through a versioned
    capsule; `calls` records each use. The table keeps its callback alive."""
    api = _lib.DLPackExchangeAPI()
    api.header.version = _lib.DLPackVersion(major, minor)
    calls = []

    def export(obj_ptr, out):
        calls.append(1)
        obj = ctypes.cast(obj_ptr, ctypes.py_object).value
        res = PV()
        if lib.dlpack_capsule_consume(obj.arr.__dlpack__(max_version=(1, 3)), byref(res)) != 0:
            return -1
        out[0] = res
        return 0
    api.managed_tensor_from_py_object_no_sync = type(api.managed_tensor_from_py_object_no_sync)(export)
    return api, calls


def test_v12_integer_valid_tables_pass_the_address_checks():
    """Real tables given as integers: the package's own Tensor table (from its 1.3 capsule),
    and a ctypes table with only the import function (an import uses it; find refuses it for
    the NULL allocator, after the address checks)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = c_void_p, [ctypes.py_object, ctypes.c_char_p]
    addr = get(dh.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api")
    H = _holder("__c_dlpack_exchange_api__", addr)
    out = POINTER(_lib.DLPackExchangeAPI)()
    for _ in range(2):
        assert lib.dlpack_exchange_api_find(H(np.arange(2.0)), byref(out)) == 0, message()
        assert ctypes.addressof(out.contents) == addr

    api, calls = _import_only_table(1, 2)
    H = _holder("__c_dlpack_exchange_api__", ctypes.addressof(api))
    with dh.import_tensor(H(np.arange(2.0))) as t:
        assert t.how == _lib.IMPORTED_EXCHANGE_API and t.shape == (2,)
    assert lib.dlpack_exchange_api_find(H(np.arange(2.0)), byref(out)) == 69
    assert "managed_tensor_allocator" in message()
    assert calls == [1]


def test_import_needs_only_the_import_function():
    """A DLPack 1.3 table with a NULL managed_tensor_allocator (as apache-tvm-ffi publishes):
    dlpack_exchange_api_find refuses it (not every required pointer), an import uses it."""
    from producers import NAMES, PyCapsule_New
    api, calls = _import_only_table(1, 3)
    H = _holder("__dlpack_c_exchange_api__", PyCapsule_New(ctypes.addressof(api), NAMES["dlpack_exchange_api"], None))
    out = POINTER(_lib.DLPackExchangeAPI)()
    assert lib.dlpack_exchange_api_find(H(np.arange(2.0)), byref(out)) == 69
    assert "managed_tensor_allocator" in message()
    with dh.import_tensor(H(np.arange(2.0)), use_exchange_api=True) as t:
        assert t.how == _lib.IMPORTED_EXCHANGE_API and t.shape == (2,)
    assert calls == [1]


def test_exchange_lookup_exceptions_are_not_cached_and_base_exceptions_propagate():
    class Flaky(type):
        raise_next = [Boom("interrupt the lookup"), RuntimeError("transient")]

        @property
        def __dlpack_c_exchange_api__(cls):
            if Flaky.raise_next:
                raise Flaky.raise_next.pop(0)
            raise AttributeError("no table")

    F = Flaky("F", (), {"__dlpack__": lambda self, **kw: np.arange(2.0).__dlpack__(**kw),
                        "__dlpack_device__": lambda self: (1, 0)})
    out = POINTER(_lib.DLPackExchangeAPI)()
    with pytest.raises(Boom):  # not an Exception: never caught, left set (ctypes raises it)
        lib.dlpack_exchange_api_find(F(), byref(out))
    assert lib.dlpack_exchange_api_find(F(), byref(out)) == 67  # PRODUCER_ERROR: RuntimeError, cleared
    assert "RuntimeError: transient" in message()
    assert lib.dlpack_exchange_api_find(F(), byref(out)) == 70  # asked again: a fact, now cached
    assert lib.dlpack_exchange_api_find(F(), byref(out)) == 70


class DeviceResult:
    def __init__(self, result):
        self.result = result

    def __dlpack_device__(self):
        return self.result


@pytest.mark.parametrize("result", [(True, 0), (1, False), (1.0, 0), ("1", 0), (1, 0, 0), (2**31, 0)],
                         ids=repr)
def test_dlpack_device_result_that_is_not_a_pair_of_int32(result):
    # A bool is an int subclass but no device number (stream=True is refused the same way): the
    # result is refused as BAD_PRODUCER_RESULT (found by a new-user test: (True, 0) read as
    # (kDLCPU, 0)), nothing written, no exception left set.
    d = _lib.DLDevice(-7, -7)
    s = lib.dlpack_object_get_device(DeviceResult(result), byref(d))
    assert s == 68, (s, message())  # DLPACK_HELPERS_STATUS_BAD_PRODUCER_RESULT
    assert (d.device_type, d.device_id) == (-7, -7)
    assert "__dlpack_device__" in message()
    assert sys.exc_info() == (None, None, None)


def test_dlpack_device_result_of_ints_and_int_enums():
    import enum

    class Dev(enum.IntEnum):
        CPU = 1

    for result, want in [((1, 0), (1, 0)), ((2, 3), (2, 3)), ((Dev.CPU, 0), (1, 0)), ([13, 0], (13, 0))]:
        d = _lib.DLDevice(-7, -7)
        assert lib.dlpack_object_get_device(DeviceResult(result), byref(d)) == 0, message()
        assert (d.device_type, d.device_id) == want


# ---------------------------------------------------------------- flags the declared version does not define

INVALID_FLAGS = 28
PADDED = 0x4  # DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: defined from DLPack 1.1 on
UNDEFINED_FLAG_CASES = [((1, 0), PADDED), ((1, 3), 0x8), ((1, 1), 0x10 | READ_ONLY)]


def _invalid_flags_exception():
    name = lib.dlpack_status_python_exception(INVALID_FLAGS).decode()
    return {"BufferError": BufferError, "ValueError": ValueError, "TypeError": TypeError}[name]


@pytest.mark.parametrize("version,flags", UNDEFINED_FLAG_CASES)
@pytest.mark.parametrize("entry", ["consume", "import", "object_import"])
def test_import_refuses_flags_the_declared_version_does_not_define_c_api(entry, version, flags):
    """A hand-made versioned capsule declaring `version` with `flags` it does not define (bit 2
    on 1.0 would be re-exported as 1.3's "padded sub-byte"): every C import entry point answers
    INVALID_FLAGS with a message naming the bits, the capsule is consumed and the producer's
    deleter runs exactly once."""
    c = Counter()
    cap = c.capsule(major=version[0], minor=version[1], flags=flags)
    out = PV()
    if entry == "consume":
        s = lib.dlpack_capsule_consume(cap, byref(out))
    elif entry == "import":
        s = lib.dlpack_capsule_import(cap, 0, byref(out), None)
    else:
        s, out, _ = import_obj(Producer(lambda kw: cap))
    assert s == INVALID_FLAGS, (s, message())
    m = message()
    assert f"{flags & ~(READ_ONLY | 0x2 | (PADDED if version[1] >= 1 else 0)):#x}" in m, m
    assert f"DLPack {version[0]}.{version[1]}" in m, m
    assert not out, "out_tensor written on failure"
    assert c.calls == 1
    del cap
    gc.collect()
    assert c.calls == 1 and not c.live


@pytest.mark.parametrize("version,flags", UNDEFINED_FLAG_CASES)
@pytest.mark.parametrize("how", ["capsule", "producer"])
def test_package_import_refuses_flags_the_declared_version_does_not_define(how, version, flags):
    """`dlpack_helpers.import_tensor` raises the exception `dlpack_status_python_exception(
    INVALID_FLAGS)` names, instead of a Tensor whose re-export would carry the bit into DLPack 1.3
    with another meaning; the deleter runs once."""
    c = Counter()
    make = lambda: c.capsule(major=version[0], minor=version[1], flags=flags)  # noqa: E731
    obj = make() if how == "capsule" else Producer(lambda kw: make())
    with pytest.raises(_invalid_flags_exception(), match="INVALID_FLAGS"):
        dh.import_tensor(obj)
    del obj
    gc.collect()
    assert c.calls == 1 and not c.live


def test_defined_flags_still_import_and_re_export_unchanged():
    """The bits a version does define are kept, and keep their meaning in the 1.3 re-export; a
    newer minor's unknown bits are accepted (a minor only adds) and refused only where a 1.3
    export cannot carry them."""
    c = Counter()
    with dh.import_tensor(c.capsule(minor=0, flags=READ_ONLY)) as t:
        assert (t.version, t.flags) == ((1, 0), READ_ONLY)
        out = PV()
        assert lib.dlpack_capsule_consume(t.__dlpack__(max_version=(1, 3)), byref(out)) == 0
        assert out.contents.flags == READ_ONLY
        lib.dlpack_tensor_delete(out)
    with dh.import_tensor(c.capsule(minor=1, flags=PADDED)) as t:
        assert t.flags == PADDED
    with dh.import_tensor(c.capsule(minor=9, flags=0x8)) as t:
        assert t.flags == 0x8
        with pytest.raises(_invalid_flags_exception(), match="INVALID_FLAGS"):
            t.__dlpack__(max_version=(1, 3))
    gc.collect()
    assert c.calls == 3 and not c.live


def test_case_54_negative_requested_device_id_never_reaches_the_producer():
    """Spec PY-OBJECT-IMPORT-4: a request whose dl_device has a negative id is INVALID_DEVICE
    before __dlpack__ is called (it was passed to the producer as dl_device=(1, -1) before)."""
    seen = []

    class P:
        def __dlpack__(self, **kw):
            seen.append(kw)
            return np.arange(3.0).__dlpack__(**{k: v for k, v in kw.items() if k != "dl_device"})

        def __dlpack_device__(self):
            return (1, 0)

    for dev in ((1, -1), (2, -5)):
        req = _lib.ImportRequest()
        req.has_dl_device = True
        req.dl_device = _lib.DLDevice(*dev)
        out, how = PV(), c_uint32()
        s = lib.dlpack_object_import(P(), byref(req), byref(out), byref(how))
        assert lib.dlpack_status_string(s) == b"INVALID_DEVICE", (dev, message())
        assert not out, "out written on failure"
    assert seen == []
