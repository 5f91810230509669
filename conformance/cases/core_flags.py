"""Core: flags and writability (dlpack_tensor_get_flags, dlpack_tensor_set_flags,
dlpack_tensor_writability, dlpack_legacy_tensor_writability, dlpack_tensor_read_only_origin) and
the data address (dlpack_dltensor_data_address, dlpack_dltensor_data_location).

Tensors whose major is not 1 hold only their 8 `version` bytes readable (the rest is a guard
page), so reading any other field faults. For a major-1 tensor only `version` and `flags` are
readable where the page says only those are read.
"""
import ctypes

from harness import layout_model as M
from harness import tensors as X
from harness.registry import case

FLAGS_OFF = 24  # offsetof(DLManagedTensorVersioned, flags), checked against the manifest below
VALUES = (0, 1, 2, 3, 4, 5, 6, 7, 8, 0x10, 1 << 32, 1 << 63, (1 << 64) - 1, 0xFFFFFFFFFFFFFFF8)


def head_only(ctx, version, flags, writable=False):
    """A versioned tensor of which only `version` and `flags` are readable (32 bytes: version,
    manager_ctx, deleter are 8 each, then flags): the bytes past flags sit in a guard page."""
    off = ctx.T.DLManagedTensorVersioned.flags.offset
    ctx.check(off == FLAGS_OFF, "suite bug: flags offset")
    n = off + 8
    p = ctx.guarded(n)
    t = (ctypes.c_uint32 * 2).from_address(p)
    t[0], t[1] = version
    ctypes.c_uint64.from_address(p + off).value = flags
    if not writable:
        X.readonly(ctx, p, n)
    return p


def u64(ctx, v=0xA5A5A5A5A5A5A5A5):
    return ctypes.c_uint64(v)


@case("core.tensor_get_flags.table", profile="core",
      covers=["CORE-TENSOR-GET-FLAGS-2", "CORE-TENSOR-GET-FLAGS-3", "CORE-TENSOR-GET-FLAGS-4"])
def _(ctx):
    for minor in (0, 1, 3, 4, 0xFFFFFFFF):
        for f in VALUES:
            p = head_only(ctx, (1, minor), f)
            out = u64(ctx)
            ctx.ok(ctx.f.dlpack_tensor_get_flags(ctx.vptr(p), ctypes.byref(out)), what=f"minor {minor}, flags {f:#x}")
            ctx.check(out.value == f, f"minor {minor}: flags {out.value:#x}, expected {f:#x}")
    for major in (0, 2, 0xFFFFFFFF):
        p, _ = X.versioned(ctx, None, version=(major, 0), readable=8)
        out = u64(ctx)
        ctx.expect(ctx.f.dlpack_tensor_get_flags(ctx.vptr(p), ctypes.byref(out)), "UNSUPPORTED_VERSION")
        ctx.check(out.value == 0xA5A5A5A5A5A5A5A5, f"major {major}: out_flags written")


@case("core.tensor_get_flags.null", profile="core", covers=["CORE-TENSOR-GET-FLAGS-1", "CORE-TENSOR-GET-FLAGS-4"])
def _(ctx):
    out = u64(ctx)
    ctx.expect(ctx.f.dlpack_tensor_get_flags(None, ctypes.byref(out)), "NULL_POINTER")
    ctx.check(out.value == 0xA5A5A5A5A5A5A5A5, "out_flags written")
    ctx.expect(ctx.f.dlpack_tensor_get_flags(ctx.vptr(head_only(ctx, (1, 3), 1)), None), "NULL_POINTER")


def set_model(version, flags, set_, clear):
    if (set_ | clear) & ~7:
        return "INVALID_FLAGS", flags
    if version[0] != 1:
        return "UNSUPPORTED_VERSION", flags
    if version[1] <= 3:
        defined = 3 if version[1] == 0 else 7
        if set_ & ~defined:
            return "INVALID_FLAGS", flags
    return "OK", (flags | set_) & ~clear


@case("core.tensor_set_flags.table", profile="core",
      covers=["CORE-TENSOR-SET-FLAGS-2", "CORE-TENSOR-SET-FLAGS-3", "CORE-TENSOR-SET-FLAGS-4",
              "CORE-TENSOR-SET-FLAGS-5", "CORE-TENSOR-SET-FLAGS-6"])
def _(ctx):
    V = ctx.T.DLManagedTensorVersioned
    size = ctypes.sizeof(V)
    for version in ((1, 0), (1, 1), (1, 3), (1, 4), (1, 9), (2, 0), (0, 3), (0xFFFFFFFF, 1)):
        for flags in (0, 1, 7, 0x18, 1 << 63, (1 << 64) - 1):
            for set_, clear in ((0, 0), (1, 0), (0, 1), (4, 0), (0, 4), (7, 7), (3, 4), (4, 4), (2, 1),
                                (8, 0), (0, 8), (1 << 63, 0), (0, 1 << 40)):
                want, after = set_model(version, flags, set_, clear)
                where = f"version {version}, flags {flags:#x}, set {set_:#x}, clear {clear:#x}"
                if version[0] != 1:
                    # Only `version` readable (and not writable): nothing else may be touched.
                    p, _ = X.versioned(ctx, None, version=version, readable=8)
                    ctx.expect(ctx.f.dlpack_tensor_set_flags(ctx.vptr(p), set_, clear), want, what=where)
                    continue
                p, rec = X.versioned(ctx, X.desc(shape=(2, 3), strides=(3, 1)), version, flags, ro=False)
                before = ctypes.string_at(p, size)
                st = ctx.f.dlpack_tensor_set_flags(ctx.vptr(p), set_, clear)
                ctx.expect(st, want, what=where)
                now = ctypes.string_at(p, size)
                ctx.check(now[:FLAGS_OFF] == before[:FLAGS_OFF] and now[FLAGS_OFF + 8:] == before[FLAGS_OFF + 8:],
                          f"{where}: a field other than flags was written")
                got = ctypes.c_uint64.from_address(p + FLAGS_OFF).value
                ctx.check(got == after, f"{where}: flags {got:#x}, expected {after:#x}")
                ctx.check(ctx.calls(rec) == 0, f"{where}: the deleter ran")


@case("core.tensor_set_flags.checks_before_reading", profile="core",
      covers=["CORE-TENSOR-SET-FLAGS-1", "CORE-TENSOR-SET-FLAGS-2"])
def _(ctx):
    ctx.expect(ctx.f.dlpack_tensor_set_flags(None, 1, 0), "NULL_POINTER")
    ctx.expect(ctx.f.dlpack_tensor_set_flags(None, 8, 0), "NULL_POINTER")
    # An unreadable tensor: bad set/clear bits are refused before *tensor is read.
    bad = ctx.vptr(X.poison_page(ctx))
    for s, c in ((8, 0), (0, 8), (1 << 63, 1), (0, 1 << 63)):
        ctx.expect(ctx.f.dlpack_tensor_set_flags(bad, s, c), "INVALID_FLAGS", what=f"set {s:#x} clear {c:#x}")


@case("core.tensor_writability.table", profile="core",
      covers=["CORE-TENSOR-WRITABILITY-2", "CORE-TENSOR-WRITABILITY-3", "CORE-TENSOR-WRITABILITY-4",
              "CORE-TENSOR-WRITABILITY-5"])
def _(ctx):
    for minor in (0, 1, 3, 4, 0xFFFFFFFF):
        for f in VALUES:
            p = head_only(ctx, (1, minor), f)
            out = ctypes.c_int32(0x5A5A)
            ctx.ok(ctx.f.dlpack_tensor_writability(ctx.vptr(p), ctypes.byref(out)), what=f"flags {f:#x}")
            want = ctx.K.DLPACK_HELPERS_WRITABILITY_READ_ONLY if f & 1 else ctx.K.DLPACK_HELPERS_WRITABILITY_WRITABLE
            ctx.check(out.value == want, f"minor {minor}, flags {f:#x}: writability {out.value}, expected {want}")
    for major in (0, 2, 0xFFFFFFFF):
        p, _ = X.versioned(ctx, None, version=(major, 0), readable=8)
        out = ctypes.c_int32(0x5A5A)
        ctx.expect(ctx.f.dlpack_tensor_writability(ctx.vptr(p), ctypes.byref(out)), "UNSUPPORTED_VERSION")
        ctx.check(out.value == 0x5A5A, "out_writability written on failure")


@case("core.tensor_writability.null", profile="core", covers=["CORE-TENSOR-WRITABILITY-1", "CORE-TENSOR-WRITABILITY-4"])
def _(ctx):
    out = ctypes.c_int32(0x5A5A)
    ctx.expect(ctx.f.dlpack_tensor_writability(None, ctypes.byref(out)), "NULL_POINTER")
    ctx.check(out.value == 0x5A5A, "out_writability written")
    ctx.expect(ctx.f.dlpack_tensor_writability(ctx.vptr(head_only(ctx, (1, 3), 0)), None), "NULL_POINTER")


@case("core.legacy_tensor_writability.always_unknown", profile="core",
      covers=["CORE-LEGACY-TENSOR-WRITABILITY-1", "CORE-LEGACY-TENSOR-WRITABILITY-2",
              "CORE-LEGACY-TENSOR-WRITABILITY-3"])
def _(ctx):
    # Nothing is read through `tensor`: a pointer into a PROT_NONE page, and a real one.
    p, rec = X.legacy(ctx, X.desc())
    for t in (ctx.lptr(X.poison_page(ctx)), ctx.lptr(p), ctx.lptr(X.poison_page(ctx) + 7)):
        out = ctypes.c_int32(0x5A5A)
        ctx.ok(ctx.f.dlpack_legacy_tensor_writability(t, ctypes.byref(out)))
        ctx.check(out.value == ctx.K.DLPACK_HELPERS_WRITABILITY_UNKNOWN, f"answer {out.value}, expected UNKNOWN")
    out = ctypes.c_int32(0x5A5A)
    ctx.expect(ctx.f.dlpack_legacy_tensor_writability(None, ctypes.byref(out)), "NULL_POINTER")
    ctx.check(out.value == 0x5A5A, "out_writability written on NULL_POINTER")
    ctx.expect(ctx.f.dlpack_legacy_tensor_writability(ctx.lptr(p), None), "NULL_POINTER")
    ctx.check(ctx.calls(rec) == 0, "the deleter ran")


# -- dlpack_tensor_read_only_origin ---------------------------------------------------------------
def origin(ctx, p):
    out = ctypes.c_int32(0x5A5A)
    st = ctx.f.dlpack_tensor_read_only_origin(ctx.vptr(p), ctypes.byref(out))
    return st, out.value


@case("core.tensor_read_only_origin.foreign_tensors", profile="core",
      covers=["CORE-TENSOR-READ-ONLY-ORIGIN-2", "CORE-TENSOR-READ-ONLY-ORIGIN-3", "CORE-TENSOR-READ-ONLY-ORIGIN-5",
              "CORE-TENSOR-READ-ONLY-ORIGIN-6", "CORE-TENSOR-READ-ONLY-ORIGIN-7"])
def _(ctx):
    K = ctx.K
    # A tensor of another producer: the whole struct readable, nothing past it (guard page), read-only.
    for minor in (0, 1, 3, 4, 9):
        for f in VALUES:
            p, rec = X.versioned(ctx, X.desc(), (1, minor), f)
            st, v = origin(ctx, p)
            ctx.ok(st, what=f"flags {f:#x}")
            want = K.DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED if f & 1 else K.DLPACK_HELPERS_READ_ONLY_ORIGIN_NONE
            ctx.check(v == want, f"minor {minor}, flags {f:#x}: origin {v}, expected {want}")
            ctx.check(ctx.calls(rec) == 0, "the deleter ran")
    # A tensor made by dlpack_tensor_create with READ_ONLY is stated.
    for f in (1, 3, 5, 0):
        out = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
        ctx.ok(ctx.f.dlpack_tensor_create(ctypes.c_void_p(0x1000), ctx.T.DLDevice(1, 0), 0, None, None, ctx.T.DLDataType(2, 32, 1),
                                          0, f, None, None, ctypes.byref(out)))
        st, v = origin(ctx, ctypes.cast(out, ctypes.c_void_p).value)
        ctx.ok(st)
        want = K.DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED if f & 1 else K.DLPACK_HELPERS_READ_ONLY_ORIGIN_NONE
        ctx.check(v == want, f"dlpack_tensor_create flags {f}: origin {v}, expected {want}")
        ctx.f.dlpack_tensor_delete(out)
    for major in (0, 2, 0xFFFFFFFF):
        p, _ = X.versioned(ctx, None, version=(major, 0), readable=8)
        st, v = origin(ctx, p)
        ctx.expect(st, "UNSUPPORTED_VERSION")
        ctx.check(v == 0x5A5A, "out_origin written on failure")


@case("core.tensor_read_only_origin.null", profile="core",
      covers=["CORE-TENSOR-READ-ONLY-ORIGIN-1", "CORE-TENSOR-READ-ONLY-ORIGIN-7"])
def _(ctx):
    out = ctypes.c_int32(0x5A5A)
    ctx.expect(ctx.f.dlpack_tensor_read_only_origin(None, ctypes.byref(out)), "NULL_POINTER")
    ctx.check(out.value == 0x5A5A, "out_origin written")
    p, _ = X.versioned(ctx, X.desc(), (1, 3), 1)
    ctx.expect(ctx.f.dlpack_tensor_read_only_origin(ctx.vptr(p), None), "NULL_POINTER")


def wrap(ctx, flags, options, fn="wrap"):
    p, rec = ctx.make_legacy(shape=(2, 3))
    out = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
    if fn == "wrap":
        st = ctx.f.dlpack_legacy_tensor_wrap(ctx.lptr(p), flags, options, ctypes.byref(out))
    else:
        st = ctx.f.dlpack_legacy_to_versioned(ctx.lptr(p), flags, ctypes.byref(out))
    ctx.ok(st, what=f"{fn} flags {flags} options {options}")
    return out, rec


@case("core.tensor_read_only_origin.legacy_wrappers", profile="core",
      covers=["CORE-TENSOR-READ-ONLY-ORIGIN-3", "CORE-TENSOR-READ-ONLY-ORIGIN-4", "CORE-TENSOR-READ-ONLY-ORIGIN-5",
              "CORE-LEGACY-TENSOR-WRAP-10", "CORE-LEGACY-TO-VERSIONED-2"])
def _(ctx):
    K = ctx.K
    LW = ctx.K.DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE
    for fn, flags, options, want in (
            ("wrap", 0, 0, "LEGACY"), ("wrap", 2, 0, "LEGACY"), ("wrap", 6, 0, "LEGACY"),
            ("wrap", 1, 0, "STATED"), ("wrap", 3, 0, "STATED"), ("wrap", 0, LW, "NONE"), ("wrap", 1, LW, "STATED"),
            ("to_versioned", 0, 0, "LEGACY"), ("to_versioned", 4, 0, "LEGACY"), ("to_versioned", 1, 0, "STATED")):
        out, rec = wrap(ctx, flags, options, fn)
        t = ctypes.cast(out, ctypes.c_void_p).value
        want_flags = flags if options & LW else flags | 1
        ctx.check(out.contents.flags == want_flags, f"{fn} {flags}/{options}: flags {out.contents.flags}")
        st, v = origin(ctx, t)
        ctx.ok(st)
        ctx.check(v == getattr(K, "DLPACK_HELPERS_READ_ONLY_ORIGIN_" + want),
                  f"{fn} flags {flags} options {options}: origin {v}, expected {want}")
        if want == "LEGACY":
            # Cleared: NONE; set again: LEGACY again (CORE-TENSOR-READ-ONLY-ORIGIN-4).
            ctx.ok(ctx.f.dlpack_tensor_set_flags(out, 0, 1))
            st, v = origin(ctx, t)
            ctx.check(v == K.DLPACK_HELPERS_READ_ONLY_ORIGIN_NONE, f"{fn}: cleared READ_ONLY gives {v}")
            ctx.ok(ctx.f.dlpack_tensor_set_flags(out, 1, 0))
            st, v = origin(ctx, t)
            ctx.check(v == K.DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY, f"{fn}: READ_ONLY set again gives {v}")
        ctx.f.dlpack_tensor_delete(out)
        ctx.check(ctx.calls(rec) == 1, f"{fn}: the legacy deleter ran {ctx.calls(rec)} times")


# -- data address and location --------------------------------------------------------------------
ADDR_ROWS = [(dt, data, bo) for dt in (1, 2, 3, 10, 11, 13, 14, 4, 7, 0, 99, -1)
             for data, bo in ((0x1000, 0), (0x1000, 24), (0, 0), (0, 1 << 63), ((1 << 64) - 1, 0),
                              ((1 << 64) - 1, 1), ((1 << 64) - 16, 15), ((1 << 64) - 16, 16), (1 << 63, 1 << 63),
                              ((1 << 63) - 1, 1 << 63), (0x1000, (1 << 64) - 1))]


def addr_desc(ctx, dt, data, bo):
    """A DLTensor whose data, device and byte_offset are the only readable fields: ndim, dtype,
    shape and strides hold values that fault or fail if used (shape/strides poison, ndim -1)."""
    return X.dltensor(ctx, X.desc(shape="poison", strides="poison", ndim=-1, dtype=(255, 0, 0),
                                  device=(dt, -7), data=data, byte_offset=bo))


@case("core.dltensor_data_address.table", profile="core",
      covers=["CORE-DLTENSOR-DATA-ADDRESS-2", "CORE-DLTENSOR-DATA-ADDRESS-3", "CORE-DLTENSOR-DATA-ADDRESS-4",
              "CORE-DLTENSOR-DATA-ADDRESS-5", "CORE-DLTENSOR-DATA-ADDRESS-6"])
def _(ctx):
    for dt, data, bo in ADDR_ROWS:
        p = addr_desc(ctx, dt, data, bo)
        out = ctypes.c_void_p(0x5A5A)
        st = ctx.f.dlpack_dltensor_data_address(ctx.dptr(p), ctypes.byref(out))
        where = f"device {dt}, data {data:#x}, byte_offset {bo:#x}"
        if dt not in M.POINTER_ADDRESSED:
            want = "OPAQUE_HANDLE"
        elif data + bo > M.UINTPTR_MAX:
            want = "OVERFLOW"
        else:
            want = "OK"
        ctx.expect(st, want, what=where)
        if want == "OK":
            ctx.check((out.value or 0) == data + bo, f"{where}: address {(out.value or 0):#x}")
        else:
            ctx.check(out.value == 0x5A5A, f"{where}: out_address written on {want}")


@case("core.dltensor_data_address.null", profile="core", covers=["CORE-DLTENSOR-DATA-ADDRESS-1"])
def _(ctx):
    out = ctypes.c_void_p(0x5A5A)
    ctx.expect(ctx.f.dlpack_dltensor_data_address(None, ctypes.byref(out)), "NULL_POINTER")
    ctx.check(out.value == 0x5A5A, "out_address written")
    ctx.expect(ctx.f.dlpack_dltensor_data_address(ctx.dptr(addr_desc(ctx, 1, 0x1000, 0)), None), "NULL_POINTER")


@case("core.dltensor_data_location.table", profile="core",
      covers=["CORE-DLTENSOR-DATA-LOCATION-2", "CORE-DLTENSOR-DATA-LOCATION-3", "CORE-DLTENSOR-DATA-LOCATION-4",
              "CORE-DLTENSOR-DATA-LOCATION-5"])
def _(ctx):
    for dt, data, bo in ADDR_ROWS:
        p = addr_desc(ctx, dt, data, bo)
        od, ob = ctypes.c_void_p(0x5A5A), ctypes.c_uint64(0x5A5A)
        st = ctx.f.dlpack_dltensor_data_location(ctx.dptr(p), ctypes.byref(od), ctypes.byref(ob))
        where = f"device {dt}, data {data:#x}, byte_offset {bo:#x}"
        if dt not in M.POINTER_ADDRESSED:
            want, wd, wb = "OK", data, bo
        elif data + bo > M.UINTPTR_MAX:
            want, wd, wb = "OVERFLOW", None, None
        else:
            want, wd, wb = "OK", data + bo, 0
        ctx.expect(st, want, what=where)
        if want == "OK":
            ctx.check((od.value or 0) == wd and ob.value == wb,
                      f"{where}: ({(od.value or 0):#x}, {ob.value:#x}), expected ({wd:#x}, {wb:#x})")
        else:
            ctx.check(od.value == 0x5A5A and ob.value == 0x5A5A, f"{where}: written on {want}")


@case("core.dltensor_data_location.null", profile="core", covers=["CORE-DLTENSOR-DATA-LOCATION-1"])
def _(ctx):
    p = addr_desc(ctx, 1, 0x1000, 8)
    od, ob = ctypes.c_void_p(0x5A5A), ctypes.c_uint64(0x5A5A)
    ctx.expect(ctx.f.dlpack_dltensor_data_location(None, ctypes.byref(od), ctypes.byref(ob)), "NULL_POINTER")
    ctx.expect(ctx.f.dlpack_dltensor_data_location(ctx.dptr(p), None, ctypes.byref(ob)), "NULL_POINTER")
    ctx.expect(ctx.f.dlpack_dltensor_data_location(ctx.dptr(p), ctypes.byref(od), None), "NULL_POINTER")
    ctx.check(od.value == 0x5A5A and ob.value == 0x5A5A, "an out-parameter written on NULL_POINTER")
