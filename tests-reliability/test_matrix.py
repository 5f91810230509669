"""The bad-input matrix over the whole C API, generated from include/dlpack_helpers.h.

For every exported function (header.functions()): its baseline call (baselines.py), then the
baseline with NULL in each pointer parameter, then each scalar parameter replaced by each of its
type's out-of-range, zero and maximum values (header.bad_values), then the VARIANTS (values inside
structs, sizes). Every call must:
- return a status its doc comment names (never PANIC, never an undocumented one), with a
  non-empty message naming a real status when it fails;
- for NULL in a required pointer: exactly NULL_POINTER, with the parameter's name in the message;
- leave every out-parameter untouched when it fails (filled with 0xA5 before the call), except
  the length a BUFFER_TOO_SMALL failure writes to `out_len` (the length the caller needs);
- for value functions: return a documented value, never fail, never touch the last error;
- for void functions: do the documented nothing (no crash, last error untouched);
- release every managed tensor it was given exactly once, when its doc says it takes ownership.
"""
from __future__ import annotations

import ctypes
import os

import pytest

import cabi
from baselines import BASELINES, VARIANTS, Ctx, PyObj
from header import DLDevice, DLPackVersion, bad_values, functions, status_codes

FUNCS = functions()
CODES = status_codes()
NAMES = {v: k for k, v in CODES.items()}
LIB = cabi.load(cabi.library_path(), FUNCS)
CTX = Ctx(LIB, CODES)
COUNT = {"calls": 0}

# Documented values of value functions, by return type.
STRINGS = ("dlpack_last_error_message", "dlpack_status_string", "dlpack_status_python_exception")
HOST_ACCESS = {0, 1, 2}


def _c_arg(f, p, v, keep):
    if isinstance(v, PyObj):
        keep.append(v.obj)
        return id(v.obj)
    if p.is_pointer:
        if v is None or isinstance(v, int):
            return v
        keep.append(v)
        if isinstance(v, ctypes._CFuncPtr):  # a function pointer is its own value
            return ctypes.cast(v, ctypes.c_void_p).value
        return ctypes.addressof(v)
    return v


def _outs(f, args):
    return {p.name: args[p.name] for p in f.params if p.is_out and args.get(p.name) not in (None, 0)
            and not isinstance(args[p.name], (int, PyObj))}


def _fill(outs, inout):
    """Fill pure out-parameters with 0xA5; return every out-parameter's bytes before the call."""
    for name, o in outs.items():
        if name not in inout:
            ctypes.memset(ctypes.addressof(o), 0xA5, ctypes.sizeof(o))
    return {name: ctypes.string_at(ctypes.addressof(o), ctypes.sizeof(o)) for name, o in outs.items()}


def _untouched(o, before):
    return ctypes.string_at(ctypes.addressof(o), ctypes.sizeof(o)) == before


def _mark_error():
    """Give this thread a known last error, to see whether a call touches it."""
    assert LIB.dlpack_version_check(DLPackVersion(77, 7), None) == CODES["UNSUPPORTED_VERSION"]
    return cabi.message(LIB)


def call(f, case, what):
    """Call `f` with the case's arguments and check the common contract; returns the status."""
    keep: list = []
    args = case.args
    outs = _outs(f, args)
    before = _fill(outs, case.inout)
    err = args.get("err")
    if isinstance(err, cabi.ErrorObject):
        err._before = ctypes.string_at(ctypes.addressof(err), ctypes.sizeof(err))
    marker = _mark_error()
    c_args = [_c_arg(f, p, args[p.name], keep) for p in f.params]
    COUNT["calls"] += 1
    r = getattr(LIB, f.name)(*c_args)
    label = f"{f.name} [{what}]"
    if f.fallible:
        assert r != CODES["PANIC"], f"{label}: PANIC: {cabi.message(LIB)}"
        allowed = f.statuses | {"OK"}
        assert NAMES.get(r) in allowed, f"{label}: status {r} ({NAMES.get(r)}) is not documented ({sorted(allowed)}): {cabi.message(LIB)}"
        if r != CODES["OK"]:
            msg = cabi.message(LIB)
            assert msg and msg != marker, f"{label}: status {NAMES[r]} without its own message"
            for name, o in outs.items():
                if NAMES[r] == "BUFFER_TOO_SMALL" and name == "out_len":
                    # The one out-parameter written on failure: the length the caller needs
                    # (issue 22), shorter than DLPACK_HELPERS_NAME_MAX with its NUL.
                    assert 0 < o.value < 32, f"{label}: out_len {o.value} is not the needed length"
                    o.value = 0
                    continue
                assert _untouched(o, before[name]), f"{label}: {name} written although the call failed ({NAMES[r]})"
                if name not in case.inout:  # `after` reads NULL, not 0xA5
                    ctypes.memset(ctypes.addressof(o), 0, ctypes.sizeof(o))
        _check_error_object(args.get("err"), r, label)
    else:
        assert cabi.message(LIB) == marker, f"{label}: a call that never fails changed the last error"
        if f.name in STRINGS:
            assert r, f"{label}: NULL string"
            ctypes.string_at(r).decode()
        elif f.ret == "dlpack_helpers_host_access":
            assert r in HOST_ACCESS, f"{label}: {r}"
        elif f.ret == "bool":  # dlpack_is_cpu_accessible, dlpack_device_is_pointer_addressed
            assert r in (True, False)
        elif f.name == "dlpack_last_error_status":  # a status as data: the last failure's
            assert r == CODES["OK"] or r in NAMES, f"{label}: {r} is not a status code"
        else:
            assert f.ret == "void", f"{label}: no rule for return type {f.ret}: add one in test_matrix.py"
    case.after(r if f.fallible else CODES["OK"], args)
    return r


def _check_error_object(err, r, label):
    """A *_with_error call's object (issue 35): on failure it holds the status, the message of the
    thread's last error and its full length; on OK, or when its own struct_size is refused, it is
    untouched."""
    if not isinstance(err, cabi.ErrorObject):
        return
    size = ctypes.sizeof(err)
    if r == CODES["OK"] or err.struct_size < size:
        assert ctypes.string_at(ctypes.addressof(err), size) == err._before, f"{label}: err written"
        return
    msg = cabi.message(LIB).encode()
    assert err.status == r, f"{label}: err.status {err.status}, returned {r}"
    assert err.struct_size == size and err.reserved == 0, f"{label}: err.struct_size/reserved"
    assert err.message_length == len(msg), f"{label}: err.message_length {err.message_length} != {len(msg)}"
    assert err.message == msg[:511], f"{label}: err.message {err.message!r} != {msg!r}"


def test_every_export_has_a_baseline():
    assert len(FUNCS) >= 52, "parsing include/dlpack_helpers.h found too few functions"
    missing = sorted(set(FUNCS) - set(BASELINES))
    assert not missing, ("exports not covered by the bad-input matrix; add a baseline call in "
                         "tests-reliability/baselines.py BASELINES: " + ", ".join(missing))
    stale = sorted(set(BASELINES) - set(FUNCS))
    assert not stale, "baselines for functions the header no longer declares: " + ", ".join(stale)


def test_every_fallible_export_documents_its_statuses():
    for f in FUNCS.values():
        if f.fallible:
            assert f.statuses, f"{f.name}: its doc comment names no status"
            if any(p.is_pointer for p in f.params if p.name not in f.nullable):
                assert "NULL_POINTER" in f.statuses, f"{f.name}: takes a required pointer but does not document NULL_POINTER"


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_matrix(name):
    f = FUNCS[name]
    make = BASELINES[name]
    # 1. the baseline itself
    case = make(CTX)
    r = call(f, case, "baseline")
    if f.fallible:
        assert NAMES[r] == case.expect, f"{name} baseline: {NAMES[r]} ({cabi.message(LIB)}), expected {case.expect}"
    # 2. NULL in each pointer parameter
    for p in f.params:
        if not p.is_pointer:
            continue
        case = make(CTX)
        case.args[p.name] = None
        r = call(f, case, f"{p.name}=NULL")
        if f.fallible and p.name not in f.nullable:
            assert r == CODES["NULL_POINTER"], f"{name}({p.name}=NULL): {NAMES.get(r)}, expected NULL_POINTER"
            assert p.name in cabi.message(LIB), f"{name}({p.name}=NULL): message does not name it: {cabi.message(LIB)}"
    # 3. out-of-range, zero and maximum values of each scalar parameter
    for p in f.params:
        if p.is_pointer:
            continue
        for v in bad_values(p.ctype):
            case = make(CTX)
            case.args[p.name] = v
            call(f, case, f"{p.name}={_show(v)}")
    # 4. variants
    for fn, what, modify, want in VARIANTS:
        if fn != name:
            continue
        case = make(CTX)
        modify(case)
        r = call(f, case, what)
        if want is not None:
            assert NAMES.get(r) == want, f"{name} [{what}]: {NAMES.get(r)} ({cabi.message(LIB)}), expected {want}"


def _show(v):
    if isinstance(v, DLDevice):
        return f"({v.device_type}, {v.device_id})"
    if isinstance(v, DLPackVersion):
        return f"{v.major}.{v.minor}"
    if hasattr(v, "code") and hasattr(v, "lanes"):
        return f"dtype({v.code}, {v.bits}, {v.lanes})"
    return repr(v)


def test_copy_constants_mean_what_the_header_says():
    """Regression (found by the sanitizer run of tests-c/test_stream.c): two Rust definitions of
    DLPACK_HELPERS_COPY_NEVER/ALWAYS disagreed and the header carried the other one, so C's
    COPY_NEVER meant "always copy" in dlpack_export_request_resolve."""
    from baselines import b_export_request_resolve
    from header import constants
    k = constants()
    case = b_export_request_resolve(CTX)
    case.args["tensor_device"] = DLDevice(2, 0)
    case.args["request"].has_dl_device = True
    case.args["request"].dl_device = DLDevice(1, 0)
    case.args["request"].copy = k["DLPACK_HELPERS_COPY_NEVER"]
    assert call(FUNCS["dlpack_export_request_resolve"], case, "copy=NEVER, CUDA -> CPU") == CODES["COPY_FORBIDDEN"]
    case = b_export_request_resolve(CTX)
    case.args["request"].copy = k["DLPACK_HELPERS_COPY_ALWAYS"]
    assert call(FUNCS["dlpack_export_request_resolve"], case, "copy=ALWAYS") == CODES["OK"]
    assert case.args["out_plan"].copy


def test_zz_every_tensor_released_exactly_once():
    """Runs last (name order): every tensor any matrix call was given was released once."""
    CTX.tensors.check()
    assert CTX.backend_calls > 0
    print(f"\nbad-input matrix: {COUNT['calls']} calls over {len(FUNCS)} exports, "
          f"{len(CTX.tensors.calls)} managed tensors each released exactly once")
    report = os.environ.get("DLPACK_HELPERS_MATRIX_REPORT")
    if report:
        with open(report, "w") as fh:
            fh.write(f"{COUNT['calls']} {len(FUNCS)}\n")
