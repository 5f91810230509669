"""Validation, layout and ownership helpers on real NumPy tensors, through the shared library.

Capsules come from ``arr.__dlpack__(max_version=(1, 3))`` (versioned) or ``arr.__dlpack__()``
(legacy). Taking ownership renames the capsule to its "used_" name first (DLPack Python spec:
the capsule's destructor then does nothing), and the tensor is released exactly once through
``dlpack_tensor_delete`` / ``dlpack_legacy_tensor_delete`` or a wrapper's deleter.
"""

import ctypes
import os
import sys
from contextlib import contextmanager

import numpy as np
import pytest

LIB = ctypes.CDLL(os.environ["DLPACK_HELPERS_LIBRARY"])

# The ctypes mirrors of the package, whose layouts tests-py/test_prototypes.py checks against C.
from dlpack_helpers._lib import (  # noqa: E402
    DLDataType, DLManagedTensor, DLManagedTensorVersioned, DLTensor, Layout,
    ValidateOptions as Options,
)

C_CONTIGUOUS, F_CONTIGUOUS, COMPACT, BROADCAST, NEGATIVE_STRIDES, STRIDES_IMPLIED, EMPTY = (
    1, 2, 4, 8, 16, 32, 64)
REQUIRE_C_CONTIGUOUS, REQUIRE_WRITABLE, REJECT_BROADCAST = 2, 32, 512
READ_ONLY_FLAG = 1
WRITABILITY_READ_ONLY, WRITABILITY_WRITABLE = 0, 1
STATUS = {"OK": 0, "NOT_CONTIGUOUS": 29, "READ_ONLY": 32, "UNSUPPORTED_STRIDES": 36}

VP = ctypes.POINTER(DLManagedTensorVersioned)
LP = ctypes.POINTER(DLManagedTensor)
LIB.dlpack_tensor_validate.argtypes = [VP, ctypes.POINTER(Options), ctypes.POINTER(Layout)]
LIB.dlpack_legacy_tensor_validate.argtypes = [LP, ctypes.POINTER(Options), ctypes.POINTER(Layout)]
LIB.dlpack_tensor_layout.argtypes = [VP, ctypes.POINTER(Layout)]
LIB.dlpack_tensor_delete.argtypes = [VP]
LIB.dlpack_tensor_delete.restype = None
LIB.dlpack_legacy_tensor_delete.argtypes = [LP]
LIB.dlpack_legacy_tensor_delete.restype = None
LIB.dlpack_dltensor_data_address.argtypes = [ctypes.POINTER(DLTensor), ctypes.POINTER(ctypes.c_void_p)]
LIB.dlpack_tensor_writability.argtypes = [VP, ctypes.POINTER(ctypes.c_int32)]
LIB.dlpack_versioned_to_legacy.argtypes = [VP, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(LP)]
LIB.dlpack_legacy_to_versioned.argtypes = [LP, ctypes.c_uint64, ctypes.POINTER(VP)]
LIB.dlpack_dtype_format.argtypes = [DLDataType, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
LIB.dlpack_last_error_message.restype = ctypes.c_char_p

capi = ctypes.pythonapi
capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
capi.PyCapsule_SetName.restype = ctypes.c_int
capi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
capi.PyCapsule_IsValid.restype = ctypes.c_int
capi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]

# Capsule names must outlive the capsules: module-level bytes objects.
USED_VERSIONED = b"used_dltensor_versioned"
USED_LEGACY = b"used_dltensor"


def take(capsule, name, used):
    """Take ownership of a capsule's tensor: get the pointer, then rename before anything can fail."""
    ptr = capi.PyCapsule_GetPointer(capsule, name)
    assert ptr
    assert capi.PyCapsule_SetName(capsule, used) == 0
    return ptr


@contextmanager
def versioned(arr):
    capsule = arr.__dlpack__(max_version=(1, 3))
    ptr = ctypes.cast(take(capsule, b"dltensor_versioned", USED_VERSIONED), VP)
    try:
        yield ptr
    finally:
        LIB.dlpack_tensor_delete(ptr)  # exactly once; the renamed capsule does nothing


def validate(ptr, flags=0):
    opts = Options(struct_size=ctypes.sizeof(Options), flags=flags)
    lay = Layout()
    status = LIB.dlpack_tensor_validate(ptr, ctypes.byref(opts), ctypes.byref(lay))
    return status, lay


def first_element(ptr):
    addr = ctypes.c_void_p()
    assert LIB.dlpack_dltensor_data_address(ctypes.byref(ptr.contents.dl_tensor), ctypes.byref(addr)) == 0
    return addr.value or 0


def gather(ptr, lay):
    """Read every element through the tensor's own data, byte_offset, shape and strides."""
    t = ptr.contents.dl_tensor
    base = first_element(ptr)
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    if strides is None:
        strides, acc = [0] * t.ndim, 1
        for i in reversed(range(t.ndim)):
            strides[i], acc = acc, acc * shape[i]
    itemsize = lay.element_bits // 8
    out = []
    for idx in np.ndindex(*shape):
        off = sum(i * s for i, s in zip(idx, strides)) * itemsize
        out.append(ctypes.c_double.from_address(base + off).value)
    return np.array(out).reshape(shape)


def props(lay):
    return {n for n, b in [("C", C_CONTIGUOUS), ("F", F_CONTIGUOUS), ("compact", COMPACT),
                           ("broadcast", BROADCAST), ("negative", NEGATIVE_STRIDES),
                           ("empty", EMPTY)] if lay.properties & b}


BASE = np.arange(24.0).reshape(4, 6)

CASES = {
    "contiguous": (BASE, {"C", "compact"}),
    "transposed": (BASE.T, {"F", "compact"}),
    "column_slice": (BASE[:, ::2], set()),
    "row_slice": (BASE[1:3], {"C", "compact"}),
    "negative_step": (BASE[::-1, ::-2], {"negative"}),
    "reversed_1d": (np.arange(5.0)[::-1], {"negative"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_strided_views_match_numpy(name):
    arr, want = CASES[name]
    with versioned(arr) as ptr:
        status, lay = validate(ptr)
        assert status == 0, LIB.dlpack_last_error_message()
        assert lay.numel == arr.size
        assert lay.nbytes == arr.nbytes
        assert props(lay) == want
        # The bytes touched are exactly the span NumPy's own strides imply.
        lo = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides) if s > 0) + arr.itemsize
        assert (lay.lowest_byte - ptr.contents.dl_tensor.byte_offset, lay.end_byte - ptr.contents.dl_tensor.byte_offset) == (lo, hi)
        assert first_element(ptr) == arr.__array_interface__["data"][0]
        np.testing.assert_array_equal(gather(ptr, lay), arr)
        c_status, _ = validate(ptr, REQUIRE_C_CONTIGUOUS)
        assert c_status == (0 if arr.flags.c_contiguous else STATUS["NOT_CONTIGUOUS"])
        assert ("C" in want) == arr.flags.c_contiguous and ("F" in want) == arr.flags.f_contiguous


def test_broadcast_is_read_only_and_reported():
    arr = np.broadcast_to(np.arange(3.0), (4, 3))
    with versioned(arr) as ptr:
        status, lay = validate(ptr)
        assert status == 0
        assert props(lay) == {"broadcast"}
        assert (lay.numel, lay.storage_elements, lay.end_byte - lay.lowest_byte) == (12, 3, 24)
        np.testing.assert_array_equal(gather(ptr, lay), arr)
        w = ctypes.c_int32(-1)
        assert LIB.dlpack_tensor_writability(ptr, ctypes.byref(w)) == 0
        assert w.value == WRITABILITY_READ_ONLY  # peer case 46: NumPy sets READ_ONLY
        assert validate(ptr, REQUIRE_WRITABLE)[0] == STATUS["READ_ONLY"]
        assert validate(ptr, REJECT_BROADCAST)[0] == STATUS["UNSUPPORTED_STRIDES"]


def test_writable_array_is_writable():
    with versioned(np.zeros(3)) as ptr:
        w = ctypes.c_int32(-1)
        assert LIB.dlpack_tensor_writability(ptr, ctypes.byref(w)) == 0
        assert w.value == WRITABILITY_WRITABLE
        assert validate(ptr, REQUIRE_WRITABLE)[0] == 0


def test_zero_d():
    arr = np.array(3.5)
    with versioned(arr) as ptr:
        status, lay = validate(ptr)
        assert status == 0, LIB.dlpack_last_error_message()
        assert (lay.numel, lay.nbytes, ptr.contents.dl_tensor.ndim) == (1, 8, 0)
        assert {"C", "F", "compact"} <= props(lay)
        assert ctypes.c_double.from_address(first_element(ptr)).value == 3.5


@pytest.mark.parametrize("shape", [(0,), (0, 3), (1, 8, 0, 128)])
def test_empty(shape):
    arr = np.zeros(shape, dtype=np.float32)
    with versioned(arr) as ptr:
        status, lay = validate(ptr, REQUIRE_C_CONTIGUOUS)
        assert status == 0, LIB.dlpack_last_error_message()
        assert (lay.numel, lay.nbytes, lay.end_byte - lay.lowest_byte) == (0, 0, 0)
        assert {"C", "F", "compact", "empty"} <= props(lay)


def test_dtype_names_of_numpy_exports():
    for dt, want in [(np.float32, "float32"), (np.bool_, "bool"), (np.complex64, "complex64"),
                     (np.uint8, "uint8"), (np.int64, "int64"), (np.float16, "float16")]:
        with versioned(np.zeros(2, dtype=dt)) as ptr:
            buf = ctypes.create_string_buffer(32)
            assert LIB.dlpack_dtype_format(ptr.contents.dl_tensor.dtype, buf, 32, None) == 0
            assert buf.value.decode() == want


def test_versioned_to_legacy_and_back_release_numpy_once():
    arr = np.arange(12.0).reshape(3, 4)[:, 1:]
    refs = sys.getrefcount(arr)
    capsule = arr.__dlpack__(max_version=(1, 3))
    assert sys.getrefcount(arr) == refs + 1  # NumPy's tensor holds the array
    ptr = ctypes.cast(take(capsule, b"dltensor_versioned", USED_VERSIONED), VP)
    legacy = LP()
    dropped = ctypes.c_uint64(99)
    assert LIB.dlpack_versioned_to_legacy(ptr, 0, ctypes.byref(dropped), ctypes.byref(legacy)) == 0
    assert dropped.value == 0
    back = VP()
    assert LIB.dlpack_legacy_to_versioned(legacy, 0, ctypes.byref(back)) == 0
    status, lay = validate(back)
    assert status == 0
    np.testing.assert_array_equal(gather(back, lay), arr)
    # One delete releases the chain: our versioned wrapper -> legacy wrapper -> NumPy's tensor.
    LIB.dlpack_tensor_delete(back)
    assert sys.getrefcount(arr) == refs  # NumPy's deleter ran exactly once
    del capsule  # renamed: its destructor does nothing
    assert sys.getrefcount(arr) == refs


def test_legacy_capsule():
    arr = np.arange(6.0).reshape(2, 3).T
    capsule = arr.__dlpack__()
    ptr = ctypes.cast(take(capsule, b"dltensor", USED_LEGACY), LP)
    try:
        opts = Options(struct_size=ctypes.sizeof(Options), flags=REQUIRE_WRITABLE)
        lay = Layout()
        # Legacy: writability unknown, refused unless the caller assumes it (documented).
        assert LIB.dlpack_legacy_tensor_validate(ptr, ctypes.byref(opts), ctypes.byref(lay)) == STATUS["READ_ONLY"]
        assert LIB.dlpack_legacy_tensor_validate(ptr, None, ctypes.byref(lay)) == 0
        assert props(lay) == {"F", "compact"} and lay.numel == 6
    finally:
        LIB.dlpack_legacy_tensor_delete(ptr)


def test_read_only_refused_by_legacy_conversion():
    arr = np.arange(4.0)
    arr.flags.writeable = False
    capsule = arr.__dlpack__(max_version=(1, 3))
    ptr = ctypes.cast(take(capsule, b"dltensor_versioned", USED_VERSIONED), VP)
    try:
        assert ptr.contents.flags & READ_ONLY_FLAG
        legacy = LP()
        assert LIB.dlpack_versioned_to_legacy(ptr, 0, None, ctypes.byref(legacy)) == STATUS["READ_ONLY"]
        assert not legacy  # not written on failure; we still own ptr
    finally:
        LIB.dlpack_tensor_delete(ptr)
