"""Streams: a dlpack_stream_backend_register_ex struct that ends before wait_handle
(kDLOneAPI registered without one: queue-object waits are then BACKEND_UNAVAILABLE). A child of
its own: registrations last for the process."""
import ctypes

from harness import build
from harness.registry import case

from cases import _common as C
from cases._backends import Backend
from cases._streams import no_runtime_calls


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers()}


@case("streams.stream_backend_register_ex.short_struct_no_wait_handle", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-REGISTER-EX-3", "STREAMS-STREAM-BACKEND-REGISTER-EX-5"])
def _(ctx):
    b = Backend()
    s = b.struct_ex(ctx, 0x77, size=32)  # wait_handle set in memory, but past struct_size...
    img = C.bytes_of(s)[:32]             # ...and in fact in a guard page: reading it faults
    addr = C.fenced(img, hi=32)
    st = ctx.f.dlpack_stream_backend_register_ex(14, ctypes.cast(addr, ctypes.POINTER(ctx.T.dlpack_helpers_stream_backend_ex)))
    ctx.ok(st, what="register_ex kDLOneAPI with struct_size 32")
    with no_runtime_calls(ctx, "kDLOneAPI without wait_handle"):
        for k in ("SYCL_QUEUE", "ZE_COMMAND_QUEUE", "ZE_COMMAND_LIST"):
            cons = ctx.T.dlpack_helpers_stream(getattr(ctx.K, "DLPACK_HELPERS_STREAM_" + k), 0x99)
            ctx.expect(ctx.f.dlpack_stream_wait(ctx.T.DLDevice(14, 0), 0x10, ctypes.byref(cons)),
                       "BACKEND_UNAVAILABLE", what=f"{k} with no wait_handle")
        cons = ctx.T.dlpack_helpers_stream(ctx.K.DLPACK_HELPERS_STREAM_HANDLE, 0x99)
        ctx.ok(ctx.f.dlpack_stream_wait(ctx.T.DLDevice(14, 0), 0x10, ctypes.byref(cons)), what="integer stream")
    ctx.check([c[0] for c in b.take()] == ["wait"], "wait not served by the short registration")
    # a full-size struct whose wait_handle is NULL behaves the same
    b2 = Backend()
    ctx.ok(ctx.f.dlpack_stream_backend_register_ex(21, ctypes.byref(b2.struct_ex(ctx, 0x78, with_handle=False))))
