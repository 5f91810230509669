"""Regression tests for the findings of the new-user test of the Python embedding (issue 5b).

Each test is named after its finding: 1 use after free of exported views, 2 the library search of
an installed package, 3 argument checking, 5 exception messages. (Finding 4, doc comments naming
functions that do not exist, is tests/doc_names.rs.)
"""
import gc
import itertools
import os
import shutil
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

# ---------------------------------------------------------------- finding 1: lifetime of views


def test_finding_1_with_block_keeps_arrays_from_the_view_valid():
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


def test_finding_1_release_after_del_source_keeps_arrays_valid():
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
def test_finding_1_deleter_runs_once_after_the_last_holder(order):
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


def test_finding_1_release_is_idempotent_and_gc_releases_once():
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


def test_finding_1_view_from_a_released_tensor_is_refused():
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


def test_finding_1_interpreter_shutdown_releases_each_tensor_once(tmp_path):
    script = tmp_path / "shutdown.py"
    script.write_text(_SHUTDOWN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "tests-py"), str(PACKAGE.parent)]))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().split()
    assert lines.index("exit") == 1 and lines[0] == "F", lines  # F went at run time, nothing else
    after = sorted(lines[2:])
    assert after == ["A", "B", "C", "D", "E"], (lines, r.stderr.decode())

# ---------------------------------------------------------------- finding 2: library search


def _import_in_subprocess(site, cwd, env_lib):
    env = {k: v for k, v in os.environ.items() if k not in ("DLPACK_HELPERS_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    if env_lib is not None:
        env["DLPACK_HELPERS_LIBRARY"] = str(env_lib)
    return subprocess.run([sys.executable, "-c", "import dlpack_helpers as dh; print(dh.__file__, dh.info()['version'])"],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def test_finding_2_installed_copy_without_library_explains_what_was_tried(tmp_path):
    # Issue 11: the package is a native extension linked against lib/libdlpack_helpers.so.*; a copy
    # without its lib/ folder fails at import, and the loader's message names the library.
    site = tmp_path / "site-packages"
    shutil.copytree(PACKAGE, site / "dlpack_helpers", ignore=shutil.ignore_patterns("lib", "__pycache__"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = _import_in_subprocess(site, elsewhere, None)
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "libdlpack_helpers.so" in r.stderr, r.stderr
    # with its lib/ folder the copy imports from anywhere, without the variable
    shutil.copytree(PACKAGE / "lib", site / "dlpack_helpers" / "lib", symlinks=True)
    r = _import_in_subprocess(site, elsewhere, None)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(site)), r.stdout


def test_finding_2_checkout_fallback_only_inside_a_checkout(tmp_path):
    from dlpack_helpers import _lib
    inside = [where for _, where in _lib.candidates(here=ROOT / "python" / "dlpack_helpers", env="")]
    assert inside == ["the package's lib/ folder", "the source checkout's target/release"]
    outside = _lib.candidates(here=tmp_path / "lib" / "python3.11" / "site-packages" / "dlpack_helpers", env="/x.so")
    assert [str(p) for p, _ in outside] == [str(tmp_path / "lib/python3.11/site-packages/dlpack_helpers/lib/libdlpack_helpers.so"),
                                            "/x.so"]
    # the installed package: first the very file the extension is linked against
    installed = _lib.candidates(env="")
    assert installed[0][1] == "the library dlpack_helpers._native is linked against"


# ---------------------------------------------------------------- finding 3: argument checking


@pytest.mark.parametrize("kw,exc", [
    (dict(max_version=(2**40, 0)), ValueError),
    (dict(max_version=(1, 2**32)), ValueError),
    (dict(max_version=(-1, 0)), ValueError),
    (dict(max_version=(0, 0)), ValueError),
    (dict(max_version=(1,)), TypeError),
    (dict(max_version=(1, 2, 3)), TypeError),
    (dict(max_version=[1, 3]), TypeError),
    (dict(max_version=(1.0, 3)), TypeError),
    (dict(max_version="1.3"), TypeError),
    (dict(dl_device=(1,)), TypeError),
    (dict(dl_device=1), TypeError),
    (dict(dl_device=("cpu", 0)), TypeError),
    (dict(dl_device=(2**40, 0)), ValueError),
    (dict(dl_device=(1, -2**31 - 1)), ValueError),
    (dict(copy="yes"), TypeError),
    (dict(copy=1), TypeError),
])
def test_finding_3_import_arguments_are_checked(kw, exc):
    p = Producer(lambda k: np.arange(2.0).__dlpack__(**k))
    with pytest.raises(exc):
        dh.import_tensor(p, **kw)
    assert p.calls == []  # refused before the producer is called
    if kw.get("max_version") == (0, 0):
        return  # for an exporter (0, 0) is a legal "legacy only"; only the C request reserves it
    with dh.import_tensor(np.arange(2.0)) as t:  # the view's __dlpack__ checks the same way
        with pytest.raises(exc):
            t.__dlpack__(**kw)


def test_finding_3_valid_arguments_still_work():
    import enum

    class Dev(enum.IntEnum):
        CPU = 1
    arr = np.arange(3.0)
    with dh.import_tensor(arr, max_version=(np.uint32(1), 3), dl_device=(Dev.CPU, 0), copy=np.False_) as t:
        assert t.shape == (3,)
        np.testing.assert_array_equal(np.from_dlpack(t), arr)
    with dh.import_tensor(arr, max_version=(1, 2**32 - 1), copy=False) as t:
        assert t.version[0] == 1


@pytest.mark.parametrize("dev,exc", [((2**40, 0), ValueError), ((1,), TypeError), ((1, 0, 0), TypeError),
                                     (("cuda", 0), TypeError), ((1, 2**31), ValueError)])
def test_finding_3_is_cpu_accessible_checks_devices(dev, exc):
    with pytest.raises(exc):
        dh.is_cpu_accessible(dev)
    assert dh.is_cpu_accessible((1, 0)) and not dh.is_cpu_accessible((2, 0))

# ---------------------------------------------------------------- finding 5: messages


class _Wrapper:
    """A producer whose __dlpack__ goes through import_tensor itself (a re-exporting library)."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, **kw):
        return dh.import_tensor(self.inner).__dlpack__(**kw)

    def __dlpack_device__(self):
        return (1, 0)


def test_finding_5_exception_type_named_once():
    # Issue 11: a producer's exception propagates unchanged (the same type, message and
    # traceback), not rewrapped with a status tag.
    with pytest.raises(BufferError) as e:
        dh.import_tensor(Producer(None, "buffer"))
    assert str(e.value) == "cannot export this"
    assert any(f.name == "__dlpack__" for f in e.traceback)  # the producer's frame is kept
    with pytest.raises(NotImplementedError) as e:
        dh.import_tensor(Producer(None, "notimplemented"))
    assert str(e.value) == "max_version is not supported"


def test_finding_5_nested_imports_do_not_stack_prefixes():
    with pytest.raises(NotImplementedError) as e:
        dh.import_tensor(_Wrapper(_Wrapper(Producer(None, "notimplemented"))))
    assert str(e.value) == "max_version is not supported"
    with pytest.raises(BufferError) as e:
        dh.import_tensor(_Wrapper(Producer(None, "buffer")))
    assert str(e.value) == "cannot export this"
    # and a working re-exporter keeps its memory alive through the nested views
    arr = np.arange(4.0)
    with dh.import_tensor(_Wrapper(_Wrapper(arr))) as t:
        out = np.from_dlpack(t)
    np.testing.assert_array_equal(out, arr)
