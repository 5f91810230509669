"""8 Python threads importing, exporting and releasing at once (concurrency).

Imports and exports run with the GIL (the dlpack_helpers package, and the C API through PyDLL);
half the releases go through a second handle of the library loaded with ctypes.CDLL, which drops
the GIL around the call, so NumPy's deleter (which takes the GIL itself) runs from threads that
do not hold it. Fixed
work per thread; at the end every producer object has been collected (no lost release) and none
was released twice (NumPy would crash or the counts would not add up).
"""
from __future__ import annotations

import ctypes
import gc
import os
import threading
import weakref

import numpy as np

import cabi
import dlpack_helpers as dh

THREADS = 8
ITERS = int(os.environ.get("DLPACK_HELPERS_THREAD_ITERS", "2000"))
from header import functions

LIB = cabi.load(cabi.library_path(), functions())  # PyDLL: imports keep the GIL
NOGIL = ctypes.CDLL(cabi.library_path())  # the same library; calls drop the GIL
NOGIL.dlpack_tensor_delete.argtypes = [ctypes.c_void_p]
NOGIL.dlpack_tensor_delete.restype = None


def test_eight_threads_import_export_release():
    lock = threading.Lock()
    state = {"made": 0, "dead": 0, "errors": []}

    def dead():
        with lock:
            state["dead"] += 1

    barrier = threading.Barrier(THREADS)

    def work(k):
        try:
            barrier.wait()
            for i in range(ITERS):
                a = np.full(64, float(k * 100000 + i))
                with lock:
                    state["made"] += 1
                weakref.finalize(a, dead)
                if i % 2:
                    t = dh.import_tensor(a)
                    b = np.from_dlpack(t)  # a view through this library's export, owner t
                    assert b[0] == k * 100000 + i
                    del b
                    t.release()  # with the GIL
                else:
                    # The raw C API: import with the GIL, release without it from this thread
                    # (NumPy's deleter takes the GIL itself).
                    out = ctypes.c_void_p()
                    assert LIB.dlpack_object_import(id(a), None, ctypes.addressof(out), None) == 0, cabi.message(LIB)
                    NOGIL.dlpack_tensor_delete(out.value)
                # The last error is per thread: this thread's failure, not another's.
                try:
                    dh.import_tensor(object() if i % 3 else k)
                except Exception as e:  # noqa: BLE001
                    assert "__dlpack__" in str(e) or "dlpack" in str(e).lower(), str(e)
        except BaseException as e:  # noqa: BLE001
            state["errors"].append(repr(e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    gc.collect()
    assert not state["errors"], state["errors"][:3]
    assert state["made"] == THREADS * ITERS
    assert state["dead"] == state["made"], f"{state['made'] - state['dead']} producers never released"
    print(f"\n{THREADS} Python threads x {ITERS} import/export/release round trips: {state['made']} producers, each released once")


# The exchange-API cache's first lookups from 16 threads at once, each process fresh (issue 24):
# the cache is empty in a new process, and a race in filling it shows only there. The lookup of
# `__dlpack_c_exchange_api__` runs a property that releases the GIL (time.sleep(0)), so other
# threads' first lookups of the same type run while one is in the middle of its own. Every
# thread must get the package's table, and the integer form (DLPack 1.2) the same address.
_FIRST_LOOKUPS = r"""
import ctypes, json, sys, threading, time
sys.path[:0] = json.loads(sys.argv[1])
import numpy as np
import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib

get = ctypes.pythonapi.PyCapsule_GetPointer
get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
table = get(dh.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api")


class Slow(type):
    @property
    def __dlpack_c_exchange_api__(cls):
        time.sleep(0)  # releases the GIL in the middle of the lookup
        return dh.Tensor.__dlpack_c_exchange_api__


class Capsule(metaclass=Slow):
    pass


Integer = type("Integer", (), {"__c_dlpack_exchange_api__": table})
objects = [Capsule(), Integer(), dh.import_tensor(np.arange(3.0))]
N = 16
barrier = threading.Barrier(N)
got = [None] * N


def work(k):
    barrier.wait()
    answers = []
    for o in objects[k % 3:] + objects[:k % 3]:  # each thread starts at a different type
        out = ctypes.POINTER(_lib.DLPackExchangeAPI)()
        s = lib.dlpack_exchange_api_find(o, ctypes.byref(out))
        answers.append((type(o).__name__, s, ctypes.addressof(out.contents) if s == 0 else 0))
    got[k] = sorted(answers)


threads = [threading.Thread(target=work, args=(k,)) for k in range(N)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"table": table, "got": got}))
"""


def test_first_exchange_lookups_from_16_threads_in_fresh_processes():
    import json
    import subprocess
    import sys
    runs = int(os.environ.get("DLPACK_HELPERS_FIRST_CALL_RUNS", "10"))
    for _ in range(runs):
        r = subprocess.run([sys.executable, "-c", _FIRST_LOOKUPS, json.dumps(sys.path)],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        out = json.loads(r.stdout.strip().splitlines()[-1])
        want = sorted([["Capsule", 0, out["table"]], ["Integer", 0, out["table"]], ["Tensor", 0, out["table"]]])
        for k, answers in enumerate(out["got"]):
            assert answers == want, f"thread {k}: {answers} (want {want})"
    print(f"\n{runs} fresh processes x 16 threads: first exchange-API lookups (capsule, integer, the package's Tensor) all found the same table")
