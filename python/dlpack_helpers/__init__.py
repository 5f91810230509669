"""dlpack_helpers: accept any DLPack-capable Python object, through the dlpack-helpers C library.

>>> import numpy as np, dlpack_helpers as dh
>>> with dh.import_tensor(np.arange(6.0).reshape(2, 3)) as t:
...     t.shape, t.dtype, t.device
((2, 3), (2, 64, 1), (1, 0))

Errors are the exceptions the array API prescribes (``BufferError``, ``TypeError``,
``ValueError``, ``AttributeError``), carrying the library's message.
"""

from __future__ import annotations

import builtins
import ctypes
from ctypes import byref, c_uint32, c_void_p

from . import _lib
from ._lib import lib

__all__ = ["info", "device", "is_cpu_accessible", "import_tensor", "Tensor", "DLPackHelpersError", "lib"]
__version__ = "0.1.0"

_Py_DecRef = ctypes.pythonapi.Py_DecRef
_Py_DecRef.argtypes = [c_void_p]
_Py_DecRef.restype = None


class DLPackHelpersError(RuntimeError):
    """Raised for statuses whose Python exception is RuntimeError (internal errors)."""


def _raise(status: int):
    message = lib.dlpack_last_error_message().decode("utf-8", "replace")
    name = lib.dlpack_status_python_exception(status).decode()
    exc = getattr(builtins, name, None) if name != "RuntimeError" else DLPackHelpersError
    if not (isinstance(exc, type) and issubclass(exc, BaseException)):
        exc = DLPackHelpersError
    status_name = lib.dlpack_status_string(status).decode()
    raise exc(f"{message} [{status_name}]")


def _take_new_reference(ptr: c_void_p):
    """A PyObject* returned as a new reference -> a Python object (reference transferred)."""
    obj = ctypes.cast(ptr, ctypes.py_object).value  # +1
    _Py_DecRef(ptr)  # drop the reference the C call gave us
    return obj


def info() -> dict:
    """What the loaded library is and supports (``dlpack_get_info``)."""
    i = _lib.Info()
    i.struct_size = ctypes.sizeof(i)
    s = lib.dlpack_get_info(byref(i))
    if s:
        _raise(s)
    return {
        "version": i.version.decode(), "major": i.major, "minor": i.minor, "patch": i.patch,
        "dlpack_version": (i.dlpack_version.major, i.dlpack_version.minor),
        "dlpack_abi_major": i.dlpack_abi_major, "capabilities": i.capabilities,
        "python": bool(i.capabilities & _lib.CAP_PYTHON), "accepts_legacy": bool(i.accepts_legacy),
    }


def device(obj) -> tuple:
    """``obj.__dlpack_device__()`` decoded as ``(device_type, device_id)`` ints."""
    d = _lib.DLDevice()
    s = lib.dlpack_object_get_device(obj, byref(d))
    if s:
        _raise(s)
    return (d.device_type, d.device_id)


def _as_device(x) -> _lib.DLDevice:
    if isinstance(x, tuple) and len(x) == 2:
        return _lib.DLDevice(int(x[0]), int(x[1]))
    t, i = device(x)
    return _lib.DLDevice(t, i)


def is_cpu_accessible(obj_or_device) -> bool:
    """Whether host code may read the memory of a DLPack object or of a ``(type, id)`` device."""
    return bool(lib.dlpack_is_cpu_accessible(_as_device(obj_or_device)))


_COPY = {None: _lib.COPY_IF_NEEDED, False: _lib.COPY_NEVER, True: _lib.COPY_ALWAYS}
_PV = _lib.PV
_cast = ctypes.cast
_new = object.__new__


def _fastpath():
    """The two builtins the library makes for this package (``dlpack_python_fastpath_new``):
    ``import_owned`` and ``owned_info``. Calling them is a plain builtin call, without the
    ``ctypes`` foreign-call cost (about 0.6 µs each; see docs/performance.md)."""
    out = c_void_p()
    s = lib.dlpack_python_fastpath_new(byref(out))
    if s:
        _raise(s)
    return _take_new_reference(out)


_import_owned, _owned_info = _fastpath()


def import_tensor(obj, *, max_version=None, stream=None, dl_device=None, copy=None,
                  use_exchange_api=False) -> "Tensor":
    """Import any object implementing ``__dlpack__`` (or a DLPack capsule) as a :class:`Tensor`.

    ``max_version`` defaults to this library's newest DLPack version (1.3); ``stream``,
    ``dl_device`` and ``copy`` are passed to ``__dlpack__`` only when given. A producer that
    raises ``TypeError`` for ``max_version`` is retried without it (unless ``dl_device`` or
    ``copy`` was given). ``use_exchange_api=True`` tries the type's C exchange API first (no
    stream synchronisation: for device memory, work on the producer's current stream).
    """
    if max_version is None and stream is None and dl_device is None and copy is None and not use_exchange_api:
        cap = _import_owned(obj)
    else:
        req = _lib.ImportRequest()
        if max_version is not None:
            req.max_version = _lib.DLPackVersion(*max_version)
        if stream is not None:
            req.stream = stream
        if dl_device is not None:
            req.has_dl_device = True
            req.dl_device = _lib.DLDevice(int(dl_device[0]), int(dl_device[1]))
        req.copy = _COPY[copy]
        req.flags = _lib.IMPORT_EXCHANGE_API if use_exchange_api else 0
        cap = _import_owned(obj, ctypes.addressof(req))
    if cap.__class__ is int:
        _raise(cap)
    t = _new(Tensor)
    t._cap = cap
    t._info = None
    return t


class Tensor:
    """An imported DLPack tensor. Owns the managed tensor and releases it exactly once: with
    :meth:`release`, on leaving a ``with`` block, or when collected. Implements ``__dlpack__``
    and ``__dlpack_device__`` (exporting views that keep this object alive), so
    ``numpy.from_dlpack(tensor)`` works. Made by :func:`import_tensor`.
    """

    # _cap: the library's "dlpack_helpers.owned_tensor" capsule, whose destructor calls the
    # deleter (so there is no __del__ here); _info: (pointer, how), filled on first use.
    __slots__ = ("_cap", "_info", "__weakref__")

    def _load(self):
        info = self._info
        if info is not None:
            return info
        cap = self._cap
        if cap is None:
            return (None, 0)
        r = _owned_info(cap)
        if r.__class__ is int:
            _raise(r)
        self._info = info = (_cast(r[0], _PV), r[1])
        return info

    @property
    def _ptr(self):
        """The owned ``DLManagedTensorVersioned *`` (ctypes pointer), None once released."""
        return self._load()[0]

    @property
    def how(self) -> int:
        """``DLPACK_HELPERS_IMPORTED_*`` bits: how the tensor was obtained."""
        return self._load()[1]

    # -- lifetime
    def release(self) -> None:
        """Call the producer's deleter now (idempotent: the second call does nothing)."""
        self._info = None
        self._cap = None  # the capsule's destructor calls the deleter

    close = release

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    @property
    def released(self) -> bool:
        return self._cap is None

    def _mt(self):
        p = self._load()[0]
        if p is None:
            raise ValueError("the tensor was released")
        return p.contents

    # -- fields
    @property
    def version(self) -> tuple:
        v = self._mt().version
        return (v.major, v.minor)

    @property
    def flags(self) -> int:
        return self._mt().flags

    @property
    def readonly(self) -> bool:
        return bool(self._mt().flags & _lib.FLAG_READ_ONLY)

    @property
    def device(self) -> tuple:
        d = self._mt().dl_tensor.device
        return (d.device_type, d.device_id)

    @property
    def dtype(self) -> tuple:
        """``(code, bits, lanes)`` of DLDataType."""
        d = self._mt().dl_tensor.dtype
        return (d.code, d.bits, d.lanes)

    @property
    def ndim(self) -> int:
        return self._mt().dl_tensor.ndim

    @property
    def shape(self) -> tuple:
        t = self._mt().dl_tensor
        return tuple(t.shape[i] for i in range(t.ndim)) if t.ndim else ()

    @property
    def strides(self) -> tuple:
        """Strides in elements; compact row-major when the producer passed NULL (DLPack < 1.2)."""
        t = self._mt().dl_tensor
        if t.ndim == 0:
            return ()
        if t.strides:
            return tuple(t.strides[i] for i in range(t.ndim))
        shape, out, acc = self.shape, [], 1
        for n in reversed(shape):
            out.append(acc)
            acc *= n
        return tuple(reversed(out))

    @property
    def byte_offset(self) -> int:
        return self._mt().dl_tensor.byte_offset

    @property
    def data_ptr(self) -> int:
        """``dl_tensor.data`` as an int (0 for NULL). For host-accessible memory the first element
        is at ``data_ptr + byte_offset``; for opaque handles never add them."""
        return self._mt().dl_tensor.data or 0

    def is_contiguous(self) -> bool:
        """Compact row-major (size-1 dimensions may carry any stride; empty tensors are)."""
        shape, strides = self.shape, self.strides
        if 0 in shape:
            return True
        acc = 1
        for n, s in zip(reversed(shape), reversed(strides)):
            if n != 1 and s != acc:
                return False
            acc *= n
        return True

    def __repr__(self):
        if self._ptr is None:
            return "<dlpack_helpers.Tensor (released)>"
        return (f"<dlpack_helpers.Tensor shape={self.shape} dtype={self.dtype} device={self.device} "
                f"version={self.version} flags={self.flags}>")

    # -- export
    def __dlpack_device__(self) -> tuple:
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        mt = self._mt()
        dev = self.device
        if dl_device is not None and tuple(int(x) for x in dl_device) != dev:
            raise BufferError(f"dl_device={tuple(dl_device)} requested, but this view is on {dev} "
                              "and does not copy")
        if copy is True:
            raise BufferError("copy=True: a dlpack_helpers.Tensor exports views only")
        if stream is not None and stream != -1 and dev[0] == 1:
            raise BufferError("stream must be None for a CPU tensor")
        choice = _lib.VersionChoice()
        mv = None if max_version is None else byref(_lib.DLPackVersion(*max_version))
        s = lib.dlpack_version_negotiate(_lib.DLPackVersion(1, 3), _lib.PRODUCER_EXPORTS_LEGACY, mv, byref(choice))
        if s:
            _raise(s)
        if choice.kind == _lib.EXPORT_LEGACY and mt.flags & _lib.FLAG_READ_ONLY:
            # Policy (as NumPy, peer case 18): the legacy struct cannot say read-only.
            raise BufferError("the tensor is read-only and max_version asks for the legacy struct, "
                              "which cannot signal read-only; pass max_version=(1, 0) or newer")
        flags = mt.flags & ~_lib.FLAG_IS_COPIED  # a view shares our memory: not a sole owner
        out = c_void_p()
        s = lib.dlpack_capsule_new_view(byref(mt.dl_tensor), flags, self, choice.kind, byref(out))
        if s:
            _raise(s)
        return _take_new_reference(out)
