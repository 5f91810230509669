//! Flags of versioned managed tensors: read, set, and what they mean for writing.

use crate::abi::{DLManagedTensor, DLManagedTensorVersioned, DLPackVersion};
use crate::capi::boundary::{self, out_ptr};
use crate::capi::error::dlpack_helpers_status;
use crate::rules::flags::{self, Writability};
use crate::rules::{Error, Fault};
use core::ptr::{addr_of, addr_of_mut};

/// Answer of the writability queries: one of `DLPACK_HELPERS_WRITABILITY_*`.
pub type dlpack_helpers_writability = i32;
/// The producer forbids writes (`DLPACK_FLAG_BITMASK_READ_ONLY` set).
pub const DLPACK_HELPERS_WRITABILITY_READ_ONLY: dlpack_helpers_writability = 0;
/// The producer allows writes (versioned, `READ_ONLY` clear).
pub const DLPACK_HELPERS_WRITABILITY_WRITABLE: dlpack_helpers_writability = 1;
/// Unknown: a legacy tensor cannot say. NumPy treats such imports as read-only, PyTorch as
/// writable; this library's validators count it as not writable unless the caller passes
/// `DLPACK_HELPERS_VALIDATE_LEGACY_WRITABLE` (peer case 46).
pub const DLPACK_HELPERS_WRITABILITY_UNKNOWN: dlpack_helpers_writability = 2;
const _: () = assert!(
    DLPACK_HELPERS_WRITABILITY_READ_ONLY == Writability::ReadOnly.as_raw()
        && DLPACK_HELPERS_WRITABILITY_WRITABLE == Writability::Writable.as_raw()
        && DLPACK_HELPERS_WRITABILITY_UNKNOWN == Writability::Unknown.as_raw()
);

/// `tensor->flags` after checking the major version; NULL `tensor` is NULL_POINTER.
///
/// # Safety
/// A non-NULL `tensor` points to a managed tensor whose `version` is readable.
unsafe fn checked_flags(
    tensor: *const DLManagedTensorVersioned,
) -> Result<(u64, DLPackVersion), Error> {
    // SAFETY: caller contract. Version and flags keep their offsets in every major (DLPack 1.0),
    // but flags' meaning belongs to major 1, so the major is checked first.
    let (v, _) = unsafe { crate::capi::tensor::checked_version(tensor, "tensor->version") }?;
    // SAFETY: non-NULL, major 1.
    Ok((unsafe { addr_of!((*tensor).flags).read() }, v))
}

/// Read `tensor->flags` after checking the major version.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `UNSUPPORTED_VERSION` (major not 1; nothing but
/// `version` read); `NULL_POINTER`. `out_flags` is written only on OK. Thread-safe (reads only).
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_flags` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_get_flags(
    tensor: *const DLManagedTensorVersioned,
    out_flags: *mut u64,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_flags, "out_flags")?;
        // SAFETY: a non-NULL tensor is a managed tensor (caller contract).
        let (f, _) = unsafe { checked_flags(tensor) }?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(f) };
        Ok(())
    })
}

/// Set and clear flag bits of a tensor you produce: `flags = (flags | set) & ~clear`.
///
/// - `set`, `clear`: only DLPack 1.3's bits (`DLPACK_FLAG_BITMASK_READ_ONLY`,
///   `DLPACK_FLAG_BITMASK_IS_COPIED`, `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`); other bits
///   give `INVALID_FLAGS`. `set` may also hold only bits the tensor's declared version defines
///   (`IS_SUBBYTE_TYPE_PADDED` needs minor >= 1; a tensor declaring 1.0 refuses it with
///   `INVALID_FLAGS`). Bits the tensor already has and neither mask names are kept.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `INVALID_FLAGS`; `UNSUPPORTED_VERSION`; `NULL_POINTER`.
/// Not thread-safe with other access to the same tensor (it writes).
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `set` or `clear` has bits outside DLPack 1.3's,
///   or `set` has bits the tensor's version does not define
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_set_flags(
    tensor: *mut DLManagedTensorVersioned,
    set: u64,
    clear: u64,
) -> dlpack_helpers_status {
    boundary::status(|| {
        if tensor.is_null() {
            return Err(Error::NullPointer("tensor"));
        }
        let unknown = (set | clear) & !flags::KNOWN;
        if unknown != 0 {
            return Err(Error::fault(
                Fault::InvalidFlags,
                format!("set/clear have bits {unknown:#x} that DLPack 1.3 does not define"),
            ));
        }
        // SAFETY: non-NULL managed tensor.
        let (f, v) = unsafe { checked_flags(tensor) }?;
        let undefined = flags::undefined_bits(set, v);
        if undefined != 0 {
            return Err(Error::fault(
                Fault::InvalidFlags,
                format!(
                    "set has bits {undefined:#x} that the tensor's DLPack {}.{} does not define",
                    v.major, v.minor
                ),
            ));
        }
        // SAFETY: major 1 checked; the caller owns the tensor for writing.
        unsafe { addr_of_mut!((*tensor).flags).write((f | set) & !clear) };
        Ok(())
    })
}

/// Whether a consumer may write through a versioned tensor (peer case 46): `READ_ONLY` set →
/// `DLPACK_HELPERS_WRITABILITY_READ_ONLY`, clear → `DLPACK_HELPERS_WRITABILITY_WRITABLE`
/// (`IS_COPIED` does not change it).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `UNSUPPORTED_VERSION`; `NULL_POINTER`. Thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_writability` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_writability(
    tensor: *const DLManagedTensorVersioned,
    out_writability: *mut dlpack_helpers_writability,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_writability, "out_writability")?;
        // SAFETY: a non-NULL tensor is a managed tensor.
        let (f, _) = unsafe { checked_flags(tensor) }?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(flags::writability(Some(f)).as_raw()) };
        Ok(())
    })
}

/// Writability of a legacy tensor: always `DLPACK_HELPERS_WRITABILITY_UNKNOWN` (the struct has
/// no flags), written to `out_writability`. Returns `DLPACK_HELPERS_STATUS_OK` or
/// `NULL_POINTER` (NULL `tensor` or `out_writability`). Thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_writability` is NULL
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_tensor_writability(
    tensor: *const DLManagedTensor,
    out_writability: *mut dlpack_helpers_writability,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_writability, "out_writability")?;
        if tensor.is_null() {
            return Err(Error::NullPointer("tensor"));
        }
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(flags::writability(None).as_raw()) };
        Ok(())
    })
}

// ---- issue 25: where a tensor's READ_ONLY comes from (stated or assumed) ----

/// Answer of `dlpack_tensor_read_only_origin`: one of `DLPACK_HELPERS_READ_ONLY_ORIGIN_*`.
pub type dlpack_helpers_read_only_origin = i32;
/// `READ_ONLY` is clear: whoever made the tensor states (or a caller asserted, with
/// `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE`) that it may be written.
pub const DLPACK_HELPERS_READ_ONLY_ORIGIN_NONE: dlpack_helpers_read_only_origin = 0;
/// `READ_ONLY` is set and stated: by the producer of a versioned tensor, or by the caller of a
/// conversion that passed it in `flags`. It is never dropped without the caller's opt-in.
pub const DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED: dlpack_helpers_read_only_origin = 1;
/// `READ_ONLY` is set because this library wrapped a legacy `DLManagedTensor`, which cannot say
/// whether its memory may be written (peer case 50): "writability unknown", read as read-only
/// toward versioned consumers. Re-exporting such a tensor as legacy states exactly what its
/// producer stated, so `dlpack_versioned_to_legacy` converts it without the bit and a legacy
/// `dlpack_capsule_new_view` may be given its flags without `READ_ONLY`.
pub const DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY: dlpack_helpers_read_only_origin = 2;

/// Where a versioned tensor's `DLPACK_FLAG_BITMASK_READ_ONLY` comes from: clear
/// (`DLPACK_HELPERS_READ_ONLY_ORIGIN_NONE`), stated by its producer
/// (`DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED`), or assumed by this library when it wrapped a
/// legacy tensor (`DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY`: `dlpack_legacy_to_versioned`,
/// `dlpack_legacy_tensor_wrap` without `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE`, and the legacy
/// capsules of `dlpack_capsule_import` and `dlpack_object_import`).
///
/// The answer needs no DLPack flag bit (this library defines none): the wrapper is recognised by
/// its deleter, which only this library's wrappers carry, and the assumption is recorded in the
/// wrapper's own allocation. A wrapper made by another copy of the library in the same process
/// (a static and a shared copy) answers STATED, the stricter reading. A caller that cleared the
/// bit with `dlpack_tensor_set_flags` gets NONE; one that set it again gets LEGACY back only if
/// the wrapper assumed it in the first place.
///
/// - `tensor`: any versioned managed tensor, borrowed; its major version is checked first.
/// - `out_origin`: receives one of `DLPACK_HELPERS_READ_ONLY_ORIGIN_*` on OK.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `UNSUPPORTED_VERSION` (major not 1; nothing but
/// `version` read); `NULL_POINTER`. Thread-safe (reads only).
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_origin` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_read_only_origin(
    tensor: *const DLManagedTensorVersioned,
    out_origin: *mut dlpack_helpers_read_only_origin,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_origin, "out_origin")?;
        // SAFETY: a non-NULL tensor is a managed tensor (caller contract).
        let (f, _) = unsafe { checked_flags(tensor) }?;
        let origin = if f & crate::abi::DLPACK_FLAG_BITMASK_READ_ONLY == 0 {
            DLPACK_HELPERS_READ_ONLY_ORIGIN_NONE
        // SAFETY: non-NULL, major 1 (checked_flags).
        } else if unsafe { crate::capi::convert::read_only_assumed(tensor) } {
            DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY
        } else {
            DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED
        };
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(origin) };
        Ok(())
    })
}
