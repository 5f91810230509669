"""Core: tensors made, wrapped and converted (dlpack_legacy_tensor_wrap, dlpack_legacy_to_versioned,
dlpack_versioned_to_legacy, dlpack_tensor_create, dlpack_tensor_new_view_validated).

Every layout row of cases/core_layout.py goes through each function; the expected status comes
from harness/layout_model.validate with the options the page names. On OK the produced tensor is
checked field by field (arrays owned by it, filled-in compact strides), released through its own
deleter, and the original's deleter must have run exactly once; on failure nothing is written,
called or left allocated (the allocation counter), and the input is read-only memory.
"""
import ctypes
import gc
import sys
import threading

from harness import layout_model as M
from harness import tensors as X
from harness.registry import case
from cases.core_layout import LAYOUT

VP = None


def vp(ctx):
    return ctypes.POINTER(ctx.T.DLManagedTensorVersioned)


def lp(ctx):
    return ctypes.POINTER(ctx.T.DLManagedTensor)


def arrays(dl):
    n = dl.ndim
    sh = [dl.shape[i] for i in range(n)] if dl.shape else None
    sd = [dl.strides[i] for i in range(n)] if dl.strides else None
    return sh, sd


def check_copy(ctx, dl, r, src_dl, where):
    """CORE-LEGACY-TENSOR-WRAP-6/7, CORE-VERSIONED-TO-LEGACY-7, CORE-TENSOR-CREATE-5/6."""
    ctx.check((dl.data or 0) == r["data"], f"{where}: data {(dl.data or 0):#x}, expected {r['data']:#x}")
    ctx.check((dl.device.device_type, dl.device.device_id) == tuple(r["device"]), f"{where}: device")
    ctx.check(dl.ndim == r["ndim"], f"{where}: ndim {dl.ndim}")
    ctx.check((dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == tuple(r["dtype"]), f"{where}: dtype")
    ctx.check(dl.byte_offset == r["byte_offset"], f"{where}: byte_offset")
    if r["ndim"] == 0:
        ctx.check(not dl.shape and not dl.strides, f"{where}: shape/strides not NULL for ndim 0")
        return
    sh, sd = arrays(dl)
    ctx.check(sh == list(r["shape"]), f"{where}: shape {sh}")
    want = list(r["strides"]) if r["strides"] is not None else M.implied_strides(list(r["shape"]))
    ctx.check(sd == want, f"{where}: strides {sd}, expected {want}")
    if src_dl is not None:
        for k in ("shape", "strides"):
            a = ctypes.cast(getattr(dl, k), ctypes.c_void_p).value
            b = ctypes.cast(getattr(src_dl, k), ctypes.c_void_p).value
            ctx.check(a != b, f"{where}: {k} is the original's array, not the wrapper's own")


_live = []


def live(ctx):
    if not _live:
        f = ctypes.CDLL(None).fx_alloc_live_count
        f.restype = ctypes.c_long
        _live.append(f)
    return _live[0]()


def alloc_window(ctx):
    """Start counting this thread's allocations (None when the counter is not preloaded). The
    first failing call of a thread may allocate its last-error storage, which the library keeps
    (a named retention): one failing call warms it up first."""
    if not ctx.fx.fx_alloc_available():
        return None
    if not _live or len(_live) == 1:
        # Once per process: first-use allocations of ctypes' call machinery (and any one-time
        # cache of the library) happen here, outside every window.
        live(ctx)
        p, _ = ctx.make_versioned(poison=False)
        call_deleter(ctx.vptr(p))
        q, _ = ctx.make_legacy(poison=False)
        w = vp(ctx)()
        if ctx.f.dlpack_legacy_tensor_wrap(ctx.lptr(q), 0, 0, ctypes.byref(w)) == 0:
            call_deleter(w)
        _live.append(True)
    ctx.f.dlpack_tensor_get_flags(None, None)
    gc.disable()  # a collection inside a window would free blocks of earlier windows
    n0 = live(ctx)
    ctx.fx.fx_alloc_begin()
    return n0


def alloc_pause(ctx, w):
    if w is not None:
        ctx.fx.fx_alloc_end()


def alloc_resume(ctx, w):
    if w is not None:
        ctx.fx.fx_alloc_begin()


def repeat_leak(ctx, w, call):
    """A failing call repeated inside a window: the first one may have resized the thread's
    last-error storage (kept by the library), the same failure again must allocate nothing."""
    if w is None:
        return 0
    gc.disable()
    n0 = live(ctx)
    ctx.fx.fx_alloc_begin()
    call()
    ctx.fx.fx_alloc_end()
    gc.enable()
    return live(ctx) - n0


def alloc_left(ctx, w):
    """Blocks allocated while counting and not freed since."""
    if w is None:
        return 0
    ctx.fx.fx_alloc_end()
    gc.enable()
    return live(ctx) - w


DELETER_PROTO = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def call_deleter(ptr):
    """Call a managed tensor's own deleter member with the tensor (any struct kind)."""
    fn = ptr.contents.deleter
    addr = ctypes.cast(ptr, ctypes.c_void_p).value
    if not isinstance(fn, int):
        fn = ctypes.cast(fn, ctypes.c_void_p).value
    DELETER_PROTO(fn)(addr)


# -- legacy -> versioned --------------------------------------------------------------------------
def wrap_model(r, flags, options):
    if options & ~4:
        return "INVALID_ARGUMENT"
    if flags & ~7:
        return "INVALID_FLAGS"
    return M.validate(r, (0, 0), 0, None)[0]


def wrap_row(rid, d, fn):
    def run(ctx):
        LW = ctx.K.DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE
        r = X.resolved(ctx, d)
        combos = [(0, 0), (1, 0), (6, LW), (7, 0), (8, 0), (1 << 63, LW)]
        if fn == "wrap":
            combos += [(0, 1), (0, 8), (3, 1 << 31)]
        for flags, options in combos:
            if fn != "wrap" and options:
                continue
            want = wrap_model(r, flags, options)
            where = f"{rid}, flags {flags:#x}, options {options:#x}"
            p, rec = X.legacy(ctx, d)  # read-only: the wrap may not write it
            L = ctx.T.DLManagedTensor.from_address(p)
            out = vp(ctx)()
            sentinel = ctypes.cast(ctypes.c_void_p(0x5A5A), vp(ctx))
            out = sentinel
            w = alloc_window(ctx)
            if fn == "wrap":
                call = lambda: ctx.f.dlpack_legacy_tensor_wrap(ctx.lptr(p), flags, options, ctypes.byref(out))
            else:
                call = lambda: ctx.f.dlpack_legacy_to_versioned(ctx.lptr(p), flags, ctypes.byref(out))
            st = call()
            alloc_pause(ctx, w)
            ctx.expect(st, want, what=where)
            if want != "OK":
                left = repeat_leak(ctx, w, call)
                ctx.check(ctypes.cast(out, ctypes.c_void_p).value == 0x5A5A, f"{where}: *out_tensor written")
                ctx.check(ctx.calls(rec) == 0, f"{where}: the legacy deleter ran")
                ctx.check(left == 0, f"{where}: {left} allocation(s) left behind")
                continue
            t = out.contents
            ctx.check((t.version.major, t.version.minor) == (1, 3), f"{where}: version {t.version.major}.{t.version.minor}")
            ctx.check((t.manager_ctx or 0) == p, f"{where}: manager_ctx is not the legacy tensor")
            ctx.check(bool(t.deleter), f"{where}: NULL deleter")
            wf = flags if options & LW else flags | 1
            ctx.check(t.flags == wf, f"{where}: flags {t.flags:#x}, expected {wf:#x}")
            check_copy(ctx, t.dl_tensor, r, L.dl_tensor, where)
            ctx.check(ctx.calls(rec) == 0, f"{where}: the legacy deleter ran before release")
            alloc_resume(ctx, w)
            call_deleter(out)
            left = alloc_left(ctx, w)
            ctx.check(ctx.calls(rec) == 1, f"{where}: the legacy deleter ran {ctx.calls(rec)} times")
            ctx.check(left == 0, f"{where}: {left} allocation(s) left after release")
    return run


def ok_or(d, check, ok_ids, fail_ids, always):
    """Requirement IDs of a row: the success ones when the model accepts it, else the failure ones."""
    from cases.core_layout import static
    return always + (ok_ids if check(static(d)) else fail_ids)


for rid, d in LAYOUT:
    case(f"core.legacy_tensor_wrap.{rid}", profile="core",
         covers=ok_or(d, lambda r: M.validate(r, (0, 0), 0, None)[0] == "OK",
                      ["CORE-LEGACY-TENSOR-WRAP-6", "CORE-LEGACY-TENSOR-WRAP-7", "CORE-LEGACY-TENSOR-WRAP-8", "OWN-MODEL-1"],
                      ["CORE-LEGACY-TENSOR-WRAP-5"],
                      ["CORE-LEGACY-TENSOR-WRAP-2", "CORE-LEGACY-TENSOR-WRAP-4", "CORE-LEGACY-TENSOR-WRAP-9",
                       "OWN-MODEL-2", "OWN-MODEL-3"]))(wrap_row(rid, d, "wrap"))
    case(f"core.legacy_to_versioned.{rid}", profile="core",
         covers=["CORE-LEGACY-TO-VERSIONED-1", "CORE-LEGACY-TO-VERSIONED-2"])(wrap_row(rid, d, "to_versioned"))


@case("core.legacy_tensor_wrap.argument_order", profile="core",
      covers=["CORE-LEGACY-TENSOR-WRAP-1", "CORE-LEGACY-TENSOR-WRAP-2", "CORE-LEGACY-TENSOR-WRAP-3",
              "CORE-LEGACY-TENSOR-WRAP-4", "CORE-LEGACY-TO-VERSIONED-1"])
def _(ctx):
    bad = X.legacy(ctx, X.desc(ndim=-1, shape="poison"))[0]  # invalid tensor: later checks win
    poison = ctx.lptr(X.poison_page(ctx))  # unreadable: refused before it is read
    out = vp(ctx)()
    f = ctx.f.dlpack_legacy_tensor_wrap
    ctx.expect(f(ctx.lptr(bad), 8, 8, None), "NULL_POINTER", what="out_tensor NULL first")
    ctx.expect(f(None, 8, 8, ctypes.byref(out)), "INVALID_ARGUMENT", what="options before a NULL legacy")
    ctx.expect(f(poison, 8, 8, ctypes.byref(out)), "INVALID_ARGUMENT", what="options before reading legacy")
    ctx.expect(f(None, 8, 0, ctypes.byref(out)), "NULL_POINTER", what="NULL legacy before flags")
    ctx.expect(f(poison, 8, 0, ctypes.byref(out)), "INVALID_FLAGS", what="flags before reading legacy")
    ctx.expect(f(ctx.lptr(bad), 8, 0, ctypes.byref(out)), "INVALID_FLAGS", what="flags before validation")
    g = ctx.f.dlpack_legacy_to_versioned
    ctx.expect(g(ctx.lptr(bad), 8, None), "NULL_POINTER")
    ctx.expect(g(None, 8, ctypes.byref(out)), "NULL_POINTER")
    ctx.expect(g(poison, 8, ctypes.byref(out)), "INVALID_FLAGS")
    ctx.check(not out, "*out_tensor written on failure")


@case("core.legacy_tensor_wrap.deleter_read_at_release", profile="core",
      covers=["CORE-LEGACY-TENSOR-WRAP-8", "OWN-DELETER-8"])
def _(ctx):
    # The legacy deleter is read when the wrapper is released: cleared after the wrap, nothing runs.
    p, rec = ctx.make_legacy()
    out = vp(ctx)()
    ctx.ok(ctx.f.dlpack_legacy_tensor_wrap(ctx.lptr(p), 0, 0, ctypes.byref(out)))
    ctx.T.DLManagedTensor.from_address(p).deleter = None
    ctx.f.dlpack_tensor_delete(out)
    ctx.check(ctx.calls(rec) == 0, "the deleter read at wrap time was called")
    # Released from another thread, with the GIL released: the original goes exactly once, on that
    # thread (poisoned afterwards: a use after release faults).
    p, rec = ctx.make_legacy()
    ctx.ok(ctx.f.dlpack_legacy_to_versioned(ctx.lptr(p), 0, ctypes.byref(out)))
    th = threading.Thread(target=lambda: ctx.f.dlpack_tensor_delete(out))
    th.start()
    th.join()
    ctx.check(ctx.calls(rec) == 1, f"the legacy deleter ran {ctx.calls(rec)} times")
    ctx.check(ctx.deleter_thread(rec) != ctx.fx.fx_gettid(), "the deleter ran on the wrong thread")


# -- versioned -> legacy --------------------------------------------------------------------------
def v2l_model(r, version, flags, options):
    if options & ~1:
        return "INVALID_ARGUMENT"
    if version[0] != 1:
        return "UNSUPPORTED_VERSION"
    st = M.validate(r, version, flags, {"struct_size": 40, "flags": M.V_LENIENT})[0]
    if st != "OK":
        return st
    if flags & 1 and not options & 1:
        return "READ_ONLY"
    code, bits, lanes = r["dtype"]
    if flags & 4 and (bits * lanes) % 8:
        return "INVALID_FLAGS"
    return "OK"


def v2l_row(rid, d):
    def run(ctx):
        r = X.resolved(ctx, d)
        for version, flags, options in (((1, 3), 0, 0), ((1, 3), 1, 0), ((1, 3), 1, 1), ((1, 3), 4, 0),
                                        ((1, 1), 6, 1), ((1, 0), 4, 0), ((1, 0), 2, 0), ((1, 5), 0xF2, 0),
                                        ((1, 3), 0, 2), ((1, 3), 0, 1 << 31), ((1, 2), 3, 1)):
            want = v2l_model(r, version, flags, options)
            where = f"{rid}, version {version}, flags {flags:#x}, options {options:#x}"
            p, rec = X.versioned(ctx, d, version, flags)
            V = ctx.T.DLManagedTensorVersioned.from_address(p)
            out = ctypes.cast(ctypes.c_void_p(0x5A5A), lp(ctx))
            dropped = ctypes.c_uint64(0xA5A5)
            w = alloc_window(ctx)
            call = lambda: ctx.f.dlpack_versioned_to_legacy(ctx.vptr(p), options, ctypes.byref(dropped), ctypes.byref(out))
            st = call()
            alloc_pause(ctx, w)
            ctx.expect(st, want, what=where)
            if want != "OK":
                left = repeat_leak(ctx, w, call)
                ctx.check(ctypes.cast(out, ctypes.c_void_p).value == 0x5A5A, f"{where}: *out_tensor written")
                ctx.check(dropped.value == 0xA5A5, f"{where}: *out_dropped_flags written")
                ctx.check(ctx.calls(rec) == 0, f"{where}: the deleter ran")
                ctx.check(left == 0, f"{where}: {left} allocation(s) left behind")
                continue
            t = out.contents
            ctx.check((t.manager_ctx or 0) == p, f"{where}: manager_ctx is not the tensor")
            ctx.check(bool(t.deleter), f"{where}: NULL deleter")
            ctx.check(dropped.value == flags, f"{where}: dropped flags {dropped.value:#x}, expected {flags:#x}")
            check_copy(ctx, t.dl_tensor, r, V.dl_tensor, where)
            alloc_resume(ctx, w)
            call_deleter(out)
            left = alloc_left(ctx, w)
            ctx.check(ctx.calls(rec) == 1, f"{where}: the deleter ran {ctx.calls(rec)} times")
            ctx.check(ctx.deleter_thread(rec) == ctx.fx.fx_gettid(), f"{where}: deleter on another thread")
            ctx.check(left == 0, f"{where}: {left} allocation(s) left after release")
    return run


for rid, d in LAYOUT:
    case(f"core.versioned_to_legacy.{rid}", profile="core",
         covers=ok_or(d, lambda r: v2l_model(r, (1, 3), 0, 0) == "OK",
                      ["CORE-VERSIONED-TO-LEGACY-5", "CORE-VERSIONED-TO-LEGACY-7", "CORE-VERSIONED-TO-LEGACY-8",
                       "CORE-VERSIONED-TO-LEGACY-9", "OWN-DELETER-5"] +
                      (["CORE-VERSIONED-TO-LEGACY-6"] if (d["dtype"][1] * d["dtype"][2]) % 8 else []),
                      ["CORE-VERSIONED-TO-LEGACY-4"],
                      ["CORE-VERSIONED-TO-LEGACY-2", "CORE-VERSIONED-TO-LEGACY-10"]))(v2l_row(rid, d))


@case("core.versioned_to_legacy.argument_order", profile="core",
      covers=["CORE-VERSIONED-TO-LEGACY-1", "CORE-VERSIONED-TO-LEGACY-2", "CORE-VERSIONED-TO-LEGACY-3",
              "CORE-VERSIONED-TO-LEGACY-10"])
def _(ctx):
    f = ctx.f.dlpack_versioned_to_legacy
    out = lp(ctx)()
    dropped = ctypes.c_uint64(0xA5A5)
    p, rec = X.versioned(ctx, X.desc(), (1, 3), 0)
    ctx.expect(f(ctx.vptr(p), 2, ctypes.byref(dropped), None), "NULL_POINTER")
    ctx.expect(f(None, 2, ctypes.byref(dropped), ctypes.byref(out)), "NULL_POINTER")
    ctx.expect(f(ctx.vptr(X.poison_page(ctx)), 2, ctypes.byref(dropped), ctypes.byref(out)), "INVALID_ARGUMENT",
               what="options before reading the tensor")
    for major in (0, 2, 0xFFFFFFFF):
        q, r2 = X.versioned(ctx, None, version=(major, 3), readable=8)
        ctx.expect(f(ctx.vptr(q), 1, ctypes.byref(dropped), ctypes.byref(out)), "UNSUPPORTED_VERSION")
        ctx.check(ctx.calls(r2) == 0, "the deleter ran on a major mismatch")
    ctx.check(not out and dropped.value == 0xA5A5, "an out-parameter written on failure")
    # out_dropped_flags may be NULL.
    ctx.ok(f(ctx.vptr(p), 0, None, ctypes.byref(out)))
    ctx.f.dlpack_legacy_tensor_delete(out)
    ctx.check(ctx.calls(rec) == 1, "the deleter did not run once")


@case("core.versioned_to_legacy.assumed_read_only", profile="core",
      covers=["CORE-VERSIONED-TO-LEGACY-5", "CORE-VERSIONED-TO-LEGACY-8", "OWN-MODEL-1"])
def _(ctx):
    # A wrapper whose READ_ONLY this implementation assumed converts back without the option;
    # one whose READ_ONLY was stated does not.
    for flags, want in ((0, "OK"), (4, "OK"), (1, "READ_ONLY")):
        p, rec = ctx.make_legacy(shape=(2, 3))
        w = vp(ctx)()
        ctx.ok(ctx.f.dlpack_legacy_to_versioned(ctx.lptr(p), flags, ctypes.byref(w)))
        out = lp(ctx)()
        dropped = ctypes.c_uint64(0xA5A5)
        st = ctx.f.dlpack_versioned_to_legacy(w, 0, ctypes.byref(dropped), ctypes.byref(out))
        ctx.expect(st, want, what=f"wrap flags {flags}")
        if want == "OK":
            ctx.check(dropped.value == flags | 1, f"dropped {dropped.value:#x}, expected {flags | 1:#x}")
            ctx.f.dlpack_legacy_tensor_delete(out)
        else:
            ctx.f.dlpack_tensor_delete(w)
        ctx.check(ctx.calls(rec) == 1, f"wrap flags {flags}: the legacy deleter ran {ctx.calls(rec)} times")


# -- dlpack_tensor_create ---------------------------------------------------------------------------
def create_model(r, flags):
    if r["shape"] is None and r["ndim"] > 0:
        return "NULL_POINTER"
    if (flags & ~(1 << 63)) & ~7:
        return "INVALID_FLAGS"
    dt, di = r["device"]
    if di < 0 or (dt not in M.ASSIGNED_DEVICE_TYPES and not flags >> 63):
        return "INVALID_DEVICE"
    return M.validate(r, (1, 3), flags & 7, {"struct_size": 40, "flags": M.V_LENIENT})[0]


def create_args(ctx, d, flags, out, release=True, rec=0):
    """The arguments of dlpack_tensor_create for description `d` (made before any counting
    window: they are Python objects that live on), and the DLTensor holding them."""
    dl = ctx.T.DLTensor.from_address(X.dltensor(ctx, d))
    P = ctypes.POINTER(ctypes.c_int64)
    args = (dl.data, dl.device, dl.ndim, ctypes.cast(dl.shape, P), ctypes.cast(dl.strides, P), dl.dtype,
            dl.byte_offset, flags, ctx.RELEASE_CTX if release else None, rec,
            ctypes.byref(out) if out is not None else None)
    return args, dl


def call_create(ctx, d, flags, out, release=True, rec=0):
    args, dl = create_args(ctx, d, flags, out, release, rec)
    return ctx.f.dlpack_tensor_create(*args), dl


def create_row(rid, d):
    def run(ctx):
        r = X.resolved(ctx, d)
        for flags in (0, 1, 7, 4, 1 << 63, (1 << 63) | 3, 8, 1 << 62):
            want = create_model(r, flags)
            where = f"{rid}, flags {flags:#x}"
            rec = ctx.fx.fx_record_new()
            out = ctypes.cast(ctypes.c_void_p(0x5A5A), vp(ctx))
            args, dl = create_args(ctx, d, flags, out, rec=rec)
            fn = ctx.f.dlpack_tensor_create
            call = lambda: fn(*args)
            w = alloc_window(ctx)
            st = call()
            alloc_pause(ctx, w)
            ctx.expect(st, want, what=where)
            if want != "OK":
                left = repeat_leak(ctx, w, call)
                ctx.check(ctypes.cast(out, ctypes.c_void_p).value == 0x5A5A, f"{where}: *out_tensor written")
                ctx.check(ctx.calls(rec) == 0, f"{where}: release was called")
                ctx.check(left == 0, f"{where}: {left} allocation(s) left behind")
                continue
            t = out.contents
            ctx.check((t.version.major, t.version.minor) == (1, 3), f"{where}: version")
            ctx.check((t.manager_ctx or 0) == rec, f"{where}: manager_ctx is not release_ctx")
            ctx.check(bool(t.deleter), f"{where}: NULL deleter")
            ctx.check(t.flags == flags & 7, f"{where}: flags {t.flags:#x}, expected {flags & 7:#x}")
            check_copy(ctx, t.dl_tensor, r, dl, where)
            # The caller's arrays are not referenced after the call: poison them, then let the
            # library read the tensor's own.
            for k in ("shape", "strides"):
                a = ctypes.cast(getattr(dl, k), ctypes.c_void_p).value
                if a and a != X.poison_page(ctx) + 64:
                    ctx.fx.fx_poison(ctypes.c_void_p(a))
            lay = X.sentinel_layout(ctx)
            ctx.expect(ctx.f.dlpack_tensor_layout(out, ctypes.byref(lay)), M.layout(r, bool(flags & 4))[0],
                       what=f"{where}: layout of the made tensor")
            ctx.check(ctx.calls(rec) == 0, f"{where}: release called before the deleter")
            alloc_resume(ctx, w)
            call_deleter(out)
            left = alloc_left(ctx, w)
            ctx.check(ctx.calls(rec) == 1, f"{where}: release ran {ctx.calls(rec)} times")
            ctx.check(left == 0, f"{where}: {left} allocation(s) left after release")
    return run


for rid, d in LAYOUT:
    case(f"core.tensor_create.{rid}", profile="core",
         covers=ok_or(d, lambda r: create_model(r, 1 << 63) == "OK",
                      ["CORE-TENSOR-CREATE-5", "CORE-TENSOR-CREATE-6", "CORE-TENSOR-CREATE-7", "CORE-TENSOR-CREATE-9",
                       "OWN-MODEL-4"],
                      ["CORE-TENSOR-CREATE-1" if d["shape"] is None and d["ndim"] > 0 else "CORE-TENSOR-CREATE-4"],
                      ["CORE-TENSOR-CREATE-2", "CORE-TENSOR-CREATE-8", "OWN-MODEL-3"]))(create_row(rid, d))


@case("core.tensor_create.arguments", profile="core",
      covers=["CORE-TENSOR-CREATE-1", "CORE-TENSOR-CREATE-2", "CORE-TENSOR-CREATE-3", "CORE-TENSOR-CREATE-7"])
def _(ctx):
    out = vp(ctx)()
    ctx.expect(call_create(ctx, X.desc(), 0, None)[0], "NULL_POINTER", what="out_tensor NULL")
    ctx.expect(call_create(ctx, X.desc(shape=None, ndim=2), 8, out)[0], "NULL_POINTER", what="NULL shape first")
    ctx.expect(call_create(ctx, X.desc(device=(99, -1)), 8, out)[0], "INVALID_FLAGS", what="flags before device")
    ctx.expect(call_create(ctx, X.desc(ndim=-1, shape=None, device=(99, 0)), 0, out)[0], "INVALID_DEVICE",
               what="device before ndim")
    for dt in list(range(-1, 25)) + [0x7FFFFFFF]:
        for flags in (0, 1 << 63):
            want = "OK" if (dt in M.ASSIGNED_DEVICE_TYPES or flags) else "INVALID_DEVICE"
            for di in (0, 3, -1):
                rec = ctx.fx.fx_record_new()
                o = vp(ctx)()
                st, _ = call_create(ctx, X.desc(device=(dt, di), data=0x10000), flags, o, rec=rec)
                ctx.expect(st, want if di >= 0 else "INVALID_DEVICE", what=f"device ({dt}, {di}), flags {flags:#x}")
                if st == 0:
                    ctx.f.dlpack_tensor_delete(o)
                    ctx.check(ctx.calls(rec) == 1, "release did not run once")
    # A NULL release: nothing to call.
    o = vp(ctx)()
    ctx.ok(call_create(ctx, X.desc(), 0, o, release=False)[0])
    ctx.check(o.contents.manager_ctx is None or o.contents.manager_ctx == 0, "manager_ctx not release_ctx (NULL)")
    ctx.f.dlpack_tensor_delete(o)
    ctx.check(not out, "*out_tensor written on failure")


# -- dlpack_tensor_new_view_validated -------------------------------------------------------------
class Owner:
    pass


def view_model(r, flags):
    if (flags & ~(1 << 63)) & ~7:
        return "INVALID_FLAGS"
    dt, di = r["device"]
    if di < 0 or (dt not in M.ASSIGNED_DEVICE_TYPES and not flags >> 63):
        return "INVALID_DEVICE"
    if r["ndim"] < 0 or r["ndim"] > M.MAX_NDIM:
        return "INVALID_NDIM"
    if r["ndim"] != 0 and r["shape"] is None:
        return "NULL_SHAPE"
    if r["strides"] is None and r["ndim"] != 0 and any(s < 0 for s in r["shape"]):
        return None  # a contract break: any validate status or OK (PY-TENSOR-NEW-VIEW-VALIDATED-7)
    if r["strides"] is None and r["ndim"] != 0 and M.implied_strides(list(r["shape"])) is None:
        return "OVERFLOW"
    st = M.validate(r, (1, 3), flags & 7, {"struct_size": 40, "flags": M.V_LENIENT})[0]
    return "OK" if st == "OK" else None


def view_row(rid, d):
    def run(ctx):
        r = X.resolved(ctx, d)
        for flags in (0, 1, 4, 1 << 63, 8):
            want = view_model(r, flags)
            where = f"{rid}, flags {flags:#x}"
            owner = Owner()
            before = sys.getrefcount(owner)
            p = X.dltensor(ctx, d)
            out = ctypes.cast(ctypes.c_void_p(0x5A5A), vp(ctx))
            st = ctx.pf.dlpack_tensor_new_view_validated(ctx.dptr(p), flags, ctypes.c_void_p(id(owner)),
                                                         ctypes.byref(out))
            if want is None:  # contract broken: no fault, OK or a status validate gives
                # "a status dlpack_dltensor_validate would report": any of its content statuses.
                ctx.expect(st, "OK", "INVALID_DTYPE", "OVERFLOW", "INVALID_SHAPE", "NULL_DATA", what=where)
            else:
                ctx.expect(st, want, what=where)
            if st != 0:
                ctx.check(ctypes.cast(out, ctypes.c_void_p).value == 0x5A5A, f"{where}: *out_tensor written")
                ctx.check(sys.getrefcount(owner) == before, f"{where}: a reference to owner kept on failure")
                continue
            ctx.check(sys.getrefcount(owner) == before + 1, f"{where}: {sys.getrefcount(owner) - before} new references")
            t = out.contents
            if want == "OK":
                ctx.check((t.version.major, t.version.minor) == (1, 3) and bool(t.deleter), f"{where}: version/deleter")
                ctx.check(t.flags == flags & 7, f"{where}: flags {t.flags:#x}")
                check_copy(ctx, t.dl_tensor, r, ctx.T.DLTensor.from_address(p), where)
            ctx.pf.dlpack_tensor_delete(out)
            ctx.check(sys.getrefcount(owner) == before, f"{where}: the reference to owner not dropped")
    return run


for rid, d in LAYOUT:
    case(f"python.tensor_new_view_validated.{rid}", profile="python",
         covers=["PY-TENSOR-NEW-VIEW-VALIDATED-2", "PY-TENSOR-NEW-VIEW-VALIDATED-9"] +
         {"OK": ["PY-TENSOR-NEW-VIEW-VALIDATED-8"], None: ["PY-TENSOR-NEW-VIEW-VALIDATED-7"],
          "OVERFLOW": ["PY-TENSOR-NEW-VIEW-VALIDATED-6"], "INVALID_DEVICE": ["PY-TENSOR-NEW-VIEW-VALIDATED-3"],
          "INVALID_NDIM": ["PY-TENSOR-NEW-VIEW-VALIDATED-4"], "NULL_SHAPE": ["PY-TENSOR-NEW-VIEW-VALIDATED-4"]}
         [view_model(__import__("cases.core_layout", fromlist=["static"]).static(d), 0)])(view_row(rid, d))


@case("python.tensor_new_view_validated.nulls_and_order", profile="python",
      covers=["PY-TENSOR-NEW-VIEW-VALIDATED-1", "PY-TENSOR-NEW-VIEW-VALIDATED-2",
              "PY-TENSOR-NEW-VIEW-VALIDATED-3", "PY-TENSOR-NEW-VIEW-VALIDATED-4"])
def _(ctx):
    owner = Owner()
    o = ctypes.c_void_p(id(owner))
    out = vp(ctx)()
    f = ctx.pf.dlpack_tensor_new_view_validated
    p = X.dltensor(ctx, X.desc(ndim=-1, shape="poison", strides="poison", device=(99, -1)))
    ctx.expect(f(None, 8, o, ctypes.byref(out)), "NULL_POINTER")
    ctx.expect(f(ctx.dptr(p), 8, None, ctypes.byref(out)), "NULL_POINTER")
    ctx.expect(f(ctx.dptr(p), 8, o, None), "NULL_POINTER")
    ctx.expect(f(ctx.dptr(p), 8, o, ctypes.byref(out)), "INVALID_FLAGS")
    ctx.expect(f(ctx.dptr(p), 1 << 63, o, ctypes.byref(out)), "INVALID_DEVICE")
    q = X.dltensor(ctx, X.desc(ndim=-1, shape="poison", strides="poison", device=(99, 0)))
    ctx.expect(f(ctx.dptr(q), 1 << 63, o, ctypes.byref(out)), "INVALID_NDIM")
    ctx.expect(f(ctx.dptr(q), 0, o, ctypes.byref(out)), "INVALID_DEVICE")
    ctx.check(not out, "*out_tensor written on failure")


@case("python.tensor_new_view_validated.deleter_any_thread", profile="python",
      covers=["PY-TENSOR-NEW-VIEW-VALIDATED-10", "OWN-DELETER-8", "OWN-DELETER-9"])
def _(ctx):
    owner = Owner()
    before = sys.getrefcount(owner)
    views = []
    for _ in range(4):
        out = vp(ctx)()
        ctx.ok(ctx.pf.dlpack_tensor_new_view_validated(ctx.dptr(X.dltensor(ctx, X.desc(strides=(3, 1)))), 0,
                                                       ctypes.c_void_p(id(owner)), ctypes.byref(out)))
        views.append(out)
    ctx.check(sys.getrefcount(owner) == before + 4, "four views, not four references")
    # Released: with the GIL on this thread, without it on this thread (ctypes.CDLL releases it),
    # and on two other threads without the GIL, calling the deleter member directly and through
    # dlpack_tensor_delete.
    ctx.pf.dlpack_tensor_delete(views[0])
    ctx.f.dlpack_tensor_delete(views[1])
    t1 = threading.Thread(target=lambda: ctx.f.dlpack_tensor_delete(views[2]))
    t2 = threading.Thread(target=lambda: call_deleter(views[3]))
    t1.start(); t2.start(); t1.join(); t2.join()
    ctx.check(sys.getrefcount(owner) == before, f"{sys.getrefcount(owner) - before} references left")
