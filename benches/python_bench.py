"""Python-level import benchmarks on a NumPy array, side by side in one process (a benchmark,
not a test). Each case imports one array and releases it.

  python benches/python_bench.py time [--quick]      -> JSON {case: median ns/call}
  python benches/python_bench.py loop CASE N         -> runs CASE N times (for callgrind)
  python benches/python_bench.py rss [--quick]       -> JSON: RSS before/after 10^6 import/release
  python benches/python_bench.py allocs              -> JSON: mallocs per call (LD_PRELOAD malloc_count)
"""
import ctypes
import json
import os
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("DLPACK_HELPERS_LIBRARY", str(ROOT / "target/release/libdlpack_helpers.so"))

import numpy as np  # noqa: E402

import dlpack_helpers as dh  # noqa: E402
from dlpack_helpers import _lib  # noqa: E402

arr = np.arange(16.0)
_out = _lib.PV()
_imp, _del, _byref = _lib.lib.dlpack_object_import, _lib.lib.dlpack_tensor_delete, ctypes.byref
_fast = dh._import_owned
_status = _lib.lib.dlpack_status_string  # a trivial export: the cost of one ctypes call


def c_import_ctypes():
    _imp(arr, None, _byref(_out), None)
    _del(_out)


def c_import_builtin():
    _fast(arr)  # the owner capsule dies at once: its destructor calls the deleter


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
    "builtin import_owned (C entry, no ctypes)": c_import_builtin,
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
    for k, f in [("bare __dlpack__ + capsule release", bare_dlpack),
                 ("numpy.from_dlpack", numpy_from_dlpack),
                 ("builtin import_owned + release", c_import_builtin),
                 ("dlpack_helpers.import_tensor + release", import_tensor)]:
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
    elif mode == "loop":
        f, n = CASES[sys.argv[2]], int(sys.argv[3])
        for _ in range(n):
            f()
    elif mode == "rss":
        print(json.dumps(rss(quick)))
    elif mode == "allocs":
        print(json.dumps(allocs()))
