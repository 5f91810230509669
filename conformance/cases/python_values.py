"""Python profile: dlpack_status_python_exception (a mapping, as data) and
dlpack_python_stream_decode (checked against the core's dlpack_stream_decode, its reference for
None and integers; queue objects per PY-PYTHON-STREAM-DECODE-8)."""
import builtins
import ctypes

from cases._py import Obj, Py, dev, no_exc
from harness.registry import case

# The table of spec/functions/dlpack_status_python_exception.md: status code -> exception name.
EXC = {0: "", 1: "ValueError", 2: "ValueError", 3: "RuntimeError", 10: "BufferError", 11: "BufferError",
       12: "TypeError", 20: "BufferError", 21: "BufferError", 22: "BufferError", 23: "BufferError",
       24: "BufferError", 25: "BufferError", 26: "BufferError", 27: "BufferError", 28: "BufferError",
       29: "BufferError", 30: "BufferError", 31: "BufferError", 32: "BufferError", 33: "BufferError",
       34: "ValueError", 35: "ValueError", 36: "BufferError", 37: "MemoryError", 38: "BufferError",
       40: "ValueError", 41: "BufferError", 42: "BufferError", 43: "RuntimeError", 44: "RuntimeError",
       45: "RuntimeError", 46: "TypeError", 47: "BufferError", 48: "ValueError", 49: "RuntimeError",
       60: "RuntimeError", 61: "TypeError", 62: "ValueError", 63: "ValueError", 64: "AttributeError",
       65: "BufferError", 66: "TypeError", 67: "RuntimeError", 68: "TypeError", 69: "BufferError",
       70: "AttributeError", 71: "RuntimeError"}
OTHERS = [-1, -(1 << 31), 4, 9, 13, 19, 39, 50, 59, 72, 99, 1000, (1 << 31) - 1]


def _spe(ctx):
    f = ctx.f.dlpack_status_python_exception
    f.restype = ctypes.c_void_p
    return f


@case("python.status_python_exception.table", profile="python",
      covers=["PY-STATUS-PYTHON-EXCEPTION-1", "PY-STATUS-PYTHON-EXCEPTION-2", "PY-STATUS-PYTHON-EXCEPTION-3",
              "PY-STATUS-PYTHON-EXCEPTION-5"])
def _(ctx):
    f = _spe(ctx)
    # Every status of the manifest is in the page's table.
    for code in ctx.S.__dict__.values():
        ctx.check(code in EXC, f"suite: status {code} of the manifest missing from the table")
    first = {}
    for code in list(EXC) + OTHERS:
        p = f(code)
        ctx.check(p, f"status {code}: NULL")
        s = ctypes.string_at(p).decode("utf-8")
        want = EXC.get(code, "RuntimeError")
        ctx.check(s == want, f"status {code}: {s!r}, expected {want!r}")
        if s:
            ctx.check(isinstance(getattr(builtins, s, None), type) and issubclass(getattr(builtins, s), BaseException),
                      f"{s!r} is not a built-in exception")
        first[code] = (p, s)
    # Static: the storage still holds the same text after many more calls.
    for _ in range(3):
        for code in first:
            f(code)
    for code, (p, s) in first.items():
        ctx.check(ctypes.string_at(p).decode() == s, f"status {code}: the returned storage changed")


@case("python.status_python_exception.state_untouched", profile="python",
      covers=["PY-STATUS-PYTHON-EXCEPTION-4"])
def _(ctx):
    py = Py(ctx)
    # Set a known last-error message with a failing core call, then call the mapping.
    ctx.f.dlpack_stream_decode(ctx.T.DLDevice(1, -1), False, 0, 0, None)
    before = ctx.last_error()
    pending = KeyError("kept")
    for code in (0, 1, 37, 999):
        st, exc = py.call("dlpack_status_python_exception", code, pending=pending)
        ctx.check(exc is pending, f"status {code}: the Python error indicator changed to {exc!r}")
        ctx.check(ctx.last_error() == before, f"status {code}: the last-error message changed")


# -- dlpack_python_stream_decode ---------------------------------------------------------------
SENT_KIND, SENT_HANDLE = 0x7777, 0x5EB7_1E55


def stream():
    s = ctx_stream_type[0]()
    s.kind, s.handle = SENT_KIND, SENT_HANDLE
    return s


ctx_stream_type = [None]


def ref_decode(ctx, device, has, value, flags):
    s = stream()
    st = ctx.f.dlpack_stream_decode(ctx.T.DLDevice(*device), has, value, flags, ctypes.byref(s))
    return st, (s.kind, s.handle or 0)


def py_decode(ctx, py, obj, device, flags, pending=None):
    s = stream()
    st, exc = py.call("dlpack_python_stream_decode", Obj(obj), dev(*device), flags, ctypes.byref(s), pending=pending)
    return st, (s.kind, s.handle or 0), exc


class Idx:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


class RaisingIdx:
    def __init__(self, e):
        self.e = e

    def __index__(self):
        raise self.e


class Queue:
    def __init__(self, result, calls):
        self.result, self.calls = result, calls

    def addressof_ref(self, *a, **k):
        self.calls.append((a, k))
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


DEVICES = [(1, 0), (2, 0), (2, 3), (3, 0), (13, 0), (10, 0), (11, 1), (14, 0), (4, 0), (7, 0), (8, 0), (99, 0)]
INTS = [0, 1, 2, 3, -1, -2, 0x1000, (1 << 63) - 1, -(1 << 63)]


def setup(ctx):
    ctx_stream_type[0] = ctx.T.dlpack_helpers_stream


@case("python.python_stream_decode.none_and_integers", profile="python",
      covers=["PY-PYTHON-STREAM-DECODE-5", "PY-PYTHON-STREAM-DECODE-7", "PY-PYTHON-STREAM-DECODE-11"])
def _(ctx):
    setup(ctx)
    py = Py(ctx)
    lenient = ctx.K.DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM
    for device in DEVICES:
        for flags in (0, lenient):
            want = ref_decode(ctx, device, False, 0, flags)
            st, out, exc = py_decode(ctx, py, None, device, flags)
            no_exc(ctx, exc, "None")
            ctx.check((st, out if st == 0 else None) == (want[0], want[1] if want[0] == 0 else None),
                      f"None on {device} flags {flags}: {ctx.status_name(st)} {out}, reference {ctx.status_name(want[0])} {want[1]}")
            if st != 0:
                ctx.check(out == (SENT_KIND, SENT_HANDLE), "out_stream written on failure")
            for v in INTS:
                want = ref_decode(ctx, device, True, v, flags)
                for obj in (v, Idx(v)):
                    st, out, exc = py_decode(ctx, py, obj, device, flags)
                    no_exc(ctx, exc, repr(obj))
                    ctx.check(st == want[0] and (st != 0 or out == want[1]),
                              f"{v} ({type(obj).__name__}) on {device} flags {flags}: {ctx.status_name(st)} {out}, "
                              f"reference {ctx.status_name(want[0])} {want[1]}")
                    if st != 0:
                        ctx.check(out == (SENT_KIND, SENT_HANDLE), "out_stream written on failure")
                        ctx.check(len(ctx.last_error()) > 0, "no last-error message")
        for big in (1 << 63, -(1 << 63) - 1, 1 << 100):
            for obj in (big, Idx(big)):
                st, out, exc = py_decode(ctx, py, obj, device, 0)
                no_exc(ctx, exc, "big int")
                ctx.expect(st, "INVALID_STREAM", what=f"{big} on {device}")
                ctx.check(out == (SENT_KIND, SENT_HANDLE), "out_stream written on failure")


@case("python.python_stream_decode.bools_and_other_objects", profile="python",
      covers=["PY-PYTHON-STREAM-DECODE-6", "PY-PYTHON-STREAM-DECODE-9", "PY-PYTHON-STREAM-DECODE-11"])
def _(ctx):
    setup(ctx)
    py = Py(ctx)
    for device in DEVICES:
        for obj in (True, False):
            st, out, exc = py_decode(ctx, py, obj, device, 0)
            no_exc(ctx, exc, "bool")
            ctx.expect(st, "INVALID_STREAM_TYPE", what=f"{obj} on {device}")
            ctx.check(out == (SENT_KIND, SENT_HANDLE), "out_stream written on failure")
        if device[0] == 14:
            continue
        calls = []
        for obj in ("1", 1.0, object(), Queue(0x1000, calls)):
            st, out, exc = py_decode(ctx, py, obj, device, 0)
            no_exc(ctx, exc, repr(obj))
            ctx.expect(st, "INVALID_STREAM_TYPE", what=f"{obj!r} on {device}")
            ctx.check(out == (SENT_KIND, SENT_HANDLE), "out_stream written on failure")
        ctx.check(not calls, f"{device}: addressof_ref was called")


@case("python.python_stream_decode.oneapi_queues", profile="python",
      covers=["PY-PYTHON-STREAM-DECODE-8", "PY-PYTHON-STREAM-DECODE-10", "PY-PYTHON-STREAM-DECODE-11"])
def _(ctx):
    setup(ctx)
    py = Py(ctx)
    K = ctx.K

    class IntSub(int):
        pass

    rows = [(0x1000, "OK"), (1, "OK"), ((1 << 63) - 1, "OK"), (IntSub(0x2000), "OK"),
            (0, "INVALID_STREAM"), (-5, "INVALID_STREAM"), (1 << 63, "INVALID_STREAM"),
            (True, "INVALID_STREAM_TYPE"), (Idx(0x1000), "INVALID_STREAM_TYPE"), ("0x1000", "INVALID_STREAM_TYPE"),
            (None, "INVALID_STREAM_TYPE"), (ValueError("no queue"), "INVALID_STREAM_TYPE")]
    for result, want in rows:
        calls = []
        q = Queue(result, calls)
        st, out, exc = py_decode(ctx, py, q, (14, 0), 0)
        no_exc(ctx, exc, f"queue answering {result!r}")
        ctx.expect(st, want, what=f"addressof_ref() -> {result!r}")
        ctx.check(calls == [((), {})], f"addressof_ref called {calls}, expected once with no arguments")
        if want == "OK":
            ctx.check(out == (K.DLPACK_HELPERS_STREAM_SYCL_QUEUE, int(result)), f"{result!r}: decoded {out}")
        else:
            ctx.check(out == (SENT_KIND, SENT_HANDLE), "out_stream written on failure")
    # No addressof_ref at all.
    st, out, exc = py_decode(ctx, py, object(), (14, 0), 0)
    no_exc(ctx, exc, "object()")
    ctx.expect(st, "INVALID_STREAM_TYPE", what="object() on oneAPI")
    # An exception not deriving from Exception stays set, the same object.
    for make in (lambda e: Queue(e, []), RaisingIdx):
        e = KeyboardInterrupt("stop")
        for device in ((14, 0), (2, 0)) if make is RaisingIdx else ((14, 0),):
            st, out, exc = py_decode(ctx, py, make(e), device, 0)
            ctx.expect(st, "PYTHON_ERROR_SET", what=f"KeyboardInterrupt from {make} on {device}")
            ctx.check(exc is e, f"the KeyboardInterrupt was not left set as it was: {exc!r}")
            ctx.check(out == (SENT_KIND, SENT_HANDLE), "out_stream written on failure")
    # An ordinary exception from __index__: cleared; decoding answered as for a non-integer.
    st, out, exc = py_decode(ctx, py, RaisingIdx(ValueError("bad index")), (2, 0), 0)
    no_exc(ctx, exc, "__index__ raising ValueError")
    ctx.expect(st, "INVALID_STREAM_TYPE", what="__index__ raising ValueError")


@case("python.python_stream_decode.argument_checks", profile="python",
      covers=["PY-PYTHON-STREAM-DECODE-1", "PY-PYTHON-STREAM-DECODE-2", "PY-PYTHON-STREAM-DECODE-4",
              "PY-PYTHON-STREAM-DECODE-11", "OWN-PY-3"])
def _(ctx):
    setup(ctx)
    py = Py(ctx)
    s = stream()
    st, exc = py.call("dlpack_python_stream_decode", None, dev(1, 0), 0, ctypes.byref(s))
    ctx.expect(st, "NULL_POINTER", what="NULL obj")
    no_exc(ctx, exc, "NULL obj")
    st, exc = py.call("dlpack_python_stream_decode", Obj(None), dev(1, 0), 0, None)
    ctx.expect(st, "NULL_POINTER", what="NULL out_stream")
    allowed = ctx.K.DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM
    for bit in range(32):
        if (1 << bit) & allowed:
            continue
        calls = []
        st, out, exc = py_decode(ctx, py, Idx(1) if bit % 2 else Queue(0x1000, calls), (14, 0), 1 << bit)
        ctx.expect(st, "INVALID_ARGUMENT", what=f"flags bit {bit}")
        no_exc(ctx, exc, "flags")
        ctx.check(not calls and out == (SENT_KIND, SENT_HANDLE), f"flags bit {bit}: Python code ran or out written")
    for device in ((1, -1), (2, -1), (14, -(1 << 31))):
        for obj in (None, 1, Queue(0x1000, [])):
            st, out, exc = py_decode(ctx, py, obj, device, 0)
            ctx.expect(st, "INVALID_DEVICE", what=f"{obj!r} on {device}")
            no_exc(ctx, exc, "negative id")
            ctx.check(out == (SENT_KIND, SENT_HANDLE), "out_stream written on failure")
