"""Issue 26: views of an already validated tensor (`dlpack_capsule_new_view_validated`,
`dlpack_tensor_new_view_validated`) against real NumPy arrays, and the `dlpack_helpers.Tensor`
paths that use them (`__dlpack__` from its second export on, its C exchange table).

A validated view must be exactly the view `dlpack_capsule_new_view` makes (same struct, flags,
shape, strides, owner reference, deleter behaviour), at the cost of the copy alone; what the copy
reads is still checked; what it does not read is not checked again (the caller's contract)."""
import ctypes
import gc
import sys
from ctypes import POINTER, byref, c_int64, c_uint32, c_void_p

import numpy as np
import pytest

import dlpack_helpers as dh
from dlpack_helpers import _lib
from dlpack_helpers._lib import lib
from producers import Counter, Producer, take

PV = POINTER(_lib.DLManagedTensorVersioned)
PL = POINTER(_lib.DLManagedTensor)
OK, NULL_POINTER, INVALID_NDIM, NULL_SHAPE, INVALID_SHAPE, OVERFLOW = 0, 1, 20, 21, 23, 24
INVALID_FLAGS, READ_ONLY_STATUS = 28, 32
INVALID_DEVICE = 48
CREATE_ALLOW_UNASSIGNED_DEVICE = 2**63  # a request bit of the producer helpers, never stored

ARRAYS = {
    "1-d": np.arange(6.0),
    "2-d C": np.arange(12.0).reshape(3, 4),
    "2-d strided": np.arange(24.0).reshape(4, 6)[::2, ::-3],
    "0-d": np.array(7.5),
    "9-d (shape and strides in a second allocation)": np.arange(2.0 ** 9).reshape((2,) * 9),
    "int8 F-order": np.asfortranarray(np.arange(12, dtype=np.int8).reshape(3, 4)),
    "empty": np.zeros((0, 3)),
}


def status_name(s):
    return lib.dlpack_status_string(s).decode()


def consumed(arr):
    """A validated managed tensor of `arr` (its own export, consumed and validated by the library)."""
    out = PV()
    assert lib.dlpack_capsule_consume(arr.__dlpack__(max_version=(1, 3)), byref(out)) == OK
    assert lib.dlpack_tensor_validate(out, None, None) == OK, lib.dlpack_last_error_message()
    return out


def fields(dl, flags=None):
    n = dl.ndim
    return (dl.data, dl.device.device_type, dl.device.device_id, n, dl.dtype.code, dl.dtype.bits, dl.dtype.lanes,
            dl.byte_offset, [dl.shape[i] for i in range(n)], [dl.strides[i] for i in range(n)], flags)


def capsule_view(fn, dl, flags, owner, kind):
    out = c_void_p()
    s = fn(byref(dl), flags, owner, kind, byref(out))
    return s, (take(out) if s == OK else None)


def versioned_of(cap):
    res = PV()
    assert lib.dlpack_capsule_consume(cap, byref(res)) == OK
    return res


@pytest.mark.parametrize("name", list(ARRAYS))
@pytest.mark.parametrize("flags", [0, _lib.FLAG_READ_ONLY])
def test_validated_view_is_the_checked_view(name, flags):
    arr = ARRAYS[name]
    src = consumed(arr)
    try:
        dl = src.contents.dl_tensor
        # Versioned capsules: the same tensor, field by field, and NumPy reads the same values.
        got = []
        for fn in (lib.dlpack_capsule_new_view, lib.dlpack_capsule_new_view_validated):
            s, cap = capsule_view(fn, dl, flags, arr, _lib.EXPORT_VERSIONED)
            assert s == OK, lib.dlpack_last_error_message()
            if flags == 0:
                np.testing.assert_array_equal(np.from_dlpack(_Holder(cap)), arr)
                s, cap = capsule_view(fn, dl, flags, arr, _lib.EXPORT_VERSIONED)
            v = versioned_of(cap)
            assert (v.contents.version.major, v.contents.version.minor) == (1, 3)
            got.append(fields(v.contents.dl_tensor, v.contents.flags))
            lib.dlpack_tensor_delete(v)
        # The managed tensor without a capsule: the same again.
        out = PV()
        assert lib.dlpack_tensor_new_view_validated(byref(dl), flags, arr, byref(out)) == OK
        assert (out.contents.version.major, out.contents.version.minor) == (1, 3)
        got.append(fields(out.contents.dl_tensor, out.contents.flags))
        lib.dlpack_tensor_delete(out)
        assert got[0] == got[1] == got[2]
        # Legacy capsules (writable views only: READ_ONLY is refused as by the checked export).
        if flags == 0:
            legacy = []
            for fn in (lib.dlpack_capsule_new_view, lib.dlpack_capsule_new_view_validated):
                s, cap = capsule_view(fn, dl, 0, arr, _lib.EXPORT_LEGACY)
                assert s == OK
                res = PV()
                assert lib.dlpack_capsule_consume(cap, byref(res)) == OK  # wrapped as versioned
                legacy.append(fields(res.contents.dl_tensor))
                lib.dlpack_tensor_delete(res)
            assert legacy[0] == legacy[1]
    finally:
        lib.dlpack_tensor_delete(src)


class _Holder:
    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kw):
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


def test_validated_views_hold_the_owner_and_release_it_once():
    arr = np.arange(5.0)
    src = consumed(arr)
    owner = object()
    before = sys.getrefcount(owner)
    out = PV()
    assert lib.dlpack_tensor_new_view_validated(byref(src.contents.dl_tensor), 0, owner, byref(out)) == OK
    assert sys.getrefcount(owner) == before + 1
    lib.dlpack_tensor_delete(out)
    assert sys.getrefcount(owner) == before
    s, cap = capsule_view(lib.dlpack_capsule_new_view_validated, src.contents.dl_tensor, 0, owner,
                          _lib.EXPORT_VERSIONED)
    assert s == OK and sys.getrefcount(owner) == before + 1
    del cap
    gc.collect()
    assert sys.getrefcount(owner) == before
    lib.dlpack_tensor_delete(src)


def test_validated_views_check_what_the_copy_reads():
    arr = np.arange(6.0).reshape(2, 3)
    src = consumed(arr)
    dl = src.contents.dl_tensor
    out, mt = c_void_p(), PV()
    cases = [  # (change, status) for both exports
        (lambda t: setattr(t, "ndim", -1), INVALID_NDIM),
        (lambda t: setattr(t, "ndim", 1025), INVALID_NDIM),
        (lambda t: setattr(t, "shape", None), NULL_SHAPE),
    ]
    for change, want in cases:
        t = _lib.DLTensor.from_buffer_copy(dl)
        change(t)
        assert lib.dlpack_capsule_new_view_validated(byref(t), 0, arr, _lib.EXPORT_VERSIONED, byref(out)) == want
        assert lib.dlpack_tensor_new_view_validated(byref(t), 0, arr, byref(mt)) == want
        assert not out.value and not mt
    # A bit DLPack 1.3 does not define (bit 63 is the unassigned-device-type opt-in, below).
    assert lib.dlpack_capsule_new_view_validated(byref(dl), 2**62, arr, _lib.EXPORT_VERSIONED, byref(out)) == INVALID_FLAGS
    assert lib.dlpack_tensor_new_view_validated(byref(dl), 2**62, arr, byref(mt)) == INVALID_FLAGS
    # The device rule holds without validation too (peer cases 54 and 55): a negative id is
    # refused; an unassigned type only with the opt-in, which is not stored in the view.
    for device, flags, want in (((1, -1), CREATE_ALLOW_UNASSIGNED_DEVICE, INVALID_DEVICE),
                                ((99, 0), 0, INVALID_DEVICE), ((99, 0), CREATE_ALLOW_UNASSIGNED_DEVICE, 0)):
        t = _lib.DLTensor.from_buffer_copy(dl)
        t.device.device_type, t.device.device_id = device
        assert lib.dlpack_capsule_new_view_validated(byref(t), flags, arr, _lib.EXPORT_VERSIONED, byref(out)) == want
        assert lib.dlpack_tensor_new_view_validated(byref(t), flags, arr, byref(mt)) == want
        if want == 0:
            assert mt.contents.flags == 0 and mt.contents.dl_tensor.device.device_type == 99
            lib.dlpack_tensor_delete(mt)
            ctypes.pythonapi.Py_DecRef.argtypes = [c_void_p]
            ctypes.pythonapi.Py_DecRef(out.value)  # the capsule's destructor releases the view
        out, mt = c_void_p(), PV()
    assert lib.dlpack_capsule_new_view_validated(byref(dl), _lib.FLAG_READ_ONLY, arr, _lib.EXPORT_LEGACY,
                                                 byref(out)) == READ_ONLY_STATUS  # peer case 50
    assert lib.dlpack_tensor_new_view_validated(None, 0, arr, byref(mt)) == NULL_POINTER
    assert lib.dlpack_tensor_new_view_validated(byref(dl), 0, arr, None) == NULL_POINTER
    # NULL strides are filled in exactly, or OVERFLOW (peer case 49), as by the checked export.
    shape = (c_int64 * 3)(0, 2**62, 4)
    t = _lib.DLTensor.from_buffer_copy(dl)
    t.ndim, t.shape, t.strides, t.dtype = 3, ctypes.cast(shape, POINTER(c_int64)), None, _lib.DLDataType(0, 8, 1)
    assert lib.dlpack_tensor_new_view_validated(byref(t), 0, arr, byref(mt)) == OVERFLOW
    assert lib.dlpack_capsule_new_view(byref(t), 0, arr, _lib.EXPORT_VERSIONED, byref(out)) == OVERFLOW
    lib.dlpack_tensor_delete(src)


def test_validated_view_does_not_validate_again():
    """The contract, shown: what the copy does not read is the caller's promise. A tensor that
    breaks it (a negative extent) is refused by the checked export and copied as it is by the
    validated one, never a fault."""
    arr = np.arange(6.0)
    src = consumed(arr)
    t = _lib.DLTensor.from_buffer_copy(src.contents.dl_tensor)
    shape = (c_int64 * 1)(-6)
    t.shape = ctypes.cast(shape, POINTER(c_int64))
    out, mt = c_void_p(), PV()
    assert lib.dlpack_capsule_new_view(byref(t), 0, arr, _lib.EXPORT_VERSIONED, byref(out)) == INVALID_SHAPE
    assert lib.dlpack_tensor_new_view_validated(byref(t), 0, arr, byref(mt)) == OK
    assert mt.contents.dl_tensor.shape[0] == -6
    lib.dlpack_tensor_delete(mt)
    lib.dlpack_tensor_delete(src)


# ------------------------------------------------------------ the package's Tensor uses them


def test_tensor_exports_stay_equal_from_the_second_on():
    for name, arr in ARRAYS.items():
        t = dh.import_tensor(arr)
        for _ in range(3):  # the first export validates, the later ones only copy
            np.testing.assert_array_equal(np.from_dlpack(t), arr, err_msg=name)
            caps = [t.__dlpack__(max_version=(1, 3)), t.__dlpack__()]
            assert [_name(c) for c in caps] == ["dltensor_versioned", "dltensor"]


def _name(cap):
    f = ctypes.pythonapi.PyCapsule_GetName
    f.restype, f.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return f(cap).decode()


def _bad_versioned_capsule(counter):
    """A versioned capsule whose tensor breaks DLPack (a negative extent): import does not
    validate a versioned tensor, every export must."""
    p = counter.versioned()
    p.contents.dl_tensor.shape[0] = -4
    out = c_void_p()
    assert lib.dlpack_capsule_new(p, byref(out)) == OK
    return take(out)


def test_an_invalid_tensor_is_refused_at_its_import():
    """Issue 34: the import refuses it (it was refused on every export, never cached); the
    producer's tensor is released once, every time."""
    c = Counter()
    for n in range(1, 3):
        with pytest.raises(BufferError, match="INVALID_SHAPE"):
            dh.import_tensor(Producer(lambda kw: _bad_versioned_capsule(c)))
        gc.collect()
        assert c.calls == n


def test_exchange_table_gives_a_view_that_outlives_the_tensor():
    arr = np.arange(10.0)
    t = dh.import_tensor(arr)
    req = _lib.ImportRequest()
    req.flags = _lib.IMPORT_EXCHANGE_API
    views = []
    for _ in range(3):
        out, how = PV(), c_uint32()
        assert lib.dlpack_object_import(t, byref(req), byref(out), byref(how)) == OK
        assert how.value & _lib.IMPORTED_EXCHANGE_API
        views.append(out)
    t.release()  # the views hold the owner: the memory stays valid
    for v in views:
        dl = v.contents.dl_tensor
        assert v.contents.flags & 2 == 0  # a view is never IS_COPIED
        assert (dl.ndim, dl.shape[0], dl.strides[0]) == (1, 10, 1)
        assert ctypes.cast(dl.data, POINTER(ctypes.c_double))[9] == 9.0
        lib.dlpack_tensor_delete(v)
