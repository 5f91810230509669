"""The specification's manifest (spec/abi.toml) as ctypes declarations and as a C header.

The suite never includes the project's header nor imports its package: every prototype, struct
layout and constant it uses comes from here. Struct layouts are built from the manifest's field
types and checked against the manifest's own offsets and sizes (a disagreement is a suite or
manifest bug, reported before any case runs).
"""
from __future__ import annotations

import ctypes
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore

SCALARS = {
    "int8_t": ctypes.c_int8, "uint8_t": ctypes.c_uint8, "int16_t": ctypes.c_int16,
    "uint16_t": ctypes.c_uint16, "int32_t": ctypes.c_int32, "uint32_t": ctypes.c_uint32,
    "int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64, "size_t": ctypes.c_size_t,
    "bool": ctypes.c_bool, "_Bool": ctypes.c_bool, "int": ctypes.c_int, "char": ctypes.c_char,
    "uintptr_t": ctypes.c_size_t, "intptr_t": ctypes.c_ssize_t, "float": ctypes.c_float,
    "double": ctypes.c_double,
}


def _named(table) -> dict:
    """{name: entry} from a TOML table of tables (or an array of tables with `name`)."""
    if isinstance(table, list):
        return {e["name"]: e for e in table}
    return {k: dict(v, name=k) for k, v in table.items()}


def norm(ctype: str) -> str:
    t = re.sub(r"\bstruct\s+", "", ctype)
    t = re.sub(r"\s+", " ", t).strip()
    t = re.sub(r"\s*\*\s*", "*", t)
    return t


class Manifest:
    def __init__(self, path: Path, doc: dict):
        self.path = path
        self.doc = doc
        spec = doc.get("spec", {})
        self.spec_version = str(spec.get("version", doc.get("spec_version", "?")))
        self.profile_bits: dict[str, int] = {}
        profs = doc.get("profiles", {})
        if isinstance(profs, list):
            profs = {p["name"]: p for p in profs}
        for name, p in profs.items():
            self.profile_bits[name] = int(p.get("bit", p.get("value", 0)))
        self.functions = _named(doc.get("functions", {}))
        self.structs = _named(doc.get("structs", {}))
        self.typedefs = _named(doc.get("typedefs", {}))
        self.callbacks = dict(doc.get("callbacks", {}))
        self.constants: dict[str, int] = {}
        self.strings: dict[str, str] = {}
        consts = doc.get("constants", {})
        if isinstance(consts, list):
            consts = {c["name"]: c for c in consts}
        for name, c in consts.items():
            v = c["value"] if isinstance(c, dict) else c
            ctype = c.get("type", "") if isinstance(c, dict) else ""
            if isinstance(v, str) and ("char" in ctype or not re.match(r"^-?(0x)?[0-9a-fA-F]+$", v)):
                self.strings[name] = v
                continue
            self.constants[name] = int(v, 0) if isinstance(v, str) else int(v)
        self._ctypes: dict[str, object] = {}

    @classmethod
    def load(cls, path) -> "Manifest":
        path = Path(path)
        with open(path, "rb") as f:
            return cls(path, tomllib.load(f))

    # -- constants ---------------------------------------------------------------------------
    def const(self, name: str, signed_bits: int | None = None) -> int:
        """A constant's value; with signed_bits, reinterpreted as a signed integer of that width
        (the manifest stores every value unsigned)."""
        v = self.constants[name]
        if signed_bits and v >= 1 << (signed_bits - 1):
            v -= 1 << signed_bits
        return v

    def status(self, short: str) -> int:
        return self.constants["DLPACK_HELPERS_STATUS_" + short]

    def status_name(self, code: int) -> str:
        for k, v in self.constants.items():
            if k.startswith("DLPACK_HELPERS_STATUS_") and v == code:
                return k[len("DLPACK_HELPERS_STATUS_"):]
        return f"<unknown status {code}>"

    # -- ctypes ------------------------------------------------------------------------------
    def ctype(self, ctype: str):
        t = norm(ctype)
        t = t.replace("const ", "").replace("*const", "*").replace(" const", "")
        arr = re.match(r"^(.*?)\s*\[(\d+)\]$", t)
        if arr:  # an inline array field, `T[N]` (dlpack_helpers_error.message)
            return self.ctype(arr.group(1)) * int(arr.group(2))
        if "(*)" in t:
            return ctypes.c_void_p
        if t.endswith("*"):
            base = t[:-1]
            if base in ("void", "char"):
                return ctypes.c_void_p
            if base.endswith("*"):
                return ctypes.c_void_p
            return ctypes.POINTER(self.ctype(base))
        if t == "void":
            return None
        if t in SCALARS:
            return SCALARS[t]
        if t in self.structs:
            return self.struct(t)
        if t in self.typedefs:
            td = self.typedefs[t]
            if td.get("type") in SCALARS:
                return SCALARS[td["type"]]
            size = int(td.get("size", 4))
            signed = td.get("signed", True)
            return {(1, True): ctypes.c_int8, (1, False): ctypes.c_uint8, (2, True): ctypes.c_int16,
                    (2, False): ctypes.c_uint16, (4, True): ctypes.c_int32, (4, False): ctypes.c_uint32,
                    (8, True): ctypes.c_int64, (8, False): ctypes.c_uint64}[(size, bool(signed))]
        if t in self.callbacks:
            return ctypes.c_void_p
        raise KeyError(f"the manifest has no type {ctype!r}")

    def struct(self, name: str):
        if name in self._ctypes:
            return self._ctypes[name]
        s = self.structs[name]
        cls = type(name, (ctypes.Structure,), {})
        self._ctypes[name] = cls
        fields = sorted(s["fields"], key=lambda f: int(f["offset"]))
        cls._fields_ = [(f["name"], self.ctype(f["type"])) for f in fields]
        for f in fields:
            got = getattr(cls, f["name"])
            if got.offset != int(f["offset"]) or got.size != int(f["size"]):
                raise RuntimeError(f"manifest {name}.{f['name']}: offset/size {f['offset']}/{f['size']} "
                                   f"but its type gives {got.offset}/{got.size}")
        if ctypes.sizeof(cls) != int(s["size"]):
            raise RuntimeError(f"manifest struct {name}: size {s['size']} but its fields give {ctypes.sizeof(cls)}")
        return cls

    def bind(self, handle, name: str):
        """The function `name` of a loaded library with the manifest's prototype, or None when the
        library does not export it."""
        f = self.functions[name]
        try:
            fn = getattr(handle, name)
        except AttributeError:
            return None
        fn.restype = self.ctype(f.get("returns", f.get("return", "void")))
        fn.argtypes = [self.ctype(p["type"]) for p in f.get("params", f.get("parameters", []))]
        return fn


if __name__ == "__main__":  # a quick self-check: python -m harness.manifest spec/abi.toml
    m = Manifest.load(sys.argv[1])
    for s in m.structs:
        m.struct(s)
    print(f"{len(m.functions)} functions, {len(m.structs)} structs, {len(m.constants)} constants: layouts consistent")
