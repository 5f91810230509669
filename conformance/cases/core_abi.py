"""Core: the ABI-wide rules of spec/02-abi.md (ABI-*) and the conformance classes of
spec/05-conformance.md (CONF-*).

- A sweep calls every exported core function (whatever the library claims) with arguments built
  from the manifest's parameter lists: every pointer NULL or a buffer, scalars 0, 1 and all-ones,
  structs zero or all-ones, one parameter varied at a time. Each answer is checked against the
  ABI rules: a listed status (ABI-STATUS-1/2), its own non-empty message (ABI-ERROR-1), no
  out-parameter written on failure (ABI-OUT-1), NULL_POINTER for a NULL required pointer
  (ABI-NULL-1), no crash on NULLs inside the structures passed (ABI-NULL-3), a normal return
  (ABI-UNWIND-1).
- The library file: its dynamic section (readelf -d: no libpython, no device runtime) and its
  dynamic symbols (readelf --dyn-syms: every manifest function, no other dlpack_ symbol).
- A C program without Python, generated from the manifest, calls core, streams and python
  functions (ABI-LINK-1/3).
"""
import ctypes
import os
import re
import shutil
import subprocess
import tempfile

from harness import cheader
from harness.registry import case

from cases._common import MARK_MINOR, PAGE, bytes_of, fenced, pages, prime, protect

OUT_FILL = 0xA5


def _readelf(ctx, *args):
    exe = shutil.which("readelf")
    if exe is None:
        ctx.skip("readelf is not installed")
    p = subprocess.run([exe, "-W", *args, ctx.lib_path], capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 0, f"readelf failed: {p.stderr[-300:]}")
    return p.stdout


def _exported(ctx):
    out = _readelf(ctx, "--dyn-syms")
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(parts) >= 8 and parts[0].endswith(":") and parts[6] != "UND":
            name = parts[7].split("@")[0]
            syms[name] = (parts[3], parts[4])
    return syms


# -- the library file -------------------------------------------------------------------------------
@case("core.abi.no_python_or_runtime_link", profile="core", covers=["ABI-LINK-1", "ABI-LINK-2"])
def _(ctx):
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", _readelf(ctx, "-d"))
    bad = [n for n in needed if re.match(
        r"lib(python|cuda|cudart|nvrtc|amdhip|hiprtc|hsa-runtime|ze_loader|ze_intel|OpenCL|nvidia|rocm)", n)]
    ctx.check(not bad, f"link-time dependencies on Python or a device runtime: {bad} (NEEDED: {needed})")


@case("core.abi.symbols", profile="core", covers=["ABI-SYM-1", "ABI-SYM-2", "CONF-CLASS-1"])
def _(ctx):
    syms = _exported(ctx)
    listed = set(ctx.m.functions)
    extra = sorted(n for n in syms if n.startswith("dlpack_") and n not in listed)
    ctx.check(not extra, f"exported dlpack_ symbols the manifest does not list: {extra}")
    # A function may also come from a library this one depends on (dlsym searches there).
    missing_core = sorted(n for n, f in ctx.m.functions.items()
                          if f.get("profile") == "core" and n not in syms and not ctx.f.has(n))
    ctx.check(not missing_core, f"core functions not exported: {missing_core}")
    for n in listed & set(syms):
        typ, bind = syms[n]
        ctx.check(typ in ("FUNC", "IFUNC") and bind in ("GLOBAL", "WEAK"),
                  f"{n} is exported as {typ} {bind}, not a global function")
    # C linkage: the exact names resolve through the C dynamic loader (no mangled names).
    for n in listed & set(syms):
        ctx.check(ctx.f.has(n), f"{n} is in the symbol table but does not resolve")
    mangled = sorted(n for n in syms if n.startswith("_Z") and "dlpack_" in n)
    ctx.check(not mangled, f"mangled dlpack symbols: {mangled[:5]}")


@case("core.abi.layouts_as_the_manifest", profile="core", covers=["ABI-INT-1"])
def _(ctx):
    # The manifest's data model is this platform's, a C compiler agrees with its sizes and
    # offsets, and the implementation reads and writes at those offsets.
    dm = ctx.m.doc["spec"].get("data_model", "LP64")
    model = {8: "LP64", 4: "ILP32"}[ctypes.sizeof(ctypes.c_void_p)]
    if dm != model:
        ctx.skip(f"the manifest's layouts are {dm}; this platform is {model}")
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        ctx.skip("no C compiler")
    asserts = []
    for name, s in ctx.m.structs.items():
        asserts.append(f"_Static_assert(sizeof({name}) == {s['size']}, \"{name}\");")
        for f in s["fields"]:
            asserts.append(f"_Static_assert(offsetof({name}, {f['name']}) == {f['offset']}, \"{name}.{f['name']}\");")
    src = cheader.render(ctx.m) + "\n" + "\n".join(asserts) + "\nint main(void) { return 0; }\n"
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "layout.c")
        with open(c, "w") as f:
            f.write(src)
        p = subprocess.run([cc, "-std=c11", "-fsyntax-only", c], capture_output=True, text=True, timeout=120)
        ctx.check(p.returncode == 0, f"the manifest's layouts do not compile as C: {p.stderr[-600:]}")
    # The implementation's view: fields written and read at the manifest's offsets.
    Choice = ctx.T.dlpack_helpers_version_choice
    raw = (ctypes.c_uint8 * ctypes.sizeof(Choice))(*([0xEE] * ctypes.sizeof(Choice)))
    ctx.ok(ctx.f.dlpack_version_negotiate(ctx.T.DLPackVersion(1, 7), 0, ctypes.pointer(ctx.T.DLPackVersion(1, 2)),
                                          ctypes.cast(raw, ctypes.POINTER(Choice))))
    ch = Choice.from_buffer(raw)
    ctx.check((ch.kind, ch.version.major, ch.version.minor) == (ctx.K.DLPACK_HELPERS_EXPORT_VERSIONED, 1, 7),
              "dlpack_helpers_version_choice is not written at the manifest's offsets")
    p, _ = ctx.make_versioned(device=(13, 42), version=(1, 3))
    d = ctx.T.DLDevice()
    ctx.ok(ctx.f.dlpack_get_device(ctx.vptr(p), ctypes.byref(d)))
    ctx.check((d.device_type, d.device_id) == (13, 42), "DLManagedTensorVersioned.dl_tensor.device read elsewhere")
    lp, _ = ctx.make_legacy(device=(11, 9))
    ctx.ok(ctx.f.dlpack_legacy_get_device(ctx.lptr(lp), ctypes.byref(d)))
    ctx.check((d.device_type, d.device_id) == (11, 9), "DLManagedTensor.dl_tensor.device read elsewhere")


# -- options structures (struct_size) ---------------------------------------------------------------
def _validate_with(ctx, tensor, opt_bytes, struct_size):
    """dlpack_tensor_validate with options whose bytes are `opt_bytes` (struct_size set), the
    memory ending right after them (a read past faults)."""
    b = bytearray(opt_bytes)
    b[:8] = struct_size.to_bytes(8, "little")
    p = fenced(bytes(b))
    lay = ctx.T.dlpack_helpers_layout()
    return ctx.f.dlpack_tensor_validate(ctx.vptr(tensor), ctypes.cast(p, ctypes.POINTER(ctx.T.dlpack_helpers_validate_options)),
                                        ctypes.byref(lay))


@case("core.abi.input_struct_size", profile="core", covers=["ABI-STRUCT-1", "ABI-STRUCT-3"])
def _(ctx):
    O = ctx.T.dlpack_helpers_validate_options
    full = O()
    full.struct_size = ctypes.sizeof(O)
    full.flags = ctx.K.DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE
    full.max_ndim = 1
    img = bytes_of(full)
    cuda, _ = ctx.make_versioned(device=(2, 0), strides=(3, 1), data=0x1000)
    cpu, _ = ctx.make_versioned(device=(1, 0), strides=(3, 1))
    f_end = O.flags.offset + 4
    m_end = O.max_ndim.offset + 4
    # struct_size 8: flags lies beyond it and is ignored (only 8 bytes are readable).
    ctx.expect(_validate_with(ctx, cuda, img[:8], 8), "OK", what="struct_size 8, flags beyond it")
    # flags inside, max_ndim beyond (even partly inside): flags apply, max_ndim does not.
    ctx.expect(_validate_with(ctx, cuda, img[:f_end], f_end), "NOT_CPU_ACCESSIBLE", what="flags inside struct_size")
    for c in range(f_end, m_end):
        ctx.expect(_validate_with(ctx, cpu, img[:c], c), "OK", what=f"struct_size {c}: max_ndim not whole")
    ctx.expect(_validate_with(ctx, cpu, img[:m_end], m_end), "INVALID_NDIM", what="max_ndim inside struct_size")
    # A struct_size larger than the implementation knows: the bytes beyond are ignored.
    big = img + b"\xff" * 64
    ctx.expect(_validate_with(ctx, cpu, big, len(big)), "INVALID_NDIM", what="struct_size above the known size")
    # Too small to hold struct_size: INVALID_ARGUMENT (dlpack_get_info's case checks "nothing written").
    for c in range(0, 8):
        prime(ctx)
        ctx.expect(_validate_with(ctx, cpu, img[:8], c), "INVALID_ARGUMENT", what=f"options struct_size {c}")


# -- the sweep --------------------------------------------------------------------------------------
def _variants(ctx, fname, p, argtype, streams):
    """[(label, value factory, kind)] for one parameter: kind 'null', 'buf', 'scalar'."""
    t = p["type"]
    if "(*)" in t or t in ctx.m.callbacks:
        return [("NULL", lambda: None, "null")]
    if t.replace(" ", "").endswith("*"):
        out = p.get("direction") == "out"

        def buf():
            q = pages(2)
            protect(q + PAGE, PAGE, 0)
            if out:
                ctypes.memset(q, OUT_FILL, PAGE)
            return ctypes.cast(q, argtype) if argtype not in (ctypes.c_void_p, ctypes.c_char_p, None) else q
        return [("buf", buf, "buf"), ("NULL", lambda: None, "null")]
    if isinstance(argtype, type) and issubclass(argtype, ctypes.Structure):
        def ones():
            s = argtype()
            for n, ft in argtype._fields_:
                if issubclass(ft, (ctypes._SimpleCData,)) and ft is not ctypes.c_void_p:
                    setattr(s, n, 1)
            return s
        return [("zero", argtype, "scalar")] + ([] if streams else [("ones", ones, "scalar")])
    if argtype is ctypes.c_bool:
        return [("false", lambda: False, "scalar")] + ([] if streams else [("true", lambda: True, "scalar")])
    if argtype is None:
        return [("0", lambda: 0, "scalar")]
    vals = [0] if streams else [0, 1, (1 << (8 * ctypes.sizeof(argtype))) - 1]
    return [(str(v), (lambda v=v: argtype(v).value if argtype is not ctypes.c_void_p else v), "scalar")
            for v in vals]


def _sweep_rows(ctx, fname):
    f = ctx.m.functions[fname]
    params = f.get("params", [])
    fn = getattr(ctx.f, fname)
    streams = f.get("profile") != "core"
    var = [_variants(ctx, fname, p, at, streams) for p, at in zip(params, fn.argtypes)]
    base = [0] * len(params)
    rows = [tuple(base), tuple(len(v) - 1 if v[-1][2] == "null" else 0 for v in var)]  # buffers; all NULL
    for i, v in enumerate(var):
        for j in range(1, len(v)):
            r = list(base)
            r[i] = j
            rows.append(tuple(r))
    return params, var, sorted(set(rows))


def _status_set(ctx, fname):
    f = ctx.m.functions[fname]
    return {0, ctx.S.PANIC} | {ctx.m.constants[s] for s in f.get("must_report", []) + f.get("may_report", [])}


@case("core.abi.sweep", profile="core", timeout=120,
      covers=["ABI-STATUS-1", "ABI-STATUS-2", "ABI-ERROR-1", "ABI-OUT-1", "ABI-NULL-1", "ABI-NULL-3",
              "ABI-UNWIND-1", "CONF-CLASS-3", "CORE-LAST-ERROR-MESSAGE-4"])
def _(ctx):
    statuses = set(ctx.S.__dict__.values())
    done = 0
    for fname, f in sorted(ctx.m.functions.items()):
        if f.get("profile") not in ("core", "streams") or f.get("returns") != "dlpack_helpers_status":
            continue
        if not ctx.f.has(fname):
            continue  # CONF-CLASS-1/2 decide whether it must be exported
        allowed = _status_set(ctx, fname)
        must = [ctx.m.constants[s] for s in f.get("must_report", [])]
        before_null = set(must[:must.index(ctx.S.NULL_POINTER)]) if ctx.S.NULL_POINTER in must else set()
        params, var, rows = _sweep_rows(ctx, fname)
        fn = getattr(ctx.f, fname)
        for row in rows:
            args, outs, label = [], [], []
            for p, v, j in zip(params, var, row):
                lab, make, kind = v[j]
                val = make()
                args.append(val)
                label.append(f"{p['name']}={lab}")
                if kind == "buf" and p.get("direction") == "out" and p["name"] != "out_len":
                    outs.append((p["name"], val))
            what = f"{fname}({', '.join(label)})"
            prime(ctx)
            st = fn(*args)
            done += 1
            ctx.check(st >= 0 and st in statuses, f"{what} returned {st}, not a status of the list")
            ctx.check(st in allowed, f"{what} returned {ctx.status_name(st)}, which its page does not list")
            if st == 0:
                ctx.check(str(MARK_MINOR).encode() in ctx.last_error(),
                          f"{what} returned OK but changed the thread's last-error message")
            if st != 0:
                text = ctx.last_error()
                ctx.check(text and str(MARK_MINOR).encode() not in text,
                          f"{what} failed with {ctx.status_name(st)} without setting its own message")
                for name, q in outs:
                    q = ctypes.cast(q, ctypes.c_void_p).value if not isinstance(q, int) else q
                    ctx.check(ctypes.string_at(q, PAGE) == bytes([OUT_FILL]) * PAGE,
                              f"{what}: out-parameter {name} written on {ctx.status_name(st)}")
            nulls = [p for p, v, j in zip(params, var, row) if v[j][2] == "null" and not p.get("nullable", True)]
            if len(nulls) == 1:  # one required pointer NULL, the others buffers (or nullable)
                ctx.check(st == ctx.S.NULL_POINTER or st in before_null,
                          f"{what}: NULL for the required {nulls[0]['name']} gave {ctx.status_name(st)}")
    ctx.check(done > 100, f"suite bug: only {done} calls made")


# -- a process without Python -----------------------------------------------------------------------
def _no_python_program(ctx):
    lines = [cheader.render(ctx.m), "#include <dlfcn.h>", "#include <stdio.h>", "#include <string.h>",
             "static unsigned char zero[1 << 16] __attribute__((aligned(64)));",
             "int main(int argc, char **argv) {",
             "  (void)argc; void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);",
             "  if (!h) { printf(\"dlopen %s\\n\", dlerror()); return 2; }",
             "  if (dlsym(h, \"Py_IsInitialized\") || dlsym(RTLD_DEFAULT, \"Py_IsInitialized\")) { printf(\"python present\\n\"); return 3; }"]
    # Core: info (capabilities), a version check and a dtype name; streams: a CPU stream decode.
    lines += [
        "  { dlpack_helpers_info i; memset(&i, 0, sizeof i); i.struct_size = sizeof i;",
        "    dlpack_helpers_status (*f)(dlpack_helpers_info *) = (dlpack_helpers_status (*)(dlpack_helpers_info *))dlsym(h, \"dlpack_get_info\");",
        "    printf(\"info %d %llu %u\\n\", f ? f(&i) : -1, (unsigned long long)i.capabilities, (unsigned)i.profiles); }",
        "  { DLPackVersion v = {1, 2}; dlpack_helpers_version_compat c = -1;",
        "    dlpack_helpers_status (*f)(DLPackVersion, dlpack_helpers_version_compat *) = (dlpack_helpers_status (*)(DLPackVersion, dlpack_helpers_version_compat *))dlsym(h, \"dlpack_version_check\");",
        "    int st = f ? f(v, &c) : -1; printf(\"version_check %d %d\\n\", st, (int)c); }",
        "  { DLDataType t = {2, 32, 4}; char buf[32] = {0};",
        "    dlpack_helpers_status (*f)(DLDataType, char *, size_t, size_t *) = (dlpack_helpers_status (*)(DLDataType, char *, size_t, size_t *))dlsym(h, \"dlpack_dtype_format\");",
        "    printf(\"dtype_format %d %s\\n\", f ? f(t, buf, sizeof buf, NULL) : -1, buf); }",
    ]
    if "dlpack_stream_decode" in ctx.m.functions:
        lines += [
            "  { DLDevice d = {1, 0}; dlpack_helpers_stream s; memset(&s, 0, sizeof s);",
            "    dlpack_helpers_status (*f)(DLDevice, bool, int64_t, uint32_t, dlpack_helpers_stream *) = (dlpack_helpers_status (*)(DLDevice, bool, int64_t, uint32_t, dlpack_helpers_stream *))dlsym(h, \"dlpack_stream_decode\");",
            "    if (f) printf(\"stream_decode %d\\n\", f(d, false, 0, 0, &s)); }",
        ]
    # Every status-returning python and exchange function, each pointer argument a zeroed
    # buffer (no NULL_POINTER can come first), every scalar 0.
    for fname, f in sorted(ctx.m.functions.items()):
        if f.get("profile") not in ("python", "exchange") or f.get("returns") != "dlpack_helpers_status":
            continue
        params = f.get("params", [])
        decl = ", ".join(p["type"] if "(*)" not in p["type"] else "void *" for p in params) or "void"
        args = []
        body = []
        for i, p in enumerate(params):
            t = p["type"]
            if "(*)" in t or t.replace(" ", "").endswith("*"):
                args.append(f"({t if '(*)' not in t else 'void *'})(void *)zero")
            else:
                body.append(f"{t} a{i}; memset(&a{i}, 0, sizeof a{i});")
                args.append(f"a{i}")
        lines.append(f"  {{ {' '.join(body)} dlpack_helpers_status (*f)({decl}) = "
                     f"(dlpack_helpers_status (*)({decl}))dlsym(h, \"{fname}\");")
        lines.append(f"    if (f) printf(\"py {fname} %d\\n\", f({', '.join(args)})); }}")
    lines += ["  for (size_t i = 0; i < sizeof zero; ++i) if (zero[i]) { printf(\"zero written\\n\"); return 4; }",
              "  return 0;", "}"]
    return "\n".join(lines) + "\n"


@case("core.abi.runs_without_python", profile="core", timeout=120,
      covers=["ABI-LINK-1", "ABI-LINK-3", "CORE-GET-INFO-9"])
def _(ctx):
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        ctx.skip("no C compiler")
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "nopy.c"), os.path.join(d, "nopy")
        with open(c, "w") as f:
            f.write(_no_python_program(ctx))
        p = subprocess.run([cc, "-std=gnu11", "-O0", "-w", c, "-o", exe, "-ldl"], capture_output=True, text=True,
                           timeout=120)
        ctx.check(p.returncode == 0, f"suite bug: the no-Python program does not build: {p.stderr[-800:]}")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "LD_PRELOAD"}
        r = subprocess.run([exe, ctx.lib_path], capture_output=True, text=True, env=env, timeout=60)
    ctx.check(r.returncode == 0, f"the program without Python failed ({r.returncode}): {r.stdout[-600:]} {r.stderr[-300:]}")
    out = dict((l.split(" ", 1)[0] if not l.startswith("py ") else l.rsplit(" ", 1)[0], l.rsplit(" ", 1)[-1]
                if l.startswith("py ") else l.split(" ", 1)[1]) for l in r.stdout.splitlines())
    st, caps, profiles = (int(x) for x in out["info"].split())
    ctx.check(st == 0, f"dlpack_get_info returned {st} without Python")
    ctx.check(caps & ctx.K.DLPACK_HELPERS_CAP_PYTHON == 0, f"CAP_PYTHON set in a process without Python ({caps:#x})")
    vst, compat = (int(x) for x in out["version_check"].split())
    ctx.check(vst == 0 and compat == 1, f"dlpack_version_check without Python: {vst}, {compat}")
    ctx.check(out["dtype_format"] == "0 float32x4", f"dlpack_dtype_format without Python: {out['dtype_format']}")
    if "stream_decode" in out:
        ctx.check(out["stream_decode"] == "0", f"dlpack_stream_decode without Python: {out['stream_decode']}")
    py = {k[3:]: int(v) for k, v in out.items() if k.startswith("py ")}
    bad = {}
    for fname, st in py.items():
        must = [ctx.m.constants[s] for s in ctx.m.functions[fname].get("must_report", [])]
        pu = ctx.S.PYTHON_UNAVAILABLE
        if pu in must:
            # PYTHON_UNAVAILABLE, or a status its page's table orders before it (an argument
            # check on these zeroed arguments, e.g. device (0, 0) refused by a producer helper).
            ok = st == pu or st in must[:must.index(pu)]
        else:
            # A function whose page makes it work without Python (a C producer's exchange table).
            ok = st != pu and st in set(must) | {ctx.m.constants[s] for s in ctx.m.functions[fname].get("may_report", [])}
        if not ok:
            bad[fname] = ctx.status_name(st)
    ctx.check(not bad, f"python/exchange functions without Python: {bad}")


# -- conformance claims -----------------------------------------------------------------------------
@case("core.conf.claim_is_what_info_reports", profile="core", covers=["CONF-CLAIM-2", "CONF-CLASS-4"])
def _(ctx):
    Info = ctx.T.dlpack_helpers_info
    i = Info()
    i.struct_size = ctypes.sizeof(Info)
    ctx.ok(ctx.f.dlpack_get_info(ctypes.byref(i)))
    want = ctx.m.doc["spec"]["version_number"]
    ctx.check(i.spec_version == want, f"the library reports spec {i.spec_version}; this suite tests {want}")
    ctx.check(ctx.claimed is None or ctx.claimed == i.profiles,
              f"the runner's claim ({ctx.claimed}) differs from dlpack_get_info's profiles ({i.profiles})")
