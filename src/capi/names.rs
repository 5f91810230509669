//! Names of dtypes and devices: `float32`, `bfloat16`, `float8_e4m3fn`, `cuda:1`, ...

use crate::abi::{DLDataType, DLDevice};
use crate::capi::boundary::{self, out_ptr};
use crate::capi::error::{dlpack_helpers_error, dlpack_helpers_status};
use crate::rules::names::{self, NAME_MAX, Name};
use crate::rules::{Error, Fault};
use core::ffi::{CStr, c_char};

/// Bytes (with the terminating NUL) that always suffice for a name written by
/// `dlpack_dtype_format` or `dlpack_device_format`.
pub const DLPACK_HELPERS_NAME_MAX: usize = 32;
const _: () = assert!(DLPACK_HELPERS_NAME_MAX == NAME_MAX);

fn write_name(
    n: &Name,
    buf: *mut c_char,
    buf_size: usize,
    out_len: *mut usize,
) -> Result<(), Error> {
    let buf = out_ptr(buf, "buf")?;
    let bytes = n.as_bytes();
    if buf_size < bytes.len() + 1 {
        // The one out-parameter written on failure (as `snprintf` does): the length the caller
        // needs, so that it can size its buffer (issue 22). `buf` is untouched.
        if !out_len.is_null() {
            // SAFETY: non-NULL caller storage for a size_t (caller contract).
            unsafe { out_len.write(bytes.len()) };
        }
        return Err(too_small(n, buf_size));
    }
    // SAFETY: `buf` is non-NULL and holds `buf_size > bytes.len()` bytes (caller contract).
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), bytes.len());
        buf.add(bytes.len()).write(0);
        if !out_len.is_null() {
            out_len.write(bytes.len());
        }
    }
    Ok(())
}

/// # Safety
/// A non-NULL `s` must be NUL-terminated.
/// The error of [`write_name`], out of line (built only when the buffer is too small).
#[cold]
#[inline(never)]
fn too_small(n: &Name, buf_size: usize) -> Error {
    Error::fault(
        Fault::BufferTooSmall,
        format!(
            "buf_size is {buf_size}, but {:?} needs {} bytes with its NUL",
            n.as_str(),
            n.as_bytes().len() + 1
        ),
    )
}

unsafe fn str_arg<'a>(s: *const c_char, what: &'static str) -> Result<&'a str, Error> {
    if s.is_null() {
        return Err(Error::NullPointer(what));
    }
    // SAFETY: caller contract.
    let c = unsafe { CStr::from_ptr(s) };
    c.to_str()
        .map_err(|_| Error::fault(Fault::UnknownName, format!("{what} is not UTF-8")))
}

/// The body shared by the parsers: `name` through `parse` into `*out` (`out_what` names `out` in
/// the NULL_POINTER message).
///
/// # Safety
/// A non-NULL `name` must be NUL-terminated; a non-NULL `out` must be writable.
unsafe fn parse_into<T>(
    name: *const c_char,
    out: *mut T,
    out_what: &'static str,
    parse: impl FnOnce(&str) -> Result<T, Error>,
) -> Result<(), Error> {
    let out = out_ptr(out, out_what)?;
    // SAFETY: caller contract.
    let s = unsafe { str_arg(name, "name") }?;
    let v = parse(s)?;
    // SAFETY: non-NULL caller storage.
    unsafe { out.write(v) };
    Ok(())
}

/// Write the name of a dtype into `buf`: `"float32"`, `"bfloat16"`, `"complex64"` (bits of the
/// whole complex number), `"bool"`, `"int4"`, `"float8_e4m3fn"`, `"float6_e2m3fn"`,
/// `"float4_e2m1fn"`, `"handle64"`, and for vector types an `x<lanes>` suffix: `"float32x4"`.
///
/// - `buf`, `buf_size`: the caller's buffer and its size in bytes, including the NUL;
///   `DLPACK_HELPERS_NAME_MAX` always suffices.
/// - `out_len`: may be NULL; receives the name's length without the NUL, on OK and also on
///   `BUFFER_TOO_SMALL` (the one out-parameter written on failure, as `snprintf` returns the
///   length it needed: call again with a buffer of `*out_len + 1` bytes).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `INVALID_DTYPE` for a dtype that does not validate (an
/// unknown code, `lanes == 0`, bits not allowed for the code); `BUFFER_TOO_SMALL` (`buf`
/// untouched, the needed length in `*out_len`); `NULL_POINTER` (NULL `buf`). No allocation on
/// success; thread-safe.
///
/// @param[out] out_len May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `buf` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype does not validate (unknown code,
///   `lanes == 0`, bits not allowed for the code)
/// @retval DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL when `buf_size` cannot hold the name and its NUL
///   (`buf` untouched; the name's length, without the NUL, is written to a non-NULL `out_len`)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dtype_format(
    dtype: DLDataType,
    buf: *mut c_char,
    buf_size: usize,
    out_len: *mut usize,
) -> dlpack_helpers_status {
    boundary::status(|| {
        out_ptr(buf, "buf")?;
        let n = names::dtype_name(dtype)?;
        write_name(&n, buf, buf_size, out_len)
    })
}

/// Parse a dtype name written by `dlpack_dtype_format` (exact, case-sensitive) into `*out_dtype`.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `UNKNOWN_NAME` for anything else, including names of
/// dtypes that do not validate (`"bfloat32"`, `"float8"`, `"bool1"`) and a one-lane suffix
/// (`"float32x1"`: one lane is written `"float32"`); `NULL_POINTER`.
/// `name` must be NUL-terminated. Thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `name` or `out_dtype` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNKNOWN_NAME when `name` is not a name `dlpack_dtype_format`
///   writes
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dtype_parse(
    name: *const c_char,
    out_dtype: *mut DLDataType,
) -> dlpack_helpers_status {
    // SAFETY: caller contract (NUL-terminated `name`, writable `out_dtype`).
    boundary::status(|| unsafe { parse_into(name, out_dtype, "out_dtype", names::parse_dtype) })
}

/// `dlpack_dtype_parse` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_dtype_parse`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `name` or `out_dtype` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNKNOWN_NAME when `name` is not a name `dlpack_dtype_format`
///   writes
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `err` is non-NULL and `err->struct_size`
///   is below `sizeof(dlpack_helpers_error)` (nothing done)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dtype_parse_with_error(
    name: *const c_char,
    out_dtype: *mut DLDataType,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_dtype_parse` and of `err`.
    unsafe { boundary::with_error(err, || dlpack_dtype_parse(name, out_dtype)) }
}

/// Write a device as `"<type>:<id>"` into `buf`, always with the id: `"cpu:0"`, `"cuda:1"`,
/// `"cuda_host:0"` (pinned host memory, kDLCUDAHost; peer case 10), `"cuda_managed:0"`,
/// `"rocm:0"`, `"rocm_host:0"`, `"opencl:0"`, `"vulkan:0"`, `"metal:0"`, `"vpi:0"`,
/// `"ext_dev:0"`, `"oneapi:0"`, `"webgpu:0"`, `"hexagon:0"`, `"maia:0"`, `"trn:0"` (the DLPack
/// 1.3 device types, shown with id 0).
///
/// `buf`, `buf_size`, `out_len` as in `dlpack_dtype_format` (`out_len` also receives the needed
/// length on `BUFFER_TOO_SMALL`). Returns `DLPACK_HELPERS_STATUS_OK`;
/// `INVALID_DEVICE` for a negative `device_id` (checked first: the one device rule, peer case
/// 54); `UNKNOWN_NAME` for a device type DLPack 1.3 does not assign; `BUFFER_TOO_SMALL` (the
/// needed length is written to `out_len`); `NULL_POINTER`. Thread-safe.
///
/// @param[out] out_len May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `buf` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_UNKNOWN_NAME when DLPack 1.3 does not assign the device type
/// @retval DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL when `buf_size` cannot hold the name and its NUL
///   (`buf` untouched; the name's length, without the NUL, is written to a non-NULL `out_len`)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_device_format(
    device: DLDevice,
    buf: *mut c_char,
    buf_size: usize,
    out_len: *mut usize,
) -> dlpack_helpers_status {
    boundary::status(|| {
        out_ptr(buf, "buf")?;
        let n = names::device_name(device)?;
        write_name(&n, buf, buf_size, out_len)
    })
}

/// Parse `"<type>"` (device id 0) or `"<type>:<id>"` (a decimal id in 0..=INT32_MAX, no sign
/// or leading zeros) into `*out_device`, with the type names of `dlpack_device_format`.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `UNKNOWN_NAME`; `NULL_POINTER`. Thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `name` or `out_device` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNKNOWN_NAME when `name` is not `<type>` or `<type>:<id>` with a
///   known type and a valid id
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_device_parse(
    name: *const c_char,
    out_device: *mut DLDevice,
) -> dlpack_helpers_status {
    // SAFETY: caller contract (NUL-terminated `name`, writable `out_device`).
    boundary::status(|| unsafe { parse_into(name, out_device, "out_device", names::parse_device) })
}

/// `dlpack_device_parse` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_device_parse`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `name` or `out_device` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNKNOWN_NAME when `name` is not `<type>` or `<type>:<id>` with a
///   known type and a valid id
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `err` is non-NULL and `err->struct_size`
///   is below `sizeof(dlpack_helpers_error)` (nothing done)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_device_parse_with_error(
    name: *const c_char,
    out_device: *mut DLDevice,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_device_parse` and of `err`.
    unsafe { boundary::with_error(err, || dlpack_device_parse(name, out_device)) }
}
