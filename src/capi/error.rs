//! Status codes and the last error message of the calling thread.
//!
//! Numbering is fixed: a code is never reused or renumbered. Ranges: 1–9 arguments and
//! internal errors, 10–19 versions, 20–39 tensor validation and layout, 40–59 devices and
//! streams, 60–79 the Python embedding. The constants below are declared in numeric order, one
//! group per range (the header keeps this order).

use crate::rules::{Error, Fault};
use core::cell::{Cell, RefCell};
use core::ffi::{CStr, c_char};
use std::ffi::CString;

/// Status returned by every fallible function: 0 (`DLPACK_HELPERS_STATUS_OK`) is success, any
/// other value one of the fixed, positive `DLPACK_HELPERS_STATUS_*` codes. Out-parameters are
/// written only when the status is OK, with one exception: `BUFFER_TOO_SMALL` writes the length
/// the result needs to the call's length out-parameter. `dlpack_last_error_message()` gives the details of a
/// failure and `dlpack_status_string()` names a code.
pub type dlpack_helpers_status = i32;

/// Success.
pub const DLPACK_HELPERS_STATUS_OK: dlpack_helpers_status = 0;
/// A required pointer argument is NULL. Nothing was read or written.
pub const DLPACK_HELPERS_STATUS_NULL_POINTER: dlpack_helpers_status = 1;
/// An argument's value is outside its documented range (for example a `struct_size` too small
/// to hold the first field, or unknown flag bits).
pub const DLPACK_HELPERS_STATUS_INVALID_ARGUMENT: dlpack_helpers_status = 2;
/// An internal error: a Rust panic was caught at the C boundary. Nothing unwound into C; the
/// message says what happened. Please report it.
pub const DLPACK_HELPERS_STATUS_PANIC: dlpack_helpers_status = 3;

/// A versioned tensor (or version) has a DLPack major version this library cannot read.
/// Only its deleter may be called (DLPack 1.0). Python producers and consumers raise
/// `BufferError` for it.
pub const DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION: dlpack_helpers_status = 10;
/// Version negotiation found no struct the producer can export for the consumer's
/// `max_version` (the array API's `BufferError`).
pub const DLPACK_HELPERS_STATUS_NO_COMMON_VERSION: dlpack_helpers_status = 11;
/// The producer does not understand a keyword the consumer passed, for example a
/// `__dlpack__` that predates `max_version` (the array API's `TypeError`: the consumer may
/// retry without the keyword). Distinct from `DLPACK_HELPERS_STATUS_NO_COMMON_VERSION`.
pub const DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD: dlpack_helpers_status = 12;

/// `ndim` is negative, above the library bound `DLPACK_HELPERS_MAX_NDIM` (1024), or above
/// the caller's `max_ndim`. No shape or strides array was read.
pub const DLPACK_HELPERS_STATUS_INVALID_NDIM: dlpack_helpers_status = 20;
/// `shape` is NULL while `ndim != 0` (DLPack 1.2: only a 0-d tensor may have NULL shape).
pub const DLPACK_HELPERS_STATUS_NULL_SHAPE: dlpack_helpers_status = 21;
/// `strides` is NULL while `ndim != 0` and the producer declares DLPack 1.2 or newer (a
/// violation since DLPack 1.2; pass `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES` to read them as
/// compact row-major, as for legacy and 1.0/1.1 producers).
pub const DLPACK_HELPERS_STATUS_NULL_STRIDES: dlpack_helpers_status = 22;
/// An extent in `shape` is negative.
pub const DLPACK_HELPERS_STATUS_INVALID_SHAPE: dlpack_helpers_status = 23;
/// The element count, a stride product, the byte extent, `byte_offset` or
/// `data + byte_offset` does not fit in 64 bits (or in the address space).
pub const DLPACK_HELPERS_STATUS_OVERFLOW: dlpack_helpers_status = 24;
/// `data` is NULL for a tensor with at least one element on a pointer-addressed device type
/// (a 0-d tensor has one element). NULL data is valid for empty tensors (peer case 34).
pub const DLPACK_HELPERS_STATUS_NULL_DATA: dlpack_helpers_status = 25;
/// Unknown dtype code, `lanes == 0`, or `bits` not allowed for the code (bool needs 8,
/// bfloat16 16, float8 8, float6 6, float4 4; see `docs/validation.md`).
pub const DLPACK_HELPERS_STATUS_INVALID_DTYPE: dlpack_helpers_status = 26;
/// The dtype is valid but not the one the caller requires, or a vector (`lanes > 1`) the
/// caller refuses.
pub const DLPACK_HELPERS_STATUS_DTYPE_MISMATCH: dlpack_helpers_status = 27;
/// `flags` has bits the producer's DLPack version does not define, or a flag the target
/// form cannot carry (a padded sub-byte tensor converted to legacy).
pub const DLPACK_HELPERS_STATUS_INVALID_FLAGS: dlpack_helpers_status = 28;
/// The caller requires C, F or compact contiguity and the tensor does not have it.
pub const DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS: dlpack_helpers_status = 29;
/// The caller requires host-accessible memory and the device type does not guarantee it.
pub const DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE: dlpack_helpers_status = 30;
/// The caller requires an alignment of `data` or of the first element that it does not have.
pub const DLPACK_HELPERS_STATUS_MISALIGNED: dlpack_helpers_status = 31;
/// The caller requires a writable tensor and the tensor is read-only, or legacy (writability
/// unknown); or a read-only tensor would lose its flag in a legacy conversion.
pub const DLPACK_HELPERS_STATUS_READ_ONLY: dlpack_helpers_status = 32;
/// `data` is an opaque handle on this device type (OpenCL, Vulkan, Metal, unknown, ...): it
/// is not an address, so no pointer arithmetic is done. Use `data` and `byte_offset` separately.
pub const DLPACK_HELPERS_STATUS_OPAQUE_HANDLE: dlpack_helpers_status = 33;
/// A caller's buffer is too small for the result (names need at most
/// `DLPACK_HELPERS_NAME_MAX` bytes). The buffer is untouched; the length the result needs
/// (without its NUL) is written to the call's length out-parameter when it is not NULL, the one
/// out-parameter written on failure (`dlpack_dtype_format`, `dlpack_device_format`).
pub const DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL: dlpack_helpers_status = 34;
/// A dtype or device name does not parse, or a value has no name.
pub const DLPACK_HELPERS_STATUS_UNKNOWN_NAME: dlpack_helpers_status = 35;
/// The caller refuses broadcast (stride 0 on an extent > 1) or negative strides and the
/// tensor has them.
pub const DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES: dlpack_helpers_status = 36;
/// Memory for a new managed tensor could not be allocated.
pub const DLPACK_HELPERS_STATUS_OUT_OF_MEMORY: dlpack_helpers_status = 37;
/// The caller refuses copies (`DLPACK_HELPERS_VALIDATE_REJECT_COPIED`) and the tensor's flags
/// have `DLPACK_FLAG_BITMASK_IS_COPIED` (peer case 52).
pub const DLPACK_HELPERS_STATUS_COPIED_REJECTED: dlpack_helpers_status = 38;

/// The `stream` argument is not valid for the device: 0 on CUDA, 1 or 2 on ROCm, any integer
/// for `kDLCPU` (outside the lenient mode), a value below -1, or a stream with
/// `dl_device = (kDLCPU, 0)` (the array API's `ValueError`).
pub const DLPACK_HELPERS_STATUS_INVALID_STREAM: dlpack_helpers_status = 40;
/// A copy is needed to serve the request but it says `copy=False` (the array API's
/// `BufferError`).
pub const DLPACK_HELPERS_STATUS_COPY_FORBIDDEN: dlpack_helpers_status = 41;
/// The requested `dl_device` cannot be served: only the tensor's own device and `(kDLCPU, 0)`
/// are (the array API's `BufferError`); or `dlpack_tensor_alloc` was asked for memory on a
/// device other than `(kDLCPU, 0)`, the only one it allocates on.
pub const DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE: dlpack_helpers_status = 42;
/// No stream backend for the device type: the CUDA driver (`libcuda.so.1`) or HIP runtime
/// (`libamdhip64.so`) could not be loaded or initialized, or no backend is registered for the
/// device type. The message names the library and the reason.
pub const DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE: dlpack_helpers_status = 43;
/// The device runtime reported an error; the message names the call and the runtime's error.
pub const DLPACK_HELPERS_STATUS_DEVICE_ERROR: dlpack_helpers_status = 44;
/// No backend could classify a pointer (`dlpack_pointer_get_device`): no device runtime was
/// available to ask, or one that could own the memory was unreachable (its library override
/// names a missing file, it failed to initialize, or Level Zero was given no context). The
/// memory is not claimed to be host memory: the message names the backends asked and those
/// that could not be. `dlpack_pointer_classify` gives the same facts as fields.
pub const DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN: dlpack_helpers_status = 45;
/// A stream object whose type the device family does not define: for example a queue object
/// for a CUDA tensor, or an object that is neither an `int`, `None` nor a queue exposing
/// `addressof_ref()` for `kDLOneAPI` (Python's `TypeError`).
pub const DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE: dlpack_helpers_status = 46;
/// An exchange API table's `current_work_stream` answered success and NULL for a device other
/// than `kDLCPU` (`dlpack_exchange_api_current_work_stream`): NULL names no stream there, so
/// it is never read as "the default stream" unless the caller opts in (peer case 53).
pub const DLPACK_HELPERS_STATUS_NULL_WORK_STREAM: dlpack_helpers_status = 47;
/// A `DLDevice` this library will not accept, create or return (issue 22, peer cases 54 and
/// 55): a negative `device_id` anywhere (an index-less device is not `-1`), or, in a producer
/// helper (`dlpack_tensor_create`, `dlpack_capsule_new_view`, `dlpack_device_check` without
/// `DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE`), a device type DLPack 1.3 does not assign
/// (0, 5, 6, 19, 20, 99, negative, ...). Consumer helpers pass unknown device types through
/// (`ValueError`).
pub const DLPACK_HELPERS_STATUS_INVALID_DEVICE: dlpack_helpers_status = 48;
/// The memory's device type is established but its DLPack device id is not
/// (`dlpack_pointer_get_device` on Level Zero USM memory whose device is not in the device list
/// registered with `dlpack_level_zero_context_set_devices`, or USM host memory, which has no device).
/// Nothing is written: the id is never answered as -1 (peer case 54).
/// `dlpack_pointer_classify` gives the type, class and the Level Zero device handle.
pub const DLPACK_HELPERS_STATUS_DEVICE_ID_UNKNOWN: dlpack_helpers_status = 49;

/// No Python interpreter in this process: the Python C API functions did not resolve at run
/// time (this library never links libpython). Returned by every Python entry point with a
/// status (`dlpack_capsule_*`, `dlpack_legacy_capsule_*`, `dlpack_object_*`,
/// `dlpack_exchange_api_find`) called from a program without Python.
pub const DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE: dlpack_helpers_status = 60;
/// An argument that must be a `PyCapsule` is another Python object (`TypeError`).
pub const DLPACK_HELPERS_STATUS_NOT_A_CAPSULE: dlpack_helpers_status = 61;
/// A capsule whose name is not one of the DLPack names (`"dltensor"`, `"dltensor_versioned"`,
/// their `"used_"` forms, `"dlpack_exchange_api"`), for example IREE's `"dltensor_used"`
/// (peer case 8) (`ValueError`).
pub const DLPACK_HELPERS_STATUS_CAPSULE_NAME: dlpack_helpers_status = 62;
/// The capsule was already consumed (its name is `"used_dltensor"` or
/// `"used_dltensor_versioned"`): a capsule is consumed exactly once (`ValueError`).
pub const DLPACK_HELPERS_STATUS_CAPSULE_CONSUMED: dlpack_helpers_status = 63;
/// The object has no `__dlpack__` (or `__dlpack_device__`) method: the array API's
/// `AttributeError`.
pub const DLPACK_HELPERS_STATUS_NO_DLPACK_METHOD: dlpack_helpers_status = 64;
/// The producer's `__dlpack__` / `__dlpack_device__` / exchange-API call raised `BufferError`
/// (the data cannot be exported as asked); the message carries the producer's message.
pub const DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR: dlpack_helpers_status = 65;
/// The producer raised `TypeError` and no retry applied (see `dlpack_object_import`).
pub const DLPACK_HELPERS_STATUS_PRODUCER_TYPE_ERROR: dlpack_helpers_status = 66;
/// The producer raised another exception (for example `NotImplementedError`, peer case 21);
/// the message starts with the exception's type name.
pub const DLPACK_HELPERS_STATUS_PRODUCER_ERROR: dlpack_helpers_status = 67;
/// The producer returned something the protocol does not allow: `__dlpack__` returned no
/// capsule, `__dlpack_device__` no `(int, int)` pair (`TypeError`).
pub const DLPACK_HELPERS_STATUS_BAD_PRODUCER_RESULT: dlpack_helpers_status = 68;
/// The type's C exchange API is unusable: a NULL table (the DLPack 1.2 integer is 0), a DLPack
/// 1.2 integer that cannot be a table's address (a `bool`, the first page, misaligned, outside
/// user address space, or memory that is not readable), a capsule of the wrong name, a cycle in
/// `prev_api`, or a NULL function pointer the specification says may not be NULL
/// (`BufferError`).
pub const DLPACK_HELPERS_STATUS_EXCHANGE_API_INVALID: dlpack_helpers_status = 69;
/// The object's type has neither `__dlpack_c_exchange_api__` (DLPack 1.3) nor
/// `__c_dlpack_exchange_api__` (DLPack 1.2) (`AttributeError`).
pub const DLPACK_HELPERS_STATUS_NO_EXCHANGE_API: dlpack_helpers_status = 70;
/// A Python exception caused the failure and is **still set** (the thread's pending exception,
/// the same object the producer or the Python C API raised, with its type and traceback): return
/// NULL from your C function to propagate it, or handle it; do not raise another one. Returned
/// by `dlpack_object_import`, `dlpack_object_query_device` and `dlpack_capsule_import` when the
/// caller passes `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`, and by every Python entry point for
/// an exception that does not derive from `Exception` (`KeyboardInterrupt`, `SystemExit`,
/// `GeneratorExit`, other `BaseException` subclasses), which this library never catches or
/// clears. `dlpack_last_error_message()` names the exception's type and message.
/// `dlpack_status_python_exception` names `RuntimeError` for it only as a fallback for a
/// binding that does not check: the pending exception is the one to raise.
pub const DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET: dlpack_helpers_status = 71;

/// The status of an error; the one place where errors become codes.
pub(crate) fn status_of(e: &Error) -> dlpack_helpers_status {
    match e {
        Error::NullPointer(_) => DLPACK_HELPERS_STATUS_NULL_POINTER,
        Error::InvalidArgument(_) => DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
        Error::Panic(_) => DLPACK_HELPERS_STATUS_PANIC,
        Error::UnsupportedVersion { .. } => DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION,
        Error::NoCommonVersion(_) => DLPACK_HELPERS_STATUS_NO_COMMON_VERSION,
        Error::KeywordNotUnderstood(_) => DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD,
        Error::InvalidStream(_) => DLPACK_HELPERS_STATUS_INVALID_STREAM,
        Error::CopyForbidden(_) => DLPACK_HELPERS_STATUS_COPY_FORBIDDEN,
        Error::UnsupportedDevice(_) => DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE,
        Error::BackendUnavailable(_) => DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE,
        Error::DeviceError(_) => DLPACK_HELPERS_STATUS_DEVICE_ERROR,
        Error::DeviceUnknown(_) => DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN,
        Error::InvalidStreamType(_) => DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE,
        Error::NullWorkStream(_) => DLPACK_HELPERS_STATUS_NULL_WORK_STREAM,
        Error::InvalidDevice(_) => DLPACK_HELPERS_STATUS_INVALID_DEVICE,
        Error::DeviceIdUnknown(_) => DLPACK_HELPERS_STATUS_DEVICE_ID_UNKNOWN,
        Error::PythonUnavailable(_) => DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE,
        Error::NotACapsule(_) => DLPACK_HELPERS_STATUS_NOT_A_CAPSULE,
        Error::CapsuleName(_) => DLPACK_HELPERS_STATUS_CAPSULE_NAME,
        Error::CapsuleConsumed(_) => DLPACK_HELPERS_STATUS_CAPSULE_CONSUMED,
        Error::NoDlpackMethod(_) => DLPACK_HELPERS_STATUS_NO_DLPACK_METHOD,
        Error::ProducerBufferError(_) => DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR,
        Error::ProducerTypeError(_) => DLPACK_HELPERS_STATUS_PRODUCER_TYPE_ERROR,
        Error::ProducerError(_) => DLPACK_HELPERS_STATUS_PRODUCER_ERROR,
        Error::BadProducerResult(_) => DLPACK_HELPERS_STATUS_BAD_PRODUCER_RESULT,
        Error::ExchangeApiInvalid(_) | Error::ExchangeApiUnchecked(_) => {
            DLPACK_HELPERS_STATUS_EXCHANGE_API_INVALID
        }
        Error::NoExchangeApi(_) => DLPACK_HELPERS_STATUS_NO_EXCHANGE_API,
        Error::PythonErrorSet(_) => DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET,
        Error::Tensor { fault, .. } => match fault {
            Fault::InvalidNdim => DLPACK_HELPERS_STATUS_INVALID_NDIM,
            Fault::NullShape => DLPACK_HELPERS_STATUS_NULL_SHAPE,
            Fault::NullStrides => DLPACK_HELPERS_STATUS_NULL_STRIDES,
            Fault::InvalidShape => DLPACK_HELPERS_STATUS_INVALID_SHAPE,
            Fault::Overflow => DLPACK_HELPERS_STATUS_OVERFLOW,
            Fault::NullData => DLPACK_HELPERS_STATUS_NULL_DATA,
            Fault::InvalidDtype => DLPACK_HELPERS_STATUS_INVALID_DTYPE,
            Fault::DtypeMismatch => DLPACK_HELPERS_STATUS_DTYPE_MISMATCH,
            Fault::InvalidFlags => DLPACK_HELPERS_STATUS_INVALID_FLAGS,
            Fault::NotContiguous => DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS,
            Fault::NotCpuAccessible => DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE,
            Fault::Misaligned => DLPACK_HELPERS_STATUS_MISALIGNED,
            Fault::ReadOnly => DLPACK_HELPERS_STATUS_READ_ONLY,
            Fault::OpaqueHandle => DLPACK_HELPERS_STATUS_OPAQUE_HANDLE,
            Fault::BufferTooSmall => DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL,
            Fault::UnknownName => DLPACK_HELPERS_STATUS_UNKNOWN_NAME,
            Fault::UnsupportedStrides => DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES,
            Fault::OutOfMemory => DLPACK_HELPERS_STATUS_OUT_OF_MEMORY,
            Fault::Copied => DLPACK_HELPERS_STATUS_COPIED_REJECTED,
        },
    }
}

/// (code, name, Python exception) for every status. The single table behind
/// `dlpack_status_string` and `dlpack_status_python_exception`.
#[rustfmt::skip]
const STATUSES: &[(dlpack_helpers_status, &CStr, &CStr)] = &[
    (DLPACK_HELPERS_STATUS_OK, c"OK", c""),
    (DLPACK_HELPERS_STATUS_NULL_POINTER, c"NULL_POINTER", c"ValueError"),
    (DLPACK_HELPERS_STATUS_INVALID_ARGUMENT, c"INVALID_ARGUMENT", c"ValueError"),
    (DLPACK_HELPERS_STATUS_PANIC, c"PANIC", c"RuntimeError"),
    (DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION, c"UNSUPPORTED_VERSION", c"BufferError"),
    (DLPACK_HELPERS_STATUS_NO_COMMON_VERSION, c"NO_COMMON_VERSION", c"BufferError"),
    (DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD, c"KEYWORD_NOT_UNDERSTOOD", c"TypeError"),
    (DLPACK_HELPERS_STATUS_INVALID_STREAM, c"INVALID_STREAM", c"ValueError"),
    (DLPACK_HELPERS_STATUS_COPY_FORBIDDEN, c"COPY_FORBIDDEN", c"BufferError"),
    (DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE, c"UNSUPPORTED_DEVICE", c"BufferError"),
    (DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE, c"BACKEND_UNAVAILABLE", c"RuntimeError"),
    (DLPACK_HELPERS_STATUS_DEVICE_ERROR, c"DEVICE_ERROR", c"RuntimeError"),
    (DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN, c"DEVICE_UNKNOWN", c"RuntimeError"),
    (DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE, c"INVALID_STREAM_TYPE", c"TypeError"),
    (DLPACK_HELPERS_STATUS_NULL_WORK_STREAM, c"NULL_WORK_STREAM", c"BufferError"),
    (DLPACK_HELPERS_STATUS_INVALID_DEVICE, c"INVALID_DEVICE", c"ValueError"),
    (DLPACK_HELPERS_STATUS_DEVICE_ID_UNKNOWN, c"DEVICE_ID_UNKNOWN", c"RuntimeError"),
    (DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE, c"PYTHON_UNAVAILABLE", c"RuntimeError"),
    (DLPACK_HELPERS_STATUS_NOT_A_CAPSULE, c"NOT_A_CAPSULE", c"TypeError"),
    (DLPACK_HELPERS_STATUS_CAPSULE_NAME, c"CAPSULE_NAME", c"ValueError"),
    (DLPACK_HELPERS_STATUS_CAPSULE_CONSUMED, c"CAPSULE_CONSUMED", c"ValueError"),
    (DLPACK_HELPERS_STATUS_NO_DLPACK_METHOD, c"NO_DLPACK_METHOD", c"AttributeError"),
    (DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR, c"PRODUCER_BUFFER_ERROR", c"BufferError"),
    (DLPACK_HELPERS_STATUS_PRODUCER_TYPE_ERROR, c"PRODUCER_TYPE_ERROR", c"TypeError"),
    (DLPACK_HELPERS_STATUS_PRODUCER_ERROR, c"PRODUCER_ERROR", c"RuntimeError"),
    (DLPACK_HELPERS_STATUS_BAD_PRODUCER_RESULT, c"BAD_PRODUCER_RESULT", c"TypeError"),
    (DLPACK_HELPERS_STATUS_EXCHANGE_API_INVALID, c"EXCHANGE_API_INVALID", c"BufferError"),
    (DLPACK_HELPERS_STATUS_NO_EXCHANGE_API, c"NO_EXCHANGE_API", c"AttributeError"),
    (DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET, c"PYTHON_ERROR_SET", c"RuntimeError"),
    (DLPACK_HELPERS_STATUS_INVALID_NDIM, c"INVALID_NDIM", c"BufferError"),
    (DLPACK_HELPERS_STATUS_NULL_SHAPE, c"NULL_SHAPE", c"BufferError"),
    (DLPACK_HELPERS_STATUS_NULL_STRIDES, c"NULL_STRIDES", c"BufferError"),
    (DLPACK_HELPERS_STATUS_INVALID_SHAPE, c"INVALID_SHAPE", c"BufferError"),
    (DLPACK_HELPERS_STATUS_OVERFLOW, c"OVERFLOW", c"BufferError"),
    (DLPACK_HELPERS_STATUS_NULL_DATA, c"NULL_DATA", c"BufferError"),
    (DLPACK_HELPERS_STATUS_INVALID_DTYPE, c"INVALID_DTYPE", c"BufferError"),
    (DLPACK_HELPERS_STATUS_DTYPE_MISMATCH, c"DTYPE_MISMATCH", c"BufferError"),
    (DLPACK_HELPERS_STATUS_INVALID_FLAGS, c"INVALID_FLAGS", c"BufferError"),
    (DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS, c"NOT_CONTIGUOUS", c"BufferError"),
    (DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE, c"NOT_CPU_ACCESSIBLE", c"BufferError"),
    (DLPACK_HELPERS_STATUS_MISALIGNED, c"MISALIGNED", c"BufferError"),
    (DLPACK_HELPERS_STATUS_READ_ONLY, c"READ_ONLY", c"BufferError"),
    (DLPACK_HELPERS_STATUS_OPAQUE_HANDLE, c"OPAQUE_HANDLE", c"BufferError"),
    (DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL, c"BUFFER_TOO_SMALL", c"ValueError"),
    (DLPACK_HELPERS_STATUS_UNKNOWN_NAME, c"UNKNOWN_NAME", c"ValueError"),
    (DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES, c"UNSUPPORTED_STRIDES", c"BufferError"),
    (DLPACK_HELPERS_STATUS_OUT_OF_MEMORY, c"OUT_OF_MEMORY", c"MemoryError"),
    (DLPACK_HELPERS_STATUS_COPIED_REJECTED, c"COPIED_REJECTED", c"BufferError"),
];

fn lookup(
    code: dlpack_helpers_status,
) -> Option<&'static (dlpack_helpers_status, &'static CStr, &'static CStr)> {
    STATUSES.iter().find(|(c, _, _)| *c == code)
}

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
    /// The status that went with `LAST_ERROR` (0 before any failing call on the thread).
    static LAST_STATUS: Cell<dlpack_helpers_status> = const { Cell::new(DLPACK_HELPERS_STATUS_OK) };
}

/// Record `e` as this thread's last error and return its status. Only failing calls get here,
/// so successful calls never touch thread-local storage.
#[cold]
pub(crate) fn fail(e: Error) -> dlpack_helpers_status {
    let status = status_of(&e);
    set_last_error(&e.to_string());
    // `try_with`: during thread teardown the slot may be gone; the status still reports.
    let _ = LAST_STATUS.try_with(|slot| slot.set(status));
    status
}

#[cold]
pub(crate) fn set_last_error(message: &str) {
    let c = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // `try_with`: during thread teardown the slot may be gone; the status still reports.
    let _ = LAST_ERROR.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = Some(c);
        }
    });
}

/// The status the last failing call on the calling thread returned, the one whose message
/// `dlpack_last_error_message()` holds: `DLPACK_HELPERS_STATUS_OK` (0) when no call on this
/// thread has failed yet; `DLPACK_HELPERS_STATUS_PANIC` after a caught panic in a function that
/// returns a value rather than a status. A binding that turns a status into an exception asks it
/// first, so that it attaches the message only when the message belongs to that status (an
/// unrelated earlier failure's message would mislead; issue 34).
///
/// The value is a `dlpack_helpers_status` code returned as data (`int32_t`, not
/// `dlpack_helpers_status`: it is not the outcome of this call, which cannot fail). Successful
/// calls leave it unchanged, as they leave the message. Thread-safety: each thread has its own.
#[unsafe(no_mangle)]
pub extern "C" fn dlpack_last_error_status() -> i32 {
    crate::capi::boundary::value(DLPACK_HELPERS_STATUS_PANIC, || {
        LAST_STATUS
            .try_with(Cell::get)
            .unwrap_or(DLPACK_HELPERS_STATUS_OK)
    })
}

/// The message of the last failing call on the calling thread: NUL-terminated UTF-8, never
/// NULL (an empty string when no call on this thread has failed yet).
///
/// Lifetime: the pointer stays valid until the next failing call on the same thread (or the
/// thread's exit). Successful calls leave the message unchanged. Copy it if you need it longer.
/// Thread-safety: each thread has its own message. Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn dlpack_last_error_message() -> *const c_char {
    crate::capi::boundary::value(c"".as_ptr(), || {
        LAST_ERROR
            .try_with(|slot| match slot.try_borrow() {
                Ok(s) => s.as_ref().map_or(c"".as_ptr(), |m| m.as_ptr()),
                Err(_) => c"".as_ptr(),
            })
            .unwrap_or(c"".as_ptr())
    })
}

/// Capacity of `dlpack_helpers_error.message` in bytes, its terminating NUL included: a message
/// of up to 511 bytes is stored whole.
pub const DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY: usize = 512;

/// A caller-owned error object: the status and message of one failing call, for callers whose
/// threads move between OS threads (Go goroutines, Java virtual threads, .NET async, coroutines),
/// where `dlpack_last_error_message()` read in a second call may belong to another OS thread and
/// so to another call. Passed as the last argument of the `*_with_error` variants, which fill it
/// when they fail and leave it untouched when they succeed (like every out-parameter, it is
/// written only when it has something to say: the returned status is authoritative).
///
/// Extensible (`struct_size` rule, spec `ABI-STRUCT-*`): set `struct_size` to
/// `sizeof(dlpack_helpers_error)` before the first call and zero the rest, e.g.
/// `dlpack_helpers_error err = { sizeof err };`. The object can be reused for any number of
/// calls; a call that fills it sets every field below. Layout on LP64 platforms: 536 bytes,
/// `struct_size` at 0, `status` at 8, `reserved` at 12, `message_length` at 16, `message` at 24;
/// no implicit padding.
///
/// Nothing in it is allocated or owned by the library: there is nothing to free.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dlpack_helpers_error {
    /// In: the size of the caller's object in bytes (at least `sizeof(dlpack_helpers_error)` of
    /// this header, 536 on LP64). Out, when the object is filled: the bytes filled (this
    /// library's `sizeof(dlpack_helpers_error)`).
    pub struct_size: usize,
    /// The failing call's status, the value it returned (never `DLPACK_HELPERS_STATUS_OK`).
    pub status: dlpack_helpers_status,
    /// Written 0. Explicit, so that every FFI sees the same layout without implicit padding.
    pub reserved: u32,
    /// The length in bytes of the whole message, without its NUL, even when `message` holds a
    /// truncated copy: the message was truncated exactly when `message_length >=
    /// DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY`.
    pub message_length: usize,
    /// The message, the same text `dlpack_last_error_message()` returns on the failing call's
    /// thread: NUL-terminated UTF-8. A message longer than 511 bytes is cut at the last whole
    /// UTF-8 character that fits in 511 bytes, so the copy is always valid UTF-8.
    pub message: [c_char; DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY],
}

/// The smallest `struct_size` a `*_with_error` variant accepts: the end of `message`.
pub(crate) const ERROR_MIN_SIZE: usize = core::mem::size_of::<dlpack_helpers_error>();

const _: () = assert!(
    core::mem::offset_of!(dlpack_helpers_error, status) == core::mem::size_of::<usize>()
        && core::mem::offset_of!(dlpack_helpers_error, message_length)
            == core::mem::size_of::<usize>() + 8
        && core::mem::offset_of!(dlpack_helpers_error, message)
            == 2 * core::mem::size_of::<usize>() + 8
        && ERROR_MIN_SIZE == 2 * core::mem::size_of::<usize>() + 8 + 512
);

/// The longest prefix of `bytes` that is at most `max` bytes and ends on a UTF-8 character
/// boundary (a continuation byte `10xxxxxx` never starts the cut-off part).
pub(crate) fn utf8_prefix_len(bytes: &[u8], max: usize) -> usize {
    if bytes.len() <= max {
        return bytes.len();
    }
    let mut n = max;
    while n > 0 && bytes[n] & 0xC0 == 0x80 {
        n -= 1;
    }
    n
}

/// Fill a caller's error object with `status` and this thread's last error message (set by the
/// failing call just before, on this same thread: one C call never changes OS thread).
///
/// # Safety
/// `err` points to a writable `dlpack_helpers_error` of at least `ERROR_MIN_SIZE` bytes.
#[cold]
#[inline(never)]
pub(crate) unsafe fn fill_error(err: *mut dlpack_helpers_error, status: dlpack_helpers_status) {
    let mut message = [0 as c_char; DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY];
    let full = LAST_ERROR
        .try_with(|slot| match slot.try_borrow() {
            Ok(s) => s.as_ref().map_or(0, |m| {
                let b = m.to_bytes();
                let n = utf8_prefix_len(b, DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY - 1);
                for (d, &c) in message.iter_mut().zip(&b[..n]) {
                    *d = c as c_char;
                }
                b.len()
            }),
            Err(_) => 0,
        })
        .unwrap_or(0);
    let value = dlpack_helpers_error {
        struct_size: ERROR_MIN_SIZE,
        status,
        reserved: 0,
        message_length: full,
        message,
    };
    // SAFETY: caller contract: `err` holds at least a whole `dlpack_helpers_error`.
    unsafe { err.write(value) };
}

/// Refuse an error object whose `struct_size` is below `ERROR_MIN_SIZE`: the object is too small
/// to be written, so only the thread's last error message carries the detail.
#[cold]
#[inline(never)]
pub(crate) fn error_too_small(size: usize) -> dlpack_helpers_status {
    fail(Error::invalid(format!(
        "err->struct_size is {size}, below sizeof(dlpack_helpers_error) ({ERROR_MIN_SIZE}): set \
         it to sizeof(dlpack_helpers_error) before the call; nothing was done"
    )))
}

/// The name of a status code, for example `"UNSUPPORTED_VERSION"` for
/// `DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION`; `"UNKNOWN_STATUS"` for a value that is not a
/// status of this library version.
///
/// The string is static: never free it. Thread-safe. Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn dlpack_status_string(status: dlpack_helpers_status) -> *const c_char {
    crate::capi::boundary::value(c"UNKNOWN_STATUS".as_ptr(), || {
        lookup(status).map_or(c"UNKNOWN_STATUS".as_ptr(), |(_, name, _)| name.as_ptr())
    })
}

/// The Python exception type the array API and the DLPack Python specification prescribe for a
/// status, for bindings that raise: `"BufferError"` (the data cannot be exported or imported as
/// asked: unsupported version, no common version, a tensor that breaks a DLPack rule or the
/// caller's requirements, codes 20–33, 36 and 38), `"MemoryError"` (out of memory), `"TypeError"` (a keyword the producer does not
/// understand, a stream object of the wrong type), `"ValueError"` (bad arguments, unknown names, a buffer too small), `"RuntimeError"` (internal error and unknown
/// codes), `""` for `DLPACK_HELPERS_STATUS_OK`.
///
/// The string is static: never free it. Thread-safe. Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn dlpack_status_python_exception(status: dlpack_helpers_status) -> *const c_char {
    crate::capi::boundary::value(c"RuntimeError".as_ptr(), || {
        lookup(status).map_or(c"RuntimeError".as_ptr(), |(_, _, exc)| exc.as_ptr())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_prefix_never_splits_a_character() {
        // "é" is 2 bytes, "€" 3, "😀" 4: every cut lands before a whole character.
        let s = "aé€😀".as_bytes();
        let cuts: Vec<usize> = (0..=s.len()).map(|m| utf8_prefix_len(s, m)).collect();
        assert_eq!(cuts, vec![0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10]);
        for &n in &cuts {
            assert!(core::str::from_utf8(&s[..n]).is_ok());
        }
    }

    #[test]
    fn fill_error_copies_the_threads_message_cut_on_a_character_boundary() {
        // 300 two-byte characters: 600 bytes, more than the 511 the buffer holds.
        let long = "é".repeat(300);
        set_last_error(&long);
        let mut err = core::mem::MaybeUninit::<dlpack_helpers_error>::zeroed();
        // SAFETY: a whole, writable object.
        let err = unsafe {
            fill_error(err.as_mut_ptr(), DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
            err.assume_init()
        };
        assert_eq!(err.struct_size, ERROR_MIN_SIZE);
        assert_eq!(err.status, DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
        assert_eq!(err.reserved, 0);
        assert_eq!(err.message_length, 600);
        let bytes: Vec<u8> = err.message.iter().map(|&c| c as u8).collect();
        let end = bytes.iter().position(|&b| b == 0).unwrap();
        // 511 would split the 256th character: the cut is after 255 whole ones.
        assert_eq!(end, 510);
        assert_eq!(
            core::str::from_utf8(&bytes[..end]).unwrap(),
            "é".repeat(255)
        );
        // A short message is copied whole, its length exact.
        set_last_error("short");
        let mut err2 = core::mem::MaybeUninit::<dlpack_helpers_error>::zeroed();
        // SAFETY: as above.
        let err2 = unsafe {
            fill_error(err2.as_mut_ptr(), DLPACK_HELPERS_STATUS_NULL_POINTER);
            err2.assume_init()
        };
        assert_eq!(err2.message_length, 5);
        assert_eq!(
            &err2.message[..6]
                .iter()
                .map(|&c| c as u8)
                .collect::<Vec<_>>(),
            b"short\0"
        );
    }

    #[test]
    fn status_codes_are_unique_and_named() {
        let mut seen = std::collections::HashSet::new();
        for (code, name, _) in STATUSES {
            assert!(seen.insert(*code), "duplicate status {code}");
            assert!(!name.to_bytes().is_empty());
        }
    }

    #[test]
    fn last_error_status_goes_with_the_message_per_thread() {
        std::thread::spawn(|| {
            assert_eq!(dlpack_last_error_status(), DLPACK_HELPERS_STATUS_OK);
            let st = fail(Error::NullPointer("x"));
            assert_eq!(st, DLPACK_HELPERS_STATUS_NULL_POINTER);
            assert_eq!(
                dlpack_last_error_status(),
                DLPACK_HELPERS_STATUS_NULL_POINTER
            );
            let st = fail(Error::fault(Fault::Overflow, "y".to_owned()));
            assert_eq!(dlpack_last_error_status(), st);
            assert_eq!(st, DLPACK_HELPERS_STATUS_OVERFLOW);
            // Another thread's failure changes nothing here.
            std::thread::spawn(|| {
                fail(Error::NullPointer("z"));
                assert_eq!(
                    dlpack_last_error_status(),
                    DLPACK_HELPERS_STATUS_NULL_POINTER
                );
            })
            .join()
            .unwrap();
            assert_eq!(dlpack_last_error_status(), DLPACK_HELPERS_STATUS_OVERFLOW);
        })
        .join()
        .unwrap();
    }
}
