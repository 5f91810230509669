"""The capsule-name and ownership state machine with real CPython capsules, driven by a seeded
random sequence of operations (a bounded, reproducible fuzz run: DLPACK_HELPERS_CAPSULE_FUZZ_SEED
and _STEPS change it; a failure prints the seed and step).

Operations on a pool of capsules: make one (dlpack_capsule_new / dlpack_legacy_capsule_new around
a tensor with a counting deleter, or NumPy's own), consume it (versioned or legacy entry point),
consume it again, call dlpack_capsule_destructor on it directly, rename it (to a DLPack name or
to a foreign one such as IREE's "dltensor_used", peer case 8), or drop it. A model predicts each
status from the name alone (DLPack Python specification) and how often each deleter must run:
once, whoever ends up owning the tensor, except for capsules renamed to a foreign name while
unconsumed (the destructor then calls nothing: documented).
"""
from __future__ import annotations

import ctypes
import gc
import os
import random

import numpy as np
import pytest

import cabi
from baselines import Tensors
from header import functions, status_codes

FUNCS = functions()
CODES = status_codes()
LIB = cabi.load(cabi.library_path(), FUNCS)
SEED = int(os.environ.get("DLPACK_HELPERS_CAPSULE_FUZZ_SEED", "8"))
STEPS = int(os.environ.get("DLPACK_HELPERS_CAPSULE_FUZZ_STEPS", "20000"))

SetName = ctypes.pythonapi.PyCapsule_SetName
SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
GetName = ctypes.pythonapi.PyCapsule_GetName
GetName.argtypes = [ctypes.py_object]
GetName.restype = ctypes.c_char_p
# Names must outlive the capsules (PyCapsule keeps the pointer): static bytes objects.
NAMES = [b"dltensor", b"dltensor_versioned", b"used_dltensor", b"used_dltensor_versioned", b"dltensor_used", b"other"]


def expect_consume(name: bytes, legacy_entry: bool):
    if name in (b"used_dltensor", b"used_dltensor_versioned"):
        return "CAPSULE_CONSUMED"
    if name == b"dltensor":
        return "OK"
    if name == b"dltensor_versioned":
        return "CAPSULE_NAME" if legacy_entry else "OK"
    return "CAPSULE_NAME"


class Item:
    def __init__(self, cap, kind, tensor):
        self.cap, self.kind, self.tensor = cap, kind, tensor  # kind: "v" or "l" (struct inside)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # foreign names: documented
def test_case_1_2_3_7_8_capsule_state_machine():
    rng = random.Random(SEED)
    tensors = Tensors()
    leaked = set()  # tensor ids whose capsule died under a foreign unconsumed name (documented)
    pool: list[Item] = []
    counts = {}

    def status_name(s):
        return {v: k for k, v in CODES.items()}[s]

    for step in range(STEPS):
        where = f"seed {SEED}, step {step}"
        op = rng.randrange(8)
        if op == 0 or not pool:
            kind = rng.choice("vl")
            if rng.random() < 0.3:  # NumPy's own capsule: no counting, its deleter frees
                a = np.arange(4.0)
                cap = a.__dlpack__(max_version=(1, 3)) if kind == "v" else a.__dlpack__()
                pool.append(Item(cap, kind, None))
            else:
                # Valid tensors: a legacy one is validated when consumed as versioned (issue 12).
                t = tensors.versioned(valid=True) if kind == "v" else tensors.legacy(valid=True)
                out = ctypes.c_void_p()
                fn = LIB.dlpack_capsule_new if kind == "v" else LIB.dlpack_legacy_capsule_new
                assert fn(ctypes.addressof(t), ctypes.addressof(out)) == 0, where
                pool.append(Item(cabi.take_new_reference(out.value), kind, t))
            continue
        item = pool[rng.randrange(len(pool))]
        name = GetName(item.cap)
        if op in (1, 2, 3):  # consume through one of the two entry points
            legacy_entry = op == 3
            out = ctypes.c_void_p()
            fn = LIB.dlpack_legacy_capsule_consume if legacy_entry else LIB.dlpack_capsule_consume
            s = fn(id(item.cap), ctypes.addressof(out))
            want = expect_consume(name, legacy_entry)
            # The struct inside must match the name for the model to hold; a versioned struct
            # under a legacy name is a producer bug we never create on purpose.
            assert status_name(s) == want, f"{where}: consume {name} ({'legacy' if legacy_entry else 'versioned'}): {status_name(s)}, expected {want}: {cabi.message(LIB)}"
            if s == 0:
                assert GetName(item.cap) == (b"used_dltensor" if name == b"dltensor" else b"used_dltensor_versioned"), where
                # The consumer owns it now: release exactly once.
                (LIB.dlpack_legacy_tensor_delete if legacy_entry else LIB.dlpack_tensor_delete)(out.value)
            else:
                assert GetName(item.cap) == name, f"{where}: a refused capsule was renamed"
                assert out.value is None, f"{where}: out_tensor written on failure"
        elif op == 4:  # the destructor called directly: only safe (and a no-op) on a used capsule
            if name in (b"used_dltensor", b"used_dltensor_versioned"):
                LIB.dlpack_capsule_destructor(id(item.cap))
        elif op == 5:  # rename to a name of the same struct, or a foreign one
            if name in (b"dltensor", b"dltensor_versioned"):
                choices = [b"dltensor_used", b"other"] + ([b"dltensor"] if item.kind == "l" else [b"dltensor_versioned"])
                new = NAMES[NAMES.index(rng.choice(choices))]  # the static object: capsules keep the pointer
                assert SetName(item.cap, new) == 0
                if new in (b"dltensor_used", b"other") and item.tensor is not None:
                    leaked.add(item.tensor.manager_ctx)
                elif item.tensor is None and new in (b"dltensor_used", b"other"):
                    SetName(item.cap, NAMES[NAMES.index(name)])  # NumPy's tensor would leak for real: keep its name
        else:  # drop it: the destructor decides by the name
            pool.remove(item)
            del item
        counts[op] = counts.get(op, 0) + 1
    pool.clear()
    gc.collect()
    wrong = {i: n for i, n in tensors.calls.items() if n != (0 if i in leaked else 1)}
    assert not wrong, f"seed {SEED}: deleter calls (tensor id: calls) differ from the model: {wrong}"
    print(f"\ncapsule state machine: {STEPS} operations (seed {SEED}), {len(tensors.calls)} counted tensors, "
          f"{len(leaked)} deliberately renamed to foreign names (deleter not called, as documented)")
