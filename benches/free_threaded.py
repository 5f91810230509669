"""Import + release throughput with 1 and 2 threads (issue 36), beside NumPy's ``from_dlpack`` under
the same load. Run by ``scripts/bench --free-threaded`` on the free-threaded CPython (3.13t) and on
the project's CPython (single-thread cost); prints one JSON object. A benchmark: it reports, it
never fails because a machine is slow or busy.

Each thread works on its own NumPy array (a producer object shared by threads would put its
reference count on the hot path, which measures CPython, not this package). The threads are
released together by a barrier; a round's figure is all calls made divided by the wall time of
the slowest thread. Rounds of 1 and 2 threads alternate, so that a change in the machine's load
touches both; the ratio is taken per pair of rounds, and the median pair is reported.
"""
import json
import os
import statistics
import sys
import sysconfig
import threading
import time

import numpy as np

import dlpack_helpers as dh


def ours(a, n):
    imp = dh.import_tensor
    for _ in range(n):
        imp(a).release()


def numpy_from_dlpack(a, n):
    f = np.from_dlpack
    for _ in range(n):
        f(a)


WORKLOADS = {"import_tensor(x).release()": ours, "numpy.from_dlpack(x)": numpy_from_dlpack}


def round_(work, threads, n):
    """(calls per second, calls per CPU-second) of `threads` threads, each making `n` calls on its
    own array. Calls per CPU-second does not depend on how many cores the machine granted: it
    stays put when threads do not contend (no lock, no shared cache line on the hot path)."""
    arrays = [np.arange(16.0) for _ in range(threads)]
    barrier = threading.Barrier(threads + 1)
    ends = [0.0] * threads

    def body(i):
        barrier.wait()
        work(arrays[i], n)
        ends[i] = time.perf_counter()

    ts = [threading.Thread(target=body, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    cpu0 = time.process_time()
    start = time.perf_counter()
    barrier.wait()
    for t in ts:
        t.join()
    cpu = time.process_time() - cpu0
    return threads * n / (max(ends) - start), threads * n / cpu


def report(ft_path, gil_path, ir_path=None):
    """A Markdown table of a free-threaded run and a GIL-enabled run (scripts/bench --free-threaded),
    with callgrind's instructions per call on each interpreter when `ir_path` is given."""
    ft, gil = (json.load(open(p)) for p in (ft_path, gil_path))
    ir = json.load(open(ir_path)) if ir_path else None
    lines = [
        f"Free-threaded CPython {ft['python']} (GIL enabled after import: {ft['gil_enabled']}) beside CPython "
        f"{gil['python']}; {ft['calls_per_thread']:,} calls per thread, {ft['rounds']} alternating rounds of 1 and 2 "
        "threads, medians.",
        "",
        "| workload | 1 thread (calls/s) | 2 threads (calls/s) | speed-up (min-max) | cores the machine gave 2 threads "
        "| per-call CPU efficiency, 2 vs 1 | ns/call 1 thread, 3.13t | ns/call 1 thread, " + gil["python"] + " |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in ft["workloads"].items():
        g = gil["workloads"][name]
        lo, hi = r["speedup_min_max"]
        lines.append(
            f"| `{name}` | {r['1_threads_calls_per_s']:,.0f} | {r['2_threads_calls_per_s']:,.0f} "
            f"| {r['speedup_2_vs_1']:.2f}x ({lo:.2f}-{hi:.2f}) | {r['cores_used_2_threads']:.2f} "
            f"| {r['cpu_efficiency_2_vs_1']:.2f} | {r['ns_per_call_1_thread']:.0f} | {g['ns_per_call_1_thread']:.0f} |")
    if ir:
        lines += ["", "Single-thread cost in instructions (callgrind, independent of the machine's load; the loop's "
                  "own cost included, the interpreter's start-up subtracted):", "",
                  f"| workload | Ir/call, {ft['python']} | Ir/call, {gil['python']} | ratio |", "|---|---|---|---|"]
        for name in ft["workloads"]:
            a, b = ir["free-threaded"][name], ir["gil"][name]
            lines.append(f"| `{name}` | {a:,.0f} | {b:,.0f} | {a / b:.2f} |")
    lines += [
        "",
        "Speed-up is wall-clock throughput; it can reach 2x only when the machine gives the two threads two "
        "cores (the column before). Per-call CPU efficiency (calls per CPU-second with 2 threads / with 1) "
        "does not depend on the cores granted: 1.0 means no lock or shared cache line on the hot path. Both say "
        "something about contention only when the cores column is well above 1 (the threads really overlapped); "
        "on a machine busy with other work they mostly took turns.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    return text


HEAD = "\n## 8. Free-threaded CPython"


def write_section(text, doc_path):
    """Replace (or append) section 8 of docs/performance.md; benches/bench.py keeps it."""
    from pathlib import Path
    out = Path(doc_path)
    doc = out.read_text() if out.exists() else ""
    rest = ""
    if HEAD in doc:
        start = doc.index(HEAD)
        nxt = doc.find("\n## ", start + len(HEAD))
        doc, rest = doc[:start], ("" if nxt < 0 else doc[nxt:])
    intro = (HEAD.lstrip("\n") + "\n\nWritten by `scripts/bench --free-threaded` (issue 36, benches/free_threaded.py): "
             f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} when written.\n\n")
    out.write_text(doc.rstrip("\n") + "\n\n" + intro + text + rest)


def main():
    args = sys.argv[1:]
    if args and args[0] == "--loop":  # `--loop N WORKLOAD`: only the calls, for callgrind
        a = np.arange(16.0)
        WORKLOADS[args[2]](a, int(args[1]))
        return
    if args and args[0] == "--report":
        text = report(args[1], args[2], args[args.index("--ir") + 1] if "--ir" in args else None)
        if "--write" in args:
            write_section(text, args[args.index("--write") + 1])
        return
    threads = [int(x) for x in (args[args.index("--threads") + 1].split(",") if "--threads" in args else ["1", "2"])]
    n = int(args[args.index("--calls") + 1]) if "--calls" in args else 100_000
    pairs = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 7
    for w in WORKLOADS.values():  # warm every lazily initialised path first
        round_(w, max(threads), 1000)
    out = {
        "python": sys.version.split()[0] + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""),
        "gil_enabled": sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True,
        "calls_per_thread": n,
        "rounds": pairs,
        "workloads": {},
    }
    for name, w in WORKLOADS.items():
        per = {k: [] for k in threads}
        cpu = {k: [] for k in threads}
        for _ in range(pairs):
            for k in threads:
                wall_rate, cpu_rate = round_(w, k, n)
                per[k].append(wall_rate)
                cpu[k].append(cpu_rate)
        res = {f"{k}_threads_calls_per_s": statistics.median(v) for k, v in per.items()}
        res.update({f"{k}_threads_calls_per_cpu_s": statistics.median(v) for k, v in cpu.items()})
        # CPU seconds per wall second of the widest rounds: the cores the machine actually gave.
        res[f"cores_used_{threads[-1]}_threads"] = statistics.median(w / c for w, c in zip(per[threads[-1]], cpu[threads[-1]]))
        res["ns_per_call_1_thread"] = 1e9 / statistics.median(per[threads[0]])
        if len(threads) > 1:
            ratios = [b / a for a, b in zip(per[threads[0]], per[threads[-1]])]
            res[f"speedup_{threads[-1]}_vs_{threads[0]}"] = statistics.median(ratios)
            res["speedup_min_max"] = [min(ratios), max(ratios)]
            # Per CPU-second: 1.0 means two threads cost no more per call than one (no contention).
            res[f"cpu_efficiency_{threads[-1]}_vs_{threads[0]}"] = statistics.median(
                b / a for a, b in zip(cpu[threads[0]], cpu[threads[-1]]))
        out["workloads"][name] = res
    print(json.dumps(out))


if __name__ == "__main__":
    main()
