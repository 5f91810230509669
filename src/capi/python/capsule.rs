//! Capsules: the standard producer capsule destructor, making correctly named capsules, consuming
//! them (ownership moves by renaming, before any step that can fail), and exporting a view of a
//! tensor kept alive by a Python object.

use super::import::{DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR, DLPACK_HELPERS_IMPORTED_LEGACY};
use crate::abi::{DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor};
use crate::capi::boundary::{self, out_ptr};
use crate::capi::convert::DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE;
use crate::capi::error::dlpack_helpers_status;
use crate::capi::layout::{LENIENT, view_of};
use crate::capi::tensor::{dlpack_legacy_tensor_delete, dlpack_tensor_delete};
use crate::capi::validate::checked_view;
use crate::capi::version::{
    DLPACK_HELPERS_EXPORT_LEGACY, DLPACK_HELPERS_EXPORT_VERSIONED, dlpack_helpers_export_kind,
};
use crate::host::cpython::{self, Api, PyObject};
use crate::rules::Error;
use crate::rules::layout;
use crate::rules::python::{self as rules, CapsuleState};
use crate::rules::validate::Declared;
use core::ffi::{CStr, c_void};

// The capsule names reach C as the DLPACK_HELPERS_CAPSULE_* macros (cbindgen.toml `trailer`;
// cbindgen cannot emit string constants). `tests/python_names.rs` checks them against
// `rules::python`.

fn name_of(api: &'static Api, capsule: *mut PyObject) -> Result<&'static [u8], Error> {
    // SAFETY: GIL held, `capsule` is a live capsule (checked by the caller).
    let p = unsafe { (api.PyCapsule_GetName)(capsule) };
    if p.is_null() {
        // SAFETY: GIL held; a capsule without a name (NULL name) or an error.
        unsafe { (api.PyErr_Clear)() };
        return Ok(b"");
    }
    // SAFETY: capsule names are NUL-terminated and, for DLPack capsules, static. The slice is
    // only compared right away.
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// The standard producer capsule destructor (a `PyCapsule_Destructor`), for capsules holding a
/// `DLManagedTensor` (`"dltensor"`) or `DLManagedTensorVersioned` (`"dltensor_versioned"`).
///
/// Calls the tensor's deleter only while the capsule still has its unconsumed name; does nothing
/// for `"used_dltensor"` / `"used_dltensor_versioned"` (a consumer owns the tensor: peer case 2);
/// skips a NULL deleter (peer case 5); reports any other name as an unraisable `ValueError` and
/// calls nothing. Never raises: an exception pending on entry is preserved.
///
/// Pass it to `PyCapsule_New` (cast to `PyCapsule_Destructor`), or use `dlpack_capsule_new`,
/// which installs it. CPython calls it with the GIL held when the capsule dies; it does
/// nothing in a process without Python.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_capsule_destructor(capsule: *mut c_void) {
    boundary::value((), || {
        let Some(api) = cpython::get() else { return };
        if capsule.is_null() {
            return;
        }
        // The name first: reading the name of a live capsule never touches the exception state
        // (the type is checked first, so a non-capsule never reaches `PyCapsule_GetName` here).
        // The capsules this library makes carry its static names: recognised by address before
        // any string comparison.
        // SAFETY: GIL held (capsule destruction); a live object.
        let raw = if unsafe { api.is_capsule(capsule) } {
            // SAFETY: as above; a capsule.
            unsafe { (api.PyCapsule_GetName)(capsule) }
        } else {
            core::ptr::null()
        };
        let known = if raw == rules::CAPSULE_VERSIONED.as_ptr() {
            Some(CapsuleState::Versioned)
        } else if raw == rules::CAPSULE_LEGACY.as_ptr() {
            Some(CapsuleState::Legacy)
        } else if raw.is_null() {
            None // no name, or not a capsule: decided below, with the exception set aside
        } else {
            // SAFETY: a capsule's non-NULL name is NUL-terminated; compared right away.
            Some(rules::classify(unsafe { CStr::from_ptr(raw) }.to_bytes()))
        };
        if matches!(
            known,
            Some(CapsuleState::LegacyUsed | CapsuleState::VersionedUsed)
        ) {
            // A consumer owns the tensor (peer case 2): nothing to do, nothing touched (issue
            // 26: the common death of a capsule whose consumer renamed it).
            return;
        }
        let (mut t, mut v, mut tb) = (
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        );
        // SAFETY: GIL held (capsule destruction); preserve a pending exception (set aside only
        // when there is one: the common case costs one query).
        let pending = unsafe { !(api.PyErr_Occurred)().is_null() };
        if pending {
            // SAFETY: as above.
            unsafe { (api.PyErr_Fetch)(&mut t, &mut v, &mut tb) };
        }
        let state = known.unwrap_or_else(|| rules::classify(name_of(api, capsule).unwrap_or(b"")));
        let name = || name_of(api, capsule).unwrap_or(b"");
        match state {
            CapsuleState::Legacy => {
                // SAFETY: the name matches; the pointer is the producer's legacy tensor.
                let p =
                    unsafe { (api.PyCapsule_GetPointer)(capsule, rules::CAPSULE_LEGACY.as_ptr()) };
                if p.is_null() {
                    // SAFETY: GIL held.
                    unsafe { (api.PyErr_WriteUnraisable)(core::ptr::null_mut()) };
                } else if is_ours(
                    // SAFETY: a live legacy managed tensor (the capsule's pointer).
                    unsafe { (*p.cast::<DLManagedTensor>()).deleter },
                    view_legacy_deleter,
                ) {
                    // One of our own views (its deleter is ours): released here, where the GIL
                    // is held, without the deleter's GIL round trip (issue 26).
                    // SAFETY: the unconsumed capsule owns the view block: released once.
                    unsafe { release_view(p.cast::<ViewLegacy>(), true) };
                } else {
                    // SAFETY: the unconsumed capsule owns the tensor: release it once.
                    unsafe { dlpack_legacy_tensor_delete(p.cast()) };
                }
            }
            CapsuleState::Versioned => {
                // SAFETY: as above.
                let p = unsafe {
                    (api.PyCapsule_GetPointer)(capsule, rules::CAPSULE_VERSIONED.as_ptr())
                };
                if p.is_null() {
                    // SAFETY: GIL held.
                    unsafe { (api.PyErr_WriteUnraisable)(core::ptr::null_mut()) };
                } else if is_ours(
                    // SAFETY: a live versioned managed tensor (the capsule's pointer).
                    unsafe { (*p.cast::<DLManagedTensorVersioned>()).deleter },
                    view_versioned_deleter,
                ) {
                    // SAFETY: as for the legacy view above.
                    unsafe { release_view(p.cast::<ViewVersioned>(), true) };
                } else {
                    // SAFETY: as above.
                    unsafe { dlpack_tensor_delete(p.cast()) };
                }
            }
            CapsuleState::LegacyUsed | CapsuleState::VersionedUsed => {}
            CapsuleState::Other => {
                let msg = format!(
                    "dlpack_capsule_destructor: capsule named {:?} is not a DLPack tensor capsule \
                     (expected \"dltensor\", \"dltensor_versioned\" or their \"used_\" forms); \
                     no deleter called",
                    String::from_utf8_lossy(name())
                );
                // SAFETY: GIL held.
                // The dying capsule is not passed: a reference taken to it here would resurrect it.
                unsafe { api.write_unraisable(core::ptr::null_mut(), &msg) };
            }
        }
        // SAFETY: GIL held. Leave exactly what was pending on entry: restore it, or clear what
        // a deleter may have raised (as restoring "nothing" would).
        unsafe {
            if pending {
                (api.PyErr_Restore)(t, v, tb);
            } else if !(api.PyErr_Occurred)().is_null() {
                (api.PyErr_Clear)();
            }
        }
    })
}

/// Whether a tensor's deleter is this library's view deleter `ours` (the tensor is then a view
/// block made by `new_view`).
#[inline(always)]
fn is_ours<T>(
    deleter: Option<unsafe extern "C" fn(*mut T)>,
    ours: unsafe extern "C" fn(*mut T),
) -> bool {
    deleter.is_some_and(|d| core::ptr::fn_addr_eq(d, ours))
}

/// The destructor as Python needs it (a `void (*)(PyObject *)`).
pub(crate) const DESTRUCTOR: cpython::Destructor = Some(dlpack_capsule_destructor);

fn new_capsule(
    api: &'static Api,
    ptr: *mut c_void,
    name: &'static CStr,
) -> Result<*mut PyObject, Error> {
    // SAFETY: GIL held (caller contract); `name` is static as the specification requires.
    let c = unsafe { (api.PyCapsule_New)(ptr, name.as_ptr(), DESTRUCTOR) };
    if c.is_null() {
        // SAFETY: GIL held, PyCapsule_New set an exception.
        return Err(unsafe { api.failure(false) });
    }
    Ok(c)
}

/// The body of `dlpack_capsule_new` and `dlpack_legacy_capsule_new` (`function` names the
/// export in the PYTHON_UNAVAILABLE message): a capsule named `name` owning `tensor`.
fn owning_capsule(
    function: &'static str,
    tensor: *mut c_void,
    name: &'static CStr,
    out_capsule: *mut *mut c_void,
) -> Result<(), Error> {
    let out = out_ptr(out_capsule, "out_capsule")?;
    if tensor.is_null() {
        return Err(Error::NullPointer("tensor"));
    }
    let api = cpython::require(function)?;
    let c = new_capsule(api, tensor, name)?;
    // SAFETY: non-NULL caller storage.
    unsafe { out.write(c) };
    Ok(())
}

/// Make a `"dltensor_versioned"` capsule owning `tensor`, with `dlpack_capsule_destructor`.
///
/// - `tensor`: a versioned managed tensor; on OK the capsule owns it (its deleter runs when the
///   capsule dies unconsumed, or the consumer calls it).
/// - `out_capsule`: receives a new reference (`PyObject *`).
///
/// Returns OK; `DLPACK_HELPERS_STATUS_NULL_POINTER` (NULL argument);
/// `DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE`; `DLPACK_HELPERS_STATUS_PRODUCER_ERROR` (Python
/// could not allocate; the error is cleared, the message kept). On failure the caller still
/// owns `tensor`. The caller must hold the GIL.
///
/// @retval DLPACK_HELPERS_STATUS_OK when the capsule now owns `tensor`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_capsule` is NULL
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when Python cannot allocate the capsule (the error
///   is cleared, the message kept)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_capsule_new(
    tensor: *mut DLManagedTensorVersioned,
    out_capsule: *mut *mut c_void,
) -> dlpack_helpers_status {
    boundary::status(|| {
        owning_capsule(
            "dlpack_capsule_new",
            tensor.cast(),
            rules::CAPSULE_VERSIONED,
            out_capsule,
        )
    })
}

/// Make a `"dltensor"` capsule owning a legacy `tensor`, with `dlpack_capsule_destructor`.
/// Parameters, statuses and ownership as `dlpack_capsule_new`.
///
/// @retval DLPACK_HELPERS_STATUS_OK when the capsule now owns `tensor`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_capsule` is NULL
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when Python cannot allocate the capsule (the error
///   is cleared, the message kept)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_capsule_new(
    tensor: *mut DLManagedTensor,
    out_capsule: *mut *mut c_void,
) -> dlpack_helpers_status {
    boundary::status(|| {
        owning_capsule(
            "dlpack_legacy_capsule_new",
            tensor.cast(),
            rules::CAPSULE_LEGACY,
            out_capsule,
        )
    })
}

/// A tensor taken out of a capsule; the caller now owns it.
pub(crate) enum Taken {
    Versioned(*mut DLManagedTensorVersioned),
    Legacy(*mut DLManagedTensor),
}

/// The DLPack state of a live capsule by its name. The two fresh names are compared first, as C
/// compares them (one `strcmp` each, by address before that: this library's own capsules), so
/// the common case reads the name once without measuring it; every other name (the `used_`
/// forms, a foreign name, no name) goes through `rules::classify`, which words the refusals.
fn state_of(api: &'static Api, capsule: *mut PyObject) -> Result<CapsuleState, Error> {
    // SAFETY: GIL held, `capsule` is a live capsule (checked by the caller).
    let p = unsafe { (api.PyCapsule_GetName)(capsule) };
    if !p.is_null() {
        for (name, state) in [
            (rules::CAPSULE_VERSIONED, CapsuleState::Versioned),
            (rules::CAPSULE_LEGACY, CapsuleState::Legacy),
        ] {
            // SAFETY: both NUL-terminated (a capsule name is a C string; ours are static).
            if p == name.as_ptr() || unsafe { libc::strcmp(p, name.as_ptr()) } == 0 {
                return Ok(state);
            }
        }
    }
    Ok(rules::classify(name_of(api, capsule)?))
}

#[cold]
#[inline(never)]
fn not_a_capsule() -> Error {
    Error::NotACapsule("the object is not a PyCapsule (expected a DLPack capsule)".into())
}

/// The refusal of a capsule `take` cannot take (a `used_` name, or not a DLPack name), worded
/// out of line so that the accepted path keeps a small frame.
#[cold]
#[inline(never)]
fn refused(api: &'static Api, capsule: *mut PyObject, state: CapsuleState) -> Error {
    let name = match name_of(api, capsule) {
        Ok(n) => String::from_utf8_lossy(n).into_owned(),
        Err(e) => return e,
    };
    if matches!(
        state,
        CapsuleState::LegacyUsed | CapsuleState::VersionedUsed
    ) {
        Error::CapsuleConsumed(format!(
            "the capsule is named {name:?}: it was already consumed (a DLPack capsule is consumed \
             exactly once)"
        ))
    } else {
        Error::CapsuleName(format!(
            "the capsule is named {name:?}, not \"dltensor\" or \"dltensor_versioned\" (DLPack \
             Python specification)"
        ))
    }
}

/// Take the tensor out of a DLPack capsule: check the name, rename it to its `used_` form (the
/// moment ownership moves, before anything that can fail: peer case 1), return the pointer.
///
/// `keep`: a Python exception from the C API calls stays set (`PythonErrorSet`) instead of
/// becoming a message (see `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`).
#[inline(always)]
pub(crate) fn take(api: &'static Api, capsule: *mut PyObject, keep: bool) -> Result<Taken, Error> {
    // SAFETY: GIL held, `capsule` a live object (caller contract).
    if !unsafe { api.is_capsule(capsule) } {
        return Err(not_a_capsule());
    }
    let (fresh, used, legacy) = match state_of(api, capsule)? {
        CapsuleState::Legacy => (rules::CAPSULE_LEGACY, rules::CAPSULE_LEGACY_USED, true),
        CapsuleState::Versioned => (
            rules::CAPSULE_VERSIONED,
            rules::CAPSULE_VERSIONED_USED,
            false,
        ),
        state => return Err(refused(api, capsule, state)),
    };
    // SAFETY: GIL held, the name matches.
    let p = unsafe { (api.PyCapsule_GetPointer)(capsule, fresh.as_ptr()) };
    if p.is_null() {
        // SAFETY: GIL held, an exception is set.
        return Err(unsafe { api.failure(keep) });
    }
    // Ownership moves here, before any step that can fail.
    // SAFETY: GIL held; `used` is static.
    if unsafe { (api.PyCapsule_SetName)(capsule, used.as_ptr()) } != 0 {
        // SAFETY: GIL held. The capsule kept its name, so it still owns the tensor.
        return Err(unsafe { api.failure(keep) });
    }
    Ok(if legacy {
        Taken::Legacy(p.cast())
    } else {
        Taken::Versioned(p.cast())
    })
}

/// The one check of a versioned tensor the caller now owns (every import path: a capsule's,
/// `__dlpack__`'s, the C exchange API's): its version (a major this library cannot read), then
/// its flags (bits the declared version does not define are `INVALID_FLAGS`, as
/// `dlpack_tensor_validate` says: a 1.0 tensor with bit 2 would otherwise be re-exported as a
/// 1.3 tensor whose bit 2 means "padded sub-byte", and an unknown bit of 1.3 would travel as if
/// it meant something). On failure the tensor is released through its deleter, once, here (the
/// only allowed action on a major mismatch; the caller owns nothing afterwards), and nothing
/// else was read.
#[inline]
pub(crate) fn accept_versioned(
    t: *mut DLManagedTensorVersioned,
) -> Result<*mut DLManagedTensorVersioned, Error> {
    // The accepted case first, with no error value built or moved (the rules are the ones
    // `refuse_or_accept` applies and words).
    if !t.is_null() {
        // SAFETY: a non-NULL managed tensor we own: `version` is readable in every major.
        let v = unsafe { core::ptr::addr_of!((*t).version).read() };
        if v.major == DLPackVersion::CURRENT.major {
            // SAFETY: major 1: `flags` is at the mirrored offset.
            let flags = unsafe { core::ptr::addr_of!((*t).flags).read() };
            if crate::rules::flags::undefined_bits(flags, v) == 0 {
                return accept_valid(t);
            }
        }
    }
    refuse_or_accept(t)
}

/// The DLPack rules on a received major-1 tensor with defined flags (issue 34: a versioned
/// tensor was once handed over unchecked, so a `Tensor` could hold NULL data with elements or a
/// byte range past `int64_t`, and a host copy read it). A view this library made
/// (`dlpack_capsule_new_view` and its `_validated` siblings: our own deleter) was validated when
/// it was made and is taken as it is: a re-import of our own `Tensor` costs no second pass. On
/// failure the tensor is released through its deleter, once, here.
#[inline(always)]
fn accept_valid(t: *mut DLManagedTensorVersioned) -> Result<*mut DLManagedTensorVersioned, Error> {
    // SAFETY: a non-NULL major-1 managed tensor we own: the deleter is at its frozen offset.
    let deleter = unsafe { core::ptr::addr_of!((*t).deleter).read() };
    let ours = view_versioned_deleter as unsafe extern "C" fn(*mut DLManagedTensorVersioned);
    if deleter.map(|f| f as usize) == Some(ours as usize) {
        return Ok(t);
    }
    // SAFETY: as above; the producer's `shape`/`strides` hold `ndim` elements (DLPack).
    if unsafe { crate::capi::validate::received_fast(&*t) } {
        return Ok(t);
    }
    validate_received(t)
}

/// [`accept_valid`]'s full validation (what the fast path could not accept: every refusal and
/// the unusual layouts), out of line and cold, so that its error values do not weigh on the
/// import's hot path.
#[cold]
#[inline(never)]
fn validate_received(
    t: *mut DLManagedTensorVersioned,
) -> Result<*mut DLManagedTensorVersioned, Error> {
    // SAFETY: a non-NULL major-1 managed tensor we own; the producer's `shape`/`strides` hold
    // `ndim` elements (DLPack).
    match unsafe { crate::capi::validate::received(&*t) } {
        Ok(()) => Ok(t),
        Err(e) => {
            // SAFETY: we own `t`; released once, here, and not touched again.
            unsafe { dlpack_tensor_delete(t) };
            Err(e)
        }
    }
}

/// The full check of [`accept_versioned`], with the messages; releases a refused tensor.
#[cold]
#[inline(never)]
fn refuse_or_accept(
    t: *mut DLManagedTensorVersioned,
) -> Result<*mut DLManagedTensorVersioned, Error> {
    // SAFETY: `t` is a managed tensor we own (a NULL one is NULL_POINTER, and its release a
    // no-op).
    let checked =
        unsafe { crate::capi::tensor::checked_version(t, "the capsule's tensor->version") }
            .and_then(|(version, _)| {
                // SAFETY: non-NULL (checked_version) and of major 1: `flags` is at the mirrored
                // offset.
                let flags = unsafe { core::ptr::addr_of!((*t).flags).read() };
                crate::rules::flags::check_named(flags, version, "the received tensor->flags")
            });
    if let Err(e) = checked {
        // SAFETY: we own `t`; the deleter is at a frozen offset; released once, here.
        unsafe { dlpack_tensor_delete(t) };
        return Err(e);
    }
    accept_valid(t)
}

/// Make a taken tensor the caller's versioned tensor: a versioned one is version-checked
/// (`accept_versioned`); a legacy one is converted by the one legacy→versioned path
/// (`convert::wrap_legacy`: validated, strides filled in, `READ_ONLY` unless `flags` has
/// `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE`), and released through its deleter if that fails.
/// The bool says "came from legacy".
pub(crate) fn accept(
    taken: Taken,
    flags: u32,
) -> Result<(*mut DLManagedTensorVersioned, bool), Error> {
    match taken {
        Taken::Versioned(t) => Ok((accept_versioned(t)?, false)),
        Taken::Legacy(l) => {
            let writable = flags & DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE != 0;
            match crate::capi::convert::wrap_legacy(l, 0, writable) {
                Ok(t) => Ok((t, true)),
                Err(e) => {
                    // SAFETY: we own `l` since the rename; it is released once, here.
                    unsafe { dlpack_legacy_tensor_delete(l) };
                    Err(e)
                }
            }
        }
    }
}

/// The body of `dlpack_capsule_import` (and of the fast path for a capsule): take, then accept.
#[inline(always)]
pub(crate) fn import_capsule(
    api: &'static Api,
    capsule: *mut PyObject,
    flags: u32,
) -> Result<(*mut DLManagedTensorVersioned, u32), Error> {
    if flags & !(DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR | DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE)
        != 0
    {
        return Err(Error::invalid(format!(
            "flags has bits 0x{flags:x}; only DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR and \
             DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE apply to a capsule"
        )));
    }
    let keep = flags & DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR != 0;
    let (t, legacy) = accept(take(api, capsule, keep)?, flags)?;
    Ok((
        t,
        if legacy {
            DLPACK_HELPERS_IMPORTED_LEGACY
        } else {
            0
        },
    ))
}

/// Consume a DLPack capsule of either kind and return its tensor as a versioned managed tensor,
/// saying whether it was legacy.
///
/// - `capsule`: a `PyCapsule` (`PyObject *`, borrowed) named `"dltensor_versioned"` or
///   `"dltensor"`. It is renamed to `"used_dltensor_versioned"` / `"used_dltensor"` the moment
///   ownership moves, before any step that can fail (peer case 1), so its destructor will not
///   call the deleter again (peer case 2).
/// - `flags`: `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE` ("I know the producer's memory is
///   writable") and/or `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`; other bits are
///   `_INVALID_ARGUMENT` (capsule untouched).
/// - `out_tensor`: receives the tensor; the caller owns it and releases it exactly once with
///   `dlpack_tensor_delete` (peer case 7). A versioned tensor is handed over with its own flags, once
///   checked against its declared version and validated by `dlpack_tensor_validate`'s rules
///   with `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES` (issue 34; a view made by this
///   library's `dlpack_capsule_new_view` family was validated then and is not checked again). A legacy tensor is converted as `dlpack_legacy_tensor_wrap` does: validated
///   (as `dlpack_legacy_tensor_validate`), version 1.3, shape and strides copied (compact
///   row-major strides filled in for NULL strides, `OVERFLOW` when they do not fit: peer case
///   49), flags `DLPACK_FLAG_BITMASK_READ_ONLY` unless `LEGACY_WRITABLE` (the legacy struct
///   cannot say read-only: peer case 50), `IS_COPIED` and `IS_SUBBYTE_TYPE_PADDED` clear (the
///   legacy struct says neither; its sub-byte data is packed). Releasing it calls the legacy
///   deleter once.
/// - `out_how`: may be NULL; receives `DLPACK_HELPERS_IMPORTED_LEGACY` for a legacy capsule,
///   else 0.
///
/// Returns OK; `DLPACK_HELPERS_STATUS_NOT_A_CAPSULE`; `_CAPSULE_CONSUMED` (`used_` name);
/// `_CAPSULE_NAME` (any other name; capsule untouched); `_UNSUPPORTED_VERSION` (versioned
/// capsule of another major); `_INVALID_FLAGS` (a versioned tensor with flag bits its declared
/// version does not define, as `dlpack_tensor_validate` refuses them: a 1.0 tensor with bit 2,
/// which means "padded sub-byte" only from 1.1, or an unknown bit of 1.1-1.3; a newer minor's
/// bits are accepted); a validation status (any tensor) or `_OUT_OF_MEMORY` (a legacy
/// tensor that cannot be converted); `_INVALID_ARGUMENT`; `_NULL_POINTER`; `_PYTHON_UNAVAILABLE`;
/// `_PYTHON_ERROR_SET` (a Python exception left set: with `KEEP_PYTHON_ERROR`, or one not
/// deriving from `Exception`). After a failure past the rename the capsule is consumed and the
/// tensor was released through its deleter, the only allowed action. The caller holds the GIL.
///
/// @param[out] out_how May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the caller now owns `*out_tensor`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `capsule` or `out_tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_NOT_A_CAPSULE when `capsule` is another Python object
/// @retval DLPACK_HELPERS_STATUS_CAPSULE_CONSUMED when the capsule has a `used_` name
/// @retval DLPACK_HELPERS_STATUS_CAPSULE_NAME when the capsule has any other name (capsule
///   untouched)
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when a versioned capsule holds another major:
///   consumed, and the tensor released through its deleter
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when a versioned capsule's tensor has flag bits its
///   declared version does not define (for example bit 2, `IS_SUBBYTE_TYPE_PADDED`, on a 1.0
///   tensor): consumed, and the tensor released through its deleter
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM` (the capsule is consumed and
///   the tensor released)
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0` (the capsule is
///   consumed and the tensor released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative (the capsule is
///   consumed and the tensor released)
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space (the capsule is consumed and
///   the tensor released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code (the capsule is consumed and the tensor released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device (the capsule is consumed and the tensor released)
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when a legacy tensor's wrapper cannot be allocated
///   (the tensor is released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `flags` has unknown bits (capsule untouched)
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET when a Python exception is left set: with
///   `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`, or one not deriving from `Exception`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_capsule_import(
    capsule: *mut c_void,
    flags: u32,
    out_tensor: *mut *mut DLManagedTensorVersioned,
    out_how: *mut u32,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        if capsule.is_null() {
            return Err(Error::NullPointer("capsule"));
        }
        let api = cpython::require("dlpack_capsule_import")?;
        let (t, how) = import_capsule(api, capsule, flags)?;
        // SAFETY: non-NULL caller storage; `out_how` optional.
        unsafe {
            out.write(t);
            if !out_how.is_null() {
                out_how.write(how);
            }
        }
        Ok(())
    })
}

/// Consume a DLPack capsule and return its tensor as a versioned managed tensor: exactly
/// `dlpack_capsule_import(capsule, 0, out_tensor, NULL)`.
///
/// A legacy `"dltensor"` capsule's tensor is therefore converted and marked
/// `DLPACK_FLAG_BITMASK_READ_ONLY` (the legacy struct cannot say read-only: peer case 50); call
/// `dlpack_capsule_import` with `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE` to assert writability,
/// or to learn whether the capsule was legacy. Ownership, renaming and GIL as
/// `dlpack_capsule_import`.
///
/// Returns OK; `DLPACK_HELPERS_STATUS_NOT_A_CAPSULE`; `_CAPSULE_CONSUMED`; `_CAPSULE_NAME`;
/// `_UNSUPPORTED_VERSION`; `_INVALID_FLAGS`; for a tensor that fails validation (either kind)
/// `_OVERFLOW`, `_INVALID_NDIM`, `_NULL_SHAPE`, `_INVALID_SHAPE`, `_INVALID_DTYPE`,
/// `_INVALID_DEVICE`, `_NULL_DATA`; `_OUT_OF_MEMORY` (the capsule is consumed and the tensor released); `_NULL_POINTER`;
/// `_PYTHON_UNAVAILABLE`; `_PYTHON_ERROR_SET` (only for an exception not deriving from
/// `Exception`: no other Python exception is left set).
///
/// @retval DLPACK_HELPERS_STATUS_OK when the caller now owns `*out_tensor`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `capsule` or `out_tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_NOT_A_CAPSULE when `capsule` is another Python object
/// @retval DLPACK_HELPERS_STATUS_CAPSULE_CONSUMED when the capsule has a `used_` name
/// @retval DLPACK_HELPERS_STATUS_CAPSULE_NAME when the capsule has any other name (capsule
///   untouched)
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when a versioned capsule holds another major:
///   consumed, and the tensor released through its deleter
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when a versioned capsule's tensor has flag bits its
///   declared version does not define (for example bit 2, `IS_SUBBYTE_TYPE_PADDED`, on a 1.0
///   tensor): consumed, and the tensor released through its deleter
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM` (the capsule is consumed and
///   the tensor released)
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0` (the capsule is
///   consumed and the tensor released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative (the capsule is
///   consumed and the tensor released)
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space (the capsule is consumed and
///   the tensor released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code (the capsule is consumed and the tensor released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device (the capsule is consumed and the tensor released)
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when a legacy tensor's wrapper cannot be allocated
///   (the tensor is released)
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET when a Python exception that does not derive from
///   `Exception` was raised: it is left set
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_capsule_consume(
    capsule: *mut c_void,
    out_tensor: *mut *mut DLManagedTensorVersioned,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        if capsule.is_null() {
            return Err(Error::NullPointer("capsule"));
        }
        let api = cpython::require("dlpack_capsule_consume")?;
        let (t, _) = import_capsule(api, capsule, 0)?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(t) };
        Ok(())
    })
}

/// Consume a legacy `"dltensor"` capsule and return its `DLManagedTensor` unwrapped.
///
/// As `dlpack_capsule_consume`, but a `"dltensor_versioned"` capsule is refused with
/// `DLPACK_HELPERS_STATUS_CAPSULE_NAME` and left untouched (the two structs are not
/// layout-compatible). The caller releases the tensor with `dlpack_legacy_tensor_delete`.
///
/// @retval DLPACK_HELPERS_STATUS_OK when the caller now owns `*out_tensor`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `capsule` or `out_tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_NOT_A_CAPSULE when `capsule` is another Python object
/// @retval DLPACK_HELPERS_STATUS_CAPSULE_CONSUMED when the capsule has a `used_` name
/// @retval DLPACK_HELPERS_STATUS_CAPSULE_NAME when the capsule is not named `"dltensor"` (a
///   versioned capsule included; capsule untouched)
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET when a Python exception that does not derive from
///   `Exception` was raised: it is left set
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_capsule_consume(
    capsule: *mut c_void,
    out_tensor: *mut *mut DLManagedTensor,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        if capsule.is_null() {
            return Err(Error::NullPointer("capsule"));
        }
        let api = cpython::require("dlpack_legacy_capsule_consume")?;
        // SAFETY: GIL held; peek at the name so a versioned capsule is left untouched.
        if unsafe { api.is_capsule(capsule) }
            && rules::classify(name_of(api, capsule)?) == CapsuleState::Versioned
        {
            return Err(Error::CapsuleName(
                "the capsule is named \"dltensor_versioned\"; use dlpack_capsule_consume for \
                 versioned tensors"
                    .into(),
            ));
        }
        match take(api, capsule, false)? {
            Taken::Legacy(l) => {
                // SAFETY: non-NULL caller storage.
                unsafe { out.write(l) };
                Ok(())
            }
            Taken::Versioned(_) => unreachable!("versioned capsules are refused above"),
        }
    })
}

/// The context of a view exported by `dlpack_capsule_new_view` (and its `_validated`
/// siblings): the view's shape and strides, and the owner reference its deleter drops.
struct ViewCtx {
    /// `shape` then `strides` for up to `INLINE_DIMS` dimensions, inside the view's own
    /// allocation (one `malloc` per view); only the first `2 * ndim` are written.
    inline: [core::mem::MaybeUninit<i64>; 2 * INLINE_DIMS],
    /// `shape` then `strides` for more dimensions (a second allocation), else empty.
    heap: Vec<i64>,
    owner: *mut PyObject,
}

/// Up to `INLINE_DIMS` dimensions live inside the view's own allocation (one `malloc` per
/// view); more take a second allocation.
const INLINE_DIMS: usize = 8;

#[repr(C)]
struct ViewVersioned {
    mt: DLManagedTensorVersioned,
    ctx: ViewCtx,
}

#[repr(C)]
struct ViewLegacy {
    mt: DLManagedTensor,
    ctx: ViewCtx,
}

/// Fill in the context of a view block in place (nothing zeroed first: a view is made per
/// export, so the copy is all it costs) and point `dl`'s `shape`/`strides` at its dimensions.
/// NULL `strides` become the compact row-major ones (`OVERFLOW` when one does not fit); `dl`
/// is left untouched on failure.
///
/// # Safety
/// `ctx` is the (uninitialised) context of a live view block, which does not move afterwards;
/// on error nothing was written that needs dropping.
#[inline(always)]
unsafe fn fill_view(
    ctx: *mut ViewCtx,
    dl: &mut DLTensor,
    shape: &[i64],
    strides: Option<&[i64]>,
    owner: *mut c_void,
) -> Result<(), Error> {
    let n = shape.len();
    let mut heap = Vec::new();
    let base: *mut i64 = if n <= INLINE_DIMS {
        // SAFETY: `ctx` points into a live allocation (caller contract); the fields are written
        // with raw writes, never read before.
        unsafe { (&raw mut (*ctx).inline).cast::<i64>() }
    } else {
        heap.reserve_exact(2 * n);
        heap.as_mut_ptr()
    };
    // SAFETY: `base` has room for `2 * n` values (inline array or reserved vector).
    let (sh, st) = unsafe { (base, base.add(n)) };
    match strides {
        // SAFETY: room for `n` shape values and `n` strides; `s` holds `n`.
        Some(s) if n <= INLINE_DIMS => unsafe {
            // A few values: copied in one loop (two `memcpy` calls of a few bytes cost more).
            for i in 0..n {
                sh.add(i).write(*shape.get_unchecked(i));
                st.add(i).write(*s.get_unchecked(i));
            }
        },
        // SAFETY: as above.
        Some(s) => unsafe {
            core::ptr::copy_nonoverlapping(shape.as_ptr(), sh, n);
            core::ptr::copy_nonoverlapping(s.as_ptr(), st, n);
        },
        None => {
            // SAFETY: room for `n` shape values and `n` strides; zeroed so the slice below is
            // initialised.
            let out = unsafe {
                core::ptr::copy_nonoverlapping(shape.as_ptr(), sh, n);
                st.write_bytes(0, n);
                core::slice::from_raw_parts_mut(st, n)
            };
            layout::compact_strides(shape, true, out)?;
        }
    }
    if n > INLINE_DIMS {
        // SAFETY: the first 2 * n elements were written above.
        unsafe { heap.set_len(2 * n) };
    }
    // SAFETY: as above; `heap`'s buffer moves with the Vec value but not in memory.
    unsafe {
        (&raw mut (*ctx).heap).write(heap);
        (&raw mut (*ctx).owner).write(owner.cast());
    }
    if n == 0 {
        dl.shape = core::ptr::null_mut();
        dl.strides = core::ptr::null_mut();
    } else {
        dl.shape = sh;
        dl.strides = st;
    }
    Ok(())
}

/// The fields of a view block the release reads: its context.
trait ViewBlock {
    fn ctx(p: *mut Self) -> *mut ViewCtx;
}
impl ViewBlock for ViewVersioned {
    fn ctx(p: *mut Self) -> *mut ViewCtx {
        // SAFETY: a field projection of a live block (no reference made).
        unsafe { &raw mut (*p).ctx }
    }
}
impl ViewBlock for ViewLegacy {
    fn ctx(p: *mut Self) -> *mut ViewCtx {
        // SAFETY: as above.
        unsafe { &raw mut (*p).ctx }
    }
}

/// A fresh, uninitialised view block: from Python's allocator (`PyMem_Malloc`, pymalloc for a
/// block this small) when the host exports it, as NumPy allocates its views' blocks, else
/// from the library's. The caller holds the GIL (every view export requires it).
#[inline(always)]
fn alloc_block<V>(api: &'static Api) -> Result<*mut V, Error> {
    let size = size_of::<V>();
    let p = match api.pymem() {
        // SAFETY: GIL held (caller contract); pymalloc aligns to 16 bytes, more than `V` needs.
        Some((malloc, _)) => unsafe { malloc(size) }.cast::<V>(),
        // SAFETY: `V` is not zero-sized.
        None => unsafe { std::alloc::alloc(std::alloc::Layout::new::<V>()) }.cast::<V>(),
    };
    if p.is_null() {
        return Err(Error::fault(
            crate::rules::error::Fault::OutOfMemory,
            format!("allocating {size} bytes for an exported view failed"),
        ));
    }
    Ok(p)
}

/// Free a block of `alloc_block` (same process-wide choice of allocator).
///
/// # Safety
/// `p` came from `alloc_block::<V>` and is freed once; with `PyMem_Free` the GIL is held.
#[inline(always)]
unsafe fn free_block<V>(api: &'static Api, p: *mut V) {
    match api.pymem() {
        // SAFETY: caller contract.
        Some((_, free)) => unsafe { free(p.cast()) },
        // SAFETY: caller contract: the layout it was allocated with.
        None => unsafe { std::alloc::dealloc(p.cast(), std::alloc::Layout::new::<V>()) },
    }
}

/// Release a view block: drop its owner reference and free it.
///
/// `gil_held`: the caller holds the GIL (the capsule destructor: CPython calls it with the
/// GIL); the release is then two calls. Otherwise (a deleter, which may run on any thread,
/// with or without the GIL, even after finalization: DLPack #103/#140) Python's own checks
/// decide what may touch Python:
/// - a running interpreter: take the GIL, drop the reference and free the block under it
///   (when the thread already holds the GIL on its own thread state, `Api::holds_own_gil_state`,
///   taking it would change nothing and is skipped);
/// - an interpreter being finalized (`Py_IsInitialized` is already 0 while modules are torn
///   down): only a thread that holds the GIL on it (it has a thread state, and it is the
///   current one) may drop the reference and free the block. This is how views still alive at
///   exit release their owner (and so the producer's tensor) exactly once during shutdown;
/// - a finalized interpreter (no thread state for this thread) or another thread: leak the
///   reference on purpose, as NumPy does (DLPack #103/#140), and with it a block that came from
///   Python's allocator (which cannot be used without the GIL); a block of the library's
///   allocator is freed.
///
/// # Safety
/// `p` is a live block made by `new_view`, released once; nothing touches it afterwards.
unsafe fn release_view<V: ViewBlock>(p: *mut V, gil_held: bool) {
    let ctx = V::ctx(p);
    // SAFETY: the context was written by `fill_view`; the dimensions beyond the inline ones
    // (a Vec of the library's allocator) are freed here, on any thread.
    let (owner, heap) = unsafe { ((*ctx).owner, core::ptr::read(&raw const (*ctx).heap)) };
    drop(heap);
    // A view is made only with Python resolved, so this is `Some` (else: leak).
    let Some(api) = cpython::get() else { return };
    // SAFETY: see the rules above.
    unsafe {
        if gil_held {
            (api.Py_DecRef)(owner);
            free_block(api, p);
        } else if (api.Py_IsInitialized)() != 0 {
            if api.holds_own_gil_state() {
                // The GIL is held on this thread's own state (a consumer releasing a view with
                // the GIL, as numpy.from_dlpack's arrays do): `PyGILState_Ensure` would change
                // nothing, so it is skipped (issue 26).
                (api.Py_DecRef)(owner);
                free_block(api, p);
                return;
            }
            let g = (api.PyGILState_Ensure)();
            (api.Py_DecRef)(owner);
            free_block(api, p);
            (api.PyGILState_Release)(g);
        } else if !(api.PyGILState_GetThisThreadState)().is_null() && (api.PyGILState_Check)() != 0
        {
            (api.Py_DecRef)(owner);
            free_block(api, p);
        } else if api.pymem().is_none() {
            free_block(api, p);
        }
    }
}

unsafe extern "C" fn view_versioned_deleter(t: *mut DLManagedTensorVersioned) {
    boundary::value((), || {
        if t.is_null() {
            return;
        }
        // SAFETY: made by `new_view`, released once.
        unsafe { release_view(t.cast::<ViewVersioned>(), false) }
    })
}

unsafe extern "C" fn view_legacy_deleter(t: *mut DLManagedTensor) {
    boundary::value((), || {
        if t.is_null() {
            return;
        }
        // SAFETY: made by `new_view`, released once.
        unsafe { release_view(t.cast::<ViewLegacy>(), false) }
    })
}

/// Export a view of `tensor`'s memory as a new DLPack capsule, kept alive by a Python `owner`.
///
/// For producers whose memory is owned by a Python object (a C extension's array type, or the
/// `dlpack_helpers` view): the new managed tensor copies `*tensor` and its shape and strides
/// (NULL strides with `ndim != 0` are filled in as compact row-major, so the export obeys
/// DLPack 1.2), holds a strong reference to `owner`, and its deleter drops that reference: it
/// takes the GIL itself (any thread; a thread that already holds it on its own thread state is
/// not made to take it again); while the interpreter is being finalized it drops the reference
/// only on the thread holding the GIL (so views alive at exit still release their owner, once);
/// after finalization it does nothing (a leak on purpose: DLPack #103/#140). The view's block
/// (managed tensor, shape and strides for up to 8 dimensions, owner) comes from Python's
/// allocator, `PyMem_Malloc`, as NumPy allocates its views (the library's allocator in a host
/// that does not export it), and is freed under the GIL with the reference, or leaked with it
/// after finalization. An unconsumed capsule's destructor (the GIL held) releases the view
/// directly.
///
/// - `tensor`: borrowed; `tensor->data` must stay valid while `owner` lives. It is checked as
///   `dlpack_tensor_validate` does with `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES` (so a
///   shape whose element count or byte extent does not fit in `int64_t` is `OVERFLOW`), and
///   NULL strides become the exact compact row-major strides, or `OVERFLOW` when one does not
///   fit in `int64_t` (peer case 49: never a clamped or wrapped stride).
/// - `tensor->device`: `device_id` non-negative, and a device type DLPack 1.3 assigns (1-4,
///   7-18) unless `flags` has `DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE` (else
///   `INVALID_DEVICE`; peer cases 54, 55).
/// - `flags`: `DLPACK_FLAG_BITMASK_*` (DLPack 1.3 bits only, else `INVALID_FLAGS`), plus the
///   request bit `DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE` (never stored). Versioned
///   export: stored as given. Legacy export (the struct has no flags), each flag is refused or
///   dropped, never silently: `READ_ONLY` is refused with `DLPACK_HELPERS_STATUS_READ_ONLY`
///   (`BufferError`, as NumPy raises for a read-only array asked for the legacy struct; peer
///   case 50), as `dlpack_versioned_to_legacy` does. The documented opt-in is to clear
///   `READ_ONLY` in `flags` yourself, which states that the consumer may write (or that you
///   accept it might). For a view of a tensor whose `READ_ONLY` this library assumed when it
///   wrapped a legacy tensor (`dlpack_tensor_read_only_origin` answers
///   `DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY`), clearing it is the rule, not a risk: the legacy
///   consumer then gets exactly what the legacy producer stated (issue 25). A producer's stated
///   `READ_ONLY` is never to be cleared this way: copy the data instead (the array API's
///   `copy=None` allows it), as the `dlpack_helpers` package does. `IS_SUBBYTE_TYPE_PADDED` on a sub-byte dtype is refused with
///   `INVALID_FLAGS` (legacy sub-byte data reads as packed); on other dtypes it means nothing
///   and is dropped, as is `IS_COPIED` (the legacy struct cannot say "copied"; a consumer then
///   assumes shared memory, the safe reading).
/// - `owner`: any Python object (`PyObject *`), borrowed; a new reference is taken.
/// - `kind`: `DLPACK_HELPERS_EXPORT_VERSIONED` (capsule `"dltensor_versioned"`, version 1.3) or
///   `DLPACK_HELPERS_EXPORT_LEGACY` (capsule `"dltensor"`), as chosen by
///   `dlpack_version_negotiate`.
/// - `out_capsule`: receives a new reference to a capsule with `dlpack_capsule_destructor`.
///
/// Returns OK; `_NULL_POINTER`; `_INVALID_ARGUMENT` (unknown `kind`); `_READ_ONLY`;
/// `_INVALID_FLAGS`; `_OVERFLOW`; the other statuses of `dlpack_tensor_validate`
/// (`INVALID_NDIM`, `NULL_SHAPE`, `INVALID_SHAPE`, `INVALID_DTYPE`, `NULL_DATA`, ...);
/// `_PYTHON_UNAVAILABLE`; `_PRODUCER_ERROR` (Python could not allocate). On failure nothing
/// is kept. The caller holds the GIL.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor`, `owner` or `out_capsule` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `kind` is unknown
/// @retval DLPACK_HELPERS_STATUS_READ_ONLY when a legacy export is asked for a tensor flagged
///   `READ_ONLY`
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits outside DLPack 1.3's, or a
///   legacy export of a padded sub-byte tensor
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative, or the device
///   type is not one DLPack 1.3 assigns and `flags` lacks
///   `DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE`
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte extent or a filled-in stride
///   does not fit in `int64_t`
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the view's block cannot be allocated
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when Python cannot allocate (nothing is kept)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_capsule_new_view(
    tensor: *const DLTensor,
    flags: u64,
    owner: *mut c_void,
    kind: dlpack_helpers_export_kind,
    out_capsule: *mut *mut c_void,
) -> dlpack_helpers_status {
    // SAFETY: the caller contract of this export, which `new_view` states.
    unsafe {
        new_view(
            tensor,
            flags,
            owner,
            ViewOut::Capsule(kind, out_capsule),
            true,
        )
    }
}

/// Export a view of `tensor`, which the caller has already validated, as a new DLPack capsule
/// kept alive by a Python `owner`: `dlpack_capsule_new_view` without validating `tensor` again.
///
/// For producers that validate a tensor once (when they make or import it: with
/// `dlpack_tensor_validate` or `dlpack_dltensor_validate`, default options or
/// `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES`) and then export many views of it, as NumPy
/// exports its arrays without re-checking them: the `dlpack_helpers.Tensor` export path uses it
/// from its second export on. The capsule is the one `dlpack_capsule_new_view` makes (same
/// struct, name, flags rules, owner reference and deleter), at the cost of the copy alone.
///
/// Caller contract: `*tensor` passed one of those validations and has not changed since (the
/// struct and the contents of its `shape` and `strides`), and `tensor->data` stays valid while
/// `owner` lives. What is still checked, because the copy itself reads it: the NULL pointers,
/// `kind`, `flags` (DLPack 1.3 bits only; the legacy export's refusals, as
/// `dlpack_capsule_new_view`), `ndim` (0 to `DLPACK_HELPERS_MAX_NDIM`), a NULL `shape` with
/// `ndim != 0`, and the compact row-major strides filled in for NULL `strides` (`OVERFLOW` when
/// one does not fit). What is not checked again: extents, dtype, `data` and the byte range. A
/// tensor that breaks the contract is copied as it is (integers only, nothing is dereferenced
/// but `shape` and `strides`): the consumer then receives the same invalid tensor, never a
/// fault inside this function.
///
/// Parameters, ownership, thread-safety and statuses as `dlpack_capsule_new_view`. The caller
/// holds the GIL.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor`, `owner` or `out_capsule` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `kind` is unknown
/// @retval DLPACK_HELPERS_STATUS_READ_ONLY when a legacy export is asked for a tensor flagged
///   `READ_ONLY`
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits outside DLPack 1.3's, or a
///   legacy export of a padded sub-byte tensor
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when a filled-in stride does not fit in `int64_t`
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the view's block cannot be allocated
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when Python cannot allocate (nothing is kept)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_capsule_new_view_validated(
    tensor: *const DLTensor,
    flags: u64,
    owner: *mut c_void,
    kind: dlpack_helpers_export_kind,
    out_capsule: *mut *mut c_void,
) -> dlpack_helpers_status {
    // SAFETY: the caller contract of this export (the tensor was validated and is unchanged).
    unsafe {
        new_view(
            tensor,
            flags,
            owner,
            ViewOut::Capsule(kind, out_capsule),
            false,
        )
    }
}

/// Make a view of `tensor`, which the caller has already validated, as a new versioned managed
/// tensor kept alive by a Python `owner`: the tensor `dlpack_capsule_new_view_validated` puts in
/// its capsule, handed over without a capsule.
///
/// For a producer's DLPack 1.3 C exchange API (`managed_tensor_from_py_object_no_sync` of
/// `__dlpack_c_exchange_api__`), whose consumer takes the managed tensor directly: making a
/// capsule only to consume it again costs a Python object and two renames per import. The
/// `dlpack_helpers.Tensor` exchange table uses it.
///
/// - `tensor`, `flags`, `owner`: as `dlpack_capsule_new_view_validated`, under the same caller
///   contract (validated with `dlpack_tensor_validate` or `dlpack_dltensor_validate`, default
///   options or `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES`, unchanged since) and with the
///   same checks kept (NULL pointers, `flags` bits, `ndim` range, NULL `shape`, filled-in
///   strides).
/// - `out_tensor`: receives a `DLManagedTensorVersioned` of version 1.3 with `flags`, a copy of
///   `*tensor` whose `shape` and `strides` (never NULL for `ndim != 0`) live in the same
///   allocation, and a deleter that drops the reference to `owner` as the capsule views' deleter
///   does (it takes the GIL itself, on any thread, unless the thread already holds it on its own
///   thread state; during finalization only on the thread holding it; after finalization it
///   leaks on purpose: DLPack #103/#140). The caller owns it and releases it exactly once
///   (`dlpack_tensor_delete`).
///
/// One allocation from Python's allocator (`PyMem_Malloc`, as NumPy's views; the library's
/// allocator in a host that does not export it), a second one of the library's above 8
/// dimensions, one new reference to `owner`; no Python object. The caller holds the GIL.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor`, `owner` or `out_tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits outside DLPack 1.3's
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's device is not one DLPack 1.3
///   assigns or its id is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when a filled-in stride does not fit in `int64_t`
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the view's block cannot be allocated
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_new_view_validated(
    tensor: *const DLTensor,
    flags: u64,
    owner: *mut c_void,
    out_tensor: *mut *mut DLManagedTensorVersioned,
) -> dlpack_helpers_status {
    // SAFETY: the caller contract of this export (the tensor was validated and is unchanged).
    unsafe { new_view(tensor, flags, owner, ViewOut::Tensor(out_tensor), false) }
}

/// Where a view goes: a capsule of the given kind, or the managed tensor itself (versioned).
#[derive(Clone, Copy)]
enum ViewOut {
    Capsule(dlpack_helpers_export_kind, *mut *mut c_void),
    Tensor(*mut *mut DLManagedTensorVersioned),
}

/// The view exports: `validate` runs `dlpack_tensor_validate`'s rules on `tensor`
/// (`dlpack_capsule_new_view`); without it only what the copy reads is checked
/// (`dlpack_capsule_new_view_validated`, `dlpack_tensor_new_view_validated`).
///
/// # Safety
/// A non-NULL `tensor` is a live DLTensor whose non-NULL `shape`/`strides` hold `ndim` elements.
#[inline(always)]
unsafe fn new_view(
    tensor: *const DLTensor,
    flags: u64,
    owner: *mut c_void,
    out: ViewOut,
    validate: bool,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let (kind, out_capsule, out_tensor) = match out {
            ViewOut::Capsule(kind, o) => (kind, out_ptr(o, "out_capsule")?, None),
            ViewOut::Tensor(o) => (
                DLPACK_HELPERS_EXPORT_VERSIONED,
                core::ptr::null_mut(),
                Some(out_ptr(o, "out_tensor")?),
            ),
        };
        // SAFETY: a non-NULL `tensor` is a live DLTensor (caller contract).
        let t = *unsafe { boundary::nonnull(tensor, "tensor") }?;
        if owner.is_null() {
            return Err(Error::NullPointer("owner"));
        }
        if kind != DLPACK_HELPERS_EXPORT_VERSIONED && kind != DLPACK_HELPERS_EXPORT_LEGACY {
            return Err(Error::invalid(format!(
                "kind is {kind}, not a DLPACK_HELPERS_EXPORT_* value"
            )));
        }
        let flags = crate::capi::convert::producer_flags(flags, t.device, "tensor.device")?;
        let producer = Declared::Versioned {
            version: DLPackVersion::CURRENT,
            flags,
        };
        let view = if validate {
            // The fast path first, then the full rule list (as the wraps validate).
            // SAFETY: caller contract: non-NULL shape/strides hold ndim elements.
            unsafe { checked_view(&t, producer, &LENIENT) }?
        } else {
            // The header rules only (ndim range, NULL shape): what the copy below reads.
            // SAFETY: caller contract: non-NULL shape/strides hold ndim elements.
            unsafe { view_of(&t, producer, &LENIENT) }?
        };
        if kind == DLPACK_HELPERS_EXPORT_LEGACY {
            crate::capi::convert::check_legacy_flags(flags, view.dtype, "flags", "")?;
        }
        let api = cpython::require(match (out_tensor.is_some(), validate) {
            (true, _) => "dlpack_tensor_new_view_validated",
            (false, true) => "dlpack_capsule_new_view",
            (false, false) => "dlpack_capsule_new_view_validated",
        })?;
        let mut dl = t;
        let (ptr, name): (*mut c_void, &'static CStr) = if kind == DLPACK_HELPERS_EXPORT_VERSIONED {
            let p = alloc_block::<ViewVersioned>(api)?;
            // SAFETY: `p` is the fresh block, written field by field; on failure it is freed
            // uninitialised (nothing in it needs dropping).
            unsafe {
                if let Err(e) =
                    fill_view(&raw mut (*p).ctx, &mut dl, view.shape, view.strides, owner)
                {
                    free_block(api, p);
                    return Err(e);
                }
                (&raw mut (*p).mt).write(DLManagedTensorVersioned {
                    version: DLPackVersion::CURRENT,
                    manager_ctx: (&raw mut (*p).ctx).cast(),
                    deleter: Some(view_versioned_deleter),
                    flags,
                    dl_tensor: dl,
                });
            }
            // SAFETY: GIL held; the reference is dropped by the deleter (or below on failure).
            unsafe { (api.Py_IncRef)(owner) };
            if let Some(out) = out_tensor {
                // SAFETY: non-NULL caller storage; the caller owns the view from here.
                unsafe { out.write(p.cast()) };
                return Ok(());
            }
            (p.cast(), rules::CAPSULE_VERSIONED)
        } else {
            let p = alloc_block::<ViewLegacy>(api)?;
            // SAFETY: as above.
            unsafe {
                if let Err(e) =
                    fill_view(&raw mut (*p).ctx, &mut dl, view.shape, view.strides, owner)
                {
                    free_block(api, p);
                    return Err(e);
                }
                (&raw mut (*p).mt).write(DLManagedTensor {
                    dl_tensor: dl,
                    manager_ctx: (&raw mut (*p).ctx).cast(),
                    deleter: Some(view_legacy_deleter),
                });
            }
            // SAFETY: GIL held; the reference is dropped by the deleter (or below on failure).
            unsafe { (api.Py_IncRef)(owner) };
            (p.cast(), rules::CAPSULE_LEGACY)
        };
        match new_capsule(api, ptr, name) {
            Ok(c) => {
                // SAFETY: non-NULL caller storage.
                unsafe { out_capsule.write(c) };
                Ok(())
            }
            Err(e) => {
                // Nobody else saw the tensor: release it (drops the owner reference; GIL held).
                if kind == DLPACK_HELPERS_EXPORT_VERSIONED {
                    // SAFETY: `ptr` is the versioned view block made above, released once here.
                    unsafe { release_view(ptr.cast::<ViewVersioned>(), true) };
                } else {
                    // SAFETY: `ptr` is the legacy view block made above, released once here.
                    unsafe { release_view(ptr.cast::<ViewLegacy>(), true) };
                }
                Err(e)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::error::Fault;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static RELEASED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn count(_: *mut DLManagedTensorVersioned) {
        RELEASED.fetch_add(1, Ordering::SeqCst);
    }

    /// The one check of a received tensor (every import path, no Python needed): flag bits the
    /// declared version does not define are INVALID_FLAGS and the tensor is released once;
    /// defined bits, and a newer minor's bits, are accepted and nothing is released.
    #[test]
    fn received_tensor_with_undefined_flags_is_refused_and_released_once() {
        // A valid 0-d float32 on the CPU: only the flags decide (issue 34 validates the rest).
        let mut value = 1.0f32;
        let mut t = DLManagedTensorVersioned {
            version: DLPackVersion::new(1, 0),
            manager_ctx: core::ptr::null_mut(),
            deleter: Some(count),
            flags: 0,
            dl_tensor: DLTensor {
                data: (&raw mut value).cast(),
                device: crate::abi::DLDevice::CPU,
                ndim: 0,
                dtype: crate::abi::DLDataType::new(crate::abi::DLDataTypeCode::kDLFloat, 32, 1),
                shape: core::ptr::null_mut(),
                strides: core::ptr::null_mut(),
                byte_offset: 0,
            },
        };
        for (minor, flags, ok) in [
            (0, 0x4, false),
            (3, 0x8, false),
            (1, 0x4, true),
            (0, 0x3, true),
            (4, 0x8, true),
        ] {
            t.version = DLPackVersion::new(1, minor);
            t.flags = flags;
            let before = RELEASED.load(Ordering::SeqCst);
            let r = accept_versioned(&mut t);
            let released = RELEASED.load(Ordering::SeqCst) - before;
            if ok {
                assert!(r.is_ok(), "1.{minor} {flags:#x}");
                assert_eq!(released, 0);
            } else {
                match r {
                    Err(Error::Tensor { fault, message }) => {
                        assert_eq!(fault, Fault::InvalidFlags);
                        assert!(message.contains(&format!("{flags:#x}")), "{message}");
                    }
                    other => panic!("1.{minor} {flags:#x}: {other:?}"),
                }
                assert_eq!(released, 1, "released exactly once");
            }
        }
    }

    /// Issue 34: a received versioned tensor that breaks a DLPack rule (here NULL data with an
    /// element, then a negative device id) is refused with its validation fault and released
    /// once; a view this library made is taken without a second pass.
    /// A counter of its own: the tests of this module run in parallel.
    static RELEASED_INVALID: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn count_invalid(_: *mut DLManagedTensorVersioned) {
        RELEASED_INVALID.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn received_tensor_is_validated_and_released_once() {
        let mut value = 1.0f32;
        let valid = DLTensor {
            data: (&raw mut value).cast(),
            device: crate::abi::DLDevice::CPU,
            ndim: 0,
            dtype: crate::abi::DLDataType::new(crate::abi::DLDataTypeCode::kDLFloat, 32, 1),
            shape: core::ptr::null_mut(),
            strides: core::ptr::null_mut(),
            byte_offset: 0,
        };
        let broken = [
            (
                DLTensor {
                    data: core::ptr::null_mut(),
                    ..valid
                },
                "NULL_DATA",
            ),
            (
                DLTensor {
                    device: crate::abi::DLDevice::new(crate::abi::DLDeviceType::kDLCPU, -1),
                    ..valid
                },
                "INVALID_DEVICE",
            ),
        ];
        for (dl, want) in broken {
            let mut t = DLManagedTensorVersioned {
                version: DLPackVersion::new(1, 3),
                manager_ctx: core::ptr::null_mut(),
                deleter: Some(count_invalid),
                flags: 0,
                dl_tensor: dl,
            };
            let before = RELEASED_INVALID.load(Ordering::SeqCst);
            match accept_versioned(&mut t) {
                Err(e) => {
                    let status = crate::capi::error::status_of(&e);
                    // SAFETY: a static NUL-terminated name.
                    let name = unsafe {
                        core::ffi::CStr::from_ptr(crate::capi::error::dlpack_status_string(status))
                    };
                    assert_eq!(name.to_str().unwrap(), want);
                }
                Ok(_) => panic!("{want}: accepted"),
            }
            assert_eq!(RELEASED_INVALID.load(Ordering::SeqCst) - before, 1);
        }
    }
}
