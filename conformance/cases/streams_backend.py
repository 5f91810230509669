"""Streams: registered stream backends (dlpack_stream_backend_register, _register_ex) and how
dlpack_stream_wait, dlpack_stream_synchronize, dlpack_stream_backend_check and
dlpack_tensor_delete_after_stream use them. Registrations last for the process, so this module
runs in a child of its own and each case registers device types no other case uses; the fake
runtimes are on the search path and counted (a registered type must not reach them).

kDLOneAPI (14) is registered here through _register_ex with a wait_handle; the module
streams_backend_limits registers it without one (a fresh process).
"""
import ctypes
import threading

from harness import build
from harness.registry import case

from cases import _common as C
from cases._backends import Backend
from cases._streams import fakes, no_runtime_calls, reset_all


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers()}


def kind(ctx, name):
    return getattr(ctx.K, "DLPACK_HELPERS_STREAM_" + name)


def stream(ctx, k, h=0):
    return ctx.T.dlpack_helpers_stream(kind(ctx, k) if isinstance(k, str) else k, h or None)


def register(ctx, dt, b):
    return ctx.f.dlpack_stream_backend_register(dt, ctypes.byref(b) if b is not None else None)


def register_ex(ctx, dt, b):
    if isinstance(b, int):
        b = ctypes.cast(b, ctypes.POINTER(ctx.T.dlpack_helpers_stream_backend_ex))
    elif b is not None:
        b = ctypes.byref(b)
    return ctx.f.dlpack_stream_backend_register_ex(dt, b)


def wait(ctx, dev, producer, consumer):
    return ctx.f.dlpack_stream_wait(ctx.T.DLDevice(*dev), producer or None, ctypes.byref(consumer))


def sync(ctx, dev, s):
    return ctx.f.dlpack_stream_synchronize(ctx.T.DLDevice(*dev), s or None)


@case("streams.stream_backend_register.serves_wait_and_synchronize", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-REGISTER-1", "STREAMS-STREAM-BACKEND-REGISTER-8",
              "STREAMS-STREAM-WAIT-8", "STREAMS-STREAM-SYNCHRONIZE-2", "STREAMS-STREAM-BACKEND-CHECK-9"])
def _(ctx):
    b = Backend()
    dt, cval = 4, 0xC0FFEE
    with no_runtime_calls(ctx, "a registered backend (kDLOpenCL)"):
        ctx.expect(ctx.f.dlpack_stream_backend_check(dt), "BACKEND_UNAVAILABLE", what="before registering")
        ctx.ok(register(ctx, dt, b.struct(ctx, cval)), what="register kDLOpenCL")
        ctx.check(b.take() == [], "the backend was called during registration")
        ctx.ok(ctx.f.dlpack_stream_backend_check(dt), what="check after registering")
        ctx.check(b.take() == [], "dlpack_stream_backend_check called the backend")
        ctx.ok(wait(ctx, (dt, 3), 0x10, stream(ctx, "HANDLE", 0x20)), what="wait")
        ctx.check(b.take() == [("wait", cval, 3, 0x10, 0x20)], "wait not called once with (ctx, 3, 0x10, 0x20)")
        ctx.ok(sync(ctx, (dt, 5), 0x30), what="synchronize")
        ctx.check(b.take() == [("synchronize", cval, 5, 0x30)], "synchronize not called once with (ctx, 5, 0x30)")
        b.result = 77
        ctx.expect(wait(ctx, (dt, 1), 0x10, stream(ctx, "HANDLE", 0x20)), "DEVICE_ERROR", what="wait returning 77")
        ctx.check(b"77" in ctx.last_error(), "the message does not carry the backend's 77")
        ctx.check(len(b.take()) == 1, "wait not called exactly once")
        b.result = 5
        ctx.expect(sync(ctx, (dt, 1), 0x30), "DEVICE_ERROR", what="synchronize returning 5")
        ctx.check(b"5" in ctx.last_error(), "the message does not carry the backend's 5")
        ctx.check(len(b.take()) == 1, "synchronize not called exactly once")
        b.result = 0
        # NO_SYNC and the same stream never reach the backend
        ctx.ok(wait(ctx, (dt, 0), 0x10, stream(ctx, "NO_SYNC", 0)), what="NO_SYNC")
        ctx.ok(wait(ctx, (dt, 0), 0x20, stream(ctx, "HANDLE", 0x20)), what="same stream")
        ctx.check(b.take() == [], "the backend was called for NO_SYNC or the same stream")


@case("streams.stream_backend_register.precedence", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-REGISTER-2", "STREAMS-STREAM-BACKEND-CHECK-9"])
def _(ctx):
    cu, hp, _ = fakes()
    for dt, sibling, rt in ((3, 2, cu), (11, 10, hp)):
        b = Backend()
        with no_runtime_calls(ctx, f"registering device type {dt}"):
            ctx.ok(register(ctx, dt, b.struct(ctx, dt)), what=f"register {dt}")
            ctx.ok(ctx.f.dlpack_stream_backend_check(dt), what=f"check {dt}")
            ctx.ok(wait(ctx, (dt, 0), 0x10, stream(ctx, "HANDLE", 0x20)), what=f"wait on {dt}")
            ctx.ok(sync(ctx, (dt, 0), 0x10), what=f"synchronize on {dt}")
        ctx.check([c[0] for c in b.take()] == ["wait", "synchronize"], f"device type {dt}: backend not used")
        reset_all()
        ctx.ok(wait(ctx, (sibling, 0), 0x10, stream(ctx, "HANDLE", 0x20)), what=f"wait on {sibling}")
        rec = "cuEventRecord" if rt is cu else "hipEventRecord"
        ctx.check(rt.count(rec) == 1, f"device type {sibling} no longer served by its built-in runtime")
        ctx.check(b.take() == [], f"the backend of {dt} served {sibling}")


@case("streams.stream_backend_register.copies_struct", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-REGISTER-3"])
def _(ctx):
    b, other = Backend(), Backend()
    s = b.struct(ctx, 0x1111)
    ctx.ok(register(ctx, 7, s), what="register kDLVulkan")
    s.ctx, s.wait, s.synchronize = 0x2222, other.addr(other.wait), other.addr(other.sync)
    ctx.ok(wait(ctx, (7, 0), 0x10, stream(ctx, "HANDLE", 0x20)), what="wait after the struct changed")
    ctx.ok(sync(ctx, (7, 0), 0x10), what="synchronize after the struct changed")
    ctx.check(other.take() == [], "the registration follows the caller's struct")
    got = b.take()
    ctx.check([c[:2] for c in got] == [("wait", 0x1111), ("synchronize", 0x1111)], f"calls {got}")
    # a struct in memory that is gone after the call
    b2 = Backend()
    addr = C.fenced(C.bytes_of(b2.struct(ctx, 0x3333)), readonly=True)
    ctx.ok(ctx.f.dlpack_stream_backend_register(8, ctypes.cast(addr, ctypes.POINTER(ctx.T.dlpack_helpers_stream_backend))),
           what="register kDLMetal from read-only memory")
    C.protect(addr, 24, C.PROT_NONE)
    ctx.ok(sync(ctx, (8, 0), 0x10), what="synchronize after the struct became unreadable")
    ctx.check(b2.take() == [("synchronize", 0x3333, 0, 0x10)], "not served by the copied registration")


@case("streams.stream_backend_register.refusals", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-REGISTER-4", "STREAMS-STREAM-BACKEND-REGISTER-5",
              "STREAMS-STREAM-BACKEND-REGISTER-6"])
def _(ctx):
    b = Backend()
    dt = 9
    ctx.expect(register(ctx, dt, None), "NULL_POINTER", what="NULL backend")
    ctx.expect(register(ctx, dt, ctx.T.dlpack_helpers_stream_backend(1, None, b.addr(b.sync))), "NULL_POINTER",
               what="NULL wait")
    ctx.expect(register(ctx, dt, ctx.T.dlpack_helpers_stream_backend(1, b.addr(b.wait), None)), "NULL_POINTER",
               what="NULL synchronize")
    ctx.expect(ctx.f.dlpack_stream_backend_check(dt), "BACKEND_UNAVAILABLE", what="refusals registered something")
    ctx.expect(register(ctx, 1, b.struct(ctx, 1)), "INVALID_ARGUMENT", what="kDLCPU")
    ctx.expect(ctx.f.dlpack_stream_backend_check(1), "BACKEND_UNAVAILABLE", what="kDLCPU after a refused register")
    ctx.ok(register(ctx, dt, b.struct(ctx, 0xAAAA)), what="first registration")
    second = Backend()
    ctx.expect(register(ctx, dt, second.struct(ctx, 0xBBBB)), "INVALID_ARGUMENT", what="second registration")
    ctx.expect(register_ex(ctx, dt, second.struct_ex(ctx, 0xBBBB)), "INVALID_ARGUMENT",
               what="second registration through _register_ex")
    ctx.ok(sync(ctx, (dt, 0), 0x10))
    ctx.check(b.take() == [("synchronize", 0xAAAA, 0, 0x10)] and second.take() == [], "the first registration changed")


@case("streams.stream_backend_register.concurrent_same_type", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-REGISTER-9"])
def _(ctx):
    ctx.f.dlpack_stream_backend_register  # a missing function skips (or fails) here, not in the threads
    n = 8
    for dt in (15, 16, 17):
        backends = [Backend() for _ in range(n)]
        structs = [b.struct(ctx, 0x100 + i) for i, b in enumerate(backends)]
        barrier = threading.Barrier(n)
        results = [None] * n

        def go(i):
            barrier.wait()
            results[i] = register(ctx, dt, structs[i])

        ts = [threading.Thread(target=go, args=(i,)) for i in range(n)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        wins = [i for i, r in enumerate(results) if r == ctx.S.OK]
        ctx.check(len(wins) == 1, f"device type {dt}: {len(wins)} concurrent registrations succeeded")
        ctx.check(all(r == ctx.S.INVALID_ARGUMENT for i, r in enumerate(results) if i not in wins),
                  f"device type {dt}: losers reported {results}")
        ctx.ok(sync(ctx, (dt, 0), 0x10))
        ctx.check([len(b.take()) for b in backends] == [1 if i in wins else 0 for i in range(n)],
                  f"device type {dt}: not served by the winner")


@case("streams.tensor_delete_after_stream.registered_backend", profile="streams",
      covers=["STREAMS-TENSOR-DELETE-AFTER-STREAM-4"])
def _(ctx):
    b = Backend()
    for dt in (18, 13):  # an OTHER type, and a CUDA type whose runtime is present
        ctx.ok(register(ctx, dt, b.struct(ctx, dt)), what=f"register {dt}")
        p, rec = ctx.make_versioned(device=(dt, 0))
        with no_runtime_calls(ctx, f"delete_after_stream on registered type {dt}"):
            ctx.expect(ctx.f.dlpack_tensor_delete_after_stream(ctx.vptr(p), ctx.T.DLDevice(dt, 0), 0x10),
                       "BACKEND_UNAVAILABLE", what=f"device type {dt} with a registered backend")
        ctx.check(ctx.calls(rec) == 0, f"device type {dt}: released though refused")
        ctx.check(b.take() == [], f"device type {dt}: the backend was called")
        ctx.f.dlpack_tensor_delete(ctx.vptr(p))


# ---- register_ex --------------------------------------------------------------------------------

@case("streams.stream_backend_register_ex.wait_handle", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-REGISTER-EX-4", "STREAMS-STREAM-BACKEND-REGISTER-EX-5",
              "STREAMS-STREAM-WAIT-6"])
def _(ctx):
    b = Backend()
    with no_runtime_calls(ctx, "a kDLOneAPI backend"):
        ctx.ok(register_ex(ctx, 14, b.struct_ex(ctx, 0xE14)), what="register_ex kDLOneAPI")
        ctx.check(b.take() == [], "called during registration")
        ctx.ok(ctx.f.dlpack_stream_backend_check(14), what="check kDLOneAPI")
        for k in ("SYCL_QUEUE", "ZE_COMMAND_QUEUE", "ZE_COMMAND_LIST"):
            h = C.noaccess()
            ctx.ok(wait(ctx, (14, 2), 0x10, stream(ctx, k, h)), what=k)
            ctx.check(b.take() == [("wait_handle", 0xE14, 2, 0x10, kind(ctx, k), h)], f"{k}: wait_handle not called once as specified")
            ctx.ok(wait(ctx, (14, 0), h, stream(ctx, k, h)), what=f"{k}, producer == consumer handle")
            ctx.check(len(b.take()) == 1, f"{k}: a same-stream shortcut skipped wait_handle")
        b.result = 3
        ctx.expect(wait(ctx, (14, 0), 0x10, stream(ctx, "SYCL_QUEUE", 0x99)), "DEVICE_ERROR", what="wait_handle returning 3")
        ctx.check(b"3" in ctx.last_error(), "the message lacks the returned value")
        b.take()
        b.result = 0
        ctx.ok(wait(ctx, (14, 1), 0x10, stream(ctx, "HANDLE", 0x20)), what="an integer stream on kDLOneAPI")
        ctx.ok(sync(ctx, (14, 1), 0x10), what="synchronize on kDLOneAPI")
        ctx.check([c[:3] for c in b.take()] == [("wait", 0xE14, 1), ("synchronize", 0xE14, 1)],
                  "wait/synchronize not registered as by dlpack_stream_backend_register")
        ctx.expect(register(ctx, 14, Backend().struct(ctx, 0)), "INVALID_ARGUMENT", what="kDLOneAPI again")
    ctx.expect(register_ex(ctx, 1, b.struct_ex(ctx, 0)), "INVALID_ARGUMENT", what="kDLCPU through _register_ex")
    bad = b.struct_ex(ctx, 0)
    bad.wait = None
    ctx.expect(register_ex(ctx, 19, bad), "NULL_POINTER", what="NULL wait through _register_ex")
    bad = b.struct_ex(ctx, 0)
    bad.synchronize = None
    ctx.expect(register_ex(ctx, 19, bad), "NULL_POINTER", what="NULL synchronize through _register_ex")


@case("streams.stream_backend_register_ex.struct_size", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-REGISTER-EX-1", "STREAMS-STREAM-BACKEND-REGISTER-EX-2"])
def _(ctx):
    b = Backend()
    ctx.expect(register_ex(ctx, 20, None), "NULL_POINTER", what="NULL backend")
    minimum = 32  # offsetof(synchronize) + sizeof(void *)
    for size in (0, 1, 8, 16, 24, 31):
        # only struct_size readable: reading any other field faults
        img = C.bytes_of(b.struct_ex(ctx, 0x5, size=size))
        addr = C.fenced(img, hi=8)
        ctx.expect(register_ex(ctx, 20, addr), "INVALID_ARGUMENT", what=f"struct_size {size}")
    ctx.expect(ctx.f.dlpack_stream_backend_check(20), "BACKEND_UNAVAILABLE", what="a refused struct registered")
    img = C.bytes_of(b.struct_ex(ctx, 0x6, size=minimum))
    ctx.ok(register_ex(ctx, 20, C.fenced(img, hi=minimum)), what="struct_size 32 with nothing readable past it")
    ctx.ok(sync(ctx, (20, 0), 0x10))
    ctx.check(b.take() == [("synchronize", 0x6, 0, 0x10)], "the 32-byte registration does not serve")
