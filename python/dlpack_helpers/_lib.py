"""ctypes bindings of the whole C API of libdlpack_helpers.

The library is searched, in order: the file the native extension ``_native`` is linked against,
as the dynamic loader resolved it (so ctypes, the extension and C extensions share one loaded
copy and its process-wide state); this package's ``lib/`` folder (its one library file, named
by the SONAME: ``lib/libdlpack_helpers.so`` is a linker script); at ``$DLPACK_HELPERS_LIBRARY`` (a file); in the checkout's ``target/release``, only
when this package is the ``python/`` folder of a dlpack-helpers source checkout. It is loaded with
``ctypes.PyDLL``: calls keep the GIL, which the Python entry points require. The ``ImportError``
when nothing loads lists every place tried.

``PROTOTYPES`` is the one table of prototypes; ``tests-py/test_prototypes.py`` checks it against
``include/dlpack_helpers.h`` and names every export that is missing here. To bind a new export,
add one line: ``"dlpack_noun_verb": (restype, (argtypes, ...)),``.
"""

from __future__ import annotations

import ctypes
import os
import sys
from ctypes import (
    POINTER, Structure, c_bool, c_char_p, c_int32, c_size_t, c_uint8, c_uint16, c_uint32, c_uint64,
    c_void_p, py_object,
)
from pathlib import Path

# ---- DLPack 1.3 ABI ------------------------------------------------------------------------


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p), ("device", DLDevice), ("ndim", c_int32), ("dtype", DLDataType),
        ("shape", POINTER(ctypes.c_int64)), ("strides", POINTER(ctypes.c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, POINTER(DLManagedTensor))),
]


class DLManagedTensorVersioned(Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion), ("manager_ctx", c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))),
    ("flags", c_uint64), ("dl_tensor", DLTensor),
]


class DLPackExchangeAPIHeader(Structure):
    pass


DLPackExchangeAPIHeader._fields_ = [("version", DLPackVersion), ("prev_api", POINTER(DLPackExchangeAPIHeader))]


class DLPackExchangeAPI(Structure):
    _fields_ = [
        ("header", DLPackExchangeAPIHeader),
        ("managed_tensor_allocator", c_void_p),
        ("managed_tensor_from_py_object_no_sync",
         ctypes.CFUNCTYPE(ctypes.c_int, c_void_p, POINTER(POINTER(DLManagedTensorVersioned)))),
        ("managed_tensor_to_py_object_no_sync", c_void_p),
        ("dltensor_from_py_object_no_sync", c_void_p),
        ("current_work_stream", c_void_p),
    ]


# ---- Our C types ---------------------------------------------------------------------------

status_t = c_int32  # dlpack_helpers_status and the other int32 enums


class Info(Structure):
    """dlpack_helpers_info"""
    _fields_ = [
        ("struct_size", c_size_t), ("version", c_char_p), ("major", c_uint32), ("minor", c_uint32),
        ("patch", c_uint32), ("dlpack_abi_major", c_uint32), ("dlpack_version", DLPackVersion),
        ("capabilities", c_uint64), ("accepts_legacy", c_bool), ("spec_version", c_uint32),
        ("profiles", c_uint32),
    ]


class VersionChoice(Structure):
    """dlpack_helpers_version_choice"""
    _fields_ = [("kind", c_int32), ("version", DLPackVersion)]


class ImportRequest(Structure):
    """dlpack_helpers_import_request"""
    _fields_ = [
        ("max_version", DLPackVersion), ("stream", py_object), ("has_dl_device", c_bool),
        ("dl_device", DLDevice), ("copy", c_int32), ("flags", c_uint32),
    ]


class Stream(Structure):
    """dlpack_helpers_stream"""
    _fields_ = [("kind", c_int32), ("handle", c_void_p)]


class ExportRequest(Structure):
    """dlpack_helpers_export_request"""
    _fields_ = [
        ("has_max_version", c_bool), ("max_version", DLPackVersion), ("has_stream", c_bool),
        ("stream", ctypes.c_int64), ("has_dl_device", c_bool), ("dl_device", DLDevice), ("copy", c_int32),
    ]


class ExportPlan(Structure):
    """dlpack_helpers_export_plan"""
    _fields_ = [
        ("kind", c_int32), ("version", DLPackVersion), ("device", DLDevice), ("copy", c_bool),
        ("flags", c_uint64), ("sync", c_int32), ("stream", Stream),
    ]


StreamWaitFn = ctypes.CFUNCTYPE(c_int32, c_void_p, c_int32, c_void_p, c_void_p)
StreamSyncFn = ctypes.CFUNCTYPE(c_int32, c_void_p, c_int32, c_void_p)


class StreamBackend(Structure):
    """dlpack_helpers_stream_backend"""
    _fields_ = [("ctx", c_void_p), ("wait", StreamWaitFn), ("synchronize", StreamSyncFn)]


StreamWaitHandleFn = ctypes.CFUNCTYPE(c_int32, c_void_p, c_int32, c_void_p, c_int32, c_void_p)


class StreamBackendEx(Structure):
    """dlpack_helpers_stream_backend_ex"""
    _fields_ = [("struct_size", c_size_t), ("ctx", c_void_p), ("wait", StreamWaitFn),
                ("synchronize", StreamSyncFn), ("wait_handle", StreamWaitHandleFn)]


class PointerInfo(Structure):
    """dlpack_helpers_pointer_info"""
    _fields_ = [
        ("struct_size", c_size_t), ("memory_class", c_int32), ("host_access", c_int32), ("device", DLDevice),
        ("native_device", c_void_p), ("backends_asked", c_uint32), ("backends_unreachable", c_uint32),
        ("answered_by", c_uint32), ("device_id_known", c_uint64),
    ]


class Layout(Structure):
    """dlpack_helpers_layout"""
    _fields_ = [
        ("numel", ctypes.c_int64), ("nbytes", ctypes.c_int64), ("storage_elements", ctypes.c_int64),
        ("lowest_byte", ctypes.c_int64), ("end_byte", ctypes.c_int64), ("first_element_alignment", c_uint64),
        ("properties", c_uint32), ("element_bits", c_uint32),
    ]


class ValidateOptions(Structure):
    """dlpack_helpers_validate_options"""
    _fields_ = [
        ("struct_size", c_size_t), ("flags", c_uint32), ("max_ndim", c_int32), ("data_alignment", c_uint64),
        ("first_element_alignment", c_uint64), ("dtype", DLDataType),
    ]


class Error(Structure):
    """dlpack_helpers_error: the caller-owned error object of the *_with_error variants."""
    _fields_ = [
        ("struct_size", c_size_t), ("status", c_int32), ("reserved", c_uint32), ("message_length", c_size_t),
        ("message", ctypes.c_char * 512),
    ]


ReleaseFn = ctypes.CFUNCTYPE(None, c_void_p)

P = POINTER
PV = P(DLManagedTensorVersioned)
PL = P(DLManagedTensor)

# name -> (restype, argtypes). Python objects cross as `void *`: py_object for borrowed inputs,
# POINTER(c_void_p) for returned new references.
PROTOTYPES = {
    # status model
    "dlpack_last_error_message": (c_char_p, ()),
    # issue 34 item 6: the status the last message belongs to
    "dlpack_last_error_status": (ctypes.c_int32, ()),
    "dlpack_status_string": (c_char_p, (status_t,)),
    "dlpack_status_python_exception": (c_char_p, (status_t,)),
    # info, devices
    "dlpack_get_info": (status_t, (P(Info),)),
    "dlpack_is_cpu_accessible": (c_bool, (DLDevice,)),
    "dlpack_device_host_access": (c_int32, (DLDevice,)),
    # tensors
    "dlpack_tensor_delete": (None, (PV,)),
    "dlpack_legacy_tensor_delete": (None, (PL,)),
    "dlpack_get_device": (status_t, (PV, P(DLDevice))),
    "dlpack_legacy_get_device": (status_t, (PL, P(DLDevice))),
    "dlpack_tensor_check_version": (status_t, (PV, P(c_int32))),
    "dlpack_tensor_check_version_or_delete": (status_t, (PV, P(c_int32))),
    # versions
    "dlpack_version_check": (status_t, (DLPackVersion, P(c_int32))),
    "dlpack_version_negotiate": (status_t, (DLPackVersion, c_uint32, P(DLPackVersion), P(VersionChoice))),
    # Python embedding
    "dlpack_capsule_destructor": (None, (c_void_p,)),
    "dlpack_capsule_new": (status_t, (PV, P(c_void_p))),
    "dlpack_legacy_capsule_new": (status_t, (PL, P(c_void_p))),
    "dlpack_capsule_consume": (status_t, (py_object, P(PV))),
    "dlpack_capsule_import": (status_t, (py_object, c_uint32, P(PV), P(c_uint32))),
    "dlpack_legacy_capsule_consume": (status_t, (py_object, P(PL))),
    "dlpack_capsule_new_view": (status_t, (P(DLTensor), c_uint64, py_object, c_int32, P(c_void_p))),
    "dlpack_capsule_new_view_validated": (status_t, (P(DLTensor), c_uint64, py_object, c_int32, P(c_void_p))),
    "dlpack_tensor_new_view_validated": (status_t, (P(DLTensor), c_uint64, py_object, P(PV))),
    "dlpack_object_import": (status_t, (py_object, P(ImportRequest), P(PV), P(c_uint32))),
    "dlpack_object_get_device": (status_t, (py_object, P(DLDevice))),
    "dlpack_object_query_device": (status_t, (py_object, c_uint32, P(DLDevice))),
    "dlpack_exchange_api_find": (status_t, (py_object, P(P(DLPackExchangeAPI)))),
    "dlpack_exchange_api_current_work_stream": (status_t, (P(DLPackExchangeAPI), DLDevice, c_uint32, P(Stream))),
    "dlpack_object_import_with_stream": (status_t, (py_object, P(ImportRequest), P(PV), P(c_uint32), P(Stream))),
    # validation, layout, names, ownership conversions
    "dlpack_tensor_create": (status_t, (c_void_p, DLDevice, c_int32, P(ctypes.c_int64), P(ctypes.c_int64), DLDataType,
                                        c_uint64, c_uint64, ReleaseFn, c_void_p, P(PV))),
    "dlpack_legacy_to_versioned": (status_t, (PL, c_uint64, P(PV))),
    "dlpack_legacy_tensor_wrap": (status_t, (PL, c_uint64, c_uint32, P(PV))),
    "dlpack_versioned_to_legacy": (status_t, (PV, c_uint32, P(c_uint64), P(PL))),
    "dlpack_tensor_get_flags": (status_t, (PV, P(c_uint64))),
    "dlpack_tensor_set_flags": (status_t, (PV, c_uint64, c_uint64)),
    "dlpack_tensor_writability": (status_t, (PV, P(c_int32))),
    "dlpack_legacy_tensor_writability": (status_t, (PL, P(c_int32))),
    # issue 25: stated vs assumed READ_ONLY
    "dlpack_tensor_read_only_origin": (status_t, (PV, P(c_int32))),
    "dlpack_dltensor_layout": (status_t, (P(DLTensor), c_uint64, P(Layout))),
    "dlpack_tensor_layout": (status_t, (PV, P(Layout))),
    "dlpack_compact_strides": (status_t, (c_int32, P(ctypes.c_int64), c_bool, P(ctypes.c_int64))),
    # issue 34 item 8 (peer case 59)
    "dlpack_dltensor_dim_order": (status_t, (P(DLTensor), P(c_int32), c_int32)),
    "dlpack_device_is_pointer_addressed": (c_bool, (DLDevice,)),
    "dlpack_dltensor_data_address": (status_t, (P(DLTensor), P(c_void_p))),
    "dlpack_dltensor_fits_allocation": (status_t, (P(DLTensor), c_uint64, c_void_p, c_uint64, P(c_bool))),
    "dlpack_dltensor_data_location": (status_t, (P(DLTensor), P(c_void_p), P(c_uint64))),
    "dlpack_dtype_format": (status_t, (DLDataType, c_char_p, c_size_t, P(c_size_t))),
    "dlpack_dtype_parse": (status_t, (c_char_p, P(DLDataType))),
    "dlpack_device_format": (status_t, (DLDevice, c_char_p, c_size_t, P(c_size_t))),
    "dlpack_device_check": (status_t, (DLDevice, c_uint32)),
    "dlpack_device_parse": (status_t, (c_char_p, P(DLDevice))),
    "dlpack_tensor_validate": (status_t, (PV, P(ValidateOptions), P(Layout))),
    "dlpack_legacy_tensor_validate": (status_t, (PL, P(ValidateOptions), P(Layout))),
    "dlpack_dltensor_validate": (status_t, (P(DLTensor), DLPackVersion, c_uint64, P(ValidateOptions), P(Layout))),
    # streams
    "dlpack_stream_decode": (status_t, (DLDevice, c_bool, ctypes.c_int64, c_uint32, P(Stream))),
    "dlpack_stream_encode": (status_t, (DLDevice, c_void_p, P(c_bool), P(ctypes.c_int64))),
    "dlpack_stream_encode_decoded": (status_t, (DLDevice, P(Stream), P(c_bool), P(ctypes.c_int64))),
    "dlpack_export_request_resolve": (status_t, (P(ExportRequest), DLDevice, DLPackVersion, c_uint32, P(ExportPlan))),
    "dlpack_stream_backend_register": (status_t, (c_int32, P(StreamBackend))),
    "dlpack_stream_wait": (status_t, (DLDevice, c_void_p, P(Stream))),
    "dlpack_stream_synchronize": (status_t, (DLDevice, c_void_p)),
    "dlpack_tensor_delete_after_stream": (status_t, (PV, DLDevice, c_void_p)),
    "dlpack_stream_backend_check": (status_t, (c_int32,)),
    "dlpack_pointer_get_device": (status_t, (c_void_p, P(DLDevice))),
    "dlpack_stream_decode_handle": (status_t, (DLDevice, c_int32, c_void_p, P(Stream))),
    "dlpack_export_request_resolve_with_stream": (status_t, (P(ExportRequest), P(Stream), DLDevice, DLPackVersion,
                                                             c_uint32, P(ExportPlan))),
    "dlpack_stream_backend_register_ex": (status_t, (c_int32, P(StreamBackendEx))),
    # pointer classification, per-tensor host access
    "dlpack_level_zero_context_set": (status_t, (c_void_p,)),
    "dlpack_level_zero_context_set_devices": (status_t, (c_void_p, P(c_void_p), c_size_t)),
    "dlpack_pointer_classify": (status_t, (c_void_p, c_void_p, P(PointerInfo))),
    "dlpack_dltensor_host_access": (status_t, (P(DLTensor), c_void_p, P(c_int32))),
    "dlpack_tensor_host_access": (status_t, (PV, c_void_p, P(c_int32))),
    "dlpack_legacy_tensor_host_access": (status_t, (PL, c_void_p, P(c_int32))),
    "dlpack_python_stream_decode": (status_t, (py_object, DLDevice, c_uint32, P(Stream))),
    # issue 35: a producer with no callback
    "dlpack_tensor_alloc": (status_t, (DLDevice, c_int32, P(ctypes.c_int64), P(ctypes.c_int64), DLDataType, c_uint64,
                                       P(PV))),
}

# issue 35: each *_with_error variant is its base function with a last `dlpack_helpers_error *`.
for _base in ("dlpack_tensor_validate", "dlpack_legacy_tensor_validate", "dlpack_dltensor_validate",
              "dlpack_version_check", "dlpack_tensor_check_version", "dlpack_tensor_check_version_or_delete",
              "dlpack_version_negotiate", "dlpack_dtype_parse", "dlpack_device_parse", "dlpack_tensor_create",
              "dlpack_tensor_alloc", "dlpack_legacy_to_versioned", "dlpack_versioned_to_legacy"):
    PROTOTYPES[_base + "_with_error"] = (PROTOTYPES[_base][0], (*PROTOTYPES[_base][1], P(Error)))

# Constants (from the header; tests-py/test_prototypes.py checks them).
STATUS_OK = 0
EXPORT_LEGACY = 0
EXPORT_VERSIONED = 1
PRODUCER_EXPORTS_LEGACY = 0x1
COPY_IF_NEEDED, COPY_ALWAYS, COPY_NEVER = 0, 1, 2
IMPORT_EXCHANGE_API, IMPORT_KEEP_PYTHON_ERROR, IMPORT_LEGACY_WRITABLE = 0x1, 0x2, 0x4
IMPORTED_LEGACY, IMPORTED_AFTER_RETRY, IMPORTED_EXCHANGE_API = 0x1, 0x2, 0x4
CAP_CUDA, CAP_ROCM, CAP_PYTHON = 0x1, 0x2, 0x4
CAP_LEVEL_ZERO, CAP_POINTER_CUDA, CAP_POINTER_ROCM, CAP_POINTER_LEVEL_ZERO = 0x8, 0x10, 0x20, 0x40
SPEC_VERSION = 202612  # DLPACK_HELPERS_SPEC_VERSION (spec 2026.12)
PROFILE_CORE, PROFILE_STREAMS, PROFILE_PYTHON, PROFILE_EXCHANGE = 0x1, 0x2, 0x4, 0x8
STREAM_SYCL_QUEUE, STREAM_ZE_COMMAND_QUEUE, STREAM_ZE_COMMAND_LIST = 6, 7, 8
STREAM_NO_SYNC, STREAM_NONE, STREAM_LEGACY_DEFAULT, STREAM_DEFAULT, STREAM_HANDLE = 0, 1, 2, 4, 5
WORK_STREAM_NULL_IS_DEFAULT = 0x1
HOST_ACCESS_NEVER, HOST_ACCESS_ALWAYS, HOST_ACCESS_DEPENDS, HOST_ACCESS_UNKNOWN = 0, 1, 2, 3
FLAG_READ_ONLY, FLAG_IS_COPIED, FLAG_IS_SUBBYTE_TYPE_PADDED = 1, 2, 4
READ_ONLY_ORIGIN_NONE, READ_ONLY_ORIGIN_STATED, READ_ONLY_ORIGIN_LEGACY = 0, 1, 2  # issue 25

_NAMES = {"linux": "libdlpack_helpers.so", "darwin": "libdlpack_helpers.dylib", "win32": "dlpack_helpers.dll"}


def _checkout_root(here: Path):
    """The source checkout this package runs from (``<root>/python/dlpack_helpers``), or None
    for an installed copy (site-packages, a --target folder, a wheel)."""
    root = here.parent.parent
    if here.parent.name == "python" and (root / "Cargo.toml").is_file() \
            and (root / "include" / "dlpack_helpers.h").is_file():
        return root
    return None


def _package_library(lib: Path, name: str) -> Path:
    """The library file in a package's ``lib/``: a wheel holds one file, named by the SONAME
    (``libdlpack_helpers.so.0.1``), beside ``libdlpack_helpers.so``, a linker script that ctypes
    cannot load. The first ELF file among ``name*``, else ``lib/name`` (reported as tried)."""
    try:
        for p in sorted(lib.glob(name + "*")):
            if p.is_file():
                with open(p, "rb") as f:
                    if f.read(4) == b"\x7fELF":
                        return p
    except OSError:
        pass
    return lib / name


def candidates(here: Path | None = None, env: str | None = None) -> list[tuple[Path, str]]:
    """Where the library is looked for, in order, as ``(path, where)`` pairs."""
    name = _NAMES.get(sys.platform, "libdlpack_helpers.so")
    here = Path(__file__).resolve().parent if here is None else here
    env = os.environ.get("DLPACK_HELPERS_LIBRARY") if env is None else env
    out = []
    if here == Path(__file__).resolve().parent:
        try:
            from ._native import _library_path
            linked = _library_path()
        except ImportError:
            linked = None
        if linked:
            out.append((Path(linked), "the library dlpack_helpers._native is linked against"))
    out.append((_package_library(here / "lib", name), "the package's lib/ folder"))
    if env:
        out.append((Path(env), "$DLPACK_HELPERS_LIBRARY"))
    root = _checkout_root(here)
    if root is not None:
        out.append((root / "target" / "release" / name, "the source checkout's target/release"))
    return out


def load(here: Path | None = None, env: str | None = None) -> ctypes.PyDLL:
    tried = []
    for path, where in candidates(here, env):
        if not path.is_file():
            tried.append(f"{path} ({where}): not found")
            continue
        try:
            lib = ctypes.PyDLL(str(path))
        except OSError as e:
            tried.append(f"{path} ({where}): {e}")
            continue
        bind(lib)
        return lib
    env_set = os.environ.get("DLPACK_HELPERS_LIBRARY") if env is None else env
    raise ImportError(
        "dlpack_helpers: could not load libdlpack_helpers. Tried:\n  " + "\n  ".join(tried) + "\n"
        "Fix: install the package with `pip install .` at the root of the dlpack-helpers checkout "
        "(it builds and installs the library into the package's lib/ folder), or set "
        "DLPACK_HELPERS_LIBRARY to the library file" + ("" if env_set else " (it is not set)") + ".")


def bind(lib) -> None:
    for name, (restype, argtypes) in PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = list(argtypes)


lib = load()
