"""Helpers shared by the streams case modules (registers no case).

- fakes(): the fake CUDA driver, HIP runtime and Level Zero loader (tests-c/fake/*.c) the module's
  child_env put first on LD_LIBRARY_PATH, opened by their standard names (the same objects an
  implementation's dlopen of those names gets), with their controls typed
- no_runtime_calls(): a block that must not call any device runtime (every counted entry point of
  the three doubles, initialization included, stays at 0)
- empty_dir(): a folder with no runtime at all, for "no runtime present" modules
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import tempfile

CUDA_NAMES = ("cuInit", "cuCtxGetCurrent", "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuDeviceGet",
              "cuDevicePrimaryCtxRetain", "cuEventCreate", "cuEventRecord", "cuStreamWaitEvent",
              "cuStreamSynchronize", "cuPointerGetAttributes", "cuStreamGetCtx", "cuEventQuery")
HIP_NAMES = ("hipInit", "hipGetDevice", "hipSetDevice", "hipEventCreateWithFlags", "hipEventRecord",
             "hipStreamWaitEvent", "hipStreamSynchronize", "hipPointerGetAttributes",
             "hipRuntimeGetVersion", "hipEventQuery")
ZE_NAMES = ("zeInit", "zeMemGetAllocProperties", "zeDeviceGetRootDevice")

BIG = (1 << 63) - 1
CPU, CUDA, CUDA_HOST, OPENCL, VULKAN, METAL, VPI, ROCM, ROCM_HOST, EXTDEV, CUDA_MANAGED, ONEAPI = \
    1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14
FAMILY = {CPU: "CPU", CUDA: "CUDA", CUDA_HOST: "CUDA", CUDA_MANAGED: "CUDA", ROCM: "ROCM", ROCM_HOST: "ROCM"}


def family(device_type: int) -> str:
    return FAMILY.get(device_type, "OTHER")


class Fake:
    def __init__(self, soname, names):
        self.lib = ctypes.CDLL(soname, mode=os.RTLD_GLOBAL | os.RTLD_NOW)
        self.names = names
        self.lib.fake_count.restype = ctypes.c_long
        self.lib.fake_count.argtypes = [ctypes.c_char_p]
        self.lib.fake_fail.argtypes = [ctypes.c_char_p, ctypes.c_int]
        self.lib.fake_last.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(ctypes.c_void_p)]

    def count(self, name: str) -> int:
        return self.lib.fake_count(name.encode())

    def counts(self) -> dict:
        return {n: self.count(n) for n in self.names}

    def fail(self, name: str, code: int):
        self.lib.fake_fail(name.encode(), code)

    def reset(self):
        self.lib.fake_reset_counts()
        for n in self.names:
            self.fail(n, 0)

    def last(self, name: str):
        a, b = ctypes.c_void_p(), ctypes.c_void_p()
        self.lib.fake_last(name.encode(), ctypes.byref(a), ctypes.byref(b))
        return a.value or 0, b.value or 0


_FAKES = {}


def fakes():
    """(cuda, hip, ze) test doubles, opened once per process."""
    if not _FAKES:
        _FAKES["cuda"] = cu = Fake("libcuda.so.1", CUDA_NAMES)
        cu.lib.fake_register_pointer.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_int]
        cu.lib.fake_set_stream_context.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        cu.lib.fake_pointer_needs_context.argtypes = [ctypes.c_int]
        _FAKES["hip"] = hp = Fake("libamdhip64.so", HIP_NAMES)
        hp.lib.fake_hip_gate.argtypes = [ctypes.c_void_p, ctypes.c_int]
        hp.lib.fake_hip_register.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                             ctypes.c_int]
        _FAKES["ze"] = ze = Fake("libze_loader.so.1", ZE_NAMES)
        ze.lib.fake_ze_register.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint,
                                            ctypes.c_void_p]
        ze.lib.fake_ze_set_root.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    return _FAKES["cuda"], _FAKES["hip"], _FAKES["ze"]


def reset_all():
    for f in fakes():
        f.reset()


@contextlib.contextmanager
def no_runtime_calls(ctx, what=""):
    """The block calls no entry point of any runtime double (loading and initialization included:
    an implementation that loads a runtime calls its initialization)."""
    fs = fakes()
    for f in fs:
        f.lib.fake_reset_counts()
    yield
    for f in fs:
        used = {n: c for n, c in f.counts().items() if c}
        ctx.check(not used, f"{what}: a device runtime was called: {used}")


def empty_dir() -> str:
    """A folder with no library in it (an LD_LIBRARY_PATH that finds no runtime)."""
    d = os.path.join(tempfile.gettempdir(), f"dlpc-empty-{os.getuid()}")
    os.makedirs(d, exist_ok=True)
    return d


def maps_mention(stem: str) -> bool:
    """Whether a file whose name starts with `stem` is mapped in this process."""
    with open("/proc/self/maps") as fh:
        return any(os.path.basename(line.split()[-1]).startswith(stem)
                   for line in fh if "/" in line)
