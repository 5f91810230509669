"""Lifetime of imported tensors and their exported views: a view (NumPy array, capsule) keeps the
producer's memory alive after the Tensor is released or dropped, in any drop order, and the
producer's deleter runs exactly once, after the last holder, at run time or interpreter exit.
"""
import gc
import itertools
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import numpy as np
import pytest

import dlpack_helpers as dh
from producers import Counter, Producer

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(dh.__file__).resolve().parent


def test_with_block_keeps_arrays_from_the_view_valid():
    src = np.arange(6.0).reshape(2, 3)[:, ::2]
    want, alive = src.copy(), weakref.ref(src)
    with dh.import_tensor(src) as t:
        a = np.from_dlpack(t)
    del src
    gc.collect()
    # NumPy's deleter drops its reference to the source: it must not have run yet
    assert alive() is not None
    np.testing.assert_array_equal(a, want)  # the reported repro: garbage or a crash before
    assert t.released
    with pytest.raises(ValueError, match="released"):
        t.shape
    del a
    gc.collect()
    assert alive() is None  # and it runs once the array goes


def test_release_after_del_source_keeps_arrays_valid():
    src = np.arange(10.0)
    alive = weakref.ref(src)
    t = dh.import_tensor(src)
    del src
    b = np.from_dlpack(t)
    t.release()
    gc.collect()
    assert alive() is not None
    assert b[:5].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    del b
    gc.collect()
    assert alive() is None


def _holders(counter):
    """A Tensor over a counting producer and everything that can hold its memory."""
    t = dh.import_tensor(Producer(lambda kw: counter.capsule()))
    return {
        "tensor": t,
        "array": np.from_dlpack(t),
        "array2": np.from_dlpack(t)[1:],
        "capsule": t.__dlpack__(max_version=(1, 3)),  # exported, never consumed
        "legacy_capsule": t.__dlpack__(),
    }


@pytest.mark.parametrize("order", list(itertools.permutations(
    ["tensor", "array", "array2", "capsule", "legacy_capsule"])))
def test_deleter_runs_once_after_the_last_holder(order):
    c = Counter()
    held = _holders(c)
    for i, name in enumerate(order):
        assert c.calls == 0, (order, i)
        obj = held.pop(name)
        if name == "tensor":
            obj.release()  # explicit release, then the reference goes too
            assert obj.released
        del obj
    assert c.calls == 1 and not c.live, order  # at once, by reference counting (no gc needed)


def test_release_is_idempotent_and_gc_releases_once():
    c = Counter()
    t = dh.import_tensor(Producer(lambda kw: c.capsule()))
    a = np.from_dlpack(t)
    t.release()
    t.release()
    with t:
        pass
    del t
    gc.collect()
    assert c.calls == 0
    np.testing.assert_array_equal(a, np.arange(4.0))
    del a
    gc.collect()
    assert c.calls == 1
    # without any export: the deleter runs as the Tensor is released or collected
    t = dh.import_tensor(Producer(lambda kw: c.capsule()))
    t.release()
    assert c.calls == 2
    t = dh.import_tensor(Producer(lambda kw: c.capsule()))
    del t
    gc.collect()
    assert c.calls == 3 and not c.live


def test_view_from_a_released_tensor_is_refused():
    t = dh.import_tensor(np.arange(3.0))
    t.release()
    with pytest.raises(ValueError, match="released"):
        np.from_dlpack(t)
    with pytest.raises(ValueError, match="released"):
        t.__dlpack__()
    assert "released" in repr(t)


_SHUTDOWN = textwrap.dedent('''
    import ctypes, gc, os
    import numpy as np
    import dlpack_helpers as dh
    from producers import Labelled

    c = Labelled(1)
    # The producer's deleter and memory must outlive every tensor: keep the counter on purpose.
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(c))
    make = lambda label: dh.import_tensor(c.labelled(label))

    A = make(b"A")                                    # a Tensor alive at exit
    t = make(b"B"); B = np.from_dlpack(t); t.release(); del t        # only an array alive
    C = make(b"C"); C_arr = np.from_dlpack(C)         # Tensor and array alive
    cycle = [make(b"D")]; cycle.append(cycle)         # a Tensor in a reference cycle
    t = make(b"E"); E = t.__dlpack__(max_version=(1, 3)); t.release(); del t  # unconsumed capsule
    t = make(b"F"); F = np.from_dlpack(t); del t; del F  # released before exit
    gc.collect()
    N = np.from_dlpack(dh.import_tensor(np.arange(5.0)))  # a NumPy-produced view alive at exit
    os.write(1, b"exit\\n")
''')


def test_interpreter_shutdown_releases_each_tensor_once(tmp_path):
    script = tmp_path / "shutdown.py"
    script.write_text(_SHUTDOWN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "tests-py"), str(PACKAGE.parent)]))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().split()
    assert lines.index("exit") == 1 and lines[0] == "F", lines  # F went at run time, nothing else
    after = sorted(lines[2:])
    assert after == ["A", "B", "C", "D", "E"], (lines, r.stderr.decode())
