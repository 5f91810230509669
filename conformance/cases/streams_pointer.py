"""Streams: memory queries that ask a driver (dlpack_pointer_classify, dlpack_pointer_get_device,
the three host-access functions) and the Level Zero registrations they use, against the fake
CUDA driver, HIP runtime and Level Zero loader. The suite itself opens all three doubles here, so
Level Zero is "loaded by something else": without a context it replies unreachable and
unclaimed memory is UNKNOWN, never host (streams_pointer_host and streams_noruntime hold the
HOST answers). Allocations are PROT_NONE pages: the memory at a pointer is never touched.
"""
import ctypes
import threading

from harness import build
from harness.registry import case

from cases import _common as C
from cases._streams import fakes, no_runtime_calls, reset_all


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers()}


FIELD_ENDS = [("struct_size", 8), ("memory_class", 12), ("host_access", 16), ("device", 24),
              ("native_device", 32), ("backends_asked", 36), ("backends_unreachable", 40),
              ("answered_by", 44), ("device_id_known", 56)]
B_CUDA, B_HIP, B_ZE = 1, 2, 4
CTX_A, CTX_B, CTX_C = 0xA000, 0xB000, 0xC000
DEV_A0, DEV_A2, SUB_A0, DEV_B1 = 0xD0A0, 0xD0A2, 0xD5A0, 0xD0B1


def M(ctx, name):
    return getattr(ctx.K, "DLPACK_HELPERS_MEMORY_" + name)


def H(ctx, name):
    return getattr(ctx.K, "DLPACK_HELPERS_HOST_ACCESS_" + name)


def classify(ctx, ptr, zctx=None, size=None):
    """(status, info, untouched bytes past the struct) with the info against a guard page."""
    full = ctypes.sizeof(ctx.T.dlpack_helpers_pointer_info)
    n = full if size is None else size
    p = C.pages(2)
    C.protect(p + C.PAGE, C.PAGE, C.PROT_NONE)
    addr = p + C.PAGE - full  # the struct's storage ends at the guard page...
    ctypes.memset(addr, 0x5A, full)
    ctypes.c_size_t.from_address(addr).value = n
    info = ctx.T.dlpack_helpers_pointer_info.from_address(addr)
    before = ctypes.string_at(addr, full)
    st = ctx.f.dlpack_pointer_classify(ptr or None, zctx or None, ctypes.pointer(info))
    return st, info, before, ctypes.string_at(addr, full)


def summary(info):
    return (info.memory_class, info.host_access, (info.device.device_type, info.device.device_id),
            info.native_device or 0, info.backends_asked, info.backends_unreachable, info.answered_by,
            info.device_id_known)


_alloc = {}


def allocation(name, pages=1):
    """A PROT_NONE region standing for device memory (one per name, for the process)."""
    if name not in _alloc:
        _alloc[name] = C._libc.mmap(None, pages * C.PAGE, 0, C.MAP_PRIVATE_ANON, -1, 0)
    return _alloc[name]


def setup():
    cu, hp, ze = fakes()
    if not _alloc:
        for name, mt, managed, ordinal in (("cu_dev1", 2, 0, 1), ("cu_host", 1, 0, 0), ("cu_managed", 2, 1, 0),
                                           ("cu_managed_host", 1, 1, 1), ("cu_neg", 2, 0, -1), ("cu_odd", 7, 0, 0)):
            cu.lib.fake_register_pointer(allocation(name), mt, managed, ordinal)
        for name, t, dev, managed in (("hip_host", 1, 0, 0), ("hip_dev1", 2, 1, 0), ("hip_managed", 3, 1, 0),
                                      ("hip_array", 10, 0, 0), ("hip_unified", 11, 1, 0), ("hip_ismanaged", 2, 0, 1),
                                      ("hip_odd", 5, 0, 0)):
            hp.lib.fake_hip_register(allocation(name, 2), 2 * C.PAGE, t, dev, managed)
        for name, zc, t, dev in (("ze_host", CTX_A, 1, 0), ("ze_dev2", CTX_A, 2, DEV_A2), ("ze_shared0", CTX_A, 3, DEV_A0),
                                 ("ze_sub", CTX_A, 2, SUB_A0), ("ze_other", CTX_A, 2, 0xD0FF), ("ze_odd", CTX_A, 9, DEV_A0),
                                 ("ze_b", CTX_B, 2, DEV_B1)):
            ze.lib.fake_ze_register(zc, allocation(name, 2), 2 * C.PAGE, t, dev)
        # the same addresses in CTX_B as DEV_B1 allocations (for the registration-switch cases)
        ze.lib.fake_ze_register(CTX_B, allocation("ze_dev2", 2), 2 * C.PAGE, 2, DEV_B1)
        ze.lib.fake_ze_set_root(SUB_A0, DEV_A0)
    return cu, hp, ze


def set_devices(ctx, zc, devs):
    arr = (ctypes.c_void_p * max(1, len(devs)))(*devs)
    return ctx.f.dlpack_level_zero_context_set_devices(zc or None, arr, len(devs)), arr


# ---- dlpack_pointer_classify ---------------------------------------------------------------------

@case("streams.pointer_classify.cuda_and_hip_claims", profile="streams",
      covers=["STREAMS-POINTER-CLASSIFY-2", "STREAMS-POINTER-CLASSIFY-3", "STREAMS-POINTER-CLASSIFY-6",
              "STREAMS-POINTER-CLASSIFY-9", "STREAMS-POINTER-CLASSIFY-10", "STREAMS-POINTER-CLASSIFY-13"])
def _(ctx):
    cu, hp, ze = setup()
    ctx.f.dlpack_level_zero_context_set(None)
    A, N = H(ctx, "ALWAYS"), H(ctx, "NEVER")
    rows = [  # name, offset, class, host access, device, known, answered_by, asked
        ("cu_dev1", 0, "DEVICE", N, (2, 1), 1, B_CUDA, B_CUDA),
        ("cu_host", 0, "PINNED_HOST", A, (3, 0), 1, B_CUDA, B_CUDA),
        ("cu_managed", 0, "MANAGED", A, (13, 0), 1, B_CUDA, B_CUDA),
        ("cu_managed_host", 0, "MANAGED", A, (13, 0), 1, B_CUDA, B_CUDA),
        ("cu_neg", 0, "DEVICE", N, (2, 0), 0, B_CUDA, B_CUDA),
        ("hip_host", 100, "PINNED_HOST", A, (11, 0), 1, B_HIP, B_CUDA | B_HIP),
        ("hip_dev1", C.PAGE + 8, "DEVICE", N, (10, 1), 1, B_HIP, B_CUDA | B_HIP),
        ("hip_managed", 0, "MANAGED", A, (10, 1), 1, B_HIP, B_CUDA | B_HIP),
        ("hip_array", 2 * C.PAGE - 1, "DEVICE", N, (10, 0), 1, B_HIP, B_CUDA | B_HIP),
        ("hip_unified", 5, "MANAGED", A, (10, 1), 1, B_HIP, B_CUDA | B_HIP),
        ("hip_ismanaged", 0, "MANAGED", A, (10, 0), 1, B_HIP, B_CUDA | B_HIP),
    ]
    for name, off, cls, ha, dev, known, by, asked in rows:
        reset_all()
        st, info, _, _ = classify(ctx, allocation(name) + off)
        ctx.ok(st, what=name)
        got = summary(info)
        want = (M(ctx, cls), ha, dev, 0, asked, 0, by, known)
        ctx.check(got == want, f"{name}+{off}: {got}, expected {want}")
        ctx.check(cu.count("cuPointerGetAttributes") == 1, f"{name}: CUDA asked {cu.count('cuPointerGetAttributes')} times")
        ctx.check(hp.count("hipPointerGetAttributes") == (1 if by == B_HIP else 0),
                  f"{name}: HIP asked {hp.count('hipPointerGetAttributes')} times (stop at the first claim)")
        ctx.check(ze.count("zeMemGetAllocProperties") == 0, f"{name}: Level Zero asked after a claim")
    # failing queries and unlisted memory types: DEVICE_ERROR naming the call, info unchanged
    for name, fk, fn, code in (("cu_odd", None, "cuPointerGetAttributes", 0), ("hip_odd", None, "hipPointerGetAttributes", 0),
                               ("cu_dev1", cu, "cuPointerGetAttributes", 700), ("hip_dev1", hp, "hipPointerGetAttributes", 101)):
        reset_all()
        if fk:
            fk.fail(fn, code)
        st, info, before, after = classify(ctx, allocation(name))
        if fk:
            fk.fail(fn, 0)
        ctx.expect(st, "DEVICE_ERROR", what=f"{name} ({fn} {code or 'unlisted type'})")
        ctx.check(fn.encode() in ctx.last_error(), f"{name}: the message does not name {fn}")
        ctx.check(after == before, f"{name}: out_info written on failure")


@case("streams.pointer_classify.cuda_invalid_context_retry", profile="streams", covers=["STREAMS-POINTER-CLASSIFY-2"])
def _(ctx):
    cu, hp, ze = setup()
    cu.lib.fake_pointer_needs_context(1)
    try:
        reset_all()
        st, info, _, _ = classify(ctx, allocation("cu_dev1"))
        ctx.ok(st, what="CUDA wants a context")
        ctx.check(summary(info)[2] == (2, 1), f"answered {summary(info)}")
        ctx.check(cu.count("cuPointerGetAttributes") == 2, f"{cu.count('cuPointerGetAttributes')} CUDA queries (2 expected)")
        ctx.check(cu.count("cuCtxPushCurrent_v2") == 1 and cu.count("cuCtxPopCurrent_v2") == 1, "context not pushed and popped once")
        c = ctypes.c_void_p()
        cu.lib.cuCtxGetCurrent(ctypes.byref(c))
        ctx.check(not c.value, "the thread's context was not restored")
    finally:
        cu.lib.fake_pointer_needs_context(0)


@case("streams.pointer_classify.level_zero", profile="streams",
      covers=["STREAMS-POINTER-CLASSIFY-4", "STREAMS-POINTER-CLASSIFY-5", "STREAMS-POINTER-CLASSIFY-6",
              "STREAMS-POINTER-CLASSIFY-8", "STREAMS-POINTER-CLASSIFY-9", "STREAMS-POINTER-CLASSIFY-10",
              "STREAMS-POINTER-CLASSIFY-13", "STREAMS-LEVEL-ZERO-CONTEXT-SET-DEVICES-4",
              "STREAMS-LEVEL-ZERO-CONTEXT-SET-DEVICES-5"])
def _(ctx):
    cu, hp, ze = setup()
    A, N, U = H(ctx, "ALWAYS"), H(ctx, "NEVER"), H(ctx, "UNKNOWN")
    ALL = B_CUDA | B_HIP | B_ZE
    ctx.ok(ctx.f.dlpack_level_zero_context_set(None))
    # no context: Level Zero (loaded here by the suite) is unreachable: UNKNOWN
    reset_all()
    st, info, _, _ = classify(ctx, allocation("ze_dev2"))
    ctx.ok(st)
    ctx.check(summary(info) == (M(ctx, "UNKNOWN"), U, (0, 0), 0, B_CUDA | B_HIP, B_ZE, 0, 0),
              f"no context: {summary(info)}")
    ctx.check(ze.count("zeMemGetAllocProperties") == 0, "Level Zero asked with no context")
    # an explicit context, no list: ids not established
    rows = [("ze_host", 7, "PINNED_HOST", A, (14, 0), 0, 0), ("ze_dev2", 0, "DEVICE", N, (14, 0), DEV_A2, 0),
            ("ze_shared0", C.PAGE, "MANAGED", A, (14, 0), DEV_A0, 0)]
    for name, off, cls, ha, dev, nat, known in rows:
        reset_all()
        st, info, _, _ = classify(ctx, allocation(name) + off, CTX_A)
        ctx.ok(st, what=name)
        want = (M(ctx, cls), ha, dev, nat, ALL, 0, B_ZE, known)
        ctx.check(summary(info) == want, f"{name} in context A: {summary(info)}, expected {want}")
        ctx.check(ze.last("zeMemGetAllocProperties") == (CTX_A, allocation(name) + off), f"{name}: not asked in context A")
    # not in the context asked in: UNKNOWN (asked in one context only)
    st, info, _, _ = classify(ctx, allocation("ze_b"), CTX_A)
    ctx.check(summary(info) == (M(ctx, "UNKNOWN"), U, (0, 0), 0, ALL, 0, 0, 0), f"not in context: {summary(info)}")
    # a device list for context A: ids from the list, sub-devices through their root, NULL never matches
    st, arr = set_devices(ctx, CTX_A, [None, DEV_A0, DEV_A2, DEV_A0])
    ctx.ok(st)
    arr[2] = 0xBAD  # the registration keeps its own copy
    for name, dev, known in (("ze_dev2", (14, 2), 1), ("ze_shared0", (14, 1), 1), ("ze_sub", (14, 1), 1),
                             ("ze_other", (14, 0), 0), ("ze_host", (14, 0), 0)):
        for zc in (None, CTX_A):
            reset_all()
            st, info, _, _ = classify(ctx, allocation(name), zc)
            ctx.ok(st, what=name)
            got = (summary(info)[2], summary(info)[7])
            ctx.check(got == (dev, known), f"{name} (context {zc}): device/known {got}, expected {(dev, known)}")
            ctx.check(ze.last("zeMemGetAllocProperties")[0] == CTX_A, f"{name}: not asked in the registered context")
            ctx.check(ze.count("zeDeviceGetRootDevice") <= 1, f"{name}: root asked {ze.count('zeDeviceGetRootDevice')} times")
    # an explicit other context: the registered list does not apply there
    st, info, _, _ = classify(ctx, allocation("ze_b"), CTX_B)
    ctx.check(summary(info)[2] == (14, 0) and summary(info)[7] == 0, f"context B used A's list: {summary(info)}")
    ctx.check(ze.last("zeMemGetAllocProperties")[0] == CTX_B, "the explicit context was not asked")
    # failures: the call fails, or an unlisted memory type
    for name, code in (("ze_odd", 0), ("ze_dev2", 0x78000001)):
        reset_all()
        if code:
            ze.fail("zeMemGetAllocProperties", code)
        st, info, before, after = classify(ctx, allocation(name), CTX_A)
        ze.fail("zeMemGetAllocProperties", 0)
        ctx.expect(st, "DEVICE_ERROR", what=f"{name} {code:#x}")
        ctx.check(b"zeMemGetAllocProperties" in ctx.last_error(), "the message does not name the call")
        ctx.check(before == after, "out_info written on failure")
    ctx.ok(ctx.f.dlpack_level_zero_context_set(None))


@case("streams.pointer_classify.arguments_and_struct_size", profile="streams",
      covers=["STREAMS-POINTER-CLASSIFY-1", "STREAMS-POINTER-CLASSIFY-11", "STREAMS-POINTER-CLASSIFY-14"])
def _(ctx):
    setup()
    full = ctypes.sizeof(ctx.T.dlpack_helpers_pointer_info)
    info = ctx.T.dlpack_helpers_pointer_info(full)
    ctx.expect(ctx.f.dlpack_pointer_classify(None, None, ctypes.byref(info)), "NULL_POINTER", what="NULL ptr")
    ctx.check(info.struct_size == full and info.memory_class == 0, "out_info written on failure")
    ctx.expect(ctx.f.dlpack_pointer_classify(allocation("cu_dev1"), None, None), "NULL_POINTER", what="NULL out_info")
    for size in range(0, 8):
        st, _, before, after = classify(ctx, allocation("cu_dev1"), size=size)
        ctx.expect(st, "INVALID_ARGUMENT", what=f"struct_size {size}")
        ctx.check(before == after, f"struct_size {size}: written on failure")
    _, ref, _, _ = classify(ctx, allocation("hip_dev1"))
    ref_bytes = C.bytes_of(ref)
    for size in list(range(8, full + 1)) + [full + 8, 4096]:
        # storage: max(size, full) bytes; bytes past min(size, full) must stay 0x5A
        n = min(size, full)
        st, info, before, after = classify(ctx, allocation("hip_dev1"), size=size)
        ctx.ok(st, what=f"struct_size {size}")
        last = max(e for f, e in FIELD_ENDS if e <= n)
        ctx.check(info.struct_size == last, f"struct_size {size}: set to {info.struct_size}, expected {last}")
        ctx.check(after[8:last] == ref_bytes[8:last] or last == 8, f"struct_size {size}: fields differ from the full answer")
        ctx.check(after[last:] == before[last:], f"struct_size {size}: bytes past the last field written")


# ---- dlpack_pointer_get_device ------------------------------------------------------------------

@case("streams.pointer_get_device.answers", profile="streams",
      covers=["STREAMS-POINTER-GET-DEVICE-1", "STREAMS-POINTER-GET-DEVICE-2", "STREAMS-POINTER-GET-DEVICE-3",
              "STREAMS-POINTER-GET-DEVICE-4", "STREAMS-POINTER-GET-DEVICE-5", "STREAMS-POINTER-GET-DEVICE-6"])
def _(ctx):
    cu, hp, ze = setup()
    ctx.ok(ctx.f.dlpack_level_zero_context_set(None))

    def get(ptr):
        d = ctx.T.DLDevice(0x5A5A, 0x5A5A)
        st = ctx.f.dlpack_pointer_get_device(ptr or None, ctypes.byref(d))
        return st, (d.device_type, d.device_id)

    for name, want in (("cu_dev1", (2, 1)), ("cu_host", (3, 0)), ("cu_managed", (13, 0)), ("hip_dev1", (10, 1)),
                       ("hip_host", (11, 0)), ("hip_managed", (10, 1))):
        st, d = get(allocation(name) + 1 if name.startswith("hip") else allocation(name))
        ctx.ok(st, what=name)
        ctx.check(d == want, f"{name}: {d}, expected {want}")
    for name, status in (("cu_neg", "DEVICE_ID_UNKNOWN"), ("ze_dev2", "DEVICE_UNKNOWN"), ("cu_odd", "DEVICE_ERROR")):
        st, d = get(allocation(name))
        ctx.expect(st, status, what=name)
        ctx.check(d == (0x5A5A, 0x5A5A), f"{name}: out_device written on failure")
    st, d = get(C.noaccess())
    ctx.expect(st, "DEVICE_UNKNOWN", what="unclaimed memory with Level Zero unreachable")
    ctx.check(len(ctx.last_error()) > 0, "no message")
    # the registered context only, with its list
    ctx.ok(ctx.f.dlpack_level_zero_context_set(CTX_A))
    st, d = get(allocation("ze_host"))
    ctx.expect(st, "DEVICE_ID_UNKNOWN", what="USM host memory")
    st, d = get(allocation("ze_dev2"))
    ctx.expect(st, "DEVICE_ID_UNKNOWN", what="USM device memory with no list")
    st, arr = set_devices(ctx, CTX_A, [DEV_A0, None, DEV_A2])
    st, d = get(allocation("ze_dev2"))
    ctx.ok(st, what="USM device memory named by the list")
    ctx.check(d == (14, 2), f"ze_dev2: {d}")
    ctx.check(ze.last("zeMemGetAllocProperties")[0] == CTX_A, "not asked in the registered context")
    ctx.expect(ctx.f.dlpack_pointer_get_device(None, ctypes.byref(ctx.T.DLDevice())), "NULL_POINTER", what="NULL ptr")
    ctx.expect(ctx.f.dlpack_pointer_get_device(allocation("cu_dev1"), None), "NULL_POINTER", what="NULL out")
    ctx.ok(ctx.f.dlpack_level_zero_context_set(None))


# ---- Level Zero registrations -----------------------------------------------------------------

@case("streams.level_zero_context_set.registration", profile="streams",
      covers=["STREAMS-LEVEL-ZERO-CONTEXT-SET-1", "STREAMS-LEVEL-ZERO-CONTEXT-SET-2", "STREAMS-LEVEL-ZERO-CONTEXT-SET-3"])
def _(ctx):
    cu, hp, ze = setup()
    with no_runtime_calls(ctx, "dlpack_level_zero_context_set"):
        for v in (C.noaccess(), 1, (1 << 64) - 1, CTX_B, None, CTX_A):
            ctx.ok(ctx.f.dlpack_level_zero_context_set(v), what=f"context {v}")
    ctx.ok(set_devices(ctx, CTX_A, [DEV_A0, DEV_A2])[0])
    ctx.ok(ctx.f.dlpack_level_zero_context_set(CTX_A))  # the list is dropped
    st, info, _, _ = classify(ctx, allocation("ze_dev2"))
    ctx.check(summary(info)[2] == (14, 0) and summary(info)[7] == 0, f"the list survived: {summary(info)}")
    ctx.check(ze.last("zeMemGetAllocProperties")[0] == CTX_A, "the registered context was not asked")
    ctx.ok(ctx.f.dlpack_level_zero_context_set(CTX_B))
    st, info, _, _ = classify(ctx, allocation("ze_b"))
    ctx.check(ze.last("zeMemGetAllocProperties")[0] == CTX_B and summary(info)[0] == M(ctx, "DEVICE"), "context B not used")
    ctx.ok(ctx.f.dlpack_level_zero_context_set(None))
    reset_all()
    st, info, _, _ = classify(ctx, allocation("ze_b"))
    ctx.check(ze.count("zeMemGetAllocProperties") == 0, "Level Zero asked after the registration was cleared")


@case("streams.level_zero_context_set_devices.rules", profile="streams",
      covers=["STREAMS-LEVEL-ZERO-CONTEXT-SET-DEVICES-1", "STREAMS-LEVEL-ZERO-CONTEXT-SET-DEVICES-2",
              "STREAMS-LEVEL-ZERO-CONTEXT-SET-DEVICES-3", "STREAMS-LEVEL-ZERO-CONTEXT-SET-DEVICES-6",
              "STREAMS-LEVEL-ZERO-CONTEXT-SET-DEVICES-7"])
def _(ctx):
    cu, hp, ze = setup()
    f = ctx.f.dlpack_level_zero_context_set_devices
    bad = C.noaccess()
    vp = lambda a: ctypes.cast(a, ctypes.POINTER(ctypes.c_void_p)) if a else None
    with no_runtime_calls(ctx, "dlpack_level_zero_context_set_devices"):
        ctx.ok(set_devices(ctx, CTX_A, [DEV_A0, bad, DEV_A2])[0], what="a list with unreadable handles")
        for zc, devs, n in ((CTX_B, bad, 4097), (None, None, 4097), (CTX_B, None, 1 << 40), (None, bad, (1 << 64) - 1)):
            ctx.expect(f(zc, vp(devs), n), "INVALID_ARGUMENT", what=f"num_devices {n}")
        for zc in (CTX_B, None):
            ctx.expect(f(zc, None, 3), "NULL_POINTER", what=f"NULL devices, context {zc}")
        ok_max = (ctypes.c_void_p * 4096)()
        ctx.ok(f(CTX_C, ok_max, 4096), what="4096 devices")
        ctx.ok(set_devices(ctx, CTX_A, [None, DEV_A0, DEV_A2])[0])
    # the failures above kept the registration: context A with its list
    st, info, _, _ = classify(ctx, allocation("ze_dev2"))
    for zc, devs, n in ((CTX_B, None, 4097), (CTX_B, None, 2)):
        f(zc, vp(devs), n)
    st, info, _, _ = classify(ctx, allocation("ze_dev2"))
    ctx.check(summary(info)[2] == (14, 2) and summary(info)[7] == 1, f"a failed call changed the registration: {summary(info)}")
    ctx.ok(f(None, vp(bad), 5), what="NULL context clears without reading devices")
    reset_all()
    classify(ctx, allocation("ze_dev2"))
    ctx.check(ze.count("zeMemGetAllocProperties") == 0, "the registration was not cleared")
    ctx.ok(f(CTX_A, None, 0), what="an empty list")
    st, info, _, _ = classify(ctx, allocation("ze_dev2"))
    ctx.check(summary(info)[2] == (14, 0) and summary(info)[7] == 0, f"empty list: {summary(info)}")
    ctx.ok(ctx.f.dlpack_level_zero_context_set(None))


@case("streams.level_zero_context_set.concurrent_queries", profile="streams",
      covers=["STREAMS-LEVEL-ZERO-CONTEXT-SET-4", "STREAMS-LEVEL-ZERO-CONTEXT-SET-DEVICES-8"], timeout=60)
def _(ctx):
    setup()
    # ze_dev2's address is DEV_A2 in context A and DEV_B1 in context B: registration A (list
    # [DEV_A2]) answers (14, 0) known, B (list [0, DEV_B1]) (14, 1) known; any mix answers unknown.
    arr_a = (ctypes.c_void_p * 1)(DEV_A2)
    arr_b = (ctypes.c_void_p * 2)(None, DEV_B1)
    stop = threading.Event()
    bad = []
    ptr = allocation("ze_dev2")

    def flip():
        i = 0
        while not stop.is_set():
            if i % 3 == 2:
                ctx.f.dlpack_level_zero_context_set(CTX_A)  # context A with no list: (14, 0) unknown
                ctx.f.dlpack_level_zero_context_set_devices(CTX_A, arr_a, 1)
            elif i % 2:
                ctx.f.dlpack_level_zero_context_set_devices(CTX_A, arr_a, 1)
            else:
                ctx.f.dlpack_level_zero_context_set_devices(CTX_B, arr_b, 2)
            i += 1

    ctx.f.dlpack_level_zero_context_set_devices(CTX_A, arr_a, 1)
    t = threading.Thread(target=flip)
    t.start()
    try:
        for _ in range(3000):
            info = ctx.T.dlpack_helpers_pointer_info(ctypes.sizeof(ctx.T.dlpack_helpers_pointer_info))
            st = ctx.f.dlpack_pointer_classify(ptr, None, ctypes.byref(info))
            got = (st, info.device.device_type, info.device.device_id, info.device_id_known, info.native_device or 0)
            if got not in ((0, 14, 0, 1, DEV_A2), (0, 14, 1, 1, DEV_B1), (0, 14, 0, 0, DEV_A2)):
                bad.append(got)
    finally:
        stop.set()
        t.join()
    ctx.f.dlpack_level_zero_context_set(None)
    ctx.check(not bad, f"{len(bad)} queries saw a mixed registration, e.g. {bad[:3]}")


# ---- host access ----------------------------------------------------------------------------------

def dlt_image(ctx, dev, data):
    d = ctx.T.DLTensor()
    d.data, d.device = data or None, ctx.T.DLDevice(*dev)
    d.ndim = 1
    return C.bytes_of(d)


def host_access_all(ctx, dev, data, zc):
    """The answers of the three functions for one (device, data, context): [(status, out)...];
    each tensor is read-only with only the fields the page allows readable."""
    res = []
    out = ctypes.c_int(0x5A5A)
    # DLTensor: data (0..8) and device (8..16) readable, nothing past them
    addr = C.fenced(dlt_image(ctx, dev, data), hi=16)
    st = ctx.f.dlpack_dltensor_host_access(ctypes.cast(addr, ctypes.POINTER(ctx.T.DLTensor)), zc or None, ctypes.byref(out))
    res.append(("dltensor", st, out.value))
    # versioned major 1: version, then dl_tensor's data and device (bytes 32..48)
    v = ctx.T.DLManagedTensorVersioned()
    v.version = ctx.T.DLPackVersion(1, 3)
    img = bytearray(C.bytes_of(v))
    img[32:80] = dlt_image(ctx, dev, data)
    addr = C.fenced(bytes(img))
    before = ctypes.string_at(addr, len(img))
    out = ctypes.c_int(0x5A5A)
    st = ctx.f.dlpack_tensor_host_access(ctypes.cast(addr, ctypes.POINTER(ctx.T.DLManagedTensorVersioned)), zc or None,
                                         ctypes.byref(out))
    ctx.check(ctypes.string_at(addr, len(img)) == before, "dlpack_tensor_host_access modified the tensor")
    res.append(("versioned", st, out.value))
    # legacy: dl_tensor at 0
    img = bytearray(ctypes.sizeof(ctx.T.DLManagedTensor))
    img[0:48] = dlt_image(ctx, dev, data)
    addr = C.fenced(bytes(img))
    out = ctypes.c_int(0x5A5A)
    st = ctx.f.dlpack_legacy_tensor_host_access(ctypes.cast(addr, ctypes.POINTER(ctx.T.DLManagedTensor)), zc or None,
                                                ctypes.byref(out))
    res.append(("legacy", st, out.value))
    return res


@case("streams.dltensor_host_access.device_table", profile="streams",
      covers=["STREAMS-DLTENSOR-HOST-ACCESS-1", "STREAMS-DLTENSOR-HOST-ACCESS-2", "STREAMS-DLTENSOR-HOST-ACCESS-5",
              "STREAMS-TENSOR-HOST-ACCESS-3", "STREAMS-LEGACY-TENSOR-HOST-ACCESS-2"])
def _(ctx):
    setup()
    ctx.f.dlpack_level_zero_context_set(None)
    ctx.f.dlpack_device_host_access.restype = ctypes.c_int
    for dt in list(range(-2, 20)) + [99, 1 << 20]:
        table = ctx.f.dlpack_device_host_access(ctx.T.DLDevice(dt, 0))
        for data in (C.noaccess(), 0, allocation("cu_dev1"), allocation("ze_dev2")):
            with no_runtime_calls(ctx, f"host access of device type {dt}"):
                for fn, st, out in host_access_all(ctx, (dt, 0), data, None):
                    ctx.ok(st, what=f"{fn}, device type {dt}")
                    want = table if table in (H(ctx, "ALWAYS"), H(ctx, "NEVER")) else H(ctx, "UNKNOWN")
                    ctx.check(out == want, f"{fn}, device type {dt}, data {data:#x}: {out}, expected {want}")
    # kDLOneAPI with a context but NULL data: UNKNOWN, nothing asked
    with no_runtime_calls(ctx, "kDLOneAPI with NULL data"):
        for fn, st, out in host_access_all(ctx, (14, 0), 0, CTX_A):
            ctx.check(st == 0 and out == H(ctx, "UNKNOWN"), f"{fn}: NULL data: {st}/{out}")


@case("streams.dltensor_host_access.level_zero", profile="streams",
      covers=["STREAMS-DLTENSOR-HOST-ACCESS-3", "STREAMS-DLTENSOR-HOST-ACCESS-4", "STREAMS-DLTENSOR-HOST-ACCESS-5",
              "STREAMS-DLTENSOR-HOST-ACCESS-7", "STREAMS-TENSOR-HOST-ACCESS-3", "STREAMS-TENSOR-HOST-ACCESS-4",
              "STREAMS-LEGACY-TENSOR-HOST-ACCESS-2", "STREAMS-LEGACY-TENSOR-HOST-ACCESS-3"])
def _(ctx):
    cu, hp, ze = setup()
    A, N, U = H(ctx, "ALWAYS"), H(ctx, "NEVER"), H(ctx, "UNKNOWN")
    for registered, given in ((None, CTX_A), (CTX_A, None), (CTX_B, CTX_A)):
        ctx.f.dlpack_level_zero_context_set(registered)
        for name, want in (("ze_host", A), ("ze_dev2", N), ("ze_shared0", A), ("ze_b", U)):
            reset_all()
            for fn, st, out in host_access_all(ctx, (14, 1), allocation(name) + 3, given):
                ctx.ok(st, what=f"{fn} {name}")
                ctx.check(out == want, f"{fn}, {name}: {out}, expected {want}")
            n = ze.count("zeMemGetAllocProperties")
            ctx.check(n == 3, f"{name}: {n} Level Zero queries for three calls (one each)")
            ctx.check(ze.last("zeMemGetAllocProperties")[0] == CTX_A, f"{name}: asked in the wrong context")
            ctx.check(cu.count("cuPointerGetAttributes") == 0 and hp.count("hipPointerGetAttributes") == 0,
                      f"{name}: CUDA or HIP asked")
    for name, code in (("ze_odd", 0), ("ze_dev2", 0x78000001)):
        if code:
            ze.fail("zeMemGetAllocProperties", code)
        for fn, st, out in host_access_all(ctx, (14, 0), allocation(name), CTX_A):
            ctx.expect(st, "DEVICE_ERROR", what=f"{fn} {name}")
            ctx.check(b"zeMemGetAllocProperties" in ctx.last_error(), f"{fn}: the message does not name the call")
            ctx.check(out == 0x5A5A, f"{fn}: out_access written on failure")
        ze.fail("zeMemGetAllocProperties", 0)
    ctx.f.dlpack_level_zero_context_set(None)


@case("streams.tensor_host_access.arguments", profile="streams",
      covers=["STREAMS-DLTENSOR-HOST-ACCESS-6", "STREAMS-DLTENSOR-HOST-ACCESS-7", "STREAMS-TENSOR-HOST-ACCESS-1",
              "STREAMS-TENSOR-HOST-ACCESS-2", "STREAMS-TENSOR-HOST-ACCESS-4", "STREAMS-LEGACY-TENSOR-HOST-ACCESS-1",
              "STREAMS-LEGACY-TENSOR-HOST-ACCESS-3"])
def _(ctx):
    setup()
    out = ctypes.c_int(0x5A5A)
    p, rec = ctx.make_versioned(device=(14, 0))
    lp, lrec = ctx.make_legacy(device=(14, 0))
    d = ctx.make_dltensor()
    for fn, t in (("dlpack_dltensor_host_access", ctx.dptr(d)), ("dlpack_tensor_host_access", ctx.vptr(p)),
                  ("dlpack_legacy_tensor_host_access", ctx.lptr(lp))):
        ctx.expect(getattr(ctx.f, fn)(None, None, ctypes.byref(out)), "NULL_POINTER", what=f"{fn}: NULL tensor")
        ctx.expect(getattr(ctx.f, fn)(t, None, None), "NULL_POINTER", what=f"{fn}: NULL out")
        ctx.check(out.value == 0x5A5A, f"{fn}: out_access written on failure")
    ctx.check(ctx.calls(rec) == 0 and ctx.calls(lrec) == 0, "a deleter was called")
    # major != 1: only the version readable
    for ver in ((0, 5), (2, 0), (0, 0), (0xFFFFFFFF, 1)):
        v = ctx.T.DLManagedTensorVersioned()
        v.version = ctx.T.DLPackVersion(*ver)
        addr = C.fenced(C.bytes_of(v), hi=8)
        st = ctx.f.dlpack_tensor_host_access(ctypes.cast(addr, ctypes.POINTER(ctx.T.DLManagedTensorVersioned)), CTX_A,
                                             ctypes.byref(out))
        ctx.expect(st, "UNSUPPORTED_VERSION", what=f"version {ver}")
        ctx.check(out.value == 0x5A5A, f"version {ver}: out_access written on failure")
    ctx.f.dlpack_tensor_delete(ctx.vptr(p))
    ctx.f.dlpack_legacy_tensor_delete(ctx.lptr(lp))
