//! The panic boundary. Every export's body is one call of `status` or `value`: a panic
//! inside becomes `DLPACK_HELPERS_STATUS_PANIC` (or the function's documented fallback value)
//! with a message, and never unwinds into C.

use crate::capi::error::{
    DLPACK_HELPERS_STATUS_OK, ERROR_MIN_SIZE, dlpack_helpers_error, dlpack_helpers_status,
    error_too_small, fail, fill_error,
};
use crate::rules::{Error, Refusal};
use std::panic::{AssertUnwindSafe, catch_unwind};

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_owned()
    }
}

/// The status of a caught panic, out of line: the payload is dropped here, so the export's own
/// frame needs no registers saved for it and its success path stays a leaf.
#[cold]
#[inline(never)]
fn panic_status(payload: Box<dyn std::any::Any + Send>) -> dlpack_helpers_status {
    fail(Error::Panic(panic_message(&*payload)))
}

/// Run a fallible export body: `Ok` is `DLPACK_HELPERS_STATUS_OK`, an error becomes its status
/// and the thread's last error message, a panic becomes `DLPACK_HELPERS_STATUS_PANIC`.
#[inline(always)]
pub(crate) fn status(f: impl FnOnce() -> Result<(), Error>) -> dlpack_helpers_status {
    // The body's `Result` becomes the status inside the closure, so what crosses
    // `catch_unwind` is an `i32`: the success path never stores the (large) `Result<(), Error>`
    // to the stack and matches it again (measured: about 8 instructions and a bigger frame on
    // every successful call).
    match catch_unwind(AssertUnwindSafe(|| {
        test_panic::maybe_panic();
        match f() {
            Ok(()) => DLPACK_HELPERS_STATUS_OK,
            Err(e) => fail(e),
        }
    })) {
        Ok(status) => status,
        Err(payload) => panic_status(payload),
    }
}

/// Run a fallible export body whose errors are cheap descriptions ([`Fail`]) in two steps, so
/// that the success path never builds an error value: `body` runs once inside the panic boundary
/// with its error discarded (the compiler then drops the error's construction, and the export
/// needs no stack frame for it); only when it fails does `report`, an out-of-line twin of the
/// export, run the same body again inside its own [`status`] boundary to build the message.
/// Sound because `body` reads its inputs and writes its outputs only on success: a second run
/// after a failure sees the same inputs and decides the same way. Used by the hot exports whose
/// frames were measured (`dlpack_version_negotiate`, `dlpack_export_request_resolve`).
#[inline(always)]
pub(crate) fn status_or_report(
    body: impl FnOnce() -> Result<(), Fail>,
    report: impl FnOnce() -> dlpack_helpers_status,
) -> dlpack_helpers_status {
    match catch_unwind(AssertUnwindSafe(|| {
        test_panic::maybe_panic();
        body().is_ok()
    })) {
        Ok(true) => DLPACK_HELPERS_STATUS_OK,
        Ok(false) => report(),
        Err(payload) => panic_status(payload),
    }
}

/// A failure described by a few words, turned into an [`Error`] (and its message) only when it
/// is reported: a `Copy` value without drop glue, so an unused one costs nothing.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fail {
    /// A required pointer argument is NULL (its name).
    Null(&'static str),
    /// A refusal of the negotiation and stream rules.
    Refused(Refusal),
    /// An argument out of range: the message is `message(value)`.
    Invalid {
        message: fn(u64) -> String,
        value: u64,
    },
}

impl From<Refusal> for Fail {
    #[inline(always)]
    fn from(r: Refusal) -> Self {
        Fail::Refused(r)
    }
}

impl From<Fail> for Error {
    #[cold]
    #[inline(never)]
    fn from(f: Fail) -> Self {
        match f {
            Fail::Null(what) => Error::NullPointer(what),
            Fail::Refused(r) => r.into(),
            Fail::Invalid { message, value } => Error::InvalidArgument(message(value)),
        }
    }
}

/// Run a `*_with_error` variant: `call` is the base export (which has its own boundary and sets
/// the thread's last error message when it fails). Before it, a non-NULL `err` whose
/// `struct_size` is below `sizeof(dlpack_helpers_error)` is refused with
/// `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` (nothing else done, `err` not written). After it, a
/// failure fills `err` (when non-NULL) with the status and the message, on the same OS thread in
/// the same C call; a success leaves `err` untouched. The success path costs a NULL test, one load
/// and a compare.
///
/// # Safety
/// A non-NULL `err` points to a caller-owned `dlpack_helpers_error` of `err->struct_size` bytes.
#[inline(always)]
pub(crate) unsafe fn with_error(
    err: *mut dlpack_helpers_error,
    call: impl FnOnce() -> dlpack_helpers_status,
) -> dlpack_helpers_status {
    let s = match catch_unwind(AssertUnwindSafe(|| {
        if !err.is_null() {
            // SAFETY: caller contract: a non-NULL `err` has its `struct_size` readable.
            let size = unsafe { core::ptr::addr_of!((*err).struct_size).read() };
            if size < ERROR_MIN_SIZE {
                return Err(error_too_small(size));
            }
        }
        test_panic::maybe_panic();
        Ok(call())
    })) {
        Ok(Ok(s)) => s,
        // The object is too small to be written: only the thread's message has the detail.
        Ok(Err(s)) => return s,
        Err(payload) => panic_status(payload),
    };
    if s != DLPACK_HELPERS_STATUS_OK && !err.is_null() {
        // SAFETY: checked above: `err` holds a whole `dlpack_helpers_error`. Filling cannot
        // panic (fixed-size copies); the boundary is kept anyway so nothing can unwind into C.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe { fill_error(err, s) }));
    }
    s
}

/// Run an infallible export body (a query returning a value, or a `void` function): a panic
/// returns `on_panic` and sets the thread's last error message.
#[inline(always)]
pub(crate) fn value<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(|| {
        test_panic::maybe_panic();
        f()
    })) {
        Ok(v) => v,
        Err(payload) => {
            panic_status(payload); // records the message; a value function has no status
            on_panic
        }
    }
}

/// Test-only panic injection (cargo feature `test-panic`, never in a release build): while the
/// environment variable `DLPACK_HELPERS_TEST_PANIC` is set, every export panics inside its
/// boundary before doing anything, so tests can show that each one reports
/// `DLPACK_HELPERS_STATUS_PANIC` (or its documented fallback value) with a message and that
/// nothing unwinds into C. Without the feature this compiles to nothing and exports nothing.
mod test_panic {
    /// The message of an injected panic (tests look for it in `dlpack_last_error_message`).
    #[cfg(feature = "test-panic")]
    pub(crate) const MESSAGE: &str =
        "test-panic: forced panic inside the export (DLPACK_HELPERS_TEST_PANIC is set)";

    #[cfg(feature = "test-panic")]
    #[inline(never)]
    pub(crate) fn maybe_panic() {
        if std::env::var_os("DLPACK_HELPERS_TEST_PANIC").is_some() {
            panic!("{MESSAGE}");
        }
    }

    #[cfg(not(feature = "test-panic"))]
    #[inline(always)]
    pub(crate) fn maybe_panic() {}
}

/// Turn a possibly-NULL pointer into a reference, or the NULL_POINTER error naming `what`.
///
/// # Safety
/// A non-NULL `ptr` must point to a valid, live `T` for `'a`.
#[inline(always)]
pub(crate) unsafe fn nonnull<'a, T>(ptr: *const T, what: &'static str) -> Result<&'a T, Error> {
    // SAFETY: the caller guarantees validity of non-NULL pointers.
    match unsafe { ptr.as_ref() } {
        Some(r) => Ok(r),
        // Built only on failure (an eagerly built error is dropped on every success).
        None => Err(Error::NullPointer(what)),
    }
}

/// Write `value` through a possibly-NULL out-pointer: the NULL check must happen before any
/// work, so use [`out_ptr`] first and this at the end.
#[inline(always)]
pub(crate) fn out_ptr<T>(ptr: *mut T, what: &'static str) -> Result<*mut T, Error> {
    if ptr.is_null() {
        Err(Error::NullPointer(what))
    } else {
        Ok(ptr)
    }
}

/// Write the whole fields of `full` that fit in a caller's `struct_size`-versioned struct (the
/// growth rule of `dlpack_get_info` and `dlpack_pointer_classify`): everything when the
/// caller's struct is at least ours, else every field whose end (`field_ends`, bytes from the
/// start) is within `caller_size`; `struct_size` (the first field, a `size_t`) is written last
/// with the number of bytes filled.
///
/// # Safety
/// `out` points to `caller_size >= size_of::<usize>()` writable bytes, and `T` is `#[repr(C)]`
/// with `struct_size: usize` as its first field.
pub(crate) unsafe fn write_struct_sized<T>(
    out: *mut T,
    full: &T,
    field_ends: &[usize],
    caller_size: usize,
) {
    let word = core::mem::size_of::<usize>();
    let filled = if caller_size >= core::mem::size_of::<T>() {
        core::mem::size_of::<T>()
    } else {
        field_ends
            .iter()
            .copied()
            .filter(|&e| e <= caller_size)
            .max()
            .unwrap_or(word)
            .max(word)
    };
    let src = (full as *const T).cast::<u8>();
    // SAFETY: `out` holds `caller_size >= filled` bytes (caller contract); the first field is
    // skipped and written last.
    unsafe {
        core::ptr::copy_nonoverlapping(src.add(word), out.cast::<u8>().add(word), filled - word);
        out.cast::<usize>().write(filled);
    }
}
