"""A producer's table at work (spec/profiles/exchange.md, EXCH-TABLE-6..23), framework-neutral:
instances of the type are made through the table itself (managed_tensor_to_py_object_no_sync on a
guarded, counting, poisoning fixture tensor), every slot is called through fx_call (the status
and the Python exception it left, both seen), the allocator also without the GIL."""
import ctypes
import gc
import sys
import threading

from cases._common import fenced
from cases._py import Py, cap_name, cap_pointer
from harness.registry import case

SENT = 0x5EB7_1E55_0000_0042
V = None


def slot_address(ctx, name):
    if ctx.api is None:
        ctx.check(False, "the type has no valid __dlpack_c_exchange_api__ capsule")
    return ctypes.cast(getattr(ctx.api, name), ctypes.c_void_p).value or 0


def call(ctx, py, name, *args, pending=None):
    a = slot_address(ctx, name)
    ctx.check(a, f"{name} is NULL")
    args = [x if isinstance(x, int) else ctypes.cast(x, ctypes.c_void_p).value or 0 if isinstance(x, ctypes._Pointer)
            else ctypes.addressof(x._obj) if type(x).__name__ == "CArgObject" else ctypes.addressof(x) for x in args]
    args = [x & 0xFFFFFFFFFFFFFFFF for x in args] + [0] * (6 - len(args))
    st = py.lib.fx_call(a, pending, 0, *args)
    return st, py.lib.fx_take_exc()


def to_py(ctx, py, **kw):
    """(status, exception, object or None, fixture tensor, record) of to_py on a fixture tensor."""
    p, rec = ctx.make_versioned(**kw)
    out = ctypes.c_void_p(SENT)
    st, exc = call(ctx, py, "managed_tensor_to_py_object_no_sync", p, ctypes.byref(out))
    obj = py.take(out.value) if st == 0 and out.value not in (None, SENT) else None
    return st, exc, obj, p, rec, out.value


def instance(ctx, py, shape=(2, 3)):
    st, exc, obj, p, rec, _ = to_py(ctx, py, shape=shape)
    ctx.check(st == 0 and exc is None and obj is not None,
              f"managed_tensor_to_py_object_no_sync failed on a CPU float32 tensor (returned {st}, {exc!r})")
    # Only objects of the table's type may be passed to its from_py functions (EXCH-TABLE-25):
    # a to_py that makes another type leaves the suite no framework-neutral instance.
    ctx.check(isinstance(obj, ctx.cls), f"cannot make an instance through the table: to_py made a "
                                        f"{type(obj).__module__}.{type(obj).__qualname__}, not a {ctx.cls.__qualname__} (EXCH-TABLE-17)")
    return obj, p, rec


def export(ctx, py, obj):
    out = ctypes.c_void_p(SENT)
    st, exc = call(ctx, py, "managed_tensor_from_py_object_no_sync", ctypes.py_object(obj) and id(obj), ctypes.byref(out))
    return st, exc, out.value


def desc(ctx, d):
    """What EXCH-TABLE-15 compares: device, dtype, shape, data + byte_offset, strides of extents > 1."""
    shape = [d.shape[i] for i in range(d.ndim)] if d.ndim else []
    if d.strides:
        st = [d.strides[i] for i in range(d.ndim)]
    else:
        st, acc = [0] * d.ndim, 1
        for i in reversed(range(d.ndim)):
            st[i] = acc
            acc *= max(shape[i], 1)
    return dict(device=(d.device.device_type, d.device.device_id), dtype=(d.dtype.code, d.dtype.bits, d.dtype.lanes),
                shape=shape, addr=(d.data or 0) + d.byte_offset,
                strides=[s for s, n in zip(st, shape) if n > 1])


def release(ctx, p):
    t = ctx.versioned(p)
    if t.deleter:
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(ctypes.cast(t.deleter, ctypes.c_void_p).value)(p)


def gone(ctx, rec, obj_holder):
    obj_holder.clear()
    gc.collect()
    return ctx.calls(rec)


@case("table.to_py_object", profile="table",
      covers=["EXCH-TABLE-17", "EXCH-TABLE-7", "EXCH-TABLE-8", "EXCH-TABLE-11"])
def _(ctx):
    py = Py(ctx)
    st, exc, obj, p, rec, out = to_py(ctx, py)
    ctx.check(st == 0, f"returned {st} for a CPU float32 tensor")
    ctx.check(exc is None, f"returned 0 with an exception set: {exc!r}")
    ctx.check(isinstance(obj, ctx.cls), f"the object is a {type(obj)!r}, not of the producer's type")
    ctx.check(sys.getrefcount(obj) == 2, f"the returned reference is not the only one ({sys.getrefcount(obj) - 1})")
    ctx.check(ctx.calls(rec) == 0, "the tensor was released while its object lives")
    # The object views the tensor's data.
    est, eexc, e = export(ctx, py, obj)
    if est == 0 and e:
        d = ctx.versioned(e).dl_tensor
        ctx.check((d.data or 0) + d.byte_offset == ctx.versioned(p).dl_tensor.data,
                  "the object does not view the tensor's data")
        release(ctx, e)
    holder = [obj]
    del obj
    n = gone(ctx, rec, holder)
    ctx.check(n == 1, f"the object's death released the tensor {n} times, not once")


REFUSABLE = (dict(device=(99, 0)), dict(dtype=(77, 8, 1)), dict(version=(2, 0)), dict(device=(1, 5)),
             dict(dtype=(2, 32, 0)))


def _refused(ctx, check_release):
    # Tensors a producer may refuse (an unassigned device type, an unknown dtype, version 2, ...):
    # on failure -1, an exception, nothing in *out (and the tensor released exactly once,
    # EXCH-TABLE-17); on success an object that releases it once.
    py = Py(ctx)
    for kw in REFUSABLE:
        st, exc, obj, p, rec, out = to_py(ctx, py, **kw)
        what = f"to_py of a tensor {kw}"
        if st == 0:
            ctx.check(exc is None, f"{what}: 0 with an exception set: {exc!r}")
            ctx.check(obj is not None, f"{what}: 0 without an object")
            holder = [obj]
            del obj
            n = gone(ctx, rec, holder)
            if check_release:
                ctx.check(n == 1, f"{what}: the object's death released the tensor {n} times")
        elif check_release:
            ctx.check(ctx.calls(rec) == 1, f"{what}: failed and released the tensor {ctx.calls(rec)} times, not once")
        else:
            ctx.check(st == -1, f"{what}: returned {st}, not -1")
            ctx.check(isinstance(exc, BaseException), f"{what}: -1 without a Python exception")
            ctx.check(out in (SENT, None, 0), f"{what}: *out_py_object written on failure")


@case("table.to_py_object_refused", profile="table",
      covers=["EXCH-TABLE-7", "EXCH-TABLE-8", "EXCH-TABLE-12", "EXCH-TABLE-11"])
def _(ctx):
    _refused(ctx, False)


@case("table.to_py_object_refused_released", profile="table", covers=["EXCH-TABLE-17"])
def _(ctx):
    _refused(ctx, True)


@case("table.from_py_object", profile="table",
      covers=["EXCH-TABLE-13", "EXCH-TABLE-7", "EXCH-TABLE-8", "EXCH-TABLE-15", "EXCH-TABLE-11"])
def _(ctx):
    py = Py(ctx)
    for shape in ((2, 3), (4,), (), (3, 1, 2)):
        obj, p, rec = instance(ctx, py, shape)
        st, exc, e = export(ctx, py, obj)
        what = f"from_py_object on a {shape} object"
        ctx.check(st == 0, f"{what}: returned {st} ({exc!r})")
        ctx.check(exc is None, f"{what}: 0 with an exception set: {exc!r}")
        t = ctx.versioned(e)
        ctx.check(t.version.major == 1, f"{what}: version {t.version.major}.{t.version.minor}")
        mine = desc(ctx, t.dl_tensor)
        ctx.check(mine["addr"] == ctx.versioned(p).dl_tensor.data and mine["shape"] == list(shape),
                  f"{what}: the export does not describe the object's data: {mine}")
        # EXCH-TABLE-15: the same description as __dlpack__().
        cap = obj.__dlpack__()
        name = cap_name(cap)
        ctx.check(name in (b"dltensor_versioned", b"dltensor"), f"__dlpack__() returned a capsule named {name!r}")
        q = cap_pointer(cap)
        d = ctx.versioned(q).dl_tensor if name == b"dltensor_versioned" else ctx.T.DLManagedTensor.from_address(q).dl_tensor
        ctx.check(desc(ctx, d) == mine, f"{what}: __dlpack__ gives {desc(ctx, d)}, the table {mine}")
        del cap, d
        release(ctx, e)
        holder = [obj]
        del obj
        n = gone(ctx, rec, holder)
        ctx.check(n == 1, f"{what}: after the export's release and the object's death the tensor was released {n} times")


@case("table.dltensor_from_py_object", profile="table",
      covers=["EXCH-TABLE-6", "EXCH-TABLE-14", "EXCH-TABLE-15", "EXCH-TABLE-7", "EXCH-TABLE-8"])
def _(ctx):
    py = Py(ctx)
    if not slot_address(ctx, "dltensor_from_py_object_no_sync"):
        return  # MAY be NULL (EXCH-TABLE-6)
    for shape in ((2, 3), (5,), ()):
        obj, p, rec = instance(ctx, py, shape)
        D = ctx.T.DLTensor()
        ctypes.memset(ctypes.addressof(D), 0x5A, ctypes.sizeof(D))
        st, exc = call(ctx, py, "dltensor_from_py_object_no_sync", id(obj), ctypes.byref(D))
        what = f"dltensor_from_py_object on a {shape} object"
        ctx.check(st == 0 and exc is None, f"{what}: returned {st} ({exc!r})")
        mine = desc(ctx, D)
        ctx.check(mine["addr"] == ctx.versioned(p).dl_tensor.data and mine["shape"] == list(shape), f"{what}: {mine}")
        st2, exc2, e = export(ctx, py, obj)
        if st2 == 0:
            ctx.check(desc(ctx, ctx.versioned(e).dl_tensor) == mine, f"{what}: differs from the owning export")
            release(ctx, e)
        holder = [obj]
        del obj
        gone(ctx, rec, holder)


class SetError:
    def __init__(self, ctx):
        self.calls = []
        self.cb = ctx.SETERROR(self._f)

    def _f(self, ctx_ptr, kind, message):
        self.calls.append((ctx_ptr, kind, message))


def run_alloc(ctx, proto, gil, thread=False):
    se = SetError(ctx)
    out = ctypes.c_void_p(SENT)
    fn = ctx.slot("managed_tensor_allocator", gil=gil)
    ctx.check(fn is not None, "managed_tensor_allocator is NULL")
    V = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)
    res = []
    go = lambda: res.append(fn(ctypes.cast(proto, ctypes.POINTER(ctx.T.DLTensor)),
                               ctypes.cast(ctypes.addressof(out), ctypes.POINTER(V)), 0x77, se.cb))
    if thread:
        th = threading.Thread(target=go)
        th.start()
        th.join(30)
    else:
        go()
    return res[0] if res else None, out.value, se.calls


@case("table.allocator", profile="table",
      covers=["EXCH-TABLE-18", "EXCH-TABLE-10", "EXCH-TABLE-23", "EXCH-TABLE-7", "EXCH-TABLE-12", "EXCH-TABLE-11"])
def _(ctx):
    T = ctx.T
    D = T.DLTensor
    # The first row (CPU float32) must succeed; a producer may refuse the others (-1 and SetError
    # once, nothing to release), but what it makes must match the prototype.
    for row, (shape, dtype) in enumerate((((2, 3), (2, 32, 1)), ((7,), (0, 8, 1)), ((), (2, 64, 1)),
                                          ((4, 1, 2), (0, 32, 1)))):
        n = len(shape)
        sp = ctx.int64_array(list(shape)) if n else None
        img = D()
        img.data = 0x5A5A5A5A
        img.device.device_type, img.device.device_id = 1, 0
        img.ndim = n
        img.dtype.code, img.dtype.bits, img.dtype.lanes = dtype
        img.shape = ctypes.cast(sp, type(img.shape)) if sp else None
        img.byte_offset = 0x5A5A
        raw = ctypes.string_at(ctypes.addressof(img), ctypes.sizeof(D))
        # Reading data (before device) or strides/byte_offset (after shape) faults.
        protos = (fenced(raw, lo=D.device.offset), fenced(raw, hi=D.strides.offset))
        for proto in protos:
            for gil, thread in ((True, False), (False, False), (False, True)):
                rc, out, errs = run_alloc(ctx, proto, gil, thread)
                what = f"allocator {shape} dtype {dtype} ({'GIL' if gil else 'no GIL'}{', thread' if thread else ''})"
                if row and rc == -1:
                    ctx.check(len(errs) == 1 and errs[0][0] == 0x77, f"{what}: refused with SetError calls {errs}")
                    ctx.check(out in (SENT, None, 0), f"{what}: *out written on failure")
                    continue
                ctx.check(rc == 0, f"{what}: returned {rc} (SetError: {errs})")
                ctx.check(not errs, f"{what}: SetError called on success: {errs}")
                t = ctx.versioned(out)
                d = t.dl_tensor
                ctx.check(t.version.major == 1, f"{what}: version {t.version.major}")
                ctx.check((d.device.device_type, d.device.device_id) == (1, 0) and d.ndim == n
                          and (d.dtype.code, d.dtype.bits, d.dtype.lanes) == dtype
                          and [d.shape[i] for i in range(n)] == list(shape), f"{what}: {desc(ctx, d)}")
                release(ctx, out)
    # Requests a producer may refuse: -1 with SetError exactly once (NUL-terminated texts), nothing to release.
    for kw in (dict(device=(99, 0)), dict(dtype=(77, 8, 1)), dict(shape=(1 << 40, 1 << 40))):
        shape = kw.get("shape", (2, 3))
        sp = ctx.int64_array(list(shape))
        img = D()
        img.device.device_type, img.device.device_id = kw.get("device", (1, 0))
        img.ndim = len(shape)
        img.dtype.code, img.dtype.bits, img.dtype.lanes = kw.get("dtype", (2, 32, 1))
        img.shape = ctypes.cast(sp, type(img.shape))
        rc, out, errs = run_alloc(ctx, ctypes.addressof(img), True)
        what = f"allocator {kw}"
        if rc == 0:
            ctx.check(not errs, f"{what}: SetError called on success")
            release(ctx, out)
            continue
        ctx.check(rc == -1, f"{what}: returned {rc}, not -1")
        ctx.check(len(errs) == 1, f"{what}: SetError called {len(errs)} times, not once")
        ctx.check(errs[0][0] == 0x77, f"{what}: SetError got another error_ctx")
        ctx.check(errs[0][1] is not None and errs[0][2] is not None, f"{what}: NULL kind or message")
        ctx.check(out in (SENT, None, 0), f"{what}: *out written on failure")


@case("table.current_work_stream_cpu", profile="table", covers=["EXCH-TABLE-19", "EXCH-TABLE-7", "EXCH-TABLE-8"])
def _(ctx):
    py = Py(ctx)
    out = ctypes.c_void_p(SENT)
    st, exc = call(ctx, py, "current_work_stream", 1, 0, ctypes.byref(out))
    ctx.check(st == 0, f"current_work_stream(kDLCPU, 0) returned {st} ({exc!r})")
    ctx.check(exc is None, f"returned 0 with an exception set: {exc!r}")
    ctx.check(out.value != SENT, "returned 0 without writing *out_current_stream")


@case("table.current_work_stream_devices", profile="table", covers=["EXCH-TABLE-7", "EXCH-TABLE-8", "EXCH-TABLE-11"])
def _(ctx):
    # Any device may be asked for (success is required only for kDLCPU): 0 or -1 with the
    # exception rules, never a crash, whatever devices the process has.
    py = Py(ctx)
    for device in ((2, 0), (10, 0), (13, 0), (8, 0), (14, 0)):
        out = ctypes.c_void_p(SENT)
        st, exc = call(ctx, py, "current_work_stream", device[0], device[1], ctypes.byref(out))
        ctx.check(st in (0, -1), f"current_work_stream{device} returned {st}")
        if st == 0:
            ctx.check(exc is None, f"current_work_stream{device}: 0 with an exception set: {exc!r}")
        else:
            ctx.check(isinstance(exc, BaseException), f"current_work_stream{device}: -1 without an exception")


@case("table.current_work_stream_not_null", profile="table", covers=["EXCH-TABLE-21"], advisory=True)
def _(ctx):
    py = Py(ctx)
    for device in ((2, 0), (10, 0)):
        out = ctypes.c_void_p(SENT)
        st, exc = call(ctx, py, "current_work_stream", device[0], device[1], ctypes.byref(out))
        if st == 0:
            ctx.check(out.value not in (None, 0), f"current_work_stream{device} answered NULL (ambiguous)")


@case("table.unchanged", profile="table", covers=["EXCH-TABLE-2"])
def _(ctx):
    S = ctypes.sizeof(ctx.m.struct("DLPackExchangeAPI"))
    ctx.check(ctx.api is not None, "the type has no valid __dlpack_c_exchange_api__ capsule")
    before = ctypes.string_at(ctx.api_address, S)
    py = Py(ctx)
    out = ctypes.c_void_p(SENT)
    call(ctx, py, "current_work_stream", 1, 0, ctypes.byref(out))
    st, exc, obj, p, rec, _ = to_py(ctx, py)
    if isinstance(obj, ctx.cls):
        st, exc, e = export(ctx, py, obj)
        if st == 0:
            release(ctx, e)
    del obj
    ctx.check(ctypes.string_at(ctx.api_address, S) == before, "the table changed while it was used")
