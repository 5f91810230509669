"""Streams: runtimes that cannot be used: a CUDA driver (named by its override) lacking the
required cuStreamSynchronize, and a HIP runtime whose hipInit fails (FAKE_HIP_INIT_ERROR). Both
stay unavailable for the process; the initialization runs only once the entry points resolved,
and never again after it failed."""
import ctypes

from harness import build
from harness.registry import case

from cases._streams import CUDA_NAMES, CUDA_REQUIRED, HIP_NAMES, Fake, fake_variant


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers(),
            "DLPACK_HELPERS_CUDA_LIBRARY": fake_variant("fake_cuda_nosync", "fake_cuda.c",
                                                        [n for n in CUDA_REQUIRED if n != "cuStreamSynchronize"]),
            "DLPACK_HELPERS_HIP_LIBRARY": "", "FAKE_HIP_INIT_ERROR": "100"}


@case("streams.stream_backend_check.unusable_runtimes", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-CHECK-6", "STREAMS-STREAM-BACKEND-CHECK-7", "STREAMS-STREAM-BACKEND-CHECK-4"])
def _(ctx):
    import os
    cu = Fake(os.environ["DLPACK_HELPERS_CUDA_LIBRARY"], CUDA_NAMES)
    for i in range(3):
        ctx.expect(ctx.f.dlpack_stream_backend_check(2), "BACKEND_UNAVAILABLE", what=f"CUDA lacking an entry point ({i})")
        ctx.check(b"cuStreamSynchronize" in ctx.last_error(), f"the message does not name the missing entry point: {ctx.last_error()!r}")
    st = ctx.f.dlpack_stream_wait(ctx.T.DLDevice(2, 0), 0x10,
                                  ctypes.byref(ctx.T.dlpack_helpers_stream(ctx.K.DLPACK_HELPERS_STREAM_HANDLE, 0x20)))
    ctx.expect(st, "BACKEND_UNAVAILABLE", what="wait with the incomplete driver")
    ctx.check(cu.count("cuInit") == 0, "cuInit called though a required entry point is missing")
    hp = Fake("libamdhip64.so", HIP_NAMES)
    for i in range(3):
        ctx.expect(ctx.f.dlpack_stream_backend_check(10), "BACKEND_UNAVAILABLE", what=f"hipInit failing ({i})")
        ctx.check(b"100" in ctx.last_error(), f"the message lacks the initialization's error: {ctx.last_error()!r}")
    ctx.expect(ctx.f.dlpack_stream_synchronize(ctx.T.DLDevice(11, 0), 0x10), "BACKEND_UNAVAILABLE", what="HIP synchronize")
    ctx.check(hp.count("hipInit") == 1, f"hipInit called {hp.count('hipInit')} times (once, never again after failing)")
