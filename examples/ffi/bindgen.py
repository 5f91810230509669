#!/usr/bin/env python3
"""Generate FFI bindings of the dlpack-helpers C ABI from the specification's manifest.

Where an FFI cannot read C (koffi, Java's FFM API without jextract, C# P/Invoke), the struct
layouts, constants and prototypes would otherwise be restated by hand. This script writes them
from `spec/abi.toml` (the machine-readable ABI: every struct with its fields' types, offsets and
sizes, every constant with its type and unsigned value, every function with its typed
parameters and their direction), so that a program writes none of them:

    python3 bindgen.py js     spec/abi.toml > dlpack_helpers_abi.js      (Node + koffi)
    python3 bindgen.py java   spec/abi.toml > dlpackhelpers/DlpackHelpersAbi.java   (Java 22+ FFM)
    python3 bindgen.py csharp spec/abi.toml > DlpackHelpersAbi.cs        (C#, Mono or .NET)
    python3 bindgen.py jna    spec/abi.toml > dlpackhelpers/DlpackHelpersJna.java   (Java 8+ JNA)
    python3 bindgen.py c-layout spec/abi.toml > layout.c                  (the oracle, below)

Every binding carries a layout dump (`layoutFacts`) that prints, from the FFI's own idea of
each struct (koffi.sizeof/offsetof, MemoryLayout.byteSize/byteOffset, Marshal.SizeOf/OffsetOf,
JNA's Structure.size/fieldOffset),
one line per struct size and field offset; `c-layout` writes a C program that prints the same
lines from the compiled header. scripts/test.d/68-ffi.sh compares them, so a generated mirror
that disagrees with the header fails the test. Sizes and offsets are LP64 (the manifest's data
model). Python 3.11 or newer (tomllib); no other dependency.
"""
import re
import sys
import tomllib

SCALARS = {  # C scalar -> (size, signed)
    "int8_t": (1, True), "uint8_t": (1, False), "int16_t": (2, True), "uint16_t": (2, False),
    "int32_t": (4, True), "uint32_t": (4, False), "int64_t": (8, True), "uint64_t": (8, False),
    "int": (4, True), "size_t": (8, False), "bool": (1, False), "char": (1, True),
}
FNPTR = re.compile(r"^[\w ]+\(\*\w*\)\(.*\)$")


class Abi:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.m = tomllib.load(f)
        self.spec = self.m["spec"]
        self.structs = self.m["structs"]
        self.typedefs = self.m["typedefs"]
        self.constants = self.m["constants"]
        self.functions = self.m["functions"]
        self.callbacks = set(self.m.get("callbacks", {}).values())
        self.callback_names = {k for k in self.m.get("callbacks", {}) if "." not in k}
        # An array field may be written with its element's pointer type (`char *` of size 512
        # for `char message[512]`): the size tells them apart on LP64, where a pointer is 8.
        for s in self.structs.values():
            for f in s["fields"]:
                k, v = self.resolve(f["type"])
                if k == "pointer" and f["size"] != 8 and v in SCALARS:
                    f["type"] = f"{v}[{f['size'] // SCALARS[v][0]}]"

    def resolve(self, t):
        """Classify a C type string: ('scalar', name) | ('struct', name) | ('pointer', pointee)
        | ('fnptr', None) | ('array', (elem, n)) | ('void', None)."""
        t = t.replace("struct ", "").strip()
        if t.startswith("const "):
            t = t[len("const "):].strip()
        if FNPTR.match(t) or t in self.callback_names:
            return ("fnptr", None)
        m = re.match(r"^(.*)\[(\d+)\]$", t)
        if m:
            return ("array", (m.group(1).strip(), int(m.group(2))))
        if t.endswith("*"):
            inner = t[:-1].strip()
            if inner.endswith("const"):
                inner = inner[: -len("const")].strip()
            return ("pointer", inner)
        if t == "void":
            return ("void", None)
        if t in SCALARS:
            return ("scalar", t)
        if t in self.typedefs:
            td = self.typedefs[t]
            base = td["type"]
            if base == "enum":
                base = "uint32_t" if not td.get("signed", True) else "int32_t"
            return ("scalar", base)
        if t in self.structs:
            return ("struct", t)
        raise SystemExit(f"bindgen: unknown C type {t!r}")

    def release_signature(self):
        """(return type, [parameter types]) of the release callback dlpack_tensor_create takes,
        read from its parameter's type in the manifest (for example `void(*)(void*)`)."""
        t = next(p["type"] for p in self.functions["dlpack_tensor_create"]["params"]
                 if p["name"] == "release")
        m = re.match(r"^\s*([\w ]+?)\s*\(\*\w*\)\((.*)\)\s*$", t)
        if not m:
            raise SystemExit(f"bindgen: cannot read the release callback type {t!r}")
        args = [a.strip() for a in m.group(2).split(",") if a.strip()]
        return m.group(1).strip(), [re.sub(r"\s*\*", " *", a) for a in args]

    def struct_order(self):
        """Structs in dependency order (a struct after the structs it embeds by value)."""
        done, out = set(), []

        def visit(n):
            if n in done:
                return
            done.add(n)
            for f in self.structs[n]["fields"]:
                k, v = self.resolve(f["type"])
                if k == "struct":
                    visit(v)
            out.append(n)

        for n in sorted(self.structs):
            visit(n)
        return out

    def numeric_constants(self):
        for name, c in sorted(self.constants.items()):
            if isinstance(c["value"], int):
                t = c["type"]
                k, base = ("scalar", "int32_t") if t == "int" else self.resolve(t)
                yield name, base, c["value"]

    def string_constants(self):
        for name, c in sorted(self.constants.items()):
            if isinstance(c["value"], str):
                yield name, c["value"]


def header(comment, abi):
    s = abi.spec
    return [
        f"{comment} GENERATED by examples/ffi/bindgen.py from spec/abi.toml (spec {s['version']},",
        f"{comment} library {s['library_version']}, DLPack {s['dlpack_version']}, {s['data_model']}): do not edit.",
        f"{comment} Load the library by its SONAME, {s['soname']} (the development link",
        f"{comment} libdlpack_helpers.so may be missing or a linker script).",
    ]


# ---------------------------------------------------------------- the oracle: C from the header
def gen_c_layout(abi):
    out = ["/* GENERATED by examples/ffi/bindgen.py: struct sizes and field offsets of the compiled",
           "   header, one line each, in the order every binding's layoutFacts prints them. */",
           "#include <dlpack_helpers.h>", "#include <stddef.h>", "#include <stdio.h>", "",
           "int main(void) {"]
    for n in abi.struct_order():
        out.append(f'  printf("{n} size %zu\\n", sizeof({tag(abi, n)}));')
        for f in abi.structs[n]["fields"]:
            out.append(f'  printf("{n}.{f["name"]} %zu\\n", offsetof({tag(abi, n)}, {f["name"]}));')
    out += ["  return 0;", "}"]
    return "\n".join(out) + "\n"


def tag(abi, n):
    # DLPack's own structs are typedef'd; every struct of ours too. `struct X` works for both.
    return f"struct {n}" if n.startswith("DLManaged") else n


# ---------------------------------------------------------------- JavaScript (koffi)
def js_type(abi, t, direction=None, field=False):
    k, v = abi.resolve(t)
    if k == "scalar":
        return v
    if k == "struct":
        return v
    if k == "fnptr":
        return "void *"
    if k == "array":
        return f"koffi.array({js_type(abi, v[0])!r}, {v[1]})"
    if k == "pointer":
        pk, pv = abi.resolve(v) if v != "void" else ("void", None)
        if pk == "scalar" and pv == "char" and (field or t.startswith("const")):
            return "const char *"  # read as a JS string
        if pk == "pointer" and direction == "out":
            return "_Out_ void **"  # pass [null]: receives the pointer
        if field or pk in ("void", "fnptr", "pointer"):
            return "void *"
        if pk == "struct":
            # by-reference structs: the tensor types stay opaque pointers the caller reads with
            # koffi.decode; the option and result structs are copied in and/or out as objects.
            if v.startswith("DLManaged") or v in ("DLTensor",) or v.startswith("DLPackExchange"):
                return "void *"
        base = pv if pk in ("scalar", "struct") else "void"
        if base == "char":
            return "char *" if not t.startswith("const") else "const char *"
        d = {"out": "_Out_ ", "in/out": "_Inout_ ", "inout": "_Inout_ "}.get(direction or "in", "")
        return f"{d}{base} *"
    raise SystemExit(f"bindgen js: {t}")


def gen_js(abi):
    o = header("//", abi)
    o += ["'use strict';", "const koffi = require('koffi');", "",
          f"const SONAME = {abi.spec['soname']!r};", "", "// Typedefs",
          ]
    o.append("const structs = {};")
    for n in abi.struct_order():
        fields = ", ".join(f"{f['name']}: {js_q(js_type(abi, f['type'], field=True))}"
                           for f in abi.structs[n]["fields"])
        o.append(f"structs.{n} = koffi.struct({n!r}, {{ {fields} }});")
    o += ["", "// Constants: (u)int64_t values are BigInt (as koffi reads uint64_t), the rest Number.",
          "const constants = {"]
    for name, base, val in abi.numeric_constants():
        big = base in ("int64_t", "uint64_t")  # flag words; size_t sizes stay Number
        o.append(f"  {name}: {val}{'n' if big else ''},")
    for name, val in abi.string_constants():
        o.append(f"  {name}: {val!r},")
    o += ["};", "", "// Function pointer types (koffi.register(fn, koffi.pointer(<proto>)) gives a",
          "// pointer to pass; unregister it only after the library will never call it again).",
          "const callbacks = {",
          f"  release: koffi.proto({js_release(abi)!r}),",
          "};", "", "// Prototypes: [name, return type, [parameter types]]", "const prototypes = ["]
    for name, f in sorted(abi.functions.items()):
        params = ", ".join(js_q(js_type(abi, p["type"], p["direction"])) for p in f["params"])
        o.append(f"  [{name!r}, {js_q(js_ret(abi, f['returns']))}, [{params}]],")
    o += ["];", "",
          "// Load the library (a path, or the SONAME found by the dynamic loader's search) and bind",
          "// every function: returns { fn: {name: function}, lib }.",
          "function load(path) {",
          "  const lib = koffi.load(path || SONAME);",
          "  const fn = {};",
          "  for (const [name, ret, params] of prototypes) fn[name] = lib.func(name, ret, params);",
          "  return { fn, lib };",
          "}", "",
          "// One line per struct size and field offset, as koffi lays the structs out.",
          "function layoutFacts() {",
          "  const lines = [];",
          ]
    for n in abi.struct_order():
        o.append(f"  lines.push(`{n} size ${{koffi.sizeof(structs.{n})}}`);")
        for f in abi.structs[n]["fields"]:
            o.append(f"  lines.push(`{n}.{f['name']} ${{koffi.offsetof(structs.{n}, {f['name']!r})}}`);")
    o += ["  return lines;", "}", "",
          "module.exports = { SONAME, structs, constants, callbacks, prototypes, load, layoutFacts };"]
    return "\n".join(o) + "\n"


def js_release(abi):
    ret, args = abi.release_signature()
    return f"{ret} dlpack_helpers_release_fn({', '.join(args)})"


def js_q(s):
    return s if s.startswith("koffi.") else repr(s)


def js_ret(abi, t):
    k, v = abi.resolve(t)
    if k == "scalar":
        return v
    if k == "pointer":
        return "const char *" if v == "char" else "void *"
    if k == "void":
        return "void"
    raise SystemExit(f"bindgen js: return {t}")


# ---------------------------------------------------------------- Java (FFM, java.lang.foreign)
JAVA_SCALAR = {1: "JAVA_BYTE", 2: "JAVA_SHORT", 4: "JAVA_INT", 8: "JAVA_LONG"}


def java_layout(abi, t):
    k, v = abi.resolve(t)
    if k == "scalar":
        return "JAVA_BOOLEAN" if v == "bool" else JAVA_SCALAR[SCALARS[v][0]]
    if k == "struct":
        return v
    if k in ("pointer", "fnptr"):
        return "ADDRESS"
    if k == "array":
        return f"MemoryLayout.sequenceLayout({v[1]}, {java_layout(abi, v[0])})"
    raise SystemExit(f"bindgen java: {t}")


def gen_java(abi):
    o = header("//", abi)
    o += ["package dlpackhelpers;", "", "import java.lang.foreign.*;", "import java.lang.invoke.MethodHandle;",
          "import static java.lang.foreign.ValueLayout.*;", "",
          "/** The dlpack-helpers ABI for the FFM API: layouts (padding explicit, from the manifest's",
          " *  offsets), constants and one downcall handle per function. Call {@link #load} first. */",
          "public final class DlpackHelpersAbi {",
          "  private DlpackHelpersAbi() {}",
          f"  public static final String SONAME = \"{abi.spec['soname']}\";", ""]
    for n in abi.struct_order():
        s = abi.structs[n]
        parts, pos = [], 0
        for f in s["fields"]:
            if f["offset"] > pos:
                parts.append(f"MemoryLayout.paddingLayout({f['offset'] - pos})")
            lay = java_layout(abi, f["type"])
            k, v = abi.resolve(f["type"])
            if k == "pointer" and v in abi.structs:
                pass  # an address; the pointee is read with reinterpret()
            parts.append(f"{lay}.withName(\"{f['name']}\")")
            pos = f["offset"] + f["size"]
        if s["size"] > pos:
            parts.append(f"MemoryLayout.paddingLayout({s['size'] - pos})")
        o.append(f"  public static final StructLayout {n} = MemoryLayout.structLayout(")
        o.append("      " + ",\n      ".join(parts) + f").withName(\"{n}\");")
    o += ["", "  // Constants (64-bit unsigned values are Java longs with the same bits)."]
    for name, base, val in abi.numeric_constants():
        size, signed = SCALARS[base]
        if size == 8:
            jv = val - (1 << 64) if val >= (1 << 63) else val
            o.append(f"  public static final long {name} = {jv}L;")
        else:
            o.append(f"  public static final int {name} = {val};")
    for name, val in abi.string_constants():
        o.append(f"  public static final String {name} = \"{val}\";")
    o += ["", "  /** Offset in bytes of a field: {@code off(DLTensor, \"strides\")}. */",
          "  public static long off(StructLayout s, String field) {",
          "    return s.byteOffset(MemoryLayout.PathElement.groupElement(field));",
          "  }", "",
          "  private static SymbolLookup lookup;",
          "  private static final Linker LINKER = Linker.nativeLinker();",
          "  /** Load the library (a path, or null for the SONAME) for the whole program's life. */",
          "  public static synchronized void load(String path) {",
          "    lookup = SymbolLookup.libraryLookup(path != null ? path : SONAME, Arena.global());",
          "  }",
          "  private static MethodHandle h(String name, FunctionDescriptor d) {",
          "    if (lookup == null) load(null);",
          "    return LINKER.downcallHandle(lookup.find(name).orElseThrow(), d);",
          "  }", "",
          "  /** Downcall handles, created on first use (holder classes). */"]
    for name, f in sorted(abi.functions.items()):
        args = ", ".join(java_layout(abi, p["type"]) for p in f["params"])
        k, _ = abi.resolve(f["returns"])
        if k == "void":
            d = f"FunctionDescriptor.ofVoid({args})"
        else:
            d = f"FunctionDescriptor.of({java_layout(abi, f['returns'])}{', ' if args else ''}{args})"
        o.append(f"  public static final class {name} {{ public static final MethodHandle H = h(\"{name}\", {d}); }}")
    ret, args = abi.release_signature()
    rargs = ", ".join(java_layout(abi, a) for a in args)
    rdesc = (f"FunctionDescriptor.ofVoid({rargs})" if ret == "void"
             else f"FunctionDescriptor.of({java_layout(abi, ret)}, {rargs})")
    o += ["", "  /** The release callback type of dlpack_tensor_create (an upcall stub's descriptor). */",
          f"  public static final FunctionDescriptor RELEASE_FN = {rdesc};", "",
          "  /** One line per struct size and field offset, as these layouts place them. */",
          "  public static java.util.List<String> layoutFacts() {",
          "    var l = new java.util.ArrayList<String>();"]
    for n in abi.struct_order():
        o.append(f"    l.add(\"{n} size \" + {n}.byteSize());")
        for f in abi.structs[n]["fields"]:
            o.append(f"    l.add(\"{n}.{f['name']} \" + off({n}, \"{f['name']}\"));")
    o += ["    return l;", "  }", "}"]
    return "\n".join(o) + "\n"


# ---------------------------------------------------------------- C# (P/Invoke)
CS_SCALAR = {"int8_t": "sbyte", "uint8_t": "byte", "int16_t": "short", "uint16_t": "ushort",
             "int32_t": "int", "uint32_t": "uint", "int64_t": "long", "uint64_t": "ulong",
             "int": "int", "size_t": "ulong", "bool": "byte", "char": "byte"}


def cs_type(abi, t, field=False):
    k, v = abi.resolve(t)
    if k == "scalar":
        return CS_SCALAR[v]
    if k == "struct":
        return v
    if k == "fnptr":
        return "IntPtr"
    if k == "pointer":
        if v == "void":
            return "IntPtr"
        pk, pv = abi.resolve(v)
        if pk == "fnptr" or pk == "void":
            return "IntPtr*"
        if pk == "pointer":
            inner = cs_type(abi, v)
            return inner + "*" if inner != "IntPtr" else "IntPtr*"
        return (CS_SCALAR[pv] if pk == "scalar" else pv) + "*"
    raise SystemExit(f"bindgen csharp: {t}")


def gen_csharp(abi):
    o = header("//", abi)
    o += ["using System;", "using System.Runtime.InteropServices;", "",
          "// Structs: explicit layout with the manifest's offsets and sizes; C `bool` fields are",
          "// `byte` (one byte, spec ABI-BOOL-1). Pointers inside structs are typed C# pointers.",
          "namespace DlpackHelpers {"]
    for n in abi.struct_order():
        s = abi.structs[n]
        o.append(f"  [StructLayout(LayoutKind.Explicit, Size = {s['size']})]")
        o.append(f"  public unsafe struct {n} {{")
        for f in s["fields"]:
            k, v = abi.resolve(f["type"])
            if k == "array":
                o.append(f"    [FieldOffset({f['offset']})] public fixed {CS_SCALAR[abi.resolve(v[0])[1]]} {f['name']}[{v[1]}];")
            else:
                o.append(f"    [FieldOffset({f['offset']})] public {cs_type(abi, f['type'], True)} {f['name']};")
        o.append("  }")
    o += ["", "  public static unsafe class Abi {",
          f"    public const string SONAME = \"{abi.spec['soname']}\";"]
    for name, base, val in abi.numeric_constants():
        ct = CS_SCALAR[base] if base != "bool" else "byte"
        o.append(f"    public const {ct} {name} = {val};")
    for name, val in abi.string_constants():
        o.append(f"    public const string {name} = \"{val}\";")
    ret, args = abi.release_signature()
    rret = "void" if ret == "void" else cs_type(abi, ret)
    rargs = ", ".join(f"{cs_type(abi, a)} a{i}" for i, a in enumerate(args))
    o += ["", "    /** The release callback type of dlpack_tensor_create (keep the delegate alive). */",
          "    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]",
          f"    public delegate {rret} ReleaseFn({rargs});", "",
          "    // Functions: `bool` returns and parameters are marshalled as one byte (I1)."]
    for name, f in sorted(abi.functions.items()):
        params = []
        for p in f["params"]:
            k, v = abi.resolve(p["type"])
            if k == "scalar" and v == "bool":
                params.append(f"[MarshalAs(UnmanagedType.I1)] bool {cs_name(p['name'])}")
            else:
                params.append(f"{cs_type(abi, p['type'])} {cs_name(p['name'])}")
        rk, rv = abi.resolve(f["returns"])
        attr = ""
        if rk == "void":
            ret = "void"
        elif rk == "scalar" and rv == "bool":
            ret, attr = "bool", "[return: MarshalAs(UnmanagedType.I1)] "
        elif rk == "pointer":
            ret = "IntPtr"
        else:
            ret = cs_type(abi, f["returns"])
        o.append(f"    [DllImport(SONAME, CallingConvention = CallingConvention.Cdecl)] {attr}"
                 f"public static extern {ret} {name}({', '.join(params)});")
    o += ["", "    /** One line per struct size and field offset, as the runtime lays them out. */",
          "    public static System.Collections.Generic.List<string> LayoutFacts() {",
          "      var l = new System.Collections.Generic.List<string>();"]
    for n in abi.struct_order():
        o.append(f"      l.Add(\"{n} size \" + Marshal.SizeOf(typeof({n})));")
        for f in abi.structs[n]["fields"]:
            o.append(f"      l.Add(\"{n}.{f['name']} \" + Marshal.OffsetOf(typeof({n}), \"{f['name']}\"));")
    o += ["      return l;", "    }", "  }", "}"]
    return "\n".join(o) + "\n"


# ---------------------------------------------------------------- Java (JNA)
JNA_SCALAR = {1: "byte", 2: "short", 4: "int", 8: "long"}
# Struct pointers that stay opaque `Pointer`s: tensors and tables the library or a producer owns.
JNA_OPAQUE = ("DLManagedTensor", "DLManagedTensorVersioned", "DLTensor", "DLPackExchangeAPI",
              "DLPackExchangeAPIHeader", "dlpack_helpers_stream_backend",
              "dlpack_helpers_stream_backend_ex")


def jna_field(abi, t):
    k, v = abi.resolve(t)
    if k == "scalar":
        return JNA_SCALAR[SCALARS[v][0]], ""
    if k == "struct":
        return v, f" = new {v}()"
    if k in ("pointer", "fnptr"):
        return "Pointer", ""
    if k == "array":
        e = JNA_SCALAR[SCALARS[abi.resolve(v[0])[1]][0]]
        return f"{e}[]", f" = new {e}[{v[1]}]"
    raise SystemExit(f"bindgen jna: {t}")


def jna_param(abi, p, fname):
    t = p["type"]
    k, v = abi.resolve(t)
    if k == "scalar":
        return JNA_SCALAR[SCALARS[v][0]]
    if k == "struct":
        return f"{v}.ByValue"
    if k == "fnptr":
        return "ReleaseFn" if (fname, p["name"]) == ("dlpack_tensor_create", "release") else "Pointer"
    if k == "pointer":
        if v == "void":
            return "Pointer"
        pk, pv = abi.resolve(v)
        if pk == "scalar":
            if pv == "char":
                return "String" if t.strip().startswith("const") else "byte[]"
            return JNA_SCALAR[SCALARS[pv][0]] + "[]"  # one value or an array: copied back after the call
        if pk == "struct":
            return "Pointer" if pv in JNA_OPAQUE else pv  # a Structure argument: by reference, read back
        if pk in ("pointer", "fnptr", "void"):
            return "PointerByReference" if p["direction"] == "out" else "Pointer"
    raise SystemExit(f"bindgen jna: {t}")


def gen_jna(abi):
    o = header("//", abi)
    o += ["package dlpackhelpers;", "", "import com.sun.jna.*;", "import com.sun.jna.ptr.PointerByReference;", "",
          "/** The dlpack-helpers ABI for JNA: Structures (C `bool` as `byte`; a Structure argument is",
          " *  passed by reference and read back, `.ByValue` by value), constants and the Lib interface. */",
          "public final class DlpackHelpersJna {",
          "  private DlpackHelpersJna() {}",
          f"  public static final String SONAME = \"{abi.spec['soname']}\";", ""]
    for n in abi.struct_order():
        s = abi.structs[n]
        names = ", ".join(f'"{f["name"]}"' for f in s["fields"])
        o.append(f"  @Structure.FieldOrder({{{names}}})")
        o.append(f"  public static class {n} extends Structure {{")
        for f in s["fields"]:
            jt, init = jna_field(abi, f["type"])
            o.append(f"    public {jt} {f['name']}{init};")
        o.append(f"    public {n}() {{}}")
        o.append(f"    public {n}(Pointer p) {{ super(p); read(); }}")
        o.append(f"    public static class ByValue extends {n} implements Structure.ByValue {{}}")
        o.append(f"    public static class ByReference extends {n} implements Structure.ByReference {{}}")
        o.append("    public int offsetOf(String field) { return fieldOffset(field); }")
        o.append("  }")
    o += ["", "  // Constants (64-bit unsigned values are Java longs with the same bits)."]
    for name, base, val in abi.numeric_constants():
        if SCALARS[base][0] == 8:
            o.append(f"  public static final long {name} = {val - (1 << 64) if val >= (1 << 63) else val}L;")
        else:
            o.append(f"  public static final int {name} = {val};")
    for name, val in abi.string_constants():
        o.append(f"  public static final String {name} = \"{val}\";")
    ret, args = abi.release_signature()
    rargs = ", ".join(f"Pointer a{i}" for i, _ in enumerate(args))
    o += ["", "  /** The release callback of dlpack_tensor_create: keep a strong reference to it until the",
          "   *  tensor's deleter has run (a collected Callback's native stub is freed). */",
          f"  public interface ReleaseFn extends Callback {{ {'void' if ret == 'void' else 'int'} invoke({rargs}); }}",
          "", "  /** Every function. `bool` returns are `byte` (one byte, spec ABI-BOOL-2). */",
          "  public interface Lib extends Library {"]
    for name, f in sorted(abi.functions.items()):
        params = ", ".join(f"{jna_param(abi, p, name)} {p['name']}" for p in f["params"])
        rk, rv = abi.resolve(f["returns"])
        if rk == "void":
            r = "void"
        elif rk == "scalar":
            r = JNA_SCALAR[SCALARS[rv][0]]
        elif rk == "pointer":
            r = "String" if rv == "char" else "Pointer"
        else:
            raise SystemExit(f"bindgen jna: return {f['returns']}")
        o.append(f"    {r} {name}({params});")
    o += ["  }", "",
          "  /** Load the library: a path, or null for the SONAME (found on jna.library.path or the",
          "   *  dynamic loader's search). */",
          "  public static Lib load(String path) { return Native.load(path != null ? path : SONAME, Lib.class); }", "",
          "  /** One line per struct size and field offset, as JNA lays the Structures out. */",
          "  public static java.util.List<String> layoutFacts() {",
          "    var l = new java.util.ArrayList<String>();"]
    for n in abi.struct_order():
        o.append(f"    {{ var s = new {n}(); l.add(\"{n} size \" + s.size());")
        for f in abi.structs[n]["fields"]:
            o.append(f"      l.add(\"{n}.{f['name']} \" + s.offsetOf(\"{f['name']}\"));")
        o.append("    }")
    o += ["    return l;", "  }", "}"]
    return "\n".join(o) + "\n"


def cs_name(n):
    return "@" + n if n in ("params", "out", "ref", "in", "object", "string", "base", "event", "lock") else n


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("js", "java", "csharp", "jna", "c-layout"):
        sys.exit(__doc__)
    abi = Abi(sys.argv[2])
    gen = {"js": gen_js, "java": gen_java, "csharp": gen_csharp, "jna": gen_jna, "c-layout": gen_c_layout}
    sys.stdout.write(gen[sys.argv[1]](abi))


if __name__ == "__main__":
    main()
