"""Issue 34 item 1: no `Tensor` exists for a tensor that fails the DLPack rules, whatever path it
came by (a versioned or legacy capsule, `__dlpack__`, an exchange table, the C imports), and no
export reads a byte of one. Every refusal releases the producer's tensor exactly once.

A test double (`producers.Counter`) makes the faulty tensors with ctypes on NumPy memory; the
checks run against the real library and the real package."""
import builtins
import ctypes
import subprocess
import sys
from ctypes import POINTER, byref, c_int64, c_void_p

import numpy as np
import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib
from producers import Counter, Producer, take



def raised(tag):
    """The exception the package raises for a status (`dlpack_status_python_exception`)."""
    st = next(c for c in range(1, 200) if lib.dlpack_status_string(c) == tag.encode())
    return getattr(builtins, lib.dlpack_status_python_exception(st).decode())


def _set_shape(mt, shape, strides):
    keep = ((c_int64 * len(shape))(*shape), (c_int64 * len(strides))(*strides))
    mt.contents.dl_tensor.ndim = len(shape)
    mt.contents.dl_tensor.shape = ctypes.cast(keep[0], POINTER(c_int64))
    mt.contents.dl_tensor.strides = ctypes.cast(keep[1], POINTER(c_int64))
    return keep


# (name, how to break the tensor, the status tag the refusal carries). Each breaks one rule of
# `dlpack_tensor_validate`; the tensor is otherwise the Counter's valid float64 [0, 1, 2, 3].
FAULTS = [
    ("null_data", lambda mt: setattr(mt.contents.dl_tensor, "data", None), "NULL_DATA"),
    ("negative_extent", lambda mt: _set_shape(mt, [-3], [1]), "INVALID_SHAPE"),
    ("dtype_code_99", lambda mt: setattr(mt.contents.dl_tensor, "dtype", _lib.DLDataType(99, 32, 1)),
     "INVALID_DTYPE"),
    ("device_id_minus_1", lambda mt: setattr(mt.contents.dl_tensor, "device", _lib.DLDevice(1, -1)),
     "INVALID_DEVICE"),
    # Peer case 56 (cupy#10172): a reversed view's -1 divided as unsigned became 2**62 - 1.
    ("case_56_stride_2_62", lambda mt: _set_shape(mt, [2], [2**62 - 1]), "OVERFLOW"),
    ("case_56_two_dims", lambda mt: _set_shape(mt, [2, 2], [2**62 - 1, 1]), "OVERFLOW"),
    ("ndim_2_30", lambda mt: setattr(mt.contents.dl_tensor, "ndim", 2**30), "INVALID_NDIM"),
    ("byte_offset_above_int64", lambda mt: setattr(mt.contents.dl_tensor, "byte_offset", 2**63),
     "OVERFLOW"),
]
IDS = [f[0] for f in FAULTS]


def broken(counter, fault, **kw):
    mt = counter.versioned(**kw)
    keep = fault[1](mt)
    counter.live[ctypes.addressof(mt.contents)] += (keep,)
    return mt


def broken_capsule(counter, fault, **kw):
    out = c_void_p()
    assert lib.dlpack_capsule_new(broken(counter, fault, **kw), byref(out)) == 0
    return take(out)


def _refused(fault, call):
    with pytest.raises(raised(fault[2]), match=fault[2]):
        call()


@pytest.mark.parametrize("fault", FAULTS, ids=IDS)
@pytest.mark.parametrize("path", ["capsule", "dunder_fast", "dunder_general", "dunder_copy_false"])
def test_import_tensor_refuses_an_invalid_versioned_tensor(fault, path):
    c = Counter()
    if path == "capsule":
        _refused(fault, lambda: dh.import_tensor(broken_capsule(c, fault)))
    else:
        p = Producer(lambda kw: broken_capsule(c, fault))
        kw = {"dunder_fast": {}, "dunder_general": {"legacy_writable": False},
              "dunder_copy_false": {"copy": False}}[path]
        _refused(fault, lambda: dh.import_tensor(p, **kw))
    assert c.calls == 1 and not c.live  # released once, by the refusal


@pytest.mark.parametrize("fault", FAULTS, ids=IDS)
def test_read_only_invalid_tensor_is_refused_before_any_export(fault):
    """The crash of the issue: READ_ONLY set, NULL data; the legacy export (what JAX, TF, Warp
    and ONNX Runtime ask for) copied it. Now no Tensor exists to export."""
    c = Counter()
    _refused(fault, lambda: dh.import_tensor(broken_capsule(c, fault, flags=1)))
    assert c.calls == 1


@pytest.mark.parametrize("fault", FAULTS, ids=IDS)
def test_c_imports_refuse_an_invalid_versioned_tensor(fault):
    c = Counter()
    out = POINTER(_lib.DLManagedTensorVersioned)()
    st = lib.dlpack_capsule_import(broken_capsule(c, fault), 0, byref(out), None)
    assert lib.dlpack_status_string(st).decode() == fault[2]
    assert not out and c.calls == 1
    st = lib.dlpack_capsule_consume(broken_capsule(c, fault), byref(out))
    assert lib.dlpack_status_string(st).decode() == fault[2]
    assert not out and c.calls == 2
    p = Producer(lambda kw: broken_capsule(c, fault))
    st = lib.dlpack_object_import(p, None, byref(out), None)
    assert lib.dlpack_status_string(st).decode() == fault[2]
    assert not out and c.calls == 3 and not c.live


def _our_table():
    cap = dh.Tensor.__dlpack_c_exchange_api__
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return _lib.DLPackExchangeAPI.from_address(get(cap, b"dlpack_exchange_api"))


@pytest.mark.parametrize("fault", FAULTS, ids=IDS)
def test_our_exchange_table_refuses_an_invalid_tensor(fault):
    """The package's own table answers as every other entry point: `to_py_object` makes no
    Tensor of an invalid tensor (it releases it and sets the same exception)."""
    api = _our_table()
    to_py = ctypes.PYFUNCTYPE(ctypes.c_int, c_void_p, POINTER(ctypes.py_object))(
        api.managed_tensor_to_py_object_no_sync)
    c = Counter()
    mt = broken(c, fault)
    out = ctypes.py_object()
    with pytest.raises(raised(fault[2]), match=fault[2]):
        # PYFUNCTYPE: a nonzero return with an exception set raises it here.
        if to_py(ctypes.cast(mt, c_void_p), byref(out)) != 0:
            raise AssertionError("-1 without an exception")
    assert c.calls == 1


def test_valid_tensors_still_pass_every_path():
    c = Counter()
    with dh.import_tensor(c.capsule()) as t:
        assert t.shape == (4,) and np.from_dlpack(t).tolist() == [0.0, 1.0, 2.0, 3.0]
        # A re-import of our own Tensor (its exchange table) and of its views.
        with dh.import_tensor(t) as u:
            assert u.source == "exchange_api" and u.data_ptr == t.data_ptr
        with dh.import_tensor(t, use_exchange_api=False) as u:
            assert u.data_ptr == t.data_ptr
    assert c.calls == 1


def test_case_56_reversed_view_keeps_its_negative_stride():
    """Peer case 56: a correct reversed view keeps its -1 through every hop."""
    x = np.arange(6.0)[::-1]
    with dh.import_tensor(x) as t:
        assert t.strides == (-1,)
        with dh.import_tensor(t) as u:
            assert u.strides == (-1,)
            assert np.from_dlpack(u).tolist() == x.tolist()
        assert np.from_dlpack(dh.import_tensor(t, copy=True)).tolist() == x.tolist()
    y = np.arange(12.0).reshape(3, 4)[::-1, ::-2]
    with dh.import_tensor(y) as t:
        assert t.strides == (-4, -2)
        assert np.from_dlpack(t).tolist() == y.tolist()


def test_case_56_versioned_capsule_with_stride_2_62_is_refused_everywhere():
    """Peer case 56 by name: strides (2**62 - 1, 4) through import_tensor and the C imports."""
    for entry in ("import_tensor", "capsule_import", "object_import"):
        c = Counter()
        fault = ("case_56", lambda mt: _set_shape(mt, [2, 2], [2**62 - 1, 4]), "OVERFLOW")
        if entry == "import_tensor":
            _refused(fault, lambda: dh.import_tensor(broken_capsule(c, fault)))
        else:
            out = POINTER(_lib.DLManagedTensorVersioned)()
            st = (lib.dlpack_capsule_import(broken_capsule(c, fault), 0, byref(out), None)
                  if entry == "capsule_import" else
                  lib.dlpack_object_import(Producer(lambda kw: broken_capsule(c, fault)), None,
                                           byref(out), None))
            assert lib.dlpack_status_string(st) == b"OVERFLOW"
        assert c.calls == 1 and not c.live


_COPY_CHILD = r"""
import ctypes, json, sys
sys.path[:0] = json.loads(sys.argv[1])
import numpy as np
import dlpack_helpers as dh
from producers import Counter
c = Counter()
mt = c.versioned(flags=1)  # READ_ONLY
mt.contents.dl_tensor.byte_offset = 2**62
from ctypes import byref, c_void_p
from dlpack_helpers._lib import lib
from producers import take
out = c_void_p()
assert lib.dlpack_capsule_new(mt, byref(out)) == 0
cap = take(out)
try:
    t = dh.import_tensor(cap)
except BufferError as e:
    print("refused at import:", e)
    sys.exit(0)
for call in (lambda: t.__dlpack__(), lambda: t.__dlpack__(max_version=(1, 3), copy=True)):
    try:
        np.from_dlpack(call()) if False else call()
        print("exported")
    except BufferError as e:
        print("refused at export:", e)
# Released while the producer (its deleter is a ctypes callback `c` owns) is alive: left to
# interpreter shutdown, the garbage collector may free `c` first (free-threaded 3.13t does),
# and the Tensor's release then calls a freed callback.
del t, cap
import gc
gc.collect()
"""


def test_byte_offset_2_62_is_never_read():
    """A byte_offset of 2**62 on a live buffer: within int64_t, so DLPack's rules pass it, but no
    host copy may read it (it was read directly: a segfault). Run in a child process, so that a
    library that reads it fails this test alone."""
    r = subprocess.run([sys.executable, "-c", _COPY_CHILD, __import__("json").dumps(sys.path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert "exported" not in r.stdout, r.stdout
