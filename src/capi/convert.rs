//! Ownership conversions and producer helpers: wrap a legacy tensor as a versioned one and back,
//! and create an owned versioned tensor for a caller's buffer. One allocation each: the struct
//! handed out, the bookkeeping and the `shape`/`strides` arrays live in one block, freed by the
//! struct's deleter.

use crate::abi::{
    DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned,
    DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, DLPACK_FLAG_BITMASK_READ_ONLY, DLPackVersion,
    DLTensor,
};
use crate::capi::boundary::{self, nonnull, out_ptr};
use crate::capi::error::dlpack_helpers_status;
use crate::capi::layout::versioned_parts;
use crate::capi::tensor::{dlpack_legacy_tensor_delete, dlpack_tensor_delete};
use crate::capi::validate::checked_view;
use crate::rules::layout::{self, MAX_NDIM};
use crate::rules::validate::{self, Declared, Requirements};
use crate::rules::{Error, Fault, dtype, flags};
use core::ffi::c_void;
use core::ptr::addr_of;
use std::alloc::Layout;

/// Option bit of `dlpack_versioned_to_legacy`: convert a read-only tensor anyway, dropping the
/// `READ_ONLY` flag (the legacy struct cannot carry it; the caller takes responsibility for not
/// writing). Default: refused with `DLPACK_HELPERS_STATUS_READ_ONLY`.
pub const DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY: u32 = 1;

/// What the block's deleter releases after freeing the block.
#[derive(Clone, Copy)]
enum Source {
    Callback {
        release: Option<unsafe extern "C" fn(ctx: *mut c_void)>,
        ctx: *mut c_void,
    },
    Legacy(*mut DLManagedTensor),
    Versioned(*mut DLManagedTensorVersioned),
}

/// One allocation: the struct handed out (offset 0, so its pointer is the block's), what to
/// release, then `ndim` shape and `ndim` strides `int64_t`s.
#[repr(C)]
struct Block<T> {
    head: T,
    source: Source,
    ndim: usize,
}

fn block_layout<T>(ndim: usize) -> Layout {
    // ndim <= MAX_NDIM, so neither step can fail.
    let arrays = Layout::array::<i64>(2 * ndim).expect("small array");
    Layout::new::<Block<T>>()
        .extend(arrays)
        .expect("small block")
        .0
        .pad_to_align()
}

/// Allocate a block holding `head`, `source`, `shape` and `strides`, and point
/// `head.dl_tensor.{shape,strides}` (via `fix`) at the copies (NULL for ndim 0).
fn alloc_block<T>(
    head: T,
    source: Source,
    shape: &[i64],
    strides: Option<&[i64]>,
    fix: impl FnOnce(&mut T, *mut i64, *mut i64),
) -> Result<*mut T, Error> {
    let n = shape.len();
    debug_assert!(n <= MAX_NDIM as usize && strides.is_none_or(|s| s.len() == n));
    let lay = block_layout::<T>(n);
    // SAFETY: the layout has a non-zero size (Block is not zero-sized).
    let b = unsafe { std::alloc::alloc(lay) }.cast::<Block<T>>();
    if b.is_null() {
        return Err(Error::fault(
            Fault::OutOfMemory,
            format!(
                "allocating {} bytes for a managed tensor failed",
                lay.size()
            ),
        ));
    }
    let arrays_offset = Layout::new::<Block<T>>()
        .extend(Layout::array::<i64>(2 * n).expect("small"))
        .expect("small")
        .1;
    // SAFETY: `b` is a fresh allocation of `lay`, which holds a Block<T> and 2n i64s at
    // `arrays_offset`; every write stays inside it.
    unsafe {
        let arr = b.cast::<u8>().add(arrays_offset).cast::<i64>();
        core::ptr::copy_nonoverlapping(shape.as_ptr(), arr, n);
        match strides {
            Some(s) => core::ptr::copy_nonoverlapping(s.as_ptr(), arr.add(n), n),
            // NULL strides: the compact row-major ones, written straight into the block (no
            // MAX_NDIM-sized buffer to zero on every call: that cost 8 KiB of stores per wrap).
            None => {
                let out = core::slice::from_raw_parts_mut(arr.add(n), n);
                if let Err(e) = layout::compact_strides(shape, true, out) {
                    std::alloc::dealloc(b.cast::<u8>(), lay);
                    return Err(e);
                }
            }
        }
        let (sp, tp) = if n == 0 {
            (core::ptr::null_mut(), core::ptr::null_mut())
        } else {
            (arr, arr.add(n))
        };
        b.write(Block {
            head,
            source,
            ndim: n,
        });
        fix(&mut (*b).head, sp, tp);
    }
    Ok(b.cast::<T>())
}

/// Free a block and release what it wraps, exactly once; nothing touches the block afterwards.
///
/// # Safety
/// `p` was returned by `alloc_block::<T>` and not freed yet.
unsafe fn free_and_release<T>(p: *mut T) {
    let b = p.cast::<Block<T>>();
    // SAFETY: caller contract: a live block.
    let (source, n) = unsafe { (addr_of!((*b).source).read(), addr_of!((*b).ndim).read()) };
    // SAFETY: allocated with this layout in `alloc_block`.
    unsafe { std::alloc::dealloc(b.cast::<u8>(), block_layout::<T>(n)) };
    match source {
        // SAFETY: the caller's callback receives its own context, once.
        Source::Callback {
            release: Some(f),
            ctx,
        } => unsafe { f(ctx) },
        Source::Callback { release: None, .. } => {}
        // SAFETY: the wrapped tensor is released exactly once, here.
        Source::Legacy(t) => unsafe { dlpack_legacy_tensor_delete(t) },
        // SAFETY: as above.
        Source::Versioned(t) => unsafe { dlpack_tensor_delete(t) },
    }
}

unsafe extern "C" fn versioned_deleter(p: *mut DLManagedTensorVersioned) {
    // SAFETY: only installed on blocks from `alloc_block`; DLPack calls a deleter once.
    boundary::value((), || unsafe { free_and_release(p) })
}

unsafe extern "C" fn legacy_deleter(p: *mut DLManagedTensor) {
    // SAFETY: as `versioned_deleter`.
    boundary::value((), || unsafe { free_and_release(p) })
}

/// The strides to store: the view's own, or compact row-major for NULL strides.
const LENIENT: Requirements = Requirements {
    flags: validate::LENIENT_NULL_STRIDES,
    max_ndim: 0,
    data_alignment: 0,
    first_element_alignment: 0,
    dtype: DLDataType {
        code: 0,
        bits: 0,
        lanes: 0,
    },
};

fn check_known(flags: u64, what: &str) -> Result<(), Error> {
    let unknown = flags & !flags::KNOWN;
    if unknown != 0 {
        return Err(Error::fault(
            Fault::InvalidFlags,
            format!("{what} has bits {unknown:#x} that DLPack 1.3 does not define"),
        ));
    }
    Ok(())
}

/// Create an owned DLPack 1.3 versioned managed tensor describing the caller's own buffer, for a
/// producer to hand out. Nothing is copied but the metadata.
///
/// - `data`: the buffer (address or device handle); may be NULL only for an empty tensor.
/// - `device`, `dtype`, `byte_offset` (bytes), `flags` (`DLPACK_FLAG_BITMASK_*` of DLPack 1.3):
///   stored as given.
/// - `ndim`, `shape`, `strides`: `shape` and `strides` hold `ndim` elements (strides in
///   elements); both are copied. NULL `strides` means compact row-major and compact strides are
///   stored (the result always carries strides when `ndim != 0`, DLPack 1.2).
/// - `release`, `release_ctx`: called as `release(release_ctx)` exactly once by the tensor's
///   deleter, after the struct is freed; `release` may be NULL (nothing to release).
///   `manager_ctx` of the result is `release_ctx`.
/// - `out_tensor`: receives the new tensor on OK. Its deleter frees the struct (one allocation
///   holding the struct, `shape` and `strides`) and calls `release`; release it with
///   `dlpack_tensor_delete` or hand it to a consumer.
///
/// The description is validated as `dlpack_tensor_validate` does with default options.
/// Returns `DLPACK_HELPERS_STATUS_OK`; any status of `dlpack_tensor_validate` (`NULL_DATA`,
/// `INVALID_DTYPE`, `INVALID_SHAPE`, ...); `INVALID_FLAGS` (unknown bits); `OUT_OF_MEMORY`;
/// `NULL_POINTER` (`out_tensor`, or `shape` with `ndim != 0`). On failure `release` is not
/// called and nothing is allocated. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_create(
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    shape: *const i64,
    strides: *const i64,
    dtype: DLDataType,
    byte_offset: u64,
    flags: u64,
    release: Option<unsafe extern "C" fn(ctx: *mut c_void)>,
    release_ctx: *mut c_void,
    out_tensor: *mut *mut DLManagedTensorVersioned,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        // A NULL `shape` argument is a NULL required pointer (documented: NULL_POINTER), not a
        // received tensor's NULL_SHAPE (found by the bad-input matrix, issue 8).
        if shape.is_null() && ndim > 0 {
            return Err(Error::NullPointer("shape"));
        }
        check_known(flags, "flags")?;
        let t = DLTensor {
            data,
            device,
            ndim,
            dtype,
            shape: shape.cast_mut(),
            strides: strides.cast_mut(),
            byte_offset,
        };
        let producer = Declared::Versioned {
            version: DLPackVersion::CURRENT,
            flags,
        };
        // SAFETY: caller contract: non-NULL arrays hold ndim elements.
        // (LENIENT_NULL_STRIDES is read only by the header rules: the view's checks are the
        // defaults.)
        let view = unsafe { checked_view(&t, producer, &LENIENT) }?;
        let head = DLManagedTensorVersioned {
            version: DLPackVersion::CURRENT,
            manager_ctx: release_ctx,
            deleter: Some(versioned_deleter),
            flags,
            dl_tensor: t,
        };
        let p = alloc_block(
            head,
            Source::Callback {
                release,
                ctx: release_ctx,
            },
            view.shape,
            view.strides,
            |h, s, r| {
                h.dl_tensor.shape = s;
                h.dl_tensor.strides = r;
            },
        )?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(p) };
        Ok(())
    })
}

/// Wrap a legacy managed tensor as a DLPack 1.3 versioned one, without copying data.
///
/// - `legacy`: validated first (as `dlpack_legacy_tensor_validate` with default options). On OK
///   the wrapper owns it: the wrapper's deleter calls `legacy`'s deleter exactly once (after
///   freeing the wrapper); the caller must not release `legacy` itself any more. On failure the
///   caller still owns it and nothing was called.
/// - `flags`: the wrapper's `flags` (DLPack 1.3 bits only): the legacy struct cannot say
///   read-only, copied or padded, so the caller states what it knows (for example
///   `DLPACK_FLAG_BITMASK_READ_ONLY` for an array from a producer that exports read-only data).
///   Legacy sub-byte data is packed; setting `IS_SUBBYTE_TYPE_PADDED` claims otherwise.
/// - `out_tensor`: receives the wrapper. Its `shape` and `strides` are copies in the wrapper's
///   own allocation (compact row-major strides when the legacy tensor had NULL strides), its
///   `manager_ctx` is `legacy`, its version 1.3.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; the statuses of `dlpack_legacy_tensor_validate`;
/// `INVALID_FLAGS`; `OUT_OF_MEMORY`; `NULL_POINTER`. One allocation. Thread-safety: as the
/// legacy tensor's deleter.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_to_versioned(
    legacy: *mut DLManagedTensor,
    flags: u64,
    out_tensor: *mut *mut DLManagedTensorVersioned,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        // SAFETY: caller contract.
        let m = unsafe { nonnull(legacy.cast_const(), "legacy") }?;
        check_known(flags, "flags")?;
        let o = Requirements::default();
        // SAFETY: caller contract.
        let view = unsafe { checked_view(&m.dl_tensor, Declared::Legacy, &o) }?;
        let head = DLManagedTensorVersioned {
            version: DLPackVersion::CURRENT,
            manager_ctx: legacy.cast(),
            deleter: Some(versioned_deleter),
            flags,
            dl_tensor: m.dl_tensor,
        };
        let p = alloc_block(
            head,
            Source::Legacy(legacy),
            view.shape,
            view.strides,
            |h, s, r| {
                h.dl_tensor.shape = s;
                h.dl_tensor.strides = r;
            },
        )?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(p) };
        Ok(())
    })
}

/// Wrap a versioned managed tensor as a legacy one (for consumers that only read the legacy
/// struct), without copying data.
///
/// - `tensor`: version checked (`UNSUPPORTED_VERSION` for a major other than 1, nothing else
///   read), then validated as `dlpack_tensor_validate` with
///   `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES`. On OK the wrapper owns it (its deleter calls
///   `tensor`'s deleter exactly once); on failure the caller still owns it.
/// - `options`: `DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY` or 0. The legacy struct has no flags:
///   a read-only tensor is refused (`READ_ONLY`) unless that bit is given; a padded sub-byte
///   tensor is always refused (`INVALID_FLAGS`: legacy sub-byte data reads as packed);
///   `IS_COPIED` is dropped.
/// - `out_dropped_flags`: may be NULL; receives the flag bits the legacy form does not carry.
/// - `out_tensor`: receives the wrapper (`shape`/`strides` copied into its own allocation,
///   `manager_ctx` = `tensor`).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `UNSUPPORTED_VERSION`; `READ_ONLY`; `INVALID_FLAGS`;
/// `INVALID_ARGUMENT` (unknown option bits); the statuses of `dlpack_tensor_validate`;
/// `OUT_OF_MEMORY`; `NULL_POINTER`. Outputs are written only on OK. One allocation.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_versioned_to_legacy(
    tensor: *mut DLManagedTensorVersioned,
    options: u32,
    out_dropped_flags: *mut u64,
    out_tensor: *mut *mut DLManagedTensor,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        if tensor.is_null() {
            return Err(Error::NullPointer("tensor"));
        }
        if options & !DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY != 0 {
            return Err(Error::invalid(format!(
                "options has unknown bits {options:#x}"
            )));
        }
        // SAFETY: non-NULL managed tensor (caller contract).
        let (t, producer) = unsafe { versioned_parts(tensor) }?;
        // SAFETY: caller contract.
        let view = unsafe { checked_view(t, producer, &LENIENT) }?;
        let Declared::Versioned { flags: f, .. } = producer else {
            unreachable!("versioned")
        };
        if f & DLPACK_FLAG_BITMASK_READ_ONLY != 0
            && options & DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY == 0
        {
            return Err(Error::fault(
                Fault::ReadOnly,
                "tensor->flags has READ_ONLY, which a legacy DLManagedTensor cannot carry (pass \
                 DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY to drop it)",
            ));
        }
        if f & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0
            && dtype::element(view.dtype, true)?.sub_byte
        {
            return Err(Error::fault(
                Fault::InvalidFlags,
                "tensor->flags has IS_SUBBYTE_TYPE_PADDED on a sub-byte dtype; a legacy tensor's \
                 sub-byte data reads as packed, so the conversion would misplace every element",
            ));
        }
        let head = DLManagedTensor {
            dl_tensor: *t,
            manager_ctx: tensor.cast(),
            deleter: Some(legacy_deleter),
        };
        let p = alloc_block(
            head,
            Source::Versioned(tensor),
            view.shape,
            view.strides,
            |h, s, r| {
                h.dl_tensor.shape = s;
                h.dl_tensor.strides = r;
            },
        )?;
        // SAFETY: non-NULL caller storage (out_dropped_flags checked for NULL).
        unsafe {
            if !out_dropped_flags.is_null() {
                out_dropped_flags.write(f);
            }
            out.write(p);
        }
        Ok(())
    })
}
