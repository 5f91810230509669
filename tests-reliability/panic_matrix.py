"""A forced panic inside every export (run by scripts/test.d/84-panic.sh against the test-panic
build; not collected by a plain `pytest tests-reliability`, which loads the release build).

The library is built with `--features test-panic`: while DLPACK_HELPERS_TEST_PANIC is set, each
export panics inside its boundary before doing anything. For every function the header declares,
its baseline call (baselines.py) is made with the variable set, and must:
- return DLPACK_HELPERS_STATUS_PANIC (fallible functions) or the documented fallback (value and
  void functions), with the panic's message as the thread's last error;
- not abort, not unwind into the caller, and leave every out-parameter untouched;
- have done nothing: the same call made again without the variable succeeds as the baseline
  does, and every managed tensor is still released exactly once.
"""
from __future__ import annotations

import ctypes
import os

import pytest

import cabi
import test_matrix as m
from baselines import BASELINES

PANIC_TEXT = "test-panic: forced panic inside the export"
# Documented values on a caught panic (see each function's implementation).
FALLBACK = {"dlpack_is_cpu_accessible": False, "dlpack_device_host_access": 2}


def _panicking(f, case):
    outs = m._outs(f, case.args)
    before = m._fill(outs, case.inout)
    keep: list = []
    c_args = [m._c_arg(f, p, case.args[p.name], keep) for p in f.params]
    os.environ["DLPACK_HELPERS_TEST_PANIC"] = "1"
    try:
        r = getattr(m.LIB, f.name)(*c_args)
    finally:
        del os.environ["DLPACK_HELPERS_TEST_PANIC"]
    for name, o in outs.items():
        assert m._untouched(o, before[name]), f"{f.name}: {name} written by a panicking call"
        if name not in case.inout:
            ctypes.memset(ctypes.addressof(o), 0, ctypes.sizeof(o))
    return r


def test_the_library_is_a_test_panic_build():
    os.environ["DLPACK_HELPERS_TEST_PANIC"] = "1"
    try:
        r = m.LIB.dlpack_version_check(m.DLPackVersion(1, 3), None)
    finally:
        del os.environ["DLPACK_HELPERS_TEST_PANIC"]
    assert r == m.CODES["PANIC"], ("DLPACK_HELPERS_LIBRARY is not built with --features test-panic "
                                   f"({cabi.library_path()})")


@pytest.mark.parametrize("name", sorted(m.FUNCS))
def test_forced_panic(name):
    f = m.FUNCS[name]
    case = BASELINES[name](m.CTX)
    m._mark_error()
    r = _panicking(f, case)
    msg = cabi.message(m.LIB)
    assert PANIC_TEXT in msg, f"{name}: the panic's message is not the last error: {msg!r}"
    if f.fallible:
        assert r == m.CODES["PANIC"], f"{name}: {r}, expected PANIC"
        assert ctypes.string_at(m.LIB.dlpack_status_string(r)) == b"PANIC"
    elif name in m.STRINGS:
        assert r is not None and ctypes.string_at(r) is not None  # a static fallback string
    elif name in FALLBACK:
        assert r == FALLBACK[name], f"{name}: {r} on panic, documented fallback {FALLBACK[name]}"
    # Nothing happened: the same call now behaves as the baseline (and releases what it owns).
    r = m.call(f, case, "after a caught panic")
    if f.fallible:
        assert m.NAMES[r] == case.expect, f"{name} after a panic: {m.NAMES[r]} ({cabi.message(m.LIB)})"


def test_zz_every_tensor_released_exactly_once():
    m.CTX.tensors.check()
    print(f"\npanic matrix: a forced panic in each of {len(m.FUNCS)} exports; no abort, status/fallback and message checked")
