"""Streams: a process with no device runtime at all (the library search path is an empty folder
and no override variable is set): every runtime is absent. Backend checks, waits,
synchronizations and deferred releases on the CUDA and ROCm families report
BACKEND_UNAVAILABLE with a message naming the runtime and the files tried; memory queries answer
confirmed host memory for every pointer; nothing crashes, aborts or prints.
"""
import ctypes

from harness.registry import case

from cases import _common as C
from cases._streams import empty_dir

NAMES = {2: b"libcuda", 3: b"libcuda", 13: b"libcuda", 10: b"libamdhip64", 11: b"libamdhip64"}


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": empty_dir(), "DLPACK_HELPERS_CUDA_LIBRARY": "", "DLPACK_HELPERS_HIP_LIBRARY": "",
            "DLPACK_HELPERS_LEVEL_ZERO_LIBRARY": ""}


def stream(ctx, k, h=0):
    return ctx.T.dlpack_helpers_stream(getattr(ctx.K, "DLPACK_HELPERS_STREAM_" + k), h or None)


@case("streams.stream_backend_check.no_runtime", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-CHECK-6", "STREAMS-STREAM-BACKEND-CHECK-10", "STREAMS-STREAM-BACKEND-CHECK-11"])
def _(ctx):
    for dt, stem in NAMES.items():
        for _ in range(2):
            ctx.expect(ctx.f.dlpack_stream_backend_check(dt), "BACKEND_UNAVAILABLE", what=f"device type {dt}")
            msg = ctx.last_error()
            ctx.check(stem in msg, f"device type {dt}: the message does not name the library tried: {msg!r}")
    for dt in (1, 14, 4, 7, 0, 99, -1):
        ctx.expect(ctx.f.dlpack_stream_backend_check(dt), "BACKEND_UNAVAILABLE", what=f"device type {dt}")
        ctx.check(len(ctx.last_error()) > 0, "no message")


@case("streams.stream_wait.runtime_absent", profile="streams",
      covers=["STREAMS-STREAM-WAIT-9", "STREAMS-STREAM-SYNCHRONIZE-4", "STREAMS-TENSOR-DELETE-AFTER-STREAM-5"])
def _(ctx):
    for dt, stem in NAMES.items():
        dev = ctx.T.DLDevice(dt, 0)
        ctx.expect(ctx.f.dlpack_stream_wait(dev, 0x10, ctypes.byref(stream(ctx, "HANDLE", 0x20))), "BACKEND_UNAVAILABLE",
                   what=f"wait on {dt}")
        ctx.check(stem in ctx.last_error(), f"wait on {dt}: the runtime's reason is missing")
        ctx.expect(ctx.f.dlpack_stream_synchronize(dev, 0x10), "BACKEND_UNAVAILABLE", what=f"synchronize on {dt}")
        ctx.check(stem in ctx.last_error(), f"synchronize on {dt}: the runtime's reason is missing")
        p, rec = ctx.make_versioned(device=(dt, 0))
        ctx.expect(ctx.f.dlpack_tensor_delete_after_stream(ctx.vptr(p), dev, 0x10), "BACKEND_UNAVAILABLE",
                   what=f"delete_after_stream on {dt}")
        ctx.check(ctx.calls(rec) == 0, f"device type {dt}: released though refused")
        ctx.f.dlpack_tensor_delete(ctx.vptr(p))
    # what needs no runtime still works
    ctx.ok(ctx.f.dlpack_stream_synchronize(ctx.T.DLDevice(1, 0), 0x10), what="kDLCPU")
    ctx.ok(ctx.f.dlpack_stream_wait(ctx.T.DLDevice(2, 0), 0x10, ctypes.byref(stream(ctx, "NO_SYNC"))), what="NO_SYNC")


@case("streams.pointer_classify.no_runtime_is_host", profile="streams",
      covers=["STREAMS-POINTER-CLASSIFY-7", "STREAMS-POINTER-GET-DEVICE-4", "STREAMS-DLTENSOR-HOST-ACCESS-2"])
def _(ctx):
    full = ctypes.sizeof(ctx.T.dlpack_helpers_pointer_info)
    for ptr in (C.noaccess(), 1, 0x7F0000001000, (1 << 64) - 1, ctypes.addressof(ctypes.c_int())):
        for zc in (None, 0xA000):
            info = ctx.T.dlpack_helpers_pointer_info(full)
            ctypes.memset(ctypes.addressof(info) + 8, 0x5A, full - 8)
            ctx.ok(ctx.f.dlpack_pointer_classify(ptr, zc, ctypes.byref(info)), what=f"{ptr:#x}")
            got = (info.memory_class, info.host_access, info.device.device_type, info.device.device_id,
                   info.native_device or 0, info.backends_asked, info.backends_unreachable, info.answered_by,
                   info.device_id_known)
            want = (ctx.K.DLPACK_HELPERS_MEMORY_HOST, ctx.K.DLPACK_HELPERS_HOST_ACCESS_ALWAYS, 1, 0, 0, 0, 0, 0, 1)
            ctx.check(got == want, f"{ptr:#x} (context {zc}): {got}, expected {want}")
        d = ctx.T.DLDevice(7, 7)
        ctx.ok(ctx.f.dlpack_pointer_get_device(ptr, ctypes.byref(d)), what=f"get_device {ptr:#x}")
        ctx.check((d.device_type, d.device_id) == (1, 0), f"get_device {ptr:#x}: {(d.device_type, d.device_id)}")
    # host access of kDLOneAPI memory with a context: the loader is absent, UNKNOWN
    t = ctx.T.DLTensor()
    t.data, t.device = C.noaccess(), ctx.T.DLDevice(14, 0)
    out = ctypes.c_int(0x5A)
    for zc in (0xA000, None):
        if zc is None:
            ctx.f.dlpack_level_zero_context_set(0xA000)
        ctx.ok(ctx.f.dlpack_dltensor_host_access(ctypes.byref(t), zc, ctypes.byref(out)), what="kDLOneAPI, no loader")
        ctx.check(out.value == ctx.K.DLPACK_HELPERS_HOST_ACCESS_UNKNOWN, f"kDLOneAPI, no loader: {out.value}")
    ctx.f.dlpack_level_zero_context_set(None)
