"""Python profile: nothing unchecked is handed over (issue 34). A versioned capsule's tensor is
validated (PY-CAPSULE-IMPORT-19), the exchange table's export too (PY-OBJECT-IMPORT-22), and the
answer of __dlpack__ is checked against the request (PY-OBJECT-IMPORT-25); __dlpack_device__ is
not asked (PY-OBJECT-IMPORT-26)."""
import ctypes

from cases._py import Obj, Py, Table, cap_name, no_exc
from cases.python_object_import import (FNS, SENT, DlpackFrom, Prod, Req, imp, table_type,
                                        versioned_producer)
from harness.registry import case

# (what, make_versioned arguments, the status dlpack_tensor_validate gives)
INVALID = [
    ("ndim_negative", dict(shape=None, ndim=-1), "INVALID_NDIM"),
    ("null_shape", dict(shape=None, ndim=2), "NULL_SHAPE"),
    ("negative_extent", dict(shape=(2, -3)), "INVALID_SHAPE"),
    ("dtype_code_99", dict(dtype=(99, 32, 1)), "INVALID_DTYPE"),
    ("lanes_zero", dict(dtype=(2, 32, 0)), "INVALID_DTYPE"),
    ("device_id_negative", dict(device=(1, -1)), "INVALID_DEVICE"),
    ("null_data_with_elements", dict(data=0), "NULL_DATA"),
    ("byte_offset_past_int64", dict(byte_offset=1 << 63), "OVERFLOW"),
]


def capsule_import(ctx, py, cap, flags=0):
    out, how = ctypes.c_void_p(SENT), ctypes.c_uint32(0xABCD)
    st, exc = py.call("dlpack_capsule_import", Obj(cap), flags, ctypes.byref(out), ctypes.byref(how))
    return st, out.value, how.value, exc


@case("python.capsule_import.versioned_validated", profile="python",
      covers=["PY-CAPSULE-IMPORT-19", "PY-CAPSULE-IMPORT-11", "PY-OBJECT-IMPORT-11"])
def _(ctx):
    py = Py(ctx)
    for what, kw, status in INVALID:
        for minor in (3, 0):
            p, rec = ctx.make_versioned(version=(1, minor), **kw)
            cap = py.capsule(p, True)
            st, out, how, exc = capsule_import(ctx, py, cap)
            w = f"{what} (1.{minor})"
            ctx.expect(st, status, what=w)
            no_exc(ctx, exc, w)
            ctx.check(out == SENT and how == 0xABCD, f"{w}: an out-parameter was written on failure")
            ctx.check(cap_name(cap) == b"used_dltensor_versioned", f"{w}: the capsule was not consumed")
            ctx.check(ctx.calls(rec) == 1, f"{w}: the refused tensor was released {ctx.calls(rec)} times, not once")
            del cap
            ctx.check(ctx.calls(rec) == 1, f"{w}: released again when the capsule died")
            # The same tensor through __dlpack__ (dlpack_object_import): the same answer.
            for ws in FNS:
                p, rec = ctx.make_versioned(version=(1, minor), **kw)
                prod = Prod(lambda n, k, p=p: py.capsule(p, True))
                st, out, how, exc, _ = imp(ctx, py, prod, None, ws)
                ctx.expect(st, status, what=f"{w} through __dlpack__")
                ctx.check(out == SENT, f"{w} through __dlpack__: out written on failure")
                ctx.check(ctx.calls(rec) == 1, f"{w} through __dlpack__: released {ctx.calls(rec)} times")
    # What the rules accept goes through untouched: NULL strides (lenient), an empty tensor with
    # NULL data, an unassigned device type (consumer rule), a 0-d tensor.
    for what, kw in (("null_strides", dict(shape=(2, 3))), ("empty_null_data", dict(shape=(0, 3), data=0)),
                     ("unassigned_device_type", dict(device=(12345, 0))), ("scalar", dict(shape=()))):
        p, rec = ctx.make_versioned(**kw)
        before = ctypes.string_at(p, ctypes.sizeof(ctx.T.DLManagedTensorVersioned))
        st, out, how, exc = capsule_import(ctx, py, py.capsule(p, True))
        ctx.ok(st, what)
        ctx.check(out == p and how == 0, f"{what}: not the producer's tensor itself")
        ctx.check(ctypes.string_at(p, len(before)) == before, f"{what}: the tensor was modified")
        ctx.check(ctx.calls(rec) == 0, f"{what}: released on success")
        ctx.f.dlpack_tensor_delete(ctx.vptr(p))


@case("python.object_import.table_export_validated", profile="python",
      covers=["PY-OBJECT-IMPORT-22"])
def _(ctx):
    py = Py(ctx)
    X = ctx.K.DLPACK_HELPERS_IMPORT_EXCHANGE_API
    table = Table(ctx, managed_tensor_from_py_object_no_sync=py.FROM_SLOT, current_work_stream=py.CWS_SLOT,
                  managed_tensor_allocator=None, managed_tensor_to_py_object_no_sync=None)
    D = DlpackFrom(ctx, py)
    T = table_type(ctx, py, table, D.fn)
    o = T()
    for ws in FNS:
        for what, kw, status in INVALID:
            pt, rect = ctx.make_versioned(**kw)
            py.lib.fx_from_config(0, None, pt, 1)
            D.calls.clear()
            st, out, how, exc, _ = imp(ctx, py, o, Req(ctx, flags=X), ws)
            w = f"table export {what}"
            ctx.ok(st, w)  # __dlpack__ answers instead
            no_exc(ctx, exc, w)
            ctx.check(py.lib.fx_from_calls() == 1, f"{w}: the export was not asked")
            ctx.check(ctx.calls(rect) == 1, f"{w}: the refused export was released {ctx.calls(rect)} times, not once")
            ctx.check(out == D.last() and len(D.calls) == 1 and not how & ctx.K.DLPACK_HELPERS_IMPORTED_EXCHANGE_API,
                      f"{w}: the invalid tensor was handed over instead of __dlpack__'s answer")
            ctx.f.dlpack_tensor_delete(ctx.vptr(out))
    ctx.check(all(ctx.calls(r) == 1 for _, r in D.made), "a __dlpack__ export not released once")


@case("python.object_import.answer_checked_against_request", profile="python",
      covers=["PY-OBJECT-IMPORT-25"])
def _(ctx):
    py = Py(ctx)
    K = ctx.K
    NEVER, ALWAYS = K.DLPACK_HELPERS_COPY_NEVER, K.DLPACK_HELPERS_COPY_ALWAYS
    COPIED = K.DLPACK_FLAG_BITMASK_IS_COPIED
    rows = [  # (tensor device, flags, request, expected)
        ((1, 0), 0, dict(dl_device=(2, 0)), "UNSUPPORTED_DEVICE"),
        ((1, 0), 0, dict(dl_device=(1, 1)), "UNSUPPORTED_DEVICE"),
        ((2, 1), 0, dict(dl_device=(2, 0)), "UNSUPPORTED_DEVICE"),
        ((2, 1), 0, dict(dl_device=(2, 1)), "OK"),
        ((1, 0), 0, dict(dl_device=(1, 0)), "OK"),
        ((1, 0), COPIED, dict(copy=NEVER), "COPY_FORBIDDEN"),
        ((1, 0), COPIED, dict(copy=ALWAYS), "OK"),
        ((1, 0), COPIED, dict(), "OK"),
        ((1, 0), 0, dict(copy=NEVER), "OK"),
        ((1, 0), COPIED, dict(copy=NEVER, dl_device=(1, 0)), "COPY_FORBIDDEN"),
    ]
    for ws in FNS:
        for dev, flags, req, want in rows:
            prod, p, rec = versioned_producer(ctx, py, device=dev, flags=flags)
            st, out, how, exc, _ = imp(ctx, py, prod, Req(ctx, **req), ws)
            w = f"tensor on {dev} flags {flags}, request {req}{' (with_stream)' if ws else ''}"
            ctx.expect(st, want, what=w)
            no_exc(ctx, exc, w)
            if want == "OK":
                ctx.check(out == p, f"{w}: not the producer's tensor")
                ctx.f.dlpack_tensor_delete(ctx.vptr(p))
            else:
                ctx.check(out == SENT, f"{w}: out written on failure")
            ctx.check(ctx.calls(rec) == 1, f"{w}: released {ctx.calls(rec)} times, not once")


@case("python.object_import.device_method_not_asked", profile="python",
      covers=["PY-OBJECT-IMPORT-26"])
def _(ctx):
    py = Py(ctx)
    asked = []

    class Liar(Prod):
        def __dlpack_device__(self):
            asked.append(1)
            return (2, 0)  # disagrees with the tensor (cuvs PR #2239's hard-coded id)

    for ws in FNS:
        for req in (None, Req(ctx), Req(ctx, stream=None)):
            p, rec = ctx.make_versioned(device=(1, 0))
            prod = Liar(lambda n, k, p=p: py.capsule(p, True))
            st, out, how, exc, _ = imp(ctx, py, prod, req, ws)
            ctx.ok(st, "a producer whose __dlpack_device__ disagrees")
            ctx.check(out == p, "not the tensor __dlpack__ gave")
            ctx.f.dlpack_tensor_delete(ctx.vptr(p))
    ctx.check(not asked, f"__dlpack_device__ was called {len(asked)} times")
