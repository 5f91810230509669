"""A C header generated from spec/abi.toml: every struct, typedef, callback, constant and
prototype of the manifest, for C code of the suite (broken variants, the second implementation's
checks, layout mirrors). It is the manifest rendered as C, not the project's header.

    python3 -m harness.cheader spec/abi.toml OUT.h
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from harness.manifest import Manifest

SCALAR_TYPES = {"int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t",
                "uint64_t", "size_t", "bool", "int", "char", "void", "float", "double",
                "uintptr_t", "intptr_t"}


def field_decl(name: str, ctype: str) -> str:
    t = ctype.strip()
    if "(*)" in t:
        return t.replace("(*)", f"(*{name})", 1) + ";"
    m = re.match(r"^(.*)\[(\d+)\]$", t)
    if m:
        return f"{m.group(1).strip()} {name}[{m.group(2)}];"
    return f"{t} {name};"


def deps(ctype: str, structs) -> set:
    """Structs a field of this type needs complete (by value, not through a pointer)."""
    t = ctype.strip()
    if "(*)" in t or t.endswith("*"):
        return set()
    t = re.sub(r"\[\d+\]$", "", t).replace("const ", "").strip()
    return {t} if t in structs else set()


def render(m: Manifest) -> str:
    out = ["/* Generated from the specification's manifest (spec/abi.toml) by",
           " * conformance/harness/cheader.py: do not edit. */",
           "#ifndef DLPC_ABI_H", "#define DLPC_ABI_H", "#include <stdbool.h>", "#include <stddef.h>",
           "#include <stdint.h>", ""]
    for name, td in sorted(m.typedefs.items()):
        base = td.get("type", "int32_t")
        if base not in SCALAR_TYPES:
            size, signed = int(td.get("size", 4)), bool(td.get("signed", True))
            base = f"{'' if signed else 'u'}int{size * 8}_t"
        out.append(f"typedef {base} {name};")
    out.append("")
    for name in sorted(m.structs):
        out.append(f"typedef struct {name} {name};")
    out.append("")
    for name, sig in sorted(m.callbacks.items()):
        if "." not in name:
            out.append("typedef " + sig.replace("(*)", f"(*{name})", 1) + ";")
    out.append("")
    done: set = set()

    def emit(name):
        if name in done:
            return
        s = m.structs[name]
        for f in s["fields"]:
            for d in deps(f["type"], m.structs):
                if d != name:
                    emit(d)
        done.add(name)
        out.append(f"struct {name} {{")
        for f in sorted(s["fields"], key=lambda f: int(f["offset"])):
            out.append("  " + field_decl(f["name"], f["type"]))
        out.append("};")
        out.append(f"_Static_assert(sizeof(struct {name}) == {s['size']}, \"{name} size\");")
        for f in s["fields"]:
            out.append(f"_Static_assert(offsetof(struct {name}, {f['name']}) == {f['offset']}, "
                       f"\"{name}.{f['name']}\");")

    for name in sorted(m.structs):
        emit(name)
    out.append("")
    consts = m.doc.get("constants", {})
    for name in sorted(m.constants):
        v = m.constants[name]
        ctype = consts.get(name, {}).get("type", "uint64_t") if isinstance(consts.get(name), dict) else "uint64_t"
        if ctype in ("uint64_t", "size_t") or v > 0x7FFFFFFF:
            lit = f"UINT64_C({v})" if ctype == "uint64_t" or v > 0xFFFFFFFF else f"{v}u"
            out.append(f"#define {name} (({ctype}){lit})")
        else:
            out.append(f"#define {name} (({ctype}){v})")
    for name, v in sorted(m.strings.items()):
        out.append(f"#define {name} \"{v}\"")
    out.append("")
    for name, f in sorted(m.functions.items()):
        proto = f["prototype"].strip()
        out.append(proto if proto.endswith(";") else proto + ";")
    out += ["", "#endif"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(render(Manifest.load(sys.argv[1])))
