"""Streams: the primary context of a CUDA device is retained at most once per device per
process, and a failed retain is retried by a later call (STREAMS-STREAM-WAIT-14). A child of its
own: the count is per process, and no other case may retain first."""
import ctypes

from harness import build
from harness.registry import case

from cases._streams import fakes


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers(), "DLPACK_HELPERS_CUDA_LIBRARY": ""}


@case("streams.stream_wait.cuda_primary_context_retained_once", profile="streams", covers=["STREAMS-STREAM-WAIT-14"])
def _(ctx):
    cu = fakes()[0]
    cons = ctx.T.dlpack_helpers_stream(ctx.K.DLPACK_HELPERS_STREAM_HANDLE, 0x6000)

    def wait(dev):
        return ctx.f.dlpack_stream_wait(ctx.T.DLDevice(2, dev), 0x5000, ctypes.byref(cons))

    cu.lib.fake_reset_counts()
    cu.fail("cuDevicePrimaryCtxRetain", 101)
    ctx.expect(wait(1), "DEVICE_ERROR", what="retain failing")
    ctx.check(b"cuDevicePrimaryCtxRetain" in ctx.last_error(), "the message does not name the retain")
    cu.fail("cuDevicePrimaryCtxRetain", 0)
    failed = cu.count("cuDevicePrimaryCtxRetain")
    ctx.check(failed >= 1, "the retain was never asked")
    for _ in range(5):
        ctx.ok(wait(1), what="device 1 after the failed retain")
    ctx.check(cu.count("cuDevicePrimaryCtxRetain") == failed + 1,
              f"device 1: {cu.count('cuDevicePrimaryCtxRetain') - failed} retains after the failure (1 expected)")
    ctx.check(cu.count("cuDeviceGet") >= 1, "cuDeviceGet never asked for the device")
    for _ in range(5):
        ctx.ok(wait(0), what="device 0")
        ctx.ok(ctx.f.dlpack_stream_synchronize(ctx.T.DLDevice(2, 0), 0x5000), what="synchronize device 0")
    ctx.check(cu.count("cuDevicePrimaryCtxRetain") == failed + 2,
              f"{cu.count('cuDevicePrimaryCtxRetain') - failed} retains for two devices (2 expected)")
