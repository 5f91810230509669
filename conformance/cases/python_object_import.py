"""Python profile: dlpack_object_import and dlpack_object_import_with_stream against producers
written here (__dlpack__ returning fixture capsules, misbehaving ones, keyword refusals for the
retry rule) and, for the exchange-API path, types publishing a table the suite builds
(_py.Table, slots in fx_py.c that count their calls)."""
import ctypes
import sys

from cases._py import Obj, Py, Table, cap_name, no_exc
from harness.registry import case

SENT = 0x5EB7_1E55_0000_0042


class Prod:
    """__dlpack__ answers make(call number, kwargs): a capsule, or an exception to raise."""

    def __init__(self, make, device=(1, 0)):
        self.make, self.calls, self.device, self.last = make, [], device, None

    def __dlpack__(self, *a, **kw):
        self.calls.append((a, kw))
        r = self.make(len(self.calls), kw)
        if isinstance(r, BaseException):
            raise r
        self.last = r
        return r

    def __dlpack_device__(self):
        return self.device


class Req:
    def __init__(self, ctx, max_version=(0, 0), stream=..., dl_device=None, copy=0, flags=0):
        r = self.r = ctx.T.dlpack_helpers_import_request()
        r.max_version.major, r.max_version.minor = max_version
        self.stream = stream
        r.stream = id(stream) if stream is not ... else None
        r.has_dl_device = dl_device is not None
        if dl_device is not None:
            r.dl_device.device_type, r.dl_device.device_id = dl_device
        r.copy, r.flags = copy, flags


def imp(ctx, py, obj, req=None, with_stream=False, pending=None):
    out, how = ctypes.c_void_p(SENT), ctypes.c_uint32(0xABCD)
    s = ctx.T.dlpack_helpers_stream()
    s.kind, s.handle = 0x7777, 0x5EB7
    args = [Obj(obj), ctypes.byref(req.r) if req else None, ctypes.byref(out), ctypes.byref(how)]
    if with_stream:
        args.append(ctypes.byref(s))
    st, exc = py.call("dlpack_object_import_with_stream" if with_stream else "dlpack_object_import", *args,
                      pending=pending)
    return st, out.value, how.value, exc, (s.kind, s.handle or 0)


def versioned_producer(ctx, py, device=(1, 0), **kw):
    p, rec = ctx.make_versioned(device=device, **kw)
    return Prod(lambda n, k: py.capsule(p, True), device), p, rec


FNS = (False, True)   # dlpack_object_import, dlpack_object_import_with_stream


def cov(*ids):
    return list(ids) + ["PY-OBJECT-IMPORT-WITH-STREAM-2"]


@case("python.object_import.first_call", profile="python",
      covers=cov("PY-OBJECT-IMPORT-5", "PY-OBJECT-IMPORT-6", "PY-OBJECT-IMPORT-7", "PY-OBJECT-IMPORT-11",
                 "PY-OBJECT-IMPORT-16", "PY-OBJECT-IMPORT-17"))
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    marker = object()
    rows = [(None, {"max_version": (1, 3)}),
            (dict(), {"max_version": (1, 3)}),
            (dict(max_version=(1, 2)), {"max_version": (1, 2)}),
            (dict(max_version=(2, 7)), {"max_version": (2, 7)}),
            (dict(stream=None), {"max_version": (1, 3), "stream": None}),
            (dict(stream=marker), {"max_version": (1, 3), "stream": marker}),
            (dict(dl_device=(2, 1)), {"max_version": (1, 3), "dl_device": (2, 1)}),
            (dict(dl_device=(12345, 0)), {"max_version": (1, 3), "dl_device": (12345, 0)}),
            (dict(copy=K.DLPACK_HELPERS_COPY_ALWAYS), {"max_version": (1, 3), "copy": True}),
            (dict(copy=K.DLPACK_HELPERS_COPY_NEVER), {"max_version": (1, 3), "copy": False}),
            (dict(stream=7, dl_device=(1, 0), copy=K.DLPACK_HELPERS_COPY_NEVER, max_version=(1, 1)),
             {"max_version": (1, 1), "stream": 7, "dl_device": (1, 0), "copy": False})]
    for ws in FNS:
        for minor in (3, 0, 9):
            for reqkw, want in rows:
                # The producer honours a requested dl_device (PY-OBJECT-IMPORT-25 refuses an
                # answer on another device; python.object_import.answer_checked covers that).
                dev = (reqkw or {}).get("dl_device", (1, 0))
                prod, p, rec = versioned_producer(ctx, py, device=dev, version=(1, minor))
                req = Req(ctx, **reqkw) if reqkw is not None else None
                prc = sys.getrefcount(prod)
                st, out, how, exc, _ = imp(ctx, py, prod, req, ws)
                what = f"import{'_with_stream' if ws else ''} request {reqkw} (tensor 1.{minor})"
                ctx.ok(st, what)
                no_exc(ctx, exc, what)
                ctx.check(out == p and how == 0, f"{what}: out {out:#x} how {how}")
                ctx.check(len(prod.calls) == 1, f"{what}: __dlpack__ called {len(prod.calls)} times")
                a, kw = prod.calls[0]
                ctx.check(a == () and kw == want, f"{what}: called with {a} {kw}, expected {want}")
                for key in ("max_version", "dl_device"):
                    if key in kw:
                        ctx.check(type(kw[key]) is tuple and all(type(x) is int for x in kw[key]),
                                  f"{what}: {key} is {kw[key]!r}, not a tuple of ints")
                if "stream" in want:
                    ctx.check(kw["stream"] is want["stream"], f"{what}: stream is not the very object")
                for key in ("copy",):
                    if key in kw:
                        ctx.check(type(kw[key]) is bool, f"{what}: copy is {kw[key]!r}")
                cap = prod.last
                prod.last = None
                ctx.check(cap_name(cap) == b"used_dltensor_versioned", f"{what}: capsule named {cap_name(cap)!r}")
                ctx.check(sys.getrefcount(cap) == 2, f"{what}: the capsule has {sys.getrefcount(cap) - 2} extra references")
                del cap
                prod.calls.clear()
                ctx.check(sys.getrefcount(prod) == prc, f"{what}: a reference to the object is kept")
                ctx.check(ctx.calls(rec) == 0, f"{what}: the consumed capsule released the tensor")
                ctx.f.dlpack_tensor_delete(ctx.vptr(p))
                ctx.check(ctx.calls(rec) == 1, f"{what}: deleter ran {ctx.calls(rec)} times")
    # An instance attribute is looked up as obj.__dlpack__ finds it.
    p, rec = ctx.make_versioned()

    class Plain:
        pass
    o = Plain()
    o.__dlpack__ = lambda **kw: py.capsule(p, True)
    st, out, how, exc, _ = imp(ctx, py, o)
    ctx.ok(st, "instance attribute __dlpack__")
    ctx.check(out == p, "instance attribute's capsule not imported")
    ctx.f.dlpack_tensor_delete(ctx.vptr(p))


@case("python.object_import.retry", profile="python",
      covers=cov("PY-OBJECT-IMPORT-8", "PY-OBJECT-IMPORT-9", "PY-OBJECT-IMPORT-12", "PY-OBJECT-IMPORT-16"))
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    KEEP = K.DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR

    class TE(TypeError):
        pass

    for ws in FNS:
        for flags in (0, KEEP):
            for stream in (..., None, 5):
                for err in (TypeError("unexpected keyword argument 'max_version'"), TE("x")):
                    p, rec = ctx.make_versioned()
                    prod = Prod(lambda n, kw, e=err: e if "max_version" in kw else py.capsule(p, True))
                    st, out, how, exc, _ = imp(ctx, py, prod, Req(ctx, stream=stream, flags=flags), ws)
                    what = f"retry (flags {flags}, stream {stream!r}, {type(err).__name__})"
                    ctx.ok(st, what)
                    no_exc(ctx, exc, what)
                    ctx.check(len(prod.calls) == 2, f"{what}: {len(prod.calls)} calls")
                    want = {} if stream is ... else {"stream": stream}
                    ctx.check(prod.calls[1] == ((), want), f"{what}: retry called with {prod.calls[1]}, expected {want}")
                    ctx.check(out == p and how == K.DLPACK_HELPERS_IMPORTED_AFTER_RETRY, f"{what}: how {how}")
                    ctx.f.dlpack_tensor_delete(ctx.vptr(p))
        # No retry: dl_device or copy passed, the retry's own TypeError, other exceptions.
        for reqkw, make, want, ncalls in (
                (dict(dl_device=(1, 0)), lambda n, kw: TypeError("t"), "PRODUCER_TYPE_ERROR", 1),
                (dict(copy=K.DLPACK_HELPERS_COPY_ALWAYS), lambda n, kw: TypeError("t"), "PRODUCER_TYPE_ERROR", 1),
                (dict(), lambda n, kw: TypeError(f"call {n}"), "PRODUCER_TYPE_ERROR", 2),
                (dict(), lambda n, kw: NotImplementedError("n"), "PRODUCER_ERROR", 1),
                (dict(), lambda n, kw: BufferError("b"), "PRODUCER_BUFFER_ERROR", 1),
                (dict(), lambda n, kw: ValueError("v"), "PRODUCER_ERROR", 1),
                (dict(), lambda n, kw: AttributeError("inside"), "PRODUCER_ERROR", 1)):
            prod = Prod(make)
            st, out, how, exc, sk = imp(ctx, py, prod, Req(ctx, **reqkw), ws)
            what = f"{reqkw} raising {make(1, {})!r}"
            ctx.expect(st, want, what=what)
            no_exc(ctx, exc, what)
            ctx.check(len(prod.calls) == ncalls, f"{what}: __dlpack__ called {len(prod.calls)} times, expected {ncalls}")
            ctx.check(out == SENT and how == 0xABCD and sk == (0x7777, 0x5EB7), f"{what}: out-parameters written")
            m = ctx.last_error()
            e = make(ncalls, {})
            ctx.check(f"{type(e).__name__}: {e}".encode() in m, f"{what}: message {m!r} lacks '{type(e).__name__}: {e}'")


@case("python.object_import.exceptions", profile="python",
      covers=cov("PY-OBJECT-IMPORT-6", "PY-OBJECT-IMPORT-12", "PY-OBJECT-IMPORT-13", "PY-OBJECT-IMPORT-14",
                 "PY-OBJECT-IMPORT-15", "OWN-PY-3"))
def _(ctx):
    py = Py(ctx)
    KEEP = ctx.K.DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR
    for ws in FNS:
        st, out, how, exc, _ = imp(ctx, py, object(), None, ws)
        ctx.expect(st, "NO_DLPACK_METHOD", what="object()")
        no_exc(ctx, exc, "object()")
        ctx.check(b"AttributeError" in ctx.last_error(), "the message does not name the AttributeError")
        st, out, how, exc, _ = imp(ctx, py, object(), Req(ctx, flags=KEEP), ws)
        ctx.expect(st, "PYTHON_ERROR_SET", what="KEEP: object()")
        ctx.check(isinstance(exc, AttributeError), f"KEEP: the lookup's AttributeError not left set: {exc!r}")
        for e in (ValueError("v"), BufferError("b"), AttributeError("inside"), NotImplementedError()):
            prod = Prod(lambda n, kw, e=e: e)
            st, out, how, exc, _ = imp(ctx, py, prod, Req(ctx, flags=KEEP), ws)
            ctx.expect(st, "PYTHON_ERROR_SET", what=f"KEEP: {e!r}")
            ctx.check(exc is e, f"KEEP: {e!r} not left set as it was: {exc!r}")
            ctx.check(len(prod.calls) == 1, "KEEP: called again")
            ctx.check(out == SENT and how == 0xABCD, "out-parameters written")
            m = ctx.last_error()
            ctx.check(type(e).__name__.encode() in m, f"KEEP: message {m!r} does not name the pending exception")
        for flags in (0, KEEP):
            for e in (KeyboardInterrupt("k"), SystemExit(2), GeneratorExit()):
                prod = Prod(lambda n, kw, e=e: e)
                st, out, how, exc, _ = imp(ctx, py, prod, Req(ctx, flags=flags), ws)
                ctx.expect(st, "PYTHON_ERROR_SET", what=f"flags {flags}: {e!r}")
                ctx.check(exc is e, f"{e!r} not left set as it was: {exc!r}")
                ctx.check(len(prod.calls) == 1, f"{e!r}: retried")
        # The empty-message form: the name alone.
        prod = Prod(lambda n, kw: ValueError())
        st, *_ = imp(ctx, py, prod, None, ws)
        ctx.expect(st, "PRODUCER_ERROR", what="ValueError()")
        ctx.check(b"ValueError" in ctx.last_error(), "message lacks the exception's name")


@case("python.object_import.producer_results", profile="python",
      covers=cov("PY-OBJECT-IMPORT-10", "PY-OBJECT-IMPORT-11", "PY-OBJECT-IMPORT-16", "PY-OBJECT-IMPORT-15"))
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    guard = ctx.guarded(0)
    for ws in FNS:
        for name, want in ((b"used_dltensor", "CAPSULE_CONSUMED"), (b"used_dltensor_versioned", "CAPSULE_CONSUMED"),
                           (b"dltensor_used", "BAD_PRODUCER_RESULT"), (None, "BAD_PRODUCER_RESULT"),
                           (b"dlpack_exchange_api", "BAD_PRODUCER_RESULT")):
            cap = py.named(guard, name, destructor=False)
            st, out, how, exc, sk = imp(ctx, py, Prod(lambda n, kw: cap), None, ws)
            ctx.expect(st, want, what=f"capsule named {name!r}")
            no_exc(ctx, exc, repr(name))
            ctx.check(cap_name(cap) == name, f"{name!r}: capsule renamed")
            ctx.check(out == SENT and how == 0xABCD and sk == (0x7777, 0x5EB7), "out-parameters written")
        for r in (None, 5, b"dltensor", object()):
            st, *_rest = imp(ctx, py, Prod(lambda n, kw, r=r: r), None, ws)
            ctx.expect(st, "BAD_PRODUCER_RESULT", what=f"__dlpack__ -> {r!r}")
        # Legacy capsules: converted, read-only unless LEGACY_WRITABLE.
        for flags, ro in ((0, 1), (K.DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, 0)):
            p, rec = ctx.make_legacy()
            prod = Prod(lambda n, kw: py.capsule(p, False))
            st, out, how, exc, _ = imp(ctx, py, prod, Req(ctx, flags=flags), ws)
            ctx.ok(st, f"legacy capsule flags {flags}")
            ctx.check(how == K.DLPACK_HELPERS_IMPORTED_LEGACY, f"legacy: how {how}")
            t = ctx.versioned(out)
            ctx.check(t.flags == ro and (t.version.major, t.version.minor) == (1, 3), f"legacy: flags {t.flags} version {t.version.major}.{t.version.minor}")
            ctx.check(cap_name(prod.last) == b"used_dltensor", "legacy capsule not renamed")
            ctx.f.dlpack_tensor_delete(ctx.vptr(out))
            ctx.check(ctx.calls(rec) == 1, "legacy deleter not run once")
        # Refused tensors: released once, renamed.
        for kw, want in ((dict(version=(2, 0), readable=ctx.T.DLManagedTensorVersioned.flags.offset), "UNSUPPORTED_VERSION"),
                         (dict(version=(1, 0), flags=1 << 4), "INVALID_FLAGS")):
            p, rec = ctx.make_versioned(**kw)
            prod = Prod(lambda n, k: py.capsule(p, True))
            st, out, how, exc, _ = imp(ctx, py, prod, None, ws)
            ctx.expect(st, want, what=str(kw))
            no_exc(ctx, exc, str(kw))
            ctx.check(ctx.calls(rec) == 1, f"{kw}: deleter ran {ctx.calls(rec)} times")
            ctx.check(cap_name(prod.last) == b"used_dltensor_versioned", f"{kw}: capsule not renamed")
            ctx.check(out == SENT and how == 0xABCD, "out-parameters written")
        p, rec = ctx.make_legacy(shape=(2,), ndim=-1)
        st, *_ = imp(ctx, py, Prod(lambda n, k: py.capsule(p, False)), None, ws)
        ctx.expect(st, "INVALID_NDIM", what="legacy ndim -1")
        ctx.check(ctx.calls(rec) == 1, "refused legacy tensor not released once")


@case("python.object_import.argument_checks", profile="python",
      covers=["PY-OBJECT-IMPORT-1", "PY-OBJECT-IMPORT-3", "PY-OBJECT-IMPORT-4", "PY-OBJECT-IMPORT-16",
              "PY-OBJECT-IMPORT-WITH-STREAM-1", "PY-OBJECT-IMPORT-WITH-STREAM-2", "PY-OBJECT-IMPORT-WITH-STREAM-5"])
def _(ctx):
    py = Py(ctx)
    prod = Prod(lambda n, kw: ValueError("must not be called"))
    out, how = ctypes.c_void_p(SENT), ctypes.c_uint32(0xABCD)
    s = ctx.T.dlpack_helpers_stream()
    for fn, args in (("dlpack_object_import", (None, None, ctypes.byref(out), ctypes.byref(how))),
                     ("dlpack_object_import", (Obj(prod), None, None, ctypes.byref(how))),
                     ("dlpack_object_import_with_stream", (None, None, ctypes.byref(out), None, ctypes.byref(s))),
                     ("dlpack_object_import_with_stream", (Obj(prod), None, None, None, ctypes.byref(s))),
                     ("dlpack_object_import_with_stream", (Obj(prod), None, ctypes.byref(out), None, None))):
        st, exc = py.call(fn, *args)
        ctx.expect(st, "NULL_POINTER", what=f"{fn}")
        no_exc(ctx, exc, fn)
    ctx.check(not prod.calls and out.value == SENT and how.value == 0xABCD, "looked up or written on NULL_POINTER")
    looked = []

    class Watch:
        def __getattribute__(self, name):
            looked.append(name)
            return object.__getattribute__(self, name)

    w = Watch()
    for ws in FNS:
        for reqkw, want in ((dict(copy=3), "INVALID_ARGUMENT"), (dict(copy=-1), "INVALID_ARGUMENT"),
                            (dict(flags=8), "INVALID_ARGUMENT"), (dict(flags=1 << 31), "INVALID_ARGUMENT"),
                            (dict(dl_device=(1, -1)), "INVALID_DEVICE"), (dict(dl_device=(2, -(1 << 31))), "INVALID_DEVICE")):
            st, o, h, exc, sk = imp(ctx, py, w, Req(ctx, **reqkw), ws)
            ctx.expect(st, want, what=str(reqkw))
            no_exc(ctx, exc, str(reqkw))
            ctx.check(o == SENT and h == 0xABCD and sk == (0x7777, 0x5EB7), f"{reqkw}: out-parameters written")
    ctx.check(not looked, f"looked up {looked} before refusing the request")


# -- dlpack_object_import_with_stream: the stream of a __dlpack__ import -----------------------
@case("python.object_import_with_stream.dlpack_path", profile="python",
      covers=["PY-OBJECT-IMPORT-WITH-STREAM-3"])
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    for device in ((1, 0), (2, 0), (3, 1), (13, 0), (10, 0), (11, 0), (4, 0), (14, 0), (8, 0)):
        for stream in (..., None, 1, 2, 5, 0x1234, -1, "bad", 1 << 70):
            prod, p, rec = versioned_producer(ctx, py, device=device)
            st, out, how, exc, sk = imp(ctx, py, prod, Req(ctx, stream=stream), True)
            what = f"tensor on {device}, stream {stream!r}"
            ctx.ok(st, what)
            no_exc(ctx, exc, what)
            ref = ctx.T.dlpack_helpers_stream()
            if stream is ...:
                rst = ctx.f.dlpack_stream_decode(ctx.T.DLDevice(*device), False, 0, 0, ctypes.byref(ref))
            else:
                from cases._py import dev
                rst, rexc = py.call("dlpack_python_stream_decode", Obj(stream), dev(*device), 0, ctypes.byref(ref))
            want = (ref.kind, ref.handle or 0) if rst == 0 else (K.DLPACK_HELPERS_STREAM_NO_SYNC, 0)
            ctx.check(sk == want, f"{what}: stream {sk}, expected {want}")
            ctx.f.dlpack_tensor_delete(ctx.vptr(out))


# -- the exchange-API path ---------------------------------------------------------------------
def table_type(ctx, py, table, dlpack, module=None, name="Published", bases=(object,)):
    ns = {"__dlpack_c_exchange_api__": table.capsule(py), "__dlpack__": dlpack,
          "__dlpack_device__": lambda self: (1, 0)}
    if module:
        ns["__module__"] = module
    return type(name, bases, ns)


class DlpackFrom:
    """A __dlpack__ for a published type: each call exports a fresh fixture tensor on `device`
    (.made: the (pointer, record) pairs, .calls: the keyword dicts)."""

    def __init__(self, ctx, py, device=(1, 0)):
        self.ctx, self.py, self.device, self.made, self.calls = ctx, py, device, [], []
        me = self

        def __dlpack__(self, **kw):
            me.calls.append(kw)
            p, rec = me.ctx.make_versioned(device=me.device)
            me.made.append((p, rec))
            return me.py.capsule(p, True)
        self.fn = __dlpack__

    def last(self):
        return self.made[-1][0] if self.made else None


@case("python.object_import.exchange_api_path", profile="python",
      covers=cov("PY-OBJECT-IMPORT-18", "PY-OBJECT-IMPORT-19", "PY-OBJECT-IMPORT-22", "PY-OBJECT-IMPORT-16"))
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    X, KEEP = K.DLPACK_HELPERS_IMPORT_EXCHANGE_API, K.DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR
    table = Table(ctx, managed_tensor_from_py_object_no_sync=py.FROM_SLOT, current_work_stream=py.CWS_SLOT,
                  managed_tensor_allocator=None, managed_tensor_to_py_object_no_sync=None)
    for ws in FNS:
        # Through the table: the exported tensor as it is, EXCHANGE_API in out_how, no __dlpack__.
        pt, rect = ctx.make_versioned()
        D = DlpackFrom(ctx, py)
        dcalls = D.calls
        T = table_type(ctx, py, table, D.fn)
        o = T()
        py.lib.fx_from_config(0, None, pt, 1)
        st, out, how, exc, sk = imp(ctx, py, o, Req(ctx, flags=X), ws)
        ctx.ok(st, "import through the table")
        no_exc(ctx, exc, "table")
        ctx.check(out == pt and how == K.DLPACK_HELPERS_IMPORTED_EXCHANGE_API and not dcalls,
                  f"through the table: out {'table' if out == pt else 'other'}, how {how}, __dlpack__ calls {len(dcalls)}")
        ctx.check(py.lib.fx_from_calls() == 1, "the export was not called once")
        ctx.f.dlpack_tensor_delete(ctx.vptr(pt))
        # Not asked for, or a request the table cannot express: the table is not called.
        for req in (Req(ctx), Req(ctx, flags=X, stream=None), Req(ctx, flags=X, dl_device=(1, 0)),
                    Req(ctx, flags=X, copy=K.DLPACK_HELPERS_COPY_NEVER), None):
            py.lib.fx_from_config(0, None, pt, 1)
            dcalls.clear()
            st, out, how, exc, sk = imp(ctx, py, o, req, ws)
            ctx.ok(st, "import through __dlpack__")
            ctx.check(py.lib.fx_from_calls() == 0, "a table function was called without IMPORT_EXCHANGE_API or with a request it cannot express")
            ctx.check(out == D.last() and len(dcalls) == 1 and not how & K.DLPACK_HELPERS_IMPORTED_EXCHANGE_API,
                      "not imported through __dlpack__")
            ctx.f.dlpack_tensor_delete(ctx.vptr(out))
        # A failing export falls back to __dlpack__ (its ordinary exception cleared, whatever the mode).
        for flags in (X, X | KEEP):
            for rc, exc_obj, bad, write in ((-1, ValueError("no"), None, 0), (0, None, None, 0),
                                            (0, None, dict(version=(2, 0)), 1), (0, None, dict(version=(1, 1), flags=1 << 9), 1),
                                            (-1, TypeError("t"), None, 0)):
                tensor, recb = ctx.make_versioned(**bad) if bad else (0, None)
                py.lib.fx_from_config(rc, exc_obj, tensor, write)
                dcalls.clear()
                st, out, how, exc, sk = imp(ctx, py, o, Req(ctx, flags=flags), ws)
                what = f"export rc {rc} exc {exc_obj!r} tensor {bool(tensor)} flags {flags}"
                ctx.ok(st, what)
                no_exc(ctx, exc, what)
                ctx.check(out == D.last() and len(dcalls) == 1, f"{what}: no fallback to __dlpack__")
                if tensor:
                    ctx.check(ctx.calls(recb) == 1, f"{what}: refused export released {ctx.calls(recb)} times, not once")
                ctx.f.dlpack_tensor_delete(ctx.vptr(out))
        # A KeyboardInterrupt from the export stays set.
        ki = KeyboardInterrupt("k")
        py.lib.fx_from_config(-1, ki, 0, 0)
        st, out, how, exc, sk = imp(ctx, py, o, Req(ctx, flags=X), ws)
        ctx.expect(st, "PYTHON_ERROR_SET", what="KeyboardInterrupt from the export")
        ctx.check(exc is ki, f"the KeyboardInterrupt was not left set: {exc!r}")
        # A subclass overriding __dlpack__, or an instance holding one: __dlpack__ answers.
        Sub = type("Sub", (T,), {"__dlpack__": D.fn})
        inst = T()
        inst.__dict__["__dlpack__"] = lambda **kw: D.fn(None, **kw)
        for obj, what in ((Sub(), "subclass overriding __dlpack__"), (inst, "instance __dlpack__")):
            py.lib.fx_from_config(0, None, pt, 1)
            dcalls.clear()
            st, out, how, exc, sk = imp(ctx, py, obj, Req(ctx, flags=X), ws)
            ctx.ok(st, what)
            ctx.check(py.lib.fx_from_calls() == 0 and out == D.last(), f"{what}: the table stood in for __dlpack__")
            ctx.f.dlpack_tensor_delete(ctx.vptr(out))
        ctx.check(ctx.calls(rect) == 1, "the table's export not released once")
        ctx.check(all(ctx.calls(r) == 1 for _, r in D.made), "a __dlpack__ export not released once")


@case("python.object_import.exchange_api_framework_rules", profile="python",
      covers=cov("PY-OBJECT-IMPORT-20", "PY-OBJECT-IMPORT-23"))
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    X = K.DLPACK_HELPERS_IMPORT_EXCHANGE_API
    table = Table(ctx, managed_tensor_from_py_object_no_sync=py.FROM_SLOT, current_work_stream=py.CWS_SLOT)
    for module, attr, table_value in (("torch", "requires_grad", False), ("torch.fake", "requires_grad", False),
                                      ("paddle", "stop_gradient", True), ("paddle.base", "stop_gradient", True)):
        D = DlpackFrom(ctx, py)
        state = [table_value]
        T = table_type(ctx, py, table, D.fn, module=module)
        setattr(T, attr, property(lambda self: state[0]))   # defined by the publishing class itself
        o = T()
        # Per-object checks, made on every import of the same type (PY-OBJECT-IMPORT-23).
        for value, via_table in ((table_value, True), (not table_value, False), (1 if table_value else 0, False),
                                 (table_value, True)):
            pt, rect = ctx.make_versioned()
            state[0] = value
            py.lib.fx_from_config(0, None, pt, 1)
            st, out, how, exc, sk = imp(ctx, py, o, Req(ctx, flags=X), False)
            what = f"{module}: {attr} = {value!r}"
            ctx.ok(st, what)
            got_table = out == pt
            ctx.check(got_table == via_table, f"{what}: imported through {'the table' if got_table else '__dlpack__'}")
            ctx.f.dlpack_tensor_delete(ctx.vptr(out))
            if not got_table and py.lib.fx_from_calls() == 0:
                ctx.f.dlpack_tensor_delete(ctx.vptr(pt))
        # A subclass redefining one of the names the producer's __dlpack__ reads.
        name = "is_conj" if module.startswith("torch") else "place"
        Sub = type("Sub", (T,), {name: property(lambda self: False)})
        s = Sub()
        state[0] = table_value
        pt, rect = ctx.make_versioned()
        py.lib.fx_from_config(0, None, pt, 1)
        st, out, how, exc, sk = imp(ctx, py, s, Req(ctx, flags=X), False)
        ctx.ok(st, f"{module} subclass defining {name}")
        ctx.check(out == D.last(), f"{module}: a subclass defining {name} was imported through the table")
        ctx.f.dlpack_tensor_delete(ctx.vptr(out))
        if py.lib.fx_from_calls() == 0:
            ctx.f.dlpack_tensor_delete(ctx.vptr(pt))


@case("python.object_import_with_stream.exchange_api_path", profile="python",
      covers=["PY-OBJECT-IMPORT-WITH-STREAM-4", "PY-OBJECT-IMPORT-WITH-STREAM-2"])
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    X = K.DLPACK_HELPERS_IMPORT_EXCHANGE_API
    table = Table(ctx, managed_tensor_from_py_object_no_sync=py.FROM_SLOT, current_work_stream=py.CWS_SLOT)
    for device, answer, want in (((1, 0), None, (K.DLPACK_HELPERS_STREAM_NONE, 0)),
                                 ((2, 0), 1, (K.DLPACK_HELPERS_STREAM_LEGACY_DEFAULT, 1)),
                                 ((2, 1), 2, (K.DLPACK_HELPERS_STREAM_PER_THREAD_DEFAULT, 2)),
                                 ((13, 0), 0x1234, (K.DLPACK_HELPERS_STREAM_HANDLE, 0x1234)),
                                 ((10, 0), 0x5678, (K.DLPACK_HELPERS_STREAM_HANDLE, 0x5678)),
                                 ((10, 0), 1, (K.DLPACK_HELPERS_STREAM_HANDLE, 1))):
        D = DlpackFrom(ctx, py, device)
        o = table_type(ctx, py, table, D.fn)()
        pt, rect = ctx.make_versioned(device=device)
        py.lib.fx_from_config(0, None, pt, 1)
        py.lib.fx_cws_config(0, None, answer or 0, 1)
        st, out, how, exc, sk = imp(ctx, py, o, Req(ctx, flags=X), True)
        what = f"table export on {device}, current_work_stream -> {answer}"
        ctx.ok(st, what)
        no_exc(ctx, exc, what)
        ctx.check(out == pt and how & K.DLPACK_HELPERS_IMPORTED_EXCHANGE_API, f"{what}: not through the table")
        ncalls = py.lib.fx_cws_calls()
        if device[0] == 1:
            ctx.check(ncalls == 0, f"{what}: current_work_stream called for kDLCPU")
        else:
            ctx.check(ncalls == 1 and (py.lib.fx_cws_last(0), py.lib.fx_cws_last(1)) == device,
                      f"{what}: current_work_stream called {ncalls} times for {(py.lib.fx_cws_last(0), py.lib.fx_cws_last(1))}")
        ctx.check(sk == want, f"{what}: stream {sk}, expected {want}")
        ctx.f.dlpack_tensor_delete(ctx.vptr(pt))
        # The table cannot name the stream: export released once, __dlpack__ answers.
        for rc, e, write in ((0, None, 1), (-1, ValueError("no stream"), 0)):
            pt, rect = ctx.make_versioned(device=(2, 0))
            D2 = DlpackFrom(ctx, py, (2, 0))
            o2 = table_type(ctx, py, table, D2.fn)()
            py.lib.fx_from_config(0, None, pt, 1)
            py.lib.fx_cws_config(rc, e, 0, write)
            st, out, how, exc, sk = imp(ctx, py, o2, Req(ctx, flags=X | K.DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR), True)
            what = f"current_work_stream rc {rc} exc {e!r}"
            ctx.ok(st, what)
            no_exc(ctx, exc, what)
            ctx.check(ctx.calls(rect) == 1, f"{what}: the table's export not released once ({ctx.calls(rect)})")
            ctx.check(out == D2.last() and len(D2.calls) == 1 and not how & K.DLPACK_HELPERS_IMPORTED_EXCHANGE_API,
                      f"{what}: not imported through __dlpack__")
            ctx.check(sk == (K.DLPACK_HELPERS_STREAM_LEGACY_DEFAULT, 1), f"{what}: stream {sk}")
            ctx.f.dlpack_tensor_delete(ctx.vptr(out))


@case("python.object_import.no_python_after_export", profile="python",
      covers=["PY-OBJECT-IMPORT-21"])
def _(ctx):
    # A profiler sees every Python function the import runs; none may run once the table's export
    # (a counting C slot) has returned a tensor. The publisher is a torch-module class whose
    # requires_grad is a Python property, so the per-object check runs Python code.
    py = Py(ctx)
    X = ctx.K.DLPACK_HELPERS_IMPORT_EXCHANGE_API
    table = Table(ctx, managed_tensor_from_py_object_no_sync=py.FROM_SLOT, current_work_stream=py.CWS_SLOT)
    D = DlpackFrom(ctx, py)
    reads = []

    def requires_grad(self):
        reads.append(py.lib.fx_from_calls())
        return False
    T = table_type(ctx, py, table, D.fn, module="torch")
    T.requires_grad = property(requires_grad)
    after = []

    def prof(frame, event, arg):
        if event in ("call", "c_call") and py.lib.fx_from_calls() > 0 and frame.f_code.co_name != "prof":
            after.append((event, frame.f_code.co_name, getattr(arg, "__name__", None)))
    for ws in FNS:
        pt, rec = ctx.make_versioned()
        py.lib.fx_from_config(0, None, pt, 1)
        reads.clear()
        after.clear()
        o = T()
        import sys as _s
        out, how = ctypes.c_void_p(SENT), ctypes.c_uint32(0)
        s = ctx.T.dlpack_helpers_stream()
        req = Req(ctx, flags=X)
        fnaddr = py.fn_address("dlpack_object_import_with_stream" if ws else "dlpack_object_import")
        from cases._py import addr
        args = [addr(Obj(o)), addr(ctypes.byref(req.r)), addr(ctypes.byref(out)), addr(ctypes.byref(how)),
                addr(ctypes.byref(s)) if ws else 0, 0]
        _s.setprofile(prof)
        try:
            st = py.lib.fx_call(fnaddr, None, 0, *args)
        finally:
            _s.setprofile(None)
        exc = py.lib.fx_take_exc()
        ctx.ok(st, "import through the table")
        no_exc(ctx, exc, "import")
        ctx.check(out.value == pt, "not imported through the table")
        ctx.check(reads and all(n == 0 for n in reads), f"requires_grad read after the export (export counts {reads})")
        calls_after = [a for a in after if a[0] == "call"]
        ctx.check(not calls_after, f"Python code ran after the export: {calls_after[:5]}")
        ctx.f.dlpack_tensor_delete(ctx.vptr(pt))
