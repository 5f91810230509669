"""The native package (issue 11): Tensor type, value types, __dlpack_info__, argument checks,
the C exchange API published by Tensor, and one shared C library per process."""
import ctypes
import gc
import subprocess
import sys
from ctypes import byref

import numpy as np
import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from producers import Counter, Producer, take


def test_tensor_is_native_and_not_constructible():
    assert type(dh.Tensor).__name__ == "type" and dh.Tensor.__module__ == "dlpack_helpers"
    with pytest.raises(TypeError, match="import_tensor"):
        dh.Tensor()
    with pytest.raises(TypeError, match="import_tensor"):
        dh.Tensor(np.arange(3.0))
    t = dh.import_tensor(np.arange(3.0))
    with pytest.raises(AttributeError):
        t.anything = 1  # no __dict__


def test_dtype_values_print_parse_and_compare():
    cases = {np.float32: ("float32", (2, 32, 1)), np.bool_: ("bool", (6, 8, 1)),
             np.complex128: ("complex128", (5, 128, 1)), np.uint16: ("uint16", (1, 16, 1)),
             np.int8: ("int8", (0, 8, 1))}
    for np_type, (name, triple) in cases.items():
        d = dh.import_tensor(np.zeros(2, np_type)).dtype
        assert str(d) == name and d.name == name and d == triple and d == name and d == dh.DType(name)
        assert tuple(d) == triple and (d.code, d.bits, d.lanes) == triple and len(d) == 3 and d[-1] == 1
        assert hash(d) == hash(triple) and {d: 1}[triple] == 1
        assert d.to_numpy() == np.dtype(np_type)
        assert repr(d) == f"dlpack_helpers.DType('{name}')"
    for name, triple in (("bfloat16", (4, 16, 1)), ("float8_e4m3fn", (10, 8, 1)), ("float32x4", (2, 32, 4))):
        d = dh.DType(name)
        assert d == triple and str(d) == name and dh.DType(triple) == d
        with pytest.raises(TypeError, match=name):
            d.to_numpy()
    assert dh.DType((2, 64, 1)) != (2, 32, 1) and dh.DType("float64") != "float32"
    with pytest.raises(ValueError, match="UNKNOWN_NAME"):
        dh.DType("float31")
    with pytest.raises(TypeError):
        dh.DType(3.5)
    with pytest.raises(ValueError, match="dtype bits"):
        dh.DType((2, 256, 1))


def test_device_values_print_parse_and_compare():
    t = dh.import_tensor(np.arange(2.0))
    d = t.device
    assert d == (1, 0) and str(d) == "cpu:0" and d == "cpu:0" and tuple(d) == (1, 0)
    assert (d.device_type, d.device_id) == (1, 0) and hash(d) == hash((1, 0))
    assert dh.Device("cuda:1") == (2, 1) and str(dh.Device((2, 1))) == "cuda:1"
    assert dh.Device("cuda") == (2, 0) and repr(dh.Device("cuda:1")) == "dlpack_helpers.Device('cuda:1')"
    assert dh.device(np.arange(2.0)) == (1, 0) and isinstance(dh.device(np.arange(2.0)), dh.Device)
    assert t.__dlpack_device__() == (1, 0) and type(t.__dlpack_device__()) is tuple
    with pytest.raises(ValueError, match="UNKNOWN_NAME"):
        dh.Device("gpu:0")
    with pytest.raises(TypeError, match=r"Device\(\)"):
        dh.Device(1.5)
    assert dh.is_cpu_accessible(dh.Device("cuda_host:0")) and not dh.is_cpu_accessible(dh.Device("cuda:0"))


def test_dlpack_info_on_module_and_tensor():
    info = dh.__dlpack_info__()
    assert info == {"dlpack_version": (1, 3), "dlpack_abi_major": 1, "version": dh.info()["version"]}
    assert dh.Tensor.__dlpack_info__() == info and dh.import_tensor(np.arange(1.0)).__dlpack_info__() == info
    # the C library's answer, read through ctypes
    i = _lib.Info()
    i.struct_size = ctypes.sizeof(i)
    assert dh.lib.dlpack_get_info(byref(i)) == 0
    assert info["version"] == i.version.decode() and info["dlpack_version"] == (i.dlpack_version.major, i.dlpack_version.minor)


@pytest.mark.parametrize("call,arg,exc", [
    (lambda kw: dh.import_tensor(np.arange(2.0), **kw), "stream", TypeError),
    (lambda kw: dh.import_tensor(np.arange(2.0), **kw), "max_version", TypeError),
    (lambda kw: dh.import_tensor(np.arange(2.0), **kw), "dl_device", TypeError),
    (lambda kw: dh.import_tensor(np.arange(2.0), **kw), "copy", TypeError),
    (lambda kw: dh.import_tensor(np.arange(2.0)).__dlpack__(**kw), "stream", TypeError),
    (lambda kw: dh.import_tensor(np.arange(2.0)).__dlpack__(**kw), "max_version", TypeError),
    (lambda kw: dh.import_tensor(np.arange(2.0)).__dlpack__(**kw), "dl_device", TypeError),
    (lambda kw: dh.import_tensor(np.arange(2.0)).__dlpack__(**kw), "copy", TypeError),
])
def test_argument_checks_name_the_argument(call, arg, exc):
    with pytest.raises(exc, match=arg):
        call({arg: "x"})


def test_stream_of_import_is_checked_before_the_producer():
    p = Producer(lambda kw: np.arange(2.0).__dlpack__(**kw))
    for bad, exc in (("x", TypeError), (1.5, TypeError), (True, TypeError), (2**63, ValueError)):
        with pytest.raises(exc, match="stream"):
            dh.import_tensor(p, stream=bad)
    assert p.calls == []


def test_index_failure_is_chained():
    class BadIndex:
        def __index__(self):
            raise RuntimeError("boom")
    with pytest.raises(TypeError, match="max_version major") as e:
        dh.import_tensor(np.arange(2.0), max_version=(BadIndex(), 3))
    assert isinstance(e.value.__cause__, RuntimeError)


def test_released_tensor_refuses_access_everywhere():
    t = dh.import_tensor(np.arange(3.0))
    t.shape, t.dtype, t.device  # cached before release
    t.release()
    for name in ("shape", "dtype", "device", "strides", "flags", "readonly", "ndim", "version", "data_ptr"):
        with pytest.raises(ValueError, match="released"):
            getattr(t, name)
    assert repr(t) == "<dlpack_helpers.Tensor (released)>"


def test_one_library_per_process():
    """ctypes (dh.lib) and the extension use the same loaded library (issue 11 point 1)."""
    from dlpack_helpers import _native
    addr = ctypes.cast(dh.lib.dlpack_get_info, ctypes.c_void_p).value
    assert addr == _native._library_symbol_address()
    # in a clean process (other tests load the checkout's build on purpose): one mapped file
    import subprocess
    code = ("import ctypes, dlpack_helpers as dh; dh.lib.dlpack_get_info; "
            "print(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libdlpack_helpers' in l}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd="/")
    assert r.returncode == 0, r.stderr
    files = eval(r.stdout)
    assert len(files) == 1 and files[0] == _native._library_path(), files



def test_lib_loads_on_first_read_and_the_module_stays_specializable():
    """`dh.lib` forwards to `_lib.lib` and is loaded on the first read, not at import; the module
    defines no `__getattr__`, with which CPython 3.11 read every `dh.<name>` the generic way
    (issue 26: 267 instructions per `dh.import_tensor` read in a profile)."""
    import subprocess
    assert "__getattr__" not in vars(dh)
    code = ("import sys, dlpack_helpers as dh; a = 'dlpack_helpers._lib' in sys.modules; "
            "f = dh.lib.dlpack_get_info; from dlpack_helpers._lib import lib; "
            "print(a, 'dlpack_helpers._lib' in sys.modules, f is lib.dlpack_get_info, dh.lib.loaded is lib, "
            "dh.lib['dlpack_get_info'] is not None, 'dlpack_get_info' in dir(dh.lib))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True", "True", "True", "True", "True"], r.stdout
    with pytest.raises(AttributeError, match="no_such_function"):
        dh.lib.no_such_function
    with pytest.raises(AttributeError, match="no_such_name"):
        dh.no_such_name
    # Assignment and deletion reach the bindings, as on the PyDLL itself (mock.patch.object).
    from unittest import mock
    from dlpack_helpers._lib import lib
    original = lib.dlpack_get_info
    with mock.patch.object(dh.lib, "dlpack_get_info", "patched"):
        assert lib.dlpack_get_info == "patched" and dh.lib.dlpack_get_info == "patched"
    assert lib.dlpack_get_info is original
    assert "forwards to" in repr(dh.lib)

def test_lib_is_the_one_object_under_every_import_of_its_name():
    """The wheel's C SDK folder `dlpack_helpers/lib/` must not be importable as a namespace
    package named like `dh.lib`: `importlib.import_module("dlpack_helpers.lib")` and
    `mock.patch("dlpack_helpers.lib.<name>")` imported the folder and replaced `dh.lib` for the
    whole process (new-user run). Pickling gives the same object back; `loaded` is read-only."""
    import importlib
    import importlib.util
    import pickle
    import subprocess
    code = ("import importlib, sys, dlpack_helpers as dh; from unittest import mock; "
            "lib = dh.lib; m = importlib.import_module('dlpack_helpers.lib'); import dlpack_helpers.lib; "
            "p = mock.patch('dlpack_helpers.lib.dlpack_get_info', 'patched'); p.start(); "
            "patched = dh.lib.dlpack_get_info == 'patched'; p.stop(); "
            "print(m is lib, dh.lib is lib, sys.modules['dlpack_helpers.lib'] is lib, patched, "
            "callable(dh.lib.dlpack_get_info))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True"] * 5, r.stdout
    assert importlib.import_module("dlpack_helpers.lib") is dh.lib
    assert importlib.util.find_spec("dlpack_helpers.lib").name == "dlpack_helpers.lib"
    assert pickle.loads(pickle.dumps(dh.lib)) is dh.lib
    loaded = dh.lib.loaded
    with pytest.raises(AttributeError, match="read-only"):
        dh.lib.loaded = 5
    with pytest.raises(AttributeError, match="read-only"):
        del dh.lib.loaded
    assert dh.lib.loaded is loaded


# ---------------------------------------------------------------- the exchange API of Tensor


def _find(obj):
    out = ctypes.POINTER(_lib.DLPackExchangeAPI)()
    return dh.lib.dlpack_exchange_api_find(obj, byref(out)), out


def test_tensor_publishes_a_valid_exchange_api():
    cap = dh.Tensor.__dlpack_c_exchange_api__
    assert '"dlpack_exchange_api"' in repr(cap)
    t = dh.import_tensor(np.arange(6.0).reshape(2, 3))
    s, api = _find(t)
    assert s == 0, dh.lib.dlpack_last_error_message()
    a = api.contents
    assert (a.header.version.major, a.header.version.minor) == (1, 3)
    # managed_tensor_from_py_object_no_sync: a view we own and release once
    out = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
    assert a.managed_tensor_from_py_object_no_sync(id(t), byref(out)) == 0
    mt = out.contents
    assert mt.dl_tensor.ndim == 2 and [mt.dl_tensor.shape[i] for i in range(2)] == [2, 3]
    assert mt.dl_tensor.data == t.data_ptr
    dh.lib.dlpack_tensor_delete(out)


def test_import_tensor_takes_our_tensor_through_its_exchange_api():
    c = Counter()
    t = dh.import_tensor(Producer(lambda kw: c.capsule()))
    u = dh.import_tensor(t)  # the default uses the exchange API
    assert u.source == "exchange_api" and u.shape == t.shape and u.data_ptr == t.data_ptr
    v = dh.import_tensor(t, use_exchange_api=False)
    assert v.source == "versioned_capsule" and v.data_ptr == t.data_ptr
    np.testing.assert_array_equal(np.from_dlpack(u), np.from_dlpack(t))
    del t, u, v
    gc.collect()
    assert c.calls == 1 and not c.live  # released once, after the last holder


def test_max_version_below_1_does_not_take_the_exchange_api():
    """``max_version=(0, 8)`` asks for the legacy struct, which only ``__dlpack__`` gives (the
    table exports the versioned one): a writable 1.3 tensor came through the table, where the
    producer's legacy capsule is read-only by the provenance rule (new-user run)."""
    T = dh.import_tensor(np.arange(3.0))
    with dh.import_tensor(T, max_version=(0, 8)) as t, \
            dh.import_tensor(T, max_version=(0, 8), use_exchange_api=False) as u:
        assert (t.source, t.readonly, t.how) == (u.source, u.readonly, u.how)
        assert (t.source, t.readonly) == ("legacy_capsule", True)
    with dh.import_tensor(T, max_version=(1, 0)) as v:
        assert v.source == "exchange_api"


def test_exchange_api_refuses_other_objects():
    api = _find(dh.import_tensor(np.arange(2.0)))[1].contents
    out = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
    # -1 with a Python exception set (DLPack 1.3); ctypes reports the set exception as the cause
    other = np.arange(2.0)
    with pytest.raises(SystemError) as e:
        api.managed_tensor_from_py_object_no_sync(id(other), byref(out))
    assert isinstance(e.value.__cause__, TypeError) and "dlpack_helpers.Tensor" in str(e.value.__cause__)
    assert not out


def test_tvm_ffi_consumer_if_installed():
    tvm_ffi = pytest.importorskip("tvm_ffi")
    t = dh.import_tensor(np.arange(4.0, dtype=np.float32))
    x = tvm_ffi.from_dlpack(t)
    assert tuple(x.shape) == (4,) and str(x.dtype) == "float32"
    np.testing.assert_array_equal(np.from_dlpack(x), np.arange(4.0, dtype=np.float32))


def test_dlpack_keyword_parsing_fast_and_general_paths_agree():
    """`Tensor.__dlpack__` parses the common calls itself (interned keyword names) and hands
    the rest to the generated method: both give the same capsules and the same errors."""
    t = dh.import_tensor(np.arange(4.0))
    name = lambda c: str(c).split('"')[1]  # noqa: E731
    assert name(t.__dlpack__()) == "dltensor"
    assert name(t.__dlpack__(max_version=(1, 3))) == "dltensor_versioned"
    # A keyword name built at run time is not the interned string: the general path.
    kw = {"".join(["max_", "version"]): (1, 3)}
    assert name(t.__dlpack__(**kw)) == "dltensor_versioned"
    assert name(t.__dlpack__(stream=None, max_version=(1, 0), dl_device=(1, 0), copy=False)) \
        == "dltensor_versioned"
    assert name(t.__dlpack__(copy=True, max_version=(1, 3))) == "dltensor_versioned"
    with pytest.raises(TypeError, match="positional"):
        t.__dlpack__((1, 3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        t.__dlpack__(foo=1)
    with pytest.raises(TypeError, match="max_version"):
        t.__dlpack__(max_version=(1, "3"))
    with pytest.raises(TypeError, match="max_version"):
        t.__dlpack__(**{"".join(["max_", "version"]): "x"})
    with pytest.raises(ValueError, match="stream"):
        t.__dlpack__(stream=1)
    with pytest.raises(TypeError):
        dh.Tensor.__dlpack__(np.arange(3.0))  # not a Tensor
    assert "max_version" in dh.Tensor.__dlpack__.__doc__
    assert dh.Tensor.__dlpack__.__text_signature__.startswith("($self, *, stream=None")
    t.release()
    with pytest.raises(ValueError, match="released"):
        t.__dlpack__(max_version=(1, 3))


def test_dlpack_fast_path_takes_none_keywords_and_keeps_the_general_answers():
    """Issue 26: `__dlpack__(max_version=V)` with a version tuple seen before, alone or with
    `stream`/`dl_device`/`copy` passed as None (as `numpy.from_dlpack` calls it), is served by
    the vectorcall entry's fast path: the same capsule, the same errors, as the general path
    (a run-time keyword name); any non-None value of the others takes the general path."""
    t = dh.import_tensor(np.arange(4.0))
    mv = "".join(["max_", "version"])  # not the interned name: the general path
    name = lambda c: str(c).split('"')[1]  # noqa: E731
    v13 = (1, 3)
    for _ in range(2):  # the first call reads the tuple, the second finds it by identity
        assert name(t.__dlpack__(max_version=v13)) == "dltensor_versioned"
        c = t.__dlpack__(stream=None, max_version=v13, dl_device=None, copy=None)
        assert name(c) == "dltensor_versioned"
        a = np.from_dlpack(t)
        assert a.tolist() == [0.0, 1.0, 2.0, 3.0]
        assert name(t.__dlpack__(max_version=v13, copy=False)) == "dltensor_versioned"
        with pytest.raises(ValueError, match="stream"):
            t.__dlpack__(max_version=v13, stream=1)
        with pytest.raises(BufferError):
            t.__dlpack__(max_version=v13, dl_device=(2, 0))
    legacy = (0, 8)
    for _ in range(2):
        assert name(t.__dlpack__(max_version=legacy)) == "dltensor"
        assert name(t.__dlpack__(max_version=legacy, copy=None)) == "dltensor"
    t.release()
    for kw in ({"max_version": v13}, {mv: v13}, {"max_version": v13, "copy": None}):
        with pytest.raises(ValueError, match="released") as e:
            t.__dlpack__(**kw)
        assert str(e.value) == "the tensor was released (arrays exported from it stay valid)"
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]  # the view outlives the Tensor's hold


def test_import_tensor_fast_entry_and_generated_entry_agree():
    """Issue 26: `import_tensor(obj)` (one positional argument) is served by a fast entry; every
    other call goes to PyO3's generated function: same results, same errors, same signature."""
    import inspect
    assert str(inspect.signature(dh.import_tensor)).startswith("(obj, *, max_version=None")
    assert dh.import_tensor.__name__ == "import_tensor" and "__dlpack__" in dh.import_tensor.__doc__
    x = np.arange(6.0).reshape(2, 3)
    fast = dh.import_tensor(x)
    general = dh.import_tensor(x, use_exchange_api=True)  # a keyword: the generated function
    for t in (fast, general):
        assert t.shape == (2, 3) and t.source == "versioned_capsule" and not t.readonly
    via_table = dh.import_tensor(fast)  # our Tensor through its exchange table
    assert via_table.source == "exchange_api" and np.from_dlpack(via_table).tolist() == x.tolist()
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'obj'"):
        dh.import_tensor()
    with pytest.raises(TypeError, match="positional"):
        dh.import_tensor(x, x)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        dh.import_tensor(x, foo=1)
    for call in (lambda o: dh.import_tensor(o), lambda o: dh.import_tensor(o, copy=None)):
        with pytest.raises(AttributeError, match="__dlpack__"):
            call(object())
        with pytest.raises(BufferError, match="cannot export this"):  # the producer's, unchanged
            call(Producer(None, behaviour="buffer"))


def test_view_blocks_come_from_pythons_allocator_and_are_freed():
    """Issue 26: an exported view's block (managed tensor, shape, strides, owner) comes from
    `PyMem_Malloc`, as NumPy's do, and is freed with `PyMem_Free` when the capsule dies
    unconsumed (the destructor, GIL held) or a consumer calls the deleter (which takes the GIL
    on any thread: ctypes calls it with the GIL released). tracemalloc sees exactly Python's
    allocator, so the blocks show up in it (they did not with the C heap)."""
    import tracemalloc
    t = dh.import_tensor(np.arange(6.0).reshape(2, 3))
    t.__dlpack__(max_version=(1, 3))  # owner capsule, validation, memos made before tracing
    n = 200
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        caps = [t.__dlpack__(max_version=(1, 3)) for _ in range(n)]
        grown = tracemalloc.get_traced_memory()[0] - base
        # a capsule object is 48 bytes; a view block more than 200 (struct, 8 inline dims, owner)
        assert grown >= n * (48 + 200), grown
        del caps  # unconsumed: the destructor releases each block, GIL held
        assert tracemalloc.get_traced_memory()[0] - base < n * 48, "view blocks were not freed"
        # A consumer's release through the deleter, called without the GIL (ctypes).
        mts = []
        for _ in range(n):
            mt = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
            cap = t.__dlpack__(max_version=(1, 3))
            assert dh.lib.dlpack_capsule_consume(ctypes.py_object(cap), byref(mt)) == 0
            del cap
            mts.append(mt)
        before = tracemalloc.get_traced_memory()[0]
        for mt in mts:
            mt.contents.deleter(mt)
        freed = before - tracemalloc.get_traced_memory()[0]
        assert freed >= n * 200, freed
    finally:
        tracemalloc.stop()
    a = np.from_dlpack(t)
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def _to_py_object(mt_ptr):
    """Call Tensor's managed_tensor_to_py_object_no_sync on a managed tensor (handed over)."""
    api = _find(dh.import_tensor(np.arange(2.0)))[1].contents
    fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))(
        api.managed_tensor_to_py_object_no_sync)
    out = ctypes.c_void_p()
    rc = fn(ctypes.cast(mt_ptr, ctypes.c_void_p), byref(out))
    return rc, out


def test_exchange_api_to_py_object_wraps_a_valid_tensor():
    c = Counter()
    rc, out = _to_py_object(c.versioned())
    assert rc == 0 and out.value
    t = take(out)
    assert isinstance(t, dh.Tensor) and t.shape == (4,) and str(t.dtype) == "float64"
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(4.0))
    assert c.calls == 0
    t.release()
    assert c.calls == 1 and not c.live


@pytest.mark.parametrize("major,minor,flags", [(1, 0, 0x4), (1, 3, 0x8), (2, 0, 0)])
def test_exchange_api_to_py_object_refuses_what_imports_refuse(major, minor, flags):
    # The rule of every other import: major 1, only the flag bits the declared version defines
    # (a 1.0 tensor's bit 2 would be re-exported as 1.3's "padded sub-byte"); the tensor is
    # released once and the exception is left set (DLPack 1.3: -1).
    c = Counter()
    with pytest.raises(SystemError) as e:  # ctypes reports the set exception as the cause
        _to_py_object(c.versioned(major=major, minor=minor, flags=flags))
    assert isinstance(e.value.__cause__, BufferError), e.value.__cause__
    assert c.calls == 1 and not c.live


_ALLOCATOR_CHILD = r"""
import ctypes, sys
import numpy as np
import dlpack_helpers as dh
from dlpack_helpers import _lib
out = ctypes.POINTER(_lib.DLPackExchangeAPI)()
assert dh.lib.dlpack_exchange_api_find(dh.import_tensor(np.arange(2.0)), ctypes.byref(out)) == 0
SetError = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
alloc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_lib.DLTensor),
                         ctypes.POINTER(ctypes.POINTER(_lib.DLManagedTensorVersioned)),
                         ctypes.c_void_p, SetError)(out.contents.managed_tensor_allocator)
errors = []
on_error = SetError(lambda ctx, kind, msg: errors.append((kind.decode(), msg.decode())))
for shape in eval(sys.argv[1]):
    dims = (ctypes.c_int64 * len(shape))(*shape)
    proto = _lib.DLTensor()
    proto.device = _lib.DLDevice(1, 0)
    proto.ndim = len(shape)
    proto.shape = dims
    proto.dtype = _lib.DLDataType(2, 32, 1)
    mt = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
    rc = alloc(ctypes.byref(proto), ctypes.byref(mt), None, on_error)
    print(rc, bool(mt), errors[-1][0] if rc else "-", flush=True)
    if rc == 0:
        dh.lib.dlpack_tensor_delete(mt)
"""


@pytest.mark.parametrize("shape,expect", [
    ([2, 3], "0 True -"),
    # 2**60 bytes: within isize, but no system gives it: MemoryError, not an abort
    ([2**58], "-1 False MemoryError"),
    # an element count past 128 bits: MemoryError, never a wrapped (small) size
    ([2**62, 2**62, 2**62, 2**62, 16], "-1 False MemoryError"),
])
def test_exchange_api_allocator_sizes_are_checked_and_fallible(shape, expect):
    """`managed_tensor_allocator` of Tensor's table: a size that overflows or cannot be
    allocated is MemoryError through `set_error` (-1), never a wrapped size or a process abort
    (in a child process, which an abort would kill)."""
    r = subprocess.run([sys.executable, "-c", _ALLOCATOR_CHILD, repr([shape])],
                       capture_output=True, text=True, timeout=600, cwd="/")
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.split("\n")[0] == expect, r.stdout


_HOSTILE_CHILD = r"""
import ctypes, sys
import numpy as np
import dlpack_helpers as dh
from dlpack_helpers import _lib
out = ctypes.POINTER(_lib.DLPackExchangeAPI)()
assert dh.lib.dlpack_exchange_api_find(dh.import_tensor(np.arange(2.0)), ctypes.byref(out)) == 0
api = out.contents
SetError = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
alloc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_lib.DLTensor),
                         ctypes.POINTER(ctypes.POINTER(_lib.DLManagedTensorVersioned)),
                         ctypes.c_void_p, SetError)(api.managed_tensor_allocator)
errors = []
on_error = SetError(lambda ctx, kind, msg: errors.append((kind.decode(), msg.decode())))
fn = lambda name: ctypes.cast(getattr(api, name), ctypes.c_void_p).value
Obj = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
Raw = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
case = sys.argv[1]
buf = ctypes.create_string_buffer(256)
t = dh.import_tensor(np.arange(3.0))
if case.startswith("alloc"):
    dims = (ctypes.c_int64 * 2)(2, 3)
    proto = _lib.DLTensor()
    proto.device = _lib.DLDevice(1, 0)
    proto.ndim, proto.shape = 2, dims
    proto.dtype = _lib.DLDataType(2, 32, 1)
    if case == "alloc_null_shape":
        proto.shape = None
    if case == "alloc_ndim_huge":
        proto.ndim = 1 << 30
    mt = ctypes.POINTER(_lib.DLManagedTensorVersioned)()
    rc = alloc(ctypes.byref(proto), ctypes.byref(mt), None, on_error)
    print(rc, bool(mt), errors[-1][0] if rc else "-", flush=True)
    sys.exit(0)
try:
    if case == "from_null_out":
        Obj(fn("managed_tensor_from_py_object_no_sync"))(t, None)
    if case == "from_null_obj":
        Raw(fn("managed_tensor_from_py_object_no_sync"))(None, ctypes.addressof(buf))
    if case == "dltensor_null_out":
        Obj(fn("dltensor_from_py_object_no_sync"))(t, None)
    if case == "dltensor_null_obj":
        Raw(fn("dltensor_from_py_object_no_sync"))(None, ctypes.addressof(buf))
    if case == "to_null_out":
        released = []
        Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        on_delete = Deleter(lambda p: released.append(p))
        shape = (ctypes.c_int64 * 1)(3)
        data = (ctypes.c_double * 3)()
        mt = _lib.DLManagedTensorVersioned()
        mt.version = _lib.DLPackVersion(1, 3)
        mt.deleter = ctypes.cast(on_delete, type(mt.deleter))
        mt.dl_tensor.data = ctypes.cast(data, ctypes.c_void_p)
        mt.dl_tensor.device = _lib.DLDevice(1, 0)
        mt.dl_tensor.ndim, mt.dl_tensor.shape = 1, shape
        mt.dl_tensor.dtype = _lib.DLDataType(2, 64, 1)
        try:
            Raw(fn("managed_tensor_to_py_object_no_sync"))(ctypes.addressof(mt), None)
        finally:
            print("released", len(released))
    print("no error", flush=True)
except SystemError as e:  # ctypes reports the exception the function set as the cause
    print(type(e.__cause__).__name__, e.__cause__, flush=True)
"""


@pytest.mark.parametrize("case,expect", [
    ("alloc_null_shape", "-1 False ValueError"),
    ("alloc_ndim_huge", "-1 False ValueError"),
    ("from_null_out", "ValueError out is NULL"),
    ("from_null_obj", "ValueError py_object is NULL"),
    ("dltensor_null_out", "ValueError out is NULL"),
    ("dltensor_null_obj", "ValueError py_object is NULL"),
    ("to_null_out", "released 1\nValueError out_py_object is NULL"),
])
def test_exchange_api_hostile_arguments_are_errors(case, expect):
    """Tensor's exchange table given a NULL pointer or a prototype whose shape cannot be read
    (NULL with ndim 2, ndim 2**30): a Python exception (or `set_error`) and -1, never a crash
    (each crashed the process: a NULL out written, pyo3 aborting on a NULL object, the shape
    read before ndim was bounded). `to_py_object` releases the tensor it was handed once. In a
    child process, which a crash would kill."""
    r = subprocess.run([sys.executable, "-c", _HOSTILE_CHILD, case],
                       capture_output=True, text=True, timeout=600, cwd="/")
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    assert r.stdout.strip().startswith(expect), r.stdout


_UNREADABLE_SHAPE_CHILD = r"""
import sys
import dlpack_helpers as dh
from producers import Counter
c = Counter()
p = c.versioned()
if sys.argv[1] == "ndim_huge":
    p.contents.dl_tensor.ndim = 1 << 30
else:
    p.contents.dl_tensor.shape = None
import ctypes
out = ctypes.c_void_p()
assert dh.lib.dlpack_capsule_new(p, ctypes.byref(out)) == 0
from producers import take
try:
    t = dh.import_tensor(take(out))
    print("imported", t.shape, flush=True)
except BufferError as e:
    print("refused", e, flush=True)
print("released", c.calls, flush=True)
"""


@pytest.mark.parametrize("case", ["ndim_huge", "null_shape"])
def test_tensor_shape_of_an_unreadable_producer_shape_is_an_error(case):
    """A Tensor once held its producer's tensor unvalidated until it was exported: `shape` and
    `strides` of an `ndim` of 2**30 read past the 2-entry shape (a crash), and a NULL shape with
    `ndim` 1 read as `()`. Since issue 34 no such Tensor exists: the import is refused with the
    validation status and the tensor released once. In a child process, which a crash would
    kill."""
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", _UNREADABLE_SHAPE_CHILD, case],
                       capture_output=True, text=True, timeout=600, cwd=here)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    lines = r.stdout.splitlines()
    want = {"ndim_huge": "INVALID_NDIM", "null_shape": "NULL_SHAPE"}[case]
    assert lines[0].startswith("refused") and want in lines[0], lines
    assert lines[1] == "released 1", lines


def test_case_59_dim_order_by_stride():
    """Peer case 59 (cutlass#3031): the dimension order by stride, innermost first; extent-1
    dimensions last (higher index first) whatever their strides, so dim_order[0] is never an
    extent-1 dimension that happens to have stride 1."""
    a = np.zeros((2, 3, 4), np.float32)
    assert dh.import_tensor(a).dim_order == (2, 1, 0)
    assert dh.import_tensor(np.asfortranarray(a)).dim_order == (0, 1, 2)
    assert dh.import_tensor(a.transpose(1, 2, 0)).dim_order == (1, 0, 2)
    for pos in range(3):
        shape = [3, 4]
        shape.insert(pos, 1)
        c = np.zeros(shape, np.float32)
        want = tuple(d for d in (2, 1, 0) if d != pos) + (pos,)
        assert dh.import_tensor(c).dim_order == want, shape
        f = np.asfortranarray(c)
        want_f = tuple(d for d in (0, 1, 2) if d != pos) + (pos,)
        assert dh.import_tensor(f).dim_order == want_f, shape
    assert dh.import_tensor(np.broadcast_to(np.arange(3.0), (4, 3))).dim_order == (0, 1)
    assert dh.import_tensor(np.arange(12.0).reshape(3, 4)[::-1, ::-2]).dim_order == (1, 0)
    assert dh.import_tensor(np.array(1.0)).dim_order == ()
