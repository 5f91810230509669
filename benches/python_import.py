"""Quick side-by-side timing of Python-level DLPack imports (a benchmark, not a test).

Run: .venv/bin/python benches/python_import.py   (after cargo build --release)
Prints per-call times and two ratios: dlpack_helpers.import_tensor vs numpy.from_dlpack, and the
ctypes peer ctypes_dlpack.array_as_dlpack vs dlpack_helpers.import_tensor. Each loop imports and
releases one NumPy array; the best of several repeats is reported.
"""
import os
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("DLPACK_HELPERS_LIBRARY", str(ROOT / "target/release/libdlpack_helpers.so"))

import numpy as np  # noqa: E402

import dlpack_helpers as dh  # noqa: E402

arr = np.arange(16.0)
N, R = 20_000, 7


def best(stmt):
    return min(timeit.repeat(stmt, number=N, repeat=R)) / N * 1e9


def ours():
    dh.import_tensor(arr).release()


def numpy_from_dlpack():
    np.from_dlpack(arr)


results = {"dlpack_helpers.import_tensor + release": best(ours), "numpy.from_dlpack": best(numpy_from_dlpack)}
try:
    import ctypes_dlpack

    def peer():
        p = ctypes_dlpack.array_as_dlpack(arr)
        p.contents.deleter(p)

    results["ctypes_dlpack.array_as_dlpack + deleter"] = best(peer)
except ImportError:
    pass
for k, v in results.items():
    print(f"{k:45s} {v:10.0f} ns/call")
ours_ns = results["dlpack_helpers.import_tensor + release"]
print(f"ratio import_tensor / numpy.from_dlpack      {ours_ns / results['numpy.from_dlpack']:.2f}")
if "ctypes_dlpack.array_as_dlpack + deleter" in results:
    print(f"ratio ctypes_dlpack / import_tensor          {results['ctypes_dlpack.array_as_dlpack + deleter'] / ours_ns:.1f}x")
