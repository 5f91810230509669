"""Test doubles beside the real producers: managed tensors with counting deleters, and Python
producers that behave like older or faulty peers. Built with ctypes on top of NumPy memory."""
import ctypes
from ctypes import CFUNCTYPE, POINTER, byref, c_char_p, c_int64, c_void_p, py_object

import numpy as np

from dlpack_helpers import _lib
from dlpack_helpers._lib import lib

PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
PyCapsule_New.restype = py_object
DESTRUCTOR = ctypes.cast(lib.dlpack_capsule_destructor, c_void_p).value

# Capsule names must outlive their capsules: module-level constants.
NAMES = {n: ctypes.create_string_buffer(n.encode()) for n in
         ("dltensor", "dltensor_versioned", "used_dltensor", "used_dltensor_versioned", "dltensor_used",
          "dlpack_exchange_api", "not_the_api")}


class Counter:
    """Counts deleter calls and tracks live tensors (the producer side)."""

    def __init__(self):
        self.calls = 0
        self.live = {}
        self.v_deleter = CFUNCTYPE(None, POINTER(_lib.DLManagedTensorVersioned))(self._delete)
        self.l_deleter = CFUNCTYPE(None, POINTER(_lib.DLManagedTensor))(self._delete)

    def _delete(self, p):
        self.calls += 1
        self.live.pop(ctypes.addressof(p.contents))

    def _fill(self, dl, arr):
        shape = (c_int64 * max(arr.ndim, 1))(*arr.shape)
        strides = (c_int64 * max(arr.ndim, 1))(*(s // arr.itemsize for s in arr.strides))
        dl.data = arr.ctypes.data
        dl.device = _lib.DLDevice(1, 0)
        dl.ndim = arr.ndim
        dl.dtype = _lib.DLDataType(2, 64, 1)
        dl.shape = ctypes.cast(shape, POINTER(c_int64))
        dl.strides = ctypes.cast(strides, POINTER(c_int64))
        return shape, strides

    def versioned(self, major=1, minor=3, flags=0, deleter=True):
        arr = np.arange(4.0)
        mt = _lib.DLManagedTensorVersioned()
        mt.version = _lib.DLPackVersion(major, minor)
        mt.flags = flags
        keep = self._fill(mt.dl_tensor, arr)
        if deleter:
            mt.deleter = self.v_deleter
        self.live[ctypes.addressof(mt)] = (mt, arr, keep)
        return ctypes.pointer(mt)

    def legacy(self, deleter=True):
        arr = np.arange(4.0)
        mt = _lib.DLManagedTensor()
        keep = self._fill(mt.dl_tensor, arr)
        if deleter:
            mt.deleter = self.l_deleter
        self.live[ctypes.addressof(mt)] = (mt, arr, keep)
        return ctypes.pointer(mt)

    def capsule(self, **kw):
        out = c_void_p()
        assert lib.dlpack_capsule_new(self.versioned(**kw), byref(out)) == 0
        return take(out)

    def legacy_capsule(self):
        out = c_void_p()
        assert lib.dlpack_legacy_capsule_new(self.legacy(), byref(out)) == 0
        return take(out)


def take(ptr):
    obj = ctypes.cast(ptr, py_object).value
    ctypes.pythonapi.Py_DecRef.argtypes = [c_void_p]
    ctypes.pythonapi.Py_DecRef(ptr)
    return obj


def raw_capsule(ptr, name):
    """A capsule with our standard destructor and any name."""
    return PyCapsule_New(ctypes.cast(ptr, c_void_p), NAMES[name], DESTRUCTOR)


class Producer:
    """A `__dlpack__` producer with a chosen behaviour; records the keywords of every call."""

    def __init__(self, make, behaviour="modern"):
        self.make = make  # kwargs -> capsule
        self.behaviour = behaviour
        self.calls = []

    def __dlpack__(self, **kw):
        self.calls.append(dict(kw))
        b = self.behaviour
        if b == "old" and ("max_version" in kw or "dl_device" in kw or "copy" in kw):
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        if b == "notimplemented" and kw.get("max_version") is not None:
            raise NotImplementedError("max_version is not supported")
        if b == "buffer":
            raise BufferError("cannot export this")
        if b == "not_a_capsule":
            return 42
        return self.make(kw)

    def __dlpack_device__(self):
        return (1, 0)


class Labelled(Counter):
    """A Counter whose deleter writes the label of each released tensor to a file descriptor with
    `os.write` (which still works during interpreter shutdown). Defined here, not in a test's
    `__main__`, so that keeping it alive on purpose does not keep `__main__`'s globals alive."""

    def __init__(self, fd):
        super().__init__()
        self.fd = fd
        self.labels = {}

    def _delete(self, p, _write=__import__("os").write, _addr=ctypes.addressof):
        self.calls += 1
        _write(self.fd, self.labels.get(_addr(p.contents), b"?") + b"\n")

    def labelled(self, label):
        """A fresh `"dltensor_versioned"` capsule whose deleter writes `label`."""
        mt = self.versioned()
        self.labels[ctypes.addressof(mt.contents)] = label
        out = c_void_p()
        assert lib.dlpack_capsule_new(mt, byref(out)) == 0
        return take(out)
