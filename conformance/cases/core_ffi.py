"""Core: the error-object variants (spec/02-abi.md ABI-ERROR-OBJECT-*, one page per
`dlpack_*_with_error`) and dlpack_tensor_alloc (issue 35: calls other languages' FFIs need).

The variants are data: for each, a call of its base function that succeeds and one that fails
(with the status the base page requires), built from fixtures; every variant then runs through
the same checks. The error object lies in an out_slot (its last byte against a guard page, every
byte a sentinel), so a write past it faults and any byte written is seen.
"""
import ctypes

from harness.registry import case

from cases._common import noaccess, out_slot, pages, protect, unchanged_message, PROT_NONE

# variant base -> (succeeding arguments, failing arguments, the failing status): each maker
# returns fresh arguments (fixture memory) for one call.


def _dt(ctx):
    return ctx.T.DLDataType(2, 32, 1)


def _cpu(ctx):
    return ctx.T.DLDevice(1, 0)


def _out(ctx, t):
    return ctypes.byref(t())


def _name(s: bytes):
    return ctypes.cast(ctypes.create_string_buffer(s), ctypes.c_void_p)


def _pp(ctx):
    return ctypes.byref(ctypes.POINTER(ctx.T.DLManagedTensorVersioned)())


def _pl(ctx):
    return ctypes.byref(ctypes.POINTER(ctx.T.DLManagedTensor)())


def _shape(ctx, *v):
    return ctypes.cast(ctx.int64_array(list(v)), ctypes.POINTER(ctypes.c_int64))


def _compat(ctx):
    return ctypes.byref(ctx.m.ctype("dlpack_helpers_version_compat")())


VARIANTS = {
    "dlpack_tensor_validate": (
        lambda ctx: [ctx.vptr(ctx.make_versioned(strides=(3, 1))[0]), None, None],
        lambda ctx: [ctx.vptr(ctx.make_versioned(strides=(3, 1), dtype=(2, 32, 0))[0]), None, None],
        "INVALID_DTYPE"),
    "dlpack_legacy_tensor_validate": (
        lambda ctx: [ctx.lptr(ctx.make_legacy()[0]), None, None],
        lambda ctx: [ctx.lptr(ctx.make_legacy(shape=(2, -3))[0]), None, None], "INVALID_SHAPE"),
    "dlpack_dltensor_validate": (
        lambda ctx: [ctx.dptr(ctx.make_dltensor(strides=(3, 1))), ctx.T.DLPackVersion(1, 3), 0, None, None],
        lambda ctx: [ctx.dptr(ctx.make_dltensor(ndim=-1, shape=None)), ctx.T.DLPackVersion(1, 3), 0, None, None],
        "INVALID_NDIM"),
    "dlpack_version_check": (
        lambda ctx: [ctx.T.DLPackVersion(1, 1), _compat(ctx)],
        lambda ctx: [ctx.T.DLPackVersion(2, 0), _compat(ctx)], "UNSUPPORTED_VERSION"),
    "dlpack_tensor_check_version": (
        lambda ctx: [ctx.vptr(ctx.make_versioned()[0]), _compat(ctx)],
        lambda ctx: [ctx.vptr(ctx.make_versioned(version=(3, 0), readable=24)[0]), _compat(ctx)],
        "UNSUPPORTED_VERSION"),
    "dlpack_tensor_check_version_or_delete": (
        lambda ctx: [ctx.vptr(ctx.make_versioned()[0]), _compat(ctx)],
        lambda ctx: [ctx.vptr(ctx.make_versioned(version=(3, 0), readable=24)[0]), _compat(ctx)],
        "UNSUPPORTED_VERSION"),
    "dlpack_version_negotiate": (
        lambda ctx: [ctx.T.DLPackVersion(1, 3), 0, ctypes.byref(ctx.T.DLPackVersion(1, 3)),
                     _out(ctx, ctx.T.dlpack_helpers_version_choice)],
        lambda ctx: [ctx.T.DLPackVersion(1, 3), 0, None, None], "NULL_POINTER"),
    "dlpack_dtype_parse": (
        lambda ctx: [_name(b"float32"), _out(ctx, ctx.T.DLDataType)],
        lambda ctx: [_name(b"float33"), _out(ctx, ctx.T.DLDataType)], "UNKNOWN_NAME"),
    "dlpack_device_parse": (
        lambda ctx: [_name(b"cuda:1"), _out(ctx, ctx.T.DLDevice)],
        lambda ctx: [_name(b"nowhere:1"), _out(ctx, ctx.T.DLDevice)], "UNKNOWN_NAME"),
    "dlpack_tensor_create": (
        lambda ctx: [ctx.guarded(24), _cpu(ctx), 2, _shape(ctx, 2, 3), None, _dt(ctx), 0, 0, None, None, _pp(ctx)],
        lambda ctx: [None, _cpu(ctx), 2, _shape(ctx, 2, 3), None, _dt(ctx), 0, 0, None, None, _pp(ctx)],
        "NULL_DATA"),
    "dlpack_tensor_alloc": (
        lambda ctx: [_cpu(ctx), 2, _shape(ctx, 2, 3), None, _dt(ctx), 0, _pp(ctx)],
        lambda ctx: [ctx.T.DLDevice(2, 0), 2, _shape(ctx, 2, 3), None, _dt(ctx), 0, _pp(ctx)],
        "UNSUPPORTED_DEVICE"),
    "dlpack_legacy_to_versioned": (
        lambda ctx: [ctx.lptr(ctx.make_legacy(poison=False)[0]), 0, _pp(ctx)],
        lambda ctx: [ctx.lptr(ctx.make_legacy(dtype=(99, 8, 1))[0]), 0, _pp(ctx)], "INVALID_DTYPE"),
    "dlpack_versioned_to_legacy": (
        lambda ctx: [ctx.vptr(ctx.make_versioned(strides=(3, 1), poison=False)[0]), 0, None, _pl(ctx)],
        lambda ctx: [ctx.vptr(ctx.make_versioned(strides=(3, 1))[0]), 0x80, None, _pl(ctx)], "INVALID_ARGUMENT"),
}

ERR_IDS = {b: "CORE-" + (b + "_with_error")[len("dlpack_"):].upper().replace("_", "-") for b in VARIANTS}


def _covers(n):
    return [f"{ERR_IDS[b]}-{n}" for b in VARIANTS]


def _err(ctx, fill=0x5A, size=None):
    E = ctx.T.dlpack_helpers_error
    e, ptr, raw = out_slot(E, fill)
    e.struct_size = ctypes.sizeof(E) if size is None else size
    return e, ptr, raw


def _release_outputs(ctx, base, args, status):
    """Release what a successful producer call made (the tensor out-parameter)."""
    if status != 0:
        return
    if base in ("dlpack_tensor_create", "dlpack_tensor_alloc", "dlpack_legacy_to_versioned"):
        out = args[-1]._obj
        if out:
            ctx.f.dlpack_tensor_delete(out)
    elif base == "dlpack_versioned_to_legacy":
        out = args[-1]._obj
        if out:
            ctx.f.dlpack_legacy_tensor_delete(out)


def _check_filled(ctx, e, status, what):
    """ABI-ERROR-OBJECT-4: the object holds the status and this call's last-error message."""
    E = ctx.T.dlpack_helpers_error
    cap = ctypes.sizeof(E) - E.message.offset
    text = ctx.last_error()
    ctx.check(e.struct_size == ctypes.sizeof(E), f"{what}: err.struct_size {e.struct_size}, not {ctypes.sizeof(E)}")
    ctx.check(e.status == status, f"{what}: err.status {e.status}, the call returned {status}")
    ctx.check(e.reserved == 0, f"{what}: err.reserved {e.reserved:#x}, not 0")
    ctx.check(e.message_length == len(text), f"{what}: err.message_length {e.message_length}, the message has {len(text)} bytes")
    raw = ctypes.string_at(ctypes.addressof(e) + E.message.offset, cap)  # the field reads as text
    ctx.check(b"\0" in raw, f"{what}: err.message is not NUL-terminated")
    got = raw[:raw.index(b"\0")]
    if len(text) < cap:
        ctx.check(got == text, f"{what}: err.message {got!r} is not the last-error message {text!r}")
    else:  # the longest prefix of at most cap - 1 bytes ending on a character boundary
        n = cap - 1
        while n > 0 and (text[n] & 0xC0) == 0x80:
            n -= 1
        ctx.check(got == text[:n], f"{what}: err.message is not the message cut at {n} bytes")
    ctx.check(len(text) > 0, f"{what}: empty message")


@case("core.with_error.failure_fills_the_object", profile="core",
      covers=["ABI-ERROR-OBJECT-3", "ABI-ERROR-OBJECT-4"] + _covers(2) + _covers(3))
def _(ctx):
    for base, (_, fail, want) in VARIANTS.items():
        name = base + "_with_error"
        args = fail(ctx)
        st_base = getattr(ctx.f, base)(*args)
        ctx.expect(st_base, want, what=f"{base} (the base function)")
        args = fail(ctx)
        e, ptr, raw = _err(ctx)
        st = getattr(ctx.f, name)(*args, ptr)
        ctx.expect(st, want, what=name)
        _check_filled(ctx, e, st, name)


@case("core.with_error.success_leaves_the_object", profile="core",
      covers=["ABI-ERROR-OBJECT-3", "ABI-ERROR-OBJECT-5", "CORE-LAST-ERROR-MESSAGE-4"] + _covers(2) + _covers(3))
def _(ctx):
    for base, (ok, _, _) in VARIANTS.items():
        name = base + "_with_error"
        for with_err in (True, False):  # err given, and err NULL (the base function, ABI-ERROR-OBJECT-1)
            args = ok(ctx)
            e, ptr, raw = _err(ctx)
            before = raw()
            with unchanged_message(ctx, f"{name} on success (err {'given' if with_err else 'NULL'})"):
                st = getattr(ctx.f, name)(*args, ptr if with_err else None)
            ctx.ok(st, what=name)
            ctx.check(raw() == before, f"{name}: err written on success")
            _release_outputs(ctx, base, args, st)


@case("core.with_error.null_is_the_base_function", profile="core",
      covers=["ABI-ERROR-OBJECT-1"] + _covers(2))
def _(ctx):
    for base, (ok, fail, want) in VARIANTS.items():
        name = base + "_with_error"
        args = fail(ctx)
        ctx.expect(getattr(ctx.f, base)(*args), want, what=base)
        base_text = ctx.last_error()
        args = fail(ctx)
        ctx.expect(getattr(ctx.f, name)(*args, None), want, what=f"{name}(err = NULL)")
        ctx.check(ctx.last_error() == base_text, f"{name}(err = NULL): message {ctx.last_error()!r}, "
                  f"the base function's is {base_text!r}")
        args = ok(ctx)
        st = getattr(ctx.f, name)(*args, None)
        ctx.ok(st, what=f"{name}(err = NULL) on a valid call")
        _release_outputs(ctx, base, args, st)


def _unreadable_args(ctx, base):
    """The base's arguments with every pointer an address that faults when touched."""
    out = []
    for p in ctx.m.functions[base]["params"]:
        t = p["type"]
        if "*" in t:
            ct = ctx.m.ctype(t)
            out.append(ctypes.cast(noaccess(), ct) if ct is not ctypes.c_void_p else noaccess())
        elif t == "DLDevice":
            out.append(ctx.T.DLDevice(1, 0))
        elif t == "DLDataType":
            out.append(ctx.T.DLDataType(2, 32, 1))
        elif t == "DLPackVersion":
            out.append(ctx.T.DLPackVersion(1, 3))
        else:
            out.append(0)
    return out


@case("core.with_error.too_small_is_refused_first", profile="core",
      covers=["ABI-ERROR-OBJECT-2"] + _covers(1))
def _(ctx):
    E = ctx.T.dlpack_helpers_error
    for base in VARIANTS:
        name = base + "_with_error"
        for size in (0, 8, ctypes.sizeof(E) - 1):
            e, ptr, raw = _err(ctx, size=size)
            before = raw()
            # Every other pointer argument faults when read: a variant that reads them crashes.
            st = getattr(ctx.f, name)(*_unreadable_args(ctx, base), ptr)
            ctx.expect(st, "INVALID_ARGUMENT", what=f"{name}(err->struct_size = {size})")
            ctx.check(raw() == before, f"{name}: a refused err (struct_size {size}) was written")
            ctx.check(ctx.last_error() != b"", f"{name}: no last-error message for the refusal")
    # The one variant that can release: a too-small err keeps the tensor with the caller.
    p, rec = ctx.make_versioned(version=(3, 0), readable=24)
    e, ptr, raw = _err(ctx, size=16)
    ctx.expect(ctx.f.dlpack_tensor_check_version_or_delete_with_error(ctx.vptr(p), None, ptr), "INVALID_ARGUMENT")
    ctx.check(ctx.calls(rec) == 0, "dlpack_tensor_check_version_or_delete_with_error released the tensor "
              "although err was refused")
    ctx.f.dlpack_tensor_delete(ctx.vptr(p))


@case("core.with_error.larger_object_gets_the_implementation_size", profile="core",
      covers=["ABI-ERROR-OBJECT-4", "ABI-STRUCT-2"] + _covers(3))
def _(ctx):
    # A caller built against a later, larger dlpack_helpers_error passes its own struct_size: the
    # object comes back with the implementation's size (so the caller knows which fields were
    # written) and the bytes past that size untouched.
    E = ctx.T.dlpack_helpers_error
    n, extra = ctypes.sizeof(E), 64
    Big = ctypes.c_ubyte * (n + extra)
    for base, (_, fail, want) in VARIANTS.items():
        name = base + "_with_error"
        big, _, raw = out_slot(Big)
        e = E.from_address(ctypes.addressof(big))
        e.struct_size = n + extra
        tail = raw()[n:]
        st = getattr(ctx.f, name)(*fail(ctx), ctypes.pointer(e))
        ctx.expect(st, want, what=f"{name} (err->struct_size {n + extra})")
        _check_filled(ctx, e, st, f"{name} (err->struct_size {n + extra})")
        ctx.check(raw()[n:] == tail, f"{name}: bytes past sizeof(dlpack_helpers_error) written")


@case("core.with_error.or_delete_releases_and_reports", profile="core",
      covers=["CORE-TENSOR-CHECK-VERSION-OR-DELETE-WITH-ERROR-2", "CORE-TENSOR-CHECK-VERSION-OR-DELETE-WITH-ERROR-3"])
def _(ctx):
    p, rec = ctx.make_versioned(version=(2, 0), readable=24)
    e, ptr, raw = _err(ctx)
    st = ctx.f.dlpack_tensor_check_version_or_delete_with_error(ctx.vptr(p), None, ptr)
    ctx.expect(st, "UNSUPPORTED_VERSION")
    ctx.check(ctx.calls(rec) == 1, f"the deleter ran {ctx.calls(rec)} times, not once")
    _check_filled(ctx, e, st, "dlpack_tensor_check_version_or_delete_with_error")


@case("core.with_error.object_not_kept", profile="core", covers=["ABI-ERROR-OBJECT-6"])
def _(ctx):
    # After the call the object's memory becomes unreadable: a library that kept a pointer to it
    # and wrote or read it later (at the next failure, or at thread exit) faults.
    E = ctx.T.dlpack_helpers_error
    for base, (_, fail, want) in VARIANTS.items():
        e, ptr, raw = _err(ctx)
        ctx.expect(getattr(ctx.f, base + "_with_error")(*fail(ctx), ptr), want)
        protect(ctypes.addressof(e), ctypes.sizeof(E), PROT_NONE)
    for base, (_, fail, want) in VARIANTS.items():
        ctx.expect(getattr(ctx.f, base)(*fail(ctx)), want, what=f"{base} after the objects were unmapped")
    # No allocation stays behind for the object: a failing variant leaves no more live blocks
    # than its base function's failure (the last-error message is the base's own).
    if not ctx.fx.fx_alloc_available():
        return
    for base, (_, fail, want) in VARIANTS.items():
        args = fail(ctx)
        ctx.fx.fx_alloc_begin()
        getattr(ctx.f, base)(*args)
        live_base = ctx.fx.fx_alloc_end()
        args = fail(ctx)
        e, ptr, raw = _err(ctx)
        ctx.fx.fx_alloc_begin()
        getattr(ctx.f, base + "_with_error")(*args, ptr)
        live_var = ctx.fx.fx_alloc_end()
        ctx.check(live_var <= live_base, f"{base}_with_error left {live_var} live blocks, the base {live_base}")


# -- dlpack_tensor_alloc ---------------------------------------------------------------------------
def _alloc(ctx, shape, strides=None, dtype=(2, 32, 1), flags=0, device=(1, 0), ndim=None):
    out = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
    sp = _shape(ctx, *shape) if shape is not None else None
    st = _shape(ctx, *strides) if strides is not None else None
    s = ctx.f.dlpack_tensor_alloc(ctx.T.DLDevice(*device), len(shape) if ndim is None else ndim, sp, st,
                                  ctx.T.DLDataType(*dtype), flags, ctypes.byref(out))
    return s, out


def _offsets(shape, strides):
    offs = [0]
    for n, s in zip(shape, strides):
        offs = [o + i * s for o in offs for i in range(n)]
    return offs


def _compact(shape):
    out, acc = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        out[i] = acc
        acc *= max(shape[i], 1)
    return out


ALLOC_ROWS = [  # shape, strides (None: compact row-major), dtype
    ((2, 3), None, (2, 32, 1)), ((2, 3), (1, 2), (2, 32, 1)), ((4,), (-2,), (0, 16, 1)),
    ((3, 4), (0, 1), (2, 64, 1)), ((2, 2, 2), (8, 2, 1), (1, 8, 1)), ((), None, (5, 128, 1)),
    ((0, 5), None, (2, 32, 1)), ((5, 0, 3), (7, 1, -1), (2, 16, 4)), ((1, 1, 7), (100, -100, 3), (4, 16, 1)),
]


@case("core.tensor_alloc.layout_zeroed_aligned_released", profile="core",
      covers=["CORE-TENSOR-ALLOC-5", "CORE-TENSOR-ALLOC-6", "CORE-TENSOR-ALLOC-7", "CORE-TENSOR-ALLOC-8"])
def _(ctx):
    A = ctx.K.DLPACK_HELPERS_ALLOC_ALIGNMENT
    for shape, strides, dtype in ALLOC_ROWS:
        what = f"shape {shape} strides {strides} dtype {dtype}"
        s, out = _alloc(ctx, shape, strides, dtype, flags=1)
        ctx.ok(s, what=what)
        t = out.contents
        d = t.dl_tensor
        ctx.check((t.version.major, t.version.minor) == (1, 3), f"{what}: version {t.version.major}.{t.version.minor}")
        ctx.check(not t.manager_ctx and bool(t.deleter) and t.flags == 1, f"{what}: manager_ctx/deleter/flags")
        ctx.check((d.device.device_type, d.device.device_id) == (1, 0) and d.ndim == len(shape), f"{what}: device/ndim")
        ctx.check((d.dtype.code, d.dtype.bits, d.dtype.lanes) == dtype, f"{what}: dtype")
        ctx.check(d.data and d.data % A == 0, f"{what}: data {d.data} not a non-NULL multiple of {A}")
        want_strides = list(strides) if strides is not None else _compact(shape)
        if shape:
            ctx.check([d.shape[i] for i in range(len(shape))] == list(shape), f"{what}: shape copy")
            ctx.check([d.strides[i] for i in range(len(shape))] == want_strides, f"{what}: strides")
        else:
            ctx.check(not d.shape and not d.strides, f"{what}: 0-d tensor with shape/strides")
        item = dtype[1] * dtype[2] // 8
        offs = _offsets(shape, want_strides)
        if offs:
            lo, hi = min(offs), max(offs)
            ctx.check(d.byte_offset == -lo * item, f"{what}: byte_offset {d.byte_offset}, expected {-lo * item}")
            span = (hi - lo + 1) * item
            buf = (ctypes.c_ubyte * span).from_address(d.data)
            ctx.check(not any(buf), f"{what}: the buffer is not zero")
            ctypes.memset(d.data, 0xEE, span)  # writable, every byte (a short buffer faults or corrupts)
        else:
            ctx.check(d.byte_offset == 0, f"{what}: empty tensor with byte_offset {d.byte_offset}")
        ctx.ok(ctx.f.dlpack_tensor_validate(out, None, None), what=f"{what}: validate")
        ctx.f.dlpack_tensor_delete(out)


@case("core.tensor_alloc.flags_as_given", profile="core", covers=["CORE-TENSOR-ALLOC-2", "CORE-TENSOR-ALLOC-5"])
def _(ctx):
    # Every combination of the three DLPack flag bits is accepted and lands in the tensor as
    # given (no bit added, none dropped).
    for flags in range(8):
        s, out = _alloc(ctx, (2, 3), flags=flags)
        ctx.ok(s, what=f"flags {flags:#x}")
        if s == 0:
            ctx.check(out.contents.flags == flags, f"flags {flags:#x}: the tensor has flags {out.contents.flags:#x}")
            ctx.f.dlpack_tensor_delete(out)


@case("core.tensor_alloc.deleter_releases_everything", profile="core", covers=["CORE-TENSOR-ALLOC-8"])
def _(ctx):
    if not ctx.fx.fx_alloc_available():
        ctx.skip("the allocation counter (fx_alloc) is not preloaded")
    for shape, strides, dtype in ALLOC_ROWS:
        what = f"shape {shape} strides {strides} dtype {dtype}"
        s, out = _alloc(ctx, shape, strides, dtype)  # outside the window: any one-time set-up
        ctx.ok(s, what=what)
        ctx.f.dlpack_tensor_delete(out)
        before = ctx.fx.fx_alloc_end()  # the counter is per process: what earlier windows left
        ctx.fx.fx_alloc_begin()
        s, out = _alloc(ctx, shape, strides, dtype)
        made = ctx.fx.fx_alloc_end() - before
        if s == 0:
            ctx.f.dlpack_tensor_delete(out)
        live = ctx.fx.fx_alloc_end() - before
        ctx.ok(s, what=what)
        ctx.check(made >= 1, f"{what}: the tensor was made without an allocation the counter sees")
        ctx.check(live == 0, f"{what}: {live} blocks still allocated after the deleter ran")


ALLOC_REFUSALS = [  # kwargs, status
    (dict(shape=(2, 3), flags=1 << 3), "INVALID_FLAGS"),
    (dict(shape=(2, 3), flags=1 << 63), "INVALID_FLAGS"),
    (dict(shape=(2, 3), device=(2, 0)), "UNSUPPORTED_DEVICE"),
    (dict(shape=(2, 3), device=(1, 1)), "UNSUPPORTED_DEVICE"),
    (dict(shape=(2, 3), device=(3, 0)), "UNSUPPORTED_DEVICE"),
    (dict(shape=(2, 3), ndim=-1), "INVALID_NDIM"),
    (dict(shape=(2, 3), ndim=1025), "INVALID_NDIM"),
    (dict(shape=(2, -3), dtype=(2, 32, 0)), "INVALID_DTYPE"),
    (dict(shape=(2, -3)), "INVALID_SHAPE"),
    (dict(shape=(1 << 40, 1 << 30)), "OVERFLOW"),
    (dict(shape=(1 << 61,)), "OVERFLOW"),
    (dict(shape=(2, 1 << 62), strides=(1 << 62, 1)), "OVERFLOW"),
]


@case("core.tensor_alloc.refusals_in_order", profile="core",
      covers=["CORE-TENSOR-ALLOC-2", "CORE-TENSOR-ALLOC-3", "CORE-TENSOR-ALLOC-4", "CORE-TENSOR-ALLOC-9"])
def _(ctx):
    # A first failure on this thread may set up the thread's last-error storage: done here, so
    # each window below holds only what one refusal leaves (at most the new message).
    for _ in range(2):
        ctx.f.dlpack_tensor_alloc(_cpu(ctx), -1, None, None, _dt(ctx), 0, None)
    for kw, want in ALLOC_REFUSALS:
        sentinel = ctypes.c_void_p(0x5A5A5A5A)
        out = ctypes.cast(ctypes.pointer(sentinel), ctypes.POINTER(ctypes.POINTER(ctx.T.DLManagedTensorVersioned)))
        shape, strides = kw.get("shape"), kw.get("strides")
        nd = kw.get("ndim", len(shape))
        sp = _shape(ctx, *shape)
        st = _shape(ctx, *strides) if strides else None
        if ctx.fx.fx_alloc_available():
            ctx.fx.fx_alloc_begin()
        s = ctx.f.dlpack_tensor_alloc(ctx.T.DLDevice(*kw.get("device", (1, 0))), nd, sp, st,
                                      ctx.T.DLDataType(*kw.get("dtype", (2, 32, 1))), kw.get("flags", 0), out)
        live = ctx.fx.fx_alloc_end() if ctx.fx.fx_alloc_available() else 0
        ctx.expect(s, want, what=str(kw))
        ctx.check(sentinel.value == 0x5A5A5A5A, f"{kw}: out_tensor written on failure")
        ctx.check(live <= 1, f"{kw}: {live} blocks left allocated (only the last-error message may stay)")


@case("core.tensor_alloc.null", profile="core", covers=["CORE-TENSOR-ALLOC-1"])
def _(ctx):
    out = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
    ctx.expect(ctx.f.dlpack_tensor_alloc(_cpu(ctx), 2, None, None, _dt(ctx), 0, ctypes.byref(out)), "NULL_POINTER")
    ctx.expect(ctx.f.dlpack_tensor_alloc(_cpu(ctx), 2, _shape(ctx, 2, 3), None, _dt(ctx), 0, None), "NULL_POINTER")
    # NULL before the flags, device and shape checks.
    ctx.expect(ctx.f.dlpack_tensor_alloc(ctx.T.DLDevice(2, 0), 2, None, None, _dt(ctx), 1 << 9, ctypes.byref(out)),
               "NULL_POINTER")
    # ndim 0 needs no shape.
    ctx.ok(ctx.f.dlpack_tensor_alloc(_cpu(ctx), 0, None, None, _dt(ctx), 0, ctypes.byref(out)))
    ctx.f.dlpack_tensor_delete(out)
