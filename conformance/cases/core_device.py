"""Core: device queries (dlpack_is_cpu_accessible, dlpack_device_host_access,
dlpack_device_is_pointer_addressed, dlpack_device_check, dlpack_get_device,
dlpack_legacy_get_device).

The three device-type classifications are data: one expected answer per 32-bit device type, and
every row is checked with several device ids, forwards and backwards, around failing calls.
"""
import ctypes

from harness.registry import case

from cases._common import (DEVICE_IDS, DEVICE_TYPES, as_u8_fn, bytes_of, expect_fail, fenced,
                           noaccess, out_slot, unchanged_message)

ALWAYS = {1, 3, 11, 13}
NEVER = {2, 4, 7, 8, 9, 10, 15, 16, 17, 18}
POINTER = {1, 2, 3, 10, 11, 13, 14}
M32 = 0xFFFFFFFF  # DLDeviceType is read as a 32-bit value; compare its bits
ASSIGNED = set(range(1, 5)) | set(range(7, 19))


def host_access_of(t):
    return "ALWAYS" if t in ALWAYS else "NEVER" if t in NEVER else "DEPENDS"


def _sweep(ctx, fn_u8, expected, what):
    """Every row, every id, forwards then backwards, with a failing call in between."""
    dev = ctx.T.DLDevice
    first = {}
    for order in (DEVICE_TYPES, list(reversed(DEVICE_TYPES))):
        for t in order:
            for i in DEVICE_IDS:
                got = fn_u8(dev(t, i))
                want = expected(t)
                ctx.check(got == want, f"{what}(({t}, {i})) gave {got}, expected {want}")
                first.setdefault(t, got)
                ctx.check(got == first[t], f"{what}(({t}, {i})): the answer depends on the id or on order")
            ctx.f.dlpack_device_check(dev(t, -1), 0)  # a failing call between rows changes nothing


@case("core.is_cpu_accessible.table", profile="core",
      covers=["CORE-IS-CPU-ACCESSIBLE-1", "CORE-IS-CPU-ACCESSIBLE-2", "ABI-BOOL-1", "VER-UNKNOWN-3"])
def _(ctx):
    fn = as_u8_fn(ctx, "dlpack_is_cpu_accessible", [ctx.T.DLDevice])
    _sweep(ctx, fn, lambda t: 1 if t in ALWAYS else 0, "dlpack_is_cpu_accessible")


@case("core.is_cpu_accessible.agrees_with_host_access", profile="core",
      covers=["CORE-IS-CPU-ACCESSIBLE-3"])
def _(ctx):
    always = ctx.K.DLPACK_HELPERS_HOST_ACCESS_ALWAYS
    for t in DEVICE_TYPES:
        for i in DEVICE_IDS:
            d = ctx.T.DLDevice(t, i)
            a = bool(ctx.f.dlpack_is_cpu_accessible(d))
            h = ctx.f.dlpack_device_host_access(d)
            ctx.check(a == (h == always), f"device ({t}, {i}): is_cpu_accessible {a}, host_access {h}")


@case("core.is_cpu_accessible.keeps_last_error", profile="core", covers=["CORE-IS-CPU-ACCESSIBLE-4"])
def _(ctx):
    with unchanged_message(ctx, "dlpack_is_cpu_accessible"):
        for t in DEVICE_TYPES:
            ctx.f.dlpack_is_cpu_accessible(ctx.T.DLDevice(t, -1))


@case("core.device_host_access.table", profile="core",
      covers=["CORE-DEVICE-HOST-ACCESS-1", "CORE-DEVICE-HOST-ACCESS-2", "CORE-DEVICE-HOST-ACCESS-3",
              "VER-UNKNOWN-3"])
def _(ctx):
    fn = ctx.f.dlpack_device_host_access
    K = ctx.K
    allowed = {K.DLPACK_HELPERS_HOST_ACCESS_NEVER, K.DLPACK_HELPERS_HOST_ACCESS_ALWAYS,
               K.DLPACK_HELPERS_HOST_ACCESS_DEPENDS}

    def checked(d):
        v = fn(d)
        ctx.check(v in allowed, f"dlpack_device_host_access(({d.device_type}, {d.device_id})) gave {v}, "
                                "not NEVER, ALWAYS or DEPENDS")
        return v

    _sweep(ctx, checked, lambda t: getattr(K, "DLPACK_HELPERS_HOST_ACCESS_" + host_access_of(t)),
           "dlpack_device_host_access")


@case("core.device_host_access.keeps_last_error", profile="core", covers=["CORE-DEVICE-HOST-ACCESS-4"])
def _(ctx):
    with unchanged_message(ctx, "dlpack_device_host_access"):
        for t in DEVICE_TYPES:
            ctx.f.dlpack_device_host_access(ctx.T.DLDevice(t, -1))


@case("core.device_is_pointer_addressed.table", profile="core",
      covers=["CORE-DEVICE-IS-POINTER-ADDRESSED-1", "CORE-DEVICE-IS-POINTER-ADDRESSED-2", "ABI-BOOL-1",
              "VER-UNKNOWN-3"])
def _(ctx):
    fn = as_u8_fn(ctx, "dlpack_device_is_pointer_addressed", [ctx.T.DLDevice])
    _sweep(ctx, fn, lambda t: 1 if t in POINTER else 0, "dlpack_device_is_pointer_addressed")


@case("core.device_is_pointer_addressed.keeps_last_error", profile="core",
      covers=["CORE-DEVICE-IS-POINTER-ADDRESSED-3"])
def _(ctx):
    with unchanged_message(ctx, "dlpack_device_is_pointer_addressed"):
        for t in DEVICE_TYPES:
            ctx.f.dlpack_device_is_pointer_addressed(ctx.T.DLDevice(t, -1))


# -- dlpack_device_check ----------------------------------------------------------------------
def _device_check_expected(ctx, t, i, flags):
    if flags & ~ctx.K.DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE:
        return "INVALID_ARGUMENT"
    if i < 0:
        return "INVALID_DEVICE"
    if flags == 0 and t not in ASSIGNED:
        return "INVALID_DEVICE"
    return "OK"


@case("core.device_check.table", profile="core",
      covers=["CORE-DEVICE-CHECK-1", "CORE-DEVICE-CHECK-2", "CORE-DEVICE-CHECK-3", "CORE-DEVICE-CHECK-4",
              "ABI-INT-2", "ABI-STATUS-3"])
def _(ctx):
    allow = ctx.K.DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE
    flag_values = (0, allow, 2, allow | 2, 4, 0x80000000, 0xFFFFFFFF, allow | 0x100)
    for t in DEVICE_TYPES:
        for i in DEVICE_IDS:
            for flags in flag_values:
                want = _device_check_expected(ctx, t, i, flags)
                call = lambda: ctx.f.dlpack_device_check(ctx.T.DLDevice(t, i), flags)  # noqa: E731
                what = f"dlpack_device_check(({t}, {i}), {flags:#x})"
                if want == "OK":
                    ctx.expect(call(), "OK", what=what)
                elif t in (1, 20) or i in (0, -1):  # the message check on a sample of rows
                    expect_fail(ctx, call, want, what=what)
                else:
                    ctx.expect(call(), want, what=what)


@case("core.device_check.ok_keeps_last_error_and_order", profile="core", covers=["CORE-DEVICE-CHECK-5"])
def _(ctx):
    allow = ctx.K.DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE
    with unchanged_message(ctx, "dlpack_device_check returning OK"):
        for t in sorted(ASSIGNED):
            ctx.expect(ctx.f.dlpack_device_check(ctx.T.DLDevice(t, 3), 0), "OK")
        for t in DEVICE_TYPES:
            ctx.expect(ctx.f.dlpack_device_check(ctx.T.DLDevice(t, (1 << 31) - 1), allow), "OK")
    # The same arguments give the same status after other calls (failing ones included).
    for _ in range(2):
        ctx.expect(ctx.f.dlpack_device_check(ctx.T.DLDevice(0, 0), 0), "INVALID_DEVICE")
        ctx.expect(ctx.f.dlpack_device_check(ctx.T.DLDevice(0, 0), allow), "OK")
        ctx.expect(ctx.f.dlpack_device_check(ctx.T.DLDevice(2, 0), 0), "OK")


# -- dlpack_get_device / dlpack_legacy_get_device ----------------------------------------------
def _versioned_image(ctx, version, device, deleter=None, manager_ctx=0):
    V = ctx.T.DLManagedTensorVersioned
    t = V()
    t.version.major, t.version.minor = version
    t.manager_ctx = manager_ctx
    t.deleter = deleter
    t.dl_tensor.device.device_type, t.dl_tensor.device.device_id = device
    t.dl_tensor.ndim = 2
    t.dl_tensor.data = 0x1000
    return bytes_of(t)


def _legacy_image(ctx, device, deleter=None, manager_ctx=0):
    L = ctx.T.DLManagedTensor
    t = L()
    t.manager_ctx = manager_ctx
    t.deleter = deleter
    t.dl_tensor.device.device_type, t.dl_tensor.device.device_id = device
    t.dl_tensor.ndim = 2
    t.dl_tensor.data = 0x1000
    return bytes_of(t)


def _dev_end_versioned(ctx):
    V = ctx.T.DLManagedTensorVersioned
    return V.dl_tensor.offset + ctx.T.DLTensor.device.offset + ctypes.sizeof(ctx.T.DLDevice)


def _dev_off_legacy(ctx):
    return ctx.T.DLManagedTensor.dl_tensor.offset + ctx.T.DLTensor.device.offset


VERSIONED_OK = [(1, m) for m in (0, 1, 2, 3, 4, 9, 0xFFFFFFFF)]
VERSIONED_BAD = [(0, 0), (0, 3), (2, 0), (2, 3), (3, 1), (0xFFFFFFFF, 0), (0xFFFFFFFF, 0xFFFFFFFF)]


@case("core.get_device.copies_device", profile="core",
      covers=["CORE-GET-DEVICE-4", "CORE-GET-DEVICE-5", "VER-UNKNOWN-1", "VER-MINOR-1", "ABI-OUT-2"])
def _(ctx):
    # Only version and dl_tensor.device are readable (everything after the device faults), the
    # struct is read-only, and the deleter is a fixture that counts: a read past the device, a
    # write or a deleter call fails the case.
    rec = ctx.fx.fx_record_new()
    end = _dev_end_versioned(ctx)
    for version in VERSIONED_OK:
        for t in DEVICE_TYPES:
            for i in (0, 1, 7, (1 << 31) - 1):
                img = _versioned_image(ctx, version, (t, i), ctx.VDELETER, rec)
                p = fenced(img, hi=end)
                out, ptr, raw = out_slot(ctx.T.DLDevice)
                ctx.ok(ctx.f.dlpack_get_device(ctx.vptr(p), ptr), what=f"version {version}, device ({t}, {i})")
                ctx.check((out.device_type & M32, out.device_id) == (t & M32, i),
                          f"version {version}: wrote ({out.device_type}, {out.device_id}), expected ({t}, {i})")
    ctx.check(ctx.calls(rec) == 0, "the deleter was called")


@case("core.get_device.null", profile="core", covers=["CORE-GET-DEVICE-1", "ABI-NULL-1", "ABI-OUT-1"])
def _(ctx):
    out, ptr, raw = out_slot(ctx.T.DLDevice)
    before = raw()
    expect_fail(ctx, lambda: ctx.f.dlpack_get_device(None, ptr), "NULL_POINTER", what="NULL tensor")
    ctx.check(raw() == before, "out_device was written on failure")
    # A NULL out_device with a tensor that cannot be read at all: nothing may be read.
    for _ in range(2):
        expect_fail(ctx, lambda: ctx.f.dlpack_get_device(ctx.vptr(noaccess()), None), "NULL_POINTER",
                    what="NULL out_device")
    expect_fail(ctx, lambda: ctx.f.dlpack_get_device(None, None), "NULL_POINTER", what="both NULL")


@case("core.get_device.unsupported_major", profile="core",
      covers=["CORE-GET-DEVICE-2", "CORE-GET-DEVICE-6", "ABI-OUT-1", "ABI-STATUS-3"])
def _(ctx):
    # Only the 8 bytes of `version` are readable: any other read faults.
    for version in VERSIONED_BAD:
        img = _versioned_image(ctx, version, (1, 0))
        p = fenced(img, hi=8)
        out, ptr, raw = out_slot(ctx.T.DLDevice)
        before = raw()
        expect_fail(ctx, lambda: ctx.f.dlpack_get_device(ctx.vptr(p), ptr), "UNSUPPORTED_VERSION",
                    what=f"version {version}")
        ctx.check(raw() == before, f"version {version}: out_device was written on failure")


@case("core.get_device.negative_id", profile="core",
      covers=["CORE-GET-DEVICE-3", "CORE-GET-DEVICE-6", "CORE-GET-DEVICE-5"])
def _(ctx):
    end = _dev_end_versioned(ctx)
    for version in ((1, 0), (1, 3), (1, 7)):
        for t in (1, 2, 0, 99, -4):
            for i in (-1, -2, -(1 << 31)):
                p = fenced(_versioned_image(ctx, version, (t, i)), hi=end)
                out, ptr, raw = out_slot(ctx.T.DLDevice)
                before = raw()
                expect_fail(ctx, lambda: ctx.f.dlpack_get_device(ctx.vptr(p), ptr), "INVALID_DEVICE",
                            what=f"version {version}, device ({t}, {i})")
                ctx.check(raw() == before, "out_device was written on failure")


@case("core.legacy_get_device.copies_device", profile="core",
      covers=["CORE-LEGACY-GET-DEVICE-3", "CORE-LEGACY-GET-DEVICE-4", "VER-UNKNOWN-1"])
def _(ctx):
    rec = ctx.fx.fx_record_new()
    off = _dev_off_legacy(ctx)
    end = off + ctypes.sizeof(ctx.T.DLDevice)
    for t in DEVICE_TYPES:
        for i in (0, 1, (1 << 31) - 1):
            img = _legacy_image(ctx, (t, i), ctx.LDELETER, rec)
            # Once with everything after the device unreadable, once with everything before it.
            for p in (fenced(img, hi=end), fenced(img, lo=off)):
                out, ptr, raw = out_slot(ctx.T.DLDevice)
                ctx.ok(ctx.f.dlpack_legacy_get_device(ctx.lptr(p), ptr), what=f"device ({t}, {i})")
                ctx.check((out.device_type & M32, out.device_id) == (t & M32, i),
                          f"wrote ({out.device_type}, {out.device_id}), expected ({t}, {i})")
    ctx.check(ctx.calls(rec) == 0, "the deleter was called")


@case("core.legacy_get_device.null", profile="core", covers=["CORE-LEGACY-GET-DEVICE-1", "ABI-NULL-1"])
def _(ctx):
    out, ptr, raw = out_slot(ctx.T.DLDevice)
    before = raw()
    expect_fail(ctx, lambda: ctx.f.dlpack_legacy_get_device(None, ptr), "NULL_POINTER", what="NULL tensor")
    ctx.check(raw() == before, "out_device was written on failure")
    expect_fail(ctx, lambda: ctx.f.dlpack_legacy_get_device(ctx.lptr(noaccess()), None), "NULL_POINTER",
                what="NULL out_device")


@case("core.legacy_get_device.negative_id", profile="core",
      covers=["CORE-LEGACY-GET-DEVICE-2", "CORE-LEGACY-GET-DEVICE-5"])
def _(ctx):
    off = _dev_off_legacy(ctx)
    end = off + ctypes.sizeof(ctx.T.DLDevice)
    for t in (1, 2, 0, 99, -4):
        for i in (-1, -(1 << 31)):
            p = fenced(_legacy_image(ctx, (t, i)), hi=end)
            out, ptr, raw = out_slot(ctx.T.DLDevice)
            before = raw()
            expect_fail(ctx, lambda: ctx.f.dlpack_legacy_get_device(ctx.lptr(p), ptr), "INVALID_DEVICE",
                        what=f"device ({t}, {i})")
            ctx.check(raw() == before, "out_device was written on failure")
