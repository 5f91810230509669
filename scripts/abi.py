"""The ABI baseline of libdlpack_helpers (issue 14), standard library only; run as scripts/abi.

  scripts/abi dump   [--lib SO]   print the ABI surface (below) of the header and a built library
  scripts/abi check  [--lib SO]   compare it with abi/baseline.txt (and abi/dlpack_helpers.abi)
  scripts/abi update [--lib SO]   rewrite the baseline files from the current build
  scripts/abi abidw  [--lib SO]   print the abidw description of the header (needs libabigail)

--lib defaults to sdk/lib/libdlpack_helpers.so (scripts/build lays it out). --header,
--baseline and --abigail replace include/dlpack_helpers.h, abi/baseline.txt and
abi/dlpack_helpers.abi (62-abi.sh uses them to show that the check fails when it must).

The surface (abi/baseline.txt, one fact a line, sorted):
  soname <SONAME>
  function <name> <version node> <return type>(<parameter types>)   from the header + the .so
  struct <name> size <bytes> align <bytes>; field <struct>.<name> offset <bytes> size <bytes>
  typedef <name> size <bytes> signed <0|1>                           scalar typedefs
  callback <typedef or struct.field> <return type>(*)(<parameter types>)   function pointers
  const <name> <value>                                               every numeric macro, enumerator
Sizes, offsets and values come from the C compiler (a program generated from the header); the
prototypes from the header's declarations (parameter names dropped); symbol versions from the
library's dynamic symbol table.

check: a removed or changed function, a moved symbol version, a struct whose size or field
offsets change, a changed typedef or constant value is INCOMPATIBLE: exit 1, unless the SONAME
differs from the baseline's (then the break is deliberate; refresh the baseline). New functions,
constants and structs, and fields appended to a struct that starts with `struct_size` (the
extensible-struct rule of this API), are ADDITIVE: printed, exit 0, until the baseline is
refreshed on purpose with `scripts/abi update`.

When libabigail is installed (Debian: abigail-tools), check also runs abidiff on a C translation
unit compiled from the header with -g (every function as a pointer of its type, every struct
through a pointer), against abi/dlpack_helpers.abi, and fails on anything but added symbols and
fields appended to struct_size-versioned structs (a libabigail suppression). Without it the own
dump above is the check (docs/linking.md).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "include" / "dlpack_helpers.h"
BASELINE = ROOT / "abi" / "baseline.txt"
ABIGAIL = ROOT / "abi" / "dlpack_helpers.abi"
DEFAULT_LIB = ROOT / "sdk" / "lib" / "libdlpack_helpers.so"
CC = os.environ.get("CC", "cc")
# Informational macros that change with every release, and header plumbing.
SKIP_CONST = re.compile(r"^(DLPACK_HELPERS_VERSION_\w+|\w+_H_?|DLPACK_EXTERN_C|DLPACK_DLL)$")


def rel(p):
    p = Path(p).resolve()
    return p.relative_to(ROOT) if p.is_relative_to(ROOT) else p


def sh(*cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(map(str, cmd))} failed:\n{r.stdout}{r.stderr}")
    return r.stdout


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def norm_type(t):
    t = re.sub(r"\bstruct\s+", "", t)
    t = re.sub(r"\s+", " ", t).strip()
    return re.sub(r"\s*\*\s*", "*", t)


def param_type(p):
    p = p.strip()
    if p == "void" or not p:
        return p
    if "(*" in p:  # function pointer parameter: its own parameter types, no names
        m = re.match(r"(.*?)\(\s*\*\s*\w*\s*\)\s*\((.*)\)\s*$", p, re.S)
        return f"{norm_type(m.group(1))}(*)({', '.join(param_type(q) for q in split_params(m.group(2)))})"
    p = re.sub(r"\[[^\]]*\]\s*$", "*", p)  # T name[] -> T*
    return norm_type(re.sub(r"\b\w+\s*$", "", p))


def split_params(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    return out + [cur]


def fnptr_proto(decl):
    """'ret (*name)(params)' -> 'ret(*)(param types)'."""
    return param_type(decl)


def c_branch(text):
    """The header as a C compiler sees it: drops the lines of `#ifdef __cplusplus` branches
    (up to their own #else or #endif, nested conditionals followed)."""
    out, stack = [], []  # stack: for each open conditional, whether its lines are dropped
    for line in text.splitlines():
        d = line.strip()
        if d.startswith("#if"):
            stack.append(d == "#ifdef __cplusplus" or (bool(stack) and stack[-1]))
            continue
        if d.startswith("#else") and stack:
            outer = len(stack) > 1 and stack[-2]
            if stack[-1] and not outer:
                stack[-1] = False  # the C branch of an #ifdef __cplusplus
            continue
        if d.startswith("#endif") and stack:
            stack.pop()
            continue
        if not (stack and stack[-1]):
            out.append(line)
    return "\n".join(out) + "\n"


def parse_header():
    text = strip_comments(HEADER.read_text())
    text = c_branch(text)
    funcs = {}
    for m in re.finditer(r"^([A-Za-z_][\w \t\*]*?[\s\*])(dlpack_\w+)\s*\(([^;{}]*?)\)\s*;", text, re.M):
        ret, name, params = m.groups()
        funcs[name] = f"{norm_type(ret)}({', '.join(param_type(p) for p in split_params(params))})"
    callbacks = {}  # function-pointer typedefs and fields: their prototypes are ABI too
    for m in re.finditer(r"^typedef\s+([^;{}]*?\(\s*\*\s*(\w+)\s*\)\s*\([^;{}]*\))\s*;", text, re.M):
        callbacks[m.group(2)] = fnptr_proto(m.group(1))
    structs = {}
    for m in re.finditer(r"typedef\s+struct\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        body, name = m.groups()
        fields = []
        for decl in body.split(";"):
            decl = decl.strip()
            if not decl:
                continue
            fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
            if fp:
                callbacks[f"{name}.{fp.group(1)}"] = fnptr_proto(decl)
            fields.append(fp.group(1) if fp else re.search(r"(\w+)\s*(\[[^\]]*\])?$", decl).group(1))
        structs[name] = fields
    typedefs = [m.group(2) for m in re.finditer(r"^typedef\s+((?:unsigned |signed )?\w+)\s+(\w+)\s*;", text, re.M)
                if m.group(1) not in ("struct", "enum")]
    consts = []
    for m in re.finditer(r"^#define\s+(DLPACK_\w+)[ \t]+([^\n]+)$", text, re.M):
        name, value = m.group(1), m.group(2).strip()
        if not SKIP_CONST.match(name) and not value.startswith('"'):
            consts.append(name)
    for m in re.finditer(r"typedef\s+enum\s*\w*\s*\{(.*?)\}\s*\w+\s*;", text, re.S):
        consts += re.findall(r"(\w+)\s*(?:=[^,]*)?(?:,|$)", m.group(1).strip())
    return funcs, structs, typedefs, sorted(set(c for c in consts if c)), callbacks


def layout_lines(structs, typedefs, consts, work):
    src = ["#include <stddef.h>", "#include <stdio.h>", '#include "dlpack_helpers.h"', "int main(void) {"]
    for s, fields in structs.items():
        src.append(f'  printf("struct {s} size %zu align %zu\\n", sizeof({s}), _Alignof({s}));')
        for f in fields:
            src.append(f'  printf("field {s}.{f} offset %zu size %zu\\n", offsetof({s}, {f}), sizeof((({s} *)0)->{f}));')
    for t in typedefs:
        src.append(f'  printf("typedef {t} size %zu signed %d\\n", sizeof({t}), (int)(({t})-1 < ({t})0));')
    for c in consts:
        src.append(f'  printf("const {c} %lld\\n", (long long)({c}));')
    src += ["  return 0;", "}"]
    c = Path(work) / "layout.c"
    c.write_text("\n".join(src) + "\n")
    sh(CC, "-std=c11", "-w", f"-I{HEADER.parent}", c, "-o", Path(work) / "layout")
    return sh(Path(work) / "layout").splitlines()


def exported(lib):
    out = sh("readelf", "--dyn-syms", "-W", lib)
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] in ("FUNC", "OBJECT") and f[4] in ("GLOBAL", "WEAK") and f[6] not in ("UND", "ABS"):
            name, _, ver = f[7].replace("@@", "@").partition("@")
            syms[name] = ver or "-"
    soname = re.search(r"Library soname: \[(.*?)\]", sh("readelf", "-d", lib))
    return syms, soname.group(1) if soname else "-"


def dump(lib, work):
    funcs, structs, typedefs, consts, callbacks = parse_header()
    syms, soname = exported(lib)
    lines = [f"soname {soname}"]
    problems = []
    for name in sorted(set(funcs) | set(syms)):
        if name not in syms:
            problems.append(f"{name} is declared in the header but not exported by {lib}")
        elif name not in funcs:
            problems.append(f"{name} is exported by {lib} but not declared in the header")
        else:
            lines.append(f"function {name} {syms[name]} {funcs[name]}")
    if problems:
        sys.exit("error: " + "\n       ".join(problems))
    lines += [f"callback {k} {v}" for k, v in callbacks.items()]
    lines += layout_lines(structs, typedefs, consts, work)
    return sorted(lines, key=lambda l: (l.split(" ", 1)[0] != "soname", l))


def facts(lines):
    d = {}
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        kind, name, rest = (line.split(" ", 2) + [""])[:3]
        d[(kind, name)] = rest
    return d


def extensible(d, struct):
    return d.get(("field", f"{struct}.struct_size"), "").startswith("offset 0 ")


def compare(base, cur):
    b, c = facts(base), facts(cur)
    incompatible, additive = [], []
    for key in sorted(set(b) | set(c)):
        kind, name = key
        if kind == "soname":
            continue
        old, new = b.get(key), c.get(key)
        if old == new:
            continue
        struct = name.split(".")[0]
        if old is None:
            if kind == "field" and ("struct", struct) in b \
                    and not (extensible(b, struct) and extensible(c, struct)
                                        and int(new.split()[1]) >= int(b[("struct", struct)].split()[1])):
                incompatible.append(f"field {name} added inside a struct consumers allocate ({new})")
            else:
                additive.append(f"+ {kind} {name} {new}")
        elif new is None:
            incompatible.append(f"- {kind} {name} {old} (removed)")
        elif kind == "struct" and extensible(b, name) and extensible(c, name) \
                and int(new.split()[1]) > int(old.split()[1]) and new.split()[3] == old.split()[3] \
                and all(c.get(k) == v for k, v in b.items() if k[0] == "field" and k[1].startswith(name + ".")):
            additive.append(f"~ struct {name}: {old} -> {new} (appended fields, struct_size-versioned)")
        else:
            incompatible.append(f"~ {kind} {name}: {old} -> {new}")
    return incompatible, additive


def abigail_surface(lib_soname, work):
    """A shared object compiled from the header with -g: every function as a pointer variable of
    its exact type, every struct through a pointer variable, so abidw describes all of them."""
    funcs, structs, _, _, _ = parse_header()
    src = ['#include "dlpack_helpers.h"']
    src += [f"__typeof__(&{f}) dlpack_helpers_abi_fn_{f};" for f in sorted(funcs)]
    # Through pointers: a struct's layout is described, not a variable's size (which would hide
    # the appended-fields rule below behind a symbol size change).
    src += [f"{s} *dlpack_helpers_abi_type_{s};" for s in sorted(structs)]
    c = Path(work) / "surface.c"
    c.write_text("\n".join(src) + "\n")
    so = Path(work) / "surface.so"
    # -fdebug-prefix-map: the description names surface.c, never the temporary folder it was built in.
    sh(CC, "-std=gnu11", "-g", "-O0", f"-fdebug-prefix-map={work}=.", "-shared", "-fPIC", f"-I{HEADER.parent}", f"-Wl,-soname,{lib_soname}", c, "-o", so)
    xml = Path(work) / "surface.abi"
    xml.write_text(sh("abidw", "--no-corpus-path", "--no-comp-dir-path", "--no-show-locs", so))
    return xml


def main():
    args = sys.argv[1:]
    if not args or args[0] not in ("dump", "check", "update", "abidw"):
        sys.exit(__doc__)
    cmd = args[0]
    opt = lambda name, default: Path(args[args.index(name) + 1]) if name in args else default
    global HEADER, BASELINE, ABIGAIL
    lib = opt("--lib", DEFAULT_LIB)
    # For the check's own tests (62-abi.sh): another header, other baseline files.
    HEADER, BASELINE, ABIGAIL = opt("--header", HEADER), opt("--baseline", BASELINE), opt("--abigail", ABIGAIL)
    if not lib.exists():
        sys.exit(f"error: {lib} not found: run scripts/build first")
    work = tempfile.mkdtemp()
    try:
        if cmd == "abidw":  # the libabigail description of a header alone (62-abi.sh's own tests)
            print(abigail_surface(exported(lib)[1], work).read_text(), end="")
            return
        cur = dump(lib, work)
        soname = cur[0].split(" ", 1)[1]
        have_abigail = shutil.which("abidw") and shutil.which("abidiff")
        if cmd == "dump":
            print("\n".join(cur))
        elif cmd == "update":
            BASELINE.write_text(
                "# ABI baseline of libdlpack_helpers: written by `scripts/abi update`, checked by\n"
                "# scripts/test.d/62-abi.sh. Refresh on purpose after an additive change (or with a new SONAME).\n"
                + "\n".join(cur) + "\n")
            print(f"wrote {rel(BASELINE)} ({len(cur)} facts)")
            if have_abigail:
                shutil.copy(abigail_surface(soname, work), ABIGAIL)
                print(f"wrote {rel(ABIGAIL)} (abidw)")
            else:
                print(f"note: abidw not installed (Debian: abigail-tools): {rel(ABIGAIL)} left as it was")
        else:
            base = BASELINE.read_text().splitlines()
            base_soname = next((l.split(" ", 1)[1] for l in base if l.startswith("soname ")), "-")
            incompatible, additive = compare(base, cur)
            n = sum(1 for l in cur if l and not l.startswith("#"))
            print(f"-- own dump: {n} facts (functions with versions and prototypes, struct sizes and "
                  f"offsets, typedefs, constants) against {rel(BASELINE)}")
            for line in additive:
                print(f"   ADDITIVE {line}")
            for line in incompatible:
                print(f"   INCOMPATIBLE {line}")
            failed = False
            if incompatible and soname == base_soname:
                print(f"FAIL: {len(incompatible)} incompatible change(s) with the same SONAME {soname}: "
                      "keep the old ABI, or change the SONAME (the version in Cargo.toml) and run scripts/abi update")
                failed = True
            elif incompatible:
                print(f"   the SONAME changed ({base_soname} -> {soname}): incompatible changes are allowed; "
                      "run scripts/abi update to record the new ABI")
            if additive:
                print(f"   {len(additive)} additive change(s) not in the baseline yet: run scripts/abi update "
                      "to record them (and commit abi/)")
            if have_abigail:
                if not ABIGAIL.exists():
                    print(f"FAIL: {rel(ABIGAIL)} missing: run scripts/abi update")
                    failed = True
                else:
                    xml = abigail_surface(soname, work)
                    # The same rule as the own dump: fields appended to a struct that starts with
                    # struct_size are additive (libabigail's has_data_member_inserted_at = end).
                    supp = Path(work) / "extensible.suppr"
                    supp.write_text("".join(
                        f"[suppress_type]\n  name = {name}\n  has_data_member_inserted_at = end\n\n"
                        for (kind, name) in facts(base) if kind == "struct" and extensible(facts(base), name)))
                    strict = subprocess.run(["abidiff", "--no-added-syms", "--suppressions", str(supp),
                                             str(ABIGAIL), str(xml)], capture_output=True, text=True)
                    full = subprocess.run(["abidiff", str(ABIGAIL), str(xml)], capture_output=True, text=True)
                    if strict.returncode == 0:
                        print(f"-- abidiff (libabigail) against {rel(ABIGAIL)}: "
                              + ("no change" if full.returncode == 0 else "additive changes only"))
                        if full.returncode != 0:
                            print("   " + full.stdout.strip().replace("\n", "\n   "))
                    else:
                        print(f"-- abidiff (libabigail) against {rel(ABIGAIL)}: exit {strict.returncode}")
                        print("   " + strict.stdout.strip().replace("\n", "\n   "))
                        if soname == base_soname:
                            print("FAIL: abidiff reports a change other than added symbols, with the same SONAME")
                            failed = True
            else:
                print("-- abidiff: skipped (libabigail not installed; Debian package abigail-tools): "
                      "the own dump above is the check")
            if failed:
                sys.exit(1)
            print("ABI check passed")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
