"""Streams: dlpack_tensor_delete_after_stream at the edges of a process, each in a child process
of its own (a python interpreter that loads the library and the fake HIP runtime):
- a release still pending (its stream's gate closed) when the process exits: no release, no
  runtime call for it, the exit status unchanged, no hang (STREAMS-TENSOR-DELETE-AFTER-STREAM-11);
- a process where no thread can be started (pthread_create preloaded to fail with EAGAIN): the
  release is refused with BACKEND_UNAVAILABLE and the tensor stays unreleased
  (STREAMS-TENSOR-DELETE-AFTER-STREAM-12).
"""
import os
import subprocess
import sys

from harness import build
from harness.registry import case

SCRIPT = r"""
import ctypes, os, sys, time
sys.path.insert(0, os.environ["DLPC_ROOT"])
from harness.manifest import Manifest
m = Manifest.load(os.environ["DLPC_MANIFEST"])
lib = ctypes.CDLL(os.environ["DLPC_LIB"])
das = m.bind(lib, "dlpack_tensor_delete_after_stream")
T = {n: m.struct(n) for n in ("DLDevice", "DLManagedTensorVersioned", "DLPackVersion")}
hip = ctypes.CDLL("libamdhip64.so", mode=os.RTLD_GLOBAL)
hip.fake_hip_gate.argtypes = [ctypes.c_void_p, ctypes.c_int]
hip.fake_count.argtypes = [ctypes.c_char_p]
hip.fake_count.restype = ctypes.c_long
hip.fake_hip_gate(0x4100, 1)

@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def deleter(t):
    os.write(1, b"RELEASED\n")

t = T["DLManagedTensorVersioned"]()
t.version = T["DLPackVersion"](1, 3)
t.deleter = ctypes.cast(deleter, ctypes.c_void_p).value
st = das(ctypes.byref(t), T["DLDevice"](10, 0), 0x4100)
os.write(1, b"STATUS %d\n" % st)
if os.environ.get("DLPC_MODE") == "exit":
    end = time.monotonic() + 20
    while hip.fake_count(b"hipEventQuery") < 2 and time.monotonic() < end:
        time.sleep(0.001)
    os.write(1, b"QUERIES %d\n" % hip.fake_count(b"hipEventQuery"))
    sys.exit(3)
sys.exit(0)
"""


def run_child(ctx, mode, preload=None):
    env = dict(os.environ, DLPC_ROOT=ctx.spec["root"], DLPC_MANIFEST=ctx.spec["manifest"], DLPC_LIB=ctx.lib_path,
               DLPC_MODE=mode, LD_LIBRARY_PATH=build.fake_drivers(), DLPACK_HELPERS_HIP_LIBRARY="")
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = preload
    try:
        p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        ctx.check(False, f"{mode}: the child process hung")
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


@case("streams.tensor_delete_after_stream.pending_at_exit", profile="streams",
      covers=["STREAMS-TENSOR-DELETE-AFTER-STREAM-11"], timeout=60)
def _(ctx):
    ctx.f.dlpack_tensor_delete_after_stream  # a missing function skips (or fails) here, not in the child
    for _ in range(3):
        rc, out, err = run_child(ctx, "exit")
        ctx.check(f"STATUS {ctx.S.OK}" in out, f"the release was not queued: {out!r} {err[-500:]!r}")
        ctx.check("QUERIES" in out and int(out.split("QUERIES")[1].split()[0]) >= 2, f"the event was not queried: {out!r}")
        ctx.check("RELEASED" not in out, "a pending tensor was released at exit")
        ctx.check(rc == 3, f"the exit status changed: {rc} (stderr {err[-500:]!r})")


@case("streams.tensor_delete_after_stream.no_thread", profile="streams",
      covers=["STREAMS-TENSOR-DELETE-AFTER-STREAM-12"], timeout=60)
def _(ctx):
    ctx.f.dlpack_tensor_delete_after_stream  # a missing function skips (or fails) here, not in the child
    shim = str(build.build("dlpc_nothread", [build.FIXTURES / "fx_nothread.c"]))
    rc, out, err = run_child(ctx, "nothread", preload=shim)
    ctx.check(f"STATUS {ctx.S.BACKEND_UNAVAILABLE}" in out,
              f"with no thread startable: {out!r} (stderr {err[-500:]!r}), expected status {ctx.S.BACKEND_UNAVAILABLE}")
    ctx.check("RELEASED" not in out, "the tensor was released though refused")
    ctx.check(rc == 0, f"the child failed: {rc} {err[-500:]!r}")
