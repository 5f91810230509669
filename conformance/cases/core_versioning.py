"""Core: DLPack versions (dlpack_version_check, dlpack_tensor_check_version,
dlpack_tensor_check_version_or_delete, dlpack_version_negotiate) and the rules of
spec/04-versioning.md (VER-*).

Negotiation is a table: the spec's rules are written once below as a reference function and every
combination of a grid of producer versions, flags and max_version values is checked against it.
"""
import ctypes

from harness.registry import case

from cases._common import bytes_of, expect_fail, fenced, out_slot, unchanged_message

U32 = 0xFFFFFFFF
MAJORS_BAD = (0, 2, 3, 7, 1000, U32)
MINORS = (0, 1, 2, 3, 4, 5, 9, 100, 0x7FFFFFFF, U32)


# The compat values, from the manifest; spec/abi.toml of 2026.12 lacks them (its sync skips every
# DLPACK_HELPERS_VERSION_* name as a library-version macro), so the synopsis of
# spec/functions/dlpack_version_check.md gives them until the manifest carries them.
COMPAT_PAGE = {"EXACT": 0, "OLDER_MINOR": 1, "NEWER_MINOR": 2}


def compat(ctx, name):
    return getattr(ctx.K, "DLPACK_HELPERS_VERSION_" + name, COMPAT_PAGE[name])


def compat_of(ctx, minor):
    if minor == 3:
        return compat(ctx, "EXACT")
    return compat(ctx, "OLDER_MINOR") if minor < 3 else compat(ctx, "NEWER_MINOR")


def _compat_ctype(ctx):
    return ctx.m.ctype("dlpack_helpers_version_compat")


# -- dlpack_version_check -----------------------------------------------------------------------
@case("core.version_check.major_one", profile="core",
      covers=["CORE-VERSION-CHECK-1", "CORE-VERSION-CHECK-3", "VER-MINOR-1", "ABI-OUT-2"])
def _(ctx):
    C = _compat_ctype(ctx)
    for minor in MINORS:
        v = ctx.T.DLPackVersion(1, minor)
        out, ptr, raw = out_slot(C)
        ctx.ok(ctx.f.dlpack_version_check(v, ctypes.cast(ptr, ctypes.POINTER(C))), what=f"1.{minor}")
        ctx.check(out.value == compat_of(ctx, minor), f"1.{minor}: compat {out.value}, expected {compat_of(ctx, minor)}")
        with unchanged_message(ctx, f"dlpack_version_check(1.{minor}, NULL)"):
            ctx.ok(ctx.f.dlpack_version_check(v, None), what=f"1.{minor} with NULL out_compat")


@case("core.version_check.other_major", profile="core",
      covers=["CORE-VERSION-CHECK-2", "CORE-VERSION-CHECK-3", "CORE-VERSION-CHECK-4", "ABI-OUT-1"])
def _(ctx):
    C = _compat_ctype(ctx)
    for major in MAJORS_BAD:
        for minor in MINORS:
            v = ctx.T.DLPackVersion(major, minor)
            out, ptr, raw = out_slot(C)
            before = raw()
            expect_fail(ctx, lambda: ctx.f.dlpack_version_check(v, ctypes.cast(ptr, ctypes.POINTER(C))),
                        "UNSUPPORTED_VERSION", what=f"{major}.{minor}")
            ctx.check(raw() == before, f"{major}.{minor}: out_compat written on failure")
            expect_fail(ctx, lambda: ctx.f.dlpack_version_check(v, None), "UNSUPPORTED_VERSION",
                        what=f"{major}.{minor} with NULL out_compat")


@case("core.version_check.message_names_version", profile="core", covers=["CORE-VERSION-CHECK-5"])
def _(ctx):
    for major, minor in ((2, 71), (0, 4242), (U32, 31337), (65536, U32)):
        st = ctx.f.dlpack_version_check(ctx.T.DLPackVersion(major, minor), None)
        ctx.expect(st, "UNSUPPORTED_VERSION")
        text = ctx.last_error()
        for n in (major, minor):
            ctx.check(str(n).encode() in text, f"{major}.{minor}: the message {text!r} does not contain {n}")


# -- dlpack_tensor_check_version ----------------------------------------------------------------
def _image(ctx, version, deleter=None, rec=0):
    V = ctx.T.DLManagedTensorVersioned
    t = V()
    t.version.major, t.version.minor = version
    t.manager_ctx = rec
    t.deleter = deleter
    return bytes_of(t)


@case("core.tensor_check_version.as_version_check", profile="core",
      covers=["CORE-TENSOR-CHECK-VERSION-2", "CORE-TENSOR-CHECK-VERSION-3", "CORE-TENSOR-CHECK-VERSION-4",
              "CORE-TENSOR-CHECK-VERSION-5", "VER-MINOR-1"])
def _(ctx):
    # Only `version` is readable (a read of any other member faults), read-only (a write faults);
    # the deleter cannot even be read, so it cannot be called.
    C = _compat_ctype(ctx)
    for major in (1,) + MAJORS_BAD:
        for minor in MINORS:
            p = fenced(_image(ctx, (major, minor), ctx.VDELETER), hi=8)
            out, ptr, raw = out_slot(C)
            before = raw()
            cptr = ctypes.cast(ptr, ctypes.POINTER(C))
            if major == 1:
                ctx.ok(ctx.f.dlpack_tensor_check_version(ctx.vptr(p), cptr), what=f"{major}.{minor}")
                ctx.check(out.value == compat_of(ctx, minor), f"1.{minor}: compat {out.value}")
                ctx.ok(ctx.f.dlpack_tensor_check_version(ctx.vptr(p), None), what=f"1.{minor}, NULL out")
            else:
                expect_fail(ctx, lambda: ctx.f.dlpack_tensor_check_version(ctx.vptr(p), cptr),
                            "UNSUPPORTED_VERSION", what=f"{major}.{minor}")
                ctx.check(raw() == before, f"{major}.{minor}: out_compat written on failure")
                ctx.expect(ctx.f.dlpack_tensor_check_version(ctx.vptr(p), None), "UNSUPPORTED_VERSION")
    # The whole struct readable too: the same answers, the deleter never called.
    rec = ctx.fx.fx_record_new()
    for major in (1, 2):
        p = fenced(_image(ctx, (major, 3), ctx.VDELETER, rec))
        ctx.f.dlpack_tensor_check_version(ctx.vptr(p), None)
    ctx.check(ctx.calls(rec) == 0, "the deleter was called")


@case("core.tensor_check_version.null", profile="core",
      covers=["CORE-TENSOR-CHECK-VERSION-1", "CORE-TENSOR-CHECK-VERSION-5", "ABI-NULL-1"])
def _(ctx):
    C = _compat_ctype(ctx)
    out, ptr, raw = out_slot(C)
    before = raw()
    expect_fail(ctx, lambda: ctx.f.dlpack_tensor_check_version(None, ctypes.cast(ptr, ctypes.POINTER(C))),
                "NULL_POINTER", what="NULL tensor")
    ctx.check(raw() == before, "out_compat written on failure")
    expect_fail(ctx, lambda: ctx.f.dlpack_tensor_check_version(None, None), "NULL_POINTER", what="both NULL")


# -- dlpack_tensor_check_version_or_delete ------------------------------------------------------
@case("core.tensor_check_version_or_delete.null", profile="core",
      covers=["CORE-TENSOR-CHECK-VERSION-OR-DELETE-1", "CORE-TENSOR-CHECK-VERSION-OR-DELETE-6", "ABI-NULL-1"])
def _(ctx):
    C = _compat_ctype(ctx)
    out, ptr, raw = out_slot(C)
    before = raw()
    expect_fail(ctx, lambda: ctx.f.dlpack_tensor_check_version_or_delete(None, ctypes.cast(ptr, ctypes.POINTER(C))),
                "NULL_POINTER", what="NULL tensor")
    ctx.check(raw() == before, "out_compat written on failure")


@case("core.tensor_check_version_or_delete.major_one_borrowed", profile="core",
      covers=["CORE-TENSOR-CHECK-VERSION-OR-DELETE-2", "VER-MINOR-1"])
def _(ctx):
    C = _compat_ctype(ctx)
    for minor in MINORS:
        # Only `version` readable, read-only: reading the deleter or writing faults.
        p = fenced(_image(ctx, (1, minor), ctx.VDELETER), hi=8)
        out, ptr, raw = out_slot(C)
        ctx.ok(ctx.f.dlpack_tensor_check_version_or_delete(ctx.vptr(p), ctypes.cast(ptr, ctypes.POINTER(C))),
               what=f"1.{minor}")
        ctx.check(out.value == compat_of(ctx, minor), f"1.{minor}: compat {out.value}")
        with unchanged_message(ctx, "OK"):
            ctx.ok(ctx.f.dlpack_tensor_check_version_or_delete(ctx.vptr(p), None))
    rec = ctx.fx.fx_record_new()
    p = fenced(_image(ctx, (1, 3), ctx.VDELETER, rec))
    ctx.ok(ctx.f.dlpack_tensor_check_version_or_delete(ctx.vptr(p), None))
    ctx.check(ctx.calls(rec) == 0, "the deleter was called for major 1")


@case("core.tensor_check_version_or_delete.other_major_released", profile="core",
      covers=["CORE-TENSOR-CHECK-VERSION-OR-DELETE-3", "CORE-TENSOR-CHECK-VERSION-OR-DELETE-5",
              "CORE-TENSOR-CHECK-VERSION-OR-DELETE-6", "OWN-DELETER-4", "ABI-OUT-1"])
def _(ctx):
    C = _compat_ctype(ctx)
    end = ctx.T.DLManagedTensorVersioned.deleter.offset + ctypes.sizeof(ctypes.c_void_p)
    for major in MAJORS_BAD:
        rec = ctx.fx.fx_record_new()
        # version, manager_ctx and deleter readable (read-only: a write faults); everything
        # after them faults.
        p = fenced(_image(ctx, (major, 5), ctx.VDELETER, rec), hi=end)
        out, ptr, raw = out_slot(C)
        before = raw()
        expect_fail(ctx, lambda: ctx.f.dlpack_tensor_check_version_or_delete(ctx.vptr(p), ctypes.cast(ptr, ctypes.POINTER(C))),
                    "UNSUPPORTED_VERSION", what=f"major {major}")
        ctx.check(ctx.calls(rec) == 1, f"major {major}: the deleter ran {ctx.calls(rec)} times")
        ctx.check(ctx.deleter_thread(rec) == ctx.fx.fx_gettid(), "the deleter ran on another thread")
        ctx.check(raw() == before, "out_compat written on failure")
    # With the fixture's poisoning tensors: nothing is touched after the deleter.
    for major in (2, 0):
        q, rec = ctx.make_versioned(version=(major, 0), readable=end)
        expect_fail(ctx, lambda: ctx.f.dlpack_tensor_check_version_or_delete(ctx.vptr(q), None),
                    "UNSUPPORTED_VERSION", what=f"major {major}, poisoning deleter")
        ctx.check(ctx.calls(rec) == 1, f"major {major}: the deleter ran {ctx.calls(rec)} times")


@case("core.tensor_check_version_or_delete.null_deleter", profile="core",
      covers=["CORE-TENSOR-CHECK-VERSION-OR-DELETE-4", "ABI-NULL-3"])
def _(ctx):
    end = ctx.T.DLManagedTensorVersioned.deleter.offset + ctypes.sizeof(ctypes.c_void_p)
    for major in MAJORS_BAD:
        p = fenced(_image(ctx, (major, 0), None, 0), hi=end)
        expect_fail(ctx, lambda: ctx.f.dlpack_tensor_check_version_or_delete(ctx.vptr(p), None),
                    "UNSUPPORTED_VERSION", what=f"major {major}, NULL deleter")


@case("core.tensor_check_version_or_delete.message_after_deleter", profile="core",
      covers=["CORE-TENSOR-CHECK-VERSION-OR-DELETE-7"])
def _(ctx):
    # A deleter that makes a failing call into the implementation (its message names 9191):
    # after the return, the message is this call's refusal (naming 77 and 4242).
    calls = []
    V = ctx.T.DLManagedTensorVersioned
    DEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

    def deleter(_self):
        calls.append(1)
        ctx.f.dlpack_version_check(ctx.T.DLPackVersion(5, 9191), None)

    cb = DEL(deleter)
    t = V()
    t.version.major, t.version.minor = 77, 4242
    t.deleter = ctypes.cast(cb, ctypes.c_void_p).value
    st = ctx.f.dlpack_tensor_check_version_or_delete(ctypes.pointer(t), None)
    ctx.expect(st, "UNSUPPORTED_VERSION")
    ctx.check(len(calls) == 1, f"the deleter ran {len(calls)} times")
    text = ctx.last_error()
    ctx.check(b"4242" in text and b"77" in text and b"9191" not in text,
              f"the message after the call is not this call's refusal naming 77.4242: {text!r}")


# -- dlpack_version_negotiate -------------------------------------------------------------------
def negotiate(P, flags, M):
    """The rules of spec/functions/dlpack_version_negotiate.md, in their order."""
    if flags & ~3:
        return "INVALID_ARGUMENT", None
    if M is None:
        return ("OK", "LEGACY") if (flags & 1 or P[0] == 0) else ("NO_COMMON_VERSION", None)
    if flags & 2:
        return "KEYWORD_NOT_UNDERSTOOD", None
    if P[0] == 0:
        return "OK", "LEGACY"
    if M >= P or M[0] == P[0]:
        return "OK", ("VERSIONED", P)
    if M[0] == 0 and flags & 1:
        return "OK", "LEGACY"
    return "NO_COMMON_VERSION", None


PRODUCERS = [(0, 0), (0, 5), (1, 0), (1, 2), (1, 3), (1, 9), (2, 0), (2, 1), (3, 0), (U32, U32)]
MAXES = [None, (0, 0), (0, 9), (1, 0), (1, 2), (1, 3), (1, 9), (2, 0), (2, 5), (3, 0), (U32, 0)]
FLAGS = [0, 1, 2, 3, 4, 5, 0x80000000, 0xFFFFFFFF]


@case("core.version_negotiate.table", profile="core",
      covers=["CORE-VERSION-NEGOTIATE-2", "CORE-VERSION-NEGOTIATE-3", "CORE-VERSION-NEGOTIATE-4",
              "CORE-VERSION-NEGOTIATE-5", "CORE-VERSION-NEGOTIATE-6", "CORE-VERSION-NEGOTIATE-7",
              "CORE-VERSION-NEGOTIATE-8", "CORE-VERSION-NEGOTIATE-9", "ABI-INT-2", "ABI-STATUS-3", "ABI-OUT-1"])
def _(ctx):
    Choice = ctx.T.dlpack_helpers_version_choice
    K = ctx.K
    rows = [(P, f, M) for P in PRODUCERS for f in FLAGS for M in MAXES]
    seen = {}
    for order in (rows, list(reversed(rows))):
        for P, flags, M in order:
            want, choice = negotiate(P, flags, M)
            mp = None
            if M is not None:
                mp = fenced(bytes_of(ctx.T.DLPackVersion(*M)))  # read-only: a write faults
            out, ptr, raw = out_slot(Choice)
            before = raw()
            what = f"negotiate(P={P}, flags={flags:#x}, max={M})"
            st = ctx.f.dlpack_version_negotiate(ctx.T.DLPackVersion(*P), flags,
                                                ctypes.cast(mp, ctypes.POINTER(ctx.T.DLPackVersion)) if mp else None,
                                                ptr)
            ctx.expect(st, want, what=what)
            if want != "OK":
                ctx.check(raw() == before, f"{what}: out_choice written on failure")
                got = None
            else:
                got = (out.kind, out.version.major, out.version.minor)
                if choice == "LEGACY":
                    exp = (K.DLPACK_HELPERS_EXPORT_LEGACY, 0, 0)
                else:
                    exp = (K.DLPACK_HELPERS_EXPORT_VERSIONED, choice[1][0], choice[1][1])
                ctx.check(got == exp, f"{what}: wrote (kind, major, minor) {got}, expected {exp}")
            key = (P, flags, M)
            ctx.check(seen.setdefault(key, (st, got)) == (st, got), f"{what}: a different answer the second time")


@case("core.version_negotiate.null_out", profile="core", covers=["CORE-VERSION-NEGOTIATE-1", "ABI-NULL-1"])
def _(ctx):
    mp = ctypes.pointer(ctx.T.DLPackVersion(1, 3))
    for P in PRODUCERS:
        for flags in (0, 3, 0xFFFFFFFF):
            for m in (None, mp):
                expect_fail(ctx, lambda: ctx.f.dlpack_version_negotiate(ctx.T.DLPackVersion(*P), flags, m, None),
                            "NULL_POINTER", what=f"P={P}, flags={flags:#x}")


@case("core.version_negotiate.ok_keeps_last_error", profile="core", covers=["CORE-VERSION-NEGOTIATE-8"])
def _(ctx):
    Choice = ctx.T.dlpack_helpers_version_choice
    with unchanged_message(ctx, "dlpack_version_negotiate returning OK"):
        out = Choice()
        ctx.ok(ctx.f.dlpack_version_negotiate(ctx.T.DLPackVersion(1, 3), 0,
                                              ctypes.pointer(ctx.T.DLPackVersion(1, 3)), ctypes.byref(out)))
    # A failing call sets its own message.
    expect_fail(ctx, lambda: ctx.f.dlpack_version_negotiate(ctx.T.DLPackVersion(1, 3), 0, None, ctypes.byref(out)),
                "NO_COMMON_VERSION")


# -- spec/04-versioning.md ----------------------------------------------------------------------
def _validate(ctx, p, flags=0):
    opts = ctx.T.dlpack_helpers_validate_options()
    opts.struct_size = ctypes.sizeof(opts)
    opts.flags = flags
    lay = ctx.T.dlpack_helpers_layout()
    return ctx.f.dlpack_tensor_validate(ctx.vptr(p), ctypes.byref(opts), ctypes.byref(lay))


@case("core.versioning.rules_of_the_declared_minor", profile="core", covers=["VER-MINOR-2", "VER-MINOR-1"])
def _(ctx):
    # NULL strides with ndim 2: allowed before DLPack 1.2, refused from 1.2 on, and a newer minor
    # than the implementation knows follows the newest known minor's rule.
    for minor, want in ((0, "OK"), (1, "OK"), (2, "NULL_STRIDES"), (3, "NULL_STRIDES"),
                        (4, "NULL_STRIDES"), (9, "NULL_STRIDES")):
        p, _ = ctx.make_versioned(version=(1, minor), strides=None)
        ctx.expect(_validate(ctx, p), want, what=f"NULL strides at DLPack 1.{minor}")
    # IS_SUBBYTE_TYPE_PADDED (0x4) is defined from 1.1 on: refused at 1.0, accepted from 1.1.
    padded = ctx.K.DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
    for minor, want in ((0, "INVALID_FLAGS"), (1, "OK"), (3, "OK"), (7, "OK")):
        p, _ = ctx.make_versioned(version=(1, minor), strides=(3, 1), flags=padded)
        ctx.expect(_validate(ctx, p), want, what=f"flag 0x4 at DLPack 1.{minor}")


@case("core.versioning.unknown_flag_bits", profile="core", covers=["VER-UNKNOWN-4"])
def _(ctx):
    for bits in (0x8, 0x100, 1 << 63):
        for minor, want in ((0, "INVALID_FLAGS"), (1, "INVALID_FLAGS"), (3, "INVALID_FLAGS"),
                            (4, "OK"), (9, "OK"), (U32, "OK")):
            p, _ = ctx.make_versioned(version=(1, minor), strides=(3, 1), flags=bits)
            ctx.expect(_validate(ctx, p), want, what=f"flags {bits:#x} at DLPack 1.{minor}")
            if want == "OK":
                out = ctypes.c_uint64(0)
                ctx.ok(ctx.f.dlpack_tensor_get_flags(ctx.vptr(p), ctypes.byref(out)))
                ctx.check(out.value == bits, f"1.{minor}: flags {bits:#x} read back as {out.value:#x}")


@case("core.versioning.unknown_values_pass_through", profile="core", covers=["VER-UNKNOWN-1", "VER-UNKNOWN-2"])
def _(ctx):
    # Device types and dtype codes DLPack 1.3 does not assign, and flag bits no minor defines:
    # the getters and the release functions neither refuse nor change them.
    for dev in ((99, 3), (0, 0), (-7 & U32, 1), (20, 0)):
        for dtype in ((200, 32, 1), (18, 8, 1), (2, 32, 1)):
            p, rec = ctx.make_versioned(version=(1, 3), device=dev, dtype=dtype, strides=(3, 1), data=0x1000)
            d = ctx.T.DLDevice()
            ctx.ok(ctx.f.dlpack_get_device(ctx.vptr(p), ctypes.byref(d)), what=f"device {dev}, dtype {dtype}")
            ctx.check(((d.device_type & U32), d.device_id) == ((dev[0] & U32), dev[1]), f"device {dev} changed")
            ctx.ok(ctx.f.dlpack_tensor_check_version(ctx.vptr(p), None))
            t = ctx.versioned(p).dl_tensor
            ctx.check((t.dtype.code, t.dtype.bits, t.dtype.lanes) == dtype, "the tensor was changed")
            ctx.f.dlpack_tensor_delete(ctx.vptr(p))
            ctx.check(ctx.calls(rec) == 1, f"device {dev}, dtype {dtype}: the deleter ran {ctx.calls(rec)} times")
        lp, lrec = ctx.make_legacy(device=dev, dtype=(200, 32, 1), data=0x1000)
        d = ctx.T.DLDevice()
        ctx.ok(ctx.f.dlpack_legacy_get_device(ctx.lptr(lp), ctypes.byref(d)), what=f"legacy device {dev}")
        ctx.f.dlpack_legacy_tensor_delete(ctx.lptr(lp))
        ctx.check(ctx.calls(lrec) == 1, "the legacy deleter did not run once")
    # Validation, which depends on the dtype's meaning, refuses an unknown code (its page says so).
    p, _ = ctx.make_versioned(version=(1, 3), dtype=(200, 32, 1), strides=(3, 1))
    ctx.expect(_validate(ctx, p), "INVALID_DTYPE", what="an unknown dtype code under validation")
    # ...but not an unknown device type when no device property is asked for.
    p, _ = ctx.make_versioned(version=(1, 3), device=(99, 0), strides=(3, 1), data=0x1000)
    ctx.expect(_validate(ctx, p), "OK", "OPAQUE_HANDLE", what="an unknown device type under validation")
    ctx.expect(_validate(ctx, p, ctx.K.DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE), "NOT_CPU_ACCESSIBLE",
               what="an unknown device type with REQUIRE_CPU_ACCESSIBLE")


@case("core.versioning.deprecated_functions_kept", profile="core", covers=["VER-DEPRECATE-1"])
def _(ctx):
    # A deprecated function stays exported (and its page's cases run) while its profile lists it.
    dep = [n for n, f in ctx.m.functions.items() if f.get("status") == "deprecated"]
    missing = []
    for n in dep:
        prof = ctx.m.functions[n].get("profile", "core")
        if ctx.claimed is None or ctx.claimed & ctx.m.profile_bits.get(prof, 0):
            if not ctx.f.has(n):
                missing.append(n)
    ctx.check(not missing, f"deprecated functions of claimed profiles not exported: {missing}")
    ctx.check(all(f.get("status") in ("stable", "deprecated", "experimental", None)
                  for f in ctx.m.functions.values()), "suite bug: an unknown function status in the manifest")
