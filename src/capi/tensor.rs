//! Managed tensors: release, device query, version check.

use crate::abi::{DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion};
use crate::capi::boundary::{self, Fail, nonnull, out_ptr};
use crate::capi::error::{dlpack_helpers_error, dlpack_helpers_status};
use crate::capi::version::dlpack_helpers_version_compat;
use crate::rules::Error;
use crate::rules::version::{self, Compat};
use core::ptr::addr_of;

/// The `version` of a received versioned tensor, checked before anything else is read: NULL
/// `tensor` is `NullPointer("tensor")`, a major other than 1 is `UnsupportedVersion` naming
/// `what` (DLPack 1.0: then only the deleter may be called). `version` is at offset 0 in every
/// major, so this read is always safe. The one place the exports read a tensor's version.
///
/// # Safety
/// A non-NULL `tensor` points to a managed tensor (of any major version).
#[inline(always)]
pub(crate) unsafe fn checked_version(
    tensor: *const DLManagedTensorVersioned,
    what: &'static str,
) -> Result<(DLPackVersion, Compat), Error> {
    if tensor.is_null() {
        return Err(Error::NullPointer("tensor"));
    }
    // SAFETY: non-NULL (caller contract); `version` is readable in every major.
    let v = unsafe { addr_of!((*tensor).version).read() };
    Ok((v, version::check(v, what)?))
}

/// The body of both delete exports: call `tensor`'s deleter once, unless `tensor` or its
/// deleter is NULL. `read_deleter` reads the `deleter` field of a non-NULL `tensor`.
#[inline(always)]
fn delete_with<T>(
    tensor: *mut T,
    read_deleter: impl FnOnce(*mut T) -> Option<unsafe extern "C" fn(*mut T)>,
) {
    if tensor.is_null() {
        return;
    }
    if let Some(deleter) = read_deleter(tensor) {
        // SAFETY: the producer's deleter receives its own tensor, once (the exports' caller
        // contract); nothing touches the tensor afterwards.
        unsafe { deleter(tensor) };
    }
}

/// Release a versioned managed tensor: call its `deleter` exactly once.
///
/// - `tensor`: a `DLManagedTensorVersioned` of **any** DLPack major version. Only the `deleter`
///   field is read: its offset is frozen by the specification for every future major, so this
///   is the one operation that is safe on a tensor the caller cannot otherwise read
///   (DLPack 1.0: on a major mismatch only the deleter may be called).
/// - NULL `tensor` or NULL `deleter`: nothing happens (a NULL deleter means "nothing to free").
///
/// Ownership: the caller gives up the tensor. The deleter frees the struct itself (DLPack 0.3,
/// peer case 6); this function touches nothing after calling it, and the caller must not either.
/// Calling it twice on the same tensor is a use after free, as with any `free`.
/// Thread-safety: as safe as the producer's deleter, which may run on any thread (DLPack Python
/// specification). Returns nothing; never fails.
///
/// @param[in] tensor May be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_delete(tensor: *mut DLManagedTensorVersioned) {
    boundary::value((), || {
        // SAFETY: a non-NULL `tensor` points to a managed tensor (caller contract); only the
        // frozen `deleter` field is read, without forming a reference to the whole struct.
        delete_with(tensor, |t| unsafe { addr_of!((*t).deleter).read() })
    })
}

/// Release a legacy managed tensor: call its `deleter` exactly once.
///
/// - `tensor`: a legacy (unversioned) `DLManagedTensor`, as found in a `"dltensor"` capsule.
/// - NULL `tensor` or NULL `deleter`: nothing happens.
///
/// Ownership, thread-safety: as `dlpack_tensor_delete`. Never pass a `DLManagedTensorVersioned`
/// here: the two structs are not layout-compatible (the capsule name tells which one you hold).
///
/// @param[in] tensor May be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_tensor_delete(tensor: *mut DLManagedTensor) {
    boundary::value((), || {
        // SAFETY: a non-NULL `tensor` points to a managed tensor (caller contract); only the
        // frozen `deleter` field is read, without forming a reference to the whole struct.
        delete_with(tensor, |t| unsafe { addr_of!((*t).deleter).read() })
    })
}

/// The device of a versioned managed tensor: the C counterpart of `__dlpack_device__`.
///
/// - `tensor`: the tensor, borrowed. Its `version` is read first; when its major is not the
///   one this library reads (1), nothing past `version` is read.
/// - `out_device`: receives `tensor->dl_tensor.device` as the producer wrote it (device type
///   and the producer's device id; unknown device types are passed through, not refused). A
///   negative device id is refused (peer case 54: no DLDevice this library returns has one).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `DLPACK_HELPERS_STATUS_NULL_POINTER` when `tensor` or
/// `out_device` is NULL (the message names `tensor` first, the argument order);
/// `DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION` when the major version is not 1;
/// `DLPACK_HELPERS_STATUS_INVALID_DEVICE` for a negative device id. `out_device` is written
/// only on OK. Thread-safe (reads only).
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_device` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's `device_id` is negative
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_get_device(
    tensor: *const DLManagedTensorVersioned,
    out_device: *mut DLDevice,
) -> dlpack_helpers_status {
    boundary::status_or_report(
        // SAFETY: the export's caller contract.
        move || unsafe { get_device_checked(tensor, out_device) },
        // SAFETY: the export's caller contract.
        move || unsafe { get_device_report(tensor, out_device) },
    )
}

/// The success path of `dlpack_get_device`: the checks of `get_device_report`'s body (NULL
/// pointers, `version::check`, `rules::device::id_ok`) without building an error value, so
/// the export needs no stack frame (issue 26: issue 22's device rule had grown it from 22 to 32
/// instructions). Any refusal is reported by `get_device_report`; writes only on success.
///
/// # Safety
/// As the export.
#[inline(always)]
unsafe fn get_device_checked(
    tensor: *const DLManagedTensorVersioned,
    out_device: *mut DLDevice,
) -> Result<(), Fail> {
    if tensor.is_null() || out_device.is_null() {
        return Err(Fail::Null("tensor"));
    }
    // SAFETY: non-NULL (caller contract); `version` is readable in every major.
    let v = unsafe { addr_of!((*tensor).version).read() };
    if version::check(v, "tensor->version").is_err() {
        return Err(Fail::Null("tensor"));
    }
    // SAFETY: major 1: the layout is the one mirrored in `abi`.
    let device = unsafe { addr_of!((*tensor).dl_tensor.device).read() };
    if !crate::rules::device::id_ok(device) {
        return Err(Fail::Null("tensor"));
    }
    // SAFETY: non-NULL caller storage for a DLDevice.
    unsafe { out_device.write(device) };
    Ok(())
}

/// The failure path of `dlpack_get_device`: its full body, the refusal reported.
#[cold]
#[inline(never)]
unsafe extern "C" fn get_device_report(
    tensor: *const DLManagedTensorVersioned,
    out_device: *mut DLDevice,
) -> dlpack_helpers_status {
    boundary::status(|| {
        if tensor.is_null() {
            return Err(Error::NullPointer("tensor"));
        }
        let out = out_ptr(out_device, "out_device")?;
        // SAFETY: caller contract.
        unsafe { checked_version(tensor, "tensor->version") }?;
        // SAFETY: major 1: the layout is the one mirrored in `abi`.
        let device = unsafe { addr_of!((*tensor).dl_tensor.device).read() };
        crate::rules::device::check_id(device, "tensor->dl_tensor.device")?;
        // SAFETY: `out` is non-NULL and points to caller-owned storage for a DLDevice.
        unsafe { out.write(device) };
        Ok(())
    })
}

/// The device of a legacy managed tensor: the C counterpart of `__dlpack_device__`.
///
/// - `tensor`: a legacy `DLManagedTensor`, borrowed.
/// - `out_device`: receives `tensor->dl_tensor.device` unchanged (unknown device types pass
///   through; a negative device id is refused, peer case 54).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `DLPACK_HELPERS_STATUS_NULL_POINTER` when `tensor` or
/// `out_device` is NULL (`tensor` named first), or `DLPACK_HELPERS_STATUS_INVALID_DEVICE` for a
/// negative device id. `out_device` is written only on OK. Thread-safe (reads only).
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_device` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's `device_id` is negative
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_get_device(
    tensor: *const DLManagedTensor,
    out_device: *mut DLDevice,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: non-NULL `tensor` points to a live legacy managed tensor.
        let t = unsafe { nonnull(tensor, "tensor") }?;
        let out = out_ptr(out_device, "out_device")?;
        crate::rules::device::check_id(t.dl_tensor.device, "tensor->dl_tensor.device")?;
        // SAFETY: `out` is non-NULL caller storage.
        unsafe { out.write(t.dl_tensor.device) };
        Ok(())
    })
}

/// Check the DLPack version of a received versioned tensor, reading nothing but `version`.
///
/// - `tensor`: borrowed.
/// - `out_compat`: receives `DLPACK_HELPERS_VERSION_EXACT` (1.3),
///   `DLPACK_HELPERS_VERSION_OLDER_MINOR` (1.0–1.2) or `DLPACK_HELPERS_VERSION_NEWER_MINOR`
///   (1.4 and later: usable, but it may carry device types, dtype codes or flag bits this
///   library does not know; DLPack 1.0 minor rule). May be NULL when the caller only wants the
///   status.
///
/// Returns `DLPACK_HELPERS_STATUS_OK` for major 1; `DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION`
/// for any other major (the tensor is left untouched: the caller still owns it and may only
/// call its deleter, for example with `dlpack_tensor_delete`); `DLPACK_HELPERS_STATUS_NULL_POINTER`
/// for a NULL `tensor`. Thread-safe (reads only).
///
/// @param[out] out_compat May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the major version is 1
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the major version is not 1 (the caller
///   still owns the tensor)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_check_version(
    tensor: *const DLManagedTensorVersioned,
    out_compat: *mut dlpack_helpers_version_compat,
) -> dlpack_helpers_status {
    boundary::status_or_report(
        move || {
            // The success path without an error value (issue 26); a refusal is reported by
            // `tensor_check_version_report`.
            // SAFETY: caller contract.
            let (_, compat) = unsafe { checked_version(tensor, "tensor->version") }
                .map_err(|_| Fail::Null("tensor"))?;
            crate::capi::version::write_compat(out_compat, compat);
            Ok(())
        },
        // SAFETY: the export's caller contract.
        move || unsafe { tensor_check_version_report(tensor, out_compat) },
    )
}

/// `dlpack_tensor_check_version` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_tensor_check_version`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[out] out_compat May be NULL.
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the major version is 1
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the major version is not 1 (the caller
///   still owns the tensor)
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `err` is non-NULL and `err->struct_size`
///   is below `sizeof(dlpack_helpers_error)` (nothing done)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_check_version_with_error(
    tensor: *const DLManagedTensorVersioned,
    out_compat: *mut dlpack_helpers_version_compat,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_tensor_check_version` and of `err`.
    unsafe { boundary::with_error(err, || dlpack_tensor_check_version(tensor, out_compat)) }
}

/// The failure path of `dlpack_tensor_check_version`: its body, the refusal reported.
#[cold]
#[inline(never)]
unsafe extern "C" fn tensor_check_version_report(
    tensor: *const DLManagedTensorVersioned,
    out_compat: *mut dlpack_helpers_version_compat,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: caller contract.
        let (_, compat) = unsafe { checked_version(tensor, "tensor->version") }?;
        crate::capi::version::write_compat(out_compat, compat);
        Ok(())
    })
}

/// Accept a received versioned tensor, or refuse and release it in one step.
///
/// Like `dlpack_tensor_check_version`, but when the major version is not 1 the tensor's
/// deleter is called (the one safe operation, DLPack 1.0) before returning
/// `DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION`: on that status the caller no longer owns the
/// tensor and must not touch it. On OK the caller still owns it.
///
/// `out_compat` may be NULL. Returns `DLPACK_HELPERS_STATUS_OK`,
/// `DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION` (tensor released) or
/// `DLPACK_HELPERS_STATUS_NULL_POINTER` (NULL `tensor`, nothing done). Thread-safety: as the
/// producer's deleter.
///
/// @param[out] out_compat May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the major version is 1 (the caller still owns the tensor)
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` (nothing done) is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the major version is not 1: the tensor
///   was released through its deleter
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_check_version_or_delete(
    tensor: *mut DLManagedTensorVersioned,
    out_compat: *mut dlpack_helpers_version_compat,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: caller contract.
        match unsafe { checked_version(tensor, "tensor->version") } {
            Ok((_, compat)) => {
                crate::capi::version::write_compat(out_compat, compat);
                Ok(())
            }
            Err(e @ Error::UnsupportedVersion { .. }) => {
                // SAFETY: the deleter's offset is frozen in every major.
                unsafe { dlpack_tensor_delete(tensor) };
                Err(e)
            }
            Err(e) => Err(e), // NULL `tensor`: nothing to release
        }
    })
}

/// `dlpack_tensor_check_version_or_delete` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_tensor_check_version_or_delete`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[out] out_compat May be NULL.
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the major version is 1 (the caller still owns the tensor)
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` (nothing done) is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the major version is not 1: the tensor
///   was released through its deleter
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `err` is non-NULL and `err->struct_size`
///   is below `sizeof(dlpack_helpers_error)` (nothing done)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_check_version_or_delete_with_error(
    tensor: *mut DLManagedTensorVersioned,
    out_compat: *mut dlpack_helpers_version_compat,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_tensor_check_version_or_delete` and of `err`.
    unsafe {
        boundary::with_error(err, || {
            dlpack_tensor_check_version_or_delete(tensor, out_compat)
        })
    }
}
