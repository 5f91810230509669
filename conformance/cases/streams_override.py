"""Streams: the override variables and a minimal runtime. DLPACK_HELPERS_CUDA_LIBRARY names a
build of the fake CUDA driver exporting only the required entry points (no cuEventQuery,
cuStreamGetCtx, cuGetErrorName); DLPACK_HELPERS_HIP_LIBRARY names a file that does not exist,
while the standard names on the search path would find working doubles: they must not be used."""
import ctypes
import os

from harness import build
from harness.registry import case

from cases._streams import CUDA_NAMES, CUDA_REQUIRED, HIP_NAMES, Fake, fake_variant, maps_mention

MISSING = "/nonexistent-dlpack-conformance/libamdhip64-missing.so"


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers(),
            "DLPACK_HELPERS_CUDA_LIBRARY": fake_variant("fake_cuda_min", "fake_cuda.c", CUDA_REQUIRED),
            "DLPACK_HELPERS_HIP_LIBRARY": MISSING}


def stream(ctx, k, h=0):
    return ctx.T.dlpack_helpers_stream(getattr(ctx.K, "DLPACK_HELPERS_STREAM_" + k), h or None)


@case("streams.stream_backend_check.override_and_minimal_runtime", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-CHECK-1", "STREAMS-STREAM-BACKEND-CHECK-3", "STREAMS-STREAM-BACKEND-CHECK-7",
              "STREAMS-STREAM-BACKEND-CHECK-6", "STREAMS-TENSOR-DELETE-AFTER-STREAM-5"])
def _(ctx):
    cu_path = os.environ["DLPACK_HELPERS_CUDA_LIBRARY"]
    ctx.ok(ctx.f.dlpack_stream_backend_check(2), what="CUDA through the override (required entry points only)")
    ctx.check(not maps_mention("libfake_cuda.so"), "the standard-name CUDA double was loaded despite the override")
    cu = Fake(cu_path, CUDA_NAMES)
    ctx.check(cu.count("cuInit") == 1, f"the override's cuInit called {cu.count('cuInit')} times")
    # a wait and a synchronization work without the optional entry points
    ctx.ok(ctx.f.dlpack_stream_wait(ctx.T.DLDevice(2, 0), 0x10, ctypes.byref(stream(ctx, "HANDLE", 0x20))), what="wait")
    ctx.check(cu.count("cuEventRecord") == 1 and cu.count("cuStreamWaitEvent") == 1, "the override did not serve the wait")
    ctx.ok(ctx.f.dlpack_stream_synchronize(ctx.T.DLDevice(13, 0), 0x30), what="synchronize kDLCUDAManaged")
    cu.fail("cuEventRecord", 700)
    ctx.expect(ctx.f.dlpack_stream_wait(ctx.T.DLDevice(2, 0), 0x10, ctypes.byref(stream(ctx, "HANDLE", 0x20))),
               "DEVICE_ERROR", what="cuEventRecord failing without cuGetErrorName")
    cu.fail("cuEventRecord", 0)
    ctx.check(b"700" in ctx.last_error(), "without cuGetErrorName the message lacks the code")
    # no cuStreamGetCtx: kDLCUDAHost runs in the thread's current context, else device 0's primary
    cu.lib.fake_set_stream_context.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    cu.lib.fake_set_stream_context(ctypes.c_void_p(0x7340), ctypes.c_void_p(0x5151000))
    prim = ctypes.c_void_p()
    cu.lib.cuDevicePrimaryCtxRetain(ctypes.byref(prim), 0)
    cu.lib.fake_last.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]
    cu.lib.fake_reset_counts()
    # the double refuses an event of another context on the stream: record on a stream without one
    ctx.ok(ctx.f.dlpack_stream_wait(ctx.T.DLDevice(3, 0), 0x7350, ctypes.byref(stream(ctx, "HANDLE", 0x20))),
           what="kDLCUDAHost without cuStreamGetCtx")
    ctx.check(cu.last("cuCtxPushCurrent_v2")[0] == prim.value, "without cuStreamGetCtx: not device 0's primary context")
    # no cuEventQuery: deferred releases are unavailable, the tensor stays
    p, rec = ctx.make_versioned(device=(2, 0))
    ctx.expect(ctx.f.dlpack_tensor_delete_after_stream(ctx.vptr(p), ctx.T.DLDevice(2, 0), 0x10), "BACKEND_UNAVAILABLE",
               what="delete_after_stream without cuEventQuery")
    ctx.check(ctx.calls(rec) == 0, "released though refused")
    ctx.f.dlpack_tensor_delete(ctx.vptr(p))
    # HIP: the override names a missing file; the working double under the standard name is not used
    for _ in range(2):
        ctx.expect(ctx.f.dlpack_stream_backend_check(10), "BACKEND_UNAVAILABLE", what="HIP override missing")
        ctx.check(MISSING.encode() in ctx.last_error(), f"the message does not name the override: {ctx.last_error()!r}")
    hp = Fake("libamdhip64.so", HIP_NAMES)  # the application loads a HIP runtime itself
    ctx.expect(ctx.f.dlpack_stream_backend_check(10), "BACKEND_UNAVAILABLE", what="HIP after the application loaded one")
    ctx.expect(ctx.f.dlpack_stream_synchronize(ctx.T.DLDevice(10, 0), 0x10), "BACKEND_UNAVAILABLE", what="HIP synchronize")
    ctx.check(hp.count("hipInit") == 0 and hp.count("hipStreamSynchronize") == 0, "the standard-name HIP double was used")
