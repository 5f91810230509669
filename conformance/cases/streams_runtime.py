"""Streams: dlpack_stream_wait, dlpack_stream_synchronize and dlpack_tensor_delete_after_stream
against the fake CUDA driver and HIP runtime (tests-c/fake/), first on LD_LIBRARY_PATH: the
exact runtime calls (counted, with their handle arguments), the context and current-device
rules, the event pool, failures injected into each call, and deferred releases held back by the
doubles' stream gates (never by sleeping: a release is awaited as a condition, and "not yet" is
asserted only after the implementation has queried the event and been told "not ready").
"""
import ctypes
import threading
import time

from harness import build
from harness.registry import case

from cases import _common as C
from cases._streams import fakes, no_runtime_calls, reset_all


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers()}


def kind(ctx, name):
    return getattr(ctx.K, "DLPACK_HELPERS_STREAM_" + name)


def stream(ctx, k, h=0):
    return ctx.T.dlpack_helpers_stream(kind(ctx, k) if isinstance(k, str) else k, h or None)


def wait(ctx, dev, producer, consumer):
    return ctx.f.dlpack_stream_wait(ctx.T.DLDevice(*dev), producer or None,
                                    ctypes.byref(consumer) if consumer is not None else None)


def sync(ctx, dev, s):
    return ctx.f.dlpack_stream_synchronize(ctx.T.DLDevice(*dev), s or None)


def cu_current():
    cu = fakes()[0].lib
    c = ctypes.c_void_p()
    cu.cuCtxGetCurrent(ctypes.byref(c))
    return c.value or 0


def cu_primary(dev):
    cu = fakes()[0].lib
    c = ctypes.c_void_p()
    cu.cuInit(0)
    cu.cuDevicePrimaryCtxRetain(ctypes.byref(c), dev)
    return c.value


def hip_device():
    d = ctypes.c_int(-1)
    fakes()[1].lib.hipGetDevice(ctypes.byref(d))
    return d.value


def until(cond, what="", limit=20.0):
    """Wait for a condition another thread makes true (bounded: a hang is a failure)."""
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.0005)
    return True


SYNCS_CU = ("cuStreamSynchronize",)
SYNCS_HIP = ("hipStreamSynchronize",)


# ---- dlpack_stream_wait: argument rules -------------------------------------------------------

@case("streams.stream_wait.arguments", profile="streams",
      covers=["STREAMS-STREAM-WAIT-1", "STREAMS-STREAM-WAIT-2", "STREAMS-STREAM-WAIT-3", "STREAMS-STREAM-WAIT-5"])
def _(ctx):
    h = C.noaccess()
    with no_runtime_calls(ctx, "dlpack_stream_wait refusals"):
        for dt in (1, 2, 3, 10, 14, 4):
            for k in ("HANDLE", "NO_SYNC", "SYCL_QUEUE"):
                ctx.expect(wait(ctx, (dt, -1), 5, stream(ctx, k, h)), "INVALID_DEVICE", what=f"({dt}, -1) {k}")
            ctx.expect(wait(ctx, (dt, -2), 5, None), "INVALID_DEVICE", what=f"({dt}, -2), NULL consumer")
            ctx.expect(wait(ctx, (dt, 0), 5, None), "NULL_POINTER", what=f"device {dt}, NULL consumer")
            for k in (9, 100, -1):
                ctx.expect(wait(ctx, (dt, 0), 5, stream(ctx, k, 7)), "INVALID_ARGUMENT", what=f"device {dt}, kind {k}")
        for dt in (1, 2, 3, 13, 10, 11, 4, 99):
            for k in ("SYCL_QUEUE", "ZE_COMMAND_QUEUE", "ZE_COMMAND_LIST"):
                ctx.expect(wait(ctx, (dt, 0), 5, stream(ctx, k, h)), "INVALID_STREAM_TYPE", what=f"{k} on {dt}")
        for k in ("SYCL_QUEUE", "ZE_COMMAND_QUEUE", "ZE_COMMAND_LIST"):
            ctx.expect(wait(ctx, (14, 0), 5, stream(ctx, k, 0)), "INVALID_STREAM", what=f"{k} with a NULL handle")


@case("streams.stream_wait.no_sync_kinds", profile="streams", covers=["STREAMS-STREAM-WAIT-4"])
def _(ctx):
    with no_runtime_calls(ctx, "dlpack_stream_wait with NO_SYNC/NONE"):
        for dt in (1, 2, 3, 13, 10, 11, 14, 4, 99):
            for k in ("NO_SYNC", "NONE"):
                for prod in (0, 1, 2, 0x1234):
                    ctx.ok(wait(ctx, (dt, 0), prod, stream(ctx, k, 0)), what=f"device {dt}, {k}, producer {prod:#x}")


@case("streams.stream_wait.same_stream", profile="streams", covers=["STREAMS-STREAM-WAIT-7"])
def _(ctx):
    rows = [((2, 0), 0, "LEGACY_DEFAULT", 1), ((2, 1), 1, "LEGACY_DEFAULT", 1), ((2, 0), 2, "PER_THREAD_DEFAULT", 2),
            ((2, 0), 0x5000, "HANDLE", 0x5000), ((3, 0), 0, "LEGACY_DEFAULT", 1), ((13, 0), 0x77, "HANDLE", 0x77),
            ((10, 0), 0, "DEFAULT", 0), ((10, 1), 0x5000, "HANDLE", 0x5000), ((11, 0), 0, "DEFAULT", 0),
            ((2, 0), 0, "LEGACY_DEFAULT", 0), ((2, 0), 1, "LEGACY_DEFAULT", 0)]
    with no_runtime_calls(ctx, "dlpack_stream_wait on the same stream"):
        for dev, prod, k, h in rows:
            ctx.ok(wait(ctx, dev, prod, stream(ctx, k, h)), what=f"{dev}: producer {prod:#x}, consumer {k} {h:#x}")


@case("streams.stream_wait.no_backend", profile="streams", covers=["STREAMS-STREAM-WAIT-9", "STREAMS-STREAM-WAIT-6"])
def _(ctx):
    with no_runtime_calls(ctx, "dlpack_stream_wait without a backend"):
        for dt in (1, 4, 7, 14, 99):
            for k, h in (("HANDLE", 0x5000), ("DEFAULT", 0)):
                ctx.expect(wait(ctx, (dt, 0), 0x6000, stream(ctx, k, h)), "BACKEND_UNAVAILABLE", what=f"{dt} {k}")
                ctx.check(ctx.last_error() != b"", "no message")
        for k in ("SYCL_QUEUE", "ZE_COMMAND_QUEUE", "ZE_COMMAND_LIST"):
            ctx.expect(wait(ctx, (14, 0), 0x6000, stream(ctx, k, 0x7000)), "BACKEND_UNAVAILABLE",
                       what=f"{k} with no kDLOneAPI backend")


# ---- dlpack_stream_wait: CUDA -----------------------------------------------------------------

@case("streams.stream_wait.cuda_event_record_then_wait", profile="streams",
      covers=["STREAMS-STREAM-WAIT-10", "STREAMS-STREAM-WAIT-12", "STREAMS-STREAM-WAIT-14", "STREAMS-STREAM-WAIT-17"])
def _(ctx):
    cu = fakes()[0]
    before = cu_current()
    for dev, prod, k, h in (((2, 0), 0x5000, "HANDLE", 0x6000), ((2, 1), 0, "HANDLE", 0x6000),
                            ((2, 0), 0x5000, "LEGACY_DEFAULT", 1), ((2, 1), 1, "PER_THREAD_DEFAULT", 2),
                            ((2, 0), 2, "LEGACY_DEFAULT", 0)):
        reset_all()
        where = f"{dev}: producer {prod:#x} -> consumer {k} {h:#x}"
        ctx.ok(wait(ctx, dev, prod, stream(ctx, k, h)), what=where)
        n = cu.counts()
        ctx.check(n["cuEventRecord"] == 1 and n["cuStreamWaitEvent"] == 1,
                  f"{where}: {n['cuEventRecord']} records, {n['cuStreamWaitEvent']} waits (one each expected)")
        ev_r, s_r = cu.last("cuEventRecord")
        s_w, ev_w = cu.last("cuStreamWaitEvent")
        ctx.check(ev_r == ev_w and ev_r, f"{where}: recorded and waited on different events")
        ctx.check(s_r == prod, f"{where}: event recorded on {s_r:#x}, not the producer's stream")
        want_consumer = h if h else 1
        ctx.check(s_w in (h, want_consumer), f"{where}: wait queued on {s_w:#x}, not the consumer's stream")
        ctx.check(n["cuStreamSynchronize"] == 0, f"{where}: the host was blocked (cuStreamSynchronize)")
        # no context current: the device's primary context was pushed and popped
        ctx.check(n["cuCtxPushCurrent_v2"] == 1 and n["cuCtxPopCurrent_v2"] == 1,
                  f"{where}: {n['cuCtxPushCurrent_v2']} pushes, {n['cuCtxPopCurrent_v2']} pops")
        ctx.check(cu.last("cuCtxPushCurrent_v2")[0] == cu_primary(dev[1]),
                  f"{where}: the pushed context is not device {dev[1]}'s primary context")
        ctx.check(cu_current() == before, f"{where}: the thread's current context changed")
    # the primary context already current: used as is (no push)
    prim = cu_primary(1)
    cu.lib.cuCtxPushCurrent_v2(ctypes.c_void_p(prim))
    reset_all()
    ctx.ok(wait(ctx, (2, 1), 0x5000, stream(ctx, "HANDLE", 0x6000)), what="device 1 with its context current")
    n = cu.counts()
    ctx.check(n["cuCtxPushCurrent_v2"] == 0 and n["cuCtxPopCurrent_v2"] == 0,
              f"context already current: {n['cuCtxPushCurrent_v2']} pushes, {n['cuCtxPopCurrent_v2']} pops")
    ctx.check(cu_current() == prim, "the current context changed")
    # another context current: the primary one pushed, and the thread's own current again after
    reset_all()
    ctx.ok(wait(ctx, (2, 0), 0x5000, stream(ctx, "HANDLE", 0x6000)), what="device 0 with device 1's context current")
    ctx.check(cu.last("cuCtxPushCurrent_v2")[0] == cu_primary(0), "device 0's primary context was not pushed")
    ctx.check(cu_current() == prim, "the thread's current context was not restored")
    out = ctypes.c_void_p()
    cu.lib.cuCtxPopCurrent_v2(ctypes.byref(out))


@case("streams.stream_wait.cuda_event_pool", profile="streams", covers=["STREAMS-STREAM-WAIT-13"])
def _(ctx):
    cu = fakes()[0]
    reset_all()
    for i in range(6):
        ctx.ok(wait(ctx, (2, 0), 0x5000 + i, stream(ctx, "HANDLE", 0x9000)), what=f"call {i}")
    created = cu.count("cuEventCreate")
    ctx.check(created <= 1, f"6 sequential waits on one context created {created} events")
    # a failed wait gives its event back too
    cu.fail("cuStreamWaitEvent", 400)
    ctx.expect(wait(ctx, (2, 0), 0x5000, stream(ctx, "HANDLE", 0x9000)), "DEVICE_ERROR", what="injected failure")
    cu.fail("cuStreamWaitEvent", 0)
    for i in range(3):
        ctx.ok(wait(ctx, (2, 0), 0x5000, stream(ctx, "HANDLE", 0x9000)), what=f"after the failure, call {i}")
    created = cu.count("cuEventCreate")
    ctx.check(created <= 1, f"sequential waits with one failure created {created} events")
    ev = ctypes.c_int(0)
    ctx.check(cu.lib.fake_count(b"cuEventCreate") >= 0, "counter")
    # events are created with CU_EVENT_DISABLE_TIMING: the double refuses any other flags, so an
    # event created otherwise would have failed the waits above.
    del ev


@case("streams.stream_wait.cuda_host_context", profile="streams", covers=["STREAMS-STREAM-WAIT-15"])
def _(ctx):
    cu = fakes()[0]
    other = ctypes.c_void_p(0x5151000)  # a made-up context the producer's stream belongs to
    prod = 0x7340
    cu.lib.fake_set_stream_context(ctypes.c_void_p(prod), other)
    for dt in (3, 13):
        reset_all()
        # the event must be created and recorded in the stream's context (the double refuses an
        # event of another context on that stream)
        st = wait(ctx, (dt, 0), prod, stream(ctx, "HANDLE", 0x9100))
        ctx.ok(st, what=f"device type {dt}, producer stream of context {other.value:#x}")
        ctx.check(cu.count("cuStreamGetCtx") == 1 and cu.last("cuStreamGetCtx")[0] == prod,
                  f"device type {dt}: the producer stream's context was not asked (cuStreamGetCtx)")
        ctx.check(cu.last("cuCtxPushCurrent_v2")[0] == other.value,
                  f"device type {dt}: ran in context {cu.last('cuCtxPushCurrent_v2')[0]:#x}, not the stream's")
        ctx.check(cu_current() == 0, "the current context changed")
        # a default producer stream and no current context: device 0's primary context
        reset_all()
        ctx.ok(wait(ctx, (dt, 0), 0, stream(ctx, "HANDLE", 0x9100)), what=f"device type {dt}, default producer")
        ctx.check(cu.count("cuStreamGetCtx") == 0, f"device type {dt}: cuStreamGetCtx asked for a special handle")
        ctx.check(cu.last("cuCtxPushCurrent_v2")[0] == cu_primary(0),
                  f"device type {dt}: default stream not run in device 0's primary context")
        # a default producer stream with a current context: that context, no push
        cu.lib.cuCtxPushCurrent_v2(other)
        reset_all()
        ctx.ok(wait(ctx, (dt, 0), 2, stream(ctx, "HANDLE", 0x9100)), what=f"device type {dt}, context current")
        ctx.check(cu.count("cuCtxPushCurrent_v2") == 0, f"device type {dt}: pushed a context though one was current")
        ctx.check(cu.last("cuEventRecord")[1] == 2, "recorded on another stream")
        out = ctypes.c_void_p()
        cu.lib.cuCtxPopCurrent_v2(ctypes.byref(out))


@case("streams.stream_wait.cuda_errors", profile="streams", covers=["STREAMS-STREAM-WAIT-18", "STREAMS-STREAM-WAIT-17"])
def _(ctx):
    cu = fakes()[0]
    for fn, code, name in (("cuEventRecord", 700, b"CUDA_ERROR_ILLEGAL_ADDRESS"), ("cuStreamWaitEvent", 400, b"CUDA_ERROR_INVALID_HANDLE"),
                           ("cuEventRecord", 917, b"917"), ("cuCtxPushCurrent_v2", 201, b"CUDA_ERROR_INVALID_CONTEXT")):
        reset_all()
        cu.fail(fn, code)
        st = wait(ctx, (2, 0), 0x5000, stream(ctx, "HANDLE", 0x9000))
        cu.fail(fn, 0)
        ctx.expect(st, "DEVICE_ERROR", what=f"{fn} failing with {code}")
        msg = ctx.last_error()
        ctx.check(fn.encode().split(b"_v2")[0] in msg and name in msg,
                  f"{fn} failing with {code}: the message names neither the call nor the error: {msg!r}")
        ctx.check(cu_current() == 0, f"{fn} failing: the current context was left changed")


# ---- dlpack_stream_wait: HIP ------------------------------------------------------------------

@case("streams.stream_wait.hip_event_record_then_wait", profile="streams",
      covers=["STREAMS-STREAM-WAIT-11", "STREAMS-STREAM-WAIT-12", "STREAMS-STREAM-WAIT-13",
              "STREAMS-STREAM-WAIT-16", "STREAMS-STREAM-WAIT-17"])
def _(ctx):
    hp = fakes()[1]
    ctx.check(hip_device() == 0, "the HIP double's current device is not 0 at start")
    for dev, prod, k, h in (((10, 1), 0x5000, "HANDLE", 0x6000), ((10, 0), 0, "HANDLE", 0x6000),
                            ((10, 1), 0x5000, "DEFAULT", 0), ((11, 0), 0x5000, "HANDLE", 0x6000),
                            ((11, 1), 0x5000, "HANDLE", 0x6000)):
        reset_all()
        where = f"{dev}: producer {prod:#x} -> consumer {k} {h:#x}"
        ctx.ok(wait(ctx, dev, prod, stream(ctx, k, h)), what=where)
        n = hp.counts()
        ctx.check(n["hipEventRecord"] == 1 and n["hipStreamWaitEvent"] == 1, f"{where}: {n}")
        ev_r, s_r = hp.last("hipEventRecord")
        s_w, ev_w = hp.last("hipStreamWaitEvent")
        ctx.check(ev_r == ev_w and ev_r, f"{where}: recorded and waited on different events")
        ctx.check(s_r == prod and s_w == h, f"{where}: record on {s_r:#x}, wait on {s_w:#x}")
        ctx.check(n["hipStreamSynchronize"] == 0, f"{where}: the host was blocked")
        if dev[0] == 10 and dev[1] != 0:
            ctx.check(n["hipSetDevice"] == 2, f"{where}: hipSetDevice called {n['hipSetDevice']} times (set, restore)")
        else:
            ctx.check(n["hipSetDevice"] == 0, f"{where}: hipSetDevice called though no switch was needed")
        ctx.check(hip_device() == 0, f"{where}: the current HIP device changed")
    reset_all()
    for i in range(5):
        ctx.ok(wait(ctx, (10, 1), 0x5000, stream(ctx, "HANDLE", 0x6000)), what=f"call {i}")
    ctx.check(hp.count("hipEventCreateWithFlags") <= 1,
              f"5 sequential waits on one device created {hp.count('hipEventCreateWithFlags')} events")
    hp.fail("hipEventRecord", 400)
    ctx.expect(wait(ctx, (10, 1), 0x5000, stream(ctx, "HANDLE", 0x6000)), "DEVICE_ERROR", what="injected failure")
    hp.fail("hipEventRecord", 0)
    msg = ctx.last_error()
    ctx.check(b"hipEventRecord" in msg and b"hipErrorInvalidHandle" in msg, f"message: {msg!r}")
    ctx.check(hip_device() == 0, "after a failure: the current HIP device changed")


# ---- dlpack_stream_synchronize ------------------------------------------------------------------

@case("streams.stream_synchronize.no_runtime_paths", profile="streams",
      covers=["STREAMS-STREAM-SYNCHRONIZE-1", "STREAMS-STREAM-SYNCHRONIZE-3", "STREAMS-STREAM-SYNCHRONIZE-4"])
def _(ctx):
    with no_runtime_calls(ctx, "dlpack_stream_synchronize"):
        for dt in (1, 2, 3, 10, 14, 4):
            ctx.expect(sync(ctx, (dt, -1), 5), "INVALID_DEVICE", what=f"({dt}, -1)")
        for s in (0, 1, 2, 0x5000, C.noaccess()):
            ctx.ok(sync(ctx, (1, 0), s), what=f"kDLCPU, stream {s:#x}")
            ctx.ok(sync(ctx, (1, 3), s), what=f"(kDLCPU, 3), stream {s:#x}")
        for dt in (4, 7, 14, 99, 0):
            ctx.expect(sync(ctx, (dt, 0), 0x5000), "BACKEND_UNAVAILABLE", what=f"device type {dt} without a backend")


@case("streams.stream_synchronize.cuda", profile="streams",
      covers=["STREAMS-STREAM-SYNCHRONIZE-5", "STREAMS-STREAM-SYNCHRONIZE-7", "STREAMS-STREAM-SYNCHRONIZE-8"])
def _(ctx):
    cu = fakes()[0]
    for dev, s in (((2, 1), 0x5000), ((2, 0), 0), ((2, 1), 2)):
        reset_all()
        ctx.ok(sync(ctx, dev, s), what=f"{dev} stream {s:#x}")
        ctx.check(cu.count("cuStreamSynchronize") == 1 and cu.last("cuStreamSynchronize")[0] == s,
                  f"{dev}: cuStreamSynchronize {cu.count('cuStreamSynchronize')} times, last on {cu.last('cuStreamSynchronize')[0]:#x}")
        ctx.check(cu.last("cuCtxPushCurrent_v2")[0] == cu_primary(dev[1]), f"{dev}: not in the primary context")
        ctx.check(cu_current() == 0, f"{dev}: the current context changed")
    other = ctypes.c_void_p(0x5252000)
    cu.lib.fake_set_stream_context(ctypes.c_void_p(0x7350), other)
    reset_all()
    ctx.ok(sync(ctx, (13, 0), 0x7350), what="managed memory, a stream of another context")
    ctx.check(cu.last("cuCtxPushCurrent_v2")[0] == other.value, "not run in the stream's context")
    for fn, code, name in (("cuStreamSynchronize", 700, b"CUDA_ERROR_ILLEGAL_ADDRESS"),
                           ("cuCtxPushCurrent_v2", 201, b"CUDA_ERROR_INVALID_CONTEXT")):
        reset_all()
        cu.fail(fn, code)
        st = sync(ctx, (2, 0), 0x5000)
        cu.fail(fn, 0)
        ctx.expect(st, "DEVICE_ERROR", what=f"{fn} failing")
        msg = ctx.last_error()
        ctx.check(fn.encode().split(b"_v2")[0] in msg and name in msg, f"{fn} failing: message {msg!r}")
        ctx.check(cu_current() == 0, f"{fn} failing: the current context was left changed")


@case("streams.stream_synchronize.hip", profile="streams",
      covers=["STREAMS-STREAM-SYNCHRONIZE-6", "STREAMS-STREAM-SYNCHRONIZE-7", "STREAMS-STREAM-SYNCHRONIZE-8"])
def _(ctx):
    hp = fakes()[1]
    for dev, s, sets in (((10, 1), 0x5000, 2), ((10, 0), 0, 0), ((11, 1), 0x5000, 0)):
        reset_all()
        ctx.ok(sync(ctx, dev, s), what=f"{dev} stream {s:#x}")
        ctx.check(hp.count("hipStreamSynchronize") == 1 and hp.last("hipStreamSynchronize")[0] == s,
                  f"{dev}: hipStreamSynchronize {hp.count('hipStreamSynchronize')} times")
        ctx.check(hp.count("hipSetDevice") == sets, f"{dev}: hipSetDevice {hp.count('hipSetDevice')} times, expected {sets}")
        ctx.check(hip_device() == 0, f"{dev}: the current HIP device changed")
    reset_all()
    hp.fail("hipStreamSynchronize", 1)
    st = sync(ctx, (10, 1), 0x5000)
    hp.fail("hipStreamSynchronize", 0)
    ctx.expect(st, "DEVICE_ERROR", what="hipStreamSynchronize failing")
    msg = ctx.last_error()
    ctx.check(b"hipStreamSynchronize" in msg and b"hipErrorInvalidValue" in msg, f"message {msg!r}")
    ctx.check(hip_device() == 0, "after a failure: the current HIP device changed")


# ---- dlpack_tensor_delete_after_stream --------------------------------------------------------

def das(ctx, tensor, dev, s):
    if isinstance(tensor, int):
        tensor = ctypes.cast(tensor, ctypes.POINTER(ctx.T.DLManagedTensorVersioned))
    return ctx.f.dlpack_tensor_delete_after_stream(tensor, ctx.T.DLDevice(*dev), s or None)


@case("streams.tensor_delete_after_stream.immediate_paths", profile="streams",
      covers=["STREAMS-TENSOR-DELETE-AFTER-STREAM-1", "STREAMS-TENSOR-DELETE-AFTER-STREAM-2",
              "STREAMS-TENSOR-DELETE-AFTER-STREAM-3", "STREAMS-TENSOR-DELETE-AFTER-STREAM-5"])
def _(ctx):
    with no_runtime_calls(ctx, "dlpack_tensor_delete_after_stream"):
        for dt in (1, 2, 10, 14, 99):
            for s in (0, 1, 0x5000):
                ctx.ok(das(ctx, None, (dt, 0), s), what=f"NULL tensor on {dt}")
                ctx.ok(das(ctx, None, (dt, -1), s), what=f"NULL tensor on ({dt}, -1)")
        for dt in (1, 2, 10, 14):
            ctx.expect(das(ctx, C.noaccess(), (dt, -1), 0x5000), "INVALID_DEVICE", what=f"({dt}, -1), unreadable tensor")
            p, rec = ctx.make_versioned(device=(dt, 0))
            ctx.expect(das(ctx, ctx.vptr(p), (dt, -3), 0), "INVALID_DEVICE", what=f"({dt}, -3)")
            ctx.check(ctx.calls(rec) == 0, "released after INVALID_DEVICE")
            ctx.f.dlpack_tensor_delete(ctx.vptr(p))
        for ver in ((1, 3), (0, 9), (2, 0)):
            p, rec = ctx.make_versioned(version=ver)
            ctx.ok(das(ctx, ctx.vptr(p), (1, 0), 0x5000), what=f"kDLCPU, version {ver}")
            ctx.check(ctx.calls(rec) == 1, f"kDLCPU, version {ver}: released {ctx.calls(rec)} times during the call")
            ctx.check(ctx.deleter_thread(rec) == ctx.fx.fx_gettid(), "kDLCPU: released on another thread")
        for dt in (4, 7, 14, 99, 0, 12):
            p, rec = ctx.make_versioned(device=(dt, 0))
            ctx.expect(das(ctx, ctx.vptr(p), (dt, 0), 0x5000), "BACKEND_UNAVAILABLE", what=f"device type {dt}")
            ctx.check(ctx.calls(rec) == 0, f"device type {dt}: released though refused")
            ctx.f.dlpack_tensor_delete(ctx.vptr(p))


def hip_gated_release(ctx, dev, gate_stream, tensor_ptr):
    """Queue a release on a closed HIP gate; returns after the implementation was told 'not
    ready' at least twice (so a release before the gate opens would have been seen)."""
    hp = fakes()[1]
    hp.lib.fake_hip_gate(ctypes.c_void_p(gate_stream), 1)
    reset_all()
    st = das(ctx, tensor_ptr, dev, gate_stream)
    return st


@case("streams.tensor_delete_after_stream.hip_deferred", profile="streams",
      covers=["STREAMS-TENSOR-DELETE-AFTER-STREAM-6", "STREAMS-TENSOR-DELETE-AFTER-STREAM-8",
              "STREAMS-TENSOR-DELETE-AFTER-STREAM-9", "STREAMS-TENSOR-DELETE-AFTER-STREAM-10",
              "STREAMS-TENSOR-DELETE-AFTER-STREAM-13"])
def _(ctx):
    hp = fakes()[1]
    for dev, gate in (((10, 1), 0x4100), ((11, 0), 0x4200), ((10, 0), 0x4300)):
        # only the deleter field readable (bytes 16..24 of the struct; before them a PROT_NONE page)
        calls = []
        done = threading.Event()

        @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        def deleter(t):
            calls.append((t, threading.get_native_id()))
            done.set()

        image = bytearray(ctypes.sizeof(ctx.T.DLManagedTensorVersioned))
        image[16:24] = ctypes.cast(deleter, ctypes.c_void_p).value.to_bytes(8, "little")
        addr = C.fenced(bytes(image), lo=16, hi=24)
        C.protect(addr + 16, 8, C.PROT_NONE)  # nothing readable before the release
        hp.lib.fake_hip_gate(ctypes.c_void_p(gate), 1)
        reset_all()
        st = das(ctx, addr, dev, gate)
        ctx.ok(st, what=f"{dev} on a closed gate")
        ctx.check(not calls, f"{dev}: released during the call (the stream's work has not run)")
        ctx.check(hp.count("hipEventRecord") == 1 and hp.last("hipEventRecord")[1] == gate,
                  f"{dev}: {hp.count('hipEventRecord')} event records, last on {hp.last('hipEventRecord')[1]:#x}")
        ctx.check(hip_device() == 0, f"{dev}: the current HIP device changed")
        ok = until(lambda: hp.count("hipEventQuery") >= 2, "queries")
        ctx.check(ok, f"{dev}: the event was never queried")
        ctx.check(not calls, f"{dev}: released while the event answered 'not ready'")
        C.protect(addr + 16, 8, C.PROT_READ)  # from now on the deleter field may be read
        hp.lib.fake_hip_gate(ctypes.c_void_p(gate), 0)
        ctx.check(done.wait(20), f"{dev}: not released after the stream's work completed (no further call)")
        time_ok = until(lambda: len(calls) >= 1, "calls")
        ctx.check(time_ok and len(calls) == 1 and calls[0][0] == addr, f"{dev}: deleter calls {calls}")
        ctx.check(calls[0][1] != threading.get_native_id(), f"{dev}: released on the caller's thread")
        n = hp.counts()
        ctx.check(n["hipStreamSynchronize"] == 0, f"{dev}: hipStreamSynchronize called to serve a release")


@case("streams.tensor_delete_after_stream.cuda_deferred", profile="streams",
      covers=["STREAMS-TENSOR-DELETE-AFTER-STREAM-6", "STREAMS-TENSOR-DELETE-AFTER-STREAM-8",
              "STREAMS-TENSOR-DELETE-AFTER-STREAM-10"])
def _(ctx):
    cu = fakes()[0].lib
    prim = cu_primary(0)
    cu.cuCtxPushCurrent_v2(ctypes.c_void_p(prim))
    s = ctypes.c_void_p()
    ctx.check(cu.cuStreamCreate(ctypes.byref(s), 1) == 0, "the CUDA double made no stream")
    flag = (ctypes.c_uint32 * 1)(0)
    cu.cuStreamWaitValue32_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint]
    ctx.check(cu.cuStreamWaitValue32_v2(s, ctypes.addressof(flag), 1, 0) == 0, "no gate on the stream")
    out = ctypes.c_void_p()
    cu.cuCtxPopCurrent_v2(ctypes.byref(out))
    p, rec = ctx.make_versioned(device=(2, 0))
    reset_all()
    ctx.ok(das(ctx, ctx.vptr(p), (2, 0), s.value), what="kDLCUDA on a gated stream")
    fk = fakes()[0]
    ctx.check(fk.count("cuEventRecord") == 1 and fk.last("cuEventRecord")[1] == s.value, "one event on the stream")
    ctx.check(cu_current() == 0, "the current context changed")
    ctx.check(until(lambda: fk.count("cuEventQuery") >= 2), "the event was never queried")
    ctx.check(ctx.calls(rec) == 0, "released before the stream's work ran")
    ctypes.c_uint32.from_address(ctypes.addressof(flag)).value = 1
    ctx.check(until(lambda: ctx.calls(rec) >= 1), "not released after the stream's work ran")
    ctx.check(ctx.calls(rec) == 1, f"released {ctx.calls(rec)} times")
    ctx.check(ctx.deleter_thread(rec) != ctx.fx.fx_gettid(), "released on the caller's thread")
    ctx.check(fk.count("cuStreamSynchronize") == 0, "cuStreamSynchronize called to serve a release")


@case("streams.tensor_delete_after_stream.record_failure", profile="streams",
      covers=["STREAMS-TENSOR-DELETE-AFTER-STREAM-7"])
def _(ctx):
    cu, hp = fakes()[0], fakes()[1]
    for fk, fn, dev in ((hp, "hipEventRecord", (10, 0)), (hp, "hipEventCreateWithFlags", (10, 1)),
                        (cu, "cuEventRecord", (2, 0)), (cu, "cuEventCreate", (2, 1))):
        p, rec = ctx.make_versioned(device=dev)
        reset_all()
        fk.fail(fn, 400 if fn.startswith("cu") else 1)
        st = das(ctx, ctx.vptr(p), dev, 0x5000)
        fk.fail(fn, 0)
        if fn.endswith("Create") or fn.endswith("WithFlags"):
            # a pooled event may already exist: then nothing is created and the call succeeds
            if st == ctx.S.OK:
                continue
        ctx.expect(st, "DEVICE_ERROR", what=f"{fn} failing")
        ctx.check(fn.encode() in ctx.last_error(), f"{fn}: the message does not name the call")
        ctx.check(ctx.calls(rec) == 0, f"{fn} failing: the tensor was released")
        ctx.f.dlpack_tensor_delete(ctx.vptr(p))


@case("streams.tensor_delete_after_stream.query_error_releases", profile="streams",
      covers=["STREAMS-TENSOR-DELETE-AFTER-STREAM-8"])
def _(ctx):
    hp = fakes()[1]
    gate = 0x4400
    hp.lib.fake_hip_gate(ctypes.c_void_p(gate), 1)
    p, rec = ctx.make_versioned(device=(10, 0))
    reset_all()
    ctx.ok(das(ctx, ctx.vptr(p), (10, 0), gate), what="queued")
    ctx.check(until(lambda: hp.count("hipEventQuery") >= 2), "the event was never queried")
    ctx.check(ctx.calls(rec) == 0, "released before the query answered")
    hp.fail("hipEventQuery", 709)  # a context that can no longer run the work
    ctx.check(until(lambda: ctx.calls(rec) >= 1), "not released after the query failed")
    hp.fail("hipEventQuery", 0)
    hp.lib.fake_hip_gate(ctypes.c_void_p(gate), 0)
    ctx.check(ctx.calls(rec) == 1, f"released {ctx.calls(rec)} times")
