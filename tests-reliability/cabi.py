"""ctypes mirrors of the structs the reliability tests pass by pointer, and the library loader.

The library under test is $DLPACK_HELPERS_LIBRARY (scripts/common.sh points it at the release
build); the panic matrix passes the test-panic build instead. Loaded with PyDLL: calls keep the
GIL, as the Python entry points require.
"""
from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, Structure, c_bool, c_char_p, c_int32, c_int64, c_size_t, c_uint32, c_uint64, c_void_p

from header import ROOT, DLDataType, DLDevice, DLPackVersion


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLManagedTensorVersioned(Structure):
    pass


VDELETER = ctypes.CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", VDELETER),
                                     ("flags", c_uint64), ("dl_tensor", DLTensor)]


class DLManagedTensor(Structure):
    pass


LDELETER = ctypes.CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", LDELETER)]


class Info(Structure):
    _fields_ = [("struct_size", c_size_t), ("version", c_char_p), ("major", c_uint32), ("minor", c_uint32),
                ("patch", c_uint32), ("dlpack_abi_major", c_uint32), ("dlpack_version", DLPackVersion),
                ("capabilities", c_uint64), ("accepts_legacy", c_bool)]


class ImportRequest(Structure):
    _fields_ = [("max_version", DLPackVersion), ("stream", c_void_p), ("has_dl_device", c_bool),
                ("dl_device", DLDevice), ("copy", c_int32), ("flags", c_uint32)]


class Stream(Structure):
    _fields_ = [("kind", c_int32), ("handle", c_void_p)]


class ExportRequest(Structure):
    _fields_ = [("has_max_version", c_bool), ("max_version", DLPackVersion), ("has_stream", c_bool),
                ("stream", c_int64), ("has_dl_device", c_bool), ("dl_device", DLDevice), ("copy", c_int32)]


class ExportPlan(Structure):
    _fields_ = [("kind", c_int32), ("version", DLPackVersion), ("device", DLDevice), ("copy", c_bool),
                ("flags", c_uint64), ("sync", c_int32), ("stream", Stream)]


class VersionChoice(Structure):
    _fields_ = [("kind", c_int32), ("version", DLPackVersion)]


class ErrorObject(Structure):
    """dlpack_helpers_error: the caller-owned error object of the *_with_error variants."""
    _fields_ = [("struct_size", c_size_t), ("status", c_int32), ("reserved", c_uint32),
                ("message_length", c_size_t), ("message", ctypes.c_char * 512)]


def error_object(fill: int = 0x5A) -> ErrorObject:
    """A whole error object: struct_size set, every other byte `fill` (to see what a call wrote)."""
    e = ErrorObject()
    ctypes.memset(ctypes.addressof(e), fill, ctypes.sizeof(e))
    e.struct_size = ctypes.sizeof(e)
    return e


WAIT = ctypes.CFUNCTYPE(c_int32, c_void_p, c_int32, c_void_p, c_void_p)
SYNC = ctypes.CFUNCTYPE(c_int32, c_void_p, c_int32, c_void_p)


class StreamBackend(Structure):
    _fields_ = [("ctx", c_void_p), ("wait", WAIT), ("synchronize", SYNC)]


WAIT_HANDLE = ctypes.CFUNCTYPE(c_int32, c_void_p, c_int32, c_void_p, c_int32, c_void_p)


class StreamBackendEx(Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("ctx", c_void_p), ("wait", WAIT), ("synchronize", SYNC),
                ("wait_handle", WAIT_HANDLE)]


class PointerInfo(Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("memory_class", c_int32), ("host_access", c_int32),
                ("device", DLDevice), ("native_device", c_void_p), ("backends_asked", c_uint32),
                ("backends_unreachable", c_uint32), ("answered_by", c_uint32), ("device_id_known", ctypes.c_uint64)]


def library_path(env: str = "DLPACK_HELPERS_LIBRARY") -> str:
    p = os.environ.get(env) or str(ROOT / "target" / "release" / "libdlpack_helpers.so")
    if not os.path.isfile(p):
        raise RuntimeError(f"{p} not found: build the library (cargo build --release) or set {env}")
    return p


def load(path: str, functions) -> ctypes.PyDLL:
    """Load the library and give every header function its prototype (pointers as void *)."""
    from header import ctype_of
    lib = ctypes.PyDLL(path)
    for f in functions.values():
        fn = getattr(lib, f.name)
        fn.restype = ctype_of(f.ret)
        fn.argtypes = [ctype_of(p.ctype) for p in f.params]
    return lib


def message(lib) -> str:
    p = lib.dlpack_last_error_message()
    assert p, "dlpack_last_error_message returned NULL"
    return ctypes.string_at(p).decode()


def addr(obj) -> int:
    return ctypes.addressof(obj)


Py_IncRef = ctypes.pythonapi.Py_IncRef
Py_IncRef.argtypes = [c_void_p]
Py_DecRef = ctypes.pythonapi.Py_DecRef
Py_DecRef.argtypes = [c_void_p]


def take_new_reference(address: int):
    """The Python object behind a new reference returned by the library, as a Python value
    (the library's reference is handed over)."""
    obj = ctypes.cast(address, ctypes.py_object).value  # takes its own reference
    Py_DecRef(address)
    return obj
