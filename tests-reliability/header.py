"""The C API as include/dlpack_helpers.h declares it: every function with its parameters (C type and
name), its doc comment, the statuses the doc says it returns, and which pointer parameters the doc
says may be NULL. The bad-input matrix and the panic matrix are generated from this, so a new
export is picked up (and must be given a baseline call) without anyone editing a list of names.

Each export's doc comment ends with its contract in structured lines, which this module reads:
`@retval DLPACK_HELPERS_STATUS_X when ...` (one per status it can return) and
`@param[out] name May be NULL.` (`[in]`, `[in,out]`; one per optional pointer parameter). A doc
without `@retval` lines (an export added without them) falls back to reading the prose ("may be
NULL", "Same statuses", "as `dlpack_x`"); tests/contracts.rs requires the structured form of
every export.
"""
from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "include" / "dlpack_helpers.h"


@dataclass
class Param:
    ctype: str  # normalized: no const/struct, no spaces, e.g. "DLManagedTensorVersioned*"
    name: str

    @property
    def is_pointer(self) -> bool:
        return self.ctype.endswith("*")

    @property
    def is_out(self) -> bool:
        return self.is_pointer and self.name.startswith("out_")


@dataclass
class Function:
    name: str
    ret: str
    params: list[Param]
    doc: str
    statuses: set[str] = field(default_factory=set)  # documented status names, e.g. "NULL_POINTER"
    nullable: set[str] = field(default_factory=set)  # pointer parameters documented as optional
    structured: bool = False  # the contract comes from @retval / @param lines, not from prose

    @property
    def fallible(self) -> bool:
        return self.ret == "dlpack_helpers_status"


def _norm(t: str) -> str:
    t = re.sub(r"\b(const|struct)\b", "", t)
    return re.sub(r"\s+", "", t)


def status_codes(text: str | None = None) -> dict[str, int]:
    text = text if text is not None else HEADER.read_text()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"#define DLPACK_HELPERS_STATUS_(\w+) (\d+)", text)}


def constants(text: str | None = None) -> dict[str, int]:
    text = text if text is not None else HEADER.read_text()
    return {m.group(1): int(m.group(2), 0) for m in re.finditer(r"#define (DLPACK_HELPERS_\w+) (-?(?:0x[0-9a-fA-F]+|\d+))\b", text)}


def functions() -> dict[str, Function]:
    text = HEADER.read_text()
    codes = status_codes(text)
    out: dict[str, Function] = {}
    # A declaration: a doc comment, then "<ret> <name>(<params>);" at the start of a line.
    for m in re.finditer(r"/\*\*((?:(?!\*/).)*?)\*/\s*\n([A-Za-z_][\w \*]*?)\b(dlpack_\w+)\(([^;{]*?)\)\s*;", text, flags=re.S):
        doc = re.sub(r"^\s*\* ?", "", m.group(1), flags=re.M)
        ret, name, params = _norm(m.group(2)), m.group(3), m.group(4)
        args = [] if params.strip() in ("", "void") else _split_params(params)
        plist = []
        for a in args:
            fp = re.match(r".*\(\s*\*\s*(\w+)\s*\)\s*\(", a, flags=re.S)
            if fp:  # a function pointer parameter: passed as a pointer
                plist.append(Param("fnptr*", fp.group(1)))
                continue
            pm = re.match(r"(.*?)(\w+)$", a, flags=re.S)
            plist.append(Param(_norm(pm.group(1)), pm.group(2)))
        out[name] = Function(name, ret, plist, doc)
    for f in out.values():
        retvals, optional = contract(f.doc)
        if retvals:
            f.structured = True
            f.statuses, f.nullable = retvals, optional
        else:
            f.statuses = _documented_statuses(f.doc, codes)
    # "as `dlpack_x`", "Same statuses", "the statuses of `dlpack_x`", "any status of `dlpack_x`":
    # the statuses (and, for parameters of the same name this doc does not describe, the
    # nullability) of the function referred to. Two passes reach references of references.
    for f in out.values():
        f.refs = [r for r in re.findall(r"`(dlpack_\w+)`", f.doc) if r in out and r != f.name]
        f.inherits = bool(re.search(r"\b[Aa]s (?:in )?`dlpack_|Same statuses|statuses of `dlpack_|status of `dlpack_", f.doc))
    for f in out.values():
        if not f.structured:
            f.nullable = _nullable(f)
    for _ in range(2):
        for f in out.values():
            if f.structured or not f.inherits:
                continue
            for ref in f.refs:
                f.statuses |= out[ref].statuses
                described = {p.name for p in f.params if re.search(r"^- `%s`" % re.escape(p.name), f.doc, flags=re.M)}
                f.nullable |= {p.name for p in f.params if p.name in out[ref].nullable and p.name not in described}
    return out


def contract(doc: str) -> tuple[set[str], set[str]]:
    """The structured contract of a doc comment: the statuses of its `@retval` lines and the
    parameters of its `@param[...] name May be NULL.` lines."""
    retvals = set(re.findall(r"^@retval DLPACK_HELPERS_STATUS_(\w+)\b", doc, flags=re.M))
    optional = set(re.findall(r"^@param\[(?:in|out|in,out)\] (\w+) May be NULL\.", doc, flags=re.M))
    return retvals, optional


def _split_params(params: str) -> list[str]:
    """Split a parameter list at top-level commas (function pointer parameters have their own)."""
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    out.append(cur.strip())
    return out


def _documented_statuses(doc: str, codes: dict[str, int]) -> set[str]:
    found = set(re.findall(r"DLPACK_HELPERS_STATUS_(\w+)", doc))
    # Short forms: `_NULL_POINTER` or `NULL_POINTER`.
    found |= {s for s in re.findall(r"`_?([A-Z][A-Z0-9_]+)`", doc) if s in codes}
    # A paragraph such as "Returns OK; `_NULL_POINTER`; ..." is covered above.
    return {s for s in found if s in codes}


def _nullable(f: Function) -> set[str]:
    """Pointer parameters the doc says may be NULL: "`x` ... may be NULL", "NULL for ...",
    "or NULL"."""
    out = set()
    for p in f.params:
        if not p.is_pointer:
            continue
        # The parameter's bullet: from "- `name`" to the next bullet or blank line.
        m = re.search(r"^- `%s`(.*?)(?=^- |\n\n|\Z)" % re.escape(p.name), f.doc, flags=re.S | re.M)
        text = m.group(1) if m else ""
        if re.search(r"(?i)may be NULL|NULL for|or NULL|NULL to pass", text) or re.search(
                r"`%s` may be NULL" % re.escape(p.name), f.doc):
            out.add(p.name)
    return out


# ---- ctypes types for C types ---------------------------------------------------------------


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


INT32_LIKE = re.compile(r"^(int32_t|DLDeviceType|dlpack_helpers_\w+)$")


def ctype_of(c: str):
    """The ctypes type a parameter or return value of C type `c` is passed as (pointers as
    c_void_p: the matrix passes addresses)."""
    if c.endswith("*"):
        return ctypes.c_void_p
    if c == "void":
        return None
    if c == "bool":
        return ctypes.c_bool
    if c == "uint32_t":
        return ctypes.c_uint32
    if c == "uint64_t":
        return ctypes.c_uint64
    if c == "int64_t":
        return ctypes.c_int64
    if c == "size_t":
        return ctypes.c_size_t
    if c == "DLDevice":
        return DLDevice
    if c == "DLPackVersion":
        return DLPackVersion
    if c == "DLDataType":
        return DLDataType
    if INT32_LIKE.match(c):
        return ctypes.c_int32
    raise KeyError(f"no ctypes mapping for C type {c!r}: add one in tests-reliability/header.py")


I32_MIN, I32_MAX, U32_MAX = -2**31, 2**31 - 1, 2**32 - 1
I64_MIN, I64_MAX, U64_MAX = -2**63, 2**63 - 1, 2**64 - 1


def bad_values(c: str) -> list:
    """Out-of-range, zero and maximum values for a scalar parameter of C type `c`."""
    if c == "DLDevice":
        return [DLDevice(t, i) for t, i in [(I32_MIN, 0), (-1, 0), (0, 0), (5, 0), (6, 0), (19, 0), (20, 0),
                                            (1000, 0), (I32_MAX, 0), (1, -1), (1, I32_MAX), (7, I32_MIN)]]
    if c == "DLPackVersion":
        return [DLPackVersion(a, b) for a, b in [(0, 0), (0, U32_MAX), (1, U32_MAX), (2, 0), (U32_MAX, U32_MAX)]]
    if c == "DLDataType":
        return [DLDataType(c, b, l) for c, b, l in [(0, 0, 1), (2, 32, 0), (2, 255, 65535), (6, 1, 1), (4, 32, 1),
                                                     (15, 8, 1), (99, 32, 1), (255, 255, 65535), (3, 64, 1)]]
    if c == "bool":
        return [False, True]
    if c == "uint32_t":
        return [0, 8, 0x80000000, U32_MAX]
    if c == "uint64_t":
        return [0, 8, 1 << 63, U64_MAX]
    if c == "int64_t":
        return [I64_MIN, -2, 0, I64_MAX]
    if c == "size_t":
        return [0, 2**64 - 1]
    if c == "int32_t":
        return [I32_MIN, -1, 0, 3, 33, 99, I32_MAX]
    if INT32_LIKE.match(c):
        return [I32_MIN, -1, 0, 3, 99, I32_MAX]
    raise KeyError(f"no bad values for C type {c!r}: add them in tests-reliability/header.py")
