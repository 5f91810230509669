"""Plain ctypes against the C API of dlpack-helpers, on a NumPy array.

No binding package: the DLPack structs are declared with ctypes, the capsule comes from NumPy's
``__dlpack__(max_version=(1, 3))``, and the library checks the version, reports the device and
finally releases the tensor by calling the producer's deleter exactly once.

Ownership moves the DLPack way: the capsule is renamed ``used_dltensor_versioned`` at the moment
we take the tensor, before any step that can fail, so NumPy's capsule destructor leaves it alone
and our ``dlpack_tensor_delete`` is the one release.

Run: ``python examples/python_ctypes.py`` with ``DLPACK_HELPERS_LIBRARY`` naming the shared
library (``target/release/libdlpack_helpers.so`` after ``cargo build --release``); it exits
non-zero if a step misbehaves.
"""

import ctypes
import os
import sys

import numpy as np


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),  # in elements
        ("byte_offset", ctypes.c_uint64),  # in bytes
    ]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

STATUS_OK = 0
KDL_CPU = 1
KDL_FLOAT = 2


def load_library():
    path = os.environ.get("DLPACK_HELPERS_LIBRARY", "libdlpack_helpers.so")
    lib = ctypes.CDLL(path)
    status = ctypes.c_int32
    tensor_p = ctypes.POINTER(DLManagedTensorVersioned)
    lib.dlpack_tensor_check_version.argtypes = [tensor_p, ctypes.POINTER(ctypes.c_int32)]
    lib.dlpack_tensor_check_version.restype = status
    lib.dlpack_get_device.argtypes = [tensor_p, ctypes.POINTER(DLDevice)]
    lib.dlpack_get_device.restype = status
    lib.dlpack_is_cpu_accessible.argtypes = [DLDevice]
    lib.dlpack_is_cpu_accessible.restype = ctypes.c_bool
    lib.dlpack_tensor_delete.argtypes = [tensor_p]
    lib.dlpack_tensor_delete.restype = None
    lib.dlpack_last_error_message.argtypes = []
    lib.dlpack_last_error_message.restype = ctypes.c_char_p
    lib.dlpack_status_string.argtypes = [status]
    lib.dlpack_status_string.restype = ctypes.c_char_p
    lib.dlpack_status_python_exception.argtypes = [status]
    lib.dlpack_status_python_exception.restype = ctypes.c_char_p
    return lib


def raise_for(lib, status):
    """Raise the exception the DLPack Python specification prescribes for a failing status."""
    if status == STATUS_OK:
        return
    name = lib.dlpack_status_python_exception(status).decode()
    exc = {"BufferError": BufferError, "TypeError": TypeError, "ValueError": ValueError}.get(name, RuntimeError)
    raise exc(f"{lib.dlpack_status_string(status).decode()}: {lib.dlpack_last_error_message().decode()}")


_api = ctypes.pythonapi
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_USED = ctypes.c_char_p(b"used_dltensor_versioned")  # the name must outlive the capsule


def take(capsule):
    """Take ownership of the tensor in a "dltensor_versioned" capsule (renaming it first)."""
    if not _api.PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        raise BufferError("not an unused dltensor_versioned capsule")
    address = _api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    if _api.PyCapsule_SetName(capsule, _USED) != 0:
        raise RuntimeError("PyCapsule_SetName failed")
    return ctypes.cast(address, ctypes.POINTER(DLManagedTensorVersioned))


def to_list(lib, tensor):
    """Read a float64 tensor on the host into nested Python lists (row-major), then release it."""
    try:
        compat = ctypes.c_int32(-1)
        raise_for(lib, lib.dlpack_tensor_check_version(tensor, ctypes.byref(compat)))
        version = (tensor.contents.version.major, tensor.contents.version.minor)  # copied: freed below
        device = DLDevice()
        raise_for(lib, lib.dlpack_get_device(tensor, ctypes.byref(device)))
        if not lib.dlpack_is_cpu_accessible(device):
            raise BufferError(f"device type {device.device_type} is not host memory")
        t = tensor.contents.dl_tensor
        if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (KDL_FLOAT, 64, 1):
            raise TypeError("expected float64")
        shape = [t.shape[i] for i in range(t.ndim)]
        strides = [t.strides[i] for i in range(t.ndim)]  # elements; non-NULL from DLPack 1.2
        base = ctypes.cast(t.data + t.byte_offset, ctypes.POINTER(ctypes.c_double))

        def read(dim, offset):
            if dim == len(shape):
                return base[offset]
            return [read(dim + 1, offset + i * strides[dim]) for i in range(shape[dim])]

        return read(0, 0), version, compat.value
    finally:
        lib.dlpack_tensor_delete(tensor)  # the producer's deleter, exactly once


def main():
    lib = load_library()
    # A non-contiguous view: transposed and stepped, so strides and byte_offset matter.
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    view = base[1:, ::2].T
    capsule = view.__dlpack__(max_version=(1, 3))
    values, version, compat = to_list(lib, take(capsule))
    assert values == view.tolist(), (values, view.tolist())
    assert version[0] == 1, version
    print(f"read a {view.shape} float64 view of DLPack {version[0]}.{version[1]} (compat {compat}): ok")
    del capsule  # renamed: NumPy's destructor does not free it a second time

    # Errors come back as the exception the Python specification names.
    try:
        raise_for(lib, lib.dlpack_get_device(None, ctypes.byref(DLDevice())))
        raise AssertionError("NULL tensor accepted")
    except ValueError as e:
        print(f"NULL tensor: {type(e).__name__}: {e}")
    print("python_ctypes: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
