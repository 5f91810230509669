"""Python profile: capsules (dlpack_capsule_new, dlpack_legacy_capsule_new,
dlpack_capsule_destructor, dlpack_capsule_import, dlpack_capsule_consume,
dlpack_legacy_capsule_consume) and the capsule rules of spec/03-ownership-threads.md
(OWN-CAPSULE-1..3) and OWN-PY-3. Capsules are made by the suite's fixture (fx_py.c) as a
producer makes them, tensors are the guarded, counting, poisoning fixture tensors; every call
goes through fx_call so the status and the Python error indicator it leaves are both seen."""
import ctypes
import sys

from cases._py import Obj, Py, cap_name, cap_pointer, no_exc
from harness.registry import case

U64 = ctypes.c_uint64
SENT = 0x5EB7_1E55_0000_0042


def out_ptr():
    o = ctypes.c_void_p(SENT)
    return o


def check_msg(ctx, what):
    m = ctx.last_error()
    ctx.check(len(m) > 0, f"{what}: empty last-error message")
    m.decode("utf-8")


# -- dlpack_capsule_new / dlpack_legacy_capsule_new --------------------------------------------
NEW = {True: ("dlpack_capsule_new", b"dltensor_versioned", "PY-CAPSULE-NEW"),
       False: ("dlpack_legacy_capsule_new", b"dltensor", "PY-LEGACY-CAPSULE-NEW")}


def make(ctx, versioned, **kw):
    return ctx.make_versioned(**kw) if versioned else ctx.make_legacy(**kw)


def _new_ok(versioned):
    fn, name, pre = NEW[versioned]

    def run(ctx):
        py = Py(ctx)
        # The tensor is made PROT_NONE for the call: reading or writing it faults (NEW-3).
        p, rec = make(ctx, versioned, poison=False)
        size = ctypes.sizeof(ctx.T.DLManagedTensorVersioned if versioned else ctx.T.DLManagedTensor)
        before = ctypes.string_at(p, size)
        from cases._common import protect, PROT_NONE, PROT_RW
        protect(p, size, PROT_NONE)
        out = out_ptr()
        st, exc = py.call(fn, p, ctypes.byref(out))
        protect(p, size, PROT_RW)
        no_exc(ctx, exc, fn)
        ctx.ok(st, fn)
        ctx.check(out.value not in (None, SENT), "no capsule written")
        ctx.check(ctypes.string_at(p, size) == before, "the tensor was modified")
        ctx.check(ctx.calls(rec) == 0, "the deleter was called")
        cap = py.take(out.value)
        ctx.check(type(cap).__name__ == "PyCapsule", f"not a capsule: {type(cap)!r}")
        ctx.check(sys.getrefcount(cap) == 2, f"the capsule has {sys.getrefcount(cap) - 1} references, not 1")
        ctx.check(cap_name(cap) == name, f"capsule name {cap_name(cap)!r}, expected {name!r}")
        ctx.check(cap_pointer(cap) == p, "the capsule's pointer is not the tensor")
        from cases._py import api
        ctx.check(not api.PyCapsule_GetContext(cap), "the capsule has a context")
        ctx.check(api.PyCapsule_GetDestructor(cap) == py.destructor_address(),
                  "the capsule's destructor is not dlpack_capsule_destructor")
        del cap
        ctx.check(ctx.calls(rec) == 1, f"the unconsumed capsule's death ran the deleter {ctx.calls(rec)} times")
    return run


def _new_null(versioned):
    fn, name, pre = NEW[versioned]

    def run(ctx):
        py = Py(ctx)
        p, rec = make(ctx, versioned)
        out = out_ptr()
        st, exc = py.call(fn, None, ctypes.byref(out))
        ctx.expect(st, "NULL_POINTER", what="NULL tensor")
        no_exc(ctx, exc, fn)
        ctx.check(out.value == SENT, "out_capsule written on failure")
        check_msg(ctx, "NULL tensor")
        st, exc = py.call(fn, p, None)
        ctx.expect(st, "NULL_POINTER", what="NULL out_capsule")
        no_exc(ctx, exc, fn)
        ctx.check(ctx.calls(rec) == 0, "the deleter was called")
        check_msg(ctx, "NULL out_capsule")
    return run


def _new_fails(versioned):
    fn, name, pre = NEW[versioned]

    def run(ctx):
        py = Py(ctx)
        p, rec = make(ctx, versioned)
        out = out_ptr()
        st, exc = py.call(fn, p, ctypes.byref(out), fail_alloc=True)
        ctx.expect(st, "PRODUCER_ERROR", what="CPython cannot allocate the capsule")
        no_exc(ctx, exc, fn)
        ctx.check(out.value == SENT, "out_capsule written on failure")
        ctx.check(ctx.calls(rec) == 0, "the deleter was called: the tensor stays the caller's")
        check_msg(ctx, "allocation failure")
        ctx.f.dlpack_tensor_delete(ctx.vptr(p)) if versioned else ctx.f.dlpack_legacy_tensor_delete(ctx.lptr(p))
        ctx.check(ctx.calls(rec) == 1, "the tensor was not left to the caller intact")
    return run


for v in (True, False):
    fn, name, pre = NEW[v]
    short = fn[len("dlpack_"):]
    case(f"python.{short}.capsule", profile="python",
         covers=[f"{pre}-1", f"{pre}-3", "OWN-CAPSULE-3"])(_new_ok(v))
    case(f"python.{short}.null", profile="python", covers=[f"{pre}-4", f"{pre}-7", "OWN-PY-3"])(_new_null(v))
    case(f"python.{short}.cpython_fails", profile="python",
         covers=[f"{pre}-6", f"{pre}-7", "OWN-PY-3"])(_new_fails(v))


# -- dlpack_capsule_destructor -----------------------------------------------------------------
class Unraisable:
    def __enter__(self):
        self.seen, self.old = [], sys.unraisablehook
        sys.unraisablehook = lambda u: self.seen.append((u.exc_type, str(u.exc_value), u.object))
        return self

    def __exit__(self, *a):
        sys.unraisablehook = self.old


@case("python.capsule_destructor.unconsumed_names", profile="python",
      covers=["PY-CAPSULE-DESTRUCTOR-1", "PY-CAPSULE-DESTRUCTOR-2", "OWN-CAPSULE-3"])
def _(ctx):
    py = Py(ctx)
    V = ctx.T.DLManagedTensorVersioned
    # Versioned: only version, manager_ctx and deleter readable; any major.
    for major in (1, 2, 0, 0xFFFFFFFF):
        p, rec = ctx.make_versioned(version=(major, 7), readable=V.flags.offset)
        cap = py.named(p, b"dltensor_versioned", destructor=False)
        with Unraisable() as u:
            st, exc = py.call("dlpack_capsule_destructor", Obj(cap))
        no_exc(ctx, exc, "destructor")
        ctx.check(not u.seen, f"unraisable reported: {u.seen}")
        ctx.check(ctx.calls(rec) == 1, f"major {major}: the deleter ran {ctx.calls(rec)} times")
    p, rec = ctx.make_legacy()
    cap = py.named(p, b"dltensor", destructor=False)
    st, exc = py.call("dlpack_capsule_destructor", Obj(cap))
    no_exc(ctx, exc, "destructor")
    ctx.check(ctx.calls(rec) == 1, f"legacy: the deleter ran {ctx.calls(rec)} times")
    for versioned in (True, False):
        p, rec = make(ctx, versioned, deleter=False)
        cap = py.named(p, b"dltensor_versioned" if versioned else b"dltensor", destructor=False)
        st, exc = py.call("dlpack_capsule_destructor", Obj(cap))
        no_exc(ctx, exc, "destructor")
        ctx.check(ctx.calls(rec) == 0, "a NULL deleter: something was called")


@case("python.capsule_destructor.used_names", profile="python",
      covers=["PY-CAPSULE-DESTRUCTOR-3", "OWN-CAPSULE-3"])
def _(ctx):
    py = Py(ctx)
    guard = ctx.guarded(0)         # the pointer leads to a PROT_NONE page: reading it faults
    for name in (b"used_dltensor", b"used_dltensor_versioned"):
        cap = py.named(guard, name, destructor=False)
        with Unraisable() as u:
            st, exc = py.call("dlpack_capsule_destructor", Obj(cap))
        no_exc(ctx, exc, name.decode())
        ctx.check(not u.seen, f"{name!r}: unraisable reported: {u.seen}")


@case("python.capsule_destructor.other_objects", profile="python",
      covers=["PY-CAPSULE-DESTRUCTOR-4", "PY-CAPSULE-DESTRUCTOR-5"])
def _(ctx):
    py = Py(ctx)
    guard = ctx.guarded(0)
    objs = [(py.named(guard, b"dltensor_used", destructor=False), "dltensor_used"),
            (py.named(guard, b"dlpack_exchange_api", destructor=False), "dlpack_exchange_api"),
            (py.named(guard, None, destructor=False), None),
            (object(), None), (12345, None)]
    for o, name in objs:
        with Unraisable() as u:
            st, exc = py.call("dlpack_capsule_destructor", Obj(o))
        no_exc(ctx, exc, f"destructor on {o!r}")
        ctx.check(len(u.seen) == 1, f"{o!r}: {len(u.seen)} unraisable reports, expected 1")
        t, msg, obj = u.seen[0]
        ctx.check(t is ValueError, f"{o!r}: reported {t!r}, not ValueError")
        ctx.check(obj is not o, f"{o!r}: the dying object was passed to PyErr_WriteUnraisable")
        if name:
            ctx.check(name in msg, f"the ValueError {msg!r} does not name the capsule's name {name!r}")
    # A pending exception is kept, the same object, over a deleter and over the name checks.
    p, rec = ctx.make_versioned()
    for o in (py.named(p, b"dltensor_versioned", destructor=False), object()):
        pending = KeyError("pending")
        with Unraisable():
            st, exc = py.call("dlpack_capsule_destructor", Obj(o), pending=pending)
        ctx.check(exc is pending, f"pending exception not restored as it was: {exc!r}")
    ctx.check(ctx.calls(rec) == 1, "the deleter did not run with an exception pending")


@case("python.capsule_destructor.raising_deleter", profile="python", covers=["PY-CAPSULE-DESTRUCTOR-5"])
def _(ctx):
    # A deleter that raises: its exception is cleared when none was pending; a pending one is
    # the one left set afterwards, the same object.
    py = Py(ctx)
    py.lib.fx_raising_deleter_address.restype = ctypes.c_void_p
    py.lib.fx_raising_deleter_calls.restype = ctypes.c_long
    for pending in (None, KeyError("pending")):
        p, rec = ctx.make_versioned(poison=False)
        ctx.versioned(p).deleter = py.lib.fx_raising_deleter_address()
        before = py.lib.fx_raising_deleter_calls()
        cap = py.named(p, b"dltensor_versioned", destructor=False)
        with Unraisable():
            st, exc = py.call("dlpack_capsule_destructor", Obj(cap), pending=pending)
        ctx.check(py.lib.fx_raising_deleter_calls() == before + 1, "the raising deleter did not run once")
        ctx.check(exc is pending, f"pending {pending!r}: the error indicator is {exc!r} after a raising deleter")


@case("python.capsule_destructor.null", profile="python", covers=["PY-CAPSULE-DESTRUCTOR-6"])
def _(ctx):
    py = Py(ctx)
    with Unraisable() as u:
        st, exc = py.call("dlpack_capsule_destructor", None)
    no_exc(ctx, exc, "destructor(NULL)")
    ctx.check(not u.seen, f"unraisable reported for NULL: {u.seen}")
    pending = KeyError("x")
    st, exc = py.call("dlpack_capsule_destructor", None, pending=pending)
    ctx.check(exc is pending, "destructor(NULL) changed the pending exception")


@case("python.capsule_destructor.on_death", profile="python",
      covers=["PY-CAPSULE-DESTRUCTOR-1", "PY-CAPSULE-DESTRUCTOR-5", "OWN-CAPSULE-3"])
def _(ctx):
    # The capsule dies while an exception propagates (CPython calls the destructor).
    py = Py(ctx)
    p, rec = ctx.make_versioned()
    out = out_ptr()
    st, exc = py.call("dlpack_capsule_new", p, ctypes.byref(out))
    ctx.ok(st)
    pending = RuntimeError("propagating")
    left = py.drop(out.value, pending)
    ctx.check(left is pending, f"after the capsule's death the error indicator is {left!r}")
    ctx.check(ctx.calls(rec) == 1, f"the deleter ran {ctx.calls(rec)} times")


# -- dlpack_capsule_import / dlpack_capsule_consume / dlpack_legacy_capsule_consume --------------
def imp(py, fnname, cap, flags, out, how):
    if fnname == "dlpack_capsule_import":
        return py.call(fnname, Obj(cap), flags, out, how)
    return py.call(fnname, Obj(cap), out)


CONSUMERS = ("dlpack_capsule_import", "dlpack_capsule_consume")
IMPORT_COV = {"dlpack_capsule_import": "PY-CAPSULE-IMPORT", "dlpack_capsule_consume": "PY-CAPSULE-CONSUME"}


def refused_untouched(ctx, py, fnname, obj, expect, what):
    out, how = out_ptr(), ctypes.c_uint32(0xABCD)
    name = cap_name(obj) if type(obj).__name__ == "PyCapsule" else None
    st, exc = (py.call(fnname, Obj(obj), 0, ctypes.byref(out), ctypes.byref(how))
               if fnname == "dlpack_capsule_import" else py.call(fnname, Obj(obj), ctypes.byref(out)))
    ctx.expect(st, expect, what=f"{fnname}: {what}")
    no_exc(ctx, exc, f"{fnname}: {what}")
    ctx.check(out.value == SENT and how.value == 0xABCD, f"{fnname}: {what}: out-parameter written")
    if name is not None or type(obj).__name__ == "PyCapsule":
        ctx.check(cap_name(obj) == name, f"{fnname}: {what}: capsule renamed to {cap_name(obj)!r}")
    check_msg(ctx, what)


@case("python.capsule_import.refusals", profile="python",
      covers=["PY-CAPSULE-IMPORT-4", "PY-CAPSULE-IMPORT-5", "PY-CAPSULE-IMPORT-6", "PY-CAPSULE-IMPORT-14",
              "PY-CAPSULE-IMPORT-16", "PY-CAPSULE-CONSUME-1", "PY-CAPSULE-CONSUME-3",
              "PY-LEGACY-CAPSULE-CONSUME-3", "PY-LEGACY-CAPSULE-CONSUME-4", "PY-LEGACY-CAPSULE-CONSUME-5",
              "PY-LEGACY-CAPSULE-CONSUME-6", "PY-LEGACY-CAPSULE-CONSUME-9", "OWN-CAPSULE-2", "OWN-PY-3"])
def _(ctx):
    py = Py(ctx)
    guard = ctx.guarded(0)    # a capsule's pointer that must not be read
    rows = [
        (py.named(guard, b"used_dltensor", False), "CAPSULE_CONSUMED", "CAPSULE_CONSUMED", "used_dltensor"),
        (py.named(guard, b"used_dltensor_versioned", False), "CAPSULE_CONSUMED", "CAPSULE_CONSUMED", "used_versioned"),
        (py.named(guard, b"dltensor_used", False), "CAPSULE_NAME", "CAPSULE_NAME", "dltensor_used"),
        (py.named(guard, b"dlpack_exchange_api", False), "CAPSULE_NAME", "CAPSULE_NAME", "exchange name"),
        (py.named(guard, None, False), "CAPSULE_NAME", "CAPSULE_NAME", "NULL name"),
        (object(), "NOT_A_CAPSULE", "NOT_A_CAPSULE", "object()"),
        (b"dltensor", "NOT_A_CAPSULE", "NOT_A_CAPSULE", "bytes"),
        (None, "NOT_A_CAPSULE", "NOT_A_CAPSULE", "None"),
    ]
    for obj, want, want_legacy, what in rows:
        for fnname in CONSUMERS:
            refused_untouched(ctx, py, fnname, obj, want, what)
        refused_untouched(ctx, py, "dlpack_legacy_capsule_consume", obj, want_legacy, what)
    # A versioned capsule is not the legacy consumer's: refused untouched, pointer not read.
    cap = py.named(guard, b"dltensor_versioned", False)
    refused_untouched(ctx, py, "dlpack_legacy_capsule_consume", cap, "CAPSULE_NAME", "versioned capsule")


@case("python.capsule_import.null_and_flags", profile="python",
      covers=["PY-CAPSULE-IMPORT-1", "PY-CAPSULE-IMPORT-3", "PY-CAPSULE-CONSUME-1",
              "PY-LEGACY-CAPSULE-CONSUME-1", "PY-CAPSULE-IMPORT-14"])
def _(ctx):
    py = Py(ctx)
    p, rec = ctx.make_versioned()
    cap = py.capsule(p, True)
    out, how = out_ptr(), ctypes.c_uint32(7)
    for fnname, args in (("dlpack_capsule_import", (None, 0, ctypes.byref(out), ctypes.byref(how))),
                         ("dlpack_capsule_import", (Obj(cap), 0, None, ctypes.byref(how))),
                         ("dlpack_capsule_import", (Obj(cap), 0xFF00, None, None)),
                         ("dlpack_capsule_consume", (None, ctypes.byref(out))),
                         ("dlpack_capsule_consume", (Obj(cap), None)),
                         ("dlpack_legacy_capsule_consume", (None, ctypes.byref(out))),
                         ("dlpack_legacy_capsule_consume", (Obj(cap), None))):
        st, exc = py.call(fnname, *args)
        ctx.expect(st, "NULL_POINTER", what=fnname)
        no_exc(ctx, exc, fnname)
        ctx.check(out.value == SENT and how.value == 7, f"{fnname}: out-parameter written")
        ctx.check(cap_name(cap) == b"dltensor_versioned", f"{fnname}: capsule renamed")
    K = ctx.K
    allowed = K.DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE | K.DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR
    for bit in range(32):
        if (1 << bit) & allowed:
            continue
        st, exc = py.call("dlpack_capsule_import", Obj(cap), (1 << bit) | allowed, ctypes.byref(out), ctypes.byref(how))
        ctx.expect(st, "INVALID_ARGUMENT", what=f"flags bit {bit}")
        no_exc(ctx, exc, "flags")
        ctx.check(out.value == SENT and how.value == 7, "out-parameter written")
        ctx.check(cap_name(cap) == b"dltensor_versioned", f"flags bit {bit}: capsule renamed")
    ctx.check(ctx.calls(rec) == 0, "the tensor was released")
    del cap, args
    ctx.check(ctx.calls(rec) == 1, "the capsule no longer owns its tensor")


@case("python.capsule_import.versioned_ok", profile="python",
      covers=["PY-CAPSULE-IMPORT-7", "PY-CAPSULE-IMPORT-11", "PY-CAPSULE-IMPORT-14", "PY-CAPSULE-CONSUME-1",
              "PY-CAPSULE-CONSUME-2", "OWN-CAPSULE-1", "OWN-CAPSULE-3"])
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    V = ctx.T.DLManagedTensorVersioned
    for fnname in CONSUMERS:
        for minor, flags in ((3, 0), (3, 7), (0, 3), (4, 1 << 40), (9, (1 << 64) - 1)):
            for fl in ((0, K.DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE) if fnname == "dlpack_capsule_import" else (0,)):
                p, rec = ctx.make_versioned(version=(1, minor), flags=flags)
                before = ctypes.string_at(p, ctypes.sizeof(V))
                cap = py.capsule(p, True)
                out, how = out_ptr(), ctypes.c_uint32(0xABCD)
                st, exc = imp(py, fnname, cap, fl, ctypes.byref(out), ctypes.byref(how))
                what = f"{fnname} 1.{minor} flags {flags:#x}"
                ctx.ok(st, what)
                no_exc(ctx, exc, what)
                ctx.check(out.value == p, f"{what}: not the producer's tensor")
                if fnname == "dlpack_capsule_import":
                    ctx.check(how.value == 0, f"{what}: out_how {how.value}, expected 0")
                ctx.check(ctypes.string_at(p, ctypes.sizeof(V)) == before, f"{what}: the tensor was modified")
                ctx.check(cap_name(cap) == b"used_dltensor_versioned", f"{what}: capsule named {cap_name(cap)!r}")
                del cap
                ctx.check(ctx.calls(rec) == 0, f"{what}: the consumed capsule released the tensor")
                ctx.f.dlpack_tensor_delete(ctx.vptr(p))
                ctx.check(ctx.calls(rec) == 1, f"{what}: the deleter ran {ctx.calls(rec)} times")


@case("python.capsule_import.versioned_refused", profile="python",
      covers=["PY-CAPSULE-IMPORT-9", "PY-CAPSULE-IMPORT-10", "PY-CAPSULE-IMPORT-14", "PY-CAPSULE-CONSUME-1",
              "OWN-CAPSULE-1", "OWN-CAPSULE-2", "PY-CAPSULE-IMPORT-16"])
def _(ctx):
    py = Py(ctx)
    V = ctx.T.DLManagedTensorVersioned
    rows = []
    for major in (0, 2, 0xFFFFFFFF):
        rows.append(("major", dict(version=(major, 3), readable=V.flags.offset), "UNSUPPORTED_VERSION"))
    for minor, bad in ((0, 1 << 2), (0, 1 << 5), (1, 1 << 3), (3, 1 << 3), (3, 1 << 63), (2, 1 << 10)):
        rows.append((f"1.{minor} flags {bad:#x}", dict(version=(1, minor), flags=bad | 1), "INVALID_FLAGS"))
    for fnname in CONSUMERS:
        for what, kw, want in rows:
            p, rec = ctx.make_versioned(**kw)
            cap = py.capsule(p, True)
            out, how = out_ptr(), ctypes.c_uint32(0xABCD)
            st, exc = imp(py, fnname, cap, 0, ctypes.byref(out), ctypes.byref(how))
            ctx.expect(st, want, what=f"{fnname}: {what}")
            no_exc(ctx, exc, what)
            ctx.check(out.value == SENT and how.value == 0xABCD, f"{what}: out-parameter written")
            ctx.check(ctx.calls(rec) == 1, f"{fnname}: {what}: the deleter ran {ctx.calls(rec)} times, not once")
            ctx.check(cap_name(cap) == b"used_dltensor_versioned",
                      f"{what}: the capsule was not renamed before the failing step ({cap_name(cap)!r})")
            check_msg(ctx, what)
            del cap
            ctx.check(ctx.calls(rec) == 1, f"{what}: released again by the capsule")


@case("python.capsule_import.untouched_checks_come_first", profile="python",
      covers=["PY-CAPSULE-IMPORT-3", "PY-CAPSULE-IMPORT-9", "PY-CAPSULE-IMPORT-10", "PY-CAPSULE-IMPORT-14"])
def _(ctx):
    # Unknown import flags together with a tensor the call would release (another major, or
    # undefined tensor flags): the refusal that leaves the capsule untouched is reported, and the
    # capsule still owns its tensor.
    py = Py(ctx)
    V = ctx.T.DLManagedTensorVersioned
    for what, kw in (("major 2", dict(version=(2, 0), readable=V.flags.offset)),
                     ("1.0 flags 0x4", dict(version=(1, 0), flags=1 << 2))):
        p, rec = ctx.make_versioned(**kw)
        cap = py.capsule(p, True)
        out, how = out_ptr(), ctypes.c_uint32(0xABCD)
        st, exc = imp(py, "dlpack_capsule_import", cap, 1 << 7, ctypes.byref(out), ctypes.byref(how))
        ctx.expect(st, "INVALID_ARGUMENT", what=f"{what}, import flags 0x80")
        no_exc(ctx, exc, what)
        ctx.check(ctx.calls(rec) == 0, f"{what}: the deleter ran although the capsule was refused untouched")
        ctx.check(cap_name(cap) == b"dltensor_versioned", f"{what}: the capsule was renamed ({cap_name(cap)!r})")
        ctx.check(out.value == SENT and how.value == 0xABCD, f"{what}: out-parameter written")
        del cap
        ctx.check(ctx.calls(rec) == 1, f"{what}: the capsule's destructor did not release the tensor once")
    # Undefined tensor flags with a NULL deleter: refused, nothing called.
    p, rec = ctx.make_versioned(version=(1, 0), flags=1 << 2)
    raw = ctypes.cast(ctx.vptr(p), ctypes.POINTER(V))
    ctypes.memset(ctypes.addressof(raw.contents) + V.deleter.offset, 0, ctypes.sizeof(ctypes.c_void_p))
    cap = py.capsule(p, True)
    out, how = out_ptr(), ctypes.c_uint32(0xABCD)
    st, exc = imp(py, "dlpack_capsule_import", cap, 0, ctypes.byref(out), ctypes.byref(how))
    ctx.expect(st, "INVALID_FLAGS", what="1.0 flags 0x4, NULL deleter")
    no_exc(ctx, exc, "NULL deleter")
    ctx.check(cap_name(cap) == b"used_dltensor_versioned", f"NULL deleter: the capsule was not renamed ({cap_name(cap)!r})")


def _legacy_strides(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= s
    return list(reversed(st))


@case("python.capsule_import.legacy_converted", profile="python",
      covers=["PY-CAPSULE-IMPORT-7", "PY-CAPSULE-IMPORT-12", "PY-CAPSULE-IMPORT-14", "PY-CAPSULE-CONSUME-1",
              "PY-CAPSULE-CONSUME-2", "OWN-CAPSULE-1"])
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    for fnname in CONSUMERS:
        for fl in ((0, K.DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE) if fnname == "dlpack_capsule_import" else (0,)):
            for shape, strides in (((2, 3), None), ((4, 5), (1, 4)), ((), None)):
                p, rec = ctx.make_legacy(shape=shape, strides=strides)
                cap = py.capsule(p, False)
                out, how = out_ptr(), ctypes.c_uint32(0xABCD)
                st, exc = imp(py, fnname, cap, fl, ctypes.byref(out), ctypes.byref(how))
                what = f"{fnname} legacy {shape} flags {fl}"
                ctx.ok(st, what)
                no_exc(ctx, exc, what)
                ctx.check(cap_name(cap) == b"used_dltensor", f"{what}: capsule named {cap_name(cap)!r}")
                ctx.check(out.value not in (SENT, p, None), f"{what}: the legacy struct itself returned")
                if fnname == "dlpack_capsule_import":
                    ctx.check(how.value == K.DLPACK_HELPERS_IMPORTED_LEGACY, f"{what}: out_how {how.value}")
                t = ctx.versioned(out.value)
                L = ctx.T.DLManagedTensor.from_address(p)
                ctx.check((t.version.major, t.version.minor) == (1, 3), f"{what}: version {t.version.major}.{t.version.minor}")
                ro = 0 if fl else 1
                ctx.check(t.flags == ro, f"{what}: flags {t.flags:#x}, expected {ro:#x}")
                d = t.dl_tensor
                ctx.check(d.data == L.dl_tensor.data and d.ndim == len(shape), f"{what}: data/ndim differ")
                got_shape = [d.shape[i] for i in range(d.ndim)]
                ctx.check(got_shape == list(shape), f"{what}: shape {got_shape}")
                if shape:
                    want = list(strides) if strides else _legacy_strides(shape)
                    got = [d.strides[i] for i in range(d.ndim)] if d.strides else None
                    ctx.check(got == want, f"{what}: strides {got}, expected {want}")
                del cap
                ctx.check(ctx.calls(rec) == 0, f"{what}: the legacy tensor was released early")
                ctx.f.dlpack_tensor_delete(ctx.vptr(out.value))
                ctx.check(ctx.calls(rec) == 1, f"{what}: the legacy deleter ran {ctx.calls(rec)} times")


@case("python.capsule_import.legacy_refused", profile="python",
      covers=["PY-CAPSULE-IMPORT-13", "PY-CAPSULE-IMPORT-14", "PY-CAPSULE-CONSUME-1", "OWN-CAPSULE-2"])
def _(ctx):
    py = Py(ctx)
    rows = (("ndim -1", dict(shape=(2,), ndim=-1), "INVALID_NDIM"),
            ("NULL shape", dict(shape=None, ndim=2), "NULL_SHAPE"),
            ("negative extent", dict(shape=(2, -1)), "INVALID_SHAPE"),
            ("lanes 0", dict(dtype=(2, 32, 0)), "INVALID_DTYPE"),
            ("device id -1", dict(device=(1, -1)), "INVALID_DEVICE"),
            ("overflowing extents", dict(shape=(1 << 62, 1 << 62), data=0x1000), "OVERFLOW"),
            ("NULL data", dict(shape=(2, 3), data=0), "NULL_DATA"))
    for fnname in CONSUMERS:
        for what, kw, want in rows:
            if kw.get("data") == 0:
                p, rec = ctx.make_legacy(**{k: v for k, v in kw.items() if k != "data"})
                ctx.T.DLManagedTensor.from_address(p).dl_tensor.data = None
            else:
                p, rec = ctx.make_legacy(**kw)
            cap = py.capsule(p, False)
            out, how = out_ptr(), ctypes.c_uint32(0xABCD)
            st, exc = imp(py, fnname, cap, 0, ctypes.byref(out), ctypes.byref(how))
            ctx.expect(st, want, what=f"{fnname}: {what}")
            no_exc(ctx, exc, what)
            ctx.check(out.value == SENT and how.value == 0xABCD, f"{what}: out-parameter written")
            ctx.check(ctx.calls(rec) == 1, f"{fnname}: {what}: the legacy deleter ran {ctx.calls(rec)} times")
            ctx.check(cap_name(cap) == b"used_dltensor", f"{what}: capsule named {cap_name(cap)!r}")
            check_msg(ctx, what)
            del cap
            ctx.check(ctx.calls(rec) == 1, f"{what}: released again")


@case("python.legacy_capsule_consume.takes_pointer", profile="python",
      covers=["PY-LEGACY-CAPSULE-CONSUME-7", "OWN-CAPSULE-1", "OWN-CAPSULE-3"])
def _(ctx):
    py = Py(ctx)
    L = ctx.T.DLManagedTensor
    # An invalid legacy tensor (ndim -1, NULL shape): not read, validated or converted.
    p, rec = ctx.make_legacy(shape=None, ndim=-1)
    before = ctypes.string_at(p, ctypes.sizeof(L))
    cap = py.capsule(p, False)
    out = out_ptr()
    st, exc = py.call("dlpack_legacy_capsule_consume", Obj(cap), ctypes.byref(out))
    ctx.ok(st)
    no_exc(ctx, exc, "legacy consume")
    ctx.check(out.value == p, "the pointer was not written unchanged")
    ctx.check(cap_name(cap) == b"used_dltensor", f"capsule named {cap_name(cap)!r}")
    ctx.check(ctypes.string_at(p, ctypes.sizeof(L)) == before, "the tensor was modified")
    del cap
    ctx.check(ctx.calls(rec) == 0, "the tensor was released (by the function or the used capsule)")
    ctx.f.dlpack_legacy_tensor_delete(ctx.lptr(p))
    ctx.check(ctx.calls(rec) == 1, "the deleter did not run once")


# -- a process without Python, then CPython loaded later ---------------------------------------
@case("python.no_python_in_process", profile="python",
      covers=["PY-CAPSULE-NEW-5", "PY-LEGACY-CAPSULE-NEW-5", "PY-CAPSULE-NEW-VIEW-7",
              "PY-CAPSULE-NEW-VIEW-VALIDATED-8", "PY-CAPSULE-DESTRUCTOR-7", "PY-CAPSULE-IMPORT-2",
              "PY-LEGACY-CAPSULE-CONSUME-2", "PY-OBJECT-IMPORT-2", "PY-OBJECT-QUERY-DEVICE-3",
              "PY-PYTHON-STREAM-DECODE-3", "PY-STATUS-PYTHON-EXCEPTION-4", "PY-CAPSULE-CONSUME-1",
              "PY-OBJECT-GET-DEVICE-1"])
def _(ctx):
    import os
    import subprocess
    import sysconfig
    from cases.core_ownership import clean_env, program
    libdir, so = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    libpy = os.path.join(libdir or "", so or "")
    if not (libdir and so and os.path.exists(libpy)):
        ctx.skip("no shared libpython to load later")
    exe = program(ctx, "fx_nopython_py")
    env = clean_env()
    env["PYTHONHOME"] = sys.base_prefix
    p = subprocess.run([str(exe), os.path.abspath(ctx.lib_path), libpy], capture_output=True, text=True,
                       timeout=20, env=env)
    ctx.check(p.returncode == 0, f"without Python, then with it loaded later (exit {p.returncode}): "
                                 f"{p.stdout.strip()} {p.stderr.strip()[-300:]}")
