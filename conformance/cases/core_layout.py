"""Core: the layout of a tensor as data (dlpack_dltensor_layout, dlpack_tensor_layout,
dlpack_dltensor_fits_allocation, dlpack_compact_strides).

Each row of LAYOUT is a tensor description; the expected status and every layout field come from
harness/layout_model.py (the page's formulas with exact integers), never from the library. The
tensor, its shape and strides are read-only guarded memory (a write or a read past an array
faults) and `data` points into a PROT_NONE page (a dereference faults). OVERFLOW rows are built
so that a wrapped 64-bit computation would give a plausible answer (0, a small count): the
model says OVERFLOW and the library must too.
"""
import ctypes

from harness import layout_model as M
from harness import tensors as X
from harness.registry import case

I64 = M.INT64_MAX
D = X.desc
F32, U8, F64, I4, U1 = (2, 32, 1), (1, 8, 1), (2, 64, 1), (0, 4, 1), (1, 1, 1)

# (row id, description): every row runs through every function of this module.
LAYOUT = [
    ("scalar", D(shape=None, ndim=0)),
    ("scalar_poison_arrays", D(shape="poison", strides="poison", ndim=0, byte_offset=8)),
    ("c_implied", D(shape=(2, 3))),
    ("c_explicit", D(shape=(2, 3), strides=(3, 1))),
    ("f_explicit", D(shape=(2, 3), strides=(1, 2))),
    ("gap", D(shape=(2, 3), strides=(4, 1))),
    ("permuted_compact", D(shape=(2, 3, 4), strides=(1, 8, 2))),
    ("broadcast", D(shape=(2, 3), strides=(0, 1))),
    ("negative", D(shape=(2, 3), strides=(-3, 1), byte_offset=12)),
    ("negative_below_data", D(shape=(4,), strides=(-2,))),
    ("extent1_any_stride", D(shape=(1, 3), strides=(999, 1))),
    ("extent1_negative_stride", D(shape=(3, 1, 2), strides=(2, -7, 1))),
    ("all_extent1", D(shape=(1, 1, 1), strides=(-5, 0, 77))),
    ("vector_1d", D(shape=(7,), strides=(1,))),
    ("empty_bad_strides", D(shape=(0, 3), strides=(-5, 0))),
    ("empty_implied", D(shape=(2, 0, 3))),
    ("empty_huge_explicit", D(shape=(0, 1 << 62, 1 << 62), strides=(1, 1, 1))),
    ("empty_implied_overflow", D(shape=(0, 1 << 62, 4))),
    ("empty_implied_fits", D(shape=(I64, 0))),
    ("empty_null_data", D(shape=(0,), data=0)),
    ("empty_byte_offset", D(shape=(3, 0), strides=(0, -1), byte_offset=1 << 40)),
    # dtypes (CORE-DLTENSOR-LAYOUT-5)
    *[(f"dtype_{c}_{b}_{l}", D(shape=(3,), dtype=(c, b, l))) for c, b, l in [
        (6, 8, 1), (4, 16, 1), (5, 128, 1), (5, 32, 1), (2, 16, 1), (2, 128, 1), (0, 128, 1),
        *[(c, 8, 1) for c in range(7, 15)], (15, 6, 1), (16, 6, 1), (17, 4, 1), (0, 4, 1),
        (1, 1, 1), (1, 2, 3), (3, 24, 1), (3, 8, 1), (2, 32, 4), (0, 8, 65535), (3, 248, 255)]],
    *[(f"bad_dtype_{c}_{b}_{l}", D(shape=(3,), dtype=(c, b, l))) for c, b, l in [
        (2, 8, 1), (4, 32, 1), (6, 1, 1), (0, 3, 1), (3, 0, 1), (3, 12, 1), (18, 8, 1),
        (2, 32, 0), (255, 8, 1), (5, 16, 1), (17, 8, 1), (15, 8, 1), (7, 16, 1), (1, 0, 1)]],
    # packed and padded sub-byte data (CORE-DLTENSOR-LAYOUT-13, -15)
    ("int4_3", D(shape=(3,), dtype=I4)),
    ("int4_negative", D(shape=(3,), strides=(-1,), dtype=I4, byte_offset=1)),
    ("uint1_5x3", D(shape=(5, 3), dtype=U1)),
    ("uint1_stride3", D(shape=(7,), strides=(3,), dtype=U1)),
    ("int2x3_lanes", D(shape=(5,), dtype=(0, 2, 3))),
    ("int4_huge_numel", D(shape=(1 << 62,), strides=(0,), dtype=I4)),
    ("int4_max_numel", D(shape=(I64,), strides=(0,), dtype=I4)),
    ("int4_end_overflow", D(shape=(1,), dtype=I4, byte_offset=I64)),
    ("int4_lowest_odd", D(shape=(4,), strides=(-3,), dtype=I4, byte_offset=5)),
    # byte_offset (CORE-DLTENSOR-LAYOUT-6)
    ("offset_2p63", D(shape=(1,), byte_offset=1 << 63)),
    ("offset_max_u64", D(shape=(1,), byte_offset=(1 << 64) - 1)),
    ("offset_max_end_overflow", D(shape=(1,), dtype=U8, byte_offset=I64)),
    ("offset_max_minus1_fits", D(shape=(1,), dtype=U8, byte_offset=I64 - 1)),
    # check order (CORE-DLTENSOR-LAYOUT-5..8)
    ("order_dtype_before_offset", D(shape=(-1,), dtype=(2, 8, 1), byte_offset=1 << 63)),
    ("order_offset_before_shape", D(shape=(-1,), byte_offset=1 << 63)),
    ("order_shape_before_overflow", D(shape=(1 << 62, -1, 1 << 62))),
    ("negative_extent_last", D(shape=(3, 4, -2), strides=(0, 0, 0))),
    # overflow, never wrapped (CORE-DLTENSOR-LAYOUT-8..13)
    ("numel_2p64", D(shape=(1 << 32, 1 << 32), strides=(0, 0))),
    ("numel_2p64_b", D(shape=(1 << 62, 4), strides=(0, 0))),
    ("numel_max", D(shape=(I64,), strides=(0,), dtype=U8)),
    ("implied_stride_2p64", D(shape=(2, 1 << 62, 4))),
    ("implied_max_fits", D(shape=(I64, 1), dtype=U8)),
    ("hi_2p63", D(shape=(3,), strides=(1 << 62,), dtype=U8)),
    ("storage_2p63", D(shape=(2,), strides=(I64,), dtype=U8)),
    ("storage_max", D(shape=(2,), strides=(I64 - 1,), dtype=U8)),
    ("storage_max_f32_end", D(shape=(2,), strides=(I64 - 1,))),
    ("lo_min_storage_overflow", D(shape=(2,), strides=(-(1 << 63),), dtype=U8)),
    ("lo_min_3", D(shape=(3,), strides=(-(1 << 62),), dtype=U8)),
    ("lo_bytes_min_fits", D(shape=(2,), strides=(-(1 << 61),))),
    ("lo_bytes_overflow", D(shape=(2,), strides=(-(1 << 61) - 1,))),
    ("nbytes_2p64", D(shape=(1 << 61,), strides=(0,), dtype=F64)),
    ("end_bytes_overflow", D(shape=(2,), strides=(1 << 61,), dtype=F64)),
    ("mixed_signs_hi_lo", D(shape=(3, 3), strides=(1 << 61, -(1 << 61)), dtype=U8)),
    # first_element_alignment and what is never checked (CORE-DLTENSOR-LAYOUT-16, -20)
    ("align_offset_4", D(shape=(2,), byte_offset=4)),
    ("align_offset_6", D(shape=(2,), dtype=U8, byte_offset=6)),
    ("align_wraps_mod_2p64", D(shape=(2,), data=(1 << 64) - 16, byte_offset=48)),
    ("align_zero", D(shape=(2,), data=0)),
    ("opaque_handle", D(shape=(2,), device=(99, 0), data=0x1234, byte_offset=24)),
    ("opaque_zero_offset", D(shape=(2,), device=(4, 0), data=0x1000)),
    ("opaque_oneapi_is_pointer", D(shape=(2,), device=(14, 0), data=0x1002)),
    ("negative_device_id", D(shape=(2,), device=(2, -1))),
    ("null_data_nonempty", D(shape=(2,), data=0)),
    ("end_past_address_space", D(shape=(4,), data=(1 << 64) - 8)),
    # ndim and shape (CORE-DLTENSOR-LAYOUT-2..4)
    ("ndim_negative", D(shape="poison", strides="poison", ndim=-1)),
    ("ndim_1025", D(shape="poison", strides="poison", ndim=1025)),
    ("ndim_min", D(shape="poison", strides="poison", ndim=-(1 << 31))),
    ("ndim_1024", D(shape=(1,) * 1024)),
    ("null_shape", D(shape=None, ndim=2, strides=(1, 1))),
    ("null_shape_and_strides", D(shape=None, ndim=1)),
]
ROWS = dict(LAYOUT)
ALL_BUT_PADDED = ((1 << 64) - 1) & ~4


def run_dltensor_layout(ctx, rid, d):
    r = X.resolved(ctx, d)
    p = X.dltensor(ctx, d)
    for flags in (0, 4, ALL_BUT_PADDED, (1 << 64) - 1, 1, 2, 8):
        want, lay_want = M.layout(r, bool(flags & 4))
        lay = X.sentinel_layout(ctx)
        st = ctx.f.dlpack_dltensor_layout(ctx.dptr(p), flags, ctypes.byref(lay))
        where = f"{rid}, flags {flags:#x}"
        ctx.expect(st, want, what=where)
        if want == "OK":
            X.compare_layout(ctx, lay, lay_want, where)
        else:
            ctx.check(X.untouched(lay), f"{where}: *out_layout written on {want}")
            ctx.check(len(ctx.last_error()) > 0, f"{where}: empty last-error message")
            ctx.last_error().decode("utf-8")


def run_tensor_layout(ctx, rid, d):
    r = X.resolved(ctx, d)
    for version, flags in (((1, 3), 0), ((1, 3), 4), ((1, 1), 7), ((1, 0), 3), ((1, 4), (1 << 64) - 1),
                           ((1, 9), 0xF0), ((1, 0), 4), ((1, 3), 8), ((1, 2), 1 << 63)):
        if version[1] <= 3 and flags & ~(3 if version[1] == 0 else 7):
            want, lay_want = "INVALID_FLAGS", None
        else:
            want, lay_want = M.layout(r, bool(flags & 4))
        p, rec = X.versioned(ctx, d, version, flags)
        lay = X.sentinel_layout(ctx)
        st = ctx.f.dlpack_tensor_layout(ctx.vptr(p), ctypes.byref(lay))
        where = f"{rid}, version {version}, flags {flags:#x}"
        ctx.expect(st, want, what=where)
        if want == "OK":
            X.compare_layout(ctx, lay, lay_want, where)
        else:
            ctx.check(X.untouched(lay), f"{where}: *out_layout written on {want}")
        ctx.check(ctx.calls(rec) == 0, f"{where}: the deleter was called")


def fits_model(r, flags, base, size):
    st, lay = M.layout(r, bool(flags & 4))
    if st != "OK":
        return st, None
    if base + size > M.UINTPTR_MAX + 1:
        return "OVERFLOW", None
    ptr = r["device"][0] in M.POINTER_ADDRESSED
    if not ptr and base != r["data"]:
        return "OPAQUE_HANDLE", None
    if lay["properties"] & M.EMPTY:
        return "OK", True
    data = r["data"] if ptr else 0
    b = base if ptr else 0
    return "OK", data + lay["lowest_byte"] >= b and data + lay["end_byte"] <= b + size


def run_fits(ctx, rid, d):
    r = X.resolved(ctx, d)
    p = X.dltensor(ctx, d)
    st, lay = M.layout(r, False)
    data = r["data"]
    choices = [(data, 0), (0, 0), (0, M.UINTPTR_MAX), (data, 1 << 20), (M.UINTPTR_MAX, 1),
               (M.UINTPTR_MAX, 2), ((1 << 63), 1 << 63), ((1 << 63) + 1, 1 << 63)]
    if st == "OK":
        lo, end = lay["lowest_byte"], lay["end_byte"]
        ptr = r["device"][0] in M.POINTER_ADDRESSED
        base0 = (data if ptr else 0)
        for dlo, dhi in ((0, 0), (1, 0), (0, -1), (-1, 1)):
            b = base0 + lo + dlo
            size = end - lo - dlo + dhi
            if 0 <= b <= M.UINTPTR_MAX and size >= 0:
                choices.append((b if ptr else data, size if ptr else end + dhi if end + dhi >= 0 else 0))
    for flags in (0, 4):
        for base, size in choices:
            want, fits = fits_model(r, flags, base, size)
            out = ctypes.c_bool(True)
            ctypes.memset(ctypes.byref(out), 0x5A, 1)
            s = ctx.f.dlpack_dltensor_fits_allocation(ctx.dptr(p), flags, ctypes.c_void_p(base), size,
                                                      ctypes.byref(out))
            where = f"{rid}, flags {flags}, base {base:#x}, size {size:#x}"
            ctx.expect(s, want, what=where)
            raw = ctypes.string_at(ctypes.addressof(out), 1)[0]
            if want == "OK":
                ctx.check(raw == int(fits), f"{where}: out_fits {raw}, expected {int(fits)}")
            else:
                ctx.check(raw == 0x5A, f"{where}: out_fits written on {want}")


def static(d):
    """The description as the model reads it, with a stand-in for the data page (import time)."""
    r = dict(d)
    if r["data"] is None:
        r["data"] = 0x10000
    for k in ("shape", "strides"):
        if r[k] == "poison":
            r[k] = None if k == "strides" else [1] * (r["ndim"] if 0 <= r["ndim"] <= 1024 else 0)
    return r


def layout_ids(d):
    """The CORE-DLTENSOR-LAYOUT-n a row really checks (its expected outcome decides)."""
    r = static(d)
    st, lay = M.layout(r, False)
    ids = {16 if st == "OK" else 21, 19, 20, 21}
    if r["ndim"] == 0:
        ids.add(4)
    if st == "INVALID_NDIM":
        ids.add(2)
    elif st == "NULL_SHAPE":
        ids.add(3)
    elif st == "INVALID_DTYPE":
        ids.add(5)
    elif st == "INVALID_SHAPE":
        ids.add(7)
    elif st == "OVERFLOW":
        ids.add(6 if r["byte_offset"] > I64 else 8)
        if r["strides"] is None:
            ids.add(9)
    else:
        ids |= {9, 10, 15, 16}
        if lay["properties"] & M.EMPTY:
            ids |= {14, 18}
        else:
            ids |= {11, 17, 13 if lay["properties"] & M.PACKED else 12}
    return [f"CORE-DLTENSOR-LAYOUT-{i}" for i in sorted(ids)]


def fits_ids(d):
    r = static(d)
    st, _ = M.layout(r, False)
    ids = {2} if st != "OK" else {3, 5, 7, 8}
    if st == "OK" and r["device"][0] not in M.POINTER_ADDRESSED:
        ids.add(4)
    if st == "OK" and (r["ndim"] == 0 or any(x < 0 for x in (r["strides"] or []))):
        ids.add(6)
    ids.add(8)
    return [f"CORE-DLTENSOR-FITS-ALLOCATION-{i}" for i in sorted(ids)]


for rid, d in LAYOUT:
    case(f"core.dltensor_layout.{rid}", profile="core", covers=layout_ids(d))(
        lambda ctx, rid=rid, d=d: run_dltensor_layout(ctx, rid, d))
    case(f"core.tensor_layout.{rid}", profile="core",
         covers=["CORE-TENSOR-LAYOUT-3", "CORE-TENSOR-LAYOUT-4", "CORE-TENSOR-LAYOUT-5"])(
        lambda ctx, rid=rid, d=d: run_tensor_layout(ctx, rid, d))
    case(f"core.dltensor_fits_allocation.{rid}", profile="core", covers=fits_ids(d))(
        lambda ctx, rid=rid, d=d: run_fits(ctx, rid, d))


@case("core.dltensor_layout.null_pointers", profile="core", covers=["CORE-DLTENSOR-LAYOUT-1"])
def _(ctx):
    p = X.dltensor(ctx, D(ndim=-1, shape="poison"))  # NULL wins over every field check
    lay = X.sentinel_layout(ctx)
    ctx.expect(ctx.f.dlpack_dltensor_layout(None, 0, ctypes.byref(lay)), "NULL_POINTER")
    ctx.check(X.untouched(lay), "*out_layout written")
    ctx.expect(ctx.f.dlpack_dltensor_layout(ctx.dptr(p), 0, None), "NULL_POINTER")


@case("core.tensor_layout.null_pointers", profile="core", covers=["CORE-TENSOR-LAYOUT-1"])
def _(ctx):
    p, _ = X.versioned(ctx, None, version=(2, 0), readable=8)
    lay = X.sentinel_layout(ctx)
    ctx.expect(ctx.f.dlpack_tensor_layout(None, ctypes.byref(lay)), "NULL_POINTER")
    ctx.check(X.untouched(lay), "*out_layout written")
    ctx.expect(ctx.f.dlpack_tensor_layout(ctx.vptr(p), None), "NULL_POINTER")


@case("core.tensor_layout.major_mismatch_reads_only_version", profile="core",
      covers=["CORE-TENSOR-LAYOUT-2", "CORE-TENSOR-LAYOUT-5"])
def _(ctx):
    # Only the 8 bytes of `version` are readable: any other read faults.
    for major in (0, 2, 3, 0xFFFFFFFF):
        p, rec = X.versioned(ctx, None, version=(major, 3), readable=8)
        lay = X.sentinel_layout(ctx)
        ctx.expect(ctx.f.dlpack_tensor_layout(ctx.vptr(p), ctypes.byref(lay)), "UNSUPPORTED_VERSION",
                   what=f"major {major}")
        ctx.check(X.untouched(lay), f"major {major}: *out_layout written")


@case("core.dltensor_fits_allocation.null_pointers", profile="core",
      covers=["CORE-DLTENSOR-FITS-ALLOCATION-1", "CORE-DLTENSOR-FITS-ALLOCATION-8"])
def _(ctx):
    p = X.dltensor(ctx, D(shape=(2,)))
    out = ctypes.c_bool()
    ctypes.memset(ctypes.byref(out), 0x5A, 1)
    st = ctx.f.dlpack_dltensor_fits_allocation(None, 0, ctypes.c_void_p(0x1000), 64, ctypes.byref(out))
    ctx.expect(st, "NULL_POINTER")
    ctx.check(ctypes.string_at(ctypes.addressof(out), 1) == b"\x5a", "out_fits written on NULL_POINTER")
    ctx.expect(ctx.f.dlpack_dltensor_fits_allocation(ctx.dptr(p), 0, None, 64, None), "NULL_POINTER")
    # A NULL base is an address like any other (data 0 with a NULL base fits).
    q = X.dltensor(ctx, D(shape=(2,), data=0))
    st = ctx.f.dlpack_dltensor_fits_allocation(ctx.dptr(q), 0, None, 8, ctypes.byref(out))
    ctx.ok(st)
    ctx.check(ctypes.string_at(ctypes.addressof(out), 1) == b"\x01", "data NULL, base NULL, 8 bytes: not fits")


# -- dlpack_compact_strides ---------------------------------------------------------------------
COMPACT = [
    ("1d", (5,)), ("2d", (2, 3)), ("3d", (2, 3, 4)), ("zeros", (0, 3, 0, 2)), ("ones", (1, 1, 1)),
    ("first_huge", (I64, 2, 3)), ("last_huge", (2, 3, I64)), ("overflow_mid", (2, 1 << 62, 4)),
    ("exact_max", (1, I64, 1)), ("pow63", (2, 1 << 32, 1 << 31)), ("pow63_minus", (2, 1 << 31, (1 << 32) - 1)),
    ("max_1024", (1,) * 1024), ("negative_first", (-1, 2)), ("negative_last", (1 << 62, 4, -3)),
    ("negative_with_overflow", (2, 1 << 62, 1 << 62, -1)),
]


def compact_row(rid, shape):
    def run(ctx):
        n = len(shape)
        sp = ctx.int64_array(list(shape))
        X.readonly(ctx, sp, 8 * n)
        for col in (False, True):
            want = "INVALID_SHAPE" if any(s < 0 for s in shape) else None
            exp = None
            if want is None:
                exp = M.implied_strides(list(shape), column_major=col)
                want = "OK" if exp is not None else "OVERFLOW"
            out = ctx.int64_array([0x5A5A5A5A] * n)
            st = ctx.f.dlpack_compact_strides(n, ctypes.cast(sp, ctypes.POINTER(ctypes.c_int64)), col,
                                              ctypes.cast(out, ctypes.POINTER(ctypes.c_int64)))
            where = f"{rid}, column_major {col}"
            ctx.expect(st, want, what=where)
            got = list((ctypes.c_int64 * n).from_address(out))
            if want == "OK":
                ctx.check(got == exp, f"{where}: strides {got[:8]}..., expected {exp[:8]}...")
                if not col:
                    # CORE-COMPACT-STRIDES-8: the library's own layout of the shape with NULL
                    # strides equals its layout with these strides, but for STRIDES_IMPLIED.
                    d = D(shape=tuple(shape), dtype=(1, 8, 1), data=0)
                    a, b = X.sentinel_layout(ctx), X.sentinel_layout(ctx)
                    sa = ctx.f.dlpack_dltensor_layout(ctx.dptr(X.dltensor(ctx, d)), 0, ctypes.byref(a))
                    sb = ctx.f.dlpack_dltensor_layout(ctx.dptr(X.dltensor(ctx, dict(d, strides=tuple(exp)))), 0,
                                                      ctypes.byref(b))
                    ctx.check(sa == sb, f"{where}: layout status {ctx.status_name(sa)} with NULL strides, "
                                        f"{ctx.status_name(sb)} with the compact strides")
                    if sa == 0:
                        da, db = X.layout_dict(a), X.layout_dict(b)
                        da["properties"] ^= M.IMPLIED
                        ctx.check(da == db, f"{where}: layouts differ: {da} vs {db}")
            else:
                ctx.check(all(v == 0x5A5A5A5A for v in got), f"{where}: out_strides written on {want}")
    return run


for rid, shape in COMPACT:
    case(f"core.compact_strides.{rid}", profile="core",
         covers=["CORE-COMPACT-STRIDES-4", "CORE-COMPACT-STRIDES-5", "CORE-COMPACT-STRIDES-6",
                 "CORE-COMPACT-STRIDES-7", "CORE-COMPACT-STRIDES-8"])(compact_row(rid, shape))


@case("core.compact_strides.ndim_and_nulls", profile="core",
      covers=["CORE-COMPACT-STRIDES-1", "CORE-COMPACT-STRIDES-2", "CORE-COMPACT-STRIDES-3",
              "CORE-COMPACT-STRIDES-7"])
def _(ctx):
    poison = ctypes.cast(X.poison_page(ctx), ctypes.POINTER(ctypes.c_int64))
    for n in (-1, 1025, -(1 << 31), (1 << 31) - 1):
        for sp, out in ((None, None), (poison, poison)):
            ctx.expect(ctx.f.dlpack_compact_strides(n, sp, False, out), "INVALID_NDIM", what=f"ndim {n}")
    for sp, out in ((None, None), (poison, poison)):
        ctx.ok(ctx.f.dlpack_compact_strides(0, sp, True, out), what="ndim 0")
    sp = ctx.int64_array([2, 3])
    out = ctx.int64_array([7, 7])
    P = ctypes.POINTER(ctypes.c_int64)
    ctx.expect(ctx.f.dlpack_compact_strides(2, None, False, ctypes.cast(out, P)), "NULL_POINTER")
    ctx.check(list((ctypes.c_int64 * 2).from_address(out)) == [7, 7], "out_strides written on NULL_POINTER")
    ctx.expect(ctx.f.dlpack_compact_strides(2, ctypes.cast(sp, P), False, None), "NULL_POINTER")
    # Exactly ndim elements are written: the array ends against a guard page (one more faults)
    # and a 1-element prefix of a longer array keeps the rest.
    big = ctx.int64_array([9, 9, 9])
    ctx.ok(ctx.f.dlpack_compact_strides(1, ctypes.cast(sp, P), False, ctypes.cast(big, P)))
    ctx.check(list((ctypes.c_int64 * 3).from_address(big)) == [1, 9, 9], "wrote past ndim")
