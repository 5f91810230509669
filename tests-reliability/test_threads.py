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
