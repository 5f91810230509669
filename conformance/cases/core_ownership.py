"""Core: ownership, deleters, threads, re-entrancy, fork and interpreter state
(spec/03-ownership-threads.md, OWN-*), and the two view rules that need a process of their own
(PY-TENSOR-NEW-VIEW-VALIDATED-5: no Python in the process; -11: after finalization).

Left to the python profile's cases: OWN-CAPSULE-1..3 (capsules are Python objects made and
consumed by python-profile functions) and OWN-PY-3 (Python exceptions of python and exchange
profile functions).
"""
import ctypes
import hashlib
import os
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

from harness import build
from harness import layout_model as M
from harness import tensors as X
from harness.cheader import render
from harness.registry import case

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"


def child_env(fixtures):
    return {"LD_LIBRARY_PATH": build.fake_drivers()}


def vp(ctx):
    return ctypes.POINTER(ctx.T.DLManagedTensorVersioned)


def program(ctx, name, extra=()):
    """Build fixtures/<name>.c as an executable against the manifest's C header (cached)."""
    cc = os.environ.get("CC", "cc")
    header = render(ctx.m)
    src = (FIX / f"{name}.c").read_bytes()
    h = hashlib.sha256(src + header.encode() + " ".join(extra).encode()).hexdigest()[:16]
    d = build.cache_dir() / f"prog-{h}"
    exe = d / name
    if exe.exists():
        return exe
    d.mkdir(parents=True, exist_ok=True)
    (d / "dlpc_abi.h").write_text(header)
    tmp = d / f"{name}.tmp{os.getpid()}"
    cmd = [cc, "-std=gnu11", "-O1", "-g", "-Wall", "-I", str(d), str(FIX / f"{name}.c"), "-o", str(tmp),
           "-ldl", "-pthread", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"building {name} failed:\n{' '.join(cmd)}\n{p.stderr}")
    os.replace(tmp, exe)
    return exe


def clean_env():
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


@case("python.tensor_new_view_validated.no_python_in_process", profile="python",
      covers=["PY-TENSOR-NEW-VIEW-VALIDATED-5", "OWN-PY-2"])
def _(ctx):
    exe = program(ctx, "fx_nopython")
    p = subprocess.run([str(exe), os.path.abspath(ctx.lib_path)], capture_output=True, text=True, timeout=20,
                       env=clean_env())
    ctx.check(p.returncode == 0, f"in a process without Python (exit {p.returncode}): {p.stdout.strip()} {p.stderr.strip()}")


@case("python.tensor_new_view_validated.release_after_finalize", profile="python",
      covers=["PY-TENSOR-NEW-VIEW-VALIDATED-11", "PY-TENSOR-NEW-VIEW-VALIDATED-10", "OWN-DELETER-9"])
def _(ctx):
    inc = sysconfig.get_paths()["include"]
    libdir = sysconfig.get_config_var("LIBDIR")
    ver = sysconfig.get_config_var("LDVERSION") or sysconfig.get_python_version()
    if not os.path.exists(os.path.join(inc, "Python.h")) or not libdir:
        ctx.skip("no CPython headers or library to embed")
    try:
        exe = program(ctx, "fx_embed", [f"-I{inc}", f"-L{libdir}", f"-lpython{ver}", f"-Wl,-rpath,{libdir}"])
    except RuntimeError as e:
        ctx.skip(f"cannot embed CPython here: {str(e).splitlines()[-1]}")
    env = clean_env()
    env["PYTHONHOME"] = sys.base_prefix
    p = subprocess.run([str(exe), os.path.abspath(ctx.lib_path)], capture_output=True, text=True, timeout=20, env=env)
    ctx.check(p.returncode == 0, f"embedded interpreter (exit {p.returncode}): {p.stdout.strip()} {p.stderr.strip()[-400:]}")


# -- OWN-PY-4: deleters run in the caller's interpreter state -------------------------------------
def gil_fixture(ctx):
    lib = ctypes.CDLL(str(build.build("dlpc_gil", [FIX / "fx_gil.c"], ["-ldl"])))
    for n in ("fx_gil_deleter_versioned_address", "fx_gil_deleter_legacy_address"):
        getattr(lib, n).restype = ctypes.c_void_p
    return lib


@case("core.tensor_delete.deleter_in_callers_state", profile="core", covers=["OWN-PY-4", "OWN-DELETER-5"])
def _(ctx):
    g = gil_fixture(ctx)
    for caller, fn, held in (("GIL held", ctx.pf, 1), ("GIL released", ctx.f, 0)):
        # A producer's versioned tensor released by dlpack_tensor_delete.
        p, _ = ctx.make_versioned(poison=False)
        ctx.versioned(p).deleter = g.fx_gil_deleter_versioned_address()
        g.fx_gil_reset()
        fn.dlpack_tensor_delete(ctx.vptr(p))
        ctx.check(g.fx_gil_calls() == 1 and g.fx_gil_last() == held,
                  f"{caller}: deleter calls {g.fx_gil_calls()}, GIL state seen {g.fx_gil_last()}, expected {held}")
        # A legacy tensor released through the library's own wrapper.
        q, _ = ctx.make_legacy(poison=False)
        ctx.T.DLManagedTensor.from_address(q).deleter = g.fx_gil_deleter_legacy_address()
        w = vp(ctx)()
        ctx.ok(ctx.f.dlpack_legacy_tensor_wrap(ctx.lptr(q), 0, 0, ctypes.byref(w)))
        g.fx_gil_reset()
        fn.dlpack_tensor_delete(w)
        ctx.check(g.fx_gil_calls() == 1 and g.fx_gil_last() == held,
                  f"{caller}, through a wrapper: calls {g.fx_gil_calls()}, GIL state {g.fx_gil_last()}, expected {held}")


# -- threads ---------------------------------------------------------------------------------------
@case("core.threads.shared_reads_concurrently", profile="core", covers=["OWN-THREAD-1"])
def _(ctx):
    # Eight threads, released together, validate and lay out the same tensors and create, wrap and
    # release their own: every answer must be the one-thread answer (the model's).
    rows = [X.desc(shape=(2, 3), strides=(3, 1)), X.desc(shape=(4,), strides=(-2,), byte_offset=24),
            X.desc(shape=(1 << 62, 4), strides=(0, 0)), X.desc(shape=(0, 5)), X.desc(shape=(-1,))]
    made = [(X.dltensor(ctx, d), X.resolved(ctx, d)) for d in rows]
    barrier = threading.Barrier(8)
    errors = []

    def work(k):
        barrier.wait()
        try:
            for _ in range(30):
                for p, r in made:
                    lay = X.sentinel_layout(ctx)
                    st = ctx.f.dlpack_dltensor_validate(ctx.dptr(p), ctx.T.DLPackVersion(1, 3), 0, None, ctypes.byref(lay))
                    want, wl = M.validate(r, (1, 3), 0, None)
                    if st != ctx.m.status(want) or (want == "OK" and X.layout_dict(lay) != wl):
                        errors.append(f"thread {k}: validate {ctx.status_name(st)}, expected {want}")
                    if st != 0 and not ctx.last_error():
                        errors.append("empty message")
                out = vp(ctx)()
                rec = ctx.fx.fx_record_new()
                sh = (ctypes.c_int64 * 2)(2, 3)
                st = ctx.f.dlpack_tensor_create(ctypes.c_void_p(0x1000), ctx.T.DLDevice(1, 0), 2, sh, None,
                                                ctx.T.DLDataType(2, 32, 1), 0, 0, ctx.RELEASE_CTX, rec, ctypes.byref(out))
                if st != 0:
                    errors.append(f"create {ctx.status_name(st)}")
                    continue
                ctx.f.dlpack_tensor_delete(out)
                if ctx.calls(rec) != 1:
                    errors.append(f"release ran {ctx.calls(rec)} times")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    ctx.check(not errors, f"{len(errors)} wrong answers under concurrency: {errors[:3]}")


FIRST_CALLS = r'''
import ctypes, os, sys, threading, json
sys.path.insert(0, sys.argv[1])
from harness.context import Context
from harness import layout_model as M, tensors as X
ctx = Context.load({"manifest": sys.argv[2], "lib": sys.argv[3], "claimed": None})
N = 8
barrier = threading.Barrier(N)
out = [None] * N
d = X.desc(shape=(2, 3), strides=(3, 1), device=(14, 0), data=0x10000)
p = X.dltensor(ctx, d)
bad = X.dltensor(ctx, X.desc(shape=(-1,), strides=(1,)))
opts, _ = X.options(ctx, flags=M.V_RESOLVE | M.V_CPU)
class Owner: pass
owner = Owner()
def work(k):
    barrier.wait()
    r = []
    r.append(ctx.f.dlpack_dltensor_validate(ctx.dptr(bad), ctx.T.DLPackVersion(1, 3), 0, None, None))
    r.append(len(ctx.last_error()) > 0)
    r.append(ctx.f.dlpack_dltensor_validate(ctx.dptr(p), ctx.T.DLPackVersion(1, 3), 0, opts, None))
    if ctx.f.has("dlpack_tensor_new_view_validated"):  # python profile: only where exported
        v = ctypes.POINTER(ctx.T.DLManagedTensorVersioned)()
        r.append(ctx.pf.dlpack_tensor_new_view_validated(ctx.dptr(p), 0, ctypes.c_void_p(id(owner)), ctypes.byref(v)))
        if v:
            ctx.f.dlpack_tensor_delete(v)
    out[k] = r
ts = [threading.Thread(target=work, args=(k,)) for k in range(N)]
[t.start() for t in ts]
[t.join() for t in ts]
calls = {}
for lib, fns in (("libze_loader.so.1", [b"zeInit"]), ("libcuda.so.1", [b"cuInit"]), ("libamdhip64.so", [b"hipInit"])):
    try:
        h = ctypes.CDLL(lib, mode=os.RTLD_NOLOAD)
    except OSError:
        continue
    h.fake_count.restype = ctypes.c_long
    for f in fns:
        calls[f.decode()] = h.fake_count(f)
print(json.dumps({"results": out, "calls": calls, "refs": sys.getrefcount(owner)}))
'''


@case("core.threads.first_calls_concurrent", profile="core", covers=["OWN-THREAD-3"], timeout=60)
def _(ctx):
    # A fresh process: its very first calls into the library come from eight threads released by
    # a barrier (one-time initialisation: thread-local error storage, the run-time lookup of
    # CPython for views, of the Level Zero loader for RESOLVE_HOST_ACCESS).
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-c", FIRST_CALLS, str(ROOT), ctx.spec["manifest"],
                        os.path.abspath(ctx.lib_path)], capture_output=True, text=True, timeout=50, env=env)
    ctx.check(p.returncode == 0, f"the process failed (exit {p.returncode}): {p.stderr.strip()[-500:]}")
    import json
    res = json.loads(p.stdout.strip().splitlines()[-1])
    S = ctx.S
    want = [S.INVALID_SHAPE, True, S.NOT_CPU_ACCESSIBLE] + ([S.OK] if ctx.f.has("dlpack_tensor_new_view_validated") else [])
    bad = [r for r in res["results"] if r != want]
    ctx.check(not bad, f"threads disagree with the one-thread answers {want}: {bad[:2]}")
    for name, n in res["calls"].items():
        ctx.check(n <= 1, f"{name} called {n} times: initialisation not done at most once")


# -- re-entrancy from a deleter --------------------------------------------------------------------
DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@case("core.reentry.from_a_deleter", profile="core", covers=["OWN-REENTRY-1", "OWN-THREAD-4", "OWN-DELETER-8"])
def _(ctx):
    # A legacy producer's deleter (Python code, run by the library's wrapper deleter) calls the
    # library on other objects on its own thread and on a second thread it waits for: a lock
    # held around the deleter would deadlock (the case then hangs and fails).
    seen = []

    def inner_calls(tag):
        p = X.dltensor(ctx, X.desc(shape=(2, 3), strides=(3, 1)))
        lay = X.sentinel_layout(ctx)
        seen.append((tag, "validate", ctx.f.dlpack_dltensor_validate(ctx.dptr(p), ctx.T.DLPackVersion(1, 3), 0, None,
                                                                     ctypes.byref(lay)), lay.numel))
        out = vp(ctx)()
        rec = ctx.fx.fx_record_new()
        sh = (ctypes.c_int64 * 1)(4)
        st = ctx.f.dlpack_tensor_create(ctypes.c_void_p(0x1000), ctx.T.DLDevice(1, 0), 1, sh, None,
                                        ctx.T.DLDataType(2, 32, 1), 0, 0, ctx.RELEASE_CTX, rec, ctypes.byref(out))
        seen.append((tag, "create", st, 0))
        q, qrec = ctx.make_legacy()
        w = vp(ctx)()
        seen.append((tag, "wrap", ctx.f.dlpack_legacy_tensor_wrap(ctx.lptr(q), 0, 0, ctypes.byref(w)), 0))
        ctx.f.dlpack_tensor_delete(w)
        ctx.f.dlpack_tensor_delete(out)
        seen.append((tag, "released", ctx.calls(rec) + ctx.calls(qrec), 2))

    @DELETER
    def deleter(self):
        inner_calls("same thread")
        t = threading.Thread(target=inner_calls, args=("other thread",))
        t.start()
        t.join()
        seen.append(("deleter", "ran", 0, 0))

    keep = deleter  # noqa: F841 (the callback must outlive the call)
    for fn in ("wrap", "to_legacy_then_wrap"):
        seen.clear()
        p, rec = ctx.make_legacy(poison=False)
        L = ctx.T.DLManagedTensor.from_address(p)
        L.deleter = ctypes.cast(deleter, ctypes.c_void_p).value
        w = vp(ctx)()
        ctx.ok(ctx.f.dlpack_legacy_tensor_wrap(ctx.lptr(p), 0, 0, ctypes.byref(w)))
        if fn == "to_legacy_then_wrap":
            l2 = ctypes.POINTER(ctx.T.DLManagedTensor)()
            ctx.ok(ctx.f.dlpack_versioned_to_legacy(w, 1, None, ctypes.byref(l2)))
            ctx.f.dlpack_legacy_tensor_delete(l2)
        else:
            ctx.f.dlpack_tensor_delete(w)
        ctx.check(("deleter", "ran", 0, 0) in seen, f"{fn}: the producer's deleter did not run")
        for tag, what, st, extra in seen:
            if what in ("validate", "create", "wrap"):
                ctx.check(st == 0, f"{fn}, {tag}: {what} gave {ctx.status_name(st)} inside a deleter")
            if what == "validate":
                ctx.check(extra == 6, f"{fn}, {tag}: numel {extra} inside a deleter")
            if what == "released":
                ctx.check(st == 2, f"{fn}, {tag}: {st} of 2 releases inside a deleter")


@case("core.reentry.outer_error_message_last", profile="core", covers=["OWN-REENTRY-2", "OWN-REENTRY-1"])
def _(ctx):
    # dlpack_tensor_check_version_or_delete runs the deleter of a major-2 tensor and fails; a
    # deleter that makes a failing call of its own must not leave its message behind.
    inner = {}

    @DELETER
    def failing(self):
        inner["st"] = ctx.f.dlpack_get_device(None, None)
        inner["msg"] = ctx.last_error()

    @DELETER
    def quiet(self):
        pass

    msgs = []
    for d in (quiet, failing):
        p, _ = ctx.make_versioned(version=(2, 0), poison=False)
        ctx.versioned(p).deleter = ctypes.cast(d, ctypes.c_void_p).value
        compat = ctypes.c_int32(0x5A)
        st = ctx.f.dlpack_tensor_check_version_or_delete(ctx.vptr(p), ctypes.byref(compat))
        ctx.expect(st, "UNSUPPORTED_VERSION")
        msgs.append(ctx.last_error())
    ctx.expect(inner.get("st", -1), "NULL_POINTER", what="the deleter's own failing call")
    ctx.check(msgs[1] == msgs[0], "after a deleter's failing call the message is not the outer call's refusal")
    ctx.check(msgs[1] != inner["msg"], "the deleter's message was left as the outer call's")


# -- free-threaded CPython -------------------------------------------------------------------------
@case("core.threads.free_threaded_views", profile="core", covers=["OWN-FREE-1"])
def _(ctx):
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        ctx.skip("this interpreter is not a free-threaded build")
    owner = type("Owner", (), {})()
    before = sys.getrefcount(owner)
    p = X.dltensor(ctx, X.desc(shape=(2, 3), strides=(3, 1)))
    barrier = threading.Barrier(8)
    errors = []

    def work():
        barrier.wait()
        for _ in range(200):
            out = vp(ctx)()
            st = ctx.pf.dlpack_tensor_new_view_validated(ctx.dptr(p), 0, ctypes.c_void_p(id(owner)), ctypes.byref(out))
            if st != 0:
                errors.append(st)
                continue
            ctx.f.dlpack_tensor_delete(out)

    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    ctx.check(not errors and sys.getrefcount(owner) == before,
              f"{len(errors)} failures, {sys.getrefcount(owner) - before} references left")


# -- fork ------------------------------------------------------------------------------------------
@case("core.fork.child_behaves_as_parent", profile="core", covers=["OWN-FORK-1"])
def _(ctx):
    rows = [X.desc(shape=(2, 3), strides=(3, 1)), X.desc(shape=(1 << 62, 4), strides=(0, 0)),
            X.desc(shape=(-1,)), X.desc(shape=(3,), dtype=(0, 4, 1)), X.desc(shape=None, ndim=1)]
    made = [(X.dltensor(ctx, d), X.resolved(ctx, d)) for d in rows]

    def run_all():
        """The answers of a few core functions, checked against the model; also exercises
        thread-local error storage, create/delete and a wrap in whichever process runs it."""
        bad = []
        for p, r in made:
            lay = X.sentinel_layout(ctx)
            st = ctx.f.dlpack_dltensor_validate(ctx.dptr(p), ctx.T.DLPackVersion(1, 3), 0, None, ctypes.byref(lay))
            want, wl = M.validate(r, (1, 3), 0, None)
            if st != ctx.m.status(want) or (want == "OK" and X.layout_dict(lay) != wl):
                bad.append(f"validate {ctx.status_name(st)} vs {want}")
            if st != 0 and not ctx.last_error():
                bad.append("empty message")
        out = vp(ctx)()
        rec = ctx.fx.fx_record_new()
        sh = (ctypes.c_int64 * 2)(2, 3)
        if ctx.f.dlpack_tensor_create(ctypes.c_void_p(0x1000), ctx.T.DLDevice(1, 0), 2, sh, None,
                                      ctx.T.DLDataType(2, 32, 1), 0, 1, ctx.RELEASE_CTX, rec, ctypes.byref(out)) != 0:
            bad.append("create failed")
        else:
            l2 = ctypes.POINTER(ctx.T.DLManagedTensor)()
            if ctx.f.dlpack_versioned_to_legacy(out, 1, None, ctypes.byref(l2)) != 0:
                bad.append("to_legacy failed")
            else:
                ctx.f.dlpack_legacy_tensor_delete(l2)
            if ctx.calls(rec) != 1:
                bad.append(f"release ran {ctx.calls(rec)} times")
        return bad

    bad = run_all()
    ctx.check(not bad, f"in the parent: {bad}")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running any Python exit code
        try:
            os.close(r)
            res = run_all()
            os.write(w, ("\n".join(res) or "ok").encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    ctx.check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"the forked child died (status {status})")
    ctx.check(data == b"ok", f"in the forked child: {data.decode(errors='replace')}")
