"""Run the whole benchmark suite and write docs/performance.md (driven by scripts/bench).

Usage: python benches/bench.py [--quick] [--out PATH] [--peers-only]
--quick: tiny iteration counts, no callgrind (the smoke run of scripts/test.d/70-bench.sh).
--peers-only: issue 26's rows alone (benches/python_peers.py), printed as JSON.
"""
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "target" / "release"
PY = sys.executable
QUICK = "--quick" in sys.argv
DOC = ROOT / "docs" / "performance.md"
OUT = Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else ROOT / "docs" / "performance.md"
BUILD = Path(tempfile.mkdtemp(prefix="dlpack-bench-"))
ENV = dict(os.environ, LD_LIBRARY_PATH=f"{LIB}:{BUILD}", PYTHONHASHSEED="0")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=kw.pop("env", ENV), **kw).stdout


def cc(out, *srcs, shared=False, libs=()):
    cmd = ["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", f"-I{ROOT}/include", "-o", str(BUILD / out)]
    cmd += ["-shared", "-fPIC"] if shared else []
    cmd += [str(ROOT / s) for s in srcs] + [f"-L{LIB}", f"-L{BUILD}"] + list(libs)
    subprocess.run(cmd, check=True)


def callgrind(cmd, toggle=None, pre=(), env=None):
    """Instructions per function (inclusive) from one callgrind run (`pre`: a command prefix
    outside valgrind, such as `setarch -R`)."""
    f = BUILD / "cg.out"
    vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={f}"]
    if toggle:
        vg += ["--collect-atstart=no", f"--toggle-collect={toggle}"]
    subprocess.run(list(pre) + vg + cmd, check=True, capture_output=True, env=env or ENV)
    return sh(["callgrind_annotate", "--inclusive=yes", "--auto=no", "--threshold=100", str(f)])


def total_ir(cmd):
    """Instructions of a whole run. ASLR off (`setarch -R`, when present) and one BLAS thread:
    with ASLR the two runs of a Python case (N and 3N calls) differed by hundreds of
    instructions per call from hash and allocator layout alone (issue 26)."""
    pre = ["setarch", platform.machine(), "-R"] if shutil_which("setarch") else []
    text = callgrind(cmd, pre=pre, env=dict(ENV, OPENBLAS_NUM_THREADS="1"))
    return int(re.search(r"([\d,]+) \(100.0%\)\s+PROGRAM TOTALS", text).group(1).replace(",", ""))


def c_core():
    cc("libbench_baseline.so", "benches/c/baseline.c", shared=True)
    # -rdynamic: the stub Python's symbols (stub_python.c) are found by the library's dlsym.
    cc("bench_core", "benches/c/bench_core.c", "benches/c/stub_python.c",
       libs=["-ldlpack_helpers", "-lbench_baseline", "-rdynamic"])
    rows = {}
    for line in sh([str(BUILD / "bench_core")] + (["--quick"] if QUICK else [])).splitlines():
        if line.startswith("#"):
            continue
        name, lib, inl, clib = line.split()
        rows[name] = {"lib_ns": float(lib), "inline_ns": float(inl), "clib_ns": float(clib)}
    if not QUICK and shutil_which("valgrind"):
        text = callgrind([str(BUILD / "bench_core"), "--callgrind"], toggle="loop_*")
        calls = 100000 + 100000 // 10 + 1
        for m in re.finditer(r"([\d,]+) \(\s*[\d.]+%\)\s+\S*:loop_(lib|inline|clib)_(\w+)", text):
            ir, kind, name = int(m.group(1).replace(",", "")), m.group(2), m.group(3)
            rows[name][f"{kind}_ir"] = ir / calls
    return rows


def c_allocs():
    cc("bench_alloc", "benches/c/bench_alloc.c", "benches/c/malloc_count.c", libs=["-ldlpack_helpers"])
    return {n: float(v) for n, v in (l.split() for l in sh([str(BUILD / "bench_alloc")]).splitlines())}


def streams():
    cc("libfakecuda.so", "tests-c/fake/fake_cuda.c", shared=True, libs=["-lpthread"])
    cc("bench_stream_threads", "benches/c/bench_stream_threads.c", libs=["-ldlpack_helpers", "-lpthread"])
    env = dict(ENV, DLPACK_HELPERS_CUDA_LIBRARY=str(BUILD / "libfakecuda.so"))
    out = sh([str(BUILD / "bench_stream_threads")] + (["--quick"] if QUICK else []), env=env)
    return [tuple(float(x) for x in l.split()) for l in out.splitlines()]


def python():
    script = str(ROOT / "benches" / "python_bench.py")
    res = {"time": json.loads(sh([PY, script, "time"] + (["--quick"] if QUICK else [])))}
    res["rss"] = json.loads(sh([PY, script, "rss"] + (["--quick"] if QUICK else [])))
    res["ratios"] = json.loads(sh([PY, script, "ratios"] + (["--quick"] if QUICK else [])))
    cc("libmalloc_count.so", "benches/c/malloc_count.c", shared=True)
    res["allocs"] = json.loads(sh([PY, script, "allocs"], env=dict(ENV, LD_PRELOAD=str(BUILD / "libmalloc_count.so"))))
    if not QUICK and shutil_which("valgrind"):
        res["ir"] = {}
        for case in res["time"]:
            # N and 3N calls: with fewer, allocator arenas and GC thresholds of the two
            # processes differ by more than the loop (measured: +-50% at N=2000).
            n = 1000 if "ctypes_dlpack" in case else 10000
            a = total_ir([PY, script, "loop", case, str(n)])
            b = total_ir([PY, script, "loop", case, str(3 * n)])
            res["ir"][case] = (b - a) / (2 * n)
    return res


def peers():
    """Issue 26's pairs (benches/python_peers.py): ours next to NumPy, nanobind and tvm-ffi.
    Both runs build the peer modules once (cached in target/bench-peers by their sources and the
    installed package's place; about 15 s on 2 cores), so the quick run of scripts/test measures
    every row too (by time only)."""
    script = str(ROOT / "benches" / "python_peers.py")
    print(sh([PY, script, "build"]).strip(), file=sys.stderr)
    res = {"time": json.loads(sh([PY, script, "time"] + (["--quick"] if QUICK else [])))}
    if not QUICK and shutil_which("valgrind") and shutil_which("setarch"):
        res["ir"] = peers_ir(PY)
    # The framework rows (PyTorch, Paddle) in the framework part's environment, when it exists
    # (scripts/test frameworks makes it): merged into the rows above.
    fpy = ROOT / ".cache" / "frameworks" / "venv" / "bin" / "python"
    if fpy.exists():
        env = dict(ENV)
        # The SDK peer (and nanobind's, where nanobind is installed there) for that
        # environment's Python and package: the C rows of PyTorch and Paddle.
        try:
            print(sh([str(fpy), script, "build"], env=env).strip(), file=sys.stderr)
        except subprocess.CalledProcessError as e:
            print(f"bench: the peers did not build in the framework environment: {e.stderr[-500:]}",
                  file=sys.stderr)
        try:
            fw = json.loads(sh([str(fpy), script, "time"] + (["--quick"] if QUICK else []), env=env))
            fw_ir = peers_ir(str(fpy), env) if "ir" in res and res["ir"] else None
        except subprocess.CalledProcessError as e:
            print(f"bench: the framework environment's run failed: {e.stderr[-500:]}", file=sys.stderr)
            fw, fw_ir = None, None
        for name in list(fw["rows"] if fw else []):
            if any(k in name for k in ("torch", "paddle")):
                res["time"]["rows"][name] = fw["rows"][name]
                res["time"]["skipped"].pop(name, None)
                if fw_ir and name in fw_ir["rows"]:
                    res["ir"]["rows"][name] = fw_ir["rows"][name]
        for name, why in (fw or {}).get("skipped", {}).items():
            if name in res["time"]["skipped"] and any(k in name for k in ("torch", "paddle")):
                res["time"]["skipped"][name] = f"{why} (framework environment)"
    for name, why in res["time"]["skipped"].items():
        print(f"bench: skipped row {name!r}: {why}", file=sys.stderr)
    return res


def peers_ir(py, env=None):
    """One callgrind run of `python_peers.py ir` (a dump per measured loop), instructions per call.
    Repeatable: ASLR off, hash seed fixed, one BLAS thread, gc off (in the script)."""
    d = Path(tempfile.mkdtemp(prefix="peers-ir-", dir=BUILD))
    env = dict(env or ENV, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
    meta = d / "meta.json"
    cmd = ["setarch", platform.machine(), "-R", "valgrind", "--tool=callgrind", "--dump-before=getppid",
           f"--callgrind-out-file={d / 'cg.out'}", py, str(ROOT / "benches" / "python_peers.py"), "ir"]
    meta.write_text(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)
    return json.loads(sh([PY, str(ROOT / "benches" / "python_peers.py"), "dumps", str(d / "cg.out"), str(meta)]))


def peers_section(pe):
    """Issue 26's rows: before (benches/issue26_before.json) and after, by instructions and time."""
    if not pe:
        return []
    before = json.loads(ISSUE26_BEFORE.read_text()) if ISSUE26_BEFORE.exists() else {}
    bi, bt = before.get("ir", {}).get("rows", {}), before.get("time", {}).get("rows", {})
    ai, at = (pe.get("ir") or {}).get("rows", {}), pe["time"]["rows"]
    L = ["", "### Issue 26: ours next to NumPy, nanobind and tvm-ffi\n",
         "`benches/python_peers.py`: `x = numpy.arange(16, dtype=float32)`, `T = import_tensor(x)`; "
         "`sdk.ndim(obj)` is a C extension (`benches/peers/src/sdk_peer.c`) importing through "
         "`dlpack_object_import` and releasing, as `examples/python_extension` does (`ndim_exchange`: "
         "with `DLPACK_HELPERS_IMPORT_EXCHANGE_API`); `nbp.ndim(a)` is a nanobind function taking "
         "`nb::ndarray<>` (`benches/peers/src/nb_peer.cpp`); `sdk.noop(obj)` is the same C call "
         "without an import. Instructions: Ir per call from one callgrind run (a dump per loop of "
         "5,000 calls, the empty loop subtracted; ASLR off, `PYTHONHASHSEED=0`, one BLAS thread, gc "
         "off). Time: minimum ns of interleaved repeats (shared machine: read as +-30%). *Before*: "
         "the library at the start of issue 26 (`benches/issue26_before.json`), same script.\n",
         "| row | ours | peer | before Ir (ours / peer) | after Ir (ours / peer) | ratio before | ratio after "
         "| before ns (ours / peer) | after ns (ours / peer) | ratio after (ns) | target |",
         "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in at.items():
        b, a, tb = bi.get(name, {}), ai.get(name, {}), bt.get(name, {})
        pair = lambda d, k1, k2: f"{d[k1]:,.0f} / {d[k2]:,.0f}" if k1 in d else "-"
        tgt = f"<= {r['target']}" if r.get("target") else "(the C import alone)"
        L.append(f"| {name} | `{r['ours']}` | `{r['peer']}` | {pair(b, 'ours_ir', 'peer_ir')} | "
                 f"{pair(a, 'ours_ir', 'peer_ir')} | {fmt(b.get('ratio'), 2)} | {fmt(a.get('ratio'), 2)} | "
                 f"{pair(tb, 'ours_ns', 'peer_ns')} | {pair(r, 'ours_ns', 'peer_ns')} | {r['ratio']:.2f} | {tgt} |")
    for name, why in pe["time"]["skipped"].items():
        L.append(f"| {name} | skipped: {why} | | | | | | | | | |")
    return L


def slope(pts):
    """Least-squares slope of (x, y) points; None for fewer than two."""
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def shutil_which(x):
    import shutil
    return shutil.which(x)


def machine():
    cpu = "unknown"
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    gcc = sh(["gcc", "--version"]).splitlines()[0]
    rustc = sh(["rustc", "--version"]).strip()
    return (f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs, load average "
            f"{os.getloadavg()[0]:.1f} at start; Python {platform.python_version()}, "
            f"NumPy {__import__('numpy').__version__}; {rustc}; {gcc}")


def fmt(x, d=1):
    return "-" if x is None else f"{x:.{d}f}"


def report(core, allocs, thr, py):
    L = [f"# Performance\n",
         f"Generated by `scripts/bench` on {date.today()} ({'quick smoke run' if QUICK else 'full run'}). "
         "Do not edit by hand: rerun `scripts/bench`.\n",
         f"**Machine:** {machine()}.\n",
         "The machine is shared and noisy (2 cores, other builds running): wall-clock medians move "
         "by 2x between runs. The **instruction counts** (callgrind, `Ir` per call) are the "
         "repeatable figures and the ones the targets are judged on; the nanoseconds are medians "
         "of repeated interleaved runs, for scale.\n",
         "## 1. C helpers through the shared library\n",
         "Each helper is called through the PLT of `libdlpack_helpers.so` with real DLPack structs "
         "(`benches/c/bench_core.c`), and the same logic is run two more ways in the same process: "
         "**inline** in the benchmark loop, and as a **C library** (`benches/c/baseline.c`, built "
         "with `gcc -O2` as `libbench_baseline.so`) called through the PLT exactly like ours. "
         "Inputs vary per iteration and every result passes a compiler barrier, so no variant is "
         "hoisted out of its loop.\n",
         "| helper | ours ns | C lib ns | inline ns | ours Ir | C lib Ir | inline Ir | ours / C lib (Ir) | ours / inline (Ir) |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in core.items():
        if name in SCALING_ONLY:
            continue
        li, ci, ii = r.get("lib_ir"), r.get("clib_ir"), r.get("inline_ir")
        L.append(f"| `dlpack_{name}` | {fmt(r['lib_ns'])} | {fmt(r['clib_ns'])} | {fmt(r['inline_ns'])} | "
                 f"{fmt(li, 0)} | {fmt(ci, 0)} | {fmt(ii, 0)} | {fmt(li / ci if li and ci else None, 2)} | "
                 f"{fmt(li / ii if li and ii else None, 2)} |")
    L += ["",
          "Ir counts include the benchmark loop itself (about 8-10 instructions per iteration: "
          "input, barrier, counter), the same in every column.\n",
          "`tensor_validate_Nd`: `dlpack_tensor_validate(t, {REQUIRE_C_CONTIGUOUS}, NULL)` on a "
          "C-contiguous float32 tensor of N dimensions (extents 2), its `byte_offset` varying per "
          "iteration; the baselines check the same rules (version, flags, ndim, NULL shape and "
          "strides, extents, element count, byte range and `byte_offset` without overflow, dtype "
          "code/bits/lanes, NULL data, address range, C-contiguity). `tensor_layout`: "
          "`dlpack_tensor_layout` of the 4-d tensor (numel, nbytes, byte range, C/F/compact, "
          "broadcast, negative strides, alignment). `legacy_to_versioned` / `versioned_to_legacy`: "
          "validate and wrap a 4-d tensor (one allocation holding struct, shape and strides), "
          "then call the wrapper's deleter, which frees it and releases the original once; the "
          "baselines do the same with `malloc`/`free`. `tensor_create`: describe the caller's 4-d "
          "buffer as a new managed tensor (validated with default options, one allocation), then "
          "release it through its deleter (which calls the release callback). `compact_strides`: "
          "row- or column-major strides of a 4-d shape. `dtype_format` / `dtype_parse`: 8 dtypes "
          "(`float32`, `int64`, `bfloat16`, `float8_e4m3fn`, `uint8`, `float16x4`, `complex64`, "
          "`bool`) to and from their names; `device_format` / `device_parse`: 8 devices (`cpu:0`, "
          "`cuda:1`, `cuda_host`, `rocm:3`, ...). The C baselines (`benches/c/baseline.h`) check "
          "the same rules in the same order and write the same outputs as ours: statuses, "
          "out-parameters written only on OK, the same names.\n",
          ]
    if BEFORE.exists():
        L += ["**Before and after issue 15** (ours / C library, instructions; \"before\": the "
              "library at the commit before the work, measured on this machine with this benchmark "
              "and these baselines, `benches/ir_before.json`; the baselines were made to check "
              "every rule ours checks in the same work, so the old figures of this table, against "
              "baselines that skipped checks, are not comparable):\n",
              "| helper | before Ir | after Ir | C lib Ir | before ratio | after ratio |",
              "|---|---:|---:|---:|---:|---:|"]
        before = json.loads(BEFORE.read_text())
        for name, b in before.items():
            r = core.get(name, {})
            li, ci = r.get("lib_ir"), r.get("clib_ir")
            L.append(f"| `dlpack_{name}` | {b['lib']:.0f} | {fmt(li, 0)} | {fmt(ci, 0)} | "
                     f"{b['lib'] / b['clib']:.2f} | {fmt(li / ci if li and ci else None, 2)} |")
        L.append("")
    L += [
          "## 2. Python import of a NumPy array\n",
          "One import plus release of `numpy.arange(16.0)` per call (`benches/python_bench.py`); "
          "cases interleaved in one process; Ir per call from callgrind (difference of two runs "
          "of N and 3N calls, so interpreter start-up cancels).\n",
          "| case | median ns | Ir per call |", "|---|---:|---:|"]
    for k, v in py["time"].items():
        L.append(f"| {k} | {v:.0f} | {fmt(py.get('ir', {}).get(k), 0)} |")
    t, ir = py["time"], py.get("ir", {})
    ours, npy = "dlpack_helpers.import_tensor + release", "numpy.from_dlpack"
    peer = "ctypes_dlpack.array_as_dlpack + deleter"
    L.append("")
    for label, src in (("time", t), ("instructions", ir)):
        if ours in src and npy in src:
            L.append(f"- by {label}: import_tensor / numpy.from_dlpack = **{src[ours] / src[npy]:.2f}**"
                     + (f"; ctypes_dlpack / import_tensor = **{src[peer] / src[ours]:.1f}x**" if peer in src else ""))
    L += ["", "Issue 11's pairs (`python_bench.py ratios`: `x = numpy.arange(16, dtype=float32)`, "
          "`T = import_tensor(x)`; minimum ns of interleaved repeats):\n",
          "| pair | ours ns | NumPy ns | ratio | target |", "|---|---:|---:|---:|---:|"]
    for k, v in py.get("ratios", {}).items():
        L.append(f"| `{v['statements'][0]}` vs `{v['statements'][1]}` | {v['ours_ns']:.0f} | "
                 f"{v['numpy_ns']:.0f} | {v['ratio']:.2f} | <= {v['target']} |")
    L += peers_section(py.get("peers"))
    L += ["",
          "## 3. Memory\n",
          "Heap allocations per call (malloc/calloc/realloc/memalign counted by "
          "`benches/c/malloc_count.c`; C helpers after a warm-up call):\n",
          "| C helper | allocations per call |", "|---|---:|"]
    L += [f"| `dlpack_{k}` | {v:g} |" for k, v in allocs.items()]
    L += ["", "Python process, malloc calls per import + release (CPython's small-object allocator "
          "serves Python objects, so these count C heap use: ours and NumPy's):\n",
          "| case | malloc calls per call |", "|---|---:|"]
    L += [f"| {k} | {v:g} |" for k, v in py["allocs"].items()]
    r = py["rss"]
    L += ["", f"Resident memory over {r['cycles']:,} import/release cycles of `import_tensor`, then "
          f"as many through the general path (a request struct): {r['rss_before_kib']:,} KiB before, "
          f"{r['rss_after_fast_kib']:,} KiB after the first run, {r['rss_after_general_kib']:,} KiB "
          "after the second: "
          + ("**flat**." if max(r['rss_after_fast_kib'], r['rss_after_general_kib']) - r['rss_before_kib'] < 1024
             else "**grew**: investigate."), "",
          "## 4. Scaling\n",
          "`dlpack_stream_wait` (event record + wait) on the CUDA driver test double "
          "(`tests-c/fake/fake_cuda.c`) from N threads at once (`benches/c/bench_stream_threads.c`):\n",
          "| threads | ns per call per thread | calls per second, all threads |", "|---:|---:|---:|"]
    L += [f"| {int(n)} | {ns:.0f} | {cps:,.0f} |" for n, ns, cps in thr]
    L += ["", "The test double takes one global mutex per driver call (it counts calls), and this "
          "machine has 2 cores, so throughput cannot grow past 2 threads here; what the table shows "
          "is that it does not collapse either (no lock of ours on the path: the driver table and "
          "the event pool are initialised once and read lock-free).\n",
          "Validation cost against ndim: `dlpack_tensor_validate` with `REQUIRE_C_CONTIGUOUS` on "
          "C-contiguous float32 tensors (extents 2; for ndim 64 every other extent is 1 so that "
          "the element count, 2^32, fits), against the same rules in C (section 1):\n",
          "| ndim | ours ns | C lib ns | inline ns | ours Ir | C lib Ir | inline Ir | ours / C lib (Ir) |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for nd in (1, 2, 4, 8, 16, 32, 64):
        r = core.get(f"tensor_validate_{nd}d")
        if not r:
            continue
        li, ci, ii = r.get("lib_ir"), r.get("clib_ir"), r.get("inline_ir")
        L.append(f"| {nd} | {fmt(r['lib_ns'])} | {fmt(r['clib_ns'])} | {fmt(r['inline_ns'])} | "
                 f"{fmt(li, 0)} | {fmt(ci, 0)} | {fmt(ii, 0)} | {fmt(li / ci if li and ci else None, 2)} |")
    L += ["", "`dlpack_tensor_layout` of the same tensors:\n",
          "| ndim | ours Ir | C lib Ir | ours / C lib (Ir) |", "|---:|---:|---:|---:|"]
    for nd in (1, 2, 4, 8, 16, 32, 64):
        r = core.get("tensor_layout" if nd == 4 else f"tensor_layout_{nd}d")
        if not r:
            continue
        li, ci = r.get("lib_ir"), r.get("clib_ir")
        L.append(f"| {nd} | {fmt(li, 0)} | {fmt(ci, 0)} | {fmt(li / ci if li and ci else None, 2)} |")
    L += ["", "**Slope per dimension** (instructions per added dimension: least-squares fit over "
          "ndim 1-32, where every extent is 2, and the step from 32 to 64 dimensions, where half "
          "the extents are 1 and are skipped by both sides):\n",
          "| helper | ours Ir/dim (1-32) | C lib Ir/dim (1-32) | ours Ir/dim (32-64) | C lib Ir/dim (32-64) |",
          "|---|---:|---:|---:|---:|"]
    for label, key in (("dlpack_tensor_validate", lambda nd: f"tensor_validate_{nd}d"),
                       ("dlpack_tensor_layout", lambda nd: "tensor_layout" if nd == 4 else f"tensor_layout_{nd}d")):
        cols = []
        for kind in ("lib_ir", "clib_ir"):
            pts = [(nd, core.get(key(nd), {}).get(kind)) for nd in (1, 2, 4, 8, 16, 32)]
            pts = [(x, y) for x, y in pts if y]
            cols.append(slope(pts))
        for kind in ("lib_ir", "clib_ir"):
            a, b = core.get(key(32), {}).get(kind), core.get(key(64), {}).get(kind)
            cols.append((b - a) / 32 if a and b else None)
        L.append(f"| `{label}` | " + " | ".join(fmt(c, 1) for c in cols) + " |")
    L.append("")
    L.append(NOTES.read_text())  # read at the end: the notes may be edited during a long run
    # Section 6 (artifact sizes) is written by benches/sizes.py, not by this run: keep it.
    sizes = DOC.read_text() if DOC.exists() else ""
    if "\n## 6. Artifact sizes" in sizes:
        L.append(sizes[sizes.index("\n## 6. Artifact sizes") + 1:].rstrip("\n"))
    OUT.write_text("\n".join(L) + "\n")


SCALING_ONLY = {"tensor_validate_2d", "tensor_validate_16d", "tensor_validate_32d", "tensor_validate_64d",
                "tensor_layout_1d", "tensor_layout_2d", "tensor_layout_8d", "tensor_layout_16d",
                "tensor_layout_32d", "tensor_layout_64d"}
BEFORE = Path(__file__).resolve().parent / "ir_before.json"
ISSUE26_BEFORE = Path(__file__).resolve().parent / "issue26_before.json"
NOTES = Path(__file__).resolve().parent / "performance_notes.md"

if __name__ == "__main__":
    if "--peers-only" in sys.argv:  # issue 26's rows alone, as JSON (benches/issue26_before.json)
        print(json.dumps(peers(), indent=1))
        sys.exit(0)
    core = c_core()
    allocs = c_allocs()
    thr = streams()
    py = python()
    py["peers"] = peers()
    report(core, allocs, thr, py)
    print(f"wrote {OUT}")
