"""The package under real parallelism (issue 36): on a free-threaded CPython (the free-threaded part
of scripts/test runs this file there with the GIL off) these threads run at once; with the GIL they
interleave. Every test holds what it needs: threads are released together by a barrier, each
lazily initialised path is first reached in a fresh child process, and what is checked is an
outcome (values, exactly-once deleters, the thread a deleter ran on), never a time.

The producer is NumPy: each exported array is kept alive by its DLPack export until the managed
tensor's deleter runs, so a weak reference's callback on the array says when, and on which thread,
the deleter ran."""
import ctypes
import gc
import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
import weakref

import numpy as np
import pytest

import dlpack_helpers as dh
from ctypes import byref, c_void_p
from dlpack_helpers._lib import lib
from producers import Counter, take

THREADS = 8
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(dh.__file__)))


def run_threads(n, work):
    """Run work(i) on n threads released together by a barrier; re-raise the first failure."""
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait()
            work(i)
        except BaseException as e:  # noqa: BLE001 - reported below with its thread
            errors.append((i, e))

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        i, e = errors[0]
        raise AssertionError(f"thread {i} of {n} failed ({len(errors)} failed): {e!r}") from e


class Deaths:
    """Weak references to producer arrays: how many died, and on which threads."""

    def __init__(self):
        self.died = []  # (label, thread ident); list.append is atomic on every CPython
        self._refs = []

    def watch(self, arr, label):
        self._refs.append(weakref.ref(arr, lambda _r, label=label: self.died.append((label, threading.get_ident()))))
        return arr

    def labels(self):
        return sorted(label for label, _ in self.died)


class ThreadCounter(Counter):
    """A producer (tests-py/producers.py) whose deleter records the thread it ran on."""

    def __init__(self):
        super().__init__()
        self.on = []  # (managed tensor address, thread ident); list.append is atomic

    def _delete(self, p):
        self.on.append((ctypes.addressof(p.contents), threading.get_ident()))

    def owned_capsule(self):
        p = self.versioned()
        out = c_void_p()
        assert lib.dlpack_capsule_new(p, byref(out)) == 0
        return ctypes.addressof(p.contents), take(out)


def test_gil_state_after_import_is_the_interpreters():
    """Importing the package never turns the GIL back on (the module declares gil_used = false)."""
    if FREE_THREADED:
        assert os.environ.get("PYTHON_GIL") is None, "PYTHON_GIL would force the answer"
        assert sys._is_gil_enabled() is False
    elif hasattr(sys, "_is_gil_enabled"):
        assert sys._is_gil_enabled() is True


FIRST_CALLS = textwrap.dedent(r"""
    import sys, sysconfig, threading
    import numpy as np
    import dlpack_helpers as dh
    N = int(sys.argv[1])
    barrier = threading.Barrier(N)
    errors, seen = [], []
    src = [np.arange(12.0).reshape(3, 4) * (i + 1) for i in range(N)]
    class Wrapped:                      # a type first seen by N threads at once (exchange cache)
        def __init__(self, a): self.a = a
        def __dlpack__(self, **kw): return self.a.__dlpack__(**kw)
        def __dlpack_device__(self): return self.a.__dlpack_device__()
    def work(i):
        try:
            barrier.wait()
            t = dh.import_tensor(src[i])            # C API resolution, cached names, ndarray's cache entry
            a = np.from_dlpack(t)                   # Tensor.__dlpack__: version memo, owner capsule, plan memo
            t2 = dh.import_tensor(t)                # Tensor's own exchange table: its cache entry
            b = np.from_dlpack(t2)
            t3 = dh.import_tensor(Wrapped(src[i]))  # a Python producer type: its cache entry
            assert (a == src[i]).all() and (b == src[i]).all() and (np.from_dlpack(t3) == src[i]).all()
            assert t.shape == (3, 4) and t.dtype == "float64" and t.device == (1, 0) and t.strides == (4, 1)
            assert t.host_access() == "always" and t.is_contiguous()       # device table, backend loaders
            assert dh.is_cpu_accessible((1, 0)) and not dh.is_cpu_accessible((2, 0))
            assert dh.info()["version"] and dh.lib.dlpack_status_string(0) == b"OK"   # dh.lib: lazy ctypes load
            for x in (t, t2, t3):
                x.release()
            seen.append(i)
        except BaseException as e:
            errors.append(f"thread {i}: {e!r}")
    ts = [threading.Thread(target=work, args=(i,)) for i in range(N)]
    for t in ts: t.start()
    for t in ts: t.join()
    gil = sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True
    print(f"threads={len(seen)} errors={len(errors)} gil={gil}")
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    if sysconfig.get_config_var("Py_GIL_DISABLED") and gil:
        print("the GIL was turned back on")
        sys.exit(1)
""")


@pytest.mark.parametrize("run", range(4))
def test_first_calls_of_every_lazy_path_at_once_in_a_fresh_process(run, tmp_path):
    """Each lazily initialised path (the C API's resolution, the cached names, the exchange-table
    caches, the version memo, the owner capsule, the plan memo, the Tensor's cached properties,
    `dh.lib`, the device table and backend loaders) is first reached by THREADS threads at once,
    in a fresh interpreter each run."""
    script = tmp_path / "first_calls.py"
    script.write_text(FIRST_CALLS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [PACKAGE_PARENT, os.environ.get("PYTHONPATH", "")] if p))
    r = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", str(script), str(THREADS)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"threads={THREADS} errors=0" in r.stdout, r.stdout


def test_first_export_of_a_fresh_tensor_from_every_thread_makes_one_owner():
    """THREADS threads export the same fresh Tensor at once (each first export makes the owner
    capsule): one owner wins, and the producer's deleter (which counts every call, so a second
    owner's second call would show) runs exactly once, after the last view."""
    c = ThreadCounter()
    for rep in range(50):
        addr, cap = c.owned_capsule()
        t = dh.import_tensor(cap)
        del cap
        views = [None] * THREADS
        run_threads(THREADS, lambda i: views.__setitem__(i, np.from_dlpack(t)))
        assert all((v == np.arange(4.0)).all() for v in views)
        t.release()
        assert addr not in dict(c.on)            # the views still hold the memory
        del views
        gc.collect()
        assert [a for a, _ in c.on].count(addr) == 1
    addrs = [a for a, _ in c.on]
    assert len(addrs) == len(set(addrs)) == 50


def test_shared_tensor_exported_and_released_from_several_threads():
    """One Tensor, many threads exporting it while one of them releases it: every export either
    succeeds with the right values (and stays valid after the release) or raises the released
    ValueError; the deleter runs exactly once, when the last view is gone."""
    deaths = Deaths()
    for rep in range(30):
        want = np.arange(16.0) * rep
        arr = deaths.watch(want.copy(), rep)
        t = dh.import_tensor(arr)
        del arr
        kept = [[] for _ in range(THREADS)]
        refused = [0] * THREADS

        def work(i):
            for k in range(40):
                if i == 0 and k == 20:
                    t.release()
                try:
                    v = np.from_dlpack(t)
                except ValueError as e:
                    assert "released" in str(e), e
                    refused[i] += 1
                    continue
                assert (v == want).all()
                kept[i].append(v)

        run_threads(THREADS, work)
        assert t.released
        assert all((v == want).all() for vs in kept for v in vs)   # views outlive the release
        assert refused[0] == 20                                    # after its own release: refused
        assert rep not in deaths.labels() or not any(kept)
        del kept
        gc.collect()
        assert deaths.labels().count(rep) == 1
    assert deaths.labels() == list(range(30))


def test_deleters_run_on_the_thread_that_releases():
    """Tensors imported on the main thread, then handed to other threads, which release half of
    them and drop the rest: each producer's deleter runs exactly once; for a release, on the
    releasing thread. (A dropped Tensor is freed where CPython frees it: on a free-threaded
    CPython an object whose last reference dies on a thread other than its creator's is freed by
    its creator's thread (biased reference counting), so the thread is not asserted then.)"""
    c = ThreadCounter()
    n = THREADS * 4
    shares = [[] for _ in range(THREADS)]
    addrs = []
    for label in range(n):
        addr, cap = c.owned_capsule()
        addrs.append(addr)
        shares[label % THREADS].append(dh.import_tensor(cap))
        del cap
    gc.collect()
    assert c.on == []
    idents = [None] * THREADS

    def work(i):
        idents[i] = threading.get_ident()
        mine, shares[i] = shares[i], None   # the only reference is now this thread's
        for j, t in enumerate(mine):
            if j % 2:
                t.release()
        mine.clear()

    run_threads(THREADS, work)
    gc.collect()
    assert sorted(a for a, _ in c.on) == sorted(addrs)   # every deleter, exactly once
    on = dict(c.on)
    for label, addr in enumerate(addrs):
        if (label // THREADS) % 2:  # released (odd position in its thread's share)
            assert on[addr] == idents[label % THREADS], (label, on[addr], idents)


def test_first_imports_of_new_types_from_several_threads():
    """Fresh producer types (more than the exchange cache's fast slots) first imported by every
    thread at once: the per-type cache gets one answer per type and every import is right."""
    for rep in range(3):
        kinds = []
        for k in range(24):
            if k % 2:
                kinds.append(type(f"Sub{rep}_{k}", (np.ndarray,), {}))
            else:
                kinds.append(type(f"Wrap{rep}_{k}", (), {
                    "__init__": lambda self, a: setattr(self, "a", a),
                    "__dlpack__": lambda self, **kw: self.a.__dlpack__(**kw),
                    "__dlpack_device__": lambda self: self.a.__dlpack_device__(),
                }))
        base = np.arange(6.0)

        def make(k, i):
            a = base + 100 * k + i
            return a.view(kinds[k]) if k % 2 else kinds[k](a)

        inputs = [[make(k, i) for k in range(len(kinds))] for i in range(THREADS)]

        def work(i):
            for k, obj in enumerate(inputs[i]):
                with dh.import_tensor(obj) as t:
                    assert (np.from_dlpack(t) == base + 100 * k + i).all()

        run_threads(THREADS, work)


def test_import_release_loop_on_every_thread_balances():
    """The import + release hot path on every thread at once: every deleter runs once."""
    deaths = Deaths()
    arrays = [[deaths.watch(np.arange(3.0) + i, (i, j)) for j in range(200)] for i in range(THREADS)]

    def work(i):
        mine, arrays[i] = arrays[i], None
        while mine:
            a = mine.pop()
            t = dh.import_tensor(a)
            del a
            assert t.shape == (3,)
            t.release()

    run_threads(THREADS, work)
    gc.collect()
    assert len(deaths.died) == THREADS * 200
    assert len(set(label for label, _ in deaths.died)) == THREADS * 200


class _PublishesOurTable:
    """A Python producer whose class publishes an exchange table (the Tensor type's: it refuses
    other objects, so every import falls back to ``__dlpack__``) and whose instances have a
    ``__dict__``: each import first reads the instance dictionary (the per-object override
    check), on a free-threaded build under the object's critical section. The data is a class
    attribute, so that ``__dlpack__`` does not read the dictionary another thread changes."""
    __dlpack_c_exchange_api__ = dh.Tensor.__dlpack_c_exchange_api__
    data = np.arange(5.0)

    def __dlpack__(self, **kw):
        return type(self).data.__dlpack__(**kw)

    def __dlpack_device__(self):
        return (1, 0)


def test_instance_dict_changed_while_other_threads_import():
    """One object imported by THREADS - 1 threads while the last one keeps adding and removing
    instance attributes (its ``__dict__`` grows, shrinks and is resized): every import reads a
    live dictionary and gives the right values. (Replacing the whole ``__dict__`` concurrently
    is not used: CPython 3.13.15t itself aborts on it, "PyMutex_Unlock: unlocking mutex that is
    not locked", with NumPy alone and without this package.)"""
    want = np.arange(5.0)
    p = _PublishesOurTable()
    done = threading.Event()

    def work(i):
        if i == 0:
            for k in range(3000):
                setattr(p, f"k{k % 64}", k)
                gone = f"k{(k + 32) % 64}"
                if gone in p.__dict__:
                    delattr(p, gone)
            done.set()
            return
        while True:  # at least once, then until the changing thread is done
            with dh.import_tensor(p) as t:
                assert (np.from_dlpack(t) == want).all()
            if done.is_set():
                break

    run_threads(THREADS, work)
