"""What a case sees: the library under test bound through the manifest, the fixtures, and checks.

    ctx.f.dlpack_tensor_delete(t)      call a function of the library (GIL released: ctypes.CDLL)
    ctx.pf.dlpack_capsule_consume(...) the same function, called with the GIL held (ctypes.PyDLL),
                                       as the python profile requires
    ctx.T.DLManagedTensorVersioned     a struct of the manifest, as a ctypes type
    ctx.K.DLPACK_HELPERS_MAX_NDIM      a constant of the manifest (unsigned, as the manifest says)
    ctx.S.NULL_POINTER                 a status code by its short name
    ctx.expect(status, "NULL_POINTER") fail unless `status` is that status (the message names both)
    ctx.ok(status)                     fail unless OK, with the library's last-error message
    ctx.fx                             the fixture library (fixtures/fixtures.c)
    ctx.tensor(...)                    a fixture tensor in guarded memory (see make_versioned)

A function the library does not export makes the case fail when its profile is claimed (the
claim is false) and skip when it is not.
"""
from __future__ import annotations

import ctypes
import os
from types import SimpleNamespace

from harness.manifest import Manifest
from harness.registry import Fail, Skip

PROFILE_OF_PREFIX = {"CORE": "core", "STREAMS": "streams", "PY": "python", "EXCH": "exchange"}


def discover_info(lib: str, manifest_path: str) -> dict:
    """dlpack_get_info's answer, as a dict (runs in a child process of the runner)."""
    m = Manifest.load(manifest_path)
    h = ctypes.CDLL(lib, mode=os.RTLD_LOCAL | os.RTLD_NOW)
    fn = m.bind(h, "dlpack_get_info")
    if fn is None:
        return {"error": "the library does not export dlpack_get_info", "profiles": 0}
    Info = m.struct("dlpack_helpers_info")
    info = Info()
    info.struct_size = ctypes.sizeof(Info)
    st = fn(ctypes.byref(info))
    if st != 0:
        return {"error": f"dlpack_get_info returned {m.status_name(st)}", "profiles": 0}
    out = {"struct_size": int(info.struct_size)}
    for name, _ in Info._fields_:
        off = getattr(Info, name).offset + getattr(Info, name).size
        if off > info.struct_size or name == "struct_size":
            continue
        v = getattr(info, name)
        ftype = next((f["type"] for f in m.structs["dlpack_helpers_info"]["fields"] if f["name"] == name), "")
        if "char" in ftype and "*" in ftype:
            v = ctypes.string_at(v).decode("utf-8", "replace") if v else None
        elif isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        elif isinstance(v, ctypes.Structure):
            v = {f: getattr(v, f) for f, _ in v._fields_}
        out[name] = v
    out.setdefault("profiles", 0)
    return out


class Functions:
    """Attribute access to the library's functions with the manifest's prototypes."""

    def __init__(self, ctx, handle):
        self._ctx, self._h, self._cache = ctx, handle, {}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        fn = self._cache.get(name)
        if fn is None:
            ctx = self._ctx
            if name not in ctx.m.functions:
                raise Fail(f"suite bug: {name} is not in the manifest")
            fn = ctx.m.bind(self._h, name)
            if fn is None:
                prof = ctx.m.functions[name].get("profile", "core")
                bit = ctx.m.profile_bits.get(prof, 0)
                if ctx.claimed is None or (ctx.claimed & bit):
                    raise Fail(f"the library does not export {name}, a function of the {prof} "
                               "profile it claims")
                raise Skip(f"{name} not exported ({prof} profile not claimed)")
            self._cache[name] = fn
        return fn

    def has(self, name) -> bool:
        return self._ctx.m.bind(self._h, name) is not None


class Context:
    @classmethod
    def load(cls, spec: dict) -> "Context":
        return cls(spec)

    def __init__(self, spec: dict):
        self.spec = spec
        self.m = Manifest.load(spec["manifest"])
        self.claimed = spec.get("claimed")
        self.lib_path = spec.get("lib")
        self.exchange = spec.get("exchange")
        self.T = SimpleNamespace(**{n: self.m.struct(n) for n in self.m.structs})
        self.K = SimpleNamespace(**self.m.constants)
        self.S = SimpleNamespace(**{k[len("DLPACK_HELPERS_STATUS_"):]: v for k, v in self.m.constants.items()
                                    if k.startswith("DLPACK_HELPERS_STATUS_")})
        if self.lib_path:
            mode = os.RTLD_LOCAL | os.RTLD_NOW
            self.handle = ctypes.CDLL(self.lib_path, mode=mode)
            self.pyhandle = ctypes.PyDLL(self.lib_path, mode=mode)
            self.f = Functions(self, self.handle)
            self.pf = Functions(self, self.pyhandle)
        if self.exchange:
            self._load_exchange(self.exchange)
        from harness import build
        paths = build.fixtures()
        self.fixture_paths = paths
        self.fx = ctypes.CDLL(paths["fixtures"])
        fx = self.fx
        fx.fx_guarded.restype = ctypes.c_void_p
        fx.fx_guarded.argtypes = [ctypes.c_size_t]
        fx.fx_poison.argtypes = [ctypes.c_void_p]
        fx.fx_record_new.restype = ctypes.c_ssize_t
        fx.fx_record_poison_on_release.argtypes = [ctypes.c_ssize_t, ctypes.c_void_p]
        fx.fx_calls.argtypes = [ctypes.c_ssize_t]
        fx.fx_thread.argtypes = [ctypes.c_ssize_t]
        fx.fx_thread.restype = ctypes.c_long
        fx.fx_gettid.restype = ctypes.c_long
        fx.fx_layout.restype = ctypes.c_int64
        for n in ("fx_deleter_versioned_address", "fx_deleter_legacy_address", "fx_release_ctx_address"):
            getattr(fx, n).restype = ctypes.c_void_p
        fx.fx_alloc_end.restype = ctypes.c_long
        self.VDELETER = fx.fx_deleter_versioned_address()
        self.LDELETER = fx.fx_deleter_legacy_address()
        self.RELEASE_CTX = fx.fx_release_ctx_address()
        self._check_fixture_layout()
        self.case = None

    # -- exchange mode (--exchange MODULE:TYPE) ------------------------------------------------
    def _load_exchange(self, spec: str):
        """The type's `__dlpack_c_exchange_api__` table, read through the manifest's layout.

        ctx.cls: the type; ctx.capsule: the attribute's value; ctx.api: the table (a ctypes
        DLPackExchangeAPI at the capsule's pointer, or None when the capsule is not one);
        ctx.slot(name): the table's function as a Python callable (GIL held; PyObject arguments
        as ctypes.py_object), or None for a NULL slot."""
        import importlib
        mod, _, name = spec.partition(":")
        if not mod or not name:
            raise Fail(f"--exchange {spec!r}: expected MODULE:TYPE")
        obj = importlib.import_module(mod)
        for part in name.split("."):
            obj = getattr(obj, part)
        self.cls = obj
        self.capsule = getattr(obj, "__dlpack_c_exchange_api__", None)
        self.api = None
        self.api_address = None
        api = ctypes.pythonapi
        api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        if self.capsule is not None and api.PyCapsule_IsValid(self.capsule, b"dlpack_exchange_api"):
            p = api.PyCapsule_GetPointer(self.capsule, b"dlpack_exchange_api")
            self.api_address = p
            self.api = self.m.struct("DLPackExchangeAPI").from_address(p)
        V = ctypes.POINTER(self.m.struct("DLManagedTensorVersioned"))
        D = ctypes.POINTER(self.m.struct("DLTensor"))
        P = ctypes.PYFUNCTYPE
        self.SETERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
        self._slot_types = {
            "managed_tensor_allocator": P(ctypes.c_int, D, ctypes.POINTER(V), ctypes.c_void_p, ctypes.c_void_p),
            "managed_tensor_from_py_object_no_sync": P(ctypes.c_int, ctypes.py_object, ctypes.POINTER(V)),
            "managed_tensor_to_py_object_no_sync": P(ctypes.c_int, V, ctypes.POINTER(ctypes.c_void_p)),
            "dltensor_from_py_object_no_sync": P(ctypes.c_int, ctypes.py_object, D),
            "current_work_stream": P(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)),
        }
        # The allocator may be called without the GIL (EXCH-TABLE-23): a CFUNCTYPE variant.
        self._slot_types_nogil = {
            "managed_tensor_allocator": ctypes.CFUNCTYPE(ctypes.c_int, D, ctypes.POINTER(V), ctypes.c_void_p, ctypes.c_void_p),
        }

    def slot(self, name: str, gil: bool = True):
        if self.api is None:
            raise Fail("the type has no valid __dlpack_c_exchange_api__ capsule")
        addr = ctypes.cast(getattr(self.api, name), ctypes.c_void_p).value if getattr(self.api, name) else None
        if not addr:
            return None
        types = self._slot_types if gil else self._slot_types_nogil
        return types[name](addr)

    def pyobject_from(self, address: int):
        """The object behind a new reference returned through a `void **` (the reference is
        taken over: released when the returned Python object dies)."""
        obj = ctypes.cast(address, ctypes.py_object).value
        ctypes.pythonapi.Py_DecRef.argtypes = [ctypes.c_void_p]
        ctypes.pythonapi.Py_DecRef(address)
        return obj

    def _check_fixture_layout(self):
        T = self.T
        want = [ctypes.sizeof(T.DLTensor), ctypes.sizeof(T.DLManagedTensorVersioned),
                ctypes.sizeof(T.DLManagedTensor), T.DLManagedTensorVersioned.deleter.offset,
                T.DLManagedTensorVersioned.dl_tensor.offset, T.DLManagedTensor.deleter.offset,
                T.DLManagedTensorVersioned.flags.offset]
        got = [self.fx.fx_layout(i) for i in range(len(want))]
        if got != want:
            raise RuntimeError(f"suite bug: fixture layouts {got} differ from the manifest's {want}")

    # -- per case ----------------------------------------------------------------------------
    def begin_case(self, case):
        self.case = case

    def end_case(self):
        self.case = None

    # -- checks ------------------------------------------------------------------------------
    def status_name(self, code) -> str:
        return self.m.status_name(code)

    def last_error(self) -> bytes:
        f = self.f.dlpack_last_error_message
        f.restype = ctypes.c_void_p
        p = f()
        if not p:
            raise Fail("dlpack_last_error_message() returned NULL")
        return ctypes.string_at(p)

    def expect(self, status, *names, what=""):
        codes = [self.m.status(n) for n in names]
        if status not in codes:
            msg = ""
            if status != 0:
                try:
                    msg = f" (message: {self.last_error().decode('utf-8', 'replace')!r})"
                except Fail:
                    msg = " (and a NULL last-error message)"
            raise Fail(f"{what + ': ' if what else ''}expected {' or '.join(names)}, got "
                       f"{self.status_name(status)}{msg}")

    def ok(self, status, what=""):
        self.expect(status, "OK", what=what)

    def check(self, cond, message):
        if not cond:
            raise Fail(message)

    def skip(self, reason):
        raise Skip(reason)

    # -- fixtures ----------------------------------------------------------------------------
    def guarded(self, n: int) -> int:
        p = self.fx.fx_guarded(n)
        if not p:
            raise Skip("mmap failed")
        return p

    def int64_array(self, values, guarded=True):
        """An int64_t array whose last element ends against a guard page (or NULL for None)."""
        if values is None:
            return None
        n = len(values)
        p = self.guarded(8 * n) if guarded else ctypes.addressof((ctypes.c_int64 * max(n, 1))())
        arr = (ctypes.c_int64 * n).from_address(p) if n else None
        for i, v in enumerate(values):
            arr[i] = v
        return p

    def make_versioned(self, shape=(2, 3), strides=None, dtype=(2, 32, 1), device=(1, 0),
                       version=None, flags=0, data=None, byte_offset=0, deleter=True,
                       poison=True, readable=None, ndim=None):
        """A DLManagedTensorVersioned in guarded memory with the counting fixture deleter.

        Returns (pointer as int, record). `readable` limits the struct's readable bytes (the
        rest sits in the guard page: e.g. 24 keeps only version, manager_ctx and deleter). With
        `poison`, the deleter makes the struct, shape, strides and data PROT_NONE: any use after
        release faults. `data=None` allocates a guarded buffer large enough for the elements."""
        T = self.T
        V = T.DLManagedTensorVersioned
        size = ctypes.sizeof(V)
        if version is None:
            version = (self.K.DLPACK_HELPERS_DLPACK_MAJOR_VERSION, self.K.DLPACK_HELPERS_DLPACK_MINOR_VERSION)
        rec = self.fx.fx_record_new()
        if readable is not None:
            p = self.guarded(readable)
            raw = (ctypes.c_char * readable).from_address(p)
            tmp = V()
            tmp.version.major, tmp.version.minor = version
            tmp.manager_ctx = rec
            tmp.deleter = self.VDELETER if deleter else None
            ctypes.memmove(raw, ctypes.byref(tmp), readable)
            if poison:
                self.fx.fx_record_poison_on_release(rec, p)
            return p, rec
        p = self.guarded(size)
        t = V.from_address(p)
        t.version.major, t.version.minor = version
        t.manager_ctx = rec
        t.deleter = self.VDELETER if deleter else None
        t.flags = flags
        self._fill_dltensor(t.dl_tensor, shape, strides, dtype, device, data, byte_offset, ndim, rec, poison)
        if poison:
            self.fx.fx_record_poison_on_release(rec, p)
        return p, rec

    def make_legacy(self, shape=(2, 3), strides=None, dtype=(2, 32, 1), device=(1, 0), data=None,
                    byte_offset=0, deleter=True, poison=True, ndim=None):
        L = self.T.DLManagedTensor
        p = self.guarded(ctypes.sizeof(L))
        t = L.from_address(p)
        rec = self.fx.fx_record_new()
        t.manager_ctx = rec
        t.deleter = self.LDELETER if deleter else None
        self._fill_dltensor(t.dl_tensor, shape, strides, dtype, device, data, byte_offset, ndim, rec, poison)
        if poison:
            self.fx.fx_record_poison_on_release(rec, p)
        return p, rec

    def make_dltensor(self, shape=(2, 3), strides=None, dtype=(2, 32, 1), device=(1, 0), data=None,
                      byte_offset=0, ndim=None):
        D = self.T.DLTensor
        p = self.guarded(ctypes.sizeof(D))
        self._fill_dltensor(D.from_address(p), shape, strides, dtype, device, data, byte_offset, ndim, 0, False)
        return p

    def _fill_dltensor(self, d, shape, strides, dtype, device, data, byte_offset, ndim, rec, poison):
        d.ndim = len(shape) if ndim is None and shape is not None else (ndim or 0)
        d.dtype.code, d.dtype.bits, d.dtype.lanes = dtype
        d.device.device_type, d.device.device_id = device
        sp = self.int64_array(list(shape) if shape is not None else None)
        st = self.int64_array(list(strides) if strides is not None else None)
        d.shape = ctypes.cast(sp, type(d.shape)) if sp else None
        d.strides = ctypes.cast(st, type(d.strides)) if st else None
        if data is None:
            n = 1
            for s in shape or ():
                n *= max(int(s), 0)
            nbytes = max(n * ((dtype[1] * dtype[2] + 7) // 8), 1)
            data = self.guarded(min(nbytes, 1 << 20)) if nbytes <= (1 << 20) else 0x1000
            if poison and nbytes <= (1 << 20):
                self.fx.fx_record_poison_on_release(rec, data)
        d.data = data
        d.byte_offset = byte_offset
        if poison and rec:
            for q in (sp, st):
                if q:
                    self.fx.fx_record_poison_on_release(rec, q)

    def calls(self, rec) -> int:
        return self.fx.fx_calls(rec)

    def deleter_thread(self, rec) -> int:
        return self.fx.fx_thread(rec)

    def versioned(self, p):
        return self.T.DLManagedTensorVersioned.from_address(p)

    def vptr(self, p):
        return ctypes.cast(p, ctypes.POINTER(self.T.DLManagedTensorVersioned))

    def lptr(self, p):
        return ctypes.cast(p, ctypes.POINTER(self.T.DLManagedTensor))

    def dptr(self, p):
        return ctypes.cast(p, ctypes.POINTER(self.T.DLTensor))
