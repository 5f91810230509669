"""Ownership with real producers: import/export/release cycles leave no memory behind (Python
objects by tracemalloc, C allocations by the resident set size), and whatever order the Tensor,
its unconsumed capsules and the arrays exported from it are dropped in, the producer's deleter
runs exactly once, after the last of them (NumPy's deleter drops one reference to the source
array: the source's reference count returns exactly to where it was)."""
import gc
import itertools
import os
import sys
import tracemalloc

import numpy as np
import pytest

import dlpack_helpers as dh

pa = pytest.importorskip("pyarrow")

# Cycle counts: the resident set over 100,000 cycles (a few seconds); tracemalloc slows every
# Python allocation by about ten times, so it watches 10,000 (still ~10 bytes per cycle resolution).
RSS_CYCLES = 100_000
TRACED_CYCLES = 10_000
WARMUP = 5_000


def _cycle(x):
    t = dh.import_tensor(x)  # import from an object
    a = np.from_dlpack(t)  # export a view to NumPy
    c = t.__dlpack__(max_version=(1, 3))  # export a capsule ...
    u = dh.import_tensor(c)  # ... and import the raw capsule
    legacy = t.__dlpack__()  # an unconsumed legacy capsule
    t.release()
    u.release()
    del a, c, u, legacy


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="no /proc/self/statm")
def test_cycles_are_flat_in_resident_memory():
    x = np.arange(16, dtype=np.float32)
    for _ in range(WARMUP):
        _cycle(x)
    gc.collect()
    before = _rss()
    for _ in range(RSS_CYCLES):
        _cycle(x)
    gc.collect()
    grown = _rss() - before
    # A leaked managed tensor (struct, shape, strides) is over 100 bytes: 10 MB over the run.
    assert grown < 2 * 1024 * 1024, f"resident set grew by {grown} bytes over {RSS_CYCLES} cycles"


def test_cycles_are_flat_in_tracemalloc():
    x = np.arange(16, dtype=np.float32)
    tracemalloc.start()
    try:
        for _ in range(WARMUP // 5):
            _cycle(x)
        gc.collect()
        before = tracemalloc.take_snapshot()
        for _ in range(TRACED_CYCLES):
            _cycle(x)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    stats = after.compare_to(before, "lineno")
    grown = sum(s.size_diff for s in stats)
    top = "\n".join(str(s) for s in stats[:5])
    # One leaked object per cycle is at least 16 bytes x 10,000.
    assert grown < 64 * 1024, f"Python memory grew by {grown} bytes over {TRACED_CYCLES} cycles:\n{top}"


HOLDERS = ["tensor", "numpy", "pyarrow", "capsule", "legacy_capsule", "reimported"]


def _holders(src):
    t = dh.import_tensor(src)
    return {
        "tensor": t,
        "numpy": np.from_dlpack(t),
        "pyarrow": pa.Tensor.from_dlpack(t),
        "capsule": t.__dlpack__(max_version=(1, 3)),  # exported, never consumed
        "legacy_capsule": t.__dlpack__(),  # exported through the legacy struct, never consumed
        "reimported": dh.import_tensor(t.__dlpack__(max_version=(1, 3))),  # a Tensor over a view
    }


@pytest.mark.parametrize("order", list(itertools.permutations(HOLDERS)), ids="-".join)
def test_every_drop_order_releases_the_producer_once(order):
    src = np.arange(6.0).reshape(2, 3)[:, ::2]
    base = sys.getrefcount(src)
    held = _holders(src)
    assert sys.getrefcount(src) == base + 1  # one managed tensor, one reference from its manager
    for i, name in enumerate(order):
        obj = held.pop(name)
        if isinstance(obj, dh.Tensor):
            obj.release()
        del obj
        if held:
            assert sys.getrefcount(src) == base + 1, f"released after dropping {order[:i + 1]}"
    assert sys.getrefcount(src) == base, "the producer was not released exactly once"
