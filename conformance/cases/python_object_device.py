"""Python profile: dlpack_object_query_device and dlpack_object_get_device (the result of a
producer's __dlpack_device__ as a data table, then the exception rules of both modes)."""
import ctypes
import enum

from cases._py import Obj, Py, no_exc
from harness.registry import case

SENT = (0x5EB7, 0x1E55)          # device type and id written before each call


class Dev:
    """A producer whose __dlpack_device__ returns `result` (or raises it), counting calls."""

    def __init__(self, result):
        self.result, self.calls = result, []

    def __dlpack_device__(self, *a, **k):
        self.calls.append((a, k))
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


class E(enum.IntEnum):
    CPU = 1
    CUDA = 2


class BadLen(tuple):
    def __len__(self):
        raise ValueError("len")


class BadItem(tuple):
    def __getitem__(self, i):
        raise ValueError("item")


class BadIndex:
    def __index__(self):
        raise ValueError("index")


I32MAX, I32MIN = (1 << 31) - 1, -(1 << 31)
# (result, expected status, expected device on OK)
ROWS = [
    ((1, None), "OK", (1, 0)), ((1, 0), "OK", (1, 0)), ((2, 3), "OK", (2, 3)), ([2, 1], "OK", (2, 1)),
    ((E.CUDA, 0), "OK", (2, 0)), ((E.CPU, None), "OK", (1, 0)), ((-5, 0), "OK", (-5, 0)), ((999, 7), "OK", (999, 7)),
    ((I32MAX, I32MAX), "OK", (I32MAX, I32MAX)), ((I32MIN, 0), "OK", (I32MIN, 0)),
    ((2, None), "BAD_PRODUCER_RESULT", None), ((1,), "BAD_PRODUCER_RESULT", None), ((1, 0, 0), "BAD_PRODUCER_RESULT", None),
    ((), "BAD_PRODUCER_RESULT", None), ((True, 0), "BAD_PRODUCER_RESULT", None), ((1, False), "BAD_PRODUCER_RESULT", None),
    ((1.0, 0), "BAD_PRODUCER_RESULT", None), ((1, 0.0), "BAD_PRODUCER_RESULT", None), (("1", 0), "BAD_PRODUCER_RESULT", None),
    ((I32MAX + 1, 0), "BAD_PRODUCER_RESULT", None), ((1, I32MAX + 1), "BAD_PRODUCER_RESULT", None),
    ((I32MIN - 1, 0), "BAD_PRODUCER_RESULT", None), ((1, 1 << 64), "BAD_PRODUCER_RESULT", None),
    ((None, 0), "BAD_PRODUCER_RESULT", None), (5, "BAD_PRODUCER_RESULT", None), (None, "BAD_PRODUCER_RESULT", None),
    ((1, -1), "INVALID_DEVICE", None), ((2, I32MIN), "INVALID_DEVICE", None),
    (BadLen((1, 0)), "BAD_PRODUCER_RESULT", None), (BadItem((1, 0)), "BAD_PRODUCER_RESULT", None),
    ((BadIndex(), 0), "BAD_PRODUCER_RESULT", None),
    (BufferError("b"), "PRODUCER_BUFFER_ERROR", None), (TypeError("t"), "PRODUCER_TYPE_ERROR", None),
    (ValueError("v"), "PRODUCER_ERROR", None), (AttributeError("inside"), "PRODUCER_ERROR", None),
    (NotImplementedError("n"), "PRODUCER_ERROR", None),
]


def query(ctx, py, fn, obj, flags=0, pending=None):
    d = ctx.T.DLDevice(*SENT)
    args = (Obj(obj), flags, ctypes.byref(d)) if fn == "dlpack_object_query_device" else (Obj(obj), ctypes.byref(d))
    st, exc = py.call(fn, *args, pending=pending)
    t = d.device_type & 0xFFFFFFFF
    return st, (t - (1 << 32) if t >= 1 << 31 else t, d.device_id), exc


@case("python.object_query_device.results", profile="python",
      covers=["PY-OBJECT-QUERY-DEVICE-4", "PY-OBJECT-QUERY-DEVICE-5", "PY-OBJECT-QUERY-DEVICE-6",
              "PY-OBJECT-QUERY-DEVICE-7", "PY-OBJECT-QUERY-DEVICE-8", "PY-OBJECT-QUERY-DEVICE-11",
              "PY-OBJECT-GET-DEVICE-1", "PY-OBJECT-GET-DEVICE-2", "OWN-PY-3"])
def _(ctx):
    py = Py(ctx)
    for fn in ("dlpack_object_query_device", "dlpack_object_get_device"):
        for result, want, dev in ROWS:
            p = Dev(result)
            st, got, exc = query(ctx, py, fn, p)
            what = f"{fn}: __dlpack_device__() -> {result!r}"
            ctx.expect(st, want, what=what)
            no_exc(ctx, exc, what)
            ctx.check(p.calls == [((), {})], f"{what}: called {p.calls}, expected once without arguments")
            if want == "OK":
                ctx.check(got == dev, f"{what}: wrote {got}, expected {dev}")
            else:
                ctx.check(got == SENT, f"{what}: out_device written on failure")
                m = ctx.last_error()
                ctx.check(m, f"{what}: empty message")
                if isinstance(result, Exception):
                    ctx.check(type(result).__name__.encode() in m, f"{what}: the message {m!r} does not name the exception")
        # No __dlpack_device__ at all.
        st, got, exc = query(ctx, py, fn, object())
        ctx.expect(st, "NO_DLPACK_METHOD", what=f"{fn}: object()")
        no_exc(ctx, exc, "object()")
        ctx.check(got == SENT, "out_device written")


@case("python.object_query_device.keep_python_error", profile="python",
      covers=["PY-OBJECT-QUERY-DEVICE-9", "PY-OBJECT-QUERY-DEVICE-10", "PY-OBJECT-QUERY-DEVICE-11",
              "PY-OBJECT-GET-DEVICE-1", "PY-OBJECT-GET-DEVICE-2", "OWN-PY-3"])
def _(ctx):
    py = Py(ctx)
    KEEP = ctx.K.DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR
    for e in (ValueError("v"), BufferError("b"), TypeError("t"), AttributeError("a")):
        st, got, exc = query(ctx, py, "dlpack_object_query_device", Dev(e), KEEP)
        ctx.expect(st, "PYTHON_ERROR_SET", what=f"KEEP: raising {e!r}")
        ctx.check(exc is e, f"KEEP: {e!r} not left set as it was ({exc!r})")
        ctx.check(got == SENT, "out_device written")
    st, got, exc = query(ctx, py, "dlpack_object_query_device", object(), KEEP)
    ctx.expect(st, "PYTHON_ERROR_SET", what="KEEP: no __dlpack_device__")
    ctx.check(isinstance(exc, AttributeError), f"KEEP: lookup's AttributeError not left set ({exc!r})")
    for result in (BadLen((1, 0)), BadItem((1, 0))):
        st, got, exc = query(ctx, py, "dlpack_object_query_device", Dev(result), KEEP)
        ctx.expect(st, "PYTHON_ERROR_SET", what=f"KEEP: {type(result).__name__}")
        ctx.check(isinstance(exc, ValueError), f"KEEP: the reading's exception not left set ({exc!r})")
    for result in ((1.0, 0), (True, 0), (1, 0, 0), (2, None), (BadIndex(), 0)):
        st, got, exc = query(ctx, py, "dlpack_object_query_device", Dev(result), KEEP)
        ctx.expect(st, "BAD_PRODUCER_RESULT", what=f"KEEP: {result!r}")
        no_exc(ctx, exc, f"KEEP: {result!r}")
    # Not deriving from Exception: left set in both modes, for both functions.
    for fn, flags in (("dlpack_object_query_device", 0), ("dlpack_object_query_device", KEEP),
                      ("dlpack_object_get_device", 0)):
        for e in (KeyboardInterrupt("k"), SystemExit(3), GeneratorExit()):
            st, got, exc = query(ctx, py, fn, Dev(e), flags)
            ctx.expect(st, "PYTHON_ERROR_SET", what=f"{fn} flags {flags}: {e!r}")
            ctx.check(exc is e, f"{fn}: {e!r} not left set as it was ({exc!r})")
            ctx.check(got == SENT, "out_device written")


@case("python.object_query_device.argument_checks", profile="python",
      covers=["PY-OBJECT-QUERY-DEVICE-1", "PY-OBJECT-QUERY-DEVICE-2", "PY-OBJECT-GET-DEVICE-1"])
def _(ctx):
    py = Py(ctx)
    d = ctx.T.DLDevice(*SENT)
    p = Dev((1, 0))
    for fn, args in (("dlpack_object_query_device", (None, 0, ctypes.byref(d))),
                     ("dlpack_object_query_device", (Obj(p), 0, None)),
                     ("dlpack_object_query_device", (None, 1 << 9, None)),
                     ("dlpack_object_get_device", (None, ctypes.byref(d))),
                     ("dlpack_object_get_device", (Obj(p), None))):
        st, exc = py.call(fn, *args)
        ctx.expect(st, "NULL_POINTER", what=f"{fn} {args}")
        no_exc(ctx, exc, fn)
    ctx.check(not p.calls and (d.device_type, d.device_id) == SENT, "looked up or wrote on NULL_POINTER")
    KEEP = ctx.K.DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR
    looked = []

    class Watch:
        def __getattribute__(self, name):
            looked.append(name)
            return object.__getattribute__(self, name)

        def __dlpack_device__(self):
            return (1, 0)

    w = Watch()
    for bit in range(32):
        if (1 << bit) & KEEP:
            continue
        st, got, exc = query(ctx, py, "dlpack_object_query_device", w, (1 << bit) | KEEP)
        ctx.expect(st, "INVALID_ARGUMENT", what=f"flags bit {bit}")
        no_exc(ctx, exc, "flags")
        ctx.check(got == SENT, "out_device written")
    ctx.check(not looked, f"looked up {looked} on the object with invalid flags")
