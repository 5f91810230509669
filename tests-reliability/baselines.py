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
from header import DLDevice, DLPackVersion

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

    def versioned(self, major=1, minor=3, device=(1, 0)):
        i = next(self._ids)
        t = DLManagedTensorVersioned()
        t.version = DLPackVersion(major, minor)
        t.manager_ctx = i
        t.deleter = self._v
        t.dl_tensor.device = DLDevice(*device)
        self.calls[i], self.keep[i] = 0, t
        return t

    def legacy(self, device=(1, 0)):
        i = next(self._ids)
        t = DLManagedTensor()
        t.manager_ctx = i
        t.deleter = self._l
        t.dl_tensor.device = DLDevice(*device)
        self.calls[i], self.keep[i] = 0, t
        return t

    def released(self, t) -> int:
        return self.calls[t.manager_ctx]

    def check(self):
        wrong = {i: n for i, n in self.calls.items() if n != 1}
        assert not wrong, f"deleters not run exactly once (tensor id: calls): {wrong}"


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


def b_object_import(c: Ctx):
    out, how = ctypes.c_void_p(), ctypes.c_uint32()
    req = ImportRequest()
    return Case({"obj": PyObj(np.arange(5.0)), "request": req, "out_tensor": out, "out_how": how},
                lambda s, a: c.delete_out_tensor(out))


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


def b_stream_backend_check(c: Ctx):
    return Case({"device_type": BACKEND_TYPE})


def b_pointer_get_device(c: Ctx):
    buf = ctypes.create_string_buffer(64)
    case = Case({"ptr": cabi.addr(buf), "out_device": DLDevice()})
    case.keep = buf
    return case


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


BASELINES = {
    # value functions and void functions
    "dlpack_is_cpu_accessible": lambda c: Case({"device": DLDevice(1, 0)}),
    "dlpack_device_host_access": lambda c: Case({"device": DLDevice(2, 0)}),
    "dlpack_last_error_message": lambda c: Case({}),
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
    "dlpack_legacy_capsule_consume": lambda c: _b_capsule_consume(c, True),
    "dlpack_capsule_new_view": b_capsule_new_view,
    "dlpack_exchange_api_find": b_exchange_api_find,
    "dlpack_object_import": b_object_import,
    "dlpack_object_get_device": b_object_get_device,
    "dlpack_stream_decode": b_stream_decode,
    "dlpack_stream_encode": b_stream_encode,
    "dlpack_export_request_resolve": b_export_request_resolve,
    "dlpack_stream_backend_register": b_stream_backend_register,
    "dlpack_stream_wait": b_stream_wait,
    "dlpack_stream_synchronize": b_stream_synchronize,
    "dlpack_stream_backend_check": b_stream_backend_check,
    "dlpack_pointer_get_device": b_pointer_get_device,
    "dlpack_get_device": lambda c: _b_get_device(c, False),
    "dlpack_legacy_get_device": lambda c: _b_get_device(c, True),
    "dlpack_tensor_check_version": b_tensor_check_version,
    "dlpack_tensor_check_version_or_delete": b_tensor_check_version_or_delete,
    "dlpack_version_check": b_version_check,
    "dlpack_version_negotiate": b_version_negotiate,
}


def _set(field, value):
    def f(case):
        obj_name, attr = field.split(".")
        setattr(case.args[obj_name], attr, value)
    return f


# Inputs a per-type rule cannot produce: values inside pointed-to structs, zero and maximum sizes.
# (function, description, modify(case), expected status name)
VARIANTS = [
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
    ("dlpack_capsule_new_view", "ndim -1", _set("tensor.ndim", -1), "INVALID_ARGUMENT"),
    ("dlpack_capsule_new_view", "ndim INT32_MIN", _set("tensor.ndim", -2**31), "INVALID_ARGUMENT"),
    ("dlpack_capsule_new_view", "ndim 0 (a scalar)", _set("tensor.ndim", 0), "OK"),
    ("dlpack_stream_wait", "consumer kind 99", _set("consumer_stream.kind", 99), "INVALID_ARGUMENT"),
    ("dlpack_stream_wait", "consumer kind -1", _set("consumer_stream.kind", -1), "INVALID_ARGUMENT"),
    ("dlpack_get_device", "major 0", _set("tensor.version", DLPackVersion(0, 9)), "UNSUPPORTED_VERSION"),
    ("dlpack_get_device", "major UINT32_MAX", _set("tensor.version", DLPackVersion(2**32 - 1, 0)), "UNSUPPORTED_VERSION"),
    ("dlpack_tensor_check_version", "major 2", _set("tensor.version", DLPackVersion(2, 0)), "UNSUPPORTED_VERSION"),
    ("dlpack_tensor_check_version_or_delete", "major 2 (released)", _set("tensor.version", DLPackVersion(2, 0)), "UNSUPPORTED_VERSION"),
    ("dlpack_capsule_consume", "a legacy capsule (wrapped)", lambda cs: cs.args.__setitem__("capsule", PyObj(_numpy_capsule(False))), "OK"),
    ("dlpack_legacy_capsule_consume", "a versioned capsule", lambda cs: cs.args.__setitem__("capsule", PyObj(_numpy_capsule(True))), "CAPSULE_NAME"),
    ("dlpack_capsule_consume", "not a capsule", lambda cs: cs.args.__setitem__("capsule", PyObj(object())), "NOT_A_CAPSULE"),
    ("dlpack_object_import", "no __dlpack__", lambda cs: cs.args.__setitem__("obj", PyObj(object())), "NO_DLPACK_METHOD"),
    ("dlpack_object_get_device", "no __dlpack_device__", lambda cs: cs.args.__setitem__("obj", PyObj(3)), "NO_DLPACK_METHOD"),
]
