"""Streams: the registration limit (at least 16 device types per process, then
INVALID_ARGUMENT from both register functions). A child of its own: registrations last for the
process and this case fills the table."""
import ctypes

from harness import build
from harness.registry import case

from cases._backends import Backend


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers()}


@case("streams.stream_backend_register.capacity", profile="streams", covers=["STREAMS-STREAM-BACKEND-REGISTER-7"])
def _(ctx):
    types = list(range(100, 140))
    results = []
    for dt in types:
        b = Backend()
        results.append(ctx.f.dlpack_stream_backend_register(dt, ctypes.byref(b.struct(ctx, dt))))
        if results[-1] != ctx.S.OK:
            break
    ok = sum(1 for r in results if r == ctx.S.OK)
    ctx.check(ok >= 16, f"only {ok} device types accepted in this process")
    if results[-1] != ctx.S.OK:
        ctx.expect(results[-1], "INVALID_ARGUMENT", what=f"registration number {ok + 1} (full)")
        b = Backend()
        ctx.expect(ctx.f.dlpack_stream_backend_register_ex(99999, ctypes.byref(b.struct_ex(ctx, 1))),
                   "INVALID_ARGUMENT", what="register_ex when full")
