"""The specification's manifest, spec/abi.toml, and its checker (issue 32). Standard library only
(tomllib; on Python 3.10 the `tomli` package of scripts/requirements.txt). Run as scripts/spec.

  scripts/spec check [--manifest-only]   check the manifest against the built library, the header
                                         and the pages of spec/ (exit 1 on any finding)
  scripts/spec sync [--retire]           rewrite spec/abi.toml: the facts from the header and the
                                         library, the semantic fields from spec/functions/*.md;
                                         add new IDs to spec/requirement-ids.txt (--retire: mark
                                         the committed IDs defined nowhere any more retired)

Options (both commands; 07-spec.sh uses them to show that the check fails when it must):
  --lib SO          the built library (default: the newer of sdk/lib/libdlpack_helpers.so, which
                    scripts/build lays out, and target/release/libdlpack_helpers.so)
  --header H        the header (default include/dlpack_helpers.h)
  --spec DIR        the specification folder (default spec/)
  --manifest FILE   the manifest (default DIR/abi.toml)

What the manifest holds, and where each field comes from (`sync`):
  [spec]           the spec version (2026.12, at run time 202612) and the library version
  [profiles.*]     the four profiles (conformance classes), each with its bit of
                   dlpack_helpers_info.profiles and its DLPACK_HELPERS_PROFILE_* constant
  [functions.*]    every exported function. From the header: returns, prototype, each
                   parameter's name and C type; from the library: symbol_version. From its page
                   spec/functions/<name>.md: profile, since, status, each parameter's direction
                   (in, out, in/out), nullable and ownership (borrowed, consumed, produced,
                   value), requirements (the IDs the page defines, in order; caller_requirements
                   and untestable_requirements: those tagged [caller] and [impl, untestable: ..],
                   which the conformance suite does not test), must_report and may_report
                   (statuses; DLPACK_HELPERS_STATUS_OK is implied for a function that returns
                   dlpack_helpers_status and not listed), thread_safety (atomic, shared, distinct,
                   compatible, incompatible) and side_effects (the page's text). Before a page
                   exists, the header's doc comments give a draft (`@param[..] x May be NULL`,
                   `@retval`), the semantic fields without a source stay empty, and `page`
                   is false.
  [structs.*]      every struct of the header, DLPack's own included (origin = "dlpack"): size,
                   align and each field's C type, offset and size, as the C compiler lays them
                   out (LP64: x86_64 and aarch64 Linux)
  [typedefs.*]     scalar and enum typedefs: C type, size, signedness
  [callbacks.*]    function-pointer typedefs and fields: their prototypes
  [constants.*]    every numeric macro and enumerator: its C type (the type of the field or
                   parameter it is meant for, from the Rust declaration; `int` for a plain
                   preprocessor flag) and its value in that type, never sign-extended: a uint64_t
                   bit 63 is 9223372036854775808. String macros (capsule names) have type
                   "const char[]" and their text.

check: (library) every exported function is in the manifest and every manifest function is
exported, in the manifest's symbol version when the library has versions; (header) prototypes,
parameter names and types, struct layouts, typedefs, callbacks and constants equal the
manifest's; (--manifest-only stops here) (pages) spec/functions/<name>.md exists for every
function, with the ten headings in order and a parseable header line and parameter table;
requirement lines parse; each requirement ID is defined once across spec/ (fenced code and
FORMAT.md excluded), on a function page as <GROUP>-<KEY>-n of that function and profile; every
defined ID is `active` in spec/requirement-ids.txt, every registry ID no longer defined is
`retired`, and a retired ID is never defined again; the manifest's per-function semantic fields
equal the page's; every function of FORMAT.md's profile lists is in that profile and every
manifest function in one of them.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import abi  # noqa: E402  (scripts/abi.py: header parsing, the C layout program, readelf)

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        sys.exit("error: Python 3.10 needs the `tomli` package (scripts/requirements.txt; run in .venv)")

ROOT = abi.ROOT
SPEC_VERSION = "2026.12"
SPEC_VERSION_NUMBER = 202612
PROFILES = {  # name: (bit, requirement-ID group)
    "core": (1, "CORE"),
    "streams": (2, "STREAMS"),
    "python": (4, "PY"),
    "exchange": (8, "EXCH"),
}
PROFILE_DESCRIPTIONS = {
    "core": "release, versions and negotiation, device and host-access queries, info, errors, "
            "validation, layout, names, conversion, create",
    "streams": "stream encodings and waits, and every query that calls a device driver",
    "python": "capsules, __dlpack__ import and export, Python errors (needs CPython in the process)",
    "exchange": "the DLPackExchangeAPI table of DLPack 1.3: lookup and conformance of any producer's table",
}
HEADINGS = ["Synopsis", "Parameters", "Requirements", "Statuses", "After failure", "Thread safety",
            "Side effects", "Rationale", "Motivating faults", "Since"]
LEVELS = ("atomic", "shared", "distinct", "compatible", "incompatible")
DIRECTIONS = ("in", "out", "in/out")
OWNERSHIPS = ("borrowed", "consumed", "produced", "value")
CHAPTER_GROUPS = ("ABI", "OWN", "VER", "CONF", "EXCH")
ID_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+-([1-9][0-9]*)$")
REQ_LINE = re.compile(r"^- \*\*(?P<id>[^*]+)\*\* \[(?P<tag>impl|caller|impl, untestable: [^\]]+)\] (?P<text>\S.*)$")
REQ_START = re.compile(r"^\s*[-*] \*\*[A-Z][A-Z0-9]*-[A-Z0-9-]*\*\*")
# Library-version macros change with every release and are reported by dlpack_get_info; header
# plumbing is no constant of the API.
SKIP_CONST = re.compile(r"^(DLPACK_HELPERS_VERSION_(MAJOR|MINOR|PATCH|STRING|NUMBER)|\w+_H_?|DLPACK_EXTERN_C|DLPACK_DLL)$")
RUST_TYPES = {"u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t", "i8": "int8_t",
              "i16": "int16_t", "i32": "int32_t", "i64": "int64_t", "usize": "size_t", "isize": "ptrdiff_t"}
# Constants the header defines in C (the DLPack ABI block): the type of what they are used with.
C_CONST_TYPES = {"DLPACK_FLAG_BITMASK_": "uint64_t", "DLPACK_MAJOR_VERSION": "uint32_t",
                 "DLPACK_MINOR_VERSION": "uint32_t"}
DLPACK_OWN = re.compile(r"^(DL|kDL)")


# ---------------------------------------------------------------- the header and the library

def ctype(t):
    """A C type as the manifest writes it: no `struct` keyword, one space before each `*`."""
    t = re.sub(r"\bstruct\s+", "", t)
    t = re.sub(r"\s+", " ", t).strip()
    t = re.sub(r"\s*\*", " *", t)
    return t.replace("* *", "**").replace("* *", "**")


# The element sizes of the inline array fields the header may have (LP64, as the manifest).
ARRAY_ELEMENT_SIZES = {"char": 1, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
                       "uint32_t": 4, "int64_t": 8, "uint64_t": 8, "size_t": 8}


def field_type(t, size):
    """A field's manifest type: an inline array `T[]` of the header parse becomes `T[N]`, N from
    the compiler's size of the field."""
    return f"{t[:-2]}[{size // ARRAY_ELEMENT_SIZES[t[:-2]]}]" if t.endswith("[]") else t


def split_decl(p):
    """'const DLTensor *tensor' -> ('const DLTensor *', 'tensor'); function pointers kept whole."""
    p = p.strip()
    if p in ("void", ""):
        return None
    if "(*" in p:
        m = re.match(r"(.*?)\(\s*\*\s*(\w*)\s*\)\s*\((.*)\)\s*$", p, re.S)
        return abi.param_type(p), m.group(2)
    arr = re.search(r"\[[^\]]*\]\s*$", p)
    if arr:
        p = p[:arr.start()]
        m = re.match(r"(.*?)(\w+)\s*$", p, re.S)
        return ctype(m.group(1)) + " *", m.group(2)
    m = re.match(r"(.*?)(\w+)\s*$", p, re.S)
    return ctype(m.group(1)), m.group(2)


def parse_header_full(header):
    """Functions (return type, parameters with names, doc comment), struct field types, enum
    typedefs, string macros and the constants with their C expressions."""
    raw = abi.c_branch(header.read_text())
    funcs = {}
    for m in re.finditer(r"(/\*\*(?:(?!\*/).)*\*/)?\s*^([A-Za-z_][\w \t\*]*?[\s\*])(dlpack_\w+)\s*\(([^;{}]*?)\)\s*;",
                         raw, re.M | re.S):
        doc, ret, name, params = m.groups()
        plist = [split_decl(abi.strip_comments(p)) for p in abi.split_params(params)]
        funcs[name] = {"returns": ctype(ret), "params": [p for p in plist if p], "doc": doc or ""}
    text = abi.strip_comments(raw)
    fields = {}
    for m in re.finditer(r"typedef\s+struct\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        body, name = m.groups()
        out = []
        for decl in body.split(";"):
            decl = decl.strip()
            if decl:
                arr = re.search(r"\[[^\]]*\]\s*$", decl)
                if arr and "(*" not in decl:
                    # An inline array field (dlpack_helpers_error.message): `T[]` here, the
                    # element count filled in from the compiler's field size in build(); a
                    # parameter's array decays to a pointer (split_decl), a field's does not.
                    m2 = re.match(r"(.*?)(\w+)\s*$", decl[:arr.start()], re.S)
                    out.append((ctype(m2.group(1)) + "[]", m2.group(2)))
                else:
                    out.append(split_decl(decl))
        fields[name] = out
    enums = re.findall(r"typedef\s+enum\s*(?::\s*\w+\s*)?\w*\s*\{[^}]*\}\s*(\w+)\s*;", text)
    enumerators = {}
    for m in re.finditer(r"typedef\s+enum\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        for e in re.findall(r"(\w+)\s*(?:=[^,]*)?(?:,|$)", m.group(1).strip()):
            if e:
                enumerators[e] = m.group(2)
    strings = {}
    for m in re.finditer(r'^#define\s+(DLPACK_\w+)[ \t]+"([^"\n]*)"\s*$', text, re.M):
        strings[m.group(1)] = m.group(2)
    scalar_typedefs = {m.group(2): ctype(m.group(1)) for m in re.finditer(
        r"^typedef\s+((?:unsigned |signed )?\w+)\s+(\w+)\s*;", text, re.M) if m.group(1) not in ("struct", "enum")}
    return funcs, fields, enums, enumerators, strings, scalar_typedefs


def rust_const_types():
    """`pub const DLPACK_HELPERS_X: T = ...;` in src/: X -> the C type of T."""
    types = {}
    for f in (ROOT / "src").rglob("*.rs"):
        for m in re.finditer(r"pub const (DLPACK_HELPERS_\w+)\s*:\s*([\w:]+)\s*=", f.read_text()):
            t = m.group(2).split("::")[-1]
            types[m.group(1)] = RUST_TYPES.get(t, t)
    return types


def doc_facts(doc):
    """`@param[in|out|in,out] name May be NULL.` and `@retval STATUS` lines of a doc comment."""
    params, retvals = {}, []
    for m in re.finditer(r"@param\[(in|out|in,\s*out)\]\s+(\w+)\s*([^\n]*)", doc):
        d = "in/out" if "," in m.group(1) else m.group(1)
        params[m.group(2)] = (d, "may be null" in m.group(3).lower())
    for m in re.finditer(r"@retval\s+(DLPACK_HELPERS_STATUS_\w+)", doc):
        retvals.append(m.group(1))
    return params, retvals


def default_lib():
    sdk = ROOT / "sdk" / "lib" / "libdlpack_helpers.so"
    rel = ROOT / "target" / "release" / "libdlpack_helpers.so"
    # The newer of the two: a stale sdk/ (scripts/build not rerun) must not hide the build.
    found = [p for p in (sdk, rel) if p.exists()]
    if not found:
        return rel
    return max(found, key=lambda p: p.resolve().stat().st_mtime)


class Facts:
    """What the header, the C compiler and the library say."""

    def __init__(self, header, lib):
        abi.HEADER = header
        self.header, self.lib = header, lib
        (self.funcs, self.fields, self.enums, self.enumerators, self.strings,
         self.scalar_typedefs) = parse_header_full(header)
        afuncs, astructs, atypedefs, aconsts, self.callbacks = abi.parse_header()
        self.protos = afuncs  # normalized (types only), as abi/baseline.txt writes them
        # Every numeric macro (abi.py's list leaves out all DLPACK_HELPERS_VERSION_* names, the
        # version-comparison results DLPACK_HELPERS_VERSION_EXACT/OLDER_MINOR/NEWER_MINOR too).
        text = abi.strip_comments(abi.c_branch(header.read_text()))
        macros = [m.group(1) for m in re.finditer(r"^#define\s+(DLPACK_\w+)[ \t]+([^\n]+)$", text, re.M)
                  if not m.group(2).strip().startswith('"')]
        consts = sorted(set(aconsts) | set(macros) | set(self.enumerators))
        self.const_names = [c for c in consts if not SKIP_CONST.match(c) and c not in self.strings]
        work = tempfile.mkdtemp()
        try:
            self.layout = self._layout(astructs, list(atypedefs) + self.enums, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        self.exports, self.soname = abi.exported(lib) if lib.exists() else ({}, "-")

    def _layout(self, structs, typedefs, work):
        lines = abi.layout_lines(structs, typedefs, [], work)
        out = {"struct": {}, "field": {}, "typedef": {}}
        for l in lines:
            f = l.split()
            if f[0] == "struct":
                out["struct"][f[1]] = (int(f[3]), int(f[5]))
            elif f[0] == "field":
                out["field"][f[1]] = (int(f[3]), int(f[5]))
            elif f[0] == "typedef":
                out["typedef"][f[1]] = (int(f[3]), f[5] == "1")
        return out

    def constant_values(self, typed, work):
        """{name: value} with each constant converted to its manifest type (never sign-extended
        unless the type is signed); strings as text."""
        src = ["#include <stdio.h>", "#include <string.h>", '#include "dlpack_helpers.h"', "int main(void) {"]
        for name, t in typed.items():
            if t == "const char[]":
                src.append(f'  printf("str {name} %s\\n", {name});')
                continue
            src.append(f"  {{ {t} v = ({t})({name});")
            src.append(f'    if ((v > 0) != (({name}) > 0) || (long double)v != (long double)({name})) '
                       f'printf("bad {name} does not fit in {t}\\n");')
            src.append(f"    if (({t})-1 < ({t})0) printf(\"val {name} %lld\\n\", (long long)v);")
            src.append(f'    else printf("val {name} %llu\\n", (unsigned long long)v); }}')
        src += ["  return 0;", "}"]
        c = Path(work) / "consts.c"
        c.write_text("\n".join(src) + "\n")
        abi.sh(abi.CC, "-std=c11", "-w", f"-I{self.header.parent}", c, "-o", Path(work) / "consts")
        vals, bad = {}, []
        for l in abi.sh(Path(work) / "consts").splitlines():
            kind, name, rest = l.split(" ", 2)
            if kind == "bad":
                bad.append(f"constant {name} {rest}")
            elif kind == "str":
                vals[name] = rest
            else:
                vals[name] = int(rest)
        return vals, bad

    def const_types(self):
        rust = rust_const_types()
        out = {}
        for c in self.const_names:
            if c in self.enumerators:
                out[c] = self.enumerators[c]
            elif c in rust:
                out[c] = rust[c]
            else:
                out[c] = next((t for p, t in C_CONST_TYPES.items() if c.startswith(p)), "int")
        for s in self.strings:
            if not SKIP_CONST.match(s):
                out[s] = "const char[]"
        return out


# ---------------------------------------------------------------- the pages

class Page:
    def __init__(self, path):
        self.path = path
        self.text = path.read_text()
        self.errors = []
        self.sections = {}
        self.headings = []
        lines = self.text.splitlines()
        self.title = lines[0][2:].strip() if lines and lines[0].startswith("# ") else None
        cur = None
        fence = False
        for line in lines:
            if line.startswith("```"):
                fence = not fence
            if not fence and line.startswith("## "):
                cur = line[3:].strip()
                self.headings.append(cur)
                self.sections[cur] = []
            elif cur:
                self.sections[cur].append(line)
        m = re.search(r"^Profile:\s*(\w+)\s*·\s*Since:\s*(\S+)(?:\s*\(library ([^)]+)\))?\s*·\s*Status:\s*(\w+)",
                      self.text, re.M)
        self.profile, self.since, self.library_since, self.status = m.groups() if m else (None,) * 4

    def section(self, name):
        return "\n".join(self.sections.get(name, []))

    def table(self, name, start=0):
        """Rows (lists of cells) of the tables of a section."""
        rows = []
        for line in self.sections.get(name, []):
            if line.startswith("|") and not re.match(r"^\|\s*-", line):
                rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        return rows

    def params(self):
        rows = self.table("Parameters")
        if not rows:
            return []
        head = [c.lower() for c in rows[0]]
        want = ["name", "direction", "nullable", "ownership", "valid values"]
        if head != want:
            self.errors.append(f"Parameters table columns are {head}, not {want}")
            return []
        out = []
        for r in rows[1:]:
            if len(r) < 4:
                self.errors.append(f"Parameters row {r} has too few cells")
                continue
            name = r[0].strip("`")
            if r[1] not in DIRECTIONS:
                self.errors.append(f"parameter {name}: direction {r[1]!r} is not one of {DIRECTIONS}")
            if r[2] not in ("yes", "no"):
                self.errors.append(f"parameter {name}: nullable {r[2]!r} is not yes or no")
            if r[3] not in OWNERSHIPS:
                self.errors.append(f"parameter {name}: ownership {r[3]!r} is not one of {OWNERSHIPS}")
            out.append({"name": name, "direction": r[1], "nullable": r[2] == "yes", "ownership": r[3]})
        return out

    def statuses(self, known):
        """(must, may, must_refs, may_refs): the status names of the Statuses section's two
        tables. A name is written in full, or without its `DLPACK_HELPERS_STATUS_` prefix, or as
        `_X` after a full name (the same family: `DLPACK_HELPERS_STATUS_INVALID_NDIM`, `_NULL_SHAPE`).
        A status cell that names a function ("every other status of `dlpack_f`'s MUST table")
        refers to f's table: MAY when it says MAY or "second", else MUST (the refs)."""
        must, may, which = [], [], None
        refs = {id(must): [], id(may): []}
        for line in self.sections.get("Statuses", []):
            low = line.lower()
            if low.startswith("must report"):
                which = must
            elif low.startswith("may report"):
                which = may
            elif which is not None and line.startswith("|") and not re.match(r"^\|\s*-", line):
                cell = line.strip().strip("|").split("|")[0]
                if cell.strip().lower() == "status":
                    continue
                ref = re.search(r"`(dlpack_\w+)`", cell)
                if ref:  # "every other status of `dlpack_f`'s MUST table" (or "the first table of")
                    table = "may" if re.search(r"\bMAY\b|second", cell) else \
                        "must" if re.search(r"\bMUST\b|first", cell) else ("must" if which is must else "may")
                    refs[id(which)].append((ref.group(1), table))
                prev = None
                for tok in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", cell):
                    name = tok
                    if tok.startswith("_") and prev:
                        parts = prev.split("_")
                        name = next(("_".join(parts[:k]) + tok for k in range(len(parts) - 1, 0, -1)
                                     if "_".join(parts[:k]) + tok in known), None)
                        if name is None:
                            self.errors.append(f"Statuses: `{tok}` after `{prev}` names no known constant")
                            continue
                    elif "DLPACK_HELPERS_STATUS_" + tok in known:
                        name = "DLPACK_HELPERS_STATUS_" + tok
                    elif not tok.startswith("DLPACK_HELPERS_STATUS_") or tok == "DLPACK_HELPERS_STATUS_":
                        continue  # a word in backticks that is no status (e.g. `NULL`, `out`)
                    if name not in known:
                        self.errors.append(f"Statuses: `{name}` is no constant of the header")
                        continue
                    prev = name
                    if name != "DLPACK_HELPERS_STATUS_OK" and name not in which:
                        which.append(name)
        return must, may, refs[id(must)], refs[id(may)]

    def requirements(self):
        """[(line number, ID, tag)] of requirement lines outside fenced code; malformed ones as errors."""
        return parse_requirements(self.text, abi.rel(self.path), self.errors)

    def level(self):
        m = re.search(r"Level:\s*\**`?\s*(\w+)", self.section("Thread safety"))
        return m.group(1) if m else ""

    def side_effects(self):
        t = " ".join(self.section("Side effects").split())
        return re.sub(r"^\(normative\)\s*", "", t)


def load_pages(spec):
    fdir = spec / "functions"
    return {p.stem: Page(p) for p in sorted(fdir.glob("*.md"))} if fdir.exists() else {}


def resolved_statuses(name, pages, known, seen=()):
    """(must, may) of a function's page with the referred tables of other pages merged in."""
    page = pages.get(name)
    if page is None or name in seen:
        return [], []
    must, may, mref, yref = page.statuses(known)
    must, may = list(must), list(may)
    for refs, into in ((mref, must), (yref, may)):
        for other, table in refs:
            if other not in pages:
                page.errors.append(f"Statuses: refers to `{other}`'s {table.upper()} table, but {other} has no page")
            om, oy = resolved_statuses(other, pages, known, seen + (name,))
            into += [s for s in (om if table == "must" else oy) if s not in into]
    return must, may


def parse_requirements(text, path, errors):
    out, fence = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        m = REQ_LINE.match(line)
        if m:
            rid = m.group("id")
            if not ID_RE.match(rid):
                errors.append(f"{path}:{n}: requirement ID {rid!r} is not <GROUP>-<KEY>-n (upper case, n from 1)")
            out.append((n, rid, m.group("tag")))
        elif REQ_START.match(line):
            errors.append(f"{path}:{n}: a requirement line that does not parse (want "
                          "`- **ID** [impl|caller|impl, untestable: reason] text`): {line[:90]}")
    return out


def format_profiles(spec):
    """FORMAT.md's `## Profiles` lists: {function: profile}."""
    f = spec / "FORMAT.md"
    if not f.exists():
        return {}
    text = f.read_text()
    m = re.search(r"^## Profiles[^\n]*\n(.*?)(?=^## )", text, re.M | re.S)
    out, cur = {}, None
    for line in (m.group(1) if m else "").splitlines():
        h = re.match(r"^- (core|streams|python|exchange)\b", line)
        if h:
            cur = h.group(1)
        elif not line.startswith(" "):
            cur = None
        if cur:
            line = re.sub(r"\(plus.*", "", line)  # exchange's note on EXCH-TABLE-n
            for name in re.findall(r"\b(dlpack_\w+)", line):
                out.setdefault(name, []).append(cur)
    return out


def id_group_key(name, profile):
    return f"{PROFILES[profile][1]}-{name[len('dlpack_'):].upper().replace('_', '-')}"


# ---------------------------------------------------------------- the manifest

def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def toml_val(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return toml_str(v)
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_val(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        if not v:
            return "[]"
        if all(isinstance(x, dict) for x in v) or sum(len(toml_val(x)) for x in v) > 70:
            return "[\n" + "".join(f"  {toml_val(x)},\n" for x in v) + "]"
        return "[" + ", ".join(toml_val(x) for x in v) + "]"
    raise TypeError(v)


def toml_key(k):
    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else toml_str(k)


def write_manifest(path, m):
    out = ["# The DLPack helper API's manifest: every exported function, struct, typedef, callback and",
           "# constant, machine-readable (spec/FORMAT.md; the fields are explained in scripts/spec.py).",
           "# `scripts/spec sync` writes it from the header, the library and spec/functions/*.md; review the",
           "# diff and commit it. `scripts/spec check` (scripts/test.d/07-spec.sh) fails when the library,",
           "# the header or a page says otherwise. Sizes and offsets are LP64 (x86_64, aarch64 Linux).", ""]
    for section in ("spec", ):
        out.append(f"[{section}]")
        out += [f"{k} = {toml_val(v)}" for k, v in m[section].items()]
        out.append("")
    for group in ("profiles", "functions", "structs", "typedefs", "callbacks", "constants"):
        for name, body in m[group].items():
            if group == "constants" or group == "callbacks":
                continue
            out.append(f"[{group}.{toml_key(name)}]")
            out += [f"{k} = {toml_val(v)}" for k, v in body.items()]
            out.append("")
        if group in ("callbacks", "constants"):
            out.append(f"[{group}]")
            out += [f"{toml_key(k)} = {toml_val(v)}" for k, v in m[group].items()]
            out.append("")
    path.write_text("\n".join(out).rstrip("\n") + "\n")


def load_manifest(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def c_decl(t, name):
    """A declaration of `name` with the manifest's C type `t`."""
    if "(*)" in t:
        return t.replace("(*)", f"(*{name})", 1)
    return f"{t}{name}" if t.endswith("*") else f"{t} {name}"


def draft_params(name, params, doc_params):
    out = []
    for t, pname in params:
        d, nullable = doc_params.get(pname, (None, False))
        ptr = "*" in t or "(*)" in t
        if d is None:
            d = "out" if pname.startswith("out_") else "in"
        if not ptr:
            own = "value"
        elif d == "out":
            own = "produced" if t.endswith("**") and "Tensor" in t else "value"
        elif name.endswith("_delete"):
            own = "consumed"
        else:
            own = "borrowed"
        out.append({"name": pname, "type": t, "direction": d, "nullable": nullable, "ownership": own})
    return out


def build(args):
    """The manifest from the facts, the existing manifest and the pages."""
    facts = Facts(args.header, args.lib)
    old = load_manifest(args.manifest) if args.manifest.exists() else {}
    old_funcs = old.get("functions", {})
    fmt = format_profiles(args.spec)
    pages = load_pages(args.spec)
    m = {"spec": {"version": SPEC_VERSION, "version_number": SPEC_VERSION_NUMBER,
                  "version_constant": "DLPACK_HELPERS_SPEC_VERSION",
                  "discovery": "dlpack_get_info: dlpack_helpers_info.spec_version and .profiles",
                  "library": "dlpack-helpers", "library_version": cargo_version(),
                  "header": "dlpack_helpers.h", "soname": facts.soname, "data_model": "LP64",
                  "dlpack_version": "1.3"}}
    m["profiles"] = {p: {"bit": b, "constant": f"DLPACK_HELPERS_PROFILE_{p.upper()}",
                         "id_group": g, "page": f"profiles/{p}.md", "covers": PROFILE_DESCRIPTIONS[p]}
                     for p, (b, g) in PROFILES.items()}
    known = set(facts.const_names)
    funcs = {}
    for name in sorted(facts.funcs):
        f = facts.funcs[name]
        doc_params, retvals = doc_facts(f["doc"])
        page = pages.get(name)
        prev = old_funcs.get(name, {})
        profile = (page.profile if page and page.profile in PROFILES else None) \
            or (fmt.get(name, [None])[0]) or prev.get("profile", "")
        params = draft_params(name, f["params"], doc_params)
        e = {"profile": profile, "since": SPEC_VERSION, "library_since": "0.1.0", "status": "stable",
             # An unversioned build (cargo's target/release) says "-": keep what a versioned
             # one (scripts/build's sdk/) recorded.
             "symbol_version": (facts.exports.get(name) if facts.exports.get(name, "-") != "-"
                                else prev.get("symbol_version", "-")),
             "returns": f["returns"],
             "prototype": f"{f['returns']} {name}({', '.join(c_decl(p['type'], p['name']) for p in params) or 'void'});",
             "page": page is not None,
             "thread_safety": "", "side_effects": "", "requirements": [], "caller_requirements": [],
             "untestable_requirements": [],
             "must_report": [s for s in dict.fromkeys(retvals) if s != "DLPACK_HELPERS_STATUS_OK"],
             "may_report": [], "params": params}
        if page:
            e["since"] = page.since or SPEC_VERSION
            e["library_since"] = page.library_since or "0.1.0"
            e["status"] = page.status or "stable"
            e["thread_safety"] = page.level()
            e["side_effects"] = page.side_effects()
            reqs = page.requirements()
            e["requirements"] = [rid for _, rid, _ in reqs]
            e["caller_requirements"] = [rid for _, rid, tag in reqs if tag == "caller"]
            e["untestable_requirements"] = [rid for _, rid, tag in reqs if tag.startswith("impl, untestable")]
            e["must_report"], e["may_report"] = resolved_statuses(name, pages, known)
            pp = {p["name"]: p for p in page.params()}
            for p in params:
                if p["name"] in pp:
                    p.update({k: pp[p["name"]][k] for k in ("direction", "nullable", "ownership")})
        funcs[name] = e
    order = list(PROFILES)
    m["functions"] = dict(sorted(funcs.items(), key=lambda kv: (
        order.index(kv[1]["profile"]) if kv[1]["profile"] in order else 9, kv[0])))
    structs = {}
    for s, fl in facts.fields.items():
        size, align = facts.layout["struct"][s]
        fields = []
        for t, fname in fl:
            off, fsize = facts.layout["field"][f"{s}.{fname}"]
            t = field_type(t, fsize)
            fields.append({"name": fname, "type": t, "offset": off, "size": fsize})
        structs[s] = {"origin": "dlpack" if DLPACK_OWN.match(s) else "dlpack_helpers", "size": size,
                      "align": align, "extensible": bool(fields) and fields[0]["name"] == "struct_size",
                      "fields": fields}
    m["structs"] = dict(sorted(structs.items(), key=lambda kv: (kv[1]["origin"] != "dlpack", kv[0])))
    typedefs = {}
    for t, (size, signed) in sorted(facts.layout["typedef"].items()):
        typedefs[t] = {"kind": "enum" if t in facts.enums else "scalar",
                       "type": facts.scalar_typedefs.get(t, "enum"), "size": size, "signed": signed}
    m["typedefs"] = typedefs
    m["callbacks"] = dict(sorted(facts.callbacks.items()))
    types = facts.const_types()
    work = tempfile.mkdtemp()
    try:
        vals, bad = facts.constant_values(types, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if bad:
        sys.exit("error: " + "\n       ".join(bad))
    m["constants"] = {c: {"type": types[c], "value": vals[c]} for c in sorted(types)}
    return m


def cargo_version():
    return re.search(r'^version\s*=\s*"([^"]+)"', (ROOT / "Cargo.toml").read_text(), re.M).group(1)


# ---------------------------------------------------------------- the checks

def check(args, manifest_only):
    problems, notes = [], []
    try:
        m = load_manifest(args.manifest)
    except (OSError, tomllib.TOMLDecodeError) as e:
        print(f"FAIL: {abi.rel(args.manifest)}: {e}")
        return 1
    facts = Facts(args.header, args.lib)
    funcs = m.get("functions", {})
    sv = m.get("spec", {})
    if sv.get("version") != SPEC_VERSION or sv.get("version_number") != SPEC_VERSION_NUMBER:
        problems.append(f"[spec] version is {sv.get('version')}/{sv.get('version_number')}, "
                        f"not {SPEC_VERSION}/{SPEC_VERSION_NUMBER}")
    prof = m.get("profiles", {})
    for p, (bit, group) in PROFILES.items():
        if prof.get(p, {}).get("bit") != bit:
            problems.append(f"profile {p}: bit is {prof.get(p, {}).get('bit')}, not {bit}")
    for p in prof:
        if p not in PROFILES:
            problems.append(f"profile {p} is none of {list(PROFILES)}")

    consts_m = m.get("constants", {})
    if consts_m.get("DLPACK_HELPERS_SPEC_VERSION", {}).get("value") != sv.get("version_number"):
        problems.append(f"constant DLPACK_HELPERS_SPEC_VERSION is not [spec] version_number {sv.get('version_number')}")
    for p, e in prof.items():
        if consts_m.get(e.get("constant"), {}).get("value") != e.get("bit"):
            problems.append(f"profile {p}: constant {e.get('constant')} is not its bit {e.get('bit')}")

    # -- the library
    problems += runtime_discovery(args.lib, m) if facts.exports else []
    if not facts.exports:
        problems.append(f"{abi.rel(args.lib)} not found or exports nothing: run scripts/build (or cargo build --release)")
    for name in sorted(set(facts.exports) - set(funcs)):
        problems.append(f"{name} is exported by {abi.rel(args.lib)} but not in the manifest")
    for name in sorted(set(funcs) - set(facts.exports)):
        if facts.exports:
            problems.append(f"{name} is in the manifest but not exported by {abi.rel(args.lib)}")
    for name, v in facts.exports.items():
        want = funcs.get(name, {}).get("symbol_version")
        if v != "-" and want and v != want:
            problems.append(f"{name}: symbol version {v} in the library, {want} in the manifest")

    # -- the header
    for name in sorted(set(facts.funcs) - set(funcs)):
        problems.append(f"{name} is declared in the header but not in the manifest")
    for name, e in funcs.items():
        if e.get("profile") not in PROFILES:
            problems.append(f"{name}: profile {e.get('profile')!r} is none of {list(PROFILES)}")
        h = facts.funcs.get(name)
        if not h:
            problems.append(f"{name} is in the manifest but not declared in the header")
            continue
        params = e.get("params", [])
        want = f"{abi.norm_type(e.get('returns', ''))}({', '.join(abi.param_type(p['type'] + ' ' + p['name']) if '(*)' not in p['type'] else p['type'] for p in params) or 'void'})"
        if want != facts.protos.get(name):
            problems.append(f"{name}: prototype {facts.protos.get(name)} in the header, {want} in the manifest")
        if [p["name"] for p in params] != [n for _, n in h["params"]]:
            problems.append(f"{name}: parameter names {[n for _, n in h['params']]} in the header, "
                            f"{[p['name'] for p in params]} in the manifest")
        for p in params:
            for k, allowed in (("direction", DIRECTIONS), ("ownership", OWNERSHIPS)):
                if p.get(k) not in allowed:
                    problems.append(f"{name}({p.get('name')}): {k} {p.get(k)!r} is none of {allowed}")
            if not isinstance(p.get("nullable"), bool):
                problems.append(f"{name}({p.get('name')}): nullable is not true or false")
    structs = m.get("structs", {})
    for s in sorted(set(facts.fields) | set(structs)):
        if s not in structs:
            problems.append(f"struct {s} is in the header but not in the manifest")
            continue
        if s not in facts.fields:
            problems.append(f"struct {s} is in the manifest but not in the header")
            continue
        e = structs[s]
        size, align = facts.layout["struct"][s]
        if (e.get("size"), e.get("align")) != (size, align):
            problems.append(f"struct {s}: size {size} align {align} in the header, "
                            f"size {e.get('size')} align {e.get('align')} in the manifest")
        hf = [(field_type(ctype(t), facts.layout["field"][f"{s}.{n}"][1]) if "(*)" not in t else t, n)
              + facts.layout["field"][f"{s}.{n}"] for t, n in facts.fields[s]]
        mf = [(f.get("type"), f.get("name"), f.get("offset"), f.get("size")) for f in e.get("fields", [])]
        if hf != mf:
            diff = [f"{a} != {b}" for a, b in zip(hf, mf) if a != b] or [f"{len(hf)} fields vs {len(mf)}"]
            problems.append(f"struct {s}: fields (type, name, offset, size) differ: header vs manifest: " + "; ".join(diff[:3]))
    tds = m.get("typedefs", {})
    for t in sorted(set(facts.layout["typedef"]) | set(tds)):
        h, e = facts.layout["typedef"].get(t), tds.get(t)
        if h is None or e is None:
            problems.append(f"typedef {t} is in the {'manifest' if h is None else 'header'} only")
        elif (e.get("size"), e.get("signed")) != h:
            problems.append(f"typedef {t}: size {h[0]} signed {h[1]} in the header, "
                            f"size {e.get('size')} signed {e.get('signed')} in the manifest")
    cbs = m.get("callbacks", {})
    for k in sorted(set(facts.callbacks) | set(cbs)):
        if facts.callbacks.get(k) != cbs.get(k):
            problems.append(f"callback {k}: {facts.callbacks.get(k)} in the header, {cbs.get(k)} in the manifest")
    consts = m.get("constants", {})
    htypes = facts.const_types()
    for c in sorted(set(htypes) - set(consts)):
        problems.append(f"constant {c} is in the header but not in the manifest")
    for c in sorted(set(consts) - set(htypes)):
        problems.append(f"constant {c} is in the manifest but not in the header")
    typed = {c: consts[c].get("type", "int") for c in consts if c in htypes}
    work = tempfile.mkdtemp()
    try:
        try:
            vals, bad = facts.constant_values(typed, work)
        except SystemExit as e:
            vals, bad = {}, [f"the constants do not compile with the manifest's types: {e}"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    problems += bad
    for c, v in vals.items():
        want = consts[c].get("value")
        if v != want:
            problems.append(f"constant {c}: {v!r} in the header (as {typed[c]}), {want!r} in the manifest")
    for name, e in funcs.items():
        for s in e.get("must_report", []) + e.get("may_report", []):
            if s not in consts:
                problems.append(f"{name}: status {s} is no constant of the manifest")
    n_facts = (len(funcs), len(structs), len(tds), len(cbs), len(consts))
    print(f"-- library and header against {abi.rel(args.manifest)}: {n_facts[0]} functions, "
          f"{n_facts[1]} structs, {n_facts[2]} typedefs, {n_facts[3]} callbacks, {n_facts[4]} constants")

    if not manifest_only:
        problems += check_pages(args, m, facts, notes)
    for n in notes:
        print(f"   note: {n}")
    for p in problems:
        print(f"   FAIL {p}")
    if problems:
        print(f"FAIL: {len(problems)} finding(s) ({'library/header vs manifest' if manifest_only else 'library, header, pages vs manifest'})")
        return 1
    print("spec check passed" + (" (--manifest-only: the pages were not checked)" if manifest_only else ""))
    return 0


def runtime_discovery(lib, m):
    """dlpack_get_info of the loaded library, read at the manifest's offsets, reports the
    manifest's spec version and every profile."""
    import ctypes
    st = m.get("structs", {}).get("dlpack_helpers_info", {})
    off = {f["name"]: f["offset"] for f in st.get("fields", [])}
    size = st.get("size", 0)
    if "spec_version" not in off or "profiles" not in off:
        return ["struct dlpack_helpers_info has no spec_version/profiles field in the manifest"]
    try:
        so = ctypes.CDLL(str(lib))
    except OSError as e:
        return [f"cannot load {abi.rel(lib)}: {e}"]
    buf = (ctypes.c_uint8 * (size + 64))()
    ctypes.c_size_t.from_buffer(buf, 0).value = size
    so.dlpack_get_info.restype = ctypes.c_int32
    status = so.dlpack_get_info(buf)
    got_v = ctypes.c_uint32.from_buffer(buf, off["spec_version"]).value
    got_p = ctypes.c_uint32.from_buffer(buf, off["profiles"]).value
    want_p = sum(e.get("bit", 0) for e in m.get("profiles", {}).values())
    want_v = m.get("spec", {}).get("version_number")
    print(f"-- dlpack_get_info of {abi.rel(lib)}: status {status}, spec_version {got_v}, profiles {got_p:#x}")
    if status != 0 or got_v != want_v or got_p != want_p:
        return [f"dlpack_get_info reports status {status}, spec_version {got_v}, profiles {got_p:#x}; "
                f"the manifest says {want_v} and {want_p:#x} (every profile)"]
    return []


def check_pages(args, m, facts, notes):
    problems = []
    funcs = m.get("functions", {})
    spec = args.spec
    fdir = spec / "functions"
    defined = {}  # ID -> [where]
    all_pages = load_pages(spec)
    pages = {}
    for name, e in funcs.items():
        if name not in all_pages:
            problems.append(f"{name}: page {abi.rel(fdir / (name + '.md'))} missing")
            continue
        pages[name] = all_pages[name]
    for other in sorted(set(all_pages) - set(funcs)):
        problems.append(f"{abi.rel(fdir / (other + '.md'))}: a page for {other}, which the manifest does not list")
    fmt = format_profiles(spec)
    for fn, profs in fmt.items():
        if len(profs) > 1:
            problems.append(f"{fn} is in several profile lists of FORMAT.md: {profs}")
        if fn not in funcs:
            problems.append(f"{fn} is in FORMAT.md's {profs[0]} list but not in the manifest")
        elif funcs[fn].get("profile") != profs[0]:
            problems.append(f"{fn} is in FORMAT.md's {profs[0]} list but in profile {funcs[fn].get('profile')} in the manifest")
    for fn in funcs:
        if fmt and fn not in fmt:
            problems.append(f"{fn} is in no profile list of FORMAT.md")
    known = set(m.get("constants", {}))
    for name, page in pages.items():
        e = funcs[name]
        where = abi.rel(page.path)
        if page.title != name:
            problems.append(f"{where}: the first line is not '# {name}'")
        body = [h for h in page.headings if h in HEADINGS]
        if body != HEADINGS or len(page.headings) != len(HEADINGS):
            missing = [h for h in HEADINGS if h not in page.headings]
            problems.append(f"{where}: headings {page.headings} are not the ten of FORMAT.md in order"
                            + (f" (missing: {missing})" if missing else ""))
        if page.profile is None:
            problems.append(f"{where}: no line 'Profile: <p> · Since: <v> (library <v>) · Status: <s>'")
        reqs = page.requirements()
        params = page.params()
        must, may = resolved_statuses(name, all_pages, known)
        level = page.level()
        for err in dict.fromkeys(page.errors):
            problems.append(f"{where}: {err}")
        if level not in LEVELS:
            problems.append(f"{where}: Thread safety gives no 'Level: <one of {', '.join(LEVELS)}>'")
        key = id_group_key(name, page.profile) if page.profile in PROFILES else None
        for n, rid, _ in reqs:
            defined.setdefault(rid, []).append(f"{where}:{n}")
            if key and not re.match(rf"^{re.escape(key)}-[1-9][0-9]*$", rid):
                problems.append(f"{where}:{n}: {rid} is not {key}-n (FORMAT.md: the profile's group and the function's key)")
        if not reqs:
            problems.append(f"{where}: defines no requirement")
        # The manifest against the page.
        cmp = [("profile", e.get("profile"), page.profile), ("since", e.get("since"), page.since),
               ("status", e.get("status"), page.status), ("thread_safety", e.get("thread_safety"), level),
               ("side_effects", e.get("side_effects"), page.side_effects()),
               ("requirements", e.get("requirements"), [rid for _, rid, _ in reqs]),
               ("caller_requirements", e.get("caller_requirements"), [r for _, r, t in reqs if t == "caller"]),
               ("untestable_requirements", e.get("untestable_requirements"),
                [r for _, r, t in reqs if t.startswith("impl, untestable")]),
               ("must_report", sorted(e.get("must_report", [])), sorted(must)),
               ("may_report", sorted(e.get("may_report", [])), sorted(may)),
               ("page", e.get("page"), True)]
        for k, a, b in cmp:
            if a != b:
                problems.append(f"{name}: {k} is {a!r} in the manifest, {b!r} on its page (run scripts/spec sync)")
        mp = [(p.get("name"), p.get("direction"), p.get("nullable"), p.get("ownership")) for p in e.get("params", [])]
        pp = [(p["name"], p["direction"], p["nullable"], p["ownership"]) for p in params]
        if mp != pp:
            problems.append(f"{name}: parameters (name, direction, nullable, ownership) are {mp} in the manifest, "
                            f"{pp} on its page")
        # The header's @retval lines are the implementation's doc: a status it documents that the
        # page lists nowhere is a disagreement to resolve (issue 32, item 7); printed, not failed.
        _, retvals = doc_facts(facts.funcs.get(name, {}).get("doc", ""))
        extra = [s for s in retvals if s != "DLPACK_HELPERS_STATUS_OK" and s not in must and s not in may]
        if extra:
            notes.append(f"{name}: the header documents {', '.join(x.replace('DLPACK_HELPERS_STATUS_', '') for x in extra)}, "
                         "which its page lists under neither MUST nor MAY")
    # Requirement IDs in the chapters (FORMAT.md, the authoring rules, holds examples only).
    for path in sorted(spec.rglob("*.md")):
        if path.parent == fdir or path.name == "FORMAT.md":
            continue
        errs = []
        for n, rid, _ in parse_requirements(path.read_text(), abi.rel(path), errs):
            defined.setdefault(rid, []).append(f"{abi.rel(path)}:{n}")
            group = rid.split("-")[0]
            if group not in CHAPTER_GROUPS:
                problems.append(f"{abi.rel(path)}:{n}: {rid}: a chapter's IDs are {', '.join(g + '-' for g in CHAPTER_GROUPS)}"
                                " (function pages define the profile groups)")
        problems += errs
    for rid, where in sorted(defined.items()):
        if len(where) > 1:
            problems.append(f"requirement ID {rid} is defined {len(where)} times: {', '.join(where)}")
    # The registry: every ID ever defined.
    reg_path = spec / "requirement-ids.txt"
    reg = {}
    if not reg_path.exists():
        problems.append(f"{abi.rel(reg_path)} missing (every requirement ID ever defined, `ID active` or `ID retired <version>`)")
    else:
        for n, line in enumerate(reg_path.read_text().splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            f = line.split()
            if not ID_RE.match(f[0]) or not ((len(f) == 2 and f[1] == "active") or (len(f) == 3 and f[1] == "retired")):
                problems.append(f"{abi.rel(reg_path)}:{n}: '{line}' is neither `ID active` nor `ID retired <spec version>`")
                continue
            if f[0] in reg:
                problems.append(f"{abi.rel(reg_path)}:{n}: {f[0]} is listed twice")
            reg[f[0]] = f[1]
        for rid in sorted(defined):
            if rid not in reg:
                problems.append(f"{rid} is defined ({defined[rid][0]}) but not in {abi.rel(reg_path)} (add `{rid} active`)")
            elif reg[rid] == "retired":
                problems.append(f"{rid} is retired in {abi.rel(reg_path)} but defined again ({defined[rid][0]}): "
                                "a retired ID is never reused; take the next free number")
        for rid in sorted(set(reg) - set(defined)):
            if reg[rid] == "active":
                problems.append(f"{rid} is active in {abi.rel(reg_path)} but defined nowhere: "
                                f"mark it `retired {SPEC_VERSION}` (never reuse it)")
    # Each profile page lists its functions.
    for p in PROFILES:
        ppath = spec / "profiles" / f"{p}.md"
        if not ppath.exists():
            problems.append(f"{abi.rel(ppath)} missing")
            continue
        text = ppath.read_text()
        for name, e in funcs.items():
            if e.get("profile") == p and not re.search(rf"\b{re.escape(name)}\b", text):
                problems.append(f"{abi.rel(ppath)} does not list {name} (profile {p})")
    counts = {p: sum(1 for e in funcs.values() if e.get("profile") == p) for p in PROFILES}
    print(f"-- pages: {len(pages)} of {len(funcs)} functions have a page; {len(defined)} requirement IDs defined "
          f"({sum(1 for r in defined if r.split('-')[0] in CHAPTER_GROUPS and not any(w.startswith(str(abi.rel(fdir))) for w in defined[r]))} in chapters); "
          "profiles: " + ", ".join(f"{p} {n}" for p, n in counts.items()))
    return problems


def sync_registry(spec, m, retire):
    """Adds each defined ID that the registry lacks as `active`. An ID that is active but defined
    nowhere is dropped when the committed registry (git HEAD) does not have it (never published:
    a page renumbered before its first commit); a published one is marked retired only with
    --retire (a decision; check names them). Returns (added, dropped, retired)."""
    reg_path = spec / "requirement-ids.txt"
    ids = []
    for e in m["functions"].values():
        ids += e["requirements"]
    for path in sorted(spec.rglob("*.md")):
        if path.parent != spec / "functions" and path.name != "FORMAT.md":
            ids += [rid for _, rid, _ in parse_requirements(path.read_text(), path, [])]
    defined = set(ids)
    text = reg_path.read_text() if reg_path.exists() else (
        "# Every requirement ID ever defined in spec/, one a line: `ID active` or `ID retired <spec version>`.\n"
        "# An ID is never reused: a rule that goes away is marked retired, a new rule takes a new number.\n"
        "# `scripts/spec sync` adds newly defined IDs; `scripts/spec check` enforces the rest.\n")
    try:
        rel = reg_path.resolve().relative_to(ROOT)
        head = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:{rel}"], capture_output=True, text=True)
        published = {l.split()[0] for l in head.stdout.splitlines() if l.strip() and not l.startswith("#")} \
            if head.returncode == 0 else set()
    except ValueError:
        published = set()
    out, have, dropped, retired = [], set(), 0, 0
    for line in text.splitlines():
        f = line.split()
        if f and not line.startswith("#"):
            have.add(f[0])
            if f[1:] == ["active"] and f[0] not in defined:
                if f[0] not in published:
                    dropped += 1
                    continue
                if retire:
                    line = f"{f[0]} retired {SPEC_VERSION}"
                    retired += 1
        out.append(line)
    new = [rid for rid in dict.fromkeys(ids) if rid not in have and ID_RE.match(rid)]
    reg_path.write_text("\n".join(out).rstrip("\n") + "\n" + "".join(f"{r} active\n" for r in new))
    return len(new), dropped, retired


class Args:
    pass


def main():
    argv = sys.argv[1:]
    if not argv or argv[0] not in ("check", "sync"):
        sys.exit(__doc__)
    a = Args()
    opt = lambda name, default: Path(argv[argv.index(name) + 1]).resolve() if name in argv else default
    a.lib = opt("--lib", default_lib())
    a.header = opt("--header", abi.HEADER)
    a.spec = opt("--spec", ROOT / "spec")
    a.manifest = opt("--manifest", a.spec / "abi.toml")
    if argv[0] == "sync":
        if not a.lib.exists():
            sys.exit(f"error: {a.lib} not found: run scripts/build first")
        m = build(a)
        write_manifest(a.manifest, m)
        added, dropped, retired = sync_registry(a.spec, m, "--retire" in argv)
        with_page = sum(1 for e in m["functions"].values() if e["page"])
        print(f"wrote {abi.rel(a.manifest)}: {len(m['functions'])} functions ({with_page} from their pages), "
              f"{len(m['structs'])} structs, {len(m['typedefs'])} typedefs, {len(m['callbacks'])} callbacks, "
              f"{len(m['constants'])} constants; requirement-ids.txt: {added} ID(s) added, {dropped} unpublished "
              f"one(s) dropped, {retired} retired")
        return 0
    return check(a, "--manifest-only" in argv)


if __name__ == "__main__":
    sys.exit(main())
