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
