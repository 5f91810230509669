//! Capsules: the standard producer capsule destructor, making correctly named capsules, consuming
//! them (ownership moves by renaming, before any step that can fail), and exporting a view of a
//! tensor kept alive by a Python object.

use super::runtime::{self, Api, PyObject};
use crate::abi::{DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor};
use crate::capi::boundary::{self, out_ptr};
use crate::capi::error::dlpack_helpers_status;
use crate::capi::tensor::{dlpack_legacy_tensor_delete, dlpack_tensor_delete};
use crate::capi::version::{
    DLPACK_HELPERS_EXPORT_LEGACY, DLPACK_HELPERS_EXPORT_VERSIONED, dlpack_helpers_export_kind,
};
use crate::rules::Error;
use crate::rules::python::{self as rules, CapsuleState};
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
        let Some(api) = runtime::get() else { return };
        if capsule.is_null() {
            return;
        }
        let (mut t, mut v, mut tb) = (
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        );
        // SAFETY: GIL held (capsule destruction); preserve a pending exception.
        unsafe { (api.PyErr_Fetch)(&mut t, &mut v, &mut tb) };
        let name = name_of(api, capsule).unwrap_or(b"");
        match rules::classify(name) {
            CapsuleState::Legacy => {
                // SAFETY: the name matches; the pointer is the producer's legacy tensor.
                let p =
                    unsafe { (api.PyCapsule_GetPointer)(capsule, rules::CAPSULE_LEGACY.as_ptr()) };
                if p.is_null() {
                    // SAFETY: GIL held.
                    unsafe { (api.PyErr_WriteUnraisable)(core::ptr::null_mut()) };
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
                    String::from_utf8_lossy(name)
                );
                // SAFETY: GIL held.
                // The dying capsule is not passed: a reference taken to it here would resurrect it.
                unsafe { api.write_unraisable(core::ptr::null_mut(), &msg) };
            }
        }
        // SAFETY: GIL held; restore what was pending (NULLs restore nothing).
        unsafe { (api.PyErr_Restore)(t, v, tb) };
    })
}

/// The destructor as Python needs it (a `void (*)(PyObject *)`).
pub(crate) const DESTRUCTOR: runtime::Destructor = Some(dlpack_capsule_destructor);

fn new_capsule(
    api: &'static Api,
    ptr: *mut c_void,
    name: &'static CStr,
) -> Result<*mut PyObject, Error> {
    // SAFETY: GIL held (caller contract); `name` is static as the specification requires.
    let c = unsafe { (api.PyCapsule_New)(ptr, name.as_ptr(), DESTRUCTOR) };
    if c.is_null() {
        // SAFETY: GIL held, PyCapsule_New set an exception.
        let (class, msg) = unsafe { api.take_error() };
        return Err(runtime::producer_error(class, msg));
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
    let api = runtime::require(function)?;
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

/// Take the tensor out of a DLPack capsule: check the name, rename it to its `used_` form (the
/// moment ownership moves, before anything that can fail: peer case 1), return the pointer.
pub(crate) fn take(api: &'static Api, capsule: *mut PyObject) -> Result<Taken, Error> {
    // SAFETY: GIL held, `capsule` a live object (caller contract).
    if !unsafe { api.is_capsule(capsule) } {
        return Err(Error::NotACapsule(
            "the object is not a PyCapsule (expected a DLPack capsule)".into(),
        ));
    }
    let name = name_of(api, capsule)?;
    let (fresh, used) = match rules::classify(name) {
        CapsuleState::Legacy => (rules::CAPSULE_LEGACY, rules::CAPSULE_LEGACY_USED),
        CapsuleState::Versioned => (rules::CAPSULE_VERSIONED, rules::CAPSULE_VERSIONED_USED),
        CapsuleState::LegacyUsed | CapsuleState::VersionedUsed => {
            return Err(Error::CapsuleConsumed(format!(
                "the capsule is named {:?}: it was already consumed (a DLPack capsule is consumed \
                 exactly once)",
                String::from_utf8_lossy(name)
            )));
        }
        CapsuleState::Other => {
            return Err(Error::CapsuleName(format!(
                "the capsule is named {:?}, not \"dltensor\" or \"dltensor_versioned\" (DLPack \
                 Python specification)",
                String::from_utf8_lossy(name)
            )));
        }
    };
    // SAFETY: GIL held, the name matches.
    let p = unsafe { (api.PyCapsule_GetPointer)(capsule, fresh.as_ptr()) };
    if p.is_null() {
        // SAFETY: GIL held.
        let (class, msg) = unsafe { api.take_error() };
        return Err(runtime::producer_error(class, msg));
    }
    // Ownership moves here, before any step that can fail.
    // SAFETY: GIL held; `used` is static.
    if unsafe { (api.PyCapsule_SetName)(capsule, used.as_ptr()) } != 0 {
        // SAFETY: GIL held. The capsule kept its name, so it still owns the tensor.
        let (class, msg) = unsafe { api.take_error() };
        return Err(runtime::producer_error(class, msg));
    }
    Ok(if fresh == rules::CAPSULE_LEGACY {
        Taken::Legacy(p.cast())
    } else {
        Taken::Versioned(p.cast())
    })
}

#[repr(C)]
struct LegacyWrap {
    versioned: DLManagedTensorVersioned,
    legacy: *mut DLManagedTensor,
}

unsafe extern "C" fn legacy_wrap_deleter(t: *mut DLManagedTensorVersioned) {
    boundary::value((), || {
        if t.is_null() {
            return;
        }
        // SAFETY: `t` is the first field of a LegacyWrap made by `wrap_legacy`, released once.
        let wrap = unsafe { Box::from_raw(t.cast::<LegacyWrap>()) };
        // SAFETY: the wrapper owns the legacy tensor.
        unsafe { dlpack_legacy_tensor_delete(wrap.legacy) };
    })
}

/// Present an owned legacy tensor as a versioned one: version 1.0 (whose rules match the legacy
/// struct: NULL strides mean compact row-major), flags 0 (the legacy struct cannot say
/// read-only or copied). Its deleter releases the legacy tensor, then the wrapper.
pub(crate) fn wrap_legacy(legacy: *mut DLManagedTensor) -> *mut DLManagedTensorVersioned {
    // SAFETY: the caller owns `legacy`, a live legacy tensor; only `dl_tensor` is copied.
    let dl_tensor = unsafe { (*legacy).dl_tensor };
    let wrap = Box::new(LegacyWrap {
        versioned: DLManagedTensorVersioned {
            version: DLPackVersion::new(1, 0),
            manager_ctx: legacy.cast(),
            deleter: Some(legacy_wrap_deleter),
            flags: 0,
            dl_tensor,
        },
        legacy,
    });
    Box::into_raw(wrap).cast()
}

/// Check the version of a tensor the caller now owns; on a major this library cannot read,
/// release it (the only allowed action) and fail.
pub(crate) fn accept_versioned(
    t: *mut DLManagedTensorVersioned,
) -> Result<*mut DLManagedTensorVersioned, Error> {
    if let Err(e) =
        // SAFETY: `t` is a managed tensor we own (a NULL one is NULL_POINTER, and its release a
        // no-op).
        unsafe { crate::capi::tensor::checked_version(t, "the capsule's tensor->version") }
    {
        // SAFETY: we own `t`; the deleter is at a frozen offset.
        unsafe { dlpack_tensor_delete(t) };
        return Err(e);
    }
    Ok(t)
}

/// Consume a DLPack capsule and return its tensor as a versioned managed tensor.
///
/// - `capsule`: a `PyCapsule` (`PyObject *`, borrowed) named `"dltensor_versioned"` or
///   `"dltensor"`. It is renamed to `"used_dltensor_versioned"` / `"used_dltensor"` the moment
///   ownership moves, before any step that can fail (peer case 1), so its destructor will not
///   call the deleter again (peer case 2).
/// - `out_tensor`: receives the tensor; the caller owns it and releases it exactly once with
///   `dlpack_tensor_delete` when done (peer case 7). A legacy tensor is wrapped: version 1.0,
///   flags 0 (the legacy struct cannot signal read-only), and releasing the wrapper calls the
///   legacy deleter.
///
/// Returns OK; `DLPACK_HELPERS_STATUS_NOT_A_CAPSULE`; `_CAPSULE_CONSUMED` (`used_` name);
/// `_CAPSULE_NAME` (any other name; capsule untouched); `_UNSUPPORTED_VERSION` (versioned
/// capsule of another major: the capsule was consumed and the tensor released through its
/// deleter, the only allowed action); `_NULL_POINTER`; `_PYTHON_UNAVAILABLE`. The caller holds
/// the GIL. No Python exception is left set.
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
        let api = runtime::require("dlpack_capsule_consume")?;
        let t = match take(api, capsule)? {
            Taken::Versioned(t) => accept_versioned(t)?,
            Taken::Legacy(l) => wrap_legacy(l),
        };
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
        let api = runtime::require("dlpack_legacy_capsule_consume")?;
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
        match take(api, capsule)? {
            Taken::Legacy(l) => {
                // SAFETY: non-NULL caller storage.
                unsafe { out.write(l) };
                Ok(())
            }
            Taken::Versioned(_) => unreachable!("versioned capsules are refused above"),
        }
    })
}

/// The context of a view exported by `dlpack_capsule_new_view`.
struct ViewCtx {
    shape: Vec<i64>,
    strides: Vec<i64>,
    owner: *mut PyObject,
}

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

fn release_owner(owner: *mut PyObject) {
    let Some(api) = runtime::get() else { return };
    // SAFETY: Python's own checks decide what may touch Python:
    // - a running interpreter: take the GIL (this deleter may run on any thread, with or
    //   without it) and drop the reference;
    // - an interpreter being finalized (`Py_IsInitialized` is already 0 while modules are torn
    //   down): only a thread that holds the GIL on it (it has a thread state, and it is the
    //   current one) may drop the reference. This is how views still alive at exit release their
    //   owner (and so the producer's tensor) exactly once during shutdown;
    // - a finalized interpreter (no thread state for this thread) or another thread: leak on
    //   purpose, as NumPy does (DLPack #103/#140).
    unsafe {
        if (api.Py_IsInitialized)() != 0 {
            let g = (api.PyGILState_Ensure)();
            (api.Py_DecRef)(owner);
            (api.PyGILState_Release)(g);
        } else if !(api.PyGILState_GetThisThreadState)().is_null() && (api.PyGILState_Check)() != 0
        {
            (api.Py_DecRef)(owner);
        }
    }
}

unsafe extern "C" fn view_versioned_deleter(t: *mut DLManagedTensorVersioned) {
    boundary::value((), || {
        if t.is_null() {
            return;
        }
        // SAFETY: made by `dlpack_capsule_new_view`, released once.
        let b = unsafe { Box::from_raw(t.cast::<ViewVersioned>()) };
        release_owner(b.ctx.owner);
    })
}

unsafe extern "C" fn view_legacy_deleter(t: *mut DLManagedTensor) {
    boundary::value((), || {
        if t.is_null() {
            return;
        }
        // SAFETY: made by `dlpack_capsule_new_view`, released once.
        let b = unsafe { Box::from_raw(t.cast::<ViewLegacy>()) };
        release_owner(b.ctx.owner);
    })
}

/// Export a view of `tensor`'s memory as a new DLPack capsule, kept alive by a Python `owner`.
///
/// For producers whose memory is owned by a Python object (a C extension's array type, or the
/// `dlpack_helpers` view): the new managed tensor copies `*tensor` and its shape and strides
/// (NULL strides with `ndim != 0` are filled in as compact row-major, so the export obeys
/// DLPack 1.2), holds a strong reference to `owner`, and its deleter drops that reference: it
/// takes the GIL itself (any thread); while the interpreter is being finalized it drops the
/// reference only on the thread holding the GIL (so views alive at exit still release their
/// owner, once); after finalization it does nothing (a leak on purpose: DLPack #103/#140).
///
/// - `tensor`: borrowed; `tensor->data` must stay valid while `owner` lives.
/// - `flags`: `DLPACK_FLAG_BITMASK_*` for the versioned export (ignored for legacy).
/// - `owner`: any Python object (`PyObject *`), borrowed; a new reference is taken.
/// - `kind`: `DLPACK_HELPERS_EXPORT_VERSIONED` (capsule `"dltensor_versioned"`, version 1.3) or
///   `DLPACK_HELPERS_EXPORT_LEGACY` (capsule `"dltensor"`), as chosen by
///   `dlpack_version_negotiate`.
/// - `out_capsule`: receives a new reference to a capsule with `dlpack_capsule_destructor`.
///
/// Returns OK; `_NULL_POINTER`; `_INVALID_ARGUMENT` (unknown `kind`, negative `ndim`);
/// `_PYTHON_UNAVAILABLE`; `_PRODUCER_ERROR` (Python could not allocate). On failure nothing
/// is kept. The caller holds the GIL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_capsule_new_view(
    tensor: *const DLTensor,
    flags: u64,
    owner: *mut c_void,
    kind: dlpack_helpers_export_kind,
    out_capsule: *mut *mut c_void,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_capsule, "out_capsule")?;
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
        let ndim = usize::try_from(t.ndim)
            .map_err(|_| Error::invalid(format!("tensor->ndim is {}", t.ndim)))?;
        let api = runtime::require("dlpack_capsule_new_view")?;
        let shape: Vec<i64> = if ndim == 0 {
            Vec::new()
        } else {
            // SAFETY: shape holds ndim elements (DLPack).
            unsafe {
                core::slice::from_raw_parts(boundary::nonnull(t.shape, "tensor->shape")?, ndim)
            }
            .to_vec()
        };
        let strides: Vec<i64> = if ndim == 0 {
            Vec::new()
        } else if t.strides.is_null() {
            let mut s = vec![1i64; ndim];
            for i in (0..ndim.saturating_sub(1)).rev() {
                s[i] = s[i + 1].saturating_mul(shape[i + 1]);
            }
            s
        } else {
            // SAFETY: strides holds ndim elements.
            unsafe { core::slice::from_raw_parts(t.strides, ndim) }.to_vec()
        };
        let ctx = ViewCtx {
            shape,
            strides,
            owner,
        };
        let dl = t;
        // SAFETY: GIL held; the reference is dropped by the deleter (or below on failure).
        unsafe { (api.Py_IncRef)(owner) };
        let (ptr, name): (*mut c_void, &'static CStr) = if kind == DLPACK_HELPERS_EXPORT_VERSIONED {
            let mut b = Box::new(ViewVersioned {
                mt: DLManagedTensorVersioned {
                    version: DLPackVersion::CURRENT,
                    manager_ctx: core::ptr::null_mut(),
                    deleter: Some(view_versioned_deleter),
                    flags,
                    dl_tensor: dl,
                },
                ctx,
            });
            fix_pointers(&mut b.mt.dl_tensor, &mut b.ctx);
            b.mt.manager_ctx = (&raw mut b.ctx).cast();
            (Box::into_raw(b).cast(), rules::CAPSULE_VERSIONED)
        } else {
            let mut b = Box::new(ViewLegacy {
                mt: DLManagedTensor {
                    dl_tensor: dl,
                    manager_ctx: core::ptr::null_mut(),
                    deleter: Some(view_legacy_deleter),
                },
                ctx,
            });
            fix_pointers(&mut b.mt.dl_tensor, &mut b.ctx);
            b.mt.manager_ctx = (&raw mut b.ctx).cast();
            (Box::into_raw(b).cast(), rules::CAPSULE_LEGACY)
        };
        match new_capsule(api, ptr, name) {
            Ok(c) => {
                // SAFETY: non-NULL caller storage.
                unsafe { out.write(c) };
                Ok(())
            }
            Err(e) => {
                // Nobody else saw the tensor: release it (drops the owner reference).
                if kind == DLPACK_HELPERS_EXPORT_VERSIONED {
                    // SAFETY: `ptr` is the versioned view block made above, released once here.
                    unsafe { view_versioned_deleter(ptr.cast()) };
                } else {
                    // SAFETY: `ptr` is the legacy view block made above, released once here.
                    unsafe { view_legacy_deleter(ptr.cast()) };
                }
                Err(e)
            }
        }
    })
}

fn fix_pointers(dl: &mut DLTensor, ctx: &mut ViewCtx) {
    if ctx.shape.is_empty() {
        dl.shape = core::ptr::null_mut();
        dl.strides = core::ptr::null_mut();
    } else {
        dl.shape = ctx.shape.as_mut_ptr();
        dl.strides = ctx.strides.as_mut_ptr();
    }
}
