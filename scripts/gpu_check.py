"""The Python half of scripts/gpu-check: run it through that script.

Usage: gpu_check.py PATH/TO/libdlpack_helpers.so
"""
import ctypes
import sys
import time

OK = 0
HANDLE = 5
KDLCPU, KDLCUDA, KDLCUDAHOST, KDLCUDAMANAGED = 1, 2, 3, 13


class Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class Stream(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("handle", ctypes.c_void_p)]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    lib = ctypes.CDLL(sys.argv[1])
    lib.dlpack_last_error_message.restype = ctypes.c_char_p
    lib.dlpack_stream_wait.argtypes = [Device, ctypes.c_void_p, ctypes.POINTER(Stream)]
    lib.dlpack_stream_decode.argtypes = [Device, ctypes.c_bool, ctypes.c_int64, ctypes.c_uint32, ctypes.POINTER(Stream)]
    lib.dlpack_pointer_get_device.argtypes = [ctypes.c_void_p, ctypes.POINTER(Device)]
    lib.dlpack_stream_backend_check.argtypes = [ctypes.c_int32]

    try:
        import torch
    except ImportError:
        print("gpu-check: PyTorch is not importable", file=sys.stderr)
        print("VERDICT: NOT RUN (no PyTorch)")
        return 2
    if not torch.cuda.is_available():
        print("gpu-check: torch.cuda.is_available() is False (no GPU or no driver)", file=sys.stderr)
        print("VERDICT: NOT RUN (no GPU)")
        return 2

    def err():
        return lib.dlpack_last_error_message().decode()

    failures = []

    def check(cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            failures.append(what)

    torch.cuda.init()
    dev_index = torch.cuda.current_device()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(dev_index)}, {torch.cuda.device_count()} device(s)")
    check(lib.dlpack_stream_backend_check(KDLCUDA) == OK, f"CUDA backend loads: {err()}")
    if failures:
        print("VERDICT: FAIL")
        return 1
    device = Device(KDLCUDA, dev_index)

    def wait(producer, consumer):
        s = Stream(HANDLE, consumer.cuda_stream)
        st = lib.dlpack_stream_wait(device, producer.cuda_stream, ctypes.byref(s))
        if st != OK:
            raise RuntimeError(f"dlpack_stream_wait: {st} {err()}")

    # --- Race (cases 24 and 27): a long kernel on A writes, B reads. ---
    a, b = torch.cuda.Stream(), torch.cuda.Stream()
    n = 1 << 22
    x = torch.zeros(n, device="cuda")
    trials = 100
    cycles = 20_000_000  # about 10 ms of spinning on current GPUs

    def trial(value, sync):
        with torch.cuda.stream(a):
            torch.cuda._sleep(cycles)
            x.fill_(value)
        pending_after = None
        if sync:
            wait(a, b)
            pending_after = not a.query()  # the wait did not block the host
        with torch.cuda.stream(b):
            y = x.clone()
        b.synchronize()
        a.synchronize()
        return bool((y == value).all().item()), pending_after

    stale_without = sum(not trial(float(i + 1), False)[0] for i in range(trials))
    results = [trial(float(i + 1 + trials), True) for i in range(trials)]
    stale_with = sum(not r[0] for r in results)
    nonblocking = sum(bool(r[1]) for r in results)
    print(f"race: stale reads without the wait {stale_without}/{trials}, with the wait {stale_with}/{trials}")
    check(stale_with == 0, "case 24: the consumer stream always sees the producer's final data")
    check(stale_without > 0, "the race is real without the wait (else the check above proves nothing)")
    check(nonblocking == trials, f"case 27: the wait returned while the producer kernel was still running ({nonblocking}/{trials})")

    # Legacy default stream as the consumer (stream=1).
    legacy = Stream()
    lib.dlpack_stream_decode(device, True, 1, 0, ctypes.byref(legacy))
    stale_legacy = 0
    for i in range(20):
        with torch.cuda.stream(a):
            torch.cuda._sleep(cycles)
            x.fill_(float(1000 + i))
        st = lib.dlpack_stream_wait(device, a.cuda_stream, ctypes.byref(legacy))
        check(st == OK, f"wait with stream=1: {err()}") if st != OK else None
        with torch.cuda.stream(torch.cuda.default_stream()):
            y = x.clone()
        torch.cuda.synchronize()
        stale_legacy += not bool((y == 1000 + i).all().item())
    check(stale_legacy == 0, f"case 24: legacy default stream (stream=1) consumer, stale {stale_legacy}/20")

    # --- Pinned and managed memory (cases 10 and 12). ---
    def query(ptr):
        d = Device(-1, -1)
        st = lib.dlpack_pointer_get_device(ctypes.c_void_p(ptr), ctypes.byref(d))
        if st != OK:
            raise RuntimeError(err())
        return (d.device_type, d.device_id)

    pinned = torch.empty(1024, pin_memory=True)
    plain = torch.empty(1024)
    on_gpu = torch.empty(1024, device="cuda")
    check(query(pinned.data_ptr()) == (KDLCUDAHOST, 0), f"case 10: pinned memory is (kDLCUDAHost, 0): {query(pinned.data_ptr())}")
    check(query(plain.data_ptr()) == (KDLCPU, 0), f"plain host memory is (kDLCPU, 0): {query(plain.data_ptr())}")
    check(query(on_gpu.data_ptr()) == (KDLCUDA, dev_index), f"device memory is (kDLCUDA, {dev_index}): {query(on_gpu.data_ptr())}")
    cuda = ctypes.CDLL("libcuda.so.1")
    managed = ctypes.c_uint64(0)
    if torch.cuda.device_count() > 1:
        torch.cuda.set_device(1)  # managed memory must still report device id 0
    r = cuda.cuMemAllocManaged(ctypes.byref(managed), ctypes.c_size_t(1 << 20), ctypes.c_uint(1))
    if r == 0:
        check(query(managed.value) == (KDLCUDAMANAGED, 0), f"case 12: managed memory is (kDLCUDAManaged, 0): {query(managed.value)}")
        cuda.cuMemFree_v2(managed)
    else:
        check(False, f"cuMemAllocManaged failed with CUresult {r}")
    torch.cuda.set_device(dev_index)

    # --- Speed: microseconds per wait, ours vs PyTorch. ---
    reps = 20_000
    s = Stream(HANDLE, b.cuda_stream)
    wait_fn, pa = lib.dlpack_stream_wait, a.cuda_stream
    for _ in range(100):
        wait_fn(device, pa, ctypes.byref(s))
    t0 = time.perf_counter()
    for _ in range(reps):
        wait_fn(device, pa, ctypes.byref(s))
    ours = (time.perf_counter() - t0) / reps * 1e6
    ev = torch.cuda.Event()
    t0 = time.perf_counter()
    for _ in range(reps):
        ev.record(a)
        b.wait_event(ev)
    torch_event = (time.perf_counter() - t0) / reps * 1e6
    small = torch.zeros(4, device="cuda")
    with torch.cuda.stream(a):
        t0 = time.perf_counter()
        for _ in range(reps // 4):
            small.__dlpack__(stream=b.cuda_stream)
        torch_dlpack = (time.perf_counter() - t0) / (reps // 4) * 1e6
    torch.cuda.synchronize()
    print(f"speed: dlpack_stream_wait via ctypes {ours:.2f} us/call; torch Event.record+wait_event "
          f"{torch_event:.2f} us; torch __dlpack__(stream=...) {torch_dlpack:.2f} us (includes capsule creation)")

    print("VERDICT: " + ("PASS" if not failures else "FAIL (" + "; ".join(failures) + ")"))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
