"""Python profile: dlpack_capsule_new_view and dlpack_capsule_new_view_validated (a capsule
holding a view of a caller's DLTensor that keeps a Python owner alive), and the destructor's
view rule (PY-CAPSULE-DESTRUCTOR-8). The owner's reference count is read with sys.getrefcount;
input arrays are guarded fixture memory, made PROT_NONE after the call (nothing kept)."""
import ctypes
import sys
import threading

from cases._common import protect, PROT_NONE
from cases._py import Obj, Py, api, cap_name, cap_pointer, no_exc
from harness.registry import case

FUNCS = ("dlpack_capsule_new_view", "dlpack_capsule_new_view_validated")
SENT = 0x5EB7_1E55_0000_0042
BIT63 = 1 << 63


def pre(fn):
    return "PY-CAPSULE-NEW-VIEW-VALIDATED" if fn.endswith("validated") else "PY-CAPSULE-NEW-VIEW"


def call(py, fn, t, flags, owner, kind, out, **kw):
    return py.call(fn, t, flags, Obj(owner) if owner is not None else None, kind, out, **kw)


def refused(ctx, py, fn, t, flags, kind, want, what, owner=None, **kw):
    owner = owner if owner is not None else [what]
    rc = sys.getrefcount(owner)
    out = ctypes.c_void_p(SENT)
    st, exc = call(py, fn, t, flags, owner, kind, ctypes.byref(out), **kw)
    ctx.expect(st, *want, what=f"{fn}: {what}") if isinstance(want, tuple) else ctx.expect(st, want, what=f"{fn}: {what}")
    no_exc(ctx, exc, f"{fn}: {what}")
    ctx.check(out.value == SENT, f"{fn}: {what}: out_capsule written")
    ctx.check(sys.getrefcount(owner) == rc, f"{fn}: {what}: owner references {rc} -> {sys.getrefcount(owner)}")
    m = ctx.last_error()
    ctx.check(m, f"{fn}: {what}: empty message")


@case("python.capsule_new_view.argument_checks", profile="python",
      covers=["PY-CAPSULE-NEW-VIEW-1", "PY-CAPSULE-NEW-VIEW-2", "PY-CAPSULE-NEW-VIEW-3", "PY-CAPSULE-NEW-VIEW-13",
              "PY-CAPSULE-NEW-VIEW-VALIDATED-1", "PY-CAPSULE-NEW-VIEW-VALIDATED-2",
              "PY-CAPSULE-NEW-VIEW-VALIDATED-3", "PY-CAPSULE-NEW-VIEW-VALIDATED-11", "OWN-PY-3"])
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    V, L = K.DLPACK_HELPERS_EXPORT_VERSIONED, K.DLPACK_HELPERS_EXPORT_LEGACY
    t = ctx.make_dltensor()
    for fn in FUNCS:
        owner = ["o"]
        out = ctypes.c_void_p(SENT)
        for args, what in (((None, 0, owner, V, ctypes.byref(out)), "NULL tensor"),
                           ((t, 0, None, V, ctypes.byref(out)), "NULL owner"),
                           ((t, 0, owner, V, None), "NULL out_capsule"),
                           ((None, 1 << 40, owner, 77, ctypes.byref(out)), "NULL tensor before other checks")):
            rc = sys.getrefcount(owner)
            st, exc = call(py, fn, *args)
            ctx.expect(st, "NULL_POINTER", what=f"{fn}: {what}")
            no_exc(ctx, exc, what)
            ctx.check(out.value == SENT and sys.getrefcount(owner) == rc, f"{fn}: {what}: out written or owner referenced")
        for kind in (2, 3, -1, 1 << 20):
            refused(ctx, py, fn, t, 0, kind, "INVALID_ARGUMENT", f"kind {kind}")
        for bit in range(3, 63):
            refused(ctx, py, fn, t, 1 << bit, V, "INVALID_FLAGS", f"flags bit {bit}")


def rows_common(ctx):
    """(what, tensor kwargs, flags, expected status for new_view)."""
    A = ctx.K.DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE
    return [
        ("device id -1", dict(device=(1, -1)), 0, "INVALID_DEVICE"),
        ("device id -1 allowed unassigned", dict(device=(1, -1)), A, "INVALID_DEVICE"),
        ("device type 5", dict(device=(5, 0)), 0, "INVALID_DEVICE"),
        ("device type 19", dict(device=(19, 0)), 0, "INVALID_DEVICE"),
        ("device type 0", dict(device=(0, 0)), 0, "INVALID_DEVICE"),
        ("ndim -1", dict(shape=(2,), ndim=-1), 0, "INVALID_NDIM"),
        ("ndim above max", dict(shape=(2,), ndim=int(ctx.K.DLPACK_HELPERS_MAX_NDIM) + 1), 0, "INVALID_NDIM"),
        ("NULL shape", dict(shape=None, ndim=2), 0, "NULL_SHAPE"),
    ]


@case("python.capsule_new_view.validation", profile="python",
      covers=["PY-CAPSULE-NEW-VIEW-4", "PY-CAPSULE-NEW-VIEW-5", "PY-CAPSULE-NEW-VIEW-9", "PY-CAPSULE-NEW-VIEW-13",
              "PY-CAPSULE-NEW-VIEW-VALIDATED-4", "PY-CAPSULE-NEW-VIEW-VALIDATED-5", "PY-CAPSULE-NEW-VIEW-VALIDATED-7",
              "PY-CAPSULE-NEW-VIEW-VALIDATED-11"])
def _(ctx):
    py = Py(ctx)
    V = ctx.K.DLPACK_HELPERS_EXPORT_VERSIONED
    rows = rows_common(ctx)
    only_view = [("negative extent", dict(shape=(2, -3)), 0, "INVALID_SHAPE"),
                 ("lanes 0", dict(dtype=(2, 32, 0)), 0, "INVALID_DTYPE"),
                 ("bits 0", dict(dtype=(2, 0, 1)), 0, "INVALID_DTYPE"),
                 ("overflowing count", dict(shape=(1 << 62, 1 << 62), data=0x1000), 0, "OVERFLOW"),
                 ("NULL data", dict(shape=(2, 3), data="null"), 0, "NULL_DATA")]
    # Filled-in compact strides that overflow int64 although the element count is 0.
    stride_overflow = [("compact stride overflows", dict(shape=(0, 1 << 40, 1 << 40)), 0, "OVERFLOW")]
    for fn in FUNCS:
        for what, kw, flags, want in rows + (only_view if fn == FUNCS[0] else []) + stride_overflow:
            kw = dict(kw)
            null_data = kw.pop("data", None) == "null"
            t = ctx.make_dltensor(**kw) if not null_data else ctx.make_dltensor(**kw)
            if null_data:
                ctx.T.DLTensor.from_address(t).data = None
            refused(ctx, py, fn, t, flags, V, want, what)
        # The unassigned-device flag lets an unassigned type through (not a negative id).
        for dt in (5, 6, 19, 1000):
            t = ctx.make_dltensor(device=(dt, 0))
            owner = ["x"]
            out = ctypes.c_void_p(SENT)
            st, exc = call(py, fn, t, ctx.K.DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE, owner, V, ctypes.byref(out))
            ctx.ok(st, f"{fn}: device type {dt} with ALLOW_UNASSIGNED_DEVICE")
            no_exc(ctx, exc, "unassigned")
            cap = py.take(out.value)
            d = ctx.versioned(cap_pointer(cap)).dl_tensor
            ctx.check(d.device.device_type == dt, "device type not copied")
            del cap


def check_view(ctx, py, fn, kw, flags, kind, legacy_drop=0):
    """Make a view of a fixture DLTensor; check capsule, tensor, arrays and the owner; return
    (capsule, owner, refcount before)."""
    K = ctx.K
    t = ctx.make_dltensor(**kw)
    D = ctx.T.DLTensor.from_address(t)
    src = dict(data=D.data, dev=(D.device.device_type, D.device.device_id), ndim=D.ndim,
               dtype=(D.dtype.code, D.dtype.bits, D.dtype.lanes), off=D.byte_offset,
               shape=[D.shape[i] for i in range(D.ndim)] if D.shape else None,
               strides=[D.strides[i] for i in range(D.ndim)] if D.strides else None)
    owner = ["owner"]
    rc = sys.getrefcount(owner)
    out = ctypes.c_void_p(SENT)
    st, exc = call(py, fn, t, flags, owner, kind, ctypes.byref(out))
    what = f"{fn} {kw} flags {flags:#x} kind {kind}"
    ctx.ok(st, what)
    no_exc(ctx, exc, what)
    # Nothing of the input is kept: its struct and arrays become unreadable.
    for a in (t, ctypes.cast(D.shape, ctypes.c_void_p).value, ctypes.cast(D.strides, ctypes.c_void_p).value):
        if a:
            protect(a, 8, PROT_NONE)
    cap = py.take(out.value)
    ctx.check(sys.getrefcount(owner) == rc + 1, f"{what}: owner references {rc} -> {sys.getrefcount(owner)}, expected +1")
    versioned = kind == K.DLPACK_HELPERS_EXPORT_VERSIONED
    name = b"dltensor_versioned" if versioned else b"dltensor"
    ctx.check(cap_name(cap) == name, f"{what}: capsule named {cap_name(cap)!r}")
    ctx.check(api.PyCapsule_GetDestructor(cap) == py.destructor_address(), f"{what}: destructor is not dlpack_capsule_destructor")
    p = cap_pointer(cap)
    if versioned:
        m = ctx.versioned(p)
        ctx.check((m.version.major, m.version.minor) == (1, 3), f"{what}: version {m.version.major}.{m.version.minor}")
        ctx.check(m.flags == flags & ~BIT63 & ~legacy_drop, f"{what}: flags {m.flags:#x}")
        d = m.dl_tensor
    else:
        d = ctx.T.DLManagedTensor.from_address(p).dl_tensor
    ctx.check((d.data or 0) == (src["data"] or 0) and (d.device.device_type, d.device.device_id) == src["dev"]
              and d.ndim == src["ndim"] and (d.dtype.code, d.dtype.bits, d.dtype.lanes) == src["dtype"]
              and d.byte_offset == src["off"], f"{what}: data, device, ndim, dtype or byte_offset differ")
    if d.ndim == 0:
        ctx.check(not d.shape and not d.strides, f"{what}: ndim 0 with non-NULL shape or strides")
    else:
        got_shape = [d.shape[i] for i in range(d.ndim)]
        got_strides = [d.strides[i] for i in range(d.ndim)] if d.strides else None
        ctx.check(got_shape == src["shape"], f"{what}: shape {got_shape}")
        want = src["strides"]
        if want is None:
            # The compact row-major strides as the core defines them (CORE-COMPACT-STRIDES-5:
            # extents of 0 count as 1), from the implementation's own dlpack_compact_strides.
            n = len(src["shape"])
            arr = (ctypes.c_int64 * n)(*src["shape"])
            res = (ctypes.c_int64 * n)()
            ctx.ok(ctx.f.dlpack_compact_strides(n, arr, False, res), "dlpack_compact_strides")
            want = list(res)
        ctx.check(got_strides == want, f"{what}: strides {got_strides}, expected {want}")
    return cap, owner, rc


ROWS_OK = [dict(shape=(2, 3)), dict(shape=(2, 3), strides=(1, 2)), dict(shape=()), dict(shape=(4, 0, 5)),
           dict(shape=(3,), byte_offset=8, dtype=(1, 8, 1)), dict(shape=(2, 2), device=(2, 1), data=0x7000)]


@case("python.capsule_new_view.views", profile="python",
      covers=["PY-CAPSULE-NEW-VIEW-8", "PY-CAPSULE-NEW-VIEW-9", "PY-CAPSULE-NEW-VIEW-10", "PY-CAPSULE-NEW-VIEW-11",
              "PY-CAPSULE-NEW-VIEW-VALIDATED-9", "PY-CAPSULE-DESTRUCTOR-8"])
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    for fn in FUNCS:
        for kw in ROWS_OK:
            for flags in (0, 1, 2, 3, 7 if kw.get("dtype") else 3, BIT63 | 1):
                cap, owner, rc = check_view(ctx, py, fn, kw, flags, K.DLPACK_HELPERS_EXPORT_VERSIONED)
                del cap   # the unconsumed capsule dies: the view's deleter runs (DESTRUCTOR-8)
                ctx.check(sys.getrefcount(owner) == rc, f"{fn}: the capsule's death left {sys.getrefcount(owner) - rc} owner references")
            cap, owner, rc = check_view(ctx, py, fn, kw, 2, K.DLPACK_HELPERS_EXPORT_LEGACY)
            del cap
            ctx.check(sys.getrefcount(owner) == rc, f"{fn} legacy: the capsule's death left an owner reference")


@case("python.capsule_new_view.deleter_threads", profile="python",
      covers=["PY-CAPSULE-NEW-VIEW-10", "PY-CAPSULE-NEW-VIEW-VALIDATED-9"])
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    for fn in FUNCS:
        for where in ("gil held", "gil released", "other thread"):
            cap, owner, rc = check_view(ctx, py, fn, dict(shape=(2, 3)), 0, K.DLPACK_HELPERS_EXPORT_VERSIONED)
            out = ctypes.c_void_p(SENT)
            st, exc = py.call("dlpack_capsule_consume", Obj(cap), ctypes.byref(out))
            ctx.ok(st)
            del cap
            ctx.check(sys.getrefcount(owner) == rc + 1, "the consumed capsule dropped the owner")
            if where == "gil held":
                ctx.pf.dlpack_tensor_delete(ctx.vptr(out.value))
            elif where == "gil released":
                ctx.f.dlpack_tensor_delete(ctx.vptr(out.value))
            else:
                th = threading.Thread(target=ctx.f.dlpack_tensor_delete, args=(ctx.vptr(out.value),))
                th.start()
                th.join(20)
                ctx.check(not th.is_alive(), "the deleter on another thread did not return")
            ctx.check(sys.getrefcount(owner) == rc, f"{fn}, deleter with {where}: owner references {sys.getrefcount(owner) - rc:+d}")


@case("python.capsule_new_view.legacy_flags", profile="python",
      covers=["PY-CAPSULE-NEW-VIEW-6", "PY-CAPSULE-NEW-VIEW-VALIDATED-6", "PY-CAPSULE-NEW-VIEW-13"])
def _(ctx):
    py = Py(ctx)
    L = ctx.K.DLPACK_HELPERS_EXPORT_LEGACY
    for fn in FUNCS:
        refused(ctx, py, fn, ctx.make_dltensor(), 1, L, "READ_ONLY", "read-only legacy")
        refused(ctx, py, fn, ctx.make_dltensor(dtype=(0, 4, 1), shape=(4,)), 4, L, "INVALID_FLAGS", "padded int4 legacy")
        refused(ctx, py, fn, ctx.make_dltensor(dtype=(1, 1, 1), shape=(4,)), 4, L, "INVALID_FLAGS", "padded uint1 legacy")
        for flags, kw in ((2, dict()), (4, dict()), (6, dict(dtype=(1, 8, 1)))):
            cap, owner, rc = check_view(ctx, py, fn, dict(shape=(2, 3), **kw), flags, L)
            del cap
            ctx.check(sys.getrefcount(owner) == rc, "owner reference left")


@case("python.capsule_new_view.cpython_fails", profile="python",
      covers=["PY-CAPSULE-NEW-VIEW-12", "PY-CAPSULE-NEW-VIEW-13", "PY-CAPSULE-NEW-VIEW-VALIDATED-9",
              "PY-CAPSULE-NEW-VIEW-VALIDATED-11"])
def _(ctx):
    py = Py(ctx)
    for fn in FUNCS:
        for kind in (ctx.K.DLPACK_HELPERS_EXPORT_VERSIONED, ctx.K.DLPACK_HELPERS_EXPORT_LEGACY):
            refused(ctx, py, fn, ctx.make_dltensor(), 0, kind, "PRODUCER_ERROR", "capsule allocation fails",
                    fail_alloc=True)


@case("python.capsule_new_view_validated.copies_unchecked", profile="python",
      covers=["PY-CAPSULE-NEW-VIEW-VALIDATED-10"])
def _(ctx):
    # Invalid extents, dtypes and byte ranges with data in a PROT_NONE page: copied as they are
    # (OK) or refused with a listed status; never a fault.
    py = Py(ctx)
    V = ctx.K.DLPACK_HELPERS_EXPORT_VERSIONED
    listed = ("OK", "INVALID_NDIM", "NULL_SHAPE", "INVALID_DEVICE", "INVALID_FLAGS", "OVERFLOW", "INVALID_DTYPE",
              "NULL_DATA", "INVALID_SHAPE", "OUT_OF_MEMORY")
    guard = ctx.guarded(0)
    for kw in (dict(shape=(2, -3), data=guard), dict(dtype=(2, 32, 0), data=guard), dict(dtype=(77, 3, 1), data=guard),
               dict(shape=(1 << 62, 1 << 62), data=guard), dict(shape=(5,), strides=(-(1 << 62),), data=guard),
               dict(shape=(3,), byte_offset=(1 << 63) - 1, data=guard)):
        t = ctx.make_dltensor(**kw)
        owner = ["u"]
        rc = sys.getrefcount(owner)
        out = ctypes.c_void_p(SENT)
        st, exc = call(py, FUNCS[1], t, 0, owner, V, ctypes.byref(out))
        ctx.expect(st, *listed, what=f"{kw}")
        no_exc(ctx, exc, f"{kw}")
        if st == 0:
            cap = py.take(out.value)
            d = ctx.versioned(cap_pointer(cap)).dl_tensor
            D = ctx.T.DLTensor.from_address(t)
            ctx.check([d.shape[i] for i in range(d.ndim)] == [D.shape[i] for i in range(D.ndim)]
                      and d.byte_offset == D.byte_offset and d.data == D.data
                      and (d.dtype.code, d.dtype.bits, d.dtype.lanes) == (D.dtype.code, D.dtype.bits, D.dtype.lanes),
                      f"{kw}: the view does not carry the same values")
            del cap, d
        else:
            ctx.check(out.value == SENT and sys.getrefcount(owner) == rc, f"{kw}: refused but out written or owner referenced")
        ctx.check(sys.getrefcount(owner) == rc, f"{kw}: owner reference left")
