"""The ctypes table of dlpack_helpers._lib must match include/dlpack_helpers.h, export by export."""
import ctypes
import re
from ctypes import POINTER, c_bool, c_char_p, c_int32, c_size_t, c_uint32, c_uint64, c_void_p, py_object
from pathlib import Path

from dlpack_helpers import _lib

HEADER = Path(__file__).resolve().parent.parent / "include" / "dlpack_helpers.h"

SCALARS = {
    "dlpack_helpers_status": c_int32, "dlpack_helpers_version_compat": c_int32,
    "dlpack_helpers_export_kind": c_int32, "dlpack_helpers_host_access": c_int32, "int32_t": c_int32,
    "uint32_t": c_uint32, "uint64_t": c_uint64, "bool": c_bool, "size_t": c_size_t,
    "DLPackVersion": _lib.DLPackVersion, "DLDevice": _lib.DLDevice, "int64_t": ctypes.c_int64,
    "DLDeviceType": c_int32, "dlpack_helpers_writability": c_int32, "dlpack_helpers_read_only_origin": c_int32,
    "DLDataType": _lib.DLDataType,
    "dlpack_helpers_stream_kind": c_int32,
}
STRUCTS = {
    "DLManagedTensorVersioned": _lib.DLManagedTensorVersioned, "DLManagedTensor": _lib.DLManagedTensor,
    "DLDevice": _lib.DLDevice, "DLPackVersion": _lib.DLPackVersion, "DLTensor": _lib.DLTensor,
    "dlpack_helpers_info": _lib.Info, "dlpack_helpers_version_choice": _lib.VersionChoice,
    "dlpack_helpers_import_request": _lib.ImportRequest, "DLPackExchangeAPI": _lib.DLPackExchangeAPI,
    "int32_t": c_int32, "uint32_t": c_uint32, "dlpack_helpers_version_compat": c_int32,
    "int64_t": ctypes.c_int64, "bool": c_bool, "dlpack_helpers_stream": _lib.Stream,
    "dlpack_helpers_export_request": _lib.ExportRequest, "dlpack_helpers_export_plan": _lib.ExportPlan,
    "dlpack_helpers_stream_backend": _lib.StreamBackend, "dlpack_helpers_layout": _lib.Layout,
    "dlpack_helpers_stream_backend_ex": _lib.StreamBackendEx, "dlpack_helpers_pointer_info": _lib.PointerInfo,
    "dlpack_helpers_host_access": c_int32,
    "dlpack_helpers_validate_options": _lib.ValidateOptions, "uint64_t": c_uint64, "size_t": c_size_t,
    "dlpack_helpers_writability": c_int32, "dlpack_helpers_read_only_origin": c_int32,
    "DLDataType": _lib.DLDataType, "dlpack_helpers_error": _lib.Error,
}


def header_prototypes():
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    out = {}
    for m in re.finditer(r"([A-Za-z_][\w \*]*?)\b(dlpack_\w+)\s*\(([^;{]*?)\)\s*;", text):
        ret, name, params = m.group(1), m.group(2), m.group(3)
        args = [] if params.strip() in ("", "void") else [p.strip() for p in params.split(",")]
        types = [re.sub(r"\s*\b\w+$", "", a) for a in args]  # drop the parameter name
        out[name] = (norm(ret), [norm(t) for t in types])
    return out


def norm(t):
    t = re.sub(r"\b(const|struct)\b", "", t)
    return re.sub(r"\s+", "", t)


def accepted(ctype: str):
    """The ctypes types a C type may be bound as."""
    if "(*" in ctype:  # a function pointer: bound as a ctypes CFUNCTYPE (checked by the C tests)
        return [v for v in vars(_lib).values() if isinstance(v, type) and issubclass(v, ctypes._CFuncPtr)]
    stars = len(ctype) - len(ctype.rstrip("*"))
    base = ctype.rstrip("*")
    if base == "void" and stars == 0:
        return [None]
    if base == "char" and stars == 1:
        return [c_char_p]
    if base == "void" and stars == 1:
        return [c_void_p, py_object]  # a Python object crosses the C API as void *
    if base == "void" and stars == 2:
        return [POINTER(c_void_p)]
    if stars == 0:
        return [SCALARS[base]]
    t = STRUCTS[base]
    for _ in range(stars):
        t = POINTER(t)
    return [t]


def test_every_export_has_a_ctypes_prototype():
    header = header_prototypes()
    assert len(header) > 10, "parsing include/dlpack_helpers.h found too few functions"
    missing = sorted(set(header) - set(_lib.PROTOTYPES))
    extra = sorted(set(_lib.PROTOTYPES) - set(header))
    assert not missing, "exports without a ctypes prototype in python/dlpack_helpers/_lib.py PROTOTYPES: " + ", ".join(missing)
    assert not extra, "ctypes prototypes for functions the header does not declare: " + ", ".join(extra)


def test_prototypes_match_the_header():
    header = header_prototypes()
    wrong = []
    for name, (ret, args) in header.items():
        if name not in _lib.PROTOTYPES:
            continue
        restype, argtypes = _lib.PROTOTYPES[name]
        if restype not in accepted(ret):
            wrong.append(f"{name}: restype {restype} for C {ret}")
        if len(argtypes) != len(args):
            wrong.append(f"{name}: {len(argtypes)} argtypes for {len(args)} C parameters")
            continue
        for i, (a, c) in enumerate(zip(argtypes, args)):
            if a not in accepted(c):
                wrong.append(f"{name}: argument {i} is {a} for C {c}")
    assert not wrong, "\n".join(wrong)


def test_loaded_functions_carry_the_table():
    for name, (restype, argtypes) in _lib.PROTOTYPES.items():
        fn = getattr(_lib.lib, name)
        assert fn.restype is restype and list(fn.argtypes) == list(argtypes), name


def test_constants_match_the_header():
    text = HEADER.read_text()
    consts = dict(re.findall(r"#define (DLPACK_HELPERS_\w+) (\S+)", text))
    for py, c in [("COPY_IF_NEEDED", "COPY_IF_NEEDED"), ("COPY_NEVER", "COPY_NEVER"), ("COPY_ALWAYS", "COPY_ALWAYS"),
                  ("IMPORT_EXCHANGE_API", "IMPORT_EXCHANGE_API"), ("IMPORTED_LEGACY", "IMPORTED_LEGACY"),
                  ("IMPORTED_AFTER_RETRY", "IMPORTED_AFTER_RETRY"), ("IMPORTED_EXCHANGE_API", "IMPORTED_EXCHANGE_API"),
                  ("EXPORT_LEGACY", "EXPORT_LEGACY"), ("EXPORT_VERSIONED", "EXPORT_VERSIONED"),
                  ("PRODUCER_EXPORTS_LEGACY", "PRODUCER_EXPORTS_LEGACY"), ("CAP_PYTHON", "CAP_PYTHON"),
                  ("CAP_LEVEL_ZERO", "CAP_LEVEL_ZERO"), ("CAP_POINTER_CUDA", "CAP_POINTER_CUDA"),
                  ("CAP_POINTER_ROCM", "CAP_POINTER_ROCM"), ("CAP_POINTER_LEVEL_ZERO", "CAP_POINTER_LEVEL_ZERO"),
                  ("STREAM_SYCL_QUEUE", "STREAM_SYCL_QUEUE"), ("STREAM_ZE_COMMAND_QUEUE", "STREAM_ZE_COMMAND_QUEUE"),
                  ("STREAM_ZE_COMMAND_LIST", "STREAM_ZE_COMMAND_LIST"), ("HOST_ACCESS_UNKNOWN", "HOST_ACCESS_UNKNOWN"),
                  ("STREAM_HANDLE", "STREAM_HANDLE"), ("STREAM_NONE", "STREAM_NONE"),
                  ("WORK_STREAM_NULL_IS_DEFAULT", "WORK_STREAM_NULL_IS_DEFAULT"),
                  ("READ_ONLY_ORIGIN_NONE", "READ_ONLY_ORIGIN_NONE"),
                  ("READ_ONLY_ORIGIN_STATED", "READ_ONLY_ORIGIN_STATED"),
                  ("READ_ONLY_ORIGIN_LEGACY", "READ_ONLY_ORIGIN_LEGACY")]:
        assert int(consts["DLPACK_HELPERS_" + c], 0) == getattr(_lib, py), c


def test_struct_sizes():
    assert ctypes.sizeof(_lib.DLManagedTensorVersioned) == 80
    assert ctypes.sizeof(_lib.DLManagedTensor) == 64
    assert ctypes.sizeof(_lib.DLPackExchangeAPI) == 56


def c_layout(tmp_path, queries):
    """sizeof/offsetof as a C compiler sees them over the header: `queries` are
    (name, C type, field or None for sizeof); returns {(name, field): bytes}."""
    import subprocess
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "dlpack_helpers.h"', "int main(void) {"]
    for name, ctype, field in queries:
        expr = f"sizeof({ctype})" if field is None else f"offsetof({ctype}, {field})"
        lines.append(f'printf("%zu\\n", {expr});')
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = tmp_path / "layout"
    subprocess.run(["cc", "-std=c11", f"-I{HEADER.parent}", str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    return {(name, field): int(v) for (name, _, field), v in zip(queries, out, strict=True)}


def test_ctypes_structs_match_the_c_layout(tmp_path):
    """Every ctypes Structure bound to a C struct has the C size and field offsets (compiled by cc)."""
    structs = {c: t for c, t in STRUCTS.items() if isinstance(t, type) and issubclass(t, ctypes.Structure)}
    queries = []
    for cname, t in structs.items():
        ctype = f"struct {cname}" if cname in ("DLManagedTensorVersioned", "DLPackExchangeAPI") else cname
        queries += [(cname, ctype, None)] + [(cname, ctype, field) for field, *_ in t._fields_]
    c_values = c_layout(tmp_path, queries)
    wrong = []
    for cname, t in structs.items():
        if c_values[(cname, None)] != ctypes.sizeof(t):
            wrong.append(f"sizeof({cname}): C {c_values[(cname, None)]}, ctypes {ctypes.sizeof(t)}")
        for field, *_ in t._fields_:
            if c_values[(cname, field)] != getattr(t, field).offset:
                wrong.append(f"{cname}.{field}: C offset {c_values[(cname, field)]}, ctypes {getattr(t, field).offset}")
    assert not wrong, "ctypes layouts differ from C: " + "; ".join(wrong)


def test_native_module_mirrors_match_the_c_layout(tmp_path):
    """The native module's hand-written mirrors of the header's structs (python/native/src/ffi.rs)
    have the C size and every field at the C offset (compiled by cc)."""
    from dlpack_helpers import _native
    rows = _native._ffi_mirror_layouts()
    names = sorted({s for s, _, _ in rows})
    assert {"dlpack_helpers_import_request", "dlpack_helpers_export_plan", "dlpack_helpers_layout"} <= set(names)
    c_values = c_layout(tmp_path, [(s, s, None if f == "sizeof" else f) for s, f, _ in rows])
    wrong = [f"{s}.{f}: C {c_values[(s, None if f == 'sizeof' else f)]}, native {n}"
             for s, f, n in rows if c_values[(s, None if f == "sizeof" else f)] != n]
    assert not wrong, "native mirrors differ from C: " + "; ".join(wrong)
