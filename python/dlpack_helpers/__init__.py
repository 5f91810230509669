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
import operator
from ctypes import byref, c_uint32, c_void_p

from . import _lib
from ._lib import lib
from ._sdk import get_cmake_dir, get_include, get_library_dir  # the wheel's C/C++ SDK (see _sdk.py)

__all__ = ["info", "device", "is_cpu_accessible", "import_tensor", "Tensor", "DLPackHelpersError", "lib",
           "get_include", "get_library_dir", "get_cmake_dir"]
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
    raise exc(_message(message, exc, lib.dlpack_status_string(status).decode()))


def _message(message: str, exc: type, status_name: str) -> str:
    """The library's message for an exception of class ``exc``: the producer's exception type
    named once (``BufferError: BufferError: …`` would repeat the class Python already prints),
    and no nested ``DLPackHelpersError:`` prefixes or repeated ``[STATUS]`` tags when a
    producer's ``__dlpack__`` itself went through this package."""
    prefixes = (f"{exc.__name__}: ", f"{DLPackHelpersError.__name__}: ")
    stripped = True
    while stripped:
        stripped = False
        for p in prefixes:
            if message.startswith(p):
                message, stripped = message[len(p):], True
    tag = f"[{status_name}]"
    return message if message.endswith(tag) else f"{message} {tag}"


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


# ---- argument checks (array API conventions: TypeError for a wrong type or shape, ValueError for
# an integer out of the C field's range; nothing is truncated silently)

_U32_MAX = 2**32 - 1
_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1


def _integer(x, what: str) -> int:
    if isinstance(x, bool) or not hasattr(type(x), "__index__"):
        raise TypeError(f"{what} must be an integer, not {type(x).__name__}")
    return operator.index(x)


def _pair(x, what: str, form: str) -> tuple:
    if not isinstance(x, tuple) or len(x) != 2:
        got = f"a tuple of length {len(x)}" if isinstance(x, tuple) else type(x).__name__
        raise TypeError(f"{what} must be a tuple {form}, not {got}")
    return x


def _check_version(v, what: str = "max_version") -> "_lib.DLPackVersion":
    """A ``(major, minor)`` tuple of integers in 0..2**32-1 -> DLPackVersion."""
    major, minor = _pair(v, what, "(major, minor)")
    out = []
    for part, x in (("major", major), ("minor", minor)):
        n = _integer(x, f"{what} {part}")
        if not 0 <= n <= _U32_MAX:
            raise ValueError(f"{what} {part} is {n}, outside 0..{_U32_MAX} (uint32_t)")
        out.append(n)
    return _lib.DLPackVersion(*out)


def _check_device(d, what: str = "dl_device") -> "_lib.DLDevice":
    """A ``(device_type, device_id)`` tuple of integers (IntEnum members too) in int32 range."""
    dtype, did = _pair(d, what, "(device_type, device_id)")
    out = []
    for part, x in (("device_type", dtype), ("device_id", did)):
        n = _integer(x, f"{what} {part}")
        if not _I32_MIN <= n <= _I32_MAX:
            raise ValueError(f"{what} {part} is {n}, outside the int32_t range")
        out.append(n)
    return _lib.DLDevice(*out)


def _check_copy(copy) -> int:
    """``copy`` is None, True or False (a NumPy bool too), as the array API's ``__dlpack__``."""
    if copy is None:
        return _lib.COPY_IF_NEEDED
    if isinstance(copy, bool) or type(copy).__name__ in ("bool_", "bool"):
        return _lib.COPY_ALWAYS if copy else _lib.COPY_NEVER
    raise TypeError(f"copy must be None, True or False, not {type(copy).__name__}")


def _as_device(x) -> _lib.DLDevice:
    if isinstance(x, tuple):
        return _check_device(x, "device")
    t, i = device(x)
    return _lib.DLDevice(t, i)


def is_cpu_accessible(obj_or_device) -> bool:
    """Whether host code may read the memory of a DLPack object or of a ``(type, id)`` device.

    A tuple is taken as a device: ``TypeError`` unless it is two integers, ``ValueError`` when
    one is outside the int32 range. Anything else is asked for ``__dlpack_device__()``."""
    return bool(lib.dlpack_is_cpu_accessible(_as_device(obj_or_device)))


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

    Arguments are checked before the producer is called: ``max_version`` a ``(major, minor)``
    tuple of integers in 0..2**32-1, ``dl_device`` a ``(device_type, device_id)`` tuple of int32
    integers, ``copy`` None/True/False; ``TypeError`` for a wrong type or shape, ``ValueError``
    for an integer out of range.
    """
    if max_version is None and stream is None and dl_device is None and copy is None and not use_exchange_api:
        cap = _import_owned(obj)
    else:
        req = _lib.ImportRequest()
        if max_version is not None:
            req.max_version = _check_version(max_version)
            if (req.max_version.major, req.max_version.minor) == (0, 0):
                raise ValueError("max_version (0, 0) is not a DLPack version (the C request reserves it for "
                                 "'this library's newest'; omit max_version for that)")
        if stream is not None:
            req.stream = stream
        if dl_device is not None:
            req.has_dl_device = True
            req.dl_device = _check_device(dl_device)
        req.copy = _check_copy(copy)
        req.flags = _lib.IMPORT_EXCHANGE_API if use_exchange_api else 0
        cap = _import_owned(obj, ctypes.addressof(req))
    if cap.__class__ is int:
        _raise(cap)
    t = _new(Tensor)
    t._cap = cap
    t._info = None
    return t


class Tensor:
    """An imported DLPack tensor. Implements ``__dlpack__`` and ``__dlpack_device__``, exporting
    zero-copy views, so ``numpy.from_dlpack(tensor)`` works. Made by :func:`import_tensor`.

    Lifetime: the managed tensor is held by a private owner (the library's
    ``"dlpack_helpers.owned_tensor"`` capsule, whose destructor calls the deleter) that this
    Tensor and every exported view reference. The producer's deleter runs exactly once, when the
    LAST of them lets go: :meth:`release` (or leaving a ``with`` block) drops only this Tensor's
    hold, so arrays made with ``numpy.from_dlpack(tensor)`` stay valid after it; the Tensor itself
    then refuses access to the data (``ValueError``). Collection and interpreter shutdown release
    the same way, with no Python-level finalizer involved.
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
        """Drop this Tensor's hold on the managed tensor (idempotent). The producer's deleter
        runs now if nothing exported from this Tensor is alive, else when the last of those
        views lets go."""
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
            raise ValueError("the tensor was released (arrays exported from it stay valid)")
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
        """Export this tensor as a DLPack capsule, following the library's producer rules
        (``dlpack_export_request_resolve``: array API ``__dlpack__``, peer cases 23/25/28/47).

        - ``max_version`` picks the struct: a versioned capsule (``"dltensor_versioned"``, 1.3)
          for ``(1, x)`` or newer, the legacy ``"dltensor"`` for none or 0.x. A read-only tensor
          is never exported in place through the legacy struct (it cannot say read-only):
          ``BufferError``.
        - ``dl_device``: the tensor's own device, or ``(kDLCPU, 0)`` (served in place for
          host-accessible memory, reported as ``(1, 0)``); any other device: ``BufferError``.
        - ``copy``: ``None`` copies only when needed, ``True`` always, ``False`` never
          (``BufferError`` when a copy is needed). This package copies host-accessible memory to
          the CPU only (compact row-major, ``DLPACK_FLAG_BITMASK_IS_COPIED`` set on a versioned
          export); any other copy is ``BufferError``.
        - ``stream``: validated for the device (``ValueError`` for a value the array API does not
          allow there, for example any integer for a CPU tensor). For a ``kDLOneAPI`` tensor it
          may also be a queue object exposing ``addressof_ref()`` (dpctl's ``SyclQueue``);
          any other non-integer is ``TypeError``. This package queues no device
          work, so it has nothing to make the stream wait for.

        In-place exports reference the private owner of the managed tensor, never this Tensor:
        :meth:`release` does not free memory an exported array still uses. A copy owns its own
        buffer.
        """
        mt = self._mt()
        req = _lib.ExportRequest()
        if max_version is not None:
            req.has_max_version = True
            req.max_version = _check_version(max_version)
        queue = None
        if stream is not None and not isinstance(stream, int) and not hasattr(type(stream), "__index__"):
            # A queue object (oneAPI: dpctl's SyclQueue): decoded by the library, which raises
            # TypeError for anything the tensor's device does not take (peer case 51).
            queue = _lib.Stream()
            s = lib.dlpack_python_stream_decode(stream, mt.dl_tensor.device, 0, byref(queue))
            if s:
                _raise(s)
        elif stream is not None:
            req.has_stream = True
            req.stream = _check_stream(stream)
        if dl_device is not None:
            req.has_dl_device = True
            req.dl_device = _check_device(dl_device)
        req.copy = _check_copy(copy)
        src = mt.dl_tensor.device
        plan = _lib.ExportPlan()
        s = lib.dlpack_export_request_resolve_with_stream(
            byref(req), byref(queue) if queue is not None and queue.handle else None, src,
            _lib.DLPackVersion(1, 3), _lib.PRODUCER_EXPORTS_LEGACY, byref(plan))
        if s:
            _raise(s)
        if plan.copy:
            tensor, owner = _host_copy(mt.dl_tensor, plan.device)
            flags = plan.flags
        else:
            if plan.kind == _lib.EXPORT_LEGACY and mt.flags & _lib.FLAG_READ_ONLY:
                # Policy (as NumPy, peer case 18): the legacy struct cannot say read-only.
                raise BufferError("the tensor is read-only and max_version asks for the legacy struct, "
                                  "which cannot signal read-only; pass max_version=(1, 0) or newer")
            tensor = mt.dl_tensor
            if (plan.device.device_type, plan.device.device_id) != (src.device_type, src.device_id):
                # Host-accessible memory served to the CPU in place: report the plan's device.
                tensor = _lib.DLTensor.from_buffer_copy(tensor)
                tensor.device = plan.device
            # A view shares our memory: not a sole owner, so never IS_COPIED. It references
            # the owner, not this Tensor: release() cannot free its memory.
            flags = mt.flags & ~_lib.FLAG_IS_COPIED
            owner = self._cap
        out = c_void_p()
        s = lib.dlpack_capsule_new_view(byref(tensor), flags, owner, plan.kind, byref(out))
        if s:
            _raise(s)
        return _take_new_reference(out)


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def _check_stream(stream) -> int:
    """``stream`` is an integer (``None`` is handled by the caller) in int64 range."""
    n = _integer(stream, "stream")
    if not _I64_MIN <= n <= _I64_MAX:
        raise ValueError(f"stream is {n}, outside the int64_t range")
    return n


def _host_copy(t: "_lib.DLTensor", device: "_lib.DLDevice") -> tuple:
    """A compact row-major copy of ``t`` on the host, for an export plan that copies to
    ``device``: ``(DLTensor, owner)``, where ``owner`` is the buffer the new tensor points into.

    ``BufferError`` when this package cannot make the copy: the target is not the CPU, the
    source memory is not host-accessible, or the dtype has sub-byte elements."""
    src = (t.device.device_type, t.device.device_id)
    dst = (device.device_type, device.device_id)
    if device.device_type != 1 or not lib.dlpack_is_cpu_accessible(t.device):
        raise BufferError(f"a copy from device {src} to {dst} is needed, but dlpack_helpers.Tensor "
                          "copies host-accessible memory to the CPU only (pass copy=None or False, "
                          "and no dl_device, to export a view)")
    bits = t.dtype.bits * t.dtype.lanes
    if bits % 8:
        raise BufferError(f"a copy is needed, but dlpack_helpers.Tensor cannot copy sub-byte elements "
                          f"({t.dtype.bits} bits x {t.dtype.lanes} lanes)")
    size = bits // 8
    ndim = t.ndim
    shape = [t.shape[i] for i in range(ndim)]
    count = 1
    for n in shape:
        count *= n
    if ndim and t.strides:
        strides = [t.strides[i] for i in range(ndim)]
    else:  # NULL strides (DLPack < 1.2): compact row-major
        strides, acc = [], 1
        for n in reversed(shape):
            strides.insert(0, acc)
            acc *= n
    buf = (ctypes.c_char * max(count * size, 1))()
    base = (t.data or 0) + t.byte_offset
    dst_addr = ctypes.addressof(buf)
    if count:
        compact, acc = True, 1
        for n, st in zip(reversed(shape), reversed(strides)):
            if n != 1 and st != acc:
                compact = False
            acc *= n
        if compact:
            ctypes.memmove(dst_addr, base, count * size)
        else:
            # Runs of the innermost dimension when it is contiguous, else single elements, in
            # row-major order (an index odometer over the outer dimensions).
            run = shape[-1] if strides[-1] == 1 else 1
            outer = ndim - 1 if run != 1 or shape[-1] == 1 else ndim
            index = [0] * outer
            for k in range(count // run):
                off = 0
                for i, st in zip(index, strides):
                    off += i * st
                ctypes.memmove(dst_addr + k * run * size, base + off * size, run * size)
                for d in range(outer - 1, -1, -1):
                    index[d] += 1
                    if index[d] < shape[d]:
                        break
                    index[d] = 0
    out = _lib.DLTensor()
    out.data = dst_addr
    out.device = device
    out.ndim = ndim
    out.dtype = t.dtype
    out.shape = t.shape  # borrowed: dlpack_capsule_new_view copies shape and strides
    out.strides = None  # compact row-major, filled in by dlpack_capsule_new_view
    out.byte_offset = 0
    return out, buf
