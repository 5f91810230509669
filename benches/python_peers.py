"""Issue 26's pairs: our exports and imports next to NumPy's, nanobind's and tvm-ffi's, side by
side in one process (a benchmark, not a test).

  python benches/python_peers.py build              -> builds the peer modules (benches/peers) into
                                                      target/bench-peers/<hash of the sources> once;
                                                      prints the folder, or "skip: <reason>"
  python benches/python_peers.py time [--quick]     -> JSON {row: {ours_ns, peer_ns, ...}}
  python benches/python_peers.py ir                 -> runs the loops, a callgrind dump point between
                                                      them (run under --dump-before=getppid, as
                                                      benches/bench.py `peers_ir` does); prints their order
  python benches/python_peers.py dumps PREFIX META  -> JSON {row: {ours_ir, peer_ir, ratio}} from the dumps

Every row is a pair of statements, ours first. Rows whose peer is missing (the peer modules not
built, nanobind, tvm-ffi, PyTorch or Paddle not installed) are left out with a reason in
"skipped". Instruction counts: one callgrind run; `mark()` (libc's getppid) starts a new
callgrind dump before each measured loop, so each loop's instructions are read from its own dump
and the empty loop's are subtracted. Repeatable only with PYTHONHASHSEED=0, gc disabled,
OPENBLAS_NUM_THREADS=1 and ASLR off (`setarch -R`), as benches/bench.py runs it.
"""
import gc
import glob
import hashlib
import json
import os
import subprocess
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS_SRC = ROOT / "benches" / "peers"
CACHE = ROOT / "target" / "bench-peers"


def _peer_key():
    h = hashlib.sha256()
    for p in sorted(PEERS_SRC.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(PEERS_SRC)).encode() + b"\0" + p.read_bytes())
    # The C peer links libdlpack_helpers.so by its SONAME with the run path of the installed
    # package (a stable ABI): a rebuilt library needs no rebuilt peer, another install place does.
    import dlpack_helpers
    h.update(str(Path(dlpack_helpers.__file__).parent).encode())
    h.update(sys.version.encode())
    return h.hexdigest()[:16]


def peer_dir():
    d = CACHE / _peer_key()
    return d if (d / ".built").exists() else None


def build():
    """Build both peers once per source hash (pip + scikit-build-core, no build isolation)."""
    d = peer_dir()
    if d:
        return d
    try:
        import nanobind  # noqa: F401
    except ImportError:
        print("note: nanobind not installed (pip install -r benches/peers/requirements.txt): "
              "building the SDK peer only", file=sys.stderr)
    d = CACHE / _peer_key()
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--no-build-isolation", "--target", str(d),
                    "-Cbuild-dir=" + str(CACHE / "build" / d.name), str(PEERS_SRC)], check=True)
    (d / ".built").write_text("")
    return d


def load_peers():
    """(sdk module or None, nanobind module or None, reason for each missing one)."""
    d = peer_dir()
    if not d:
        why = "peer modules not built (scripts/bench builds them once: benches/python_peers.py build)"
        return None, None, {"sdk": why, "nanobind": why}
    sys.path.insert(0, str(d))
    why = {}
    try:
        import bench_sdk_peer as sdk
    except ImportError as e:
        sdk, why["sdk"] = None, f"bench_sdk_peer did not load: {e}"
    try:
        import bench_nb_peer as nbp
    except ImportError:
        nbp, why["nanobind"] = None, "nanobind not installed when the peers were built"
    return sdk, nbp, why


import numpy as np  # noqa: E402

import dlpack_helpers as dh  # noqa: E402

x = np.arange(16, dtype=np.float32)  # issue 11's and 26's array
T = dh.import_tensor(x)              # a live Tensor: our exports, and our own exchange table
sdk, nbp, SKIPPED = load_peers()
ENV = {"np": np, "dh": dh, "x": x, "T": T, "sdk": sdk, "nbp": nbp}
try:
    import tvm_ffi
    ENV["tvm_ffi"] = tvm_ffi
except ImportError as e:  # pragma: no cover
    tvm_ffi = None
    SKIPPED["tvm_ffi"] = f"apache-tvm-ffi not installed ({e})"
FRAMEWORKS = {}
for name, make in (("torch", "torch.arange(16, dtype=torch.float32)"),
                   ("paddle", "paddle.arange(16, dtype='float32')")):
    try:
        ENV[name] = __import__(name)
        FRAMEWORKS[name] = ENV[f"{name}_t"] = eval(make, ENV)
    except Exception as e:  # noqa: BLE001 (not installed, or broken: a reason, never a failure)
        SKIPPED[name] = (f"{name} not importable here ({type(e).__name__}: {e}); its rows come from "
                         "the framework environment (scripts/test frameworks makes it; scripts/bench "
                         "then uses it)")

# (row, ours, peer, target ratio ours/peer or None, what it needs). Each statement makes and drops
# its result in the statement: an import includes the release.
ROWS = [
    ("export", "T.__dlpack__(max_version=(1, 3))", "x.__dlpack__(max_version=(1, 3))", 1.0, ()),
    ("np.from_dlpack", "np.from_dlpack(T)", "np.from_dlpack(x)", 1.0, ()),
    ("C ext import vs nanobind", "sdk.ndim(x)", "nbp.ndim(x)", 1.0, ("sdk", "nanobind")),
    ("import_tensor vs nanobind", "dh.import_tensor(x)", "nbp.ndim(x)", 1.1, ("nanobind",)),
    ("import_tensor vs np.from_dlpack", "dh.import_tensor(x)", "np.from_dlpack(x)", 1.0, ()),
    ("table: import_tensor(Tensor) vs tvm_ffi", "dh.import_tensor(T)", "tvm_ffi.from_dlpack(T)", 0.8,
     ("tvm_ffi",)),
    ("table: C ext import of a Tensor vs tvm_ffi", "sdk.ndim_exchange(T)", "tvm_ffi.from_dlpack(T)", 0.8,
     ("sdk", "tvm_ffi")),
    ("table: C ext import of a Tensor, the import alone", "sdk.ndim_exchange(T)", "sdk.noop(T)", None,
     ("sdk",)),
]
for fw in ("torch", "paddle"):
    ROWS += [
        (f"table: import_tensor({fw}) vs tvm_ffi", f"dh.import_tensor({fw}_t)",
         f"tvm_ffi.from_dlpack({fw}_t)", 0.8, (fw, "tvm_ffi")),
        (f"table: C ext import of {fw} vs tvm_ffi", f"sdk.ndim_exchange({fw}_t)",
         f"tvm_ffi.from_dlpack({fw}_t)", 0.8, (fw, "sdk", "tvm_ffi")),
        (f"table: C ext import of {fw}, the import alone", f"sdk.ndim_exchange({fw}_t)", f"sdk.noop({fw}_t)",
         None, (fw, "sdk")),
    ]


def rows():
    """The rows whose needs are met; (row, reason) for the others."""
    have = {"sdk": sdk, "nanobind": nbp, "tvm_ffi": tvm_ffi, **FRAMEWORKS}
    ok, skip = [], {}
    for r in ROWS:
        missing = [n for n in r[4] if have.get(n) is None]
        if missing:
            skip[r[0]] = SKIPPED.get(missing[0], f"{missing[0]} missing")
        else:
            ok.append(r)
    return ok, skip


def loop_fn(stmt):
    ns = dict(ENV)
    exec(f"def run(n):\n    for _ in range(n):\n        {stmt}\n", ns)
    return ns["run"]


def time_rows(quick):
    n, r = (2000, 3) if quick else (100_000, 9)
    ok, skip = rows()
    best = {row[0]: [float("inf"), float("inf")] for row in ok}
    fns = {row[0]: (loop_fn(row[1]), loop_fn(row[2])) for row in ok}
    for _ in range(r):  # interleaved: machine noise hits both sides alike
        for name, (a, b) in fns.items():
            for i, f in enumerate((a, b)):
                best[name][i] = min(best[name][i], timeit.timeit(lambda: f(n), number=1) / n * 1e9)
    out = {}
    for row in ok:
        a, b = best[row[0]]
        out[row[0]] = {"ours": row[1], "peer": row[2], "target": row[3], "ours_ns": round(a, 1),
                       "peer_ns": round(b, 1), "ratio": round(a / b, 3)}
    return {"rows": out, "skipped": skip}


def mark():
    """A callgrind dump point: libc's getppid, which nothing on the measured paths calls (the peer
    module is not needed, so the framework environment's run is counted the same way)."""
    os.getppid()


def ir_rows(n=5000):
    """Run under callgrind --dump-before=getppid: each loop is one dump (see the module doc)."""
    gc.disable()
    ok, skip = rows()
    stmts = ["pass"] + sorted({s for row in ok for s in row[1:3]})
    for s in stmts:  # warm up every path first: caches, free lists, interned names
        loop_fn(s)(500)
    order = []
    for s in stmts:
        f = loop_fn(s)
        mark()
        f(n)
        order.append(s)
    mark()
    return {"n": n, "order": order, "rows": [list(r[:4]) for r in ok], "skipped": skip}


def read_dumps(prefix, meta):
    """Ir per call for each statement from the callgrind dumps of `ir_rows`."""
    files = sorted(glob.glob(prefix + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]) if p.rsplit(".", 1)[1].isdigit() else -1)
    totals = []
    for p in files:
        for line in open(p):
            if line.startswith(("totals:", "summary:")):
                totals.append(int(line.split()[1]))
                break
    # Dump k (1-based) is written on entering the k-th mark(): dump 1 is start-up and warm-up,
    # dump k+1 the k-th loop.
    seg = totals[1:1 + len(meta["order"])]
    per = dict(zip(meta["order"], seg))
    empty = per["pass"]
    ir = {s: (v - empty) / meta["n"] for s, v in per.items()}
    out = {}
    for name, ours, peer, target in meta["rows"]:
        out[name] = {"ours": ours, "peer": peer, "target": target, "ours_ir": round(ir[ours]),
                     "peer_ir": round(ir[peer]), "ratio": round(ir[ours] / ir[peer], 3) if ir[peer] else None}
    return {"rows": out, "skipped": meta["skipped"]}


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "time"
    if mode == "build":
        print(build())
    elif mode == "time":
        print(json.dumps(time_rows("--quick" in sys.argv), indent=1))
    elif mode == "ir":
        print(json.dumps(ir_rows()))
    elif mode == "dumps":
        print(json.dumps(read_dumps(sys.argv[2], json.loads(Path(sys.argv[3]).read_text())), indent=1))
