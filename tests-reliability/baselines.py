"""One valid call per exported function (a "baseline"), from which the matrices derive their bad
inputs. A baseline gives every argument by parameter name and an `after(status, args)` that
releases whatever the call produced and checks ownership: every managed tensor made here has a
counting deleter, and `after` checks it ran exactly once by the end.

A new export needs an entry in BASELINES: test_matrix.py fails and names it until it has one.
"""
from __future__ import annotations

import ctypes
import itertools

import numpy as np

import cabi
from cabi import (DLManagedTensor, DLManagedTensorVersioned, DLTensor, ExportPlan, ExportRequest, ImportRequest,
                  Info, LDELETER, Stream, StreamBackend, SYNC, VDELETER, VersionChoice, WAIT, take_new_reference)
from header import DLDataType, DLDevice, DLPackVersion

BACKEND_TYPE = 78  # a device type served by the matrix's registered backend


class PyObj:
    """A Python object argument (`PyObject *`): passed as its address, kept alive by the case."""

    def __init__(self, obj):
        self.obj = obj


class Tensors:
    """Managed tensors with counting deleters; `check()` says each was released exactly once."""

    def __init__(self):
        self.calls: dict[int, int] = {}
        self.keep: dict[int, object] = {}
        self._ids = itertools.count(1)
        self._v = VDELETER(self._on_delete)
        self._l = LDELETER(self._on_delete)

    def _on_delete(self, p):
        self.calls[p.contents.manager_ctx] += 1

    def versioned(self, major=1, minor=3, device=(1, 0), valid=False):
        i = next(self._ids)
        t = DLManagedTensorVersioned()
        t.version = DLPackVersion(major, minor)
        t.manager_ctx = i
        t.deleter = self._v
        t.dl_tensor.device = DLDevice(*device)
        self.calls[i], self.keep[i] = 0, (t, valid and fill_valid(t.dl_tensor))
        return t

    def legacy(self, device=(1, 0), valid=False):
        i = next(self._ids)
        t = DLManagedTensor()
        t.manager_ctx = i
        t.deleter = self._l
        t.dl_tensor.device = DLDevice(*device)
        self.calls[i], self.keep[i] = 0, (t, valid and fill_valid(t.dl_tensor))
        return t

    def released(self, t) -> int:
        return self.calls[t.manager_ctx]

    def check(self):
        wrong = {i: n for i, n in self.calls.items() if n != 1}
        assert not wrong, f"deleters not run exactly once (tensor id: calls): {wrong}"


def fill_valid(dl: DLTensor):
    """Make `dl` a valid 2x3 float32 row-major CPU tensor over a real buffer; returns what must
    stay alive."""
    data = np.arange(6, dtype=np.float32)
    shape = (ctypes.c_int64 * 2)(2, 3)
    strides = (ctypes.c_int64 * 2)(3, 1)
    dl.data = data.ctypes.data
    dl.device = DLDevice(1, 0)
    dl.ndim = 2
    dl.dtype = DLDataType(2, 32, 1)
    dl.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    dl.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    return (data, shape, strides)


MAX_NDIM = 1024  # DLPACK_HELPERS_MAX_NDIM: buffers for `ndim` elements are this big, so no
                 # out-of-range `ndim` below the limit makes the library read past them.


def int64s(*values, n=MAX_NDIM + 1):
    return (ctypes.c_int64 * n)(*values, *([1] * (n - len(values))))


class Case:
    def __init__(self, args: dict, after=None, expect="OK", inout=()):
        self.args = args
        self.inout = set(inout)  # out-parameters the function also reads (not pre-filled)
        self._after = after
        self.expect = expect  # the baseline's own status name

    def after(self, status: int, args: dict):
        if self._after:
            self._after(status, args)


class Ctx:
    """What the baselines share: the library, the status codes, tensors, the backend."""

    def __init__(self, lib, codes):
        self.lib, self.codes, self.tensors = lib, codes, Tensors()
        self.backend_calls = 0
        self._wait = WAIT(self._on_wait)
        self._sync = SYNC(self._on_sync)
        self.backend = StreamBackend(None, self._wait, self._sync)
        assert lib.dlpack_stream_backend_register(BACKEND_TYPE, cabi.addr(self.backend)) == 0, cabi.message(lib)

    def _on_wait(self, ctx, device_id, producer, consumer):
        self.backend_calls += 1
        return 0

    def _on_sync(self, ctx, device_id, stream):
        self.backend_calls += 1
        return 0

    # -- helpers for `after` ------------------------------------------------------------------
    def ok(self, status):
        return status == self.codes["OK"]

    def own_versioned(self, t, status_ok_keeps: bool, args, name="tensor"):
        """Release `t` if the caller still owns it after the call."""
        passed = args.get(name) is t
        if not passed or status_ok_keeps:
            self.lib.dlpack_tensor_delete(cabi.addr(t))

    def delete_out_tensor(self, out, legacy=False):
        if out.value:
            (self.lib.dlpack_legacy_tensor_delete if legacy else self.lib.dlpack_tensor_delete)(out.value)


def _numpy_capsule(versioned: bool):
    a = np.arange(6.0)
    return a.__dlpack__(max_version=(1, 3)) if versioned else a.__dlpack__()


def b_get_info(c: Ctx):
    info = Info()
    info.struct_size = ctypes.sizeof(Info)
    return Case({"out_info": info}, inout={"out_info"})


def b_capsule_destructor(c: Ctx):
    # A consumed capsule: the destructor must do nothing (a live one would double-release).
    cap = _numpy_capsule(True)
    out = ctypes.c_void_p()
    assert c.lib.dlpack_capsule_consume(id(cap), cabi.addr(out)) == 0
    return Case({"capsule": PyObj(cap)}, lambda s, a: c.delete_out_tensor(out))


def _b_capsule_new(c: Ctx, legacy: bool):
    t = c.tensors.legacy() if legacy else c.tensors.versioned()
    out = ctypes.c_void_p()

    def after(s, args):
        if c.ok(s):
            take_new_reference(out.value)  # dropped right away: the capsule dies unconsumed
        else:
            (c.lib.dlpack_legacy_tensor_delete if legacy else c.lib.dlpack_tensor_delete)(cabi.addr(t))
        assert c.tensors.released(t) == 1
    return Case({"tensor": t, "out_capsule": out}, after)


def _b_capsule_consume(c: Ctx, legacy: bool):
    cap = _numpy_capsule(not legacy)
    out = ctypes.c_void_p()
    return Case({"capsule": PyObj(cap), "out_tensor": out}, lambda s, a: c.delete_out_tensor(out, legacy))


def b_capsule_new_view(c: Ctx):
    arr = np.arange(12.0).reshape(3, 4)
    shape = (ctypes.c_int64 * 2)(3, 4)
    t = DLTensor()
    t.data = arr.ctypes.data
    t.device = DLDevice(1, 0)
    t.ndim = 2
    t.dtype.code, t.dtype.bits, t.dtype.lanes = 2, 64, 1
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    out = ctypes.c_void_p()

    def after(s, args):
        if c.ok(s):
            cap = take_new_reference(out.value)
            view = np.from_dlpack(_Holder(cap))
            assert view.size and view.ravel()[0] == arr.flat[0] and (view.ndim == 0 or view.sum() == arr.sum())
    case = Case({"tensor": t, "flags": ctypes.c_uint64(0), "owner": PyObj(arr), "kind": ctypes.c_int32(1),
                 "out_capsule": out}, after)
    case.keep = shape
    return case


def b_capsule_new_view_validated(c: Ctx):
    return b_capsule_new_view(c)  # the same valid call: a validated C-contiguous float64 tensor


def b_tensor_new_view_validated(c: Ctx):
    arr = np.arange(12.0).reshape(3, 4)
    shape = (ctypes.c_int64 * 2)(3, 4)
    t = DLTensor()
    t.data = arr.ctypes.data
    t.device = DLDevice(1, 0)
    t.ndim = 2
    t.dtype.code, t.dtype.bits, t.dtype.lanes = 2, 64, 1
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    out = ctypes.c_void_p()

    def after(s, args):
        if c.ok(s):
            v = ctypes.cast(out.value, ctypes.POINTER(DLManagedTensorVersioned)).contents
            assert (v.version.major, v.version.minor) == (1, 3)
            d = v.dl_tensor
            if d.ndim:  # compact row-major strides filled in, inside the view
                assert [d.strides[i] for i in range(d.ndim)] == ([4, 1] if d.ndim == 2 else [1] * d.ndim)
            c.lib.dlpack_tensor_delete(out.value)  # drops the owner reference, once
    case = Case({"tensor": t, "flags": ctypes.c_uint64(0), "owner": PyObj(arr), "out_tensor": out}, after)
    case.keep = shape
    return case


class _Holder:
    """Hands a ready capsule to np.from_dlpack."""

    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kw):
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


def b_exchange_api_find(c: Ctx):
    return Case({"obj": PyObj(np.arange(3.0)), "out_api": ctypes.c_void_p()}, expect="NO_EXCHANGE_API")


class _ExchangeTable(ctypes.Structure):
    """DLPackExchangeAPI: header (version, prev_api), four functions, current_work_stream."""
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev_api", ctypes.c_void_p),
                ("allocator", ctypes.c_void_p), ("from_py", ctypes.c_void_p), ("to_py", ctypes.c_void_p),
                ("dltensor", ctypes.c_void_p), ("current_work_stream", ctypes.c_void_p)]


def _cpu_work_stream(device_type, device_id, out):
    out[0] = None  # kDLCPU: no streams
    return 0


_WORK_STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                                ctypes.POINTER(ctypes.c_void_p))(_cpu_work_stream)


def b_exchange_api_current_work_stream(c: Ctx):
    t = _ExchangeTable(1, 3, None, None, None, None, None, ctypes.cast(_WORK_STREAM, ctypes.c_void_p).value)
    return Case({"api": t, "device": DLDevice(1, 0), "flags": 0, "out_stream": Stream()})


def b_object_import_with_stream(c: Ctx):
    out, how, stream = ctypes.c_void_p(), ctypes.c_uint32(), Stream()
    req = ImportRequest()

    def after(s, args):
        if c.ok(s) and args.get("out_stream") is stream:
            assert stream.kind == 1  # DLPACK_HELPERS_STREAM_NONE: a CPU tensor
        c.delete_out_tensor(out)
    return Case({"obj": PyObj(np.arange(5.0)), "request": req, "out_tensor": out, "out_how": how,
                 "out_stream": stream}, after)


def b_object_import(c: Ctx):
    out, how = ctypes.c_void_p(), ctypes.c_uint32()
    req = ImportRequest()
    return Case({"obj": PyObj(np.arange(5.0)), "request": req, "out_tensor": out, "out_how": how},
                lambda s, a: c.delete_out_tensor(out))


def b_capsule_import(c: Ctx):
    cap = _numpy_capsule(False)  # legacy: converted read-only, reported as legacy
    out, how = ctypes.c_void_p(), ctypes.c_uint32()

    def after(s, args):
        if c.ok(s) and args.get("out_how") is how:
            legacy = args["capsule"].obj is cap  # the baseline's legacy capsule, not a variant's
            assert how.value == (1 if legacy else 0)  # DLPACK_HELPERS_IMPORTED_LEGACY
            flags = ctypes.cast(out.value, ctypes.POINTER(DLManagedTensorVersioned)).contents.flags
            if legacy:  # read-only unless DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE (peer case 50)
                f = args["flags"]
                assert bool(flags & 1) == (not getattr(f, "value", f) & 4)
        c.delete_out_tensor(out)
    return Case({"capsule": PyObj(cap), "flags": ctypes.c_uint32(0), "out_tensor": out, "out_how": how}, after)


def b_object_query_device(c: Ctx):
    return Case({"obj": PyObj(np.arange(3.0)), "flags": ctypes.c_uint32(2), "out_device": DLDevice()})


def b_legacy_tensor_wrap(c: Ctx):
    t = c.tensors.legacy(valid=True)
    out = ctypes.c_void_p()

    def after(s, args):
        if c.ok(s):
            c.lib.dlpack_tensor_delete(out.value)  # the wrapper releases the legacy tensor
        else:
            c.lib.dlpack_legacy_tensor_delete(cabi.addr(t))
        assert c.tensors.released(t) == 1
    return Case({"legacy": t, "flags": 0, "options": ctypes.c_uint32(4), "out_tensor": out}, after)


def b_dltensor_fits_allocation(c: Ctx):
    case = _b_on_dltensor(c, flags=0, out_fits=ctypes.c_bool())
    data = case.keep[0]
    case.args["base"] = data.ctypes.data
    case.args["size_in_bytes"] = data.nbytes
    return case


def b_object_get_device(c: Ctx):
    return Case({"obj": PyObj(np.arange(3.0)), "out_device": DLDevice()})


def b_stream_decode(c: Ctx):
    return Case({"device": DLDevice(2, 0), "has_stream": True, "stream": 7, "flags": 0, "out_stream": Stream()})


def b_stream_encode(c: Ctx):
    return Case({"device": DLDevice(2, 0), "native_stream": 0x1234, "out_has_stream": ctypes.c_bool(),
                 "out_stream": ctypes.c_int64()})


def b_export_request_resolve(c: Ctx):
    r = ExportRequest()
    r.has_max_version, r.max_version = True, DLPackVersion(1, 3)
    return Case({"request": r, "tensor_device": DLDevice(1, 0), "producer_version": DLPackVersion(1, 3),
                 "producer_flags": 0, "out_plan": ExportPlan()})


def b_stream_backend_register(c: Ctx):
    # Registration is permanent: the baseline re-registers the matrix's type (INVALID_ARGUMENT).
    return Case({"device_type": BACKEND_TYPE, "backend": c.backend}, expect="INVALID_ARGUMENT")


def b_stream_wait(c: Ctx):
    return Case({"device": DLDevice(BACKEND_TYPE, 0), "producer_stream": 0x10,
                 "consumer_stream": Stream(5, 0x20)})


def b_stream_synchronize(c: Ctx):
    return Case({"device": DLDevice(BACKEND_TYPE, 0), "stream": 0x10})


def b_tensor_delete_after_stream(c: Ctx):
    # kDLCPU has no streams: released at once, on this thread (peer case 52).
    t = c.tensors.versioned(device=(1, 0))

    def after(s, args):
        if args["tensor"] is not t or not c.ok(s):
            c.lib.dlpack_tensor_delete(cabi.addr(t))
        assert c.tensors.released(t) == 1
    return Case({"tensor": t, "device": DLDevice(1, 0), "stream": 0}, after)


def b_stream_backend_check(c: Ctx):
    return Case({"device_type": BACKEND_TYPE})


def b_pointer_get_device(c: Ctx):
    buf = ctypes.create_string_buffer(64)
    # Host memory is confirmed when every backend that could own it was asked or is absent from
    # the process (a CPU-only process: issue 22); a backend that could own it but cannot be
    # asked makes it unknown, never kDLCPU (issue 12 item 3). classify says which.
    info = cabi.PointerInfo()
    info.struct_size = ctypes.sizeof(info)
    assert c.lib.dlpack_pointer_classify(cabi.addr(buf), None, cabi.addr(info)) == 0
    case = Case({"ptr": cabi.addr(buf), "out_device": DLDevice()},
                expect="OK" if info.memory_class == 1 else "DEVICE_UNKNOWN")
    case.keep = buf
    return case


def b_pointer_classify(c: Ctx):
    buf = ctypes.create_string_buffer(64)
    info = cabi.PointerInfo()
    info.struct_size = ctypes.sizeof(info)
    case = Case({"ptr": cabi.addr(buf), "ze_context": None, "out_info": info}, inout={"out_info"})
    case.keep = buf
    return case


def b_level_zero_context_set(c: Ctx):
    return Case({"ze_context": None})


def b_level_zero_context_set_devices(c: Ctx):
    devices = (ctypes.c_void_p * 2)(0xD00, 0xD01)

    def after(s, args):
        c.lib.dlpack_level_zero_context_set(None)  # leave no registration behind
    case = Case({"ze_context": None, "devices": devices, "num_devices": 2}, after)
    case.keep = devices
    return case


def _b_host_access(c: Ctx, kind: str):
    t = c.tensors.legacy() if kind == "legacy" else c.tensors.versioned()

    def after(s, args):
        (c.lib.dlpack_legacy_tensor_delete if kind == "legacy" else c.lib.dlpack_tensor_delete)(cabi.addr(t))
    arg = t.dl_tensor if kind == "dltensor" else t
    return Case({"tensor": arg, "ze_context": None, "out_access": ctypes.c_int32()}, after)


def b_stream_decode_handle(c: Ctx):
    return Case({"device": DLDevice(14, 0), "kind": 6, "handle": 0x5000, "out_stream": Stream()})


def b_export_request_resolve_with_stream(c: Ctx):
    r = ExportRequest()
    r.has_max_version, r.max_version = True, DLPackVersion(1, 3)
    return Case({"request": r, "stream": Stream(6, 0x5000), "tensor_device": DLDevice(14, 0),
                 "producer_version": DLPackVersion(1, 3), "producer_flags": 0, "out_plan": ExportPlan()})


def b_stream_backend_register_ex(c: Ctx):
    # Registration is permanent: the baseline re-registers the matrix's type (INVALID_ARGUMENT).
    b = cabi.StreamBackendEx(ctypes.sizeof(cabi.StreamBackendEx), None, c._wait, c._sync)
    case = Case({"device_type": BACKEND_TYPE, "backend": b}, expect="INVALID_ARGUMENT")
    return case


class _Queue:
    """A queue-like object as dpctl's SyclQueue: addressof_ref() gives the queue's address."""

    def addressof_ref(self):
        return 0x5000


def b_python_stream_decode(c: Ctx):
    return Case({"obj": PyObj(_Queue()), "device": DLDevice(14, 0), "flags": 0, "out_stream": Stream()})


def _b_delete(c: Ctx, legacy: bool):
    t = c.tensors.legacy() if legacy else c.tensors.versioned()

    def after(s, args):
        if args["tensor"] is not t:  # NULL was passed: still ours
            (c.lib.dlpack_legacy_tensor_delete if legacy else c.lib.dlpack_tensor_delete)(cabi.addr(t))
        assert c.tensors.released(t) == 1
    return Case({"tensor": t}, after)


def _b_get_device(c: Ctx, legacy: bool):
    t = c.tensors.legacy(device=(2, 1)) if legacy else c.tensors.versioned(device=(2, 1))

    def after(s, args):
        if c.ok(s):
            assert (args["out_device"].device_type, args["out_device"].device_id) == (2, 1)
        (c.lib.dlpack_legacy_tensor_delete if legacy else c.lib.dlpack_tensor_delete)(cabi.addr(t))
    return Case({"tensor": t, "out_device": DLDevice()}, after)


def b_tensor_check_version(c: Ctx):
    t = c.tensors.versioned(1, 2)
    return Case({"tensor": t, "out_compat": ctypes.c_int32()}, lambda s, a: c.lib.dlpack_tensor_delete(cabi.addr(t)))


def b_tensor_check_version_or_delete(c: Ctx):
    t = c.tensors.versioned(1, 2)

    def after(s, args):
        if args["tensor"] is not t or c.ok(s):
            c.lib.dlpack_tensor_delete(cabi.addr(t))
        assert c.tensors.released(t) == 1
    return Case({"tensor": t, "out_compat": ctypes.c_int32()}, after)


def b_version_check(c: Ctx):
    return Case({"version": DLPackVersion(1, 1), "out_compat": ctypes.c_int32()})


def b_version_negotiate(c: Ctx):
    return Case({"producer_version": DLPackVersion(1, 3), "producer_flags": 0, "max_version": DLPackVersion(1, 3),
                 "out_choice": VersionChoice()})


# ---- validation, layout, names, flags, conversions --------------------------------------------

RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def b_tensor_create(c: Ctx):
    data = np.arange(6, dtype=np.float32)
    released = []
    cb = RELEASE(lambda ctx: released.append(ctx))
    out = ctypes.c_void_p()

    def after(s, args):
        if c.ok(s):
            assert not released
            c.lib.dlpack_tensor_delete(out.value)
            assert len(released) == (1 if args["release"] is not None else 0), released
        else:
            assert not released, "release called although creation failed"
    case = Case({"data": data.ctypes.data, "device": DLDevice(1, 0), "ndim": 2, "shape": int64s(2, 3),
                 "strides": None, "dtype": DLDataType(2, 32, 1), "byte_offset": 0, "flags": 0,
                 "release": cb, "release_ctx": 0x5EED, "out_tensor": out}, after)
    case.keep = (data, cb)
    return case


def b_tensor_alloc(c: Ctx):
    out = ctypes.c_void_p()

    def after(s, args):
        if c.ok(s):
            dl = DLManagedTensorVersioned.from_address(out.value)
            assert dl.dl_tensor.data and dl.dl_tensor.data % 64 == 0
            c.lib.dlpack_tensor_delete(out.value)  # frees buffer and metadata (test_leaks counts)
    return Case({"device": DLDevice(1, 0), "ndim": 2, "shape": int64s(2, 3), "strides": None,
                 "dtype": DLDataType(2, 32, 1), "flags": 0, "out_tensor": out}, after)


def b_legacy_to_versioned(c: Ctx):
    t = c.tensors.legacy(valid=True)
    out = ctypes.c_void_p()

    def after(s, args):
        if c.ok(s):
            c.lib.dlpack_tensor_delete(out.value)  # the wrapper releases the legacy tensor
        else:
            c.lib.dlpack_legacy_tensor_delete(cabi.addr(t))
        assert c.tensors.released(t) == 1
    return Case({"legacy": t, "flags": 0, "out_tensor": out}, after)


def b_versioned_to_legacy(c: Ctx):
    t = c.tensors.versioned(valid=True)
    out = ctypes.c_void_p()

    def after(s, args):
        if c.ok(s):
            c.lib.dlpack_legacy_tensor_delete(out.value)
        else:
            c.lib.dlpack_tensor_delete(cabi.addr(t))
        assert c.tensors.released(t) == 1
    return Case({"tensor": t, "options": 0, "out_dropped_flags": ctypes.c_uint64(), "out_tensor": out}, after)


def _b_on_tensor(c: Ctx, legacy=False, **more):
    """A call that borrows a valid tensor (released afterwards by the test)."""
    t = c.tensors.legacy(valid=True) if legacy else c.tensors.versioned(valid=True)
    rel = c.lib.dlpack_legacy_tensor_delete if legacy else c.lib.dlpack_tensor_delete
    return Case({"tensor": t, **more}, lambda s, a: rel(cabi.addr(t)))


def _b_on_dltensor(c: Ctx, **more):
    t = DLTensor()
    keep = fill_valid(t)
    case = Case({"tensor": t, **more})
    case.keep = keep
    return case


def _out_struct():
    return ctypes.create_string_buffer(512)  # any of our out structs fits


def _b_format(c: Ctx, first):
    return Case({**first, "buf": ctypes.create_string_buffer(64), "buf_size": 64, "out_len": ctypes.c_size_t()})


BASELINES = {
    # value functions and void functions
    "dlpack_is_cpu_accessible": lambda c: Case({"device": DLDevice(1, 0)}),
    "dlpack_device_host_access": lambda c: Case({"device": DLDevice(2, 0)}),
    "dlpack_last_error_message": lambda c: Case({}),
    "dlpack_last_error_status": lambda c: Case({}),
    "dlpack_status_string": lambda c: Case({"status": 10}),
    "dlpack_status_python_exception": lambda c: Case({"status": 10}),
    "dlpack_capsule_destructor": b_capsule_destructor,
    "dlpack_tensor_delete": lambda c: _b_delete(c, False),
    "dlpack_legacy_tensor_delete": lambda c: _b_delete(c, True),
    # fallible functions
    "dlpack_get_info": b_get_info,
    "dlpack_capsule_new": lambda c: _b_capsule_new(c, False),
    "dlpack_legacy_capsule_new": lambda c: _b_capsule_new(c, True),
    "dlpack_capsule_consume": lambda c: _b_capsule_consume(c, False),
    "dlpack_capsule_import": b_capsule_import,
    "dlpack_object_query_device": b_object_query_device,
    "dlpack_legacy_tensor_wrap": b_legacy_tensor_wrap,
    "dlpack_dltensor_fits_allocation": b_dltensor_fits_allocation,
    "dlpack_legacy_capsule_consume": lambda c: _b_capsule_consume(c, True),
    "dlpack_capsule_new_view": b_capsule_new_view,
    "dlpack_capsule_new_view_validated": b_capsule_new_view_validated,
    "dlpack_tensor_new_view_validated": b_tensor_new_view_validated,
    "dlpack_exchange_api_find": b_exchange_api_find,
    "dlpack_object_import": b_object_import,
    "dlpack_object_import_with_stream": b_object_import_with_stream,
    "dlpack_exchange_api_current_work_stream": b_exchange_api_current_work_stream,
    "dlpack_object_get_device": b_object_get_device,
    "dlpack_stream_decode": b_stream_decode,
    "dlpack_stream_encode": b_stream_encode,
    "dlpack_export_request_resolve": b_export_request_resolve,
    "dlpack_stream_backend_register": b_stream_backend_register,
    "dlpack_stream_wait": b_stream_wait,
    "dlpack_stream_synchronize": b_stream_synchronize,
    "dlpack_stream_backend_check": b_stream_backend_check,
    "dlpack_tensor_delete_after_stream": b_tensor_delete_after_stream,
    "dlpack_pointer_get_device": b_pointer_get_device,
    "dlpack_pointer_classify": b_pointer_classify,
    "dlpack_level_zero_context_set": b_level_zero_context_set,
    "dlpack_level_zero_context_set_devices": b_level_zero_context_set_devices,
    "dlpack_device_check": lambda c: Case({"device": DLDevice(14, 0), "flags": 0}),
    "dlpack_tensor_host_access": lambda c: _b_host_access(c, "versioned"),
    "dlpack_legacy_tensor_host_access": lambda c: _b_host_access(c, "legacy"),
    "dlpack_dltensor_host_access": lambda c: _b_host_access(c, "dltensor"),
    "dlpack_stream_decode_handle": b_stream_decode_handle,
    "dlpack_export_request_resolve_with_stream": b_export_request_resolve_with_stream,
    "dlpack_stream_backend_register_ex": b_stream_backend_register_ex,
    "dlpack_python_stream_decode": b_python_stream_decode,
    "dlpack_get_device": lambda c: _b_get_device(c, False),
    "dlpack_legacy_get_device": lambda c: _b_get_device(c, True),
    "dlpack_tensor_check_version": b_tensor_check_version,
    "dlpack_tensor_check_version_or_delete": b_tensor_check_version_or_delete,
    "dlpack_version_check": b_version_check,
    "dlpack_version_negotiate": b_version_negotiate,
    # validation, layout, names, flags, conversions
    "dlpack_tensor_create": b_tensor_create,
    "dlpack_tensor_alloc": b_tensor_alloc,
    "dlpack_legacy_to_versioned": b_legacy_to_versioned,
    "dlpack_versioned_to_legacy": b_versioned_to_legacy,
    "dlpack_tensor_get_flags": lambda c: _b_on_tensor(c, out_flags=ctypes.c_uint64()),
    "dlpack_tensor_set_flags": lambda c: _b_on_tensor(c, set=1, clear=2),
    "dlpack_tensor_writability": lambda c: _b_on_tensor(c, out_writability=ctypes.c_int32()),
    "dlpack_legacy_tensor_writability": lambda c: _b_on_tensor(c, True, out_writability=ctypes.c_int32()),
    "dlpack_tensor_read_only_origin": lambda c: _b_on_tensor(c, out_origin=ctypes.c_int32()),
    "dlpack_dltensor_layout": lambda c: _b_on_dltensor(c, flags=0, out_layout=_out_struct()),
    "dlpack_tensor_layout": lambda c: _b_on_tensor(c, out_layout=_out_struct()),
    "dlpack_compact_strides": lambda c: Case({"ndim": 2, "shape": int64s(3, 4), "column_major": False,
                                               "out_strides": int64s()}),
    "dlpack_dltensor_dim_order": lambda c: _b_on_dltensor(c, out_order=(ctypes.c_int32 * (MAX_NDIM + 1))(),
                                                           capacity=MAX_NDIM + 1),
    "dlpack_device_is_pointer_addressed": lambda c: Case({"device": DLDevice(2, 0)}),
    "dlpack_dltensor_data_address": lambda c: _b_on_dltensor(c, out_address=ctypes.c_void_p()),
    "dlpack_dltensor_data_location": lambda c: _b_on_dltensor(c, out_data=ctypes.c_void_p(),
                                                               out_byte_offset=ctypes.c_uint64()),
    "dlpack_dtype_format": lambda c: _b_format(c, {"dtype": DLDataType(2, 32, 1)}),
    "dlpack_dtype_parse": lambda c: Case({"name": ctypes.create_string_buffer(b"bfloat16"), "out_dtype": DLDataType()}),
    "dlpack_device_format": lambda c: _b_format(c, {"device": DLDevice(2, 1)}),
    "dlpack_device_parse": lambda c: Case({"name": ctypes.create_string_buffer(b"cuda_host:0"), "out_device": DLDevice()}),
    "dlpack_stream_encode_decoded": lambda c: Case({"device": DLDevice(2, 0), "stream": Stream(5, 0x1234),
                                                     "out_has_stream": ctypes.c_bool(), "out_stream": ctypes.c_int64()}),
    "dlpack_tensor_validate": lambda c: _b_on_tensor(c, options=None, out_layout=_out_struct()),
    "dlpack_legacy_tensor_validate": lambda c: _b_on_tensor(c, True, options=None, out_layout=_out_struct()),
    "dlpack_dltensor_validate": lambda c: _b_on_dltensor(c, version=DLPackVersion(1, 3), flags=0, options=None,
                                                         out_layout=_out_struct()),
}

# The *_with_error variants (issue 35): the base function's baseline plus a whole error object;
# test_matrix.call checks the object holds the status and message exactly when the call fails.
WITH_ERROR = ["dlpack_tensor_validate", "dlpack_legacy_tensor_validate", "dlpack_dltensor_validate",
              "dlpack_version_check", "dlpack_version_negotiate", "dlpack_tensor_check_version",
              "dlpack_tensor_check_version_or_delete", "dlpack_dtype_parse", "dlpack_device_parse",
              "dlpack_tensor_create", "dlpack_tensor_alloc", "dlpack_legacy_to_versioned",
              "dlpack_versioned_to_legacy"]


def _with_error(base):
    def make(c: Ctx):
        case = BASELINES[base](c)
        case.args["err"] = cabi.error_object()
        return case
    return make


for _base in WITH_ERROR:
    BASELINES[_base + "_with_error"] = _with_error(_base)


def _used_capsule():
    """A NumPy capsule already consumed (named "used_dltensor_versioned"); its tensor released."""
    lib = ctypes.PyDLL(cabi.library_path())  # the library already loaded: same handle
    cap = _numpy_capsule(True)
    out = ctypes.c_void_p()
    assert lib.dlpack_capsule_consume(ctypes.c_void_p(id(cap)), ctypes.byref(out)) == 0
    lib.dlpack_tensor_delete(out)
    return cap


_LEGACY_KEEP = []


def _legacy_overflow_shape(t):
    """int8, shape {0, 2^62, 4}, NULL strides: the implied stride of dimension 0 is 2^64."""
    shape = (ctypes.c_int64 * 3)(0, 2**62, 4)
    _LEGACY_KEEP.append(shape)
    t.dl_tensor.ndim = 3
    t.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.dl_tensor.strides = None
    t.dl_tensor.dtype = DLDataType(0, 8, 1)


def _view_overflow_shape(t, first):
    shape = (ctypes.c_int64 * 3)(first, 2**62, 4)
    _LEGACY_KEEP.append(shape)
    t.ndim = 3
    t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    t.strides = None
    t.dtype = DLDataType(0, 8, 1)


def _set(field, value):
    def f(case):
        obj_name, attr = field.split(".")
        setattr(case.args[obj_name], attr, value)
    return f


def _options(struct_size, flags=0):
    """A dlpack_helpers_validate_options buffer: struct_size first, then flags, rest zero."""
    b = ctypes.create_string_buffer(256)
    ctypes.c_size_t.from_buffer(b, 0).value = struct_size
    ctypes.c_uint32.from_buffer(b, 8).value = flags
    return b


def _arg(name, value):
    return lambda cs: cs.args.__setitem__(name, value)


def _strides_null(cs):
    cs.args["tensor"].dl_tensor.strides = None


def _shape_negative(cs):
    cs.args["tensor"].dl_tensor.shape[0] = -1


def _shape_huge(cs):
    cs.args["tensor"].dl_tensor.shape[0] = 2**62
    cs.args["tensor"].dl_tensor.shape[1] = 2**62


# Inputs a per-type rule cannot produce: values inside pointed-to structs, zero and maximum sizes.
# (function, description, modify(case), expected status name)
VARIANTS = [
    ("dlpack_tensor_alloc", "device (kDLCUDA, 0)", _arg("device", DLDevice(2, 0)), "UNSUPPORTED_DEVICE"),
    ("dlpack_tensor_alloc", "device (kDLCPU, 1)", _arg("device", DLDevice(1, 1)), "UNSUPPORTED_DEVICE"),
    ("dlpack_tensor_alloc", "2^61 float32 (2^63 bytes)", _arg("shape", int64s(2**61, 1)), "OVERFLOW"),
    ("dlpack_tensor_alloc", "negative extent", _arg("shape", int64s(2, -3)), "INVALID_SHAPE"),
    ("dlpack_tensor_alloc_with_error", "device (kDLCUDA, 0)", _arg("device", DLDevice(2, 0)), "UNSUPPORTED_DEVICE"),
    ("dlpack_tensor_validate_with_error", "err struct_size 0", _set("err.struct_size", 0), "INVALID_ARGUMENT"),
    ("dlpack_dtype_parse_with_error", "err struct_size 535", _set("err.struct_size", 535), "INVALID_ARGUMENT"),
    ("dlpack_dtype_parse_with_error", "bfloat32", _arg("name", ctypes.create_string_buffer(b"bfloat32")), "UNKNOWN_NAME"),
    ("dlpack_dtype_parse_with_error", "err struct_size SIZE_MAX", _set("err.struct_size", 2**64 - 1), "OK"),
    ("dlpack_versioned_to_legacy_with_error", "major 0",
     lambda cs: setattr(cs.args["tensor"], "version", DLPackVersion(0, 0)), "UNSUPPORTED_VERSION"),
    ("dlpack_get_info", "struct_size 0", _set("out_info.struct_size", 0), "INVALID_ARGUMENT"),
    ("dlpack_get_info", "struct_size 7", _set("out_info.struct_size", 7), "INVALID_ARGUMENT"),
    ("dlpack_get_info", "struct_size 8 (size_t only)", _set("out_info.struct_size", 8), "OK"),
    ("dlpack_get_info", "struct_size SIZE_MAX", _set("out_info.struct_size", 2**64 - 1), "OK"),
    ("dlpack_export_request_resolve", "copy 99", _set("request.copy", 99), "INVALID_ARGUMENT"),
    ("dlpack_export_request_resolve", "copy -1", _set("request.copy", -1), "INVALID_ARGUMENT"),
    ("dlpack_export_request_resolve", "stream INT64_MIN", lambda cs: (_set("request.has_stream", True)(cs), _set("request.stream", -2**63)(cs)), "INVALID_STREAM"),
    ("dlpack_object_import", "copy 99", _set("request.copy", 99), "INVALID_ARGUMENT"),
    ("dlpack_object_import", "flags all bits", _set("request.flags", 2**32 - 1), "INVALID_ARGUMENT"),
    ("dlpack_object_import", "max_version 2.0", _set("request.max_version", DLPackVersion(2, 0)), None),
    ("dlpack_capsule_new_view", "ndim -1", _set("tensor.ndim", -1), "INVALID_NDIM"),
    ("dlpack_capsule_new_view", "ndim INT32_MIN", _set("tensor.ndim", -2**31), "INVALID_NDIM"),
    ("dlpack_capsule_new_view", "read-only, legacy kind (peer case 50)", lambda cs: (cs.args.__setitem__("flags", ctypes.c_uint64(1)), cs.args.__setitem__("kind", ctypes.c_int32(0))), "READ_ONLY"),
    ("dlpack_capsule_new_view", "read-only, versioned kind", lambda cs: cs.args.__setitem__("flags", ctypes.c_uint64(1)), "OK"),
    ("dlpack_capsule_new_view", "unknown flag bits", lambda cs: cs.args.__setitem__("flags", ctypes.c_uint64(2**62)), "INVALID_FLAGS"),
    # Issue 22: no negative device id anywhere (peer case 54); producers refuse device types
    # DLPack 1.3 does not assign unless asked (bit 63, never stored; peer case 55).
    ("dlpack_capsule_new_view", "device id -1", _set("tensor.device", DLDevice(1, -1)), "INVALID_DEVICE"),
    ("dlpack_capsule_new_view", "device type 99", _set("tensor.device", DLDevice(99, 0)), "INVALID_DEVICE"),
    ("dlpack_capsule_new_view", "device type 0", _set("tensor.device", DLDevice(0, 0)), "INVALID_DEVICE"),
    # (the view is read back with NumPy, which imports kDLCPU only: the opt-in on type 99 is in
    # tests-py/test_devices.py)
    ("dlpack_capsule_new_view", "opt-in bit on kDLCPU (never stored)", lambda cs: cs.args.__setitem__("flags", ctypes.c_uint64(2**63)), "OK"),
    ("dlpack_tensor_create", "device (kDLOneAPI, -1)", _arg("device", DLDevice(14, -1)), "INVALID_DEVICE"),
    ("dlpack_tensor_create", "device (kDLCUDA, -1)", _arg("device", DLDevice(2, -1)), "INVALID_DEVICE"),
    ("dlpack_tensor_create", "device type 0", _arg("device", DLDevice(0, 0)), "INVALID_DEVICE"),
    ("dlpack_tensor_create", "device type 99", _arg("device", DLDevice(99, 0)), "INVALID_DEVICE"),
    ("dlpack_tensor_create", "device type 19 (kDLTPU, after 1.3)", _arg("device", DLDevice(19, 0)), "INVALID_DEVICE"),
    ("dlpack_tensor_create", "device type 99, opt-in", lambda cs: (cs.args.__setitem__("device", DLDevice(99, 0)), cs.args.__setitem__("flags", 2**63)), "OK"),
    ("dlpack_tensor_create", "device id -1, opt-in", lambda cs: (cs.args.__setitem__("device", DLDevice(99, -1)), cs.args.__setitem__("flags", 2**63)), "INVALID_DEVICE"),
    ("dlpack_export_request_resolve", "tensor_device (kDLOneAPI, -1)", _arg("tensor_device", DLDevice(14, -1)), "INVALID_DEVICE"),
    ("dlpack_export_request_resolve", "dl_device (kDLCUDA, -1)", lambda cs: (_set("request.has_dl_device", True)(cs), _set("request.dl_device", DLDevice(2, -1))(cs)), "INVALID_DEVICE"),
    ("dlpack_tensor_validate", "device (kDLOneAPI, -1)", lambda cs: setattr(cs.args["tensor"].dl_tensor, "device", DLDevice(14, -1)), "INVALID_DEVICE"),
    ("dlpack_tensor_validate", "device type 99 (consumers pass it through)", lambda cs: setattr(cs.args["tensor"].dl_tensor, "device", DLDevice(99, 0)), "OK"),
    ("dlpack_device_check", "device id -1", _arg("device", DLDevice(2, -1)), "INVALID_DEVICE"),
    ("dlpack_device_check", "device id INT32_MIN, unassigned allowed", lambda cs: (cs.args.__setitem__("device", DLDevice(2, -2**31)), cs.args.__setitem__("flags", 1)), "INVALID_DEVICE"),
    ("dlpack_device_check", "device type 99", _arg("device", DLDevice(99, 0)), "INVALID_DEVICE"),
    ("dlpack_device_check", "device type 20, unassigned allowed", lambda cs: (cs.args.__setitem__("device", DLDevice(20, 0)), cs.args.__setitem__("flags", 1)), "OK"),
    ("dlpack_device_check", "unknown flag bits", _arg("flags", 2**32 - 1), "INVALID_ARGUMENT"),
    ("dlpack_level_zero_context_set_devices", "NULL devices, count 2", _arg("devices", None), "NULL_POINTER"),
    ("dlpack_level_zero_context_set_devices", "count 4097", _arg("num_devices", 4097), "INVALID_ARGUMENT"),
    ("dlpack_level_zero_context_set_devices", "a context with its devices", _arg("ze_context", 0xC0), "OK"),
    ("dlpack_level_zero_context_set_devices", "NULL devices, count 0", lambda cs: (cs.args.__setitem__("devices", None), cs.args.__setitem__("num_devices", 0)), "OK"),
    ("dlpack_capsule_new_view", "int8 {4, 2^62, 4}, NULL strides (peer case 49)", lambda cs: _view_overflow_shape(cs.args["tensor"], 4), "OVERFLOW"),
    ("dlpack_capsule_new_view", "int8 {0, 2^62, 4}, NULL strides: stride 2^64 (peer case 49)", lambda cs: _view_overflow_shape(cs.args["tensor"], 0), "OVERFLOW"),
    # The _validated views still check what their copy reads (issue 26).
    ("dlpack_capsule_new_view_validated", "ndim -1", _set("tensor.ndim", -1), "INVALID_NDIM"),
    ("dlpack_capsule_new_view_validated", "ndim INT32_MIN", _set("tensor.ndim", -2**31), "INVALID_NDIM"),
    ("dlpack_capsule_new_view_validated", "read-only, legacy kind (peer case 50)", lambda cs: (cs.args.__setitem__("flags", ctypes.c_uint64(1)), cs.args.__setitem__("kind", ctypes.c_int32(0))), "READ_ONLY"),
    ("dlpack_capsule_new_view_validated", "unknown flag bits (bit 63 is the unassigned-device opt-in)", lambda cs: cs.args.__setitem__("flags", ctypes.c_uint64(2**62)), "INVALID_FLAGS"),
    ("dlpack_capsule_new_view_validated", "int8 {0, 2^62, 4}, NULL strides: stride 2^64 (peer case 49)", lambda cs: _view_overflow_shape(cs.args["tensor"], 0), "OVERFLOW"),
    ("dlpack_tensor_new_view_validated", "ndim 1025 (above DLPACK_HELPERS_MAX_NDIM)", _set("tensor.ndim", 1025), "INVALID_NDIM"),
    ("dlpack_tensor_new_view_validated", "ndim -1", _set("tensor.ndim", -1), "INVALID_NDIM"),
    ("dlpack_tensor_new_view_validated", "unknown flag bits (bit 63 is the unassigned-device opt-in)", lambda cs: cs.args.__setitem__("flags", ctypes.c_uint64(2**62)), "INVALID_FLAGS"),
    ("dlpack_tensor_new_view_validated", "read-only (versioned: kept)", lambda cs: cs.args.__setitem__("flags", ctypes.c_uint64(1)), "OK"),
    ("dlpack_tensor_new_view_validated", "int8 {0, 2^62, 4}, NULL strides: stride 2^64 (peer case 49)", lambda cs: _view_overflow_shape(cs.args["tensor"], 0), "OVERFLOW"),
    ("dlpack_capsule_import", "unknown flag bits", lambda cs: cs.args.__setitem__("flags", ctypes.c_uint32(2**32 - 1)), "INVALID_ARGUMENT"),
    ("dlpack_capsule_import", "used capsule", lambda cs: cs.args.__setitem__("capsule", PyObj(_used_capsule())), "CAPSULE_CONSUMED"),
    ("dlpack_capsule_import", "versioned capsule, legacy-writable flag", lambda cs: (cs.args.__setitem__("capsule", PyObj(_numpy_capsule(True))), cs.args.__setitem__("flags", ctypes.c_uint32(4))), "OK"),
    ("dlpack_object_query_device", "unknown flag bits", lambda cs: cs.args.__setitem__("flags", ctypes.c_uint32(1)), "INVALID_ARGUMENT"),
    ("dlpack_object_query_device", "no __dlpack_device__, message mode", lambda cs: (cs.args.__setitem__("obj", PyObj(3)), cs.args.__setitem__("flags", ctypes.c_uint32(0))), "NO_DLPACK_METHOD"),
    ("dlpack_legacy_tensor_wrap", "unknown option bits", lambda cs: cs.args.__setitem__("options", ctypes.c_uint32(1)), "INVALID_ARGUMENT"),
    ("dlpack_legacy_tensor_wrap", "NULL strides, stride 2^64 (peer case 49)", lambda cs: _legacy_overflow_shape(cs.args["legacy"]), "OVERFLOW"),
    ("dlpack_legacy_to_versioned", "NULL strides, stride 2^64 (peer case 49)", lambda cs: _legacy_overflow_shape(cs.args["legacy"]), "OVERFLOW"),
    ("dlpack_dltensor_fits_allocation", "base + size wraps", lambda cs: (cs.args.__setitem__("base", 2**64 - 16), cs.args.__setitem__("size_in_bytes", 32)), "OVERFLOW"),
    ("dlpack_dltensor_fits_allocation", "opaque handle, other base", lambda cs: setattr(cs.args["tensor"], "device", DLDevice(4, 0)), None),
    ("dlpack_dltensor_fits_allocation", "size 0", lambda cs: cs.args.__setitem__("size_in_bytes", 0), "OK"),
    ("dlpack_capsule_new_view", "ndim 0 (a scalar)", _set("tensor.ndim", 0), "OK"),
    ("dlpack_stream_wait", "consumer kind 99", _set("consumer_stream.kind", 99), "INVALID_ARGUMENT"),
    ("dlpack_stream_wait", "consumer kind -1", _set("consumer_stream.kind", -1), "INVALID_ARGUMENT"),
    ("dlpack_get_device", "major 0", _set("tensor.version", DLPackVersion(0, 9)), "UNSUPPORTED_VERSION"),
    ("dlpack_get_device", "device id -1", lambda cs: setattr(cs.args["tensor"].dl_tensor, "device", DLDevice(2, -1)), "INVALID_DEVICE"),
    ("dlpack_legacy_get_device", "device id -1", lambda cs: setattr(cs.args["tensor"].dl_tensor, "device", DLDevice(2, -1)), "INVALID_DEVICE"),
    ("dlpack_get_device", "major UINT32_MAX", _set("tensor.version", DLPackVersion(2**32 - 1, 0)), "UNSUPPORTED_VERSION"),
    ("dlpack_tensor_check_version", "major 2", _set("tensor.version", DLPackVersion(2, 0)), "UNSUPPORTED_VERSION"),
    ("dlpack_tensor_check_version_or_delete", "major 2 (released)", _set("tensor.version", DLPackVersion(2, 0)), "UNSUPPORTED_VERSION"),
    ("dlpack_capsule_consume", "a legacy capsule (wrapped)", lambda cs: cs.args.__setitem__("capsule", PyObj(_numpy_capsule(False))), "OK"),
    ("dlpack_legacy_capsule_consume", "a versioned capsule", lambda cs: cs.args.__setitem__("capsule", PyObj(_numpy_capsule(True))), "CAPSULE_NAME"),
    ("dlpack_capsule_consume", "not a capsule", lambda cs: cs.args.__setitem__("capsule", PyObj(object())), "NOT_A_CAPSULE"),
    ("dlpack_object_import", "no __dlpack__", lambda cs: cs.args.__setitem__("obj", PyObj(object())), "NO_DLPACK_METHOD"),
    ("dlpack_object_get_device", "no __dlpack_device__", lambda cs: cs.args.__setitem__("obj", PyObj(3)), "NO_DLPACK_METHOD"),
    # validation, layout, names, flags, conversions
    ("dlpack_tensor_validate", "options struct_size 0", _arg("options", _options(0)), "INVALID_ARGUMENT"),
    ("dlpack_tensor_validate", "options struct_size SIZE_MAX", _arg("options", _options(2**64 - 1)), None),
    ("dlpack_tensor_validate", "options unknown bits", _arg("options", _options(64, 2**32 - 1)), "INVALID_ARGUMENT"),
    ("dlpack_tensor_validate", "NULL strides at 1.3 (peer case 29)", _strides_null, "NULL_STRIDES"),
    ("dlpack_tensor_validate", "negative extent", _shape_negative, "INVALID_SHAPE"),
    ("dlpack_tensor_validate", "2^124 elements", _shape_huge, "OVERFLOW"),
    ("dlpack_tensor_validate", "ndim -1", lambda cs: setattr(cs.args["tensor"].dl_tensor, "ndim", -1), "INVALID_NDIM"),
    ("dlpack_tensor_validate", "ndim INT32_MAX", lambda cs: setattr(cs.args["tensor"].dl_tensor, "ndim", 2**31 - 1), "INVALID_NDIM"),
    ("dlpack_tensor_validate", "major 2", lambda cs: setattr(cs.args["tensor"], "version", DLPackVersion(2, 0)), "UNSUPPORTED_VERSION"),
    ("dlpack_tensor_validate", "all flag bits", lambda cs: setattr(cs.args["tensor"], "flags", 2**64 - 1), "INVALID_FLAGS"),
    ("dlpack_legacy_tensor_validate", "negative extent", _shape_negative, "INVALID_SHAPE"),
    ("dlpack_legacy_tensor_validate", "NULL strides (allowed for legacy)", _strides_null, "OK"),
    ("dlpack_tensor_create", "ndim 0, shape NULL (a scalar)", lambda cs: (cs.args.__setitem__("ndim", 0), cs.args.__setitem__("shape", None)), "OK"),
    ("dlpack_tensor_create", "negative extent", _arg("shape", int64s(2, -3)), "INVALID_SHAPE"),
    ("dlpack_tensor_create", "2^124 elements", _arg("shape", int64s(2**62, 2**62)), "OVERFLOW"),
    ("dlpack_tensor_create", "NULL data, empty", lambda cs: (cs.args.__setitem__("data", None), cs.args.__setitem__("shape", int64s(0, 3))), "OK"),
    ("dlpack_compact_strides", "ndim 0, NULL buffers", lambda cs: (cs.args.__setitem__("ndim", 0), cs.args.__setitem__("shape", None), cs.args.__setitem__("out_strides", None)), "OK"),
    ("dlpack_compact_strides", "ndim MAX_NDIM", _arg("ndim", MAX_NDIM), None),
    ("dlpack_compact_strides", "ndim MAX_NDIM + 1", _arg("ndim", MAX_NDIM + 1), "INVALID_NDIM"),
    ("dlpack_compact_strides", "stride overflow", _arg("shape", int64s(2**40, 2**40, 2**40)), None),
    ("dlpack_dtype_format", "buf_size 0", _arg("buf_size", 0), "BUFFER_TOO_SMALL"),
    ("dlpack_dtype_format", "buf_size 7 for float32", _arg("buf_size", 7), "BUFFER_TOO_SMALL"),
    ("dlpack_dtype_format", "buf_size 8 for float32", _arg("buf_size", 8), "OK"),
    ("dlpack_device_format", "buf_size 0", _arg("buf_size", 0), "BUFFER_TOO_SMALL"),
    ("dlpack_device_format", "device_id -1", _arg("device", DLDevice(2, -1)), "INVALID_DEVICE"),
    ("dlpack_dtype_parse", "empty name", _arg("name", ctypes.create_string_buffer(b"")), "UNKNOWN_NAME"),
    ("dlpack_dtype_parse", "bfloat32", _arg("name", ctypes.create_string_buffer(b"bfloat32")), "UNKNOWN_NAME"),
    ("dlpack_dtype_parse", "4096-byte name", _arg("name", ctypes.create_string_buffer(b"float" * 819)), "UNKNOWN_NAME"),
    ("dlpack_dtype_parse", "float32x65536", _arg("name", ctypes.create_string_buffer(b"float32x65536")), "UNKNOWN_NAME"),
    ("dlpack_dtype_parse", "non-UTF-8 bytes", _arg("name", ctypes.create_string_buffer(b"\xff\xfe\x80")), "UNKNOWN_NAME"),
    ("dlpack_device_parse", "cuda:-1", _arg("name", ctypes.create_string_buffer(b"cuda:-1")), "UNKNOWN_NAME"),
    ("dlpack_device_parse", "cuda:2147483648", _arg("name", ctypes.create_string_buffer(b"cuda:2147483648")), "UNKNOWN_NAME"),
    ("dlpack_device_parse", "cuda:01", _arg("name", ctypes.create_string_buffer(b"cuda:01")), "UNKNOWN_NAME"),
    ("dlpack_device_parse", "cuda:99999999999999999999999", _arg("name", ctypes.create_string_buffer(b"cuda:99999999999999999999999")), "UNKNOWN_NAME"),
    ("dlpack_device_parse", "cuda:2147483647", _arg("name", ctypes.create_string_buffer(b"cuda:2147483647")), "OK"),
    ("dlpack_versioned_to_legacy", "read-only", lambda cs: setattr(cs.args["tensor"], "flags", 1), "READ_ONLY"),
    ("dlpack_versioned_to_legacy", "major 0", lambda cs: setattr(cs.args["tensor"], "version", DLPackVersion(0, 0)), "UNSUPPORTED_VERSION"),
    ("dlpack_legacy_to_versioned", "invalid legacy (negative extent)", lambda cs: cs.args["legacy"].dl_tensor.shape.__setitem__(0, -1), "INVALID_SHAPE"),
    ("dlpack_dltensor_data_address", "byte_offset wraps", lambda cs: setattr(cs.args["tensor"], "byte_offset", 2**64 - 1), "OVERFLOW"),
    ("dlpack_dltensor_data_address", "opaque handle (OpenCL)", lambda cs: setattr(cs.args["tensor"], "device", DLDevice(4, 0)), "OPAQUE_HANDLE"),
    ("dlpack_dltensor_data_location", "byte_offset wraps", lambda cs: setattr(cs.args["tensor"], "byte_offset", 2**64 - 1), "OVERFLOW"),
    ("dlpack_stream_encode_decoded", "kind 99", lambda cs: setattr(cs.args["stream"], "kind", 99), "INVALID_ARGUMENT"),
]
