//! A failing status of the C library -> the Python exception `dlpack_status_python_exception`
//! names (the array API's types), carrying `dlpack_last_error_message()` and the status name.

use crate::ffi;
use core::ffi::CStr;
use pyo3::exceptions::{
    PyAttributeError, PyBufferError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;

pyo3::create_exception!(
    dlpack_helpers,
    DLPackHelpersError,
    PyRuntimeError,
    "Raised for library statuses whose Python exception is RuntimeError (internal errors: \
     PANIC, DEVICE_ERROR, ...). Every other failure raises the array API's type (BufferError, \
     ValueError, TypeError, AttributeError, MemoryError)."
);

fn cstr(p: *const core::ffi::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the library returns NUL-terminated static or thread-local strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The exception for `status` after a failing call on this thread.
pub fn status_error(status: ffi::status) -> PyErr {
    status_error_for(status, "")
}

/// [`status_error`] with the message prefixed by `"{what}: "` (the Python argument the failing
/// value came from), when `what` is not empty. A status this library version does not define
/// says "unknown status N" (never the message of an unrelated earlier failure; issue 22).
pub fn status_error_for(status: ffi::status, what: &str) -> PyErr {
    // SAFETY: a plain C call returning a NUL-terminated string.
    let message = unsafe { cstr(ffi::dlpack_last_error_message()) };
    status_error_with(status, what, message)
}

/// The exception of a `status` a caller reports (`raise_status`): this thread's last message
/// only when the last failing call on this thread returned that very status
/// (`dlpack_last_error_status`); otherwise the message belongs to an unrelated earlier failure
/// (or there is none), and the exception says that no message goes with the status instead.
pub fn reported_status_error(status: ffi::status) -> PyErr {
    // SAFETY: plain C calls; the strings are NUL-terminated.
    let (last, last_name) = unsafe {
        let last = ffi::dlpack_last_error_status();
        (last, cstr(ffi::dlpack_status_string(last)))
    };
    if last == status {
        return status_error(status);
    }
    let message = if last == ffi::OK {
        "no failing call on this thread left a message for this status".to_owned()
    } else {
        format!(
            "no message for this status: the last failing call on this thread returned \
             {last_name} ({last}), so its message belongs to that failure"
        )
    };
    status_error_with(status, "", message)
}

fn status_error_with(status: ffi::status, what: &str, mut message: String) -> PyErr {
    // SAFETY: plain C calls returning NUL-terminated strings.
    let (class, name) = unsafe {
        (
            cstr(ffi::dlpack_status_python_exception(status)),
            cstr(ffi::dlpack_status_string(status)),
        )
    };
    if name == "UNKNOWN_STATUS" {
        message = format!("unknown status {status}");
    }
    if !what.is_empty() {
        message = format!("{what}: {message}");
    }
    let text = message_for(&message, &class, &name);
    match class.as_str() {
        "BufferError" => PyBufferError::new_err(text),
        "ValueError" => PyValueError::new_err(text),
        "TypeError" => PyTypeError::new_err(text),
        "AttributeError" => PyAttributeError::new_err(text),
        "MemoryError" => PyMemoryError::new_err(text),
        _ => DLPackHelpersError::new_err(text),
    }
}

/// The library's message for an exception of class `class`: the exception's type named once
/// (Python already prints it) and no repeated `DLPackHelpersError:` prefixes or `[STATUS]` tags
/// when a producer's `__dlpack__` itself went through this package.
fn message_for(message: &str, class: &str, status_name: &str) -> String {
    let prefixes = [format!("{class}: "), "DLPackHelpersError: ".to_string()];
    let mut m = message;
    loop {
        let before = m.len();
        for p in &prefixes {
            if let Some(rest) = m.strip_prefix(p.as_str()) {
                m = rest;
            }
        }
        if m.len() == before {
            break;
        }
    }
    let tag = format!("[{status_name}]");
    if m.ends_with(&tag) {
        m.to_string()
    } else {
        format!("{m} {tag}")
    }
}

/// `Ok(())` for OK, else the status's exception. For `DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET`
/// (a call made with `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`, or an exception that does not
/// derive from `Exception`) the exception the library left set is returned unchanged: the
/// producer's own object, type and traceback.
#[inline]
pub fn check(status: ffi::status) -> PyResult<()> {
    if status == ffi::OK {
        Ok(())
    } else {
        Err(error(status))
    }
}

#[cold]
fn error(status: ffi::status) -> PyErr {
    if status == ffi::STATUS_PYTHON_ERROR_SET {
        if let Some(e) = Python::attach(PyErr::take) {
            return e;
        }
    }
    status_error(status)
}

/// Raise `e` (set it as the current exception) from a C entry that runs outside PyO3's attach
/// count: the vectorcall entries (`fastcall.rs`) and the exchange table's hot path. There a
/// dropped `Py<T>` is only queued in PyO3's deferred reference pool, drained at PyO3's next
/// attach: 300,000 failing calls held 50 MB (issue 34). Under `Python::attach` (a
/// `PyGILState_Ensure`/`Release` pair on this failure path only; the caller holds the GIL with
/// its own thread state) the error's objects are released at once and the pool is drained.
pub fn raise_attached(e: PyErr) {
    Python::attach(|py| e.restore(py));
}
