"""conformance/run --pair LIB_A LIB_B: tensors that cross two implementations.

A tensor made by one implementation (dlpack_tensor_create, dlpack_tensor_alloc,
dlpack_legacy_to_versioned, dlpack_legacy_tensor_wrap, dlpack_versioned_to_legacy, and
dlpack_tensor_new_view_validated of the python profile where the maker claims it) is
released, validated, queried and converted by the other, and the answers are checked against the
specification: every deleter runs exactly once, on the releasing thread, whichever library calls
it; both libraries give the same answers about the same tensor; nothing is left allocated.

Each case runs in a child process (harness/child.py, as the normal runner's cases) that loads both
libraries with RTLD_LOCAL, so that neither library's symbols can stand in for the other's. Every
case runs in both directions: MAKER = LIB_A and USER = LIB_B, then the reverse. In a case,
`ctx.f` is the maker (the library of the child's spec) and `user(ctx)` the other library.

The cases cite the requirements they check; they belong to no profile's coverage (the normal run
covers every requirement), they add the cross-implementation view.
"""
from __future__ import annotations

import ctypes
import gc
import os
import sys
import threading
import time
from pathlib import Path

from harness import registry
from harness.registry import Fail, Skip

PREFIX = "pair."
MODULE = __name__


def pcase(name: str, covers, profile="core"):
    """Register a pair case. A function of a profile the maker does not claim (and does not
    export) skips the case in that direction."""
    return registry.case(PREFIX + name, covers=covers, profile=profile)


# -- the other library ---------------------------------------------------------------------------
def user(ctx, gil: bool = False):
    """The user side's functions (the library in spec['lib_b']), loaded RTLD_LOCAL once per child."""
    key = "_pair_user_py" if gil else "_pair_user"
    fns = getattr(ctx, key, None)
    if fns is None:
        from harness.context import Functions
        mode = os.RTLD_LOCAL | os.RTLD_NOW
        path = ctx.spec["lib_b"]
        h = ctypes.PyDLL(path, mode=mode) if gil else ctypes.CDLL(path, mode=mode)
        fns = Functions(ctx, h)
        setattr(ctx, key, fns)
    return fns


def expect_status(ctx, status, want, what):
    if status != ctx.m.status(want):
        raise Fail(f"{what}: expected {want}, got {ctx.status_name(status)}")


def ok(ctx, status, what):
    expect_status(ctx, status, "OK", what)


# -- fixtures ------------------------------------------------------------------------------------
class Made:
    """A tensor the maker created with dlpack_tensor_create over a guarded buffer, whose release
    callback is the counting fixture (`rec`)."""

    def __init__(self, ctx, shape=(2, 3), strides=None, dtype=(2, 32, 1), device=(1, 0), flags=0,
                 byte_offset=0):
        self.rec = ctx.fx.fx_record_new()
        n = 1
        for s in shape:
            n *= max(s, 0)
        nbytes = max(n * ((dtype[1] * dtype[2] + 7) // 8) + byte_offset, 1)
        self.data = ctx.guarded(nbytes) if device[0] in (1, 2, 3, 10, 11, 13, 14) else 0x1000
        sh = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        st = (ctypes.c_int64 * max(len(shape), 1))(*strides) if strides is not None else None
        self.out = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
        self.args = (ctypes.c_void_p(self.data), ctx.T.DLDevice(*device), len(shape),
                     sh if shape else None, st, ctx.T.DLDataType(*dtype), byte_offset, flags,
                     ctypes.c_void_p(ctx.RELEASE_CTX), ctypes.c_void_p(self.rec), ctypes.byref(self.out))
        st_ = ctx.f.dlpack_tensor_create(*self.args)
        ok(ctx, st_, f"maker's dlpack_tensor_create(shape={shape}, strides={strides}, dtype={dtype}, "
                     f"device={device}, flags={flags:#x})")
        self.ptr = self.out
        self.addr = ctypes.cast(self.out, ctypes.c_void_p).value

    def calls(self, ctx):
        return ctx.calls(self.rec)


def released_once(ctx, rec, what):
    n = ctx.calls(rec)
    if n != 1:
        raise Fail(f"{what}: the original's deleter/release ran {n} times, expected exactly once")


def not_released(ctx, rec, what):
    n = ctx.calls(rec)
    if n != 0:
        raise Fail(f"{what}: the original's deleter/release ran {n} times, expected none")


def layout_of(ctx, fns, fn_name, *args):
    lay = ctx.T.dlpack_helpers_layout()
    st = getattr(fns, fn_name)(*args, ctypes.byref(lay))
    return st, {f: getattr(lay, f) for f, _ in ctx.T.dlpack_helpers_layout._fields_}


def answers(ctx, fns, vptr):
    """What one library says of a versioned tensor through the read-only core functions."""
    out = {}
    st, lay = layout_of(ctx, fns, "dlpack_tensor_validate", vptr, None)
    out["validate"] = (ctx.status_name(st), lay if st == 0 else None)
    st, lay = layout_of(ctx, fns, "dlpack_tensor_layout", vptr)
    out["layout"] = (ctx.status_name(st), lay if st == 0 else None)
    dev = ctx.T.DLDevice()
    st = fns.dlpack_get_device(vptr, ctypes.byref(dev))
    out["device"] = (ctx.status_name(st), (dev.device_type, dev.device_id) if st == 0 else None)
    fl = ctypes.c_uint64()
    st = fns.dlpack_tensor_get_flags(vptr, ctypes.byref(fl))
    out["flags"] = (ctx.status_name(st), fl.value if st == 0 else None)
    w = ctypes.c_int32()
    st = fns.dlpack_tensor_writability(vptr, ctypes.byref(w))
    out["writability"] = (ctx.status_name(st), w.value if st == 0 else None)
    c = ctypes.c_int32()
    st = fns.dlpack_tensor_check_version(vptr, ctypes.byref(c))
    out["check_version"] = (ctx.status_name(st), c.value if st == 0 else None)
    return out


def same_answers(ctx, vptr, what, skip=()):
    a = answers(ctx, ctx.f, vptr)
    b = answers(ctx, user(ctx), vptr)
    for k in a:
        if k in skip:
            continue
        if a[k] != b[k]:
            raise Fail(f"{what}: {k}: the maker answers {a[k]}, the user {b[k]}")
    return a


# -- the cases -----------------------------------------------------------------------------------
SHAPES = [  # (name, create keyword arguments)
    ("c_2x3", dict(shape=(2, 3), strides=(3, 1))),
    ("f_2x3", dict(shape=(2, 3), strides=(1, 2))),
    ("null_strides_4x5x6", dict(shape=(4, 5, 6))),
    ("zero_d", dict(shape=())),
    ("empty_0x3", dict(shape=(0, 3), strides=(3, 1))),
    ("negative_stride", dict(shape=(3, 2), strides=(-2, 1), byte_offset=16)),
    ("broadcast", dict(shape=(4, 3), strides=(0, 1))),
    ("int4_packed", dict(shape=(5, 3), dtype=(0, 4, 1))),
    ("int4_padded", dict(shape=(5, 3), dtype=(0, 4, 1), flags=4)),
    ("bool_x2_vector", dict(shape=(7,), dtype=(6, 8, 2))),
    ("read_only_copied", dict(shape=(2, 2), flags=3)),
    ("cuda_device_3", dict(shape=(8,), device=(2, 3))),
    ("opencl_handle_offset", dict(shape=(2, 5), device=(4, 1), byte_offset=24)),
]


def _created_case(kw):
    def run(ctx):
        t = Made(ctx, **kw)
        a = same_answers(ctx, t.ptr, "a tensor from the maker's dlpack_tensor_create")
        ok(ctx, ctx.m.status(a["validate"][0]), "the user's dlpack_tensor_validate")
        # The layout both give is the one the maker's dlpack_dltensor_layout gives for the
        # arguments (CORE-TENSOR-CREATE-5/6: only metadata copied, strides filled in).
        d = ctx.T.DLTensor()
        d.data = t.data
        d.device = ctx.T.DLDevice(*kw.get("device", (1, 0)))
        d.ndim = len(kw["shape"])
        d.dtype = ctx.T.DLDataType(*kw.get("dtype", (2, 32, 1)))
        sh = (ctypes.c_int64 * max(d.ndim, 1))(*kw["shape"])
        d.shape = ctypes.cast(sh, type(d.shape)) if d.ndim else None
        sts = kw.get("strides")
        starr = (ctypes.c_int64 * max(d.ndim, 1))(*sts) if sts is not None else None
        d.strides = ctypes.cast(starr, type(d.strides)) if starr is not None else None
        d.byte_offset = kw.get("byte_offset", 0)
        st, want = layout_of(ctx, ctx.f, "dlpack_dltensor_layout", ctypes.byref(d), kw.get("flags", 0) & 4)
        ok(ctx, st, "the maker's dlpack_dltensor_layout of the arguments")
        if sts is None and d.ndim:
            # NULL strides in the arguments; the tensor carries them (CORE-TENSOR-CREATE-6)
            want["properties"] &= ~ctx.K.DLPACK_HELPERS_LAYOUT_STRIDES_IMPLIED
        if a["layout"][1] != want:
            raise Fail(f"the tensor's layout {a['layout'][1]} differs from its arguments' {want}")
        if a["flags"][1] != kw.get("flags", 0) & 7:
            raise Fail(f"flags {a['flags'][1]:#x}, expected {kw.get('flags', 0) & 7:#x}")
        if a["device"][1] != tuple(kw.get("device", (1, 0))):
            raise Fail(f"device {a['device'][1]}, expected {kw.get('device', (1, 0))}")
        not_released(ctx, t.rec, "after the queries")
        user(ctx).dlpack_tensor_delete(t.ptr)
        released_once(ctx, t.rec, "the user's dlpack_tensor_delete of the maker's tensor")
        if ctx.fx.fx_thread(t.rec) != ctx.fx.fx_gettid():
            raise Fail("the release callback ran on another thread than the releasing call's")
    return run


for _name, _kw in SHAPES:
    pcase(f"create.{_name}", ["CORE-TENSOR-CREATE-5", "CORE-TENSOR-CREATE-6", "CORE-TENSOR-CREATE-7",
                              "CORE-TENSOR-VALIDATE-4", "CORE-TENSOR-LAYOUT-4", "CORE-GET-DEVICE-4",
                              "CORE-TENSOR-GET-FLAGS-3", "CORE-TENSOR-WRITABILITY-3",
                              "CORE-TENSOR-DELETE-1", "CORE-TENSOR-DELETE-8", "OWN-DELETER-1"])(_created_case(_kw))


@pcase("create.nothing_left_allocated", ["OWN-DELETER-8", "CORE-TENSOR-CREATE-7", "OWN-MODEL-3"])
def _(ctx):
    if not ctx.fx.fx_alloc_available():
        raise Skip("the allocation counter is not preloaded")
    shp = (ctypes.c_int64 * 3)(2, 3, 4)
    # Warm up both libraries and ctypes outside the window.
    for _ in range(2):
        t = Made(ctx, shape=(2, 3, 4))
        user(ctx).dlpack_tensor_delete(t.ptr)
    out = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
    dev, dt = ctx.T.DLDevice(1, 0), ctx.T.DLDataType(2, 32, 1)
    rec = ctx.fx.fx_record_new()
    data = ctypes.c_void_p(ctx.guarded(96))
    relf, relc = ctypes.c_void_p(ctx.RELEASE_CTX), ctypes.c_void_p(rec)
    create, delete = ctx.f.dlpack_tensor_create, user(ctx).dlpack_tensor_delete
    gc.disable()
    try:
        ctx.fx.fx_alloc_begin()
        st = create(data, dev, 3, shp, None, dt, 0, 0, relf, relc, ctypes.byref(out))
        if st == 0:
            delete(out)
        live = ctx.fx.fx_alloc_end()
    finally:
        gc.enable()
    ok(ctx, st, "the maker's dlpack_tensor_create")
    released_once(ctx, rec, "the user's release")
    if live != 0:
        raise Fail(f"{live} block(s) the maker allocated were not freed by the user's release")


@pcase("create.released_on_another_thread", ["CORE-TENSOR-DELETE-8", "OWN-DELETER-8", "CORE-TENSOR-CREATE-7"])
def _(ctx):
    t = Made(ctx, shape=(3, 3))
    tid = []

    def worker():
        tid.append(ctx.fx.fx_gettid())
        user(ctx).dlpack_tensor_delete(t.ptr)

    th = threading.Thread(target=worker)
    th.start()
    th.join()
    released_once(ctx, t.rec, "the user's dlpack_tensor_delete on another thread")
    if ctx.fx.fx_thread(t.rec) != tid[0]:
        raise Fail("the release callback did not run on the thread that released the tensor")


@pcase("create.check_version_or_delete_keeps", ["CORE-TENSOR-CHECK-VERSION-OR-DELETE-2",
                                                "CORE-TENSOR-CHECK-VERSION-2"])
def _(ctx):
    t = Made(ctx)
    c = ctypes.c_int32(-1)
    ok(ctx, user(ctx).dlpack_tensor_check_version_or_delete(t.ptr, ctypes.byref(c)),
       "the user's dlpack_tensor_check_version_or_delete of a DLPack 1.3 tensor")
    if c.value != ctx.K.DLPACK_HELPERS_VERSION_EXACT:
        raise Fail(f"compat {c.value}, expected EXACT for the {{1, 3}} the maker writes")
    not_released(ctx, t.rec, "a readable major")
    ctx.f.dlpack_tensor_delete(t.ptr)
    released_once(ctx, t.rec, "the maker's own release afterwards")


@pcase("create.flags_set_by_other", ["CORE-TENSOR-SET-FLAGS-5", "CORE-TENSOR-GET-FLAGS-3",
                                     "CORE-TENSOR-READ-ONLY-ORIGIN-5", "CORE-TENSOR-WRITABILITY-3"])
def _(ctx):
    t = Made(ctx)
    u = user(ctx)
    ok(ctx, u.dlpack_tensor_set_flags(t.ptr, 3, 0), "the user's dlpack_tensor_set_flags(set READ_ONLY|IS_COPIED)")
    fl = ctypes.c_uint64()
    ok(ctx, ctx.f.dlpack_tensor_get_flags(t.ptr, ctypes.byref(fl)), "the maker's dlpack_tensor_get_flags")
    if fl.value != 3:
        raise Fail(f"the maker reads flags {fl.value:#x} after the user set 0x3")
    for who, fns in (("maker", ctx.f), ("user", u)):
        o = ctypes.c_int32(-1)
        ok(ctx, fns.dlpack_tensor_read_only_origin(t.ptr, ctypes.byref(o)), f"the {who}'s read-only origin")
        if o.value != ctx.K.DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED:
            raise Fail(f"the {who} answers origin {o.value} for a created tensor whose READ_ONLY was set, "
                       "expected STATED")
    ok(ctx, ctx.f.dlpack_tensor_set_flags(t.ptr, 0, 1), "the maker's dlpack_tensor_set_flags(clear READ_ONLY)")
    w = ctypes.c_int32(-1)
    ok(ctx, u.dlpack_tensor_writability(t.ptr, ctypes.byref(w)), "the user's writability")
    if w.value != ctx.K.DLPACK_HELPERS_WRITABILITY_WRITABLE:
        raise Fail(f"the user answers writability {w.value} after READ_ONLY was cleared")
    u.dlpack_tensor_delete(t.ptr)
    released_once(ctx, t.rec, "the user's release")


@pcase("legacy_to_versioned.released_by_other", ["CORE-LEGACY-TO-VERSIONED-1", "CORE-LEGACY-TO-VERSIONED-2",
                                                  "CORE-LEGACY-TENSOR-WRAP-6", "CORE-LEGACY-TENSOR-WRAP-7",
                                                  "CORE-LEGACY-TENSOR-WRAP-8", "CORE-TENSOR-READ-ONLY-ORIGIN-4",
                                                  "CORE-TENSOR-READ-ONLY-ORIGIN-5", "CORE-TENSOR-READ-ONLY-ORIGIN-6",
                                                  "CORE-TENSOR-DELETE-1"])
def _(ctx):
    p, rec = ctx.make_legacy(shape=(4, 5))  # NULL strides: the wrapper fills them in
    out = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
    ok(ctx, ctx.f.dlpack_legacy_to_versioned(ctx.lptr(p), 0, ctypes.byref(out)), "the maker's dlpack_legacy_to_versioned")
    a = same_answers(ctx, out, "the maker's legacy wrapper")
    if a["writability"][1] != ctx.K.DLPACK_HELPERS_WRITABILITY_READ_ONLY:
        raise Fail(f"the wrapper's writability {a['writability']}, expected READ_ONLY")
    if a["layout"][1]["properties"] & ctx.K.DLPACK_HELPERS_LAYOUT_STRIDES_IMPLIED:
        raise Fail("the wrapper has NULL strides (CORE-LEGACY-TENSOR-WRAP-7: a wrapper never has)")
    o_m, o_u = ctypes.c_int32(-1), ctypes.c_int32(-1)
    ok(ctx, ctx.f.dlpack_tensor_read_only_origin(out, ctypes.byref(o_m)), "the maker's read-only origin")
    ok(ctx, user(ctx).dlpack_tensor_read_only_origin(out, ctypes.byref(o_u)), "the user's read-only origin")
    if o_m.value != ctx.K.DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY:
        raise Fail(f"the maker answers origin {o_m.value} for its own legacy wrapper, expected LEGACY")
    if o_u.value != ctx.K.DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED:
        raise Fail(f"the user answers origin {o_u.value} for another implementation's wrapper, expected STATED "
                   "(it did not make it: CORE-TENSOR-READ-ONLY-ORIGIN-5/6)")
    not_released(ctx, rec, "before the release")
    user(ctx).dlpack_tensor_delete(out)
    released_once(ctx, rec, "the user's dlpack_tensor_delete of the maker's legacy wrapper")


@pcase("legacy_wrap_writable.to_legacy_by_other", ["CORE-LEGACY-TENSOR-WRAP-6", "CORE-LEGACY-TENSOR-WRAP-8",
                                                   "CORE-VERSIONED-TO-LEGACY-7", "CORE-VERSIONED-TO-LEGACY-8",
                                                   "CORE-VERSIONED-TO-LEGACY-9", "CORE-LEGACY-TENSOR-DELETE-1",
                                                   "CORE-LEGACY-TENSOR-VALIDATE-2"])
def _(ctx):
    p, rec = ctx.make_legacy(shape=(3, 4), strides=(1, 3))
    v = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
    ok(ctx, ctx.f.dlpack_legacy_tensor_wrap(ctx.lptr(p), 2, ctx.K.DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE,
                                            ctypes.byref(v)), "the maker's dlpack_legacy_tensor_wrap(IS_COPIED, writable)")
    u = user(ctx)
    w = ctypes.c_int32(-1)
    ok(ctx, u.dlpack_tensor_writability(v, ctypes.byref(w)), "the user's writability")
    if w.value != ctx.K.DLPACK_HELPERS_WRITABILITY_WRITABLE:
        raise Fail(f"the user answers writability {w.value} for a writable wrap")
    leg = ctypes.POINTER(ctx.T.DLManagedTensor)()
    dropped = ctypes.c_uint64(0xDEAD)
    ok(ctx, u.dlpack_versioned_to_legacy(v, 0, ctypes.byref(dropped), ctypes.byref(leg)),
       "the user's dlpack_versioned_to_legacy of the maker's wrap")
    if dropped.value != 2:
        raise Fail(f"dropped flags {dropped.value:#x}, expected the IS_COPIED the wrap carries (0x2)")
    st_m, lay_m = layout_of(ctx, ctx.f, "dlpack_legacy_tensor_validate", leg, None)
    st_u, lay_u = layout_of(ctx, u, "dlpack_legacy_tensor_validate", leg, None)
    ok(ctx, st_m, "the maker's dlpack_legacy_tensor_validate of the user's legacy wrapper")
    if (st_m, lay_m) != (st_u, lay_u):
        raise Fail(f"legacy validation differs: maker {lay_m}, user {lay_u}")
    if not lay_m["properties"] & ctx.K.DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS:
        raise Fail("the strides (1, 3) of the original did not survive two conversions")
    not_released(ctx, rec, "before the release")
    ctx.f.dlpack_legacy_tensor_delete(leg)
    released_once(ctx, rec, "the maker's dlpack_legacy_tensor_delete of the user's wrapper of the maker's wrap")


@pcase("legacy_to_versioned.other_cannot_tell_legacy", ["CORE-VERSIONED-TO-LEGACY-5", "CORE-VERSIONED-TO-LEGACY-8",
                                                        "CORE-VERSIONED-TO-LEGACY-10", "CORE-TENSOR-READ-ONLY-ORIGIN-6"])
def _(ctx):
    p, rec = ctx.make_legacy(shape=(2, 3))
    v = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
    ok(ctx, ctx.f.dlpack_legacy_to_versioned(ctx.lptr(p), 0, ctypes.byref(v)), "the maker's dlpack_legacy_to_versioned")
    u = user(ctx)
    leg = ctypes.POINTER(ctx.T.DLManagedTensor)()
    dropped = ctypes.c_uint64(0xDEAD)
    # The user did not make the wrapper, so its READ_ONLY reads as stated: refused without the option.
    expect_status(ctx, u.dlpack_versioned_to_legacy(v, 0, ctypes.byref(dropped), ctypes.byref(leg)), "READ_ONLY",
                  "the user's dlpack_versioned_to_legacy of another implementation's legacy wrapper")
    if leg or dropped.value != 0xDEAD:
        raise Fail("an out-parameter was written on failure")
    not_released(ctx, rec, "a refused conversion")
    # The maker knows its own wrapper: converted without the option.
    leg2 = ctypes.POINTER(ctx.T.DLManagedTensor)()
    ok(ctx, ctx.f.dlpack_versioned_to_legacy(v, 0, None, ctypes.byref(leg2)),
       "the maker's dlpack_versioned_to_legacy of its own legacy wrapper (READ_ONLY assumed)")
    not_released(ctx, rec, "a conversion")
    u.dlpack_legacy_tensor_delete(leg2)
    released_once(ctx, rec, "the user's dlpack_legacy_tensor_delete")


@pcase("versioned_to_legacy.released_by_other", ["CORE-VERSIONED-TO-LEGACY-7", "CORE-VERSIONED-TO-LEGACY-9",
                                                  "CORE-LEGACY-TENSOR-DELETE-1", "CORE-LEGACY-GET-DEVICE-3",
                                                  "CORE-LEGACY-TENSOR-WRITABILITY-2", "CORE-TENSOR-CREATE-7"])
def _(ctx):
    t = Made(ctx, shape=(2, 3, 4), device=(13, 2))
    leg = ctypes.POINTER(ctx.T.DLManagedTensor)()
    ok(ctx, ctx.f.dlpack_versioned_to_legacy(t.ptr, 0, None, ctypes.byref(leg)), "the maker's dlpack_versioned_to_legacy")
    u = user(ctx)
    dev = ctx.T.DLDevice()
    ok(ctx, u.dlpack_legacy_get_device(leg, ctypes.byref(dev)), "the user's dlpack_legacy_get_device")
    if (dev.device_type, dev.device_id) != (13, 2):
        raise Fail(f"device ({dev.device_type}, {dev.device_id}), expected (13, 2)")
    w = ctypes.c_int32(-1)
    ok(ctx, u.dlpack_legacy_tensor_writability(leg, ctypes.byref(w)), "the user's legacy writability")
    if w.value != ctx.K.DLPACK_HELPERS_WRITABILITY_UNKNOWN:
        raise Fail(f"legacy writability {w.value}, expected UNKNOWN")
    st_m, lay_m = layout_of(ctx, ctx.f, "dlpack_legacy_tensor_validate", leg, None)
    st_u, lay_u = layout_of(ctx, u, "dlpack_legacy_tensor_validate", leg, None)
    ok(ctx, st_u, "the user's dlpack_legacy_tensor_validate")
    if (st_m, lay_m) != (st_u, lay_u):
        raise Fail(f"legacy validation differs: maker {lay_m}, user {lay_u}")
    not_released(ctx, t.rec, "before the release")
    u.dlpack_legacy_tensor_delete(leg)
    released_once(ctx, t.rec, "the user's dlpack_legacy_tensor_delete of the maker's legacy wrapper")


@pcase("create.conversion_refused_by_other", ["CORE-VERSIONED-TO-LEGACY-6", "CORE-VERSIONED-TO-LEGACY-10",
                                              "CORE-VERSIONED-TO-LEGACY-5", "OWN-MODEL-2"])
def _(ctx):
    u = user(ctx)
    for kw, want in ((dict(shape=(3,), dtype=(0, 4, 1), flags=4), "INVALID_FLAGS"),
                     (dict(shape=(3,), flags=1), "READ_ONLY")):
        t = Made(ctx, **kw)
        leg = ctypes.POINTER(ctx.T.DLManagedTensor)()
        expect_status(ctx, u.dlpack_versioned_to_legacy(t.ptr, 0, None, ctypes.byref(leg)), want,
                      f"the user's dlpack_versioned_to_legacy of a created tensor {kw}")
        not_released(ctx, t.rec, "a refused conversion (the tensor is returned)")
        ok(ctx, ctx.f.dlpack_tensor_validate(t.ptr, None, None), "the maker's validation after the refusal")
        u.dlpack_tensor_delete(t.ptr)
        released_once(ctx, t.rec, "the user's release after the refusal")


@pcase("view.released_by_other", ["PY-TENSOR-NEW-VIEW-VALIDATED-8", "PY-TENSOR-NEW-VIEW-VALIDATED-9",
                                  "PY-TENSOR-NEW-VIEW-VALIDATED-10", "CORE-TENSOR-DELETE-1"], profile="python")
def _(ctx):
    owner = bytearray(b"owner of a view")
    p = ctx.make_dltensor(shape=(2, 3), strides=(3, 1))
    for how in ("gil", "no_gil_other_thread"):
        before = sys.getrefcount(owner)
        v = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
        ok(ctx, ctx.pf.dlpack_tensor_new_view_validated(ctx.dptr(p), 0, ctypes.c_void_p(id(owner)), ctypes.byref(v)),
           "the maker's dlpack_tensor_new_view_validated")
        if sys.getrefcount(owner) != before + 1:
            raise Fail(f"the view holds {sys.getrefcount(owner) - before} new references to its owner, expected 1")
        same_answers(ctx, v, "the maker's view")
        if how == "gil":
            user(ctx, gil=True).dlpack_tensor_delete(v)
        else:
            th = threading.Thread(target=lambda: user(ctx).dlpack_tensor_delete(v))
            th.start()
            th.join()
        if sys.getrefcount(owner) != before:
            raise Fail(f"after the user's release ({how}) the owner keeps {sys.getrefcount(owner) - before} "
                       "extra references")


ALLOCS = [  # (name, shape, strides, dtype, flags)
    ("c_3x4_f32", (3, 4), None, (2, 32, 1), 0),
    ("negative_strides", (3, 4), (-4, -1), (2, 64, 1), 0),
    ("broadcast", (5, 2), (0, 1), (1, 8, 1), 1),
    ("empty", (0, 7), None, (2, 16, 1), 0),
    ("zero_d", (), None, (5, 128, 1), 0),
    ("uint4_packed_negative", (9,), (-1,), (1, 4, 1), 0),
    ("uint4_padded", (9,), None, (1, 4, 1), 4),
]


def _alloc_case(shape, strides, dtype, flags):
    def run(ctx):
        out = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
        sh = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        st = (ctypes.c_int64 * max(len(shape), 1))(*strides) if strides is not None else None
        ok(ctx, ctx.f.dlpack_tensor_alloc(ctx.T.DLDevice(1, 0), len(shape), sh if shape else None, st,
                                          ctx.T.DLDataType(*dtype), flags, ctypes.byref(out)),
           "the maker's dlpack_tensor_alloc")
        a = same_answers(ctx, out, "a tensor from the maker's dlpack_tensor_alloc")
        ok(ctx, ctx.m.status(a["validate"][0]), "the user's dlpack_tensor_validate")
        lay = a["layout"][1]
        t = out.contents.dl_tensor
        data = t.data or 0
        if not data or data % ctx.K.DLPACK_HELPERS_ALLOC_ALIGNMENT:
            raise Fail(f"data {data:#x} is NULL or not {ctx.K.DLPACK_HELPERS_ALLOC_ALIGNMENT}-byte aligned")
        size = lay["end_byte"] - lay["lowest_byte"]
        fits = ctypes.c_bool(False)
        ok(ctx, user(ctx).dlpack_dltensor_fits_allocation(ctypes.byref(t), flags, ctypes.c_void_p(data), size,
                                                          ctypes.byref(fits)), "the user's fits_allocation")
        if not fits.value or lay["lowest_byte"] != 0:
            raise Fail(f"the elements do not lie in the {size} bytes from data (lowest_byte {lay['lowest_byte']})")
        if size and ctypes.string_at(data, size) != bytes(size):
            raise Fail("the buffer does not hold zero")
        # A conversion by the user, released by the maker: buffer and tensor freed once.
        leg = ctypes.POINTER(ctx.T.DLManagedTensor)()
        st_ = user(ctx).dlpack_versioned_to_legacy(out, 1, None, ctypes.byref(leg))
        if flags & 4 and (dtype[1] * dtype[2]) % 8:
            expect_status(ctx, st_, "INVALID_FLAGS", "the user's to-legacy of a padded sub-byte tensor")
            user(ctx).dlpack_tensor_delete(out)
            return
        ok(ctx, st_, "the user's dlpack_versioned_to_legacy(ALLOW_READ_ONLY) of the maker's allocation")
        ctx.f.dlpack_legacy_tensor_delete(leg)
    return run


for _name, _shape, _strides, _dtype, _flags in ALLOCS:
    pcase(f"alloc.{_name}", ["CORE-TENSOR-ALLOC-5", "CORE-TENSOR-ALLOC-6", "CORE-TENSOR-ALLOC-7",
                             "CORE-TENSOR-ALLOC-8", "CORE-TENSOR-VALIDATE-4", "CORE-TENSOR-LAYOUT-4",
                             "CORE-DLTENSOR-FITS-ALLOCATION-5", "CORE-VERSIONED-TO-LEGACY-9",
                             "CORE-LEGACY-TENSOR-DELETE-1"])(_alloc_case(_shape, _strides, _dtype, _flags))


@pcase("alloc.nothing_left_allocated", ["CORE-TENSOR-ALLOC-8", "OWN-DELETER-8"])
def _(ctx):
    if not ctx.fx.fx_alloc_available():
        raise Skip("the allocation counter is not preloaded")
    shp = (ctypes.c_int64 * 2)(300, 500)
    dev, dt = ctx.T.DLDevice(1, 0), ctx.T.DLDataType(2, 32, 1)
    alloc, delete = ctx.f.dlpack_tensor_alloc, user(ctx).dlpack_tensor_delete
    out = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
    for _ in range(2):  # warm up outside the window
        ok(ctx, alloc(dev, 2, shp, None, dt, 0, ctypes.byref(out)), "the maker's dlpack_tensor_alloc")
        delete(out)
    gc.disable()
    try:
        ctx.fx.fx_alloc_begin()
        st = alloc(dev, 2, shp, None, dt, 0, ctypes.byref(out))
        if st == 0:
            delete(out)
        live = ctx.fx.fx_alloc_end()
    finally:
        gc.enable()
    ok(ctx, st, "the maker's dlpack_tensor_alloc")
    if live != 0:
        raise Fail(f"{live} block(s) of the maker's allocation were not freed by the user's release")


@pcase("names.round_trip", ["CORE-DTYPE-FORMAT-5", "CORE-DTYPE-FORMAT-6", "CORE-DTYPE-PARSE-2",
                            "CORE-DTYPE-PARSE-6", "CORE-DEVICE-FORMAT-4", "CORE-DEVICE-FORMAT-6",
                            "CORE-DEVICE-PARSE-2"])
def _(ctx):
    u = user(ctx)
    allowed = {0: (1, 2, 4, 8, 16, 32, 64, 128), 1: (1, 2, 4, 8, 16, 32, 64, 128), 2: (16, 32, 64, 128),
               3: tuple(range(8, 256, 8)), 4: (16,), 5: (32, 64, 128), 6: (8,), 15: (6,), 16: (6,), 17: (4,)}
    allowed.update({c: (8,) for c in range(7, 15)})
    buf_a, buf_b = ctypes.create_string_buffer(32), ctypes.create_string_buffer(32)
    for code, bitss in sorted(allowed.items()):
        for bits in bitss:
            for lanes in (1, 2, 3, 65535):
                d = ctx.T.DLDataType(code, bits, lanes)
                ok(ctx, ctx.f.dlpack_dtype_format(d, buf_a, 32, None), f"the maker's dlpack_dtype_format{(code, bits, lanes)}")
                ok(ctx, u.dlpack_dtype_format(d, buf_b, 32, None), f"the user's dlpack_dtype_format{(code, bits, lanes)}")
                if buf_a.value != buf_b.value:
                    raise Fail(f"dtype {(code, bits, lanes)}: maker names it {buf_a.value!r}, user {buf_b.value!r}")
                back = ctx.T.DLDataType()
                ok(ctx, u.dlpack_dtype_parse(buf_a.value, ctypes.byref(back)), f"the user's parse of {buf_a.value!r}")
                if (back.code, back.bits, back.lanes) != (code, bits, lanes):
                    raise Fail(f"{buf_a.value!r} parses back to {(back.code, back.bits, back.lanes)}")
    for t in list(range(1, 5)) + list(range(7, 19)):
        for i in (0, 7, (1 << 31) - 1):
            dv = ctx.T.DLDevice(t, i)
            ok(ctx, ctx.f.dlpack_device_format(dv, buf_a, 32, None), f"the maker's dlpack_device_format({t}, {i})")
            ok(ctx, u.dlpack_device_format(dv, buf_b, 32, None), f"the user's dlpack_device_format({t}, {i})")
            if buf_a.value != buf_b.value:
                raise Fail(f"device ({t}, {i}): maker names it {buf_a.value!r}, user {buf_b.value!r}")
            back = ctx.T.DLDevice()
            ok(ctx, u.dlpack_device_parse(buf_a.value, ctypes.byref(back)), f"the user's parse of {buf_a.value!r}")
            if (back.device_type, back.device_id) != (t, i):
                raise Fail(f"{buf_a.value!r} parses back to {(back.device_type, back.device_id)}")


# -- the mode ------------------------------------------------------------------------------------
def main(a, manifest) -> int:
    from harness import build, runner
    lib_a, lib_b = (str(Path(p).resolve()) for p in a.pair)
    for p in (lib_a, lib_b):
        if not os.path.exists(p):
            print(f"error: --pair {p}: no such file", file=sys.stderr)
            return 2
    fixture_paths = build.fixtures()
    env = {"LD_PRELOAD": fixture_paths["alloc"]}
    infos = {p: runner.discover(p, manifest, env) for p in (lib_a, lib_b)}
    core = manifest.profile_bits["core"]
    for p, info in infos.items():
        if not info.get("profiles", 0) & core:
            print(f"error: {p} does not claim the core profile ({info.get('error', 'profiles')})", file=sys.stderr)
            return 2
    import fnmatch
    ids = sorted(c for c in registry.CASES if c.startswith(PREFIX)
                 and (not a.case or any(fnmatch.fnmatch(c, g) for g in a.case)))
    name = {p: f"{Path(p).name} {infos[p].get('version', '?')}" for p in (lib_a, lib_b)}
    results = {}
    t0 = time.monotonic()
    for maker, usr in ((lib_a, lib_b), (lib_b, lib_a)):
        spec = {"root": str(runner.ROOT), "lib": maker, "lib_b": usr, "manifest": str(manifest.path),
                "exchange": None, "claimed": infos[maker].get("profiles", 0), "modules": [MODULE],
                "tested_profiles": ["core"], "env": env}
        res = runner.run_group(spec, ids, {c: registry.CASES[c].timeout for c in ids})
        direction = f"{name[maker]} -> {name[usr]}"
        for cid in ids:
            r = res.get(cid, {"outcome": "fail", "detail": "no result"})
            results[(direction, cid)] = r
            if r["outcome"] == "fail" or not a.quiet:
                mark = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}.get(r["outcome"], r["outcome"].upper())
                extra = f"  ({r['detail']})" if r["detail"] else ""
                print(f"{mark} [{direction}] {cid}{extra}", flush=True)
    n = {k: sum(1 for r in results.values() if r["outcome"] == k) for k in ("pass", "fail", "skip")}
    covers = sorted({rid for c in ids for rid in registry.CASES[c].covers})
    if a.report:
        import json
        Path(a.report).write_text(json.dumps({
            "schema": "dlpack-helpers-pair-report/1", "suite_version": runner.SUITE_VERSION,
            "spec_version": manifest.spec_version,
            "libraries": {name[p]: {"path": os.path.basename(p), "sha256": runner.sha256(p), "info": infos[p]}
                          for p in (lib_a, lib_b)},
            "summary": {**n, "cases": len(results), "requirements_checked": covers},
            "cases": [{"direction": d, "case": c, **r, "covers": list(registry.CASES[c].covers)}
                      for (d, c), r in sorted(results.items())],
        }, indent=1) + "\n")
    ok_ = n["fail"] == 0 and n["pass"] > 0
    print(f"\npair {name[lib_a]} <-> {name[lib_b]}: {n['pass']} passed, {n['fail']} failed, {n['skip']} skipped "
          f"({len(ids)} cases x 2 directions, {time.monotonic() - t0:.1f} s); {len(covers)} requirements checked "
          "across implementations")
    print("PAIR CONFORMS" if ok_ else "PAIR DOES NOT CONFORM")
    return 0 if ok_ else 1
