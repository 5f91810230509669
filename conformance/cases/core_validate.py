"""Core: validation as data (dlpack_dltensor_validate, dlpack_tensor_validate,
dlpack_legacy_tensor_validate).

The rule order of CORE-DLTENSOR-VALIDATE-7 is tested with FAULTS: each fault breaks one rule of a
valid base tensor. One case per fault runs it alone and combined with every later fault that
touches other fields; the expected status is harness/layout_model.validate's (the page's rules
in order), so a pair checks that the earlier rule wins. Every row runs through the three entry
points: dlpack_dltensor_validate with the row's version and flags, dlpack_tensor_validate on a
DLManagedTensorVersioned holding the same, and dlpack_legacy_tensor_validate on a DLManagedTensor
(the model with version {0, 0}). The tensors are read-only guarded memory with `data` in a
PROT_NONE page; options sit in read-only memory holding exactly `struct_size` bytes.
"""
import ctypes

from harness import layout_model as M
from harness import tensors as X
from harness import build
from harness.registry import case
from cases.core_layout import LAYOUT


def child_env(fixtures):
    # Fake CUDA, HIP and Level Zero runtimes under their standard names: validation without
    # RESOLVE_HOST_ACCESS must call none of them (CORE-DLTENSOR-VALIDATE-23).
    return {"LD_LIBRARY_PATH": build.fake_drivers()}


ALL = ["CORE-DLTENSOR-VALIDATE-7", "CORE-DLTENSOR-VALIDATE-24", "CORE-DLTENSOR-VALIDATE-26",
       "CORE-TENSOR-VALIDATE-4", "CORE-TENSOR-VALIDATE-5", "CORE-LEGACY-TENSOR-VALIDATE-2",
       "CORE-LEGACY-TENSOR-VALIDATE-4"]


def base_state():
    return {"desc": X.desc(shape=(2, 3), strides=(3, 1)), "version": (1, 3), "flags": 0,
            "opts": {"struct_size": 40, "flags": 0, "max_ndim": 0, "data_alignment": 0,
                     "first_element_alignment": 0, "dtype": (0, 0, 0)}}


def _d(**kw):
    return lambda s: s["desc"].update(kw)


def _o(**kw):
    return lambda s: s["opts"].update(kw)


def _of(bits):
    def f(s):
        s["opts"]["flags"] |= bits
    return f


def _tf(bits):
    def f(s):
        s["flags"] |= bits
    return f


def _all(*fs):
    def f(s):
        for g in fs:
            g(s)
    return f


def _minor(m):
    return lambda s: s.__setitem__("version", (s["version"][0], m))


def _major(m):
    return lambda s: s.__setitem__("version", (m, s["version"][1]))


POISON_DATA = None  # data stays the PROT_NONE page unless a fault sets it

# (name, rule IDs, fields it sets (a pair never sets one field twice), mutation)
FAULTS = [
    ("opt_struct_size", ["CORE-DLTENSOR-VALIDATE-3"], {"o.size"}, _o(struct_size=4)),
    ("opt_unknown_bit", ["CORE-DLTENSOR-VALIDATE-6"], set(), _of(1 << 13)),
    ("opt_data_alignment", ["CORE-DLTENSOR-VALIDATE-6"], {"o.da"}, _o(data_alignment=3)),
    ("opt_first_alignment", ["CORE-DLTENSOR-VALIDATE-6"], {"o.fa"}, _o(first_element_alignment=6)),
    ("opt_max_ndim", ["CORE-DLTENSOR-VALIDATE-6"], {"o.mn"}, _o(max_ndim=-1)),
    ("major", ["CORE-DLTENSOR-VALIDATE-8", "CORE-TENSOR-VALIDATE-3"], {"major"}, _major(2)),
    ("minor_flags", ["CORE-DLTENSOR-VALIDATE-9"], {"minor"}, _all(_minor(0), _tf(4))),
    ("ndim", ["CORE-DLTENSOR-VALIDATE-10"], {"ndim"}, _d(ndim=1025)),
    ("max_ndim", ["CORE-DLTENSOR-VALIDATE-10"], {"o.mn"}, _o(max_ndim=1)),
    ("null_shape", ["CORE-DLTENSOR-VALIDATE-11"], {"shape"}, _d(shape=None)),
    ("null_strides", ["CORE-DLTENSOR-VALIDATE-12"], {"strides"}, _d(strides=None)),
    ("dtype", ["CORE-DLTENSOR-VALIDATE-13"], {"dtype"}, _d(dtype=(2, 8, 1))),
    ("byte_offset", ["CORE-DLTENSOR-VALIDATE-13"], {"bo"}, _d(byte_offset=1 << 63)),
    ("negative_extent", ["CORE-DLTENSOR-VALIDATE-13"], {"shape"}, _d(shape=(-1, 3))),
    ("overflow", ["CORE-DLTENSOR-VALIDATE-13"], {"strides"}, _d(strides=(1 << 62, 1))),
    ("vector", ["CORE-DLTENSOR-VALIDATE-14"], {"dtype"}, _all(_d(dtype=(2, 32, 2)), _of(M.V_NOVEC))),
    ("require_dtype", ["CORE-DLTENSOR-VALIDATE-14"], {"o.dt"}, _all(_o(dtype=(0, 32, 1)), _of(M.V_DTYPE))),
    ("device_id", ["CORE-DLTENSOR-VALIDATE-15"], {"dev_id"}, _d(device=(1, -1))),
    ("null_data", ["CORE-DLTENSOR-VALIDATE-16"], {"data"}, _d(data=0)),
    ("address_space", ["CORE-DLTENSOR-VALIDATE-17"], {"data"}, _d(data=(1 << 64) - 16)),
    ("cpu_accessible", ["CORE-DLTENSOR-VALIDATE-18"], {"dev_type", "dev_id"}, _all(_d(device=(2, 0)), _of(M.V_CPU))),
    ("data_alignment", ["CORE-DLTENSOR-VALIDATE-19"], {"data", "o.da"}, _all(_d(data="P+4"), _o(data_alignment=64))),
    ("first_alignment", ["CORE-DLTENSOR-VALIDATE-19"], {"bo", "o.fa"}, _all(_d(byte_offset=4), _o(first_element_alignment=16))),
    ("element_aligned", ["CORE-DLTENSOR-VALIDATE-19"], {"bo"}, _all(_d(byte_offset=2), _of(M.V_ELEM_ALIGNED))),
    ("contiguity", ["CORE-DLTENSOR-VALIDATE-20"], set(), _of(M.V_F)),
    ("broadcast", ["CORE-DLTENSOR-VALIDATE-21"], {"strides"}, _all(_d(strides=(0, 1)), _of(M.V_NOBCAST))),
    ("negative_strides", ["CORE-DLTENSOR-VALIDATE-21"], {"strides", "bo"},
     _all(_d(strides=(-3, 1), byte_offset=12), _of(M.V_NONEG))),
    ("read_only", ["CORE-DLTENSOR-VALIDATE-22", "CORE-LEGACY-TENSOR-VALIDATE-3"], set(), _all(_tf(M.READ_ONLY), _of(M.V_WRITABLE))),
    ("copied", ["CORE-DLTENSOR-VALIDATE-22", "CORE-LEGACY-TENSOR-VALIDATE-3"], set(), _all(_tf(M.IS_COPIED), _of(M.V_NOCOPIED))),
    ("resolve_host_access", ["CORE-DLTENSOR-VALIDATE-23", "CORE-DLTENSOR-VALIDATE-18"], {"dev_type", "dev_id"},
     _all(_d(device=(99, 0)), _of(M.V_RESOLVE | M.V_CPU))),
]


def materialize(ctx, state):
    d = dict(state["desc"])
    if d["data"] == "P+4":
        d["data"] = X.poison_page(ctx) + 4
    return d


def run_row(ctx, state, where, entry_points=("dl", "versioned", "legacy"), out_null=False):
    d = materialize(ctx, state)
    r = X.resolved(ctx, d)
    om = state["opts"]
    if om is None:
        optr = None
    else:
        optr, om = X.options(ctx, **om)
    version, flags = state["version"], state["flags"]
    for ep in entry_points:
        lay = X.sentinel_layout(ctx)
        out = None if out_null else ctypes.byref(lay)
        rec = None
        if ep == "dl":
            want, wl = M.validate(r, version, flags, om)
            p = X.dltensor(ctx, d)
            st = ctx.f.dlpack_dltensor_validate(ctx.dptr(p), ctx.T.DLPackVersion(*version), flags, optr, out)
        elif ep == "versioned":
            want, wl = M.tensor_validate(r, version, flags, om)
            p, rec = X.versioned(ctx, d, version, flags)
            st = ctx.f.dlpack_tensor_validate(ctx.vptr(p), optr, out)
        else:
            want, wl = M.validate(r, (0, 0), 0, om)
            p, rec = X.legacy(ctx, d)
            st = ctx.f.dlpack_legacy_tensor_validate(ctx.lptr(p), optr, out)
        w = f"{where} [{ep}]"
        ctx.expect(st, want, what=w)
        if want == "OK":
            if not out_null:
                X.compare_layout(ctx, lay, wl, w)
        else:
            ctx.check(X.untouched(lay), f"{w}: *out_layout written on {want}")
            msg = ctx.last_error()
            ctx.check(len(msg) > 0, f"{w}: empty last-error message")
            msg.decode("utf-8")
        if rec is not None:
            ctx.check(ctx.calls(rec) == 0, f"{w}: the deleter was called")


def fault_case(i):
    name, ids, fields, mut = FAULTS[i]

    def run(ctx):
        s = base_state()
        run_row(ctx, s, "base")
        s = base_state()
        mut(s)
        run_row(ctx, s, name)
        for j in range(i + 1, len(FAULTS)):
            n2, _, f2, m2 = FAULTS[j]
            if fields & f2:
                continue
            s = base_state()
            m2(s)
            mut(s)
            eps = ("dl", "versioned", "legacy")
            if name.startswith("opt_") and n2 == "major":
                eps = ("dl", "legacy")  # the versioned entry: core.tensor_validate.options_before_version
            run_row(ctx, s, f"{name} + {n2}", entry_points=eps)
    return run


for i, (name, ids, _, _) in enumerate(FAULTS):
    case(f"core.dltensor_validate.order.{name}", profile="core", covers=ALL + ids)(fault_case(i))


# -- every layout row through the validators (CORE-DLTENSOR-VALIDATE-13, -16, -17, -25) --------
def layout_row(rid, d):
    def run(ctx):
        for version, flags in (((1, 3), 0), ((1, 3), 4), ((1, 1), 4), ((1, 0), 3), ((1, 7), (1 << 64) - 1), ((0, 9), 7)):
            for opts in (None, {"struct_size": 40}, {"struct_size": 40, "flags": M.V_LENIENT}):
                run_row(ctx, {"desc": d, "version": version, "flags": flags, "opts": opts},
                        f"{rid}, version {version}, flags {flags:#x}, options {opts}")
    return run


def validate_ids(d):
    """What a layout row really checks through the validators (its expected outcomes decide)."""
    from cases.core_layout import static
    r = static(d)
    ids = set(ALL) | {"CORE-DLTENSOR-VALIDATE-2"}
    rule = {"INVALID_NDIM": 10, "NULL_SHAPE": 11, "NULL_STRIDES": 12, "INVALID_DTYPE": 13, "INVALID_SHAPE": 13,
            "OVERFLOW": 13, "INVALID_DEVICE": 15, "NULL_DATA": 16}
    for version, flags in (((1, 3), 0), ((0, 0), 0)):
        for opts in (None, {"struct_size": 40, "flags": M.V_LENIENT}):
            st, _ = M.validate(r, version, flags, opts)
            if st == "OK":
                ids.add("CORE-DLTENSOR-VALIDATE-25")
            elif st == "OVERFLOW" and M.layout(r, False)[0] == "OK":
                ids.add("CORE-DLTENSOR-VALIDATE-17")
            elif st in rule:
                ids.add(f"CORE-DLTENSOR-VALIDATE-{rule[st]}")
    return sorted(ids)


for rid, d in LAYOUT:
    case(f"core.dltensor_validate.layout.{rid}", profile="core", covers=validate_ids(d))(layout_row(rid, d))


# -- single rules as tables ----------------------------------------------------------------------
def rows_case(cid, covers, rows, **kw):
    def run(ctx):
        for where, state in rows:
            run_row(ctx, state, where, **kw)
    case(cid, profile="core", covers=covers)(run)


def st(desc=None, version=(1, 3), flags=0, opts=None):
    return {"desc": desc or X.desc(shape=(2, 3), strides=(3, 1)), "version": version, "flags": flags,
            "opts": opts}


OPT_BAD = {"flags": M.V_F | M.V_C, "max_ndim": 1, "data_alignment": 3, "first_element_alignment": 64,
           "dtype": (0, 8, 1)}
rows_case("core.dltensor_validate.options_partial_members",
          ["CORE-DLTENSOR-VALIDATE-3", "CORE-DLTENSOR-VALIDATE-4", "CORE-TENSOR-VALIDATE-2"],
          [(f"struct_size {n}", st(opts=dict(OPT_BAD, struct_size=n)))
           for n in (0, 1, 4, 7, 8, 11, 12, 13, 15, 16, 17, 23, 24, 31, 32, 35, 36, 39, 40)] +
          [(f"struct_size {n}, data_alignment 8", st(desc=X.desc(shape=(2, 3), strides=(1, 2)),
                                                     opts={"struct_size": n, "data_alignment": 8,
                                                           "flags": M.V_F | M.V_DTYPE, "dtype": (2, 32, 1)}))
           for n in (8, 12, 24, 35, 36)])


@case("core.dltensor_validate.options_larger_struct", profile="core", covers=["CORE-DLTENSOR-VALIDATE-4"])
def _(ctx):
    # Bytes past the 40 known ones are garbage and must be ignored.
    for n in (41, 48, 64, 4096):
        run_row(ctx, st(opts={"struct_size": n, "tail": b"\xff" * (n - 40)}), f"struct_size {n}")
        run_row(ctx, st(opts={"struct_size": n, "flags": M.V_F, "tail": b"\xff" * (n - 40)}), f"struct_size {n} F")


rows_case("core.dltensor_validate.options_invalid",
          ["CORE-DLTENSOR-VALIDATE-6", "CORE-TENSOR-VALIDATE-2"],
          [(f"flag bit {b}", st(opts={"struct_size": 40, "flags": 1 << b})) for b in list(range(13, 16)) + list(range(17, 32))] +
          [(f"data_alignment {a}", st(opts={"struct_size": 40, "data_alignment": a})) for a in (3, 6, 12, (1 << 64) - 1, (1 << 63) + 1)] +
          [(f"first_element_alignment {a}", st(opts={"struct_size": 40, "first_element_alignment": a})) for a in (5, 24, (1 << 64) - 1)] +
          [(f"max_ndim {m}", st(opts={"struct_size": 40, "max_ndim": m})) for m in (-1, -(1 << 31))] +
          [(f"good alignment {a}", st(opts={"struct_size": 40, "data_alignment": a, "first_element_alignment": a}))
           for a in (0, 1, 2, 4, 1 << 12, 1 << 63)])

rows_case("core.tensor_validate.options_before_version", ["CORE-TENSOR-VALIDATE-2", "CORE-DLTENSOR-VALIDATE-7"],
          [(f"{name} + major {mj}", (lambda s, m=mut, mj=mj: (m(s), s.__setitem__("version", (mj, 3)), s)[2])(base_state()))
           for name, _, _, mut in FAULTS if name.startswith("opt_") for mj in (0, 2)],
          entry_points=("versioned",))

rows_case("core.dltensor_validate.flags_per_minor",
          ["CORE-DLTENSOR-VALIDATE-9", "CORE-TENSOR-VALIDATE-4"],
          [(f"minor {m}, flags {f:#x}", st(version=(1, m), flags=f))
           for m in (0, 1, 2, 3, 4, 5, 0xFFFFFFFF)
           for f in (0, 1, 2, 3, 4, 7, 8, 1 << 32, 1 << 63, (1 << 64) - 1)])

rows_case("core.dltensor_validate.null_strides_per_version",
          ["CORE-DLTENSOR-VALIDATE-12", "CORE-LEGACY-TENSOR-VALIDATE-2"],
          [(f"version {v}, lenient {l}, ndim {n}", st(desc=X.desc(shape=(2, 3)[:n] if n else None, ndim=n),
                                                       version=v, opts={"struct_size": 40, "flags": M.V_LENIENT if l else 0}))
           for v in ((1, 0), (1, 1), (1, 2), (1, 3), (1, 9), (0, 0), (0, 7))
           for l in (False, True) for n in (0, 1, 2)])

rows_case("core.dltensor_validate.major_reads_no_array",
          ["CORE-DLTENSOR-VALIDATE-8", "CORE-TENSOR-VALIDATE-3"],
          [(f"major {mj}", st(desc=X.desc(shape="poison", strides="poison", ndim=2), version=(mj, 3)))
           for mj in (2, 3, 0xFFFFFFFF)], entry_points=("dl", "versioned"))

rows_case("core.dltensor_validate.ndim_reads_no_array",
          ["CORE-DLTENSOR-VALIDATE-10", "CORE-DLTENSOR-VALIDATE-11"],
          [(f"ndim {n}, max_ndim {mx}", st(desc=X.desc(shape="poison", strides="poison", ndim=n),
                                           opts={"struct_size": 40, "max_ndim": mx}))
           for n in (-1, 1025, -(1 << 31), (1 << 31) - 1, 3, 0) for mx in (0, 2)
           if not (n == 0) and not (n == 3 and mx == 0)] +
          [("ndim 0 poison arrays", st(desc=X.desc(shape="poison", strides="poison", ndim=0)))] +
          [("ndim 0 poison arrays legacy", st(desc=X.desc(shape="poison", strides="poison", ndim=0), version=(0, 0)))])

rows_case("core.dltensor_validate.dtype_requirements", ["CORE-DLTENSOR-VALIDATE-14"],
          [(f"dtype {dt}, opt {of}, want {od}", st(desc=X.desc(shape=(2,), dtype=dt), opts={"struct_size": 40, "flags": of, "dtype": od}))
           for dt in ((2, 32, 1), (2, 32, 4), (0, 8, 1), (1, 4, 2))
           for of in (M.V_NOVEC, M.V_DTYPE, M.V_NOVEC | M.V_DTYPE, 0)
           for od in ((2, 32, 1), (2, 32, 4), (2, 64, 1), (1, 32, 1), (0, 0, 0))])

rows_case("core.dltensor_validate.devices", ["CORE-DLTENSOR-VALIDATE-15", "CORE-DLTENSOR-VALIDATE-16",
                                             "CORE-DLTENSOR-VALIDATE-18", "CORE-DLTENSOR-VALIDATE-25"],
          [(f"device {dv}, data {dt}, shape {sh}, cpu {c}", st(desc=X.desc(shape=sh, device=dv, data=dt),
                                                               opts={"struct_size": 40, "flags": M.V_CPU if c else 0}))
           for dv in ((1, 0), (2, 0), (3, 5), (4, 0), (10, 0), (11, 0), (13, 0), (14, 0), (0, 0), (5, 0), (6, 0),
                      (12, 0), (18, 0), (19, 0), (99, 3), (-1, 0), (0x7FFFFFFF, 0), (1, -1), (2, -(1 << 31)))
           for dt in (None, 0) for sh in ((2,), (0,)) for c in (False, True)])

rows_case("core.dltensor_validate.alignment", ["CORE-DLTENSOR-VALIDATE-19"],
          [(f"dtype {dt}, offset {bo}, data_alignment {da}, first {fa}, elem {el}, data {dd}, device {dv}, shape {sh}",
            st(desc=X.desc(shape=sh, dtype=dt, byte_offset=bo, device=dv, data=dd),
               opts={"struct_size": 40, "data_alignment": da, "first_element_alignment": fa,
                     "flags": M.V_ELEM_ALIGNED if el else 0}))
           for dt in ((2, 32, 1), (2, 64, 1), (3, 24, 1), (0, 4, 1), (2, 16, 3))
           for bo in (0, 2, 4, 8)
           for da, fa, el in ((0, 0, True), (8, 0, False), (0, 8, False), (1, 1, False), (16, 4, True))
           for dd in (None, 0x1004, 0)
           for dv in ((1, 0), (99, 0))
           for sh in ((2,), (0, 2))])

rows_case("core.dltensor_validate.writability", ["CORE-DLTENSOR-VALIDATE-22", "CORE-LEGACY-TENSOR-VALIDATE-3"],
          [(f"flags {f}, options {of:#x}", st(flags=f, opts={"struct_size": 40, "flags": of}))
           for f in (0, 1, 2, 3)
           for of in (0, M.V_WRITABLE, M.V_LEGACY_WRITABLE, M.V_WRITABLE | M.V_LEGACY_WRITABLE, M.V_NOCOPIED,
                      M.V_NOCOPIED | M.V_WRITABLE, M.V_NOCOPIED | M.V_WRITABLE | M.V_LEGACY_WRITABLE)])

rows_case("core.dltensor_validate.contiguity", ["CORE-DLTENSOR-VALIDATE-20", "CORE-DLTENSOR-VALIDATE-21"],
          [(f"shape {sh}, strides {sd}, options {of:#x}", st(desc=X.desc(shape=sh, strides=sd, byte_offset=64),
                                                           opts={"struct_size": 40, "flags": of}))
           for sh, sd in (((2, 3), (3, 1)), ((2, 3), (1, 2)), ((2, 3, 4), (1, 8, 2)), ((2, 3), (4, 1)),
                          ((2, 3), (0, 1)), ((2, 3), (-3, 1)), ((1, 3), (-9, 1)), ((0, 3), (-1, 0)), ((1,), (0,)))
           for of in (M.V_C, M.V_F, M.V_COMPACT, M.V_NOBCAST, M.V_NONEG, M.V_C | M.V_NONEG)])

rows_case("core.dltensor_validate.resolve_host_access", ["CORE-DLTENSOR-VALIDATE-23"],
          [(f"device {dv}, options {of:#x}, strides {sd}", st(desc=X.desc(shape=(2, 3), strides=sd, device=dv),
                                                             opts={"struct_size": 40, "flags": of}))
           for dv in ((99, 0), (0, 0), (5, 0), (12, 0), (14, 0), (2, 0), (1, 0), (13, 0))
           for of in (M.V_RESOLVE, M.V_RESOLVE | M.V_CPU, M.V_RESOLVE | M.V_CPU | M.V_F, M.V_CPU)
           for sd in ((3, 1), (1, 2))])


@case("core.dltensor_validate.null_tensor", profile="core",
      covers=["CORE-DLTENSOR-VALIDATE-1", "CORE-TENSOR-VALIDATE-1", "CORE-LEGACY-TENSOR-VALIDATE-1"])
def _(ctx):
    # options points into a PROT_NONE page: reading it before refusing the NULL tensor faults.
    bad = ctypes.cast(X.poison_page(ctx), ctypes.POINTER(ctx.T.dlpack_helpers_validate_options))
    for o in (None, bad):
        lay = X.sentinel_layout(ctx)
        ctx.expect(ctx.f.dlpack_dltensor_validate(None, ctx.T.DLPackVersion(1, 3), 0, o, ctypes.byref(lay)),
                   "NULL_POINTER")
        ctx.expect(ctx.f.dlpack_tensor_validate(None, o, ctypes.byref(lay)), "NULL_POINTER")
        ctx.expect(ctx.f.dlpack_legacy_tensor_validate(None, o, ctypes.byref(lay)), "NULL_POINTER")
        ctx.check(X.untouched(lay), "*out_layout written")


@case("core.tensor_validate.major_reads_only_version", profile="core", covers=["CORE-TENSOR-VALIDATE-3"])
def _(ctx):
    for major in (0, 2, 0xFFFFFFFF):
        p, rec = X.versioned(ctx, None, version=(major, 3), readable=8)
        lay = X.sentinel_layout(ctx)
        ctx.expect(ctx.f.dlpack_tensor_validate(ctx.vptr(p), None, ctypes.byref(lay)), "UNSUPPORTED_VERSION",
                   what=f"major {major}")
        ctx.check(X.untouched(lay), "*out_layout written")


@case("core.tensor_validate.options_before_reading_tensor", profile="core", covers=["CORE-TENSOR-VALIDATE-2"])
def _(ctx):
    # Options are checked before *tensor is read: an unreadable tensor with bad options.
    o, _ = X.options(ctx, struct_size=40, max_ndim=-1)
    lay = X.sentinel_layout(ctx)
    ctx.expect(ctx.f.dlpack_tensor_validate(ctx.vptr(X.poison_page(ctx)), o, ctypes.byref(lay)),
               "INVALID_ARGUMENT", what="options refused before reading an unreadable tensor")
    ctx.check(X.untouched(lay), "*out_layout written")


@case("core.dltensor_validate.no_driver_without_resolve", profile="core", covers=["CORE-DLTENSOR-VALIDATE-23"])
def _(ctx):
    import os
    names = {"libcuda.so.1": [b"cuInit", b"cuPointerGetAttributes", b"cuPointerGetAttribute"],
             "libamdhip64.so": [b"hipInit", b"hipPointerGetAttributes"],
             "libze_loader.so.1": [b"zeInit", b"zeMemGetAllocProperties"]}
    for dv in ((2, 0), (10, 0), (14, 0), (99, 0), (13, 0), (3, 0)):
        for of in (M.V_CPU, M.V_CPU | M.V_F, 0, M.V_RESOLVE):
            run_row(ctx, st(desc=X.desc(shape=(2, 3), strides=(3, 1), device=dv, data=0x10000),
                            opts={"struct_size": 40, "flags": of}), f"device {dv}, options {of:#x}")
    for lib, fns in names.items():
        try:
            h = ctypes.CDLL(lib, mode=os.RTLD_NOLOAD)
        except OSError:
            continue  # never loaded: nothing was called
        h.fake_count.restype = ctypes.c_long
        for fn in fns:
            ctx.check(h.fake_count(fn) == 0, f"validation without RESOLVE_HOST_ACCESS called {fn.decode()}")
