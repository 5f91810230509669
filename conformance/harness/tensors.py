"""Tensor descriptions made into fixture memory, for the table-driven cases.

A description (see harness/layout_model.py) becomes a DLTensor, DLManagedTensorVersioned or
DLManagedTensor in guarded memory: the struct, `shape` and `strides` each end against a guard
page, and with `readonly` they are made PROT_READ, so any write by the implementation faults.
`data` defaults to a PROT_NONE page (`ctx`-wide): any dereference of `data` faults too.
`shape`/`strides` may be the string "poison": a pointer into a PROT_NONE page (reading it faults).
"""
from __future__ import annotations

import ctypes

PAGE = 4096
_libc = ctypes.CDLL(None)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_state: dict = {}


def poison_page(ctx) -> int:
    """A page-aligned address whose page is PROT_NONE (one per process)."""
    p = _state.get("poison")
    if p is None:
        p = ctx.guarded(PAGE)
        ctx.check(p % PAGE == 0, "suite bug: fx_guarded(4096) not page aligned")
        ctx.fx.fx_poison(ctypes.c_void_p(p))
        _state["poison"] = p
    return p


def readonly(ctx, addr: int, n: int):
    base = addr & ~(PAGE - 1)
    end = (addr + n + PAGE - 1) & ~(PAGE - 1)
    ctx.check(_libc.mprotect(base, end - base, 1) == 0, "suite bug: mprotect")


def desc(**kw) -> dict:
    d = {"shape": (2, 3), "strides": None, "dtype": (2, 32, 1), "byte_offset": 0, "data": None,
         "device": (1, 0), "ndim": None}
    d.update(kw)
    if d["ndim"] is None:
        d["ndim"] = len(d["shape"]) if isinstance(d["shape"], (tuple, list)) else 0
    return d


def resolved(ctx, d: dict) -> dict:
    """The description with `data` as an integer (the poison page when None) and the arrays as
    the model reads them (a "poison" array is only ever given with an ndim that forbids reading)."""
    r = dict(d)
    if r["data"] is None:
        r["data"] = poison_page(ctx)
    for k in ("shape", "strides"):
        if r[k] == "poison":
            r[k] = None if k == "strides" else [1] * (r["ndim"] if 0 <= r["ndim"] <= 1024 else 0)
        elif r[k] is not None:
            r[k] = list(r[k])
    return r


def _fill(ctx, dl, d: dict, ro: bool):
    dl.ndim = d["ndim"]
    dl.dtype.code, dl.dtype.bits, dl.dtype.lanes = d["dtype"]
    dl.device.device_type, dl.device.device_id = d["device"]
    for k in ("shape", "strides"):
        v = d[k]
        if v is None:
            p = None
        elif v == "poison":
            p = poison_page(ctx) + 64
        else:
            p = ctx.int64_array(list(v)) if len(v) else ctx.guarded(8)
            if ro:
                readonly(ctx, p, 8 * max(len(v), 1))
        setattr(dl, k, ctypes.cast(p, type(getattr(dl, k))) if p else None)
    dl.data = poison_page(ctx) if d["data"] is None else d["data"]
    dl.byte_offset = d["byte_offset"]


def dltensor(ctx, d: dict, ro: bool = True) -> int:
    D = ctx.T.DLTensor
    p = ctx.guarded(ctypes.sizeof(D))
    _fill(ctx, D.from_address(p), d, ro)
    if ro:
        readonly(ctx, p, ctypes.sizeof(D))
    return p


def versioned(ctx, d: dict, version=(1, 3), flags=0, ro: bool = True, readable=None):
    """(pointer, record): a DLManagedTensorVersioned with the counting (never called) deleter.
    `readable` bytes only when given (the rest in the guard page)."""
    V = ctx.T.DLManagedTensorVersioned
    rec = ctx.fx.fx_record_new()
    if readable is not None:
        p, rec = ctx.make_versioned(version=version, readable=readable, poison=False)
        if ro:
            readonly(ctx, p, readable)
        return p, rec
    p = ctx.guarded(ctypes.sizeof(V))
    t = V.from_address(p)
    t.version.major, t.version.minor = version
    t.manager_ctx = rec
    t.deleter = ctx.VDELETER
    t.flags = flags
    _fill(ctx, t.dl_tensor, d, ro)
    if ro:
        readonly(ctx, p, ctypes.sizeof(V))
    return p, rec


def legacy(ctx, d: dict, ro: bool = True):
    L = ctx.T.DLManagedTensor
    rec = ctx.fx.fx_record_new()
    p = ctx.guarded(ctypes.sizeof(L))
    t = L.from_address(p)
    t.manager_ctx = rec
    t.deleter = ctx.LDELETER
    _fill(ctx, t.dl_tensor, d, ro)
    if ro:
        readonly(ctx, p, ctypes.sizeof(L))
    return p, rec


LAYOUT_FIELDS = ("numel", "nbytes", "storage_elements", "lowest_byte", "end_byte",
                 "first_element_alignment", "properties", "element_bits")


def sentinel_layout(ctx):
    lay = ctx.T.dlpack_helpers_layout()
    ctypes.memset(ctypes.byref(lay), 0xA5, ctypes.sizeof(lay))
    return lay


def untouched(lay) -> bool:
    return ctypes.string_at(ctypes.addressof(lay), ctypes.sizeof(lay)) == b"\xa5" * ctypes.sizeof(lay)


def layout_dict(lay) -> dict:
    return {k: int(getattr(lay, k)) for k in LAYOUT_FIELDS}


def compare_layout(ctx, lay, want: dict, where: str):
    got = layout_dict(lay)
    bad = [f"{k} {got[k]} (expected {want[k]})" for k in LAYOUT_FIELDS if got[k] != want[k]]
    ctx.check(not bad, f"{where}: " + "; ".join(bad))


def options(ctx, struct_size=None, flags=0, max_ndim=0, data_alignment=0, first_element_alignment=0,
            dtype=(0, 0, 0), room=None, tail=b""):
    """(pointer or None, model dict): validate options in guarded memory holding exactly
    `room` bytes (default: max(struct_size, 8)); bytes past 40 are filled with `tail` (garbage
    that must be ignored)."""
    O = ctx.T.dlpack_helpers_validate_options
    size = ctypes.sizeof(O)
    if struct_size is None:
        struct_size = size
    room = room if room is not None else max(struct_size, 8)
    raw = bytearray(max(room, size) + len(tail))
    o = O.from_buffer(raw)
    o.struct_size = struct_size
    o.flags = flags
    o.max_ndim = max_ndim
    o.data_alignment = data_alignment
    o.first_element_alignment = first_element_alignment
    o.dtype.code, o.dtype.bits, o.dtype.lanes = dtype
    raw[size:size + len(tail)] = tail
    p = ctx.guarded(room)
    ctypes.memmove(p, bytes(raw[:room]), room)
    readonly(ctx, p, room)
    model = {"struct_size": struct_size, "flags": flags, "max_ndim": max_ndim,
             "data_alignment": data_alignment, "first_element_alignment": first_element_alignment,
             "dtype": tuple(dtype)}
    return ctypes.cast(p, ctypes.POINTER(O)), model
