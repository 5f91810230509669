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
use crate::capi::error::{dlpack_helpers_error, dlpack_helpers_status};
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

/// Option bit of `dlpack_legacy_tensor_wrap` (also a request flag of `dlpack_object_import` and
/// a `flags` bit of `dlpack_capsule_import`): "I know the producer's memory is writable". A legacy
/// `DLManagedTensor` cannot say read-only (peer case 50), so without this flag every legacy
/// tensor converted to a versioned one is marked `DLPACK_FLAG_BITMASK_READ_ONLY`; with it the
/// flag is left clear. Versioned tensors are never affected: their own flags are kept.
pub const DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE: u32 = 0x4;

/// What the block's deleter releases after freeing the block.
#[derive(Clone, Copy)]
enum Source {
    Callback {
        release: Option<unsafe extern "C" fn(ctx: *mut c_void)>,
        ctx: *mut c_void,
    },
    Legacy(*mut DLManagedTensor),
    Versioned(*mut DLManagedTensorVersioned),
    /// The tensor's data buffer is in the block itself (`dlpack_tensor_alloc`): `bytes` bytes
    /// at `ALLOC_ALIGNMENT` after the arrays; nothing else to release.
    Owned {
        bytes: usize,
    },
}

/// One allocation: the struct handed out (offset 0, so its pointer is the block's), what to
/// release, then `ndim` shape and `ndim` strides `int64_t`s.
#[repr(C)]
struct Block<T> {
    head: T,
    source: Source,
    ndim: usize,
    /// Set only by `wrap_legacy` when it added `READ_ONLY` itself (the legacy producer stated
    /// nothing and the caller did not assert writability): the library's record of "read-only
    /// assumed, not stated", read by [`read_only_assumed`]. No DLPack flag bit carries it.
    assumed_read_only: bool,
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

/// The layout of a block for `source` and the offset of its data buffer (`Source::Owned`: the
/// block's layout extended by `bytes` at `ALLOC_ALIGNMENT`; any other source: the block alone,
/// offset 0). `None` only when `bytes` passes `isize::MAX`, which `alloc_plan` rules out.
fn source_layout<T>(ndim: usize, source: Source) -> Option<(Layout, usize)> {
    match source {
        Source::Owned { bytes } => {
            let data = Layout::from_size_align(bytes, layout::ALLOC_ALIGNMENT).ok()?;
            let (l, off) = block_layout::<T>(ndim).extend(data).ok()?;
            Some((l.pad_to_align(), off))
        }
        _ => Some((block_layout::<T>(ndim), 0)),
    }
}

/// What a block costs beyond its data buffer at most (the most `ndim` is `MAX_NDIM`): the
/// room `alloc_plan` keeps free below `isize::MAX`.
const BLOCK_OVERHEAD: usize =
    core::mem::size_of::<Block<DLManagedTensorVersioned>>() + 16 * MAX_NDIM as usize + 64;

/// Allocate a block holding `head`, `source`, `shape` and `strides`, and point
/// `head.dl_tensor.{shape,strides}` (via `fix`) at the copies (NULL for ndim 0).
fn alloc_block<T>(
    head: T,
    source: Source,
    assumed_read_only: bool,
    shape: &[i64],
    strides: Option<&[i64]>,
    fix: impl FnOnce(&mut T, *mut i64, *mut i64, *mut c_void),
) -> Result<*mut T, Error> {
    let n = shape.len();
    debug_assert!(n <= MAX_NDIM as usize && strides.is_none_or(|s| s.len() == n));
    let Some((lay, data_offset)) = source_layout::<T>(n, source) else {
        return Err(Error::fault(
            Fault::Overflow,
            "the tensor's buffer does not fit in one allocation",
        ));
    };
    // SAFETY: the layout has a non-zero size (Block is not zero-sized). An owned buffer is
    // zeroed (its documented initial content); metadata blocks are written whole below.
    let b = unsafe {
        if matches!(source, Source::Owned { .. }) {
            std::alloc::alloc_zeroed(lay)
        } else {
            std::alloc::alloc(lay)
        }
    }
    .cast::<Block<T>>();
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
            assumed_read_only,
        });
        let data = if matches!(source, Source::Owned { .. }) {
            b.cast::<u8>().add(data_offset).cast::<c_void>()
        } else {
            core::ptr::null_mut()
        };
        fix(&mut (*b).head, sp, tp, data);
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
    let lay = source_layout::<T>(n, source)
        .expect("the layout alloc_block allocated")
        .0;
    // SAFETY: allocated with this layout in `alloc_block`.
    unsafe { std::alloc::dealloc(b.cast::<u8>(), lay) };
    match source {
        Source::Callback {
            release: Some(f),
            ctx,
        } =>
        // SAFETY: the caller's callback receives its own context, once (the block that held it
        // was freed above and is never read again).
        unsafe { f(ctx) },
        Source::Callback { release: None, .. } | Source::Owned { .. } => {}
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

/// Whether `t`'s `READ_ONLY` was assumed by this library's legacy → versioned wrap
/// (`wrap_legacy`) rather than stated: `t` is a wrapper this copy of the library allocated (its
/// deleter is this library's block deleter, the only way the block is recognised: nothing is
/// read past the frozen prefix of a tensor that is not ours), its block records the assumption,
/// and `t->flags` still has `READ_ONLY` (a caller that cleared it has stated writability itself).
/// Any other tensor, including one wrapped by another copy of the library (a static and a shared
/// copy in one process), answers false: the stated reading, never a weaker one.
///
/// # Safety
/// `t` is NULL or a managed tensor whose frozen prefix (`version`, `manager_ctx`, `deleter`) and,
/// for major 1, `flags` are readable.
pub(crate) unsafe fn read_only_assumed(t: *const DLManagedTensorVersioned) -> bool {
    if t.is_null() {
        return false;
    }
    // SAFETY: caller contract: the frozen prefix is readable in every major.
    let deleter = unsafe { addr_of!((*t).deleter).read() };
    let ours = versioned_deleter as unsafe extern "C" fn(*mut DLManagedTensorVersioned);
    if deleter.map(|d| d as usize) != Some(ours as usize) {
        return false;
    }
    let b = t.cast::<Block<DLManagedTensorVersioned>>();
    // SAFETY: our deleter is installed only on blocks from `alloc_block::<DLManagedTensorVersioned>`
    // (major 1, so `flags` is at the mirrored offset); the block lives while `t` does.
    unsafe {
        addr_of!((*b).assumed_read_only).read()
            && addr_of!((*t).flags).read() & DLPACK_FLAG_BITMASK_READ_ONLY != 0
    }
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

/// A request bit of the `flags` argument of the producer helpers `dlpack_tensor_create` and
/// `dlpack_capsule_new_view` (never stored in a tensor): make the tensor even on a device type
/// DLPack 1.3 does not assign (0, 5, 6, 19 `kDLTPU`, 20 `kDLTPUHost`, 99, ...). Without it those
/// helpers refuse such a device with `DLPACK_HELPERS_STATUS_INVALID_DEVICE` (peer case 55: a
/// tensor made on type 0 because a device descriptor was missing), as they refuse an unknown
/// dtype code. 19 and 20 were assigned on DLPack's main branch after 1.3 (JAX emits them); the
/// tensor this library makes declares DLPack 1.3, so they need the opt-in too. DLPack 1.3
/// defines flag bits 0-2 only and every other bit of a tensor's `flags` is refused, so this bit
/// is never confused with a stored flag. A negative `device_id` is refused with or without it.
pub const DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE: u64 = 0x8000000000000000;

/// Split a producer helper's `flags` argument into the tensor's flags (checked: DLPack 1.3 bits
/// only) and the device opt-in, and apply the device rule (`rules::device::check`).
pub(crate) fn producer_flags(flags: u64, device: DLDevice, what: &str) -> Result<u64, Error> {
    let allow = flags & DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE != 0;
    let flags = flags & !DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE;
    check_known(flags, "flags")?;
    crate::rules::device::check(device, allow, what)?;
    Ok(flags)
}

#[inline]
pub(crate) fn check_known(flags: u64, what: &str) -> Result<(), Error> {
    let unknown = flags & !flags::KNOWN;
    if unknown != 0 {
        return Err(unknown_flags(unknown, what));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn unknown_flags(unknown: u64, what: &str) -> Error {
    Error::fault(
        Fault::InvalidFlags,
        format!("{what} has bits {unknown:#x} that DLPack 1.3 does not define"),
    )
}

/// The flag rule of every versioned → legacy conversion (`dlpack_versioned_to_legacy`, a legacy
/// `dlpack_capsule_new_view`): `READ_ONLY` is refused (`ReadOnly`: the legacy struct cannot
/// carry it; callers offer their documented opt-in), `IS_SUBBYTE_TYPE_PADDED` on a sub-byte
/// dtype is refused (`InvalidFlags`: legacy sub-byte data reads as packed); the other bits are
/// dropped (`IS_COPIED`, and `IS_SUBBYTE_TYPE_PADDED` on a dtype it does not affect).
/// `read_only_hint` ends the READ_ONLY message (how the caller may opt in), or is empty.
pub(crate) fn check_legacy_flags(
    f: u64,
    dt: DLDataType,
    what: &str,
    read_only_hint: &str,
) -> Result<(), Error> {
    if f & DLPACK_FLAG_BITMASK_READ_ONLY != 0 {
        return Err(Error::fault(
            Fault::ReadOnly,
            format!(
                "{what} has READ_ONLY, which a legacy DLManagedTensor cannot carry (a consumer \
                 would take the memory as writable; peer case 50){read_only_hint}"
            ),
        ));
    }
    if f & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0 && dtype::element(dt, true)?.sub_byte {
        return Err(Error::fault(
            Fault::InvalidFlags,
            format!(
                "{what} has IS_SUBBYTE_TYPE_PADDED on a sub-byte dtype; a legacy tensor's \
                 sub-byte data reads as packed, so the conversion would misplace every element"
            ),
        ));
    }
    Ok(())
}

/// The one legacy → versioned conversion (`dlpack_legacy_to_versioned`,
/// `dlpack_legacy_tensor_wrap`, `dlpack_capsule_import`/`_consume`, `dlpack_object_import`):
/// validate as `dlpack_legacy_tensor_validate` with default options, copy shape and strides
/// into one block (compact row-major strides for NULL ones, exact or `Overflow`), version 1.3,
/// `flags | READ_ONLY` unless `writable` (peer case 50: the legacy struct cannot say whether
/// the memory may be written, so writability is never invented). On failure nothing was
/// allocated or released: the caller still owns `legacy`.
pub(crate) fn wrap_legacy(
    legacy: *mut DLManagedTensor,
    flags: u64,
    writable: bool,
) -> Result<*mut DLManagedTensorVersioned, Error> {
    // SAFETY: caller contract.
    let m = unsafe { nonnull(legacy.cast_const(), "legacy") }?;
    check_known(flags, "flags")?;
    // READ_ONLY added here (not stated by the caller, not asserted away) is recorded as assumed.
    let assumed = !writable && flags & DLPACK_FLAG_BITMASK_READ_ONLY == 0;
    let flags = if writable {
        flags
    } else {
        flags | DLPACK_FLAG_BITMASK_READ_ONLY
    };
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
    alloc_block(
        head,
        Source::Legacy(legacy),
        assumed,
        view.shape,
        view.strides,
        |h, s, r, _| {
            h.dl_tensor.shape = s;
            h.dl_tensor.strides = r;
        },
    )
}

/// Create an owned DLPack 1.3 versioned managed tensor describing the caller's own buffer, for a
/// producer to hand out. Nothing is copied but the metadata.
///
/// - `data`: the buffer (address or device handle); may be NULL only for an empty tensor.
/// - `device`, `dtype`, `byte_offset` (bytes), `flags` (`DLPACK_FLAG_BITMASK_*` of DLPack 1.3):
///   stored as given, except the request bit `DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE`
///   (never stored). `device.device_id` must be non-negative and `device.device_type` one that
///   DLPack 1.3 assigns (1-4, 7-18) unless `flags` has that bit (peer cases 54, 55).
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
/// `INVALID_DTYPE`, `INVALID_SHAPE`, ...); `INVALID_FLAGS` (unknown bits); `INVALID_DEVICE`;
/// `OUT_OF_MEMORY`;
/// `NULL_POINTER` (`out_tensor`, or `shape` with `ndim != 0`). On failure `release` is not
/// called and nothing is allocated. Thread-safe.
///
/// @param[in] data May be NULL.
/// @param[in] strides May be NULL.
/// @param[in] release May be NULL.
/// @param[in] release_ctx May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `out_tensor` is NULL, or `shape` is NULL while
///   `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits outside DLPack 1.3's
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the tensor cannot be allocated
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative, or the device
///   type is not one DLPack 1.3 assigns and `flags` lacks
///   `DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE`
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
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
        // received tensor's NULL_SHAPE (found by the bad-input matrix).
        if shape.is_null() && ndim > 0 {
            return Err(Error::NullPointer("shape"));
        }
        let flags = producer_flags(flags, device, "device")?;
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
            false,
            view.shape,
            view.strides,
            |h, s, r, _| {
                h.dl_tensor.shape = s;
                h.dl_tensor.strides = r;
            },
        )?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(p) };
        Ok(())
    })
}

/// `dlpack_tensor_create` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_tensor_create`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[in] data May be NULL.
/// @param[in] strides May be NULL.
/// @param[in] release May be NULL.
/// @param[in] release_ctx May be NULL.
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `out_tensor` is NULL, or `shape` is NULL while
///   `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits outside DLPack 1.3's
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the tensor cannot be allocated
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative, or the device
///   type is not one DLPack 1.3 assigns and `flags` lacks
///   `DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE`
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `err` is non-NULL and `err->struct_size`
///   is below `sizeof(dlpack_helpers_error)` (nothing done)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_create_with_error(
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
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_tensor_create` and of `err`.
    unsafe {
        boundary::with_error(err, || {
            dlpack_tensor_create(
                data,
                device,
                ndim,
                shape,
                strides,
                dtype,
                byte_offset,
                flags,
                release,
                release_ctx,
                out_tensor,
            )
        })
    }
}

/// Alignment in bytes of the data buffer `dlpack_tensor_alloc` allocates: `data` is a multiple
/// of 64 (a cache line; enough for every dtype and for 512-bit vector loads).
pub const DLPACK_HELPERS_ALLOC_ALIGNMENT: usize = 64;

const _: () = assert!(DLPACK_HELPERS_ALLOC_ALIGNMENT == layout::ALLOC_ALIGNMENT);

/// Allocate a new DLPack 1.3 versioned managed tensor on the CPU with its own zeroed data
/// buffer, for a producer that cannot keep its memory or a callback alive (a garbage-collected
/// language): the caller fills the elements through `data` and hands the tensor on; whoever
/// holds it last calls its deleter (for example `dlpack_tensor_delete`), which frees the buffer
/// and the metadata together. No callback, nothing to keep alive.
///
/// - `device`: must be `(kDLCPU, 0)`: the buffer is ordinary host memory.
/// - `ndim`, `shape`: `shape` holds `ndim` extents (copied); NULL only when `ndim` is 0.
/// - `strides`: NULL for compact row-major strides (stored explicitly, DLPack 1.2), or `ndim`
///   strides in elements (copied; gaps, zero and negative strides allowed: the buffer spans
///   every element they reach).
/// - `dtype`: a valid DLPack 1.3 dtype (as `dlpack_tensor_validate` checks it).
/// - `flags`: `DLPACK_FLAG_BITMASK_*` bits of DLPack 1.3, stored in the tensor (`READ_ONLY`
///   states what consumers may do; the caller may still fill the buffer before handing it on;
///   `IS_SUBBYTE_TYPE_PADDED` sizes sub-byte elements one byte each).
/// - `out_tensor`: receives the tensor on OK. Its `data` is non-NULL, a multiple of
///   `DLPACK_HELPERS_ALLOC_ALIGNMENT` (64), and points to the buffer: every byte an element
///   touches is zero; element `[0, …, 0]` is at `data + byte_offset`, where `byte_offset` is 0
///   unless a stride is negative (then the buffer starts below element 0). An empty tensor (an
///   extent 0) has a buffer of 0 bytes (still a non-NULL, aligned `data`). `manager_ctx` is
///   NULL; `version` 1.3; the deleter is this library's and frees everything in one `free`.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `NULL_POINTER` (`out_tensor`, or `shape` with
/// `ndim > 0`); `INVALID_FLAGS`; `UNSUPPORTED_DEVICE` (any device other than `(kDLCPU, 0)`);
/// `INVALID_NDIM`; `INVALID_DTYPE`; `INVALID_SHAPE`; `OVERFLOW` when the element count, a byte
/// offset or the buffer's size does not fit in `int64_t` or one allocation (never a wrapped
/// size); `OUT_OF_MEMORY`. Checks in that order (spec: `dlpack_tensor_alloc`); nothing is
/// allocated on failure.
/// Thread-safe: no shared state. One allocation.
///
/// @param[in] strides May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success: the caller owns the new tensor
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `out_tensor` is NULL, or `shape` is NULL and
///   `ndim > 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits DLPack 1.3 does not define
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE when `device` is not `(kDLCPU, 0)`
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, a byte offset or the buffer's
///   size does not fit in `int64_t` or in one allocation
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the allocation fails
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_alloc(
    device: DLDevice,
    ndim: i32,
    shape: *const i64,
    strides: *const i64,
    dtype: DLDataType,
    flags: u64,
    out_tensor: *mut *mut DLManagedTensorVersioned,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        if shape.is_null() && ndim > 0 {
            return Err(Error::NullPointer("shape"));
        }
        check_known(flags, "flags")?;
        if device.device_type != crate::abi::DLDeviceType::kDLCPU || device.device_id != 0 {
            return Err(Error::UnsupportedDevice(format!(
                "device is ({}, {}); dlpack_tensor_alloc allocates host memory only, for device \
                 (kDLCPU, 0) = (1, 0)",
                device.device_type.0, device.device_id
            )));
        }
        let n = layout::check_ndim_named(ndim, 0, "ndim")?;
        // SAFETY: caller contract: non-NULL `shape`/`strides` hold `ndim` elements; n == 0
        // forms empty slices without reading.
        let (shape, strides) = unsafe {
            (
                if n == 0 {
                    &[][..]
                } else {
                    core::slice::from_raw_parts(shape, n)
                },
                if strides.is_null() || n == 0 {
                    None
                } else {
                    Some(core::slice::from_raw_parts(strides, n))
                },
            )
        };
        let view = layout::TensorView {
            data: 0,
            device,
            dtype,
            shape,
            strides,
            byte_offset: 0,
        };
        let padded = flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0;
        let plan = layout::alloc_plan(&view, padded, BLOCK_OVERHEAD)?;
        let head = DLManagedTensorVersioned {
            version: DLPackVersion::CURRENT,
            manager_ctx: core::ptr::null_mut(),
            deleter: Some(versioned_deleter),
            flags,
            dl_tensor: DLTensor {
                data: core::ptr::null_mut(),
                device,
                ndim,
                dtype,
                shape: core::ptr::null_mut(),
                strides: core::ptr::null_mut(),
                byte_offset: plan.byte_offset,
            },
        };
        let p = alloc_block(
            head,
            Source::Owned { bytes: plan.bytes },
            false,
            shape,
            strides,
            |h, s, r, d| {
                h.dl_tensor.shape = s;
                h.dl_tensor.strides = r;
                h.dl_tensor.data = d;
            },
        )?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(p) };
        Ok(())
    })
}

/// `dlpack_tensor_alloc` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_tensor_alloc`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[in] strides May be NULL.
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success: the caller owns the new tensor
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `out_tensor` is NULL, or `shape` is NULL and
///   `ndim > 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits DLPack 1.3 does not define
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE when `device` is not `(kDLCPU, 0)`
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, a byte offset or the buffer's
///   size does not fit in `int64_t` or in one allocation
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the allocation fails
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `err` is non-NULL and `err->struct_size`
///   is below `sizeof(dlpack_helpers_error)` (nothing done)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_alloc_with_error(
    device: DLDevice,
    ndim: i32,
    shape: *const i64,
    strides: *const i64,
    dtype: DLDataType,
    flags: u64,
    out_tensor: *mut *mut DLManagedTensorVersioned,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_tensor_alloc` and of `err`.
    unsafe {
        boundary::with_error(err, || {
            dlpack_tensor_alloc(device, ndim, shape, strides, dtype, flags, out_tensor)
        })
    }
}

/// Wrap a legacy managed tensor as a DLPack 1.3 versioned one, without copying data. The
/// result is always read-only: it is `dlpack_legacy_tensor_wrap(legacy, flags, 0, out_tensor)`.
///
/// - `legacy`: validated first (as `dlpack_legacy_tensor_validate` with default options). On OK
///   the wrapper owns it: the wrapper's deleter calls `legacy`'s deleter exactly once (after
///   freeing the wrapper); the caller must not release `legacy` itself any more. On failure the
///   caller still owns it and nothing was called.
/// - `flags`: further flags of the wrapper (DLPack 1.3 bits only), stated by the caller, who
///   knows its producer: `IS_COPIED` (the producer made a copy), `IS_SUBBYTE_TYPE_PADDED`
///   (legacy sub-byte data is packed; setting it claims otherwise). The result always has
///   `DLPACK_FLAG_BITMASK_READ_ONLY` as well: a legacy struct cannot say whether its memory may
///   be written, and this signature has no way to assert that it may (peer case 50: writability
///   is never invented). To assert it, call `dlpack_legacy_tensor_wrap` with
///   `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE`. A `READ_ONLY` added this way (not in `flags`) is
///   recorded as assumed: `dlpack_tensor_read_only_origin` answers
///   `DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY`, and `dlpack_versioned_to_legacy` converts the
///   wrapper back to legacy without refusing it.
/// - `out_tensor`: receives the wrapper. Its `shape` and `strides` are copies in the wrapper's
///   own allocation (compact row-major strides when the legacy tensor had NULL strides), its
///   `manager_ctx` is `legacy`, its version 1.3.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; the statuses of `dlpack_legacy_tensor_validate`
/// (`OVERFLOW` when a filled-in stride does not fit in `int64_t`: peer case 49);
/// `INVALID_FLAGS`; `OUT_OF_MEMORY`; `NULL_POINTER`. One allocation. Thread-safety: as the
/// legacy tensor's deleter.
///
/// @retval DLPACK_HELPERS_STATUS_OK when the wrapper now owns `legacy`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `legacy` or `out_tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits outside DLPack 1.3's
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the wrapper cannot be allocated
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_to_versioned(
    legacy: *mut DLManagedTensor,
    flags: u64,
    out_tensor: *mut *mut DLManagedTensorVersioned,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        let p = wrap_legacy(legacy, flags, false)?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(p) };
        Ok(())
    })
}

/// `dlpack_legacy_to_versioned` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_legacy_to_versioned`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the wrapper now owns `legacy`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `legacy` or `out_tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits outside DLPack 1.3's
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the wrapper cannot be allocated
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `err` is non-NULL and `err->struct_size`
///   is below `sizeof(dlpack_helpers_error)` (nothing done)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_to_versioned_with_error(
    legacy: *mut DLManagedTensor,
    flags: u64,
    out_tensor: *mut *mut DLManagedTensorVersioned,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_legacy_to_versioned` and of `err`.
    unsafe {
        boundary::with_error(err, || {
            dlpack_legacy_to_versioned(legacy, flags, out_tensor)
        })
    }
}

/// Wrap a legacy managed tensor as a DLPack 1.3 versioned one, without copying data, saying
/// whether its memory may be written.
///
/// - `legacy`, `out_tensor`, ownership: as `dlpack_legacy_to_versioned`.
/// - `flags`: further flags of the wrapper (DLPack 1.3 bits), as `dlpack_legacy_to_versioned`.
/// - `options`: 0, or `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE` ("I know the producer's memory
///   is writable"). Without it the wrapper has `DLPACK_FLAG_BITMASK_READ_ONLY` (whatever
///   `flags` says); with it, the wrapper's flags are exactly `flags`. Other bits:
///   `INVALID_ARGUMENT`.
///
/// Returns as `dlpack_legacy_to_versioned`, plus `INVALID_ARGUMENT`. One allocation.
/// Thread-safety: as the legacy tensor's deleter. The same conversion serves
/// `dlpack_capsule_import` and `dlpack_object_import` for legacy capsules (peer cases 49, 50).
///
/// @retval DLPACK_HELPERS_STATUS_OK when the wrapper now owns `legacy`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `legacy` or `out_tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `options` has bits other than
///   `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE`
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits outside DLPack 1.3's
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the wrapper cannot be allocated
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_tensor_wrap(
    legacy: *mut DLManagedTensor,
    flags: u64,
    options: u32,
    out_tensor: *mut *mut DLManagedTensorVersioned,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        if options & !DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE != 0 {
            return Err(Error::invalid(format!(
                "options has bits {options:#x}; only DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE applies"
            )));
        }
        let p = wrap_legacy(
            legacy,
            flags,
            options & DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE != 0,
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
///   a tensor whose producer stated `READ_ONLY` is refused (`READ_ONLY`) unless that bit is
///   given; a tensor whose `READ_ONLY` this library assumed when it wrapped a legacy tensor
///   (`dlpack_tensor_read_only_origin` answers `DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY`) is
///   converted back without the bit: the legacy consumer gets exactly what the legacy producer
///   stated, no more (issue 25). A padded sub-byte tensor is always refused (`INVALID_FLAGS`:
///   legacy sub-byte data reads as packed); `IS_COPIED` is dropped.
/// - `out_dropped_flags`: may be NULL; receives the flag bits the legacy form does not carry.
/// - `out_tensor`: receives the wrapper (`shape`/`strides` copied into its own allocation,
///   `manager_ctx` = `tensor`).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `UNSUPPORTED_VERSION`; `READ_ONLY`; `INVALID_FLAGS`;
/// `INVALID_ARGUMENT` (unknown option bits); the statuses of `dlpack_tensor_validate`;
/// `OUT_OF_MEMORY`; `NULL_POINTER`. Outputs are written only on OK. One allocation.
///
/// @param[out] out_dropped_flags May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the wrapper now owns `tensor`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `options` has unknown bits
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the wrapper cannot be allocated
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
///   (nothing past `version` is read)
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits the declared version does not
///   define, or the tensor is padded sub-byte (the legacy form reads it as packed)
/// @retval DLPACK_HELPERS_STATUS_READ_ONLY when the tensor's producer stated read-only and
///   `DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY` is not given
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
        // A READ_ONLY this library assumed when it wrapped a legacy tensor goes back to legacy
        // as it came: the legacy consumer learns exactly what the legacy producer stated.
        // SAFETY: `tensor` is a managed tensor of major 1 (versioned_parts checked it).
        let assumed = unsafe { read_only_assumed(tensor) };
        let checked = if options & DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY != 0 || assumed {
            f & !DLPACK_FLAG_BITMASK_READ_ONLY
        } else {
            f
        };
        check_legacy_flags(
            checked,
            view.dtype,
            "tensor->flags",
            "; pass DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY to drop READ_ONLY",
        )?;
        let head = DLManagedTensor {
            dl_tensor: *t,
            manager_ctx: tensor.cast(),
            deleter: Some(legacy_deleter),
        };
        let p = alloc_block(
            head,
            Source::Versioned(tensor),
            false,
            view.shape,
            view.strides,
            |h, s, r, _| {
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

/// `dlpack_versioned_to_legacy` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_versioned_to_legacy`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[out] out_dropped_flags May be NULL.
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the wrapper now owns `tensor`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `options` has unknown bits;
///   or when `err` is non-NULL and `err->struct_size` is below
///   `sizeof(dlpack_helpers_error)` (nothing done)
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when the wrapper cannot be allocated
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
///   (nothing past `version` is read)
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits the declared version does not
///   define, or the tensor is padded sub-byte (the legacy form reads it as packed)
/// @retval DLPACK_HELPERS_STATUS_READ_ONLY when the tensor's producer stated read-only and
///   `DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY` is not given
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_versioned_to_legacy_with_error(
    tensor: *mut DLManagedTensorVersioned,
    options: u32,
    out_dropped_flags: *mut u64,
    out_tensor: *mut *mut DLManagedTensor,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_versioned_to_legacy` and of `err`.
    unsafe {
        boundary::with_error(err, || {
            dlpack_versioned_to_legacy(tensor, options, out_dropped_flags, out_tensor)
        })
    }
}
