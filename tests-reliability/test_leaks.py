"""Leak checks over many round trips through the Python embedding.

Each scenario runs a warm-up of N/2 round trips, then N round trips, and must leave:
- no live producer object: every array handed to a consumer is collected (weakref), so no
  reference is leaked by capsules, views or deleters;
- Python allocations flat: tracemalloc's traced size grows by less than a small bound;
- the process RSS flat: it grows by less than a bound far below what one leaked buffer per round
  trip would cost (each round trip's array is 64 KiB; a leak of it would add N * 64 KiB).
The bounds are memory sizes, not times.
"""
from __future__ import annotations

import gc
import os
import tracemalloc
import weakref

import numpy as np
import pyarrow as pa
import pytest

import dlpack_helpers as dh

ROUNDS = int(os.environ.get("DLPACK_HELPERS_LEAK_ROUNDS", "3000"))
ELEMS = 8192  # float64: 64 KiB per array


class Alive:
    """Counts producer objects not yet collected (weakref.finalize: nothing kept once they die)."""

    def __init__(self):
        self.n = 0
        self.made = 0

    def append(self, obj):
        self.n += 1
        self.made += 1
        weakref.finalize(obj, self._dead)

    def _dead(self):
        self.n -= 1


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Legacy:
    """An older producer: __dlpack__ takes no keywords (TypeError retry path, legacy struct)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)


class Raises:
    def __init__(self, exc):
        self.exc = exc

    def __dlpack__(self, **kw):
        raise self.exc("no export today")

    def __dlpack_device__(self):
        raise self.exc("no device today")


class Plain:
    """No DLPack methods at all."""


class NotACapsule:
    def __dlpack__(self, **kw):
        return object()

    def __dlpack_device__(self):
        return ("x", 0)


def rt_numpy(alive):
    a = np.arange(ELEMS, dtype=np.float64)
    alive.append(a)
    with dh.import_tensor(a) as t:
        b = np.from_dlpack(t)  # a view exported back out, kept alive by t
        assert b[7] == 7.0
        del b


def rt_case_3_capsule_unconsumed(alive):
    a = np.arange(ELEMS, dtype=np.float64)
    alive.append(a)
    t = dh.import_tensor(a)
    cap = t.__dlpack__(max_version=(1, 3))  # dies unconsumed: the destructor releases it
    del cap
    t.release()


def rt_typeerror_retry_legacy(alive):
    a = np.arange(ELEMS, dtype=np.float64)
    alive.append(a)
    with dh.import_tensor(Legacy(a)) as t:
        # The legacy wrap: 1.3 rules (strides filled in), read-only (peer case 50).
        assert t.version == (1, 3) and t.readonly


def rt_pyarrow(alive):
    arr = pa.array(np.arange(ELEMS, dtype=np.float64))
    alive.append(arr)
    with dh.import_tensor(arr) as t:
        assert t.shape == (ELEMS,)


def rt_case_21_error_paths(alive):
    for obj in (Raises(BufferError), Raises(NotImplementedError), Raises(TypeError), NotACapsule(), Plain()):
        alive.append(obj)
        for call in (dh.import_tensor, dh.device):
            try:
                call(obj)
            except (BufferError, TypeError, ValueError, AttributeError, RuntimeError):
                pass
            else:
                raise AssertionError(f"{call.__name__}({obj!r}) did not raise")


SCENARIOS = [rt_numpy, rt_case_3_capsule_unconsumed, rt_typeerror_retry_legacy, rt_pyarrow, rt_case_21_error_paths]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_no_leak_over_many_round_trips(scenario):
    alive = Alive()
    # Warm-up, traced too: caches and free lists (Python's and the library's per-type caches)
    # fill here; the measured phase after it must then stay flat.
    tracemalloc.start()
    for _ in range(ROUNDS // 2):
        scenario(alive)
    gc.collect()
    base_py = tracemalloc.get_traced_memory()[0]
    base_rss = rss_bytes()
    for _ in range(ROUNDS):
        scenario(alive)
    gc.collect()
    grown_py = tracemalloc.get_traced_memory()[0] - base_py
    tracemalloc.stop()
    grown_rss = rss_bytes() - base_rss
    assert alive.n == 0, f"{scenario.__name__}: {alive.n} of {alive.made} producer objects still alive after {ROUNDS} round trips"
    # 32 bytes per round trip would be 96 KB: a leaked object per round trip cannot hide here.
    assert grown_py < 32 * 1024, f"{scenario.__name__}: Python allocations grew by {grown_py} bytes"
    assert grown_rss < 8 * 1024 * 1024, f"{scenario.__name__}: RSS grew by {grown_rss} bytes over {ROUNDS} round trips"
    print(f"\n{scenario.__name__}: {ROUNDS} round trips, tracemalloc {grown_py:+d} B, RSS {grown_rss:+d} B, 0 producers alive")
