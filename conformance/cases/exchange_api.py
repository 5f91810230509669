"""Exchange profile: dlpack_exchange_api_find (tables the suite builds, published as a type's
1.3 capsule or 1.2 integer; lookups through metaclass properties that count, raise and re-enter)
and dlpack_exchange_api_current_work_stream (the page's decode table as data; the table's slot
is fx_py.c's counting C function; tables placed in read-only or fenced memory)."""
import ctypes

from cases._common import PAGE, fenced, noaccess
from cases._py import Obj, Py, Table, dev, no_exc
from harness.registry import case

SENT = 0x5EB7_1E55_0000_0042


def find(ctx, py, obj, pending=None):
    out = ctypes.c_void_p(SENT)
    st, exc = py.call("dlpack_exchange_api_find", Obj(obj), ctypes.byref(out), pending=pending)
    return st, out.value, exc


def full_table(ctx, py, **kw):
    slots = dict(managed_tensor_from_py_object_no_sync=py.FROM_SLOT, current_work_stream=py.CWS_SLOT)
    slots.update(kw)
    return Table(ctx, **slots)


def no_slot_called(ctx, py, t, what):
    ctx.check(py.lib.fx_from_calls() == 0 and py.lib.fx_cws_calls() == 0 and not any(t.calls.values()),
              f"{what}: a function of the table was called")


def publishing(py, t=None, capsule=..., legacy=..., name="P", bases=(object,), ns=None, meta=type):
    d = dict(ns or {})
    if capsule is ...:
        capsule = t.capsule(py) if t else ...
    if capsule is not ...:
        d["__dlpack_c_exchange_api__"] = capsule
    if legacy is not ...:
        d["__c_dlpack_exchange_api__"] = legacy
    return meta(name, bases, d)


@case("exchange.exchange_api_find.found", profile="exchange",
      covers=["EXCH-EXCHANGE-API-FIND-2", "EXCH-EXCHANGE-API-FIND-3", "EXCH-EXCHANGE-API-FIND-8",
              "EXCH-EXCHANGE-API-FIND-12", "EXCH-EXCHANGE-API-FIND-15", "OWN-PY-3"])
def _(ctx):
    py = Py(ctx)
    py.lib.fx_from_config(0, None, 0, 0)
    py.lib.fx_cws_config(0, None, 0, 0)
    t = full_table(ctx, py)
    other = full_table(ctx, py)
    for desc, T in (("1.3 capsule", publishing(py, t)),
                    ("1.3 capsule beside a 1.2 int of another table", publishing(py, t, legacy=other.address)),
                    ("1.2 int", publishing(py, capsule=..., legacy=t.address)),
                    ("inherited", type("Sub", (publishing(py, t),), {}))):
        for obj in (T(), T):
            st, out, exc = find(ctx, py, obj if obj is not T else T())
            ctx.ok(st, desc)
            no_exc(ctx, exc, desc)
            ctx.check(out == t.address, f"{desc}: out_api is not the producer's table")
    no_slot_called(ctx, py, t, "find")
    # Only dltensor_from_py_object_no_sync may be NULL.
    st, out, exc = find(ctx, py, publishing(py, full_table(ctx, py, dltensor_from_py_object_no_sync=None))())
    ctx.ok(st, "NULL dltensor_from_py_object_no_sync")
    for slot in ("managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
                 "managed_tensor_to_py_object_no_sync", "current_work_stream"):
        bad = full_table(ctx, py, **{slot: None})
        for T in (publishing(py, bad), publishing(py, capsule=..., legacy=bad.address)):
            st, out, exc = find(ctx, py, T())
            ctx.expect(st, "EXCHANGE_API_INVALID", what=f"NULL {slot}")
            no_exc(ctx, exc, slot)
            ctx.check(out == SENT, f"NULL {slot}: out_api written")
    # A 1.3 attribute that is no valid capsule is refused; the 1.2 name is not looked up then.
    for val in (5, None, "x", py.named(t.address, b"dltensor", False), py.named(t.address, None, False)):
        st, out, exc = find(ctx, py, publishing(py, capsule=val, legacy=t.address)())
        ctx.expect(st, "EXCHANGE_API_INVALID", what=f"__dlpack_c_exchange_api__ = {val!r}")
        ctx.check(out == SENT, "out_api written on failure")
        no_exc(ctx, exc, repr(val))
    st, out, exc = find(ctx, py, object())
    ctx.expect(st, "NO_EXCHANGE_API", what="object()")
    no_exc(ctx, exc, "object()")
    ctx.check(out == SENT, "out_api written")


@case("exchange.exchange_api_find.null", profile="exchange", covers=["EXCH-EXCHANGE-API-FIND-1"])
def _(ctx):
    py = Py(ctx)
    out = ctypes.c_void_p(SENT)
    for args in ((None, ctypes.byref(out)), (Obj(object()), None)):
        st, exc = py.call("dlpack_exchange_api_find", *args)
        ctx.expect(st, "NULL_POINTER")
        no_exc(ctx, exc, "NULL")
    ctx.check(out.value == SENT, "out_api written")


class Counting(type):
    """A metaclass whose two table attributes are properties: they count lookups and answer
    `answers[name]` (a value, or an exception to raise)."""
    looked = []
    answers = {}

    @property
    def __dlpack_c_exchange_api__(cls):
        return Counting._answer("__dlpack_c_exchange_api__")

    @property
    def __c_dlpack_exchange_api__(cls):
        return Counting._answer("__c_dlpack_exchange_api__")

    @staticmethod
    def _answer(name):
        Counting.looked.append(name)
        a = Counting.answers.get(name, AttributeError(name))
        if callable(a) and not isinstance(a, BaseException):
            a = a()
        if isinstance(a, BaseException):
            raise a
        return a


@case("exchange.exchange_api_find.lookups", profile="exchange",
      covers=["EXCH-EXCHANGE-API-FIND-2", "EXCH-EXCHANGE-API-FIND-3", "EXCH-EXCHANGE-API-FIND-4",
              "EXCH-EXCHANGE-API-FIND-13", "EXCH-EXCHANGE-API-FIND-14", "OWN-PY-3"])
def _(ctx):
    py = Py(ctx)
    t = full_table(ctx, py)
    cap = t.capsule(py)
    rows = [({"__dlpack_c_exchange_api__": cap}, "OK", ["__dlpack_c_exchange_api__"]),
            ({}, "NO_EXCHANGE_API", ["__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"]),
            ({"__c_dlpack_exchange_api__": t.address}, "OK", ["__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"]),
            ({"__dlpack_c_exchange_api__": BufferError("b")}, "PRODUCER_BUFFER_ERROR", ["__dlpack_c_exchange_api__"]),
            ({"__dlpack_c_exchange_api__": TypeError("t")}, "PRODUCER_TYPE_ERROR", ["__dlpack_c_exchange_api__"]),
            ({"__dlpack_c_exchange_api__": ValueError("v")}, "PRODUCER_ERROR", ["__dlpack_c_exchange_api__"]),
            ({"__c_dlpack_exchange_api__": ValueError("v")}, "PRODUCER_ERROR",
             ["__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"])]
    for answers, want, looked in rows:
        Counting.answers, Counting.looked = answers, []
        T = Counting("T", (), {})
        st, out, exc = find(ctx, py, T())
        ctx.expect(st, want, what=f"{answers}")
        no_exc(ctx, exc, f"{answers}")
        ctx.check(Counting.looked == looked, f"{answers}: looked up {Counting.looked}, expected {looked}")
        if want == "OK":
            ctx.check(out == t.address, "not the table")
        else:
            ctx.check(out == SENT, "out_api written on failure")
            if want != "NO_EXCHANGE_API":
                ctx.check(type(list(answers.values())[0]).__name__.encode() in ctx.last_error(), "message lacks the exception")
    for e in (KeyboardInterrupt("k"), SystemExit(1)):
        Counting.answers, Counting.looked = {"__dlpack_c_exchange_api__": e}, []
        st, out, exc = find(ctx, py, Counting("T", (), {})())
        ctx.expect(st, "PYTHON_ERROR_SET", what=repr(e))
        ctx.check(exc is e, f"{e!r} not left set as it was: {exc!r}")
    # A lookup that raised is not cached: the same type asked again answers.
    state = {"n": 0}

    def flaky():
        state["n"] += 1
        return ValueError("first") if state["n"] == 1 else cap
    Counting.answers, Counting.looked = {"__dlpack_c_exchange_api__": flaky}, []
    T = Counting("Flaky", (), {})
    st1, _, _ = find(ctx, py, T())
    st2, out, exc = find(ctx, py, T())
    ctx.expect(st1, "PRODUCER_ERROR", what="first lookup raising")
    ctx.ok(st2, "second lookup after a raising one")
    ctx.check(out == t.address, "second lookup: not the table")
    # Re-entry from the lookup: the same function, on another type, and a call that releases the GIL.
    inner = []

    def reenter():
        inner.append(find(ctx, py, publishing(py, t)())[0])
        ctx.f.dlpack_status_string(0)    # through CDLL: the GIL is released and taken again
        return cap
    Counting.answers, Counting.looked = {"__dlpack_c_exchange_api__": reenter}, []
    st, out, exc = find(ctx, py, Counting("Re", (), {})())
    ctx.ok(st, "re-entered lookup")
    ctx.check(inner == [0], f"the inner call answered {inner}")


@case("exchange.exchange_api_find.legacy_integer", profile="exchange",
      covers=["EXCH-EXCHANGE-API-FIND-5", "EXCH-EXCHANGE-API-FIND-6"])
def _(ctx):
    py = Py(ctx)
    t = full_table(ctx, py)
    na = noaccess()
    S = ctypes.sizeof(ctx.m.struct("DLPackExchangeAPI"))
    # A table whose header is readable but whose last slot lies in a PROT_NONE page.
    cut = fenced(ctypes.string_at(t.address, S), hi=S - 8) if S % 8 == 0 else None
    for val in (True, False, -8, 0, 8, 4088, t.address + 4, t.address + 1, 1 << 56, (1 << 64) - 8, 1 << 64,
                1 << 70, 3.0, "0x1000", str(t.address), na, na + 8, cut):
        if val is None:
            continue
        st, out, exc = find(ctx, py, publishing(py, capsule=..., legacy=val)())
        ctx.expect(st, "EXCHANGE_API_INVALID", what=f"__c_dlpack_exchange_api__ = {val!r}")
        no_exc(ctx, exc, repr(val))
        ctx.check(out == SENT, "out_api written")
    # prev_api reaching unreadable memory.
    top = Table(ctx, version=(2, 0), prev=na)
    st, out, exc = find(ctx, py, publishing(py, capsule=..., legacy=top.address)())
    ctx.expect(st, "EXCHANGE_API_INVALID", what="1.2 table whose prev_api is unreadable")


@case("exchange.exchange_api_find.prev_api", profile="exchange",
      covers=["EXCH-EXCHANGE-API-FIND-7", "EXCH-EXCHANGE-API-FIND-12"])
def _(ctx):
    py = Py(ctx)
    one = full_table(ctx, py)
    two = Table(ctx, version=(2, 5), prev=one.address)
    three = Table(ctx, version=(3, 0), prev=two.address)
    for top in (two, three):
        for T in (publishing(py, top), publishing(py, capsule=..., legacy=top.address)):
            st, out, exc = find(ctx, py, T())
            ctx.ok(st, "a newer major with a major-1 table in its chain")
            ctx.check(out == one.address, "not the major-1 table of the chain")
    lone = Table(ctx, version=(2, 0))
    st, out, exc = find(ctx, py, publishing(py, lone)())
    ctx.expect(st, "UNSUPPORTED_VERSION", what="no major-1 table in the chain")
    zero = Table(ctx, version=(0, 9))
    st, out, exc = find(ctx, py, publishing(py, zero)())
    ctx.expect(st, "UNSUPPORTED_VERSION", what="a major-0 table with no chain")
    loop = Table(ctx, version=(2, 0))
    ctypes.c_void_p.from_address(loop.address + 8).value = loop.address
    st, out, exc = find(ctx, py, publishing(py, loop)())
    ctx.expect(st, "EXCHANGE_API_INVALID", what="prev_api cycle")
    ctx.check(out == SENT, "out_api written")
    # A major-1 table at an address not aligned to a pointer.
    S = ctypes.sizeof(ctx.m.struct("DLPackExchangeAPI"))
    buf = ctypes.create_string_buffer(S + 16)
    mis = (ctypes.addressof(buf) + 7) & ~7
    mis += 4
    ctypes.memmove(mis, one.address, S)
    st, out, exc = find(ctx, py, publishing(py, capsule=py.named(mis, b"dlpack_exchange_api", False))())
    ctx.expect(st, "EXCHANGE_API_INVALID", what="misaligned major-1 table")


@case("exchange.exchange_api_find.overrides", profile="exchange",
      covers=["EXCH-EXCHANGE-API-FIND-9", "EXCH-EXCHANGE-API-FIND-10", "EXCH-EXCHANGE-API-FIND-11"])
def _(ctx):
    py = Py(ctx)
    t = full_table(ctx, py)
    P = publishing(py, t, ns={"__dlpack__": lambda self, **k: None})
    Sub = type("Sub", (P,), {"__dlpack__": lambda self, **k: None})
    st, out, exc = find(ctx, py, Sub())
    ctx.expect(st, "NO_EXCHANGE_API", what="subclass overriding __dlpack__")
    ctx.check(out == SENT, "out_api written")
    st, out, exc = find(ctx, py, type("Plain", (P,), {})())
    ctx.ok(st, "subclass without an override")
    for module, names in (("torch", ("__torch_function__", "requires_grad", "is_conj", "layout", "device", "__getattribute__")),
                          ("paddle.base", ("is_sparse", "stop_gradient", "place", "get_tensor", "__getattribute__"))):
        Pub = publishing(py, t, ns={"__module__": module})
        st, out, exc = find(ctx, py, Pub())
        ctx.ok(st, f"{module} publisher itself")
        for name in names:
            val = (lambda self, n: object.__getattribute__(self, n)) if name == "__getattribute__" else property(lambda self: 1)
            S = type("S", (Pub,), {name: val})
            st, out, exc = find(ctx, py, S())
            ctx.expect(st, "NO_EXCHANGE_API", what=f"{module} subclass defining {name}")
        # The same names on a publisher of another module do not matter.
        S = type("S", (publishing(py, t, ns={"__module__": "mylib"}),), {"requires_grad": 1, "place": 2})
        st, out, exc = find(ctx, py, S())
        ctx.ok(st, "mylib subclass defining requires_grad/place")

    # A metaclass answering another __mro__ and __dict__ does not hide the override.
    class Lying(type):
        @property
        def __mro__(cls):
            return (P, object)

    L = Lying("L", (P,), {"__dlpack__": lambda self, **k: None})
    st, out, exc = find(ctx, py, L())
    ctx.expect(st, "NO_EXCHANGE_API", what="override hidden by a metaclass's __mro__")


# -- dlpack_exchange_api_current_work_stream ---------------------------------------------------
# The page's decode table: (family devices, answer h, NULL_IS_DEFAULT, status, kind name, handle)
CUDA, ROCM, OTHER, CPU = ((2, 0), (3, 1), (13, 0)), ((10, 0), (11, 2)), ((4, 0), (7, 0), (8, 1), (14, 0), (99, 0)), ((1, 0),)
ROWS = [(CPU, 0, None, "OK", "NONE", 0), (CPU, 0x1234, None, "OK", "NONE", 0),
        (CUDA, 0, False, "NULL_WORK_STREAM", None, None), (CUDA, 0, True, "OK", "LEGACY_DEFAULT", 1),
        (CUDA, 1, None, "OK", "LEGACY_DEFAULT", 1), (CUDA, 2, None, "OK", "PER_THREAD_DEFAULT", 2),
        (CUDA, 0x7F00, None, "OK", "HANDLE", 0x7F00),
        (ROCM, 0, False, "NULL_WORK_STREAM", None, None), (ROCM, 0, True, "OK", "DEFAULT", 0),
        (ROCM, 1, None, "OK", "HANDLE", 1), (ROCM, 0x7F00, None, "OK", "HANDLE", 0x7F00),
        (OTHER, 0, None, "NULL_WORK_STREAM", None, None), (OTHER, 0x7F00, None, "OK", "HANDLE", 0x7F00),
        (OTHER, 1, None, "OK", "HANDLE", 1)]


def ro_table(ctx, py, **kw):
    t = full_table(ctx, py, **kw)
    S = ctypes.sizeof(ctx.m.struct("DLPackExchangeAPI"))
    return t, fenced(ctypes.string_at(t.address, S), readonly=True)   # a write to *api faults


def cws(ctx, py, api, device, flags, pending=None):
    s = ctx.T.dlpack_helpers_stream()
    s.kind, s.handle = 0x7777, 0x5EB7
    st, exc = py.call("dlpack_exchange_api_current_work_stream", api, dev(*device), flags, ctypes.byref(s), pending=pending)
    return st, (s.kind, s.handle or 0), exc


@case("exchange.exchange_api_current_work_stream.decode_table", profile="exchange",
      covers=["EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-6", "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-10",
              "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-12"])
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    NID = K.DLPACK_HELPERS_WORK_STREAM_NULL_IS_DEFAULT
    t, api = ro_table(ctx, py)
    for devices, h, nid, want, kind, handle in ROWS:
        for device in devices:
            for flags in ((0, NID) if nid is None else ((NID,) if nid else (0,))):
                py.lib.fx_cws_config(0, None, h, 1)
                st, got, exc = cws(ctx, py, api, device, flags)
                what = f"{device} answer {h:#x} flags {flags}"
                ctx.expect(st, want, what=what)
                no_exc(ctx, exc, what)
                ctx.check(py.lib.fx_cws_calls() == 1 and (py.lib.fx_cws_last(0), py.lib.fx_cws_last(1)) == device,
                          f"{what}: the table was called {py.lib.fx_cws_calls()} times for "
                          f"{(py.lib.fx_cws_last(0), py.lib.fx_cws_last(1))}")
                if want == "OK":
                    w = (getattr(K, "DLPACK_HELPERS_STREAM_" + kind), handle)
                    ctx.check(got == w, f"{what}: {got}, expected {w}")
                else:
                    ctx.check(got == (0x7777, 0x5EB7), f"{what}: out_stream written on failure")


@case("exchange.exchange_api_current_work_stream.argument_checks", profile="exchange",
      covers=["EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-1", "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-2",
              "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-3", "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-4",
              "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-5", "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-12"])
def _(ctx):
    py = Py(ctx)
    t, api = ro_table(ctx, py)
    py.lib.fx_cws_config(0, None, 0x1234, 1)
    s = ctx.T.dlpack_helpers_stream()
    for args in ((None, dev(2, 0), 0, ctypes.byref(s)), (api, dev(2, 0), 0, None)):
        st, exc = py.call("dlpack_exchange_api_current_work_stream", *args)
        ctx.expect(st, "NULL_POINTER")
    for bit in range(2, 32):
        st, got, exc = cws(ctx, py, api, (2, 0), 1 << bit)
        ctx.expect(st, "INVALID_ARGUMENT", what=f"flags bit {bit}")
        ctx.check(got == (0x7777, 0x5EB7), "out_stream written")
    for device in ((2, -1), (1, -1), (10, -(1 << 31))):
        st, got, exc = cws(ctx, py, api, device, 0)
        ctx.expect(st, "INVALID_DEVICE", what=str(device))
        ctx.check(got == (0x7777, 0x5EB7), "out_stream written")
    ctx.check(py.lib.fx_cws_calls() == 0, "the table was called before the argument checks")
    # Major 2, 0, 7: only header.version is readable.
    for major in (2, 0, 7):
        img = (ctypes.c_uint32 * 2)(major, 3)
        hdr = fenced(bytes(img), hi=8)
        st, got, exc = cws(ctx, py, hdr, (2, 0), 0)
        ctx.expect(st, "UNSUPPORTED_VERSION", what=f"major {major}")
        ctx.check(got == (0x7777, 0x5EB7), "out_stream written")
    t2, api2 = ro_table(ctx, py, current_work_stream=None)
    st, got, exc = cws(ctx, py, api2, (2, 0), 0)
    ctx.expect(st, "EXCHANGE_API_INVALID", what="NULL current_work_stream")
    ctx.check(got == (0x7777, 0x5EB7), "out_stream written")


@case("exchange.exchange_api_current_work_stream.failures", profile="exchange",
      covers=["EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-8", "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-9",
              "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-12", "OWN-PY-3"])
def _(ctx):
    py = Py(ctx)
    KEEP = ctx.K.DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR
    t, api = ro_table(ctx, py)
    for rc in (-1, 1):
        for e, want in ((BufferError("b"), "PRODUCER_BUFFER_ERROR"), (TypeError("t"), "PRODUCER_TYPE_ERROR"),
                        (ValueError("v"), "PRODUCER_ERROR"), (None, "PRODUCER_ERROR")):
            py.lib.fx_cws_config(rc, e, 0x1234, 0)
            st, got, exc = cws(ctx, py, api, (2, 0), 0)
            ctx.expect(st, want, what=f"rc {rc} with {e!r}")
            no_exc(ctx, exc, repr(e))
            ctx.check(got == (0x7777, 0x5EB7), "out_stream written on failure")
            if e is not None:
                ctx.check(type(e).__name__.encode() in ctx.last_error(), "the message lacks the exception")
                py.lib.fx_cws_config(rc, e, 0, 0)
                st, got, exc = cws(ctx, py, api, (2, 0), KEEP)
                ctx.expect(st, "PYTHON_ERROR_SET", what=f"KEEP: {e!r}")
                ctx.check(exc is e, f"KEEP: {e!r} not left set as it was: {exc!r}")
        for flags in (0, KEEP, 1 | KEEP):
            e = KeyboardInterrupt("k")
            py.lib.fx_cws_config(rc, e, 0, 0)
            st, got, exc = cws(ctx, py, api, (2, 0), flags)
            ctx.expect(st, "PYTHON_ERROR_SET", what=f"KeyboardInterrupt flags {flags}")
            ctx.check(exc is e, f"KeyboardInterrupt not left set as it was: {exc!r}")
            ctx.check(got == (0x7777, 0x5EB7), "out_stream written")
    py.lib.fx_cws_config(0, None, 0, 0)


@case("exchange.no_python_in_process", profile="exchange",
      covers=["EXCH-EXCHANGE-API-FIND-1", "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-7",
              "EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-11"])
def _(ctx):
    import os
    import subprocess
    from cases.core_ownership import clean_env, program
    getattr(ctx.f, "dlpack_exchange_api_find")
    exe = program(ctx, "fx_nopython_py")
    p = subprocess.run([str(exe), os.path.abspath(ctx.lib_path)], capture_output=True, text=True, timeout=20,
                       env=clean_env())
    ctx.check(p.returncode == 0, f"without Python (exit {p.returncode}): {p.stdout.strip()} {p.stderr.strip()[-300:]}")
