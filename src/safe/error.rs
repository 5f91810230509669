//! [`Error`]: the one error type of the safe Rust API.

use crate::capi::error::{dlpack_status_python_exception, dlpack_status_string, status_of};
use crate::rules;
use core::ffi::{CStr, c_char};
use core::fmt;

/// A failed call of the safe API: the C API's status code and the message it carries.
///
/// `status()` is the same fixed, never-reused code a C caller gets
/// (`DLPACK_HELPERS_STATUS_*`, re-exported as [`crate::status`]); `message()` is the text
/// `dlpack_last_error_message()` would give (it names the argument and the rule broken). Errors
/// are plain values: no thread-local state is read after they are made, and they are `Send` and
/// `Sync`.
///
/// `Display` prints `message [NAME]`, for example
/// `tensor->version has DLPack version 2.0, … [UNSUPPORTED_VERSION]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: i32,
    message: String,
}

/// `Result<T, dlpack_helpers::Error>`.
pub type Result<T, E = Error> = core::result::Result<T, E>;

impl Error {
    /// An error with `status` (a `DLPACK_HELPERS_STATUS_*` code other than OK) and `message`.
    pub fn new(status: i32, message: impl Into<String>) -> Self {
        Error {
            status,
            message: message.into(),
        }
    }

    /// The error of the C call that just returned `status` on this thread: the message is
    /// `dlpack_last_error_message()`, copied.
    pub(crate) fn last(status: i32) -> Self {
        let p = crate::capi::error::dlpack_last_error_message();
        // SAFETY: never NULL; NUL-terminated and valid until the next failing call on this
        // thread, which cannot happen before the copy below.
        let message = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        Error::new(status, message)
    }

    /// The status code (`DLPACK_HELPERS_STATUS_*`, never 0).
    pub fn status(&self) -> i32 {
        self.status
    }

    /// The status code's name, for example `"UNSUPPORTED_VERSION"` (`dlpack_status_string`).
    pub fn status_name(&self) -> &'static str {
        static_str(dlpack_status_string(self.status))
    }

    /// The Python exception the array API prescribes for this status (`"BufferError"`,
    /// `"TypeError"`, `"ValueError"`, `"MemoryError"`, `"AttributeError"` or `"RuntimeError"`;
    /// `dlpack_status_python_exception`).
    pub fn python_exception(&self) -> &'static str {
        static_str(dlpack_status_python_exception(self.status))
    }

    /// The message: which argument, which rule.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// One of the library's static status strings as `&str`.
fn static_str(p: *const c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: `dlpack_status_string` and `dlpack_status_python_exception` return static
    // NUL-terminated ASCII strings.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.message, self.status_name())
    }
}

impl std::error::Error for Error {}

impl From<rules::Error> for Error {
    fn from(e: rules::Error) -> Self {
        Error::new(status_of(&e), e.to_string())
    }
}

impl From<rules::Refusal> for Error {
    fn from(r: rules::Refusal) -> Self {
        rules::Error::from(r).into()
    }
}
