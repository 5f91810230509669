//! The `stream` argument of `__dlpack__` as a Python object: `None`, an `int`, or (oneAPI) a
//! queue object, decoded into a `dlpack_helpers_stream` for a producer written in any language.

use crate::abi::DLDevice;
use crate::capi::boundary::{self, out_ptr};
use crate::capi::error::dlpack_helpers_status;
use crate::capi::stream::{DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM, dlpack_helpers_stream};
use crate::host::cpython::{self, Api, Owned, PyObject};
use crate::rules::Error;
use crate::rules::stream::{self, DecodeOptions, Kind};
use core::ffi::c_void;

fn type_error(device: DLDevice, what: &str) -> Error {
    let allowed = if stream::takes_object_handles(device.device_type) {
        "None, an int, or a SYCL queue object exposing addressof_ref() (as dpctl.SyclQueue)"
    } else {
        "None or an int"
    };
    Error::InvalidStreamType(format!(
        "stream is {what}, but for device ({}, {}) it must be {allowed}",
        device.device_type.0, device.device_id
    ))
}

/// `str(type(obj).__name__)`-like text for messages, best effort.
pub(crate) fn describe(api: &'static Api, obj: *mut PyObject) -> String {
    // SAFETY: GIL held (caller contract), `obj` live.
    unsafe {
        let t = (api.PyObject_Type)(obj);
        if t.is_null() {
            (api.PyErr_Clear)();
            return "an object".to_owned();
        }
        let t = Owned::new(api, t).expect("non-NULL");
        let name = api.str_attr(t.as_ptr(), c"__name__");
        let name = name.unwrap_or_else(|| "?".to_owned());
        let article = if name.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {name} object")
    }
}

fn is_instance(api: &'static Api, obj: *mut PyObject, ty: *mut PyObject) -> Result<bool, Error> {
    // SAFETY: GIL held; `ty` is a type object.
    let r = unsafe { (api.PyObject_IsInstance)(obj, ty) };
    if r < 0 {
        // SAFETY: GIL held, an exception is set.
        let (_, msg) = unsafe { api.take_error() }?;
        return Err(Error::InvalidStreamType(format!(
            "stream: isinstance check failed: {msg}"
        )));
    }
    Ok(r == 1)
}

pub(crate) fn decode_object(
    api: &'static Api,
    obj: *mut PyObject,
    device: DLDevice,
    opts: DecodeOptions,
) -> Result<dlpack_helpers_stream, Error> {
    let s = if obj == api._Py_NoneStruct {
        stream::decode(device, None, opts)?
    // SAFETY: GIL held, `obj` live.
    } else if unsafe { api.is_bool(obj) } {
        return Err(type_error(device, "a bool"));
    } else if let Some(int) = as_index(api, obj)? {
        // SAFETY: GIL held; an int.
        let v = unsafe { (api.PyLong_AsLongLong)(int.as_ptr()) };
        // SAFETY: GIL held.
        if v == -1 && !unsafe { (api.PyErr_Occurred)() }.is_null() {
            // SAFETY: GIL held, an exception (OverflowError) is set.
            unsafe { (api.PyErr_Clear)() };
            return Err(Error::InvalidStream(format!(
                "stream is an int outside the int64_t range, which no device's encoding allows \
                 (device ({}, {}))",
                device.device_type.0, device.device_id
            )));
        }
        stream::decode(device, Some(v), opts)?
    } else if stream::takes_object_handles(device.device_type) {
        queue_object(api, obj, device)?
    } else {
        return Err(type_error(device, &describe(api, obj)));
    };
    Ok(dlpack_helpers_stream {
        kind: s.kind.as_raw(),
        handle: s.handle as *mut c_void,
    })
}

/// `operator.index(obj)` for an `int` or an integer-like object (`__index__`, for example a
/// NumPy integer), `Ok(None)` (its ordinary exception cleared) for anything else. An exception
/// that does not derive from `Exception` (a `KeyboardInterrupt` raised by `__index__`) is never
/// swallowed: it stays set and the answer is `Err(PythonErrorSet)`.
fn as_index(api: &'static Api, obj: *mut PyObject) -> Result<Option<Owned>, Error> {
    // SAFETY: GIL held (caller contract), `obj` live.
    let r = Owned::new(api, unsafe { (api.PyNumber_Index)(obj) });
    if r.is_none() {
        // SAFETY: GIL held, an exception (normally TypeError) is set.
        unsafe { api.take_error() }?;
    }
    Ok(r)
}

/// A oneAPI queue object: `obj.addressof_ref()` must return the queue's address as an int
/// (dpctl's documented `SyclQueue.addressof_ref()`: the address of its `DPCTLSyclQueueRef`, a
/// `sycl::queue *`).
fn queue_object(
    api: &'static Api,
    obj: *mut PyObject,
    device: DLDevice,
) -> Result<stream::Stream, Error> {
    // SAFETY: GIL held.
    let m = Owned::new(api, unsafe {
        (api.PyObject_GetAttrString)(obj, c"addressof_ref".as_ptr())
    });
    let Some(m) = m else {
        // SAFETY: GIL held, an exception is set (AttributeError or the descriptor's own).
        let (_, msg) = unsafe { api.take_error() }?;
        return Err(type_error(
            device,
            &format!("{} without addressof_ref() ({msg})", describe(api, obj)),
        ));
    };
    // SAFETY: GIL held.
    let r = unsafe {
        let args = Owned::new(api, (api.PyTuple_New)(0));
        match args {
            Some(a) => Owned::new(
                api,
                (api.PyObject_Call)(m.as_ptr(), a.as_ptr(), core::ptr::null_mut()),
            ),
            None => None,
        }
    };
    let Some(r) = r else {
        // SAFETY: GIL held, an exception is set.
        let (_, msg) = unsafe { api.take_error() }?;
        return Err(type_error(
            device,
            &format!("a queue object whose addressof_ref() raised ({msg})"),
        ));
    };
    // SAFETY: GIL held, `r` live.
    if !is_instance(api, r.as_ptr(), api.PyLong_Type)? || unsafe { api.is_bool(r.as_ptr()) } {
        return Err(type_error(
            device,
            &format!(
                "a queue object whose addressof_ref() returned {}, not an int",
                describe(api, r.as_ptr())
            ),
        ));
    }
    // SAFETY: GIL held; an int.
    let v = unsafe { (api.PyLong_AsLongLong)(r.as_ptr()) };
    // SAFETY: GIL held.
    if v == -1 && !unsafe { (api.PyErr_Occurred)() }.is_null() {
        // SAFETY: GIL held, an exception (OverflowError) is set.
        unsafe { (api.PyErr_Clear)() };
        return Err(Error::InvalidStream(
            "stream.addressof_ref() returned an int outside the int64_t range, which is not a \
             queue address"
                .to_owned(),
        ));
    }
    let address = usize::try_from(v).map_err(|_| {
        Error::InvalidStream(format!(
            "stream.addressof_ref() returned {v}, which is not a queue address"
        ))
    })?;
    stream::decode_handle(device, Kind::SyclQueue, address)
}

/// Decode `__dlpack__`'s `stream` argument given as a Python object, for the device the consumer
/// will use: the producer-side counterpart of `dlpack_stream_decode` for bindings that receive
/// the object itself.
///
/// - `obj`: the `stream` argument (`PyObject *`, borrowed, non-NULL; Python's `None` is the
///   `None` object):
///   - `None` → as `dlpack_stream_decode` with no stream;
///   - an `int` (not a `bool`) or integer-like object (`__index__`, such as a NumPy integer) →
///     as `dlpack_stream_decode` with that integer (outside `int64_t`: `_INVALID_STREAM`);
///   - for `kDLOneAPI` only, any other object exposing `addressof_ref()` that returns an `int`
///     (dpctl's `SyclQueue`, whose documented `addressof_ref()` gives the address of its
///     `DPCTLSyclQueueRef`, a `sycl::queue *`) → `{DLPACK_HELPERS_STREAM_SYCL_QUEUE, address}`
///     (0 or negative: `_INVALID_STREAM`);
///   - anything else → `_INVALID_STREAM_TYPE` (raise `TypeError`).
/// - `device`: the tensor's device (or the requested `dl_device`).
/// - `flags`: 0 or `DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM`.
/// - `out_stream`: receives the decoded stream; pass it to
///   `dlpack_export_request_resolve_with_stream` when its kind is a queue object, else use the
///   integer path.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_INVALID_STREAM_TYPE`, `_INVALID_STREAM`,
/// `_INVALID_ARGUMENT` (unknown flags), `_NULL_POINTER`, `_PYTHON_UNAVAILABLE`, or
/// `_PYTHON_ERROR_SET` when `addressof_ref()` (or the attribute lookup) raised an exception that
/// does not derive from `Exception` (`KeyboardInterrupt`, `SystemExit`): it is left set,
/// unchanged, for the caller to propagate. Any other exception is cleared and reported in the
/// message. The caller holds the GIL. Thread-safe under the GIL (peer case 51).
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `obj` or `out_stream` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE when the object is a queue for a device type
///   that takes none
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM when the value is not a valid stream for the device
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `flags` has unknown bits
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET when `addressof_ref()` or the attribute lookup
///   raised an exception not deriving from `Exception`: it is left set
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_python_stream_decode(
    obj: *mut c_void,
    device: DLDevice,
    flags: u32,
    out_stream: *mut dlpack_helpers_stream,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_stream, "out_stream")?;
        if obj.is_null() {
            return Err(Error::NullPointer("obj"));
        }
        if flags & !DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM != 0 {
            return Err(Error::invalid(format!(
                "flags has unknown bits 0x{:x} (known: DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM)",
                flags & !DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM
            )));
        }
        crate::rules::device::check_id(device, "device")?;
        let api = cpython::require("dlpack_python_stream_decode")?;
        let opts = DecodeOptions {
            lenient_cpu: flags & DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM != 0,
        };
        let s = decode_object(api, obj, device, opts)?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(s) };
        Ok(())
    })
}
