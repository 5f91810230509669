"""Streams: runtimes the application loads after the library found none (STREAMS-STREAM-
BACKEND-CHECK-8, STREAMS-POINTER-CLASSIFY-12), under renamed copies whose file names are the
family stem followed by '-' (STREAMS-STREAM-BACKEND-CHECK-2), and the initialization rules (once
per process even when first asked from several threads at once; no context, stream or event made
by loading). The search path is an empty folder: at start every runtime is absent."""
import atexit
import ctypes
import os
import shutil
import tempfile
import threading

from harness import build
from harness.registry import case

from cases import _common as C
from cases._streams import Fake, empty_dir, CUDA_NAMES, HIP_NAMES


def child_env(fixtures):
    build.fake_drivers()  # built now, copied by the case
    return {"LD_LIBRARY_PATH": empty_dir(), "DLPACK_HELPERS_CUDA_LIBRARY": "", "DLPACK_HELPERS_HIP_LIBRARY": ""}


def renamed_copy(soname, newname):
    src = os.path.realpath(os.path.join(build.fake_drivers(), soname))
    d = tempfile.mkdtemp(prefix="dlpc-late-")
    # removed when the child exits (a loaded library's file may go; its mapping stays)
    atexit.register(shutil.rmtree, d, True)
    dst = os.path.join(d, newname)
    shutil.copy(src, dst)
    return dst


@case("streams.stream_backend_check.runtime_loaded_later", profile="streams",
      covers=["STREAMS-STREAM-BACKEND-CHECK-2", "STREAMS-STREAM-BACKEND-CHECK-4", "STREAMS-STREAM-BACKEND-CHECK-5",
              "STREAMS-STREAM-BACKEND-CHECK-8", "STREAMS-STREAM-BACKEND-CHECK-12", "STREAMS-POINTER-CLASSIFY-12"])
def _(ctx):
    ptr = C._libc.mmap(None, C.PAGE, 0, C.MAP_PRIVATE_ANON, -1, 0)
    info_t = ctx.T.dlpack_helpers_pointer_info

    def classify():
        info = info_t(ctypes.sizeof(info_t))
        ctx.ok(ctx.f.dlpack_pointer_classify(ptr, None, ctypes.byref(info)))
        return info.memory_class, (info.device.device_type, info.device.device_id), info.answered_by

    for dt in (2, 10):
        ctx.expect(ctx.f.dlpack_stream_backend_check(dt), "BACKEND_UNAVAILABLE", what=f"{dt} before any runtime")
    ctx.check(classify()[0] == ctx.K.DLPACK_HELPERS_MEMORY_HOST, "no runtime: not host memory")
    # the application loads a CUDA driver (a renamed copy) by its own path
    cu = Fake(renamed_copy("libcuda.so.1", "libcuda-late.so.1"), CUDA_NAMES)
    cu.lib.fake_register_pointer.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_int]
    cu.lib.fake_register_pointer(ptr, 2, 0, 1)
    ctx.check(cu.count("cuInit") == 0, "cuInit already called")
    for dt in (2, 3, 13):
        ctx.ok(ctx.f.dlpack_stream_backend_check(dt), what=f"device type {dt} after the application loaded CUDA")
    ctx.check(cu.count("cuInit") == 1, f"cuInit called {cu.count('cuInit')} times")
    made = {n: cu.count(n) for n in ("cuDevicePrimaryCtxRetain", "cuEventCreate", "cuCtxPushCurrent_v2")}
    ctx.check(not any(made.values()), f"loading the driver made contexts or events: {made}")
    got = classify()
    ctx.check(got == (ctx.K.DLPACK_HELPERS_MEMORY_DEVICE, (2, 1), 1), f"CUDA memory after the late load: {got}")
    # HIP, first asked from 8 threads at once: initialized once
    hp = Fake(renamed_copy("libamdhip64.so", "libamdhip64-late.so"), HIP_NAMES)
    n = 8
    barrier = threading.Barrier(n)
    res = [None] * n

    def go(i):
        barrier.wait()
        res[i] = ctx.f.dlpack_stream_backend_check(10 if i % 2 else 11)

    ts = [threading.Thread(target=go, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    ctx.check(all(r == ctx.S.OK for r in res), f"concurrent first checks: {res}")
    for _ in range(5):
        ctx.ok(ctx.f.dlpack_stream_backend_check(10))
    ctx.check(hp.count("hipInit") == 1, f"hipInit called {hp.count('hipInit')} times")
    ctx.check(hp.count("hipEventCreateWithFlags") == 0 and hp.count("hipSetDevice") == 0, "loading HIP made events or set devices")
