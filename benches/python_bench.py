"""Python-level benchmarks on a NumPy array, side by side in one process (a benchmark, not a
test): imports, exports and attribute reads of the native package next to NumPy's own.

  python benches/python_bench.py time [--quick]      -> JSON {case: median ns/call}
  python benches/python_bench.py ratios [--quick]    -> JSON: issue 11's four pairs, min ns of
                                                        interleaved repeats, and their ratios
  python benches/python_bench.py loop CASE N         -> runs CASE N times (for callgrind)
  python benches/python_bench.py rss [--quick]       -> JSON: RSS before/after 10^6 import/release
  python benches/python_bench.py allocs              -> JSON: mallocs per call (LD_PRELOAD malloc_count)
"""
import ctypes
import gc
import json
import os
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The installed package (scripts/common.sh setup_venv: `pip install .`, release build).

import numpy as np  # noqa: E402

import dlpack_helpers as dh  # noqa: E402
from dlpack_helpers import _lib  # noqa: E402

arr = np.arange(16.0)
_out = _lib.PV()
_imp, _del, _byref = _lib.lib.dlpack_object_import, _lib.lib.dlpack_tensor_delete, ctypes.byref
x32 = np.arange(16, dtype=np.float32)  # issue 11's array
T = dh.import_tensor(x32)  # a live Tensor for the export and attribute cases
_status = _lib.lib.dlpack_status_string  # a trivial export: the cost of one ctypes call


def c_import_ctypes():
    _imp(arr, None, _byref(_out), None)
    _del(_out)


def import_tensor():
    dh.import_tensor(arr).release()


def numpy_from_dlpack():
    np.from_dlpack(arr)


def bare_dlpack():
    arr.__dlpack__(max_version=(1, 3))


def ctypes_noop_call():
    _status(0)


CASES = {
    "dlpack_helpers.import_tensor + release": import_tensor,
    "dlpack_object_import + delete via ctypes": c_import_ctypes,
    "numpy.from_dlpack": numpy_from_dlpack,
    "arr.__dlpack__(max_version=(1,3))": bare_dlpack,
    "one ctypes call (dlpack_status_string)": ctypes_noop_call,
}
try:
    import ctypes_dlpack

    def peer():
        p = ctypes_dlpack.array_as_dlpack(arr)
        p.contents.deleter(p)

    CASES["ctypes_dlpack.array_as_dlpack + deleter"] = peer
except ImportError:  # pragma: no cover
    pass


def time_cases(quick):
    n, r = (200, 3) if quick else (20000, 15)
    res = {k: [] for k in CASES}
    for _ in range(r):  # interleave the cases so that machine noise hits all alike
        for k, f in CASES.items():
            nn = max(n // 20, 10) if "ctypes_dlpack" in k else n
            res[k].append(timeit.timeit(f, number=nn) / nn * 1e9)
    return {k: sorted(v)[len(v) // 2] for k, v in res.items()}


# Issue 11's pairs: (ours, NumPy's, target ratio). Each statement is timed with `timeit` in this
# process; the pairs are interleaved and the minimum of the repeats is kept.
PAIRS = {
    "import": ("dh.import_tensor(x32)", "np.from_dlpack(x32)", 1.0),
    "__dlpack__(max_version=(1, 3))": ("T.__dlpack__(max_version=(1, 3))", "x32.__dlpack__(max_version=(1, 3))", 1.5),
    "np.from_dlpack(...)": ("np.from_dlpack(T)", "np.from_dlpack(x32)", 1.5),
    ".shape": ("T.shape", "x32.shape", 2.0),
    ".dtype": ("T.dtype", "x32.dtype", 2.0),
    ".device": ("T.device", "x32.device", 2.0),
}


def ratios(quick):
    n, r = (2000, 3) if quick else (200_000, 9)
    env = {"dh": dh, "np": np, "x32": x32, "T": T}
    best = {k: [float("inf"), float("inf")] for k in PAIRS}
    for _ in range(r):
        for k, (ours, theirs, _) in PAIRS.items():
            for i, stmt in enumerate((ours, theirs)):
                t = timeit.timeit(stmt, globals=env, number=n) / n * 1e9
                best[k][i] = min(best[k][i], t)
    return {k: {"ours_ns": round(a, 1), "numpy_ns": round(b, 1), "ratio": round(a / b, 2),
                "target": PAIRS[k][2], "statements": PAIRS[k][:2]}
            for k, (a, b) in best.items()}


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def rss(quick):
    n = 10_000 if quick else 1_000_000
    for _ in range(10_000):  # warm up: caches, free lists
        dh.import_tensor(arr).release()
    before = rss_kib()
    for _ in range(n):
        dh.import_tensor(arr).release()
    mid = rss_kib()
    for _ in range(n):
        t = dh.import_tensor(arr, max_version=(1, 2))  # the general path (request struct)
        t.release()
    after = rss_kib()
    return {"cycles": n, "rss_before_kib": before, "rss_after_fast_kib": mid, "rss_after_general_kib": after}


def allocs():
    get = ctypes.CDLL(None).malloc_count_get
    get.restype = ctypes.c_ulong
    n = 10000
    out = {}
    def tensor_export():  # issue 26: a view of a validated Tensor (one block: struct, shape, strides)
        T.__dlpack__(max_version=(1, 3))

    def tensor_to_numpy():
        np.from_dlpack(T)

    for k, f in [("bare __dlpack__ + capsule release", bare_dlpack),
                 ("numpy.from_dlpack", numpy_from_dlpack),
                 ("dlpack_helpers.import_tensor + release", import_tensor),
                 ("Tensor.__dlpack__(max_version=(1, 3)) + capsule release", tensor_export),
                 ("numpy.from_dlpack(Tensor)", tensor_to_numpy)]:
        for _ in range(1000):
            f()
        b = get()
        for _ in range(n):
            f()
        out[k] = (get() - b) / n
    return out


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "time"
    quick = "--quick" in sys.argv
    if mode == "time":
        print(json.dumps(time_cases(quick)))
    elif mode == "ratios":
        print(json.dumps(ratios(quick), indent=1))
    elif mode == "loop":
        f, n = CASES[sys.argv[2]], int(sys.argv[3])
        gc.disable()  # instruction counts (bench.py): no collection at a run-dependent moment
        for _ in range(n):
            f()
    elif mode == "rss":
        print(json.dumps(rss(quick)))
    elif mode == "allocs":
        print(json.dumps(allocs()))
