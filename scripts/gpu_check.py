"""The Python half of scripts/gpu-check: run it through that script (see docs/streams.md).

    gpu_check.py --probe              is a CUDA driver here? (prints one line, exit 0 yes / 3 no)
    gpu_check.py --run                every check, each in its own process; VERDICT last
    gpu_check.py --check NAME         one check (what --run starts for each)

Only the standard library is imported up front; a check imports the frameworks it uses
(PyTorch, CuPy, JAX, NumPy) and reports SKIP when one is missing. Environment (set by
scripts/gpu-check): DLPACK_HELPERS_LIBRARY (the library), DLPACK_HELPERS_CUDA_LIBRARY (the driver,
default libcuda.so.1), GPU_CHECK_SITE (the carried folder holding the Python package), OUT (a copy
of the output goes to $OUT/gpu-check.log), GPU_CHECK_SHIM (the counting pass-through of the
driver, tests-c/gpu/count_cuda.c, built), GPU_CHECK_DEADLINE_S (whole run, default 270),
GPU_CHECK_CHECK_TIMEOUT_S (one check, default 90). GPU_CHECK_INJECT=name:raise|crash|hang,...
makes checks fail on purpose: scripts/test.d/90-gpu-check.sh tests the plumbing with it.
"""
import ctypes
import os
import queue
import subprocess
import sys
import threading
import time
import traceback
from ctypes import POINTER, Structure, byref, c_bool, c_char_p, c_int, c_int32, c_int64, c_size_t
from ctypes import c_uint, c_uint32, c_uint64, c_void_p, py_object

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KDLCPU, KDLCUDA, KDLCUDAHOST, KDLCUDAMANAGED = 1, 2, 3, 13
OK = 0
STREAM_NO_SYNC, STREAM_LEGACY, STREAM_PER_THREAD, STREAM_HANDLE = 0, 2, 3, 5
NOT_READY = 600  # CUDA_ERROR_NOT_READY
CU_STREAM_NON_BLOCKING = 1
CHECKS = [
    "library", "package", "pointers", "race", "streams", "thread", "context", "synchronize",
    "release", "exchange-torch-cupy", "exchange-cupy-torch", "exchange-jax-torch", "managed", "cost",
    "events",
]


# ---------------------------------------------------------------------------------------------
# Results: a check prints "RESULT<TAB>name<TAB>STATUS<TAB>detail" lines; the parent formats them.

def result(name, status, detail):
    print(f"RESULT\t{name}\t{status}\t{detail}", flush=True)


def info(line):
    print(line, flush=True)


class Skip(Exception):
    """A check (or part of one) that cannot run here: reported as SKIP with the reason."""


def simulated():
    return os.environ.get("GPU_CHECK_SIMULATED") == "1"


# ---------------------------------------------------------------------------------------------
# The CUDA driver through ctypes (the same library dlpack-helpers opens).

class CudaError(RuntimeError):
    pass


class Driver:
    def __init__(self, path=None):
        self.path = path or os.environ.get("DLPACK_HELPERS_CUDA_LIBRARY") or "libcuda.so.1"
        self.lib = ctypes.CDLL(self.path)
        self.fake = hasattr(self.lib, "fake_count")

    def has(self, name):
        return hasattr(self.lib, name)

    def __call__(self, name, *args, ok=(0,)):
        r = getattr(self.lib, name)(*args)
        if r not in ok:
            raise CudaError(f"{name} failed: {self.error_name(r)}")
        return r

    def error_name(self, r):
        s = c_char_p()
        if self.has("cuGetErrorName") and self.lib.cuGetErrorName(r, byref(s)) == 0 and s.value:
            return f"{s.value.decode()} ({r})"
        return f"CUresult {r}"

    def init(self):
        self("cuInit", c_uint(0))
        n = c_int(0)
        self("cuDeviceGetCount", byref(n))
        return n.value

    def primary(self, ordinal=0):
        ctx = c_void_p()
        self("cuDevicePrimaryCtxRetain", byref(ctx), c_int(ordinal))
        return ctx.value

    def push(self, ctx):
        self("cuCtxPushCurrent_v2", c_void_p(ctx))

    def pop(self):
        out = c_void_p()
        self("cuCtxPopCurrent_v2", byref(out))
        return out.value

    def current(self):
        out = c_void_p()
        self("cuCtxGetCurrent", byref(out))
        return out.value

    def stream(self):
        s = c_void_p()
        self("cuStreamCreate", byref(s), c_uint(CU_STREAM_NON_BLOCKING))
        return s.value

    def query(self, stream):
        return self("cuStreamQuery", c_void_p(stream), ok=(0, NOT_READY)) == 0

    def sync(self, stream):
        self("cuStreamSynchronize", c_void_p(stream))

    def alloc(self, nbytes):
        p = c_uint64(0)
        self("cuMemAlloc_v2", byref(p), c_size_t(nbytes))
        return p.value

    def memset32(self, ptr, value, count, stream):
        self("cuMemsetD32Async", c_uint64(ptr), c_uint(value), c_size_t(count), c_void_p(stream))

    def copy_dd(self, dst, src, nbytes, stream):
        self("cuMemcpyDtoDAsync_v2", c_uint64(dst), c_uint64(src), c_size_t(nbytes), c_void_p(stream))

    def to_host(self, ptr, count):
        buf = (c_uint32 * count)()
        self("cuMemcpyDtoH_v2", buf, c_uint64(ptr), c_size_t(4 * count))
        return buf


def fn(lib, name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


class Device(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class Stream(Structure):
    _fields_ = [("kind", c_int32), ("handle", c_void_p)]


class Version(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class ImportRequest(Structure):
    _fields_ = [("max_version", Version), ("stream", c_void_p), ("has_dl_device", c_bool),
                ("dl_device", Device), ("copy", c_int32), ("flags", c_uint32)]


class Lib:
    """The library's C entry points. `c` releases the GIL during a call (stream calls, so a
    watchdog thread can run while one blocks); `py` keeps it (the Python entry points need it)."""

    def __init__(self):
        self.path = os.environ.get("DLPACK_HELPERS_LIBRARY") or os.path.join(
            ROOT, "target", "release", "libdlpack_helpers.so")
        self.c = ctypes.CDLL(self.path)
        self.py = ctypes.PyDLL(self.path)
        c, py = self.c, self.py
        self.err = fn(c, "dlpack_last_error_message", c_char_p)
        self.wait_fn = fn(c, "dlpack_stream_wait", c_int32, Device, c_void_p, POINTER(Stream))
        self.sync_fn = fn(c, "dlpack_stream_synchronize", c_int32, Device, c_void_p)
        self.decode_fn = fn(c, "dlpack_stream_decode", c_int32, Device, c_bool, c_int64, c_uint32,
                            POINTER(Stream))
        self.pointer_fn = fn(c, "dlpack_pointer_get_device", c_int32, c_void_p, POINTER(Device))
        self.backend_check = fn(c, "dlpack_stream_backend_check", c_int32, c_int32)
        self.cpu_accessible = fn(c, "dlpack_is_cpu_accessible", c_bool, Device)
        self.object_import = fn(py, "dlpack_object_import", c_int32, py_object,
                                POINTER(ImportRequest), POINTER(c_void_p), POINTER(c_uint32))
        self.capsule_new = fn(py, "dlpack_capsule_new", c_int32, c_void_p, POINTER(c_void_p))
        self.tensor_delete = fn(c, "dlpack_tensor_delete", None, c_void_p)
        self.get_device = fn(c, "dlpack_get_device", c_int32, c_void_p, POINTER(Device))

    def error(self):
        return (self.err() or b"").decode("utf-8", "replace")

    def check(self, status, what):
        if status != OK:
            raise RuntimeError(f"{what}: status {status}: {self.error()}")

    def wait(self, device, producer, consumer):
        self.check(self.wait_fn(device, c_void_p(producer), byref(consumer)), "dlpack_stream_wait")

    def decode(self, device, value):
        s = Stream(-1, None)
        self.check(self.decode_fn(device, value is not None, value or 0, 0, byref(s)),
                   f"dlpack_stream_decode({value})")
        return s

    def pointer_device(self, ptr):
        d = Device(-1, -1)
        self.check(self.pointer_fn(c_void_p(ptr), byref(d)), f"dlpack_pointer_get_device(0x{ptr:x})")
        return (d.device_type, d.device_id)


def handle(h):
    return Stream(STREAM_HANDLE, h)


def cuda(i=0):
    return Device(KDLCUDA, i)


# ---------------------------------------------------------------------------------------------
# A producer stream held at a gate: its work cannot start until the host opens the gate, so a
# consumer that reads too early reads stale data, and one that waits is still pending, however
# long the host pauses (no timed spin to outlast). The gate is cuStreamWaitValue32 on a device
# word, opened by a memset of that word on a third stream; a watchdog opens it after 20 s so a
# fault cannot hang the run. Without stream memory operations it falls back to a 0.5 s spin
# (torch.cuda._sleep on the stream), which a host pause longer than that could defeat.

class Gate:
    def __init__(self, drv, ctx):
        self.drv, self.ctx = drv, ctx
        self.flag = drv.alloc(4)
        self.opener = drv.stream()
        drv.memset32(self.flag, 0, 1, self.opener)
        drv.sync(self.opener)
        self.gen = 0
        self.timer = None
        self.kind = "wait-value"
        self.wait_name = next((n for n in ("cuStreamWaitValue32_v2", "cuStreamWaitValue32") if drv.has(n)), None)
        self.torch = None
        probe = drv.stream()
        try:
            self.hold(probe)
            drv.memset32(self.flag, self.gen, 1, probe)  # stays queued behind the gate
            time.sleep(0.05)
            held = not drv.query(probe)
            self.open()
            drv.sync(probe)
            if not held:
                raise CudaError("a stream waiting on the gate ran before it was opened")
        except CudaError as e:
            self.cancel()
            import torch  # the fallback needs PyTorch's spin kernel
            self.torch = torch
            self.kind = f"0.5 s spin (stream memory operations unusable: {e})"
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.cuda._sleep(10_000_000)
            end.record()
            end.synchronize()
            self.cycles = int(10_000_000 * 500 / max(start.elapsed_time(end), 0.01))

    def hold(self, stream):
        """Queue the gate on `stream`: work queued after it waits until `open`."""
        if self.torch is not None:
            with self.torch.cuda.stream(self.torch.cuda.ExternalStream(stream)):
                self.torch.cuda._sleep(self.cycles)
            return
        if self.wait_name is None:
            raise CudaError("the driver has no cuStreamWaitValue32")
        self.gen += 1
        self.drv(self.wait_name, c_void_p(stream), c_uint64(self.flag), c_uint32(self.gen), c_uint(0))
        self.timer = threading.Timer(20.0, self.open)
        self.timer.daemon = True
        self.timer.start()

    def open(self):
        self.cancel()
        if self.torch is not None:
            return
        self.drv.push(self.ctx)  # any thread (the watchdog's has no context)
        try:
            self.drv.memset32(self.flag, self.gen, 1, self.opener)
        finally:
            self.drv.pop()

    def cancel(self):
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


class Bench:
    """Device 0's primary context made current, two non-blocking streams, the gate, and 4 MiB
    buffers x (the producer's data) and y (what the consumer read); 256 KiB on the test double,
    which emulates the GPU on the CPU."""

    def __init__(self):
        self.drv = Driver()
        self.lib = Lib()
        if not self.drv.has("cuStreamCreate"):
            raise Skip(f"the driver {self.drv.path} cannot make streams")
        self.N = (1 << 16) if self.drv.fake else (1 << 20)
        self.drv.init()
        self.ctx = self.drv.primary(0)
        self.drv.push(self.ctx)
        self.a, self.b, self.setup = self.drv.stream(), self.drv.stream(), self.drv.stream()
        self.x, self.y = self.drv.alloc(4 * self.N), self.drv.alloc(4 * self.N)
        self.gate = Gate(self.drv, self.ctx)
        self.value = 100

    def produce(self, stream=None):
        """Old data in x and y; then, on the producer stream behind the gate, the new value."""
        d = self.drv
        self.value += 1
        d.memset32(self.x, 7, self.N, self.setup)
        d.memset32(self.y, 0, self.N, self.setup)
        d.sync(self.setup)
        stream = self.a if stream is None else stream
        self.gate.hold(stream)
        d.memset32(self.x, self.value, self.N, stream)
        return self.value

    def consume(self, consumer):
        self.drv.copy_dd(self.y, self.x, 4 * self.N, consumer)

    def finish(self, consumer, producer=None):
        """Open the gate, drain both streams, and say whether y holds the producer's value."""
        self.gate.open()
        self.drv.sync(self.a if producer is None else producer)
        self.drv.sync(consumer)
        got = self.drv.to_host(self.y, self.N)
        return bytes(got) == self.value.to_bytes(4, sys.byteorder) * self.N

    def pending_after(self, stream, seconds=0.005):
        time.sleep(seconds)
        return not self.drv.query(stream)

    def completes(self, stream, within=5.0):
        end = time.monotonic() + within
        while time.monotonic() < end:
            if self.drv.query(stream):
                return True
            time.sleep(0.0005)
        return False


# ---------------------------------------------------------------------------------------------
# The checks. Each runs in its own process (--check NAME) and reports RESULT lines.

def check_library(out):
    lib = Lib()
    info(f"library: {lib.path}")

    class Info(Structure):
        _fields_ = [("struct_size", c_size_t), ("version", c_char_p), ("major", c_uint32),
                    ("minor", c_uint32), ("patch", c_uint32), ("dlpack_abi_major", c_uint32),
                    ("dlpack_version", Version), ("capabilities", c_uint64), ("accepts_legacy", c_bool)]

    i = Info()
    i.struct_size = ctypes.sizeof(i)
    lib.check(fn(lib.c, "dlpack_get_info", c_int32, POINTER(Info))(byref(i)), "dlpack_get_info")
    st = lib.backend_check(KDLCUDA)
    if st != OK:
        out("library", "FAIL", f"dlpack_stream_backend_check(kDLCUDA): {lib.error()}")
        return
    cap_cuda = bool(i.capabilities & 0x1)
    out("library", "PASS" if cap_cuda else "FAIL",
        f"dlpack-helpers {i.version.decode()} at {lib.path}; CUDA backend loads "
        f"({os.environ.get('DLPACK_HELPERS_CUDA_LIBRARY') or 'libcuda.so.1'}); "
        f"DLPACK_HELPERS_CAP_CUDA {'set' if cap_cuda else 'NOT set'}")


def import_package():
    """dlpack_helpers from the carried folder, PYTHONPATH, or the checkout's python/ (pure-Python
    package only), in that order; raises ImportError with the reason."""
    site = os.environ.get("GPU_CHECK_SITE") or os.path.join(ROOT, ".gpu-check", "site")
    if os.path.isdir(site):
        sys.path.insert(0, site)
    sys.path.append(os.path.join(ROOT, "python"))
    import dlpack_helpers
    return dlpack_helpers


def check_package(out):
    try:
        dh = import_package()
    except Exception as e:  # ImportError, or an OSError from a native extension
        out("package", "SKIP", f"dlpack_helpers is not importable ({type(e).__name__}: "
            f"{str(e).splitlines()[0] if str(e) else ''}); the exchange checks use the C entry "
            f"points (dlpack_object_import, dlpack_capsule_new) through ctypes only")
        return
    where = os.path.dirname(os.path.abspath(dh.__file__))
    version = getattr(dh, "__version__", "?")
    out("package", "PASS", f"dlpack_helpers {version} imported from {where}; import_tensor "
        f"{'present' if hasattr(dh, 'import_tensor') else 'MISSING'}")
    if not hasattr(dh, "import_tensor"):
        raise RuntimeError("dlpack_helpers has no import_tensor")


def check_pointers(out):
    b = Bench()
    d, lib = b.drv, b.lib
    rows, bad = [], []

    def expect(what, ptr, want):
        got = lib.pointer_device(ptr)
        rows.append(f"{what} {got}")
        if got != want:
            bad.append(f"{what}: got {got}, want {want}")

    expect("device", b.x, (KDLCUDA, 0))
    expect("device+4092", b.x + 4092, (KDLCUDA, 0))
    host = c_void_p()
    d("cuMemAllocHost_v2", byref(host), c_size_t(1 << 20))  # cudaMallocHost
    expect("cuMemAllocHost", host.value, (KDLCUDAHOST, 0))
    expect("cuMemAllocHost+777", host.value + 777, (KDLCUDAHOST, 0))
    d("cuMemFreeHost", host)
    plain = ctypes.create_string_buffer(2 << 20)
    p = (ctypes.addressof(plain) + 4095) & ~4095  # a page-aligned MiB inside
    expect("plain host", p, (KDLCPU, 0))
    d("cuMemHostRegister_v2", c_void_p(p), c_size_t(1 << 20), c_uint(0))  # cudaHostRegister
    expect("registered host", p, (KDLCUDAHOST, 0))
    expect("registered host+4097", p + 4097, (KDLCUDAHOST, 0))
    d("cuMemHostUnregister", c_void_p(p))
    expect("unregistered host", p, (KDLCPU, 0))
    managed = c_uint64()
    d("cuMemAllocManaged", byref(managed), c_size_t(1 << 20), c_uint(1))  # CU_MEM_ATTACH_GLOBAL
    expect("cuMemAllocManaged", managed.value, (KDLCUDAMANAGED, 0))
    expect("cuMemAllocManaged+12345", managed.value + 12345, (KDLCUDAMANAGED, 0))
    d("cuMemFree_v2", managed)
    # From a thread with no current context (the query pushes device 0's primary one).
    got = fresh_thread(lambda: (d.current(), lib.pointer_device(b.x + 8), d.current()))
    rows.append(f"device from a fresh thread {got[1]}")
    if got != (None, (KDLCUDA, 0), None):
        bad.append(f"fresh thread: (context before, answer, context after) = {got}")
    out("pointers", "FAIL" if bad else "PASS", "; ".join(bad) if bad else "; ".join(rows))


def check_race(out):
    b = Bench()
    lib, trials = b.lib, (50 if b.gate.torch is None else 10)
    stale_without = stale_with = pending_with = 0
    ran_early = 0
    for _ in range(trials):
        b.produce()
        b.consume(b.b)
        ran_early += b.completes(b.b)  # the consumer finished while the producer is held
        stale_without += not b.finish(b.b)
    for _ in range(trials):
        b.produce()
        lib.wait(cuda(0), b.a, handle(b.b))  # returns with the producer held: never blocks
        b.consume(b.b)
        pending_with += b.pending_after(b.b)
        stale_with += not b.finish(b.b)
    ok = stale_without == trials and stale_with == 0 and pending_with == trials and ran_early == trials
    out("race", "PASS" if ok else "FAIL",
        f"gate {b.gate.kind}; stale reads without the wait {stale_without}/{trials} (the control: "
        f"must be all), with dlpack_stream_wait {stale_with}/{trials} (must be none); consumer "
        f"still waiting after the wait returned {pending_with}/{trials}; control consumer done "
        f"while the producer was held {ran_early}/{trials}")


def check_streams(out):
    b = Bench()
    lib = b.lib
    lines, bad = [], []
    for value, kind, native in ((1, STREAM_LEGACY, 0x1), (2, STREAM_PER_THREAD, 0x2)):
        s = lib.decode(cuda(0), value)
        if (s.kind, s.handle) != (kind, native):
            bad.append(f"stream={value} decodes to kind {s.kind} handle {s.handle}")
            continue
        b.produce()
        b.consume(native)
        done = b.completes(native)
        control_stale = done and not b.finish(native)
        b.produce()
        lib.wait(cuda(0), b.a, s)
        b.consume(native)
        pending = b.pending_after(native)
        fresh = b.finish(native)
        lines.append(f"stream={value}: control stale {control_stale}, with wait pending {pending} fresh {fresh}")
        if not (control_stale and pending and fresh):
            bad.append(lines[-1])
    s = lib.decode(cuda(0), -1)
    b.produce()
    lib.wait(cuda(0), b.a, s)  # -1: no synchronization asked, so none made
    b.consume(b.b)
    done = b.completes(b.b)
    unordered = done and not b.finish(b.b)
    lines.append(f"stream=-1: kind {s.kind}, consumer not ordered {unordered}")
    if s.kind != STREAM_NO_SYNC or not unordered:
        bad.append(lines[-1])
    out("streams", "FAIL" if bad else "PASS", "; ".join(bad or lines))


def check_release(out):
    """Peer case 52: dlpack_tensor_delete_after_stream returns at once; the deleter runs only
    after the work queued on the stream (held by the gate) is done, exactly once, on the
    library's completion thread, and the event comes from the pool."""
    b = Bench()
    lib = b.lib
    release = fn(lib.c, "dlpack_tensor_delete_after_stream", c_int32, c_void_p, Device, c_void_p)
    calls, threads, done = [], [], threading.Semaphore(0)

    def deleter(p):
        calls.append(p)
        threads.append(threading.get_ident())
        done.release()
    keep = ctypes.CFUNCTYPE(None, c_void_p)(deleter)

    def tensor():
        t = (ctypes.c_uint8 * 80)()  # DLManagedTensorVersioned: version, manager_ctx, deleter, ...
        ctypes.memmove(t, (c_uint32 * 2)(1, 3), 8)
        c_void_p.from_buffer(t, 16).value = ctypes.cast(keep, c_void_p).value
        return t
    first, second = tensor(), tensor()
    b.produce()  # stream a held at the gate
    lib.check(release(ctypes.addressof(first), cuda(0), c_void_p(b.a)), "dlpack_tensor_delete_after_stream")
    held = b.pending_after(b.a, 0.05)
    early = len(calls)
    b.gate.open()
    ran = done.acquire(timeout=20.0)
    b.drv.sync(b.a)
    # Exactly once: a second release on the now idle stream runs after the first was handled.
    lib.check(release(ctypes.addressof(second), cuda(0), c_void_p(b.a)), "dlpack_tensor_delete_after_stream")
    ran2 = done.acquire(timeout=20.0)
    once = calls == [ctypes.addressof(first), ctypes.addressof(second)]
    other_thread = bool(threads) and threading.get_ident() not in threads
    ok = held and early == 0 and ran and ran2 and once and other_thread
    out("release", "PASS" if ok else "FAIL",
        f"gate {b.gate.kind}; stream held after the call {held}, deleter calls while held {early} "
        f"(must be 0), ran after the gate opened {ran}, each deleter once {once}, on the library's "
        f"thread {other_thread}")


def fresh_thread(f):
    """Run f() on a new thread, with no CUDA context current there; return (result, error)."""
    box = {}

    def run():
        try:
            box["r"] = f()
        except BaseException as e:  # reported by the caller
            box["e"] = e
    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "e" in box:
        raise box["e"]
    return box["r"]


def check_thread(out):
    lib = Lib()
    b = Bench()
    rows, bad = [], []
    for t in (KDLCUDA, KDLCUDAHOST, KDLCUDAMANAGED):
        b.produce()

        def call(t=t):
            before = b.drv.current()
            st = lib.wait_fn(Device(t, 0), c_void_p(b.a), byref(handle(b.b)))
            return before, st, lib.error() if st else "", b.drv.current()
        before, st, err, after = fresh_thread(call)
        b.consume(b.b)
        pending = b.pending_after(b.b)
        fresh = b.finish(b.b)
        rows.append(f"type {t}: status {st}, pending {pending}, fresh {fresh}")
        if before is not None or after is not None or st != OK or not pending or not fresh:
            bad.append(f"device type {t}: context before {before}, status {st} {err}, context "
                       f"after {after}, consumer pending {pending}, fresh {fresh}")
    out("thread", "FAIL" if bad else "PASS",
        "; ".join(bad) if bad else "from a fresh thread (no current context, none left): " + "; ".join(rows))


def check_context(out):
    """kDLCUDAHost/kDLCUDAManaged work on a stream of a context other than the current one (the
    context comes from the producer's stream, cuStreamGetCtx)."""
    b = Bench()
    d, lib = b.drv, b.lib
    other = c_void_p()
    if d.has("cuCtxCreate_v2"):
        d("cuCtxCreate_v2", byref(other), c_uint(0), c_int(0))  # made current
    elif d.has("cuCtxCreate_v4"):
        params = ctypes.create_string_buffer(256)  # CUctxCreateParams, all zero: no options
        d("cuCtxCreate_v4", byref(other), params, c_uint(0), c_int(0))
    else:
        raise Skip("the driver has neither cuCtxCreate_v2 nor cuCtxCreate_v4")
    try:
        p, q = d.stream(), d.stream()
        d.pop()  # device 0's primary context is current again
        rows, bad = [], []
        for t in (KDLCUDAHOST, KDLCUDAMANAGED):
            st = lib.wait_fn(Device(t, 0), c_void_p(p), byref(handle(q)))
            rows.append(f"wait type {t}: {st}{' ' + lib.error() if st else ''}")
            st2 = lib.sync_fn(Device(t, 0), c_void_p(p))
            rows.append(f"synchronize type {t}: {st2}{' ' + lib.error() if st2 else ''}")
            if st or st2:
                bad.append(rows[-2] + "; " + rows[-1])
        if d.current() != b.ctx:
            bad.append("the current context was not restored")
        d.push(other.value)
        d("cuStreamDestroy_v2", c_void_p(p))
        d("cuStreamDestroy_v2", c_void_p(q))
        d.pop()
    finally:
        d("cuCtxDestroy_v2", other)
    out("context", "FAIL" if bad else "PASS",
        "; ".join(bad) if bad else "producer and consumer streams in a second context, device 0's "
        "primary context current: " + "; ".join(rows))


def check_synchronize(out):
    lib = Lib()
    b = Bench()
    b.produce()
    timer = threading.Timer(0.3, b.gate.open)
    t0 = time.monotonic()
    timer.start()
    st = lib.sync_fn(cuda(0), c_void_p(b.a))  # blocks (GIL released) until the gate opens
    took = time.monotonic() - t0
    done = b.drv.query(b.a)
    timer.join()
    x = b.drv.to_host(b.x, 1)[0]
    ok = st == OK and done and x == b.value and (took >= 0.25 or b.gate.torch is not None)
    out("synchronize", "PASS" if ok else "FAIL",
        f"status {st}{' ' + lib.error() if st else ''}; returned after {took * 1000:.0f} ms (the "
        f"gate opened at 300 ms); producer stream complete {done}; data {x} (want {b.value})")


# ---- cross-framework exchange --------------------------------------------------------------

_keep = []  # counting deleters handed to C, kept alive for the life of the process
_DELETER = ctypes.CFUNCTYPE(None, c_void_p)


class Observed:
    """A real producer, watched: records the keywords its __dlpack__ got, and puts a counting
    deleter in front of the producer's own in each capsule it returns (so 'released exactly
    once' is counted, not assumed)."""

    def __init__(self, obj):
        self.obj = obj
        self.calls = []
        self.released = 0

    def __dlpack_device__(self):
        return self.obj.__dlpack_device__()

    def __dlpack__(self, **kw):
        self.calls.append(kw)
        cap = self.obj.__dlpack__(**kw)
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = c_char_p, [py_object]
        get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
        get_ptr.restype, get_ptr.argtypes = c_void_p, [py_object, c_char_p]
        name = get_name(cap)
        ptr = get_ptr(cap, name)
        off = 16 if name == b"dltensor_versioned" else 56  # offsetof(deleter)
        slot = c_void_p.from_address(ptr + off)
        original = _DELETER(slot.value) if slot.value else None

        def counting(mt, original=original):
            self.released += 1
            if original is not None:
                original(mt)
        cb = _DELETER(counting)
        _keep.append(cb)
        slot.value = ctypes.cast(cb, c_void_p).value
        return cap


def pointer_of(a):
    """The data address of a PyTorch tensor, CuPy array or JAX array."""
    mod = type(a).__module__.split(".")[0]
    if mod == "torch":
        return a.data_ptr()
    if mod == "cupy":
        return a.data.ptr
    return a.unsafe_buffer_pointer()


class Capsule:
    """Hands a capsule made by dlpack_capsule_new to a consumer's from_dlpack."""

    def __init__(self, cap, device):
        self.cap, self.device = cap, device

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kw):
        cap, self.cap = self.cap, None
        return cap


def c_import(lib, obj, stream):
    """dlpack_object_import + dlpack_capsule_new: the C entry points' exchange."""
    req = ImportRequest()
    req.max_version = Version(1, 3)
    keep = stream  # the int object must outlive the call
    req.stream = id(keep) if stream is not None else None
    mt, how = c_void_p(), c_uint32()
    lib.check(lib.object_import(obj, byref(req), byref(mt), byref(how)), "dlpack_object_import")
    d = Device()
    lib.check(lib.get_device(mt, byref(d)), "dlpack_get_device")
    out = c_void_p()
    st = lib.capsule_new(mt, byref(out))
    if st != OK:
        lib.tensor_delete(mt)
        lib.check(st, "dlpack_capsule_new")
    cap = ctypes.cast(out, py_object).value
    ctypes.pythonapi.Py_DecRef.argtypes = [c_void_p]
    ctypes.pythonapi.Py_DecRef(out)
    return Capsule(cap, (d.device_type, d.device_id))


def exchange(out, producer, consumer):
    """One direction, through import_tensor (when the package imports) and the C entry points."""
    import gc
    import torch
    if not torch.cuda.is_available():
        raise Skip("torch.cuda.is_available() is False")
    lib = Lib()
    try:
        dh = import_package()
        paths = ["import_tensor", "C entry points"]
    except Exception as e:
        dh = None
        paths = ["C entry points"]
        out(f"exchange {producer}->{consumer} (import_tensor)", "SKIP",
            f"dlpack_helpers is not importable ({type(e).__name__})")
    fw = {}
    for name in (producer, consumer):
        if name == "cupy":
            import cupy
            fw["cupy"] = cupy
        elif name == "jax":
            os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
            import jax
            import jax.numpy as jnp
            if not any(dev.platform == "gpu" for dev in jax.devices()):
                raise Skip(f"JAX sees no GPU ({jax.devices()})")
            fw["jax"] = (jax, jnp)
    versions = [f"torch {torch.__version__} (CUDA {torch.version.cuda})"]
    if "cupy" in fw:
        versions.append(f"cupy {fw['cupy'].__version__}")
    if "jax" in fw:
        versions.append(f"jax {fw['jax'][0].__version__}")
    info(f"{', '.join(versions)}; {torch.cuda.get_device_name(0)}")
    n = 1 << 22

    def one(path, label):
        k = 3.0 + len(label)  # a value no earlier buffer holds
        torch.cuda.synchronize()
        pstream_ptr = None
        # The producer: its data queued behind ~25 ms of work on its own non-blocking stream.
        if producer == "torch":
            a = torch.cuda.Stream()
            with torch.cuda.stream(a):
                torch.cuda._sleep(50_000_000)
                x = torch.arange(n, device="cuda", dtype=torch.float32) * k
            ptr, pstream_ptr = x.data_ptr(), a.cuda_stream
            alloc_same = lambda: torch.full((n,), -1.0, device="cuda")  # noqa: E731
        elif producer == "cupy":
            cupy = fw["cupy"]
            a = cupy.cuda.Stream(non_blocking=True)
            with torch.cuda.stream(torch.cuda.ExternalStream(a.ptr)):
                torch.cuda._sleep(50_000_000)
            with a:
                x = cupy.arange(n, dtype=cupy.float32) * cupy.float32(k)
            ptr, pstream_ptr = x.data.ptr, a.ptr
            alloc_same = lambda: cupy.full((n,), -1.0, dtype=cupy.float32)  # noqa: E731
        else:
            jax, jnp = fw["jax"]
            x = jnp.arange(n, dtype=jnp.float32) * jnp.float32(k)
            ptr = x.unsafe_buffer_pointer()
            alloc_same = lambda: jnp.full((n,), -1.0, dtype=jnp.float32).block_until_ready()  # noqa: E731
        obs = Observed(x)
        # The consumer's stream, and the import with it (the producer makes it wait).
        if consumer == "cupy":
            cupy = fw["cupy"]
            cs = cupy.cuda.Stream(non_blocking=True)
            cs_int = cs.ptr
        else:
            cs = torch.cuda.Stream()
            cs_int = cs.cuda_stream
        ctx = a if producer == "cupy" else (torch.cuda.stream(a) if producer == "torch" else None)
        if ctx is not None:
            ctx.__enter__()
        try:
            if path == "import_tensor":
                t = dh.import_tensor(obs, stream=cs_int)
                handoff = t
            elif producer == "torch":
                # -1: the producer does not synchronize; the C caller does, with
                # dlpack_stream_wait (producer's stream -> consumer's).
                handoff = c_import(lib, obs, -1)
                lib.wait(cuda(0), pstream_ptr, handle(cs_int))
                t = None
            else:
                handoff = c_import(lib, obs, cs_int)
                t = None
            producer_pending = pstream_ptr is not None and not torch.cuda.ExternalStream(pstream_ptr).query()
        finally:
            if ctx is not None:
                ctx.__exit__(None, None, None)
        given = obs.calls[0].get("stream") if obs.calls else None
        # The consumer reads on its stream.
        if consumer == "cupy":
            with cs:
                y = cupy.from_dlpack(handoff)
                want = cupy.arange(n, dtype=cupy.float32) * cupy.float32(k)
                equal = bool(cupy.array_equal(y, want))
            yptr = y.data.ptr
        else:
            with torch.cuda.stream(cs):
                y = torch.from_dlpack(handoff)
                want = torch.arange(n, device="cuda", dtype=torch.float32) * k
                equal = bool(torch.equal(y, want))
            yptr = y.data_ptr()
        # Lifetime: the producer's object and our handles go; the consumer's view keeps the data.
        del x, obs.obj, handoff
        if t is not None:
            getattr(t, "release", lambda: None)()
            del t
        gc.collect()
        released_early = obs.released
        # Same-size buffers from the producer's allocator, on its stream: the freed block would
        # be handed out again if the data had been released.
        ctx = a if producer == "cupy" else (torch.cuda.stream(a) if producer == "torch" else None)
        if ctx is not None:
            ctx.__enter__()
        try:
            others = [alloc_same() for _ in range(4)]
        finally:
            if ctx is not None:
                ctx.__exit__(None, None, None)
        torch.cuda.synchronize()
        reused = any(pointer_of(o) == ptr for o in others)
        if consumer == "cupy":
            with cs:
                still = bool(cupy.array_equal(y, want))
        else:
            with torch.cuda.stream(cs):
                still = bool(torch.equal(y, want))
        del y, others
        gc.collect()
        torch.cuda.synchronize()
        released = obs.released
        ok = (equal and yptr == ptr and given == (-1 if path == "C entry points" and producer == "torch" else cs_int)
              and released_early == 0 and not reused and still and released == 1)
        out(label, "PASS" if ok else "FAIL",
            f"values equal {equal}; zero copy {yptr == ptr} (0x{ptr:x}); producer got stream={given} "
            f"(consumer's {cs_int}); producer stream still busy at hand-off {producer_pending}; "
            f"after the producer's object was dropped: released {released_early} times, memory "
            f"reused {reused}, values intact {still}; deleter calls after the consumer let go "
            f"{released} (must be 1)")

    for path in paths:
        label = f"exchange {producer}->{consumer} ({path})"
        try:
            one(path, label)
        except Exception as e:  # this path's FAIL line; the other path still runs
            for line in traceback.format_exc().rstrip().splitlines():
                info("  " + line)
            out(label, "FAIL", f"raised {type(e).__name__}: {e}")


def check_exchange_torch_cupy(out):
    exchange(out, "torch", "cupy")


def check_exchange_cupy_torch(out):
    exchange(out, "cupy", "torch")


def check_exchange_jax_torch(out):
    exchange(out, "jax", "torch")


def check_managed(out):
    """The seed's example: CuPy memory from malloc_managed exported to PyTorch."""
    import cupy
    import torch
    lib = Lib()
    n = 1 << 18
    mem = cupy.cuda.malloc_managed(4 * n)
    a = cupy.ndarray((n,), dtype=cupy.float32, memptr=mem)
    a[...] = cupy.arange(n, dtype=cupy.float32)
    cupy.cuda.get_current_stream().synchronize()
    base = lib.pointer_device(a.data.ptr)
    interior = lib.pointer_device(a.data.ptr + 4 * 1000 + 3)
    cupy_says = tuple(int(v) for v in a.__dlpack_device__())
    try:
        dh = import_package()
    except Exception:  # the package is not importable: the C entry points
        dh = None
    stream = torch.cuda.current_stream().cuda_stream or 1
    if dh is not None:
        t, via = dh.import_tensor(a, stream=stream), "import_tensor"
    else:
        t, via = c_import(lib, a, stream), "the C entry points (no package)"
    accessible = bool(lib.cpu_accessible(Device(*cupy_says)))
    # PyTorch's own acceptance is reported, not required: whether it takes kDLCUDAManaged is
    # PyTorch's rule. What it reads, when it takes the tensor, must be right and not a copy.
    want = float(n * (n - 1) // 2)
    try:
        y = torch.from_dlpack(t)
        total = float(y.double().sum())
        torch_part = (f"PyTorch took it as {y.device}: sum {total:.0f} (want {want:.0f}), same "
                      f"pointer {y.data_ptr() == a.data.ptr}")
        torch_ok = total == want and y.data_ptr() == a.data.ptr
    except Exception as e:
        torch_part = f"PyTorch refused it ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
        torch_ok = True
    ok = base == (KDLCUDAMANAGED, 0) and interior == (KDLCUDAMANAGED, 0) and torch_ok
    out("managed", "PASS" if ok else "FAIL",
        f"pointer query: base {base}, interior {interior} (want (13, 0)); CuPy's "
        f"__dlpack_device__ {cupy_says} (dlpack_is_cpu_accessible {accessible}); accepted through "
        f"{via}; {torch_part}")


def check_cost(out):
    drv, lib = Driver(), Lib()
    drv.init()
    drv.push(drv.primary(0))
    a, b = drv.stream(), drv.stream()
    note = "two non-blocking streams of device 0's primary context"
    if drv.fake:
        note = "simulated driver: the figures are the library's and the test double's, no GPU"
    dev, s = cuda(0), handle(b)
    wait = lib.wait_fn
    for _ in range(1000):
        wait(dev, a, byref(s))
    reps = 20000
    t0 = time.perf_counter()
    for _ in range(reps):
        wait(dev, a, byref(s))
    ours = (time.perf_counter() - t0) / reps * 1e6
    probe = lib.cpu_accessible
    t0 = time.perf_counter()
    for _ in range(reps):
        probe(dev)
    floor = (time.perf_counter() - t0) / reps * 1e6
    st = wait(dev, a, byref(s))
    torch_part = "PyTorch __dlpack__(stream=...) not measured (no CUDA PyTorch)"
    try:
        import torch
        if torch.cuda.is_available() and not simulated():
            x = torch.zeros(4, device="cuda")
            ext_a = torch.cuda.ExternalStream(a)
            with torch.cuda.stream(ext_a):
                for _ in range(200):
                    x.__dlpack__(stream=b)
                r = 5000
                t0 = time.perf_counter()
                for _ in range(r):
                    x.__dlpack__(stream=b)
                td = (time.perf_counter() - t0) / r * 1e6
            ev = torch.cuda.Event()
            ext_b = torch.cuda.ExternalStream(b)
            t0 = time.perf_counter()
            for _ in range(r):
                ev.record(ext_a)
                ext_b.wait_event(ev)
            te = (time.perf_counter() - t0) / r * 1e6
            torch.cuda.synchronize()
            torch_part = (f"PyTorch __dlpack__(stream=...) {td:.2f} us/call (capsule included), its "
                          f"Event.record+wait_event {te:.2f} us")
    except ImportError:
        pass
    out("cost", "PASS" if st == OK else "FAIL",
        f"dlpack_stream_wait {ours:.2f} us/call through ctypes after warm-up (a ctypes call of "
        f"dlpack_is_cpu_accessible: {floor:.2f} us); {torch_part}; {note}")


def check_events(out):
    """Events created by the library after warm-up, counted by the pass-through driver."""
    counting, lib = Driver(), Lib()
    if not hasattr(counting.lib, "fake_count"):
        raise Skip("no counting driver: DLPACK_HELPERS_CUDA_LIBRARY is not the pass-through "
                   "(tests-c/gpu/count_cuda.c, built by scripts/gpu-check when a C compiler is "
                   "there, or carried as .gpu-check/libcount_cuda.so)")
    drv = Driver(os.environ.get("COUNT_CUDA_REAL") or counting.path)  # streams, contexts
    drv.init()
    drv.push(drv.primary(0))
    a, b = drv.stream(), drv.stream()
    where = "simulated driver" if drv.fake else "real driver"
    dev, s = cuda(0), handle(b)
    count = counting.lib.fake_count
    count.argtypes = [c_char_p]
    count.restype = ctypes.c_long
    for _ in range(100):
        lib.wait(dev, a, s)
    c0 = {k: count(k.encode()) for k in ("cuEventCreate", "cuEventRecord", "cuStreamWaitEvent")}
    reps = 10000
    for _ in range(reps):
        lib.wait(dev, a, s)
    d = {k: count(k.encode()) - v for k, v in c0.items()}
    threads = [threading.Thread(target=lambda: [lib.wait(dev, a, s) for _ in range(2000)]) for _ in range(4)]
    created0 = count(b"cuEventCreate")
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    created_mt = count(b"cuEventCreate") - created0
    drv.sync(b)
    ok = d["cuEventCreate"] == 0 and d["cuEventRecord"] == reps and d["cuStreamWaitEvent"] == reps and created_mt <= 4
    counter = "the pass-through" if os.environ.get("COUNT_CUDA_REAL") else "the test double"
    out("events", "PASS" if ok else "FAIL",
        f"{where}, calls counted by {counter}: after warm-up, {reps} waits created {d['cuEventCreate']} events (must be 0), "
        f"recorded {d['cuEventRecord']}, waited {d['cuStreamWaitEvent']}; 4 threads x 2000 "
        f"waits created {created_mt} (at most 4, one per concurrent caller)")


def run_one(name):
    fns = {
        "library": check_library, "package": check_package, "pointers": check_pointers,
        "race": check_race, "streams": check_streams, "thread": check_thread,
        "context": check_context, "synchronize": check_synchronize, "release": check_release,
        "exchange-torch-cupy": check_exchange_torch_cupy,
        "exchange-cupy-torch": check_exchange_cupy_torch,
        "exchange-jax-torch": check_exchange_jax_torch, "managed": check_managed,
        "cost": check_cost, "events": check_events,
    }
    inject = dict(p.split(":", 1) for p in os.environ.get("GPU_CHECK_INJECT", "").split(",") if ":" in p)
    what = inject.get(name)
    reported = []

    def out(label, status, detail):
        reported.append(label)
        result(label, status, detail)
    try:
        if what == "raise":
            raise RuntimeError(f"injected failure in check {name} (GPU_CHECK_INJECT)")
        if what == "crash":
            ctypes.string_at(1)  # SIGSEGV, on purpose
        if what == "hang":
            time.sleep(3600)
        fns[name](out)
    except Skip as e:
        out(name, "SKIP", str(e))
    except ImportError as e:
        out(name, "SKIP", f"{e.name or e} is not importable here")
    except BaseException as e:
        for line in traceback.format_exc().rstrip().splitlines():
            info("  " + line)
        out(name, "FAIL", f"raised {type(e).__name__}: {e}")
    if not reported:
        out(name, "FAIL", "the check reported nothing")
    return 0


# ---------------------------------------------------------------------------------------------
# The parent: the driver probe, then every check in its own process, VERDICT last.

def probe():
    """One line: 'ok N name[; simulated]' when a CUDA driver with a device is here, else the
    reason, with exit status 3."""
    path = os.environ.get("DLPACK_HELPERS_CUDA_LIBRARY") or "libcuda.so.1"
    try:
        drv = Driver(path)
    except OSError as e:
        print(f"no CUDA driver ({path} does not load: {str(e).split(':')[-1].strip()})")
        return 3
    try:
        n = drv.init()
    except CudaError as e:
        print(f"no CUDA driver ({e})")
        return 3
    if n < 1:
        print("no CUDA device (cuDeviceGetCount says 0)")
        return 3
    name = ctypes.create_string_buffer(256)
    dev = c_int()
    names = []
    for i in range(n):
        if drv.has("cuDeviceGetName"):
            drv("cuDeviceGet", byref(dev), c_int(i))
            drv("cuDeviceGetName", name, c_int(256), dev)
            names.append(name.value.decode())
    version = c_int(0)
    if drv.has("cuDriverGetVersion"):
        drv.lib.cuDriverGetVersion(byref(version))
    print(f"ok {n} device(s): {', '.join(names) or '?'}; driver API {version.value}; {path}"
          f"{'; simulated' if drv.fake else ''}")
    return 0


class Log:
    def __init__(self):
        out = os.environ.get("OUT")
        self.f = open(os.path.join(out, "gpu-check.log"), "a", buffering=1) if out else None

    def __call__(self, line):
        print(line, flush=True)
        if self.f:
            self.f.write(line + "\n")
            self.f.flush()


def run_all():
    log = Log()
    start = time.monotonic()
    deadline = start + float(os.environ.get("GPU_CHECK_DEADLINE_S", "270"))
    per_check = float(os.environ.get("GPU_CHECK_CHECK_TIMEOUT_S", "90"))
    results = []  # (label, status)
    sim = os.environ.get("GPU_CHECK_SIMULATED") == "1"
    for name in CHECKS:
        left = deadline - time.monotonic()
        if left < 5:
            log(f"{name}: SKIP no time left in the run's {deadline - start:.0f} s")
            results.append((name, "SKIP"))
            continue
        limit = min(per_check, left)
        env = dict(os.environ)
        if name == "events":
            shim = os.environ.get("GPU_CHECK_SHIM")
            if shim and os.path.isfile(shim):
                env["COUNT_CUDA_REAL"] = os.environ.get("DLPACK_HELPERS_CUDA_LIBRARY") or "libcuda.so.1"
                env["DLPACK_HELPERS_CUDA_LIBRARY"] = shim
        t0 = time.monotonic()
        p = subprocess.Popen([sys.executable, "-u", os.path.abspath(__file__), "--check", name],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                             errors="replace", bufsize=1)
        lines = queue.Queue()
        reader = threading.Thread(target=lambda: ([lines.put(l) for l in p.stdout], lines.put(None)), daemon=True)
        reader.start()
        got, timed_out = [], False
        while True:
            try:
                line = lines.get(timeout=max(0.0, t0 + limit - time.monotonic()))
            except queue.Empty:
                timed_out = True
                p.kill()  # a check starts no processes of its own
                break
            if line is None:
                break
            line = line.rstrip("\n")
            if line.startswith("RESULT\t"):
                _, label, status, detail = (line.split("\t", 3) + ["", "", ""])[:4]
                log(f"{label}: {status} {detail}")
                got.append((label, status))
            else:
                log(f"  | {line}")
        rc = p.wait()
        took = time.monotonic() - t0
        if timed_out:
            log(f"{name}: FAIL timed out after {limit:.0f} s (killed)")
            got.append((name, "FAIL"))
        elif rc != 0 or not got:
            how = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
            log(f"{name}: FAIL the check's process ended with {how} before reporting" if not got else
                f"{name}: FAIL the check's process ended with {how} after reporting")
            got.append((name, "FAIL"))
        log(f"  ({name}: {took:.1f} s)")
        results.extend(got)
    failed = [l for l, s in results if s == "FAIL"]
    skipped = [l for l, s in results if s == "SKIP"]
    passed = [l for l, s in results if s == "PASS"]
    log(f"summary: {len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped in "
        f"{time.monotonic() - start:.0f} s")
    if failed:
        log(f"VERDICT: FAIL ({', '.join(failed)})")
        return 1
    if sim:
        log(f"VERDICT: NOT RUN (simulated CUDA driver: the script's plumbing ran, {len(passed)} "
            f"checks passed against the test double, {len(skipped)} need a GPU)")
        return 0
    if not passed:
        log("VERDICT: NOT RUN (no check could run: " + ", ".join(skipped) + ")")
        return 0
    if skipped:
        log(f"VERDICT: PASS (partial; skipped: {', '.join(skipped)})")
        return 0
    log("VERDICT: PASS")
    return 0


def main(argv):
    if argv[1:2] == ["--probe"]:
        return probe()
    if argv[1:2] == ["--run"]:
        return run_all()
    if len(argv) == 3 and argv[1] == "--check" and argv[2] in CHECKS:
        return run_one(argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
