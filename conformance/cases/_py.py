"""Helpers shared by the python-profile case modules (registers no case).

- Py(ctx): the fixture fx_py (capsules as a producer makes them) and a caller that returns a
  python-profile function's status together with the Python exception it left set (ctypes'
  PyDLL would raise it and lose the status): st, exc = py.call("dlpack_capsule_consume", cap, out)
- Arguments of py.call: a Python object passed as PyObject * is wrapped in Obj(o); ints are
  passed as they are (addresses, flags); dev(t, i) packs a DLDevice by value; None is NULL.
- Capsule introspection through CPython's own API: name, pointer, destructor, context.
"""
from __future__ import annotations

import ctypes
import sys

from harness.registry import Fail, Skip

api = ctypes.PyDLL(None)   # own function objects: argtypes set elsewhere on ctypes.pythonapi do not clash
api.PyCapsule_GetName.argtypes = [ctypes.py_object]
api.PyCapsule_GetName.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_void_p]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetDestructor.argtypes = [ctypes.py_object]
api.PyCapsule_GetDestructor.restype = ctypes.c_void_p
api.PyCapsule_GetContext.argtypes = [ctypes.py_object]
api.PyCapsule_GetContext.restype = ctypes.c_void_p
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyErr_Occurred.restype = ctypes.c_void_p


class Obj:
    """A Python object passed as a borrowed PyObject * (the caller keeps it alive)."""

    def __init__(self, o):
        self.o = o


def dev(device_type: int, device_id: int) -> int:
    """A DLDevice passed by value (two int32 in one 8-byte integer register)."""
    return (device_type & 0xFFFFFFFF) | ((device_id & 0xFFFFFFFF) << 32)


def addr(x) -> int:
    if x is None:
        return 0
    if isinstance(x, Obj):
        return id(x.o)
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x & 0xFFFFFFFFFFFFFFFF
    if isinstance(x, ctypes._Pointer):
        return ctypes.cast(x, ctypes.c_void_p).value or 0
    if type(x).__name__ == "CArgObject":   # ctypes.byref(obj): obj's address
        return ctypes.addressof(x._obj)
    return ctypes.addressof(x)     # a ctypes instance: its address (an out-parameter)


class Py:
    def __init__(self, ctx):
        path = ctx.fixture_paths.get("py")
        if not path:
            raise Skip("no CPython headers to build the Python fixture")
        self.ctx = ctx
        self.lib = lib = ctypes.PyDLL(path)
        lib.fx_capsule.restype = ctypes.py_object
        lib.fx_capsule.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.fx_capsule_named.restype = ctypes.py_object
        lib.fx_capsule_named.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        lib.fx_capsule_destructor_calls.restype = ctypes.c_long
        lib.fx_call.restype = ctypes.c_int
        lib.fx_call.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_int] + [ctypes.c_uint64] * 6
        lib.fx_take_exc.restype = ctypes.py_object
        lib.fx_decref_with_pending.argtypes = [ctypes.c_void_p, ctypes.py_object]
        lib.fx_newref.argtypes = [ctypes.py_object]
        lib.fx_newref.restype = ctypes.c_void_p
        lib.fx_from_config.argtypes = [ctypes.c_int, ctypes.py_object, ctypes.c_void_p, ctypes.c_int]
        lib.fx_cws_config.argtypes = [ctypes.c_int, ctypes.py_object, ctypes.c_void_p, ctypes.c_int]
        lib.fx_from_calls.restype = lib.fx_cws_calls.restype = lib.fx_cws_last.restype = ctypes.c_long
        lib.fx_from_slot_address.restype = lib.fx_cws_slot_address.restype = ctypes.c_void_p
        self.FROM_SLOT = lib.fx_from_slot_address()
        self.CWS_SLOT = lib.fx_cws_slot_address()

    def fn_address(self, name: str) -> int:
        getattr(self.ctx.pf, name)          # fails (claimed) or skips (not claimed) when missing
        return ctypes.cast(getattr(self.ctx.pyhandle, name), ctypes.c_void_p).value

    def call(self, name, *args, pending=None, fail_alloc=False):
        """(status, exception left set or None) of name(*args), called with the GIL held."""
        a = [addr(x) for x in args] + [0] * (6 - len(args))
        st = self.lib.fx_call(self.fn_address(name), pending, int(fail_alloc), *a)
        exc = self.lib.fx_take_exc()
        return st, exc

    def capsule(self, tensor_ptr: int, versioned=True):
        return self.lib.fx_capsule(tensor_ptr, int(versioned))

    def named(self, tensor_ptr: int, name, destructor=True):
        return self.lib.fx_capsule_named(tensor_ptr, name, int(destructor))

    def drop(self, obj_address: int, pending=None):
        """Drop a reference owned as an address (a produced capsule), with `pending` set while it
        dies; returns the exception left set (or None)."""
        self.lib.fx_decref_with_pending(obj_address, pending)
        return self.lib.fx_take_exc()

    def take(self, obj_address: int):
        """The object behind a new reference returned as an address (the reference taken over)."""
        o = ctypes.cast(obj_address, ctypes.py_object).value
        api.Py_DecRef.argtypes = [ctypes.c_void_p]
        api.Py_DecRef(obj_address)
        return o

    def destructor_address(self) -> int:
        return self.fn_address("dlpack_capsule_destructor")


def cap_name(cap):
    p = api.PyCapsule_GetName(cap)
    return ctypes.string_at(p) if p else None


def cap_pointer(cap) -> int:
    return api.PyCapsule_GetPointer(cap, api.PyCapsule_GetName(cap)) or 0


def is_capsule(o) -> bool:
    return type(o).__name__ == "PyCapsule" and type(o).__module__ == "builtins"


def no_exc(ctx, exc, what):
    ctx.check(exc is None, f"{what}: returned with a Python exception set: {exc!r}")


def refcount(o) -> int:
    return sys.getrefcount(o) - 1


# -- exchange tables made by the suite (a producer's DLPackExchangeAPI, built in memory) ---------
class Table:
    """A DLPackExchangeAPI in memory with Python callbacks for its slots (None: a NULL slot).

    Callbacks get raw arguments (PyObject * as addresses). The table stays valid while this
    object lives. .address: the table; .capsule(): a "dlpack_exchange_api" capsule for it."""

    SIGS = None

    def __init__(self, ctx, version=(1, 3), prev=0, **slots):
        self.ctx = ctx
        S = ctx.m.struct("DLPackExchangeAPI")
        self.buf = ctypes.create_string_buffer(ctypes.sizeof(S) + 8)
        base = ctypes.addressof(self.buf)
        self.address = base + (-base % 8)
        self.api = S.from_address(self.address)
        self.api.header.version.major, self.api.header.version.minor = version
        ctypes.c_void_p.from_address(self.address + S.header.offset + 8).value = prev or None
        V = ctypes.POINTER(ctx.m.struct("DLManagedTensorVersioned"))
        c = ctypes.CFUNCTYPE
        sigs = {
            "managed_tensor_allocator": c(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p),
            "managed_tensor_from_py_object_no_sync": c(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)),
            "managed_tensor_to_py_object_no_sync": c(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p),
            "dltensor_from_py_object_no_sync": c(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p),
            "current_work_stream": c(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)),
        }
        self.calls = {k: [] for k in sigs}
        self.keep = []
        for name, sig in sigs.items():
            fn = slots.get(name, "default")
            if fn == "default":
                fn = self._default(name)
            if fn is None:
                addr = 0
            elif isinstance(fn, int):
                addr = fn
            else:
                cb = sig(self._wrap(name, fn))
                self.keep.append(cb)
                addr = ctypes.cast(cb, ctypes.c_void_p).value
            ctypes.c_void_p.from_address(self.address + getattr(S, name).offset).value = addr or None

    def _wrap(self, name, fn):
        def w(*a):
            self.calls[name].append(a)
            return fn(*a)
        return w

    @staticmethod
    def _default(name):
        return lambda *a: -1

    def capsule(self, py):
        return py.named(self.address, b"dlpack_exchange_api", destructor=False)


