//! Layout queries: element count, bytes, contiguity, byte range, first element's address.

use crate::abi::{DLDevice, DLManagedTensorVersioned, DLTensor};
use crate::capi::boundary::{self, nonnull, out_ptr};
use crate::capi::error::dlpack_helpers_status;
use crate::rules::Error;
use crate::rules::layout::{self, Layout, MAX_NDIM, TensorView};
use crate::rules::validate::{self, Declared, Requirements};
use core::ffi::c_void;

/// The largest `ndim` any function of this library accepts (DLPack sets no bound; NumPy allows
/// 64). Larger values are refused with `DLPACK_HELPERS_STATUS_INVALID_NDIM` before any shape or
/// strides array is read.
pub const DLPACK_HELPERS_MAX_NDIM: i32 = 1024;
const _: () = assert!(DLPACK_HELPERS_MAX_NDIM == MAX_NDIM);

/// `dlpack_helpers_layout.properties` bit: C (row-major) contiguous. Extent-1 dimensions may
/// carry any stride (peer cases 30, 32); empty tensors are contiguous (peer case 33).
pub const DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS: u32 = 1;
/// F (column-major) contiguous, with the same rules.
pub const DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS: u32 = 2;
/// Compact in some dimension order: positive strides, each element at its own address, no gaps
/// (a transposed or axis-permuted contiguous array). Implied by C or F contiguity.
pub const DLPACK_HELPERS_LAYOUT_COMPACT: u32 = 4;
/// A dimension of extent > 1 has stride 0 (broadcast): fewer storage elements than elements.
pub const DLPACK_HELPERS_LAYOUT_BROADCAST: u32 = 8;
/// A dimension of extent > 1 has a negative stride: bytes below the first element are touched.
pub const DLPACK_HELPERS_LAYOUT_NEGATIVE_STRIDES: u32 = 16;
/// `strides` was NULL (and `ndim != 0`): compact row-major strides were assumed.
pub const DLPACK_HELPERS_LAYOUT_STRIDES_IMPLIED: u32 = 32;
/// The tensor has no elements (an extent is 0).
pub const DLPACK_HELPERS_LAYOUT_EMPTY: u32 = 64;
/// Packed sub-byte elements (for example `float4_e2m1fn` without `IS_SUBBYTE_TYPE_PADDED`):
/// element `k` occupies bits `[k*b, (k+1)*b)` counted from the first element's byte.
pub const DLPACK_HELPERS_LAYOUT_PACKED_SUB_BYTE: u32 = 128;
const _: () = assert!(
    DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS == layout::C_CONTIGUOUS
        && DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS == layout::F_CONTIGUOUS
        && DLPACK_HELPERS_LAYOUT_COMPACT == layout::COMPACT
        && DLPACK_HELPERS_LAYOUT_BROADCAST == layout::BROADCAST
        && DLPACK_HELPERS_LAYOUT_NEGATIVE_STRIDES == layout::NEGATIVE_STRIDES
        && DLPACK_HELPERS_LAYOUT_STRIDES_IMPLIED == layout::STRIDES_IMPLIED
        && DLPACK_HELPERS_LAYOUT_EMPTY == layout::EMPTY
        && DLPACK_HELPERS_LAYOUT_PACKED_SUB_BYTE == layout::PACKED_SUB_BYTE
);

/// The layout of a tensor, as computed by `dlpack_dltensor_layout` and the validators.
/// Byte positions are relative to `tensor.data` and include `byte_offset`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct dlpack_helpers_layout {
    /// Number of elements: the product of the extents (1 for ndim 0, 0 when empty).
    pub numel: i64,
    /// Bytes the elements take when stored compactly: `numel * itemsize`, or
    /// `ceil(numel * bits * lanes / 8)` for packed sub-byte dtypes (the header's per-element
    /// formula over-counts those). Padded sub-byte elements count `ceil(bits*lanes/8)` bytes each.
    pub nbytes: i64,
    /// Element slots between the lowest and highest element touched, inclusive: `numel` for a
    /// compact tensor, fewer for a broadcast, more for a strided view; 0 when empty.
    pub storage_elements: i64,
    /// Lowest byte touched, relative to `data` (equals `byte_offset` unless strides are
    /// negative). Equal to `end_byte` when empty.
    pub lowest_byte: i64,
    /// One past the highest byte touched, relative to `data`. `[data + lowest_byte, data +
    /// end_byte)` is the range to check against an allocation.
    pub end_byte: i64,
    /// Largest power of two dividing the first element's address (`data + byte_offset` for
    /// pointer-addressed devices; `byte_offset` alone for opaque handles), or 0 when that value
    /// is 0. Reported, never required unless asked (peer cases 40, 42).
    pub first_element_alignment: u64,
    /// `DLPACK_HELPERS_LAYOUT_*` bits.
    pub properties: u32,
    /// Bits one element occupies in memory: `bits * lanes`, rounded up to whole bytes for
    /// padded sub-byte dtypes.
    pub element_bits: u32,
}

pub(crate) fn to_c(l: &Layout, view: &TensorView<'_>) -> dlpack_helpers_layout {
    dlpack_helpers_layout {
        numel: l.numel,
        nbytes: l.nbytes,
        storage_elements: l.storage_elements,
        lowest_byte: l.lowest_byte,
        end_byte: l.end_byte,
        first_element_alignment: layout::first_element_alignment(
            view.data,
            view.byte_offset,
            view.device.device_type,
        ),
        properties: l.properties,
        element_bits: l.element_bits,
    }
}

/// Check the header fields of `t` (phase 1 of validation) and form the borrowed view.
///
/// # Safety
/// `t` must be a readable `DLTensor` whose non-NULL `shape`/`strides` hold `ndim` elements.
#[inline(always)]
pub(crate) unsafe fn view_of<'a>(
    t: &'a DLTensor,
    producer: Declared,
    o: &Requirements,
) -> Result<TensorView<'a>, Error> {
    let n = validate::check_header(producer, t.ndim, t.shape.is_null(), t.strides.is_null(), o)?;
    let (shape, strides): (&[i64], Option<&[i64]>) = if n == 0 {
        (&[], None)
    } else {
        // SAFETY: n is in 1..=MAX_NDIM and shape is non-NULL (checked); the caller guarantees
        // `ndim` readable elements behind non-NULL pointers.
        let shape = unsafe { core::slice::from_raw_parts(t.shape, n) };
        // SAFETY: as above.
        let strides =
            (!t.strides.is_null()).then(|| unsafe { core::slice::from_raw_parts(t.strides, n) });
        (shape, strides)
    };
    Ok(TensorView {
        data: t.data as usize,
        device: t.device,
        dtype: t.dtype,
        shape,
        strides,
        byte_offset: t.byte_offset,
    })
}

/// Read the version and flags of a versioned tensor, then borrow its `dl_tensor` only when the
/// major is 1.
///
/// # Safety
/// A non-NULL `tensor` must point to a managed tensor (NULL is `NullPointer("tensor")`).
#[inline]
pub(crate) unsafe fn versioned_parts<'a>(
    tensor: *const DLManagedTensorVersioned,
) -> Result<(&'a DLTensor, Declared), Error> {
    // SAFETY: caller contract.
    let (version, _) = unsafe { crate::capi::tensor::checked_version(tensor, "tensor->version") }?;
    // SAFETY: major 1: the layout is the one mirrored in `abi`.
    let t = unsafe { &*tensor };
    Ok((
        &t.dl_tensor,
        Declared::Versioned {
            version,
            flags: t.flags,
        },
    ))
}

/// Default requirements, with NULL strides read as compact row-major at any version.
pub(crate) const LENIENT: Requirements = Requirements {
    flags: validate::LENIENT_NULL_STRIDES,
    max_ndim: 0,
    data_alignment: 0,
    first_element_alignment: 0,
    dtype: crate::abi::DLDataType {
        code: 0,
        bits: 0,
        lanes: 0,
    },
};

/// Compute the layout of a `DLTensor`: element count, bytes, contiguity, broadcast and negative
/// strides, the byte range touched and the first element's alignment.
///
/// - `tensor`: borrowed; `shape` and `strides` must hold `ndim` elements when non-NULL. NULL
///   `strides` are read as compact row-major at any version (`DLPACK_HELPERS_LAYOUT_STRIDES_IMPLIED`
///   is set; whether NULL is *allowed* is `dlpack_dltensor_validate`'s job, peer case 29); those
///   implied strides must fit in `int64_t`, as `dlpack_compact_strides` computes them, even for
///   an empty tensor (`{0, 2^62, 4}` implies 2^64: `OVERFLOW`; peer case 49).
/// - `flags`: the `DLManagedTensorVersioned.flags` that go with it; only
///   `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED` matters here. Pass 0 for legacy tensors.
/// - `out_layout`: receives the layout on OK.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `NULL_POINTER` (NULL `tensor` or `out_layout`);
/// `INVALID_NDIM`, `NULL_SHAPE`, `INVALID_SHAPE` (negative extent), `INVALID_DTYPE`, `OVERFLOW`
/// (counts, byte positions or implied strides beyond `int64_t`). Does not check `data`.
/// No allocation; thread-safe (reads only).
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_layout` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` (the layout checks no address: validation checks
///   that `data` plus the byte range fits the address space), or `strides` is NULL and a
///   compact row-major stride it implies does not fit in `int64_t` (possible only for an empty
///   tensor: extents of 0 count as 1 in it; the message names the `shape` element)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dltensor_layout(
    tensor: *const DLTensor,
    flags: u64,
    out_layout: *mut dlpack_helpers_layout,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_layout, "out_layout")?;
        // SAFETY: caller contract for non-NULL pointers.
        let t = unsafe { nonnull(tensor, "tensor") }?;
        let producer = Declared::Versioned {
            version: crate::abi::DLPackVersion::CURRENT,
            flags: flags & crate::rules::flags::KNOWN,
        };
        // SAFETY: caller contract.
        let view = unsafe { view_of(t, producer, &LENIENT) }?;
        let l = layout::layout(
            &view,
            flags & crate::abi::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0,
        )?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(to_c(&l, &view)) };
        Ok(())
    })
}

/// `dlpack_dltensor_layout` for a versioned managed tensor: its version is checked first
/// (`DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION` for a major other than 1, nothing else read),
/// then flags with bits its version does not define give `INVALID_FLAGS`, and its
/// `IS_SUBBYTE_TYPE_PADDED` flag is used. Same statuses otherwise. For a legacy tensor call
/// `dlpack_dltensor_layout(&t->dl_tensor, 0, out)`.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_layout` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
///   (nothing past `version` is read)
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits the declared version does not
///   define
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` (the layout checks no address: validation checks
///   that `data` plus the byte range fits the address space), or `strides` is NULL and a
///   compact row-major stride it implies does not fit in `int64_t` (possible only for an empty
///   tensor: extents of 0 count as 1 in it; the message names the `shape` element)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_layout(
    tensor: *const DLManagedTensorVersioned,
    out_layout: *mut dlpack_helpers_layout,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_layout, "out_layout")?;
        // SAFETY: caller contract (NULL `tensor` is NULL_POINTER).
        let (t, producer) = unsafe { versioned_parts(tensor) }?;
        // SAFETY: caller contract.
        let view = unsafe { view_of(t, producer, &LENIENT) }?;
        let padded = matches!(producer, Declared::Versioned { flags, .. } if flags & crate::abi::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0);
        let l = layout::layout(&view, padded)?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(to_c(&l, &view)) };
        Ok(())
    })
}

/// The compact strides (in elements) for a shape: what NULL strides mean (row-major, DLPack
/// ≤ 1.1 and legacy), or column-major.
///
/// - `ndim`: 0..=`DLPACK_HELPERS_MAX_NDIM`; `shape` and `out_strides` hold `ndim` elements (may
///   be NULL when `ndim` is 0).
/// - `column_major`: false for row-major (C), true for column-major (F).
/// - Extents of 0 count as 1, so every stride stays meaningful.
///
/// - Only the strides must fit in `int64_t`, not the element count: the slowest-varying extent
///   (`shape[0]` row-major, `shape[ndim-1]` column-major) enters no stride and may be any
///   non-negative value (`{INT64_MAX, 2, 3}` row-major gives `{6, 3, 1}`).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `NULL_POINTER`; `INVALID_NDIM`; `INVALID_SHAPE`
/// (negative extent); `OVERFLOW` (a stride beyond `int64_t`; the message names the `shape`
/// element whose stride overflows). `out_strides` is written only on OK. No allocation;
/// thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `shape` or `out_strides` while `ndim != 0` is
///   NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when a stride does not fit in `int64_t` (the message
///   names the `shape` element)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_compact_strides(
    ndim: i32,
    shape: *const i64,
    column_major: bool,
    out_strides: *mut i64,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let n = layout::check_ndim_named(ndim, 0, "ndim")?;
        if n == 0 {
            return Ok(());
        }
        let out = out_ptr(out_strides, "out_strides")?;
        if shape.is_null() {
            return Err(Error::NullPointer("shape"));
        }
        // SAFETY: n in 1..=MAX_NDIM, non-NULL, caller guarantees n elements.
        let shape = unsafe { core::slice::from_raw_parts(shape, n) };
        // Uninitialised (zeroing MAX_NDIM strides cost 8,000 instructions per call): every
        // index below n is written when `compact_strides_with` returns Ok, and only then is it
        // read. The caller's array is written only on OK.
        let mut tmp = [core::mem::MaybeUninit::<i64>::uninit(); MAX_NDIM as usize];
        layout::compact_strides_with(shape, !column_major, |i, v| {
            tmp[i].write(v);
        })?;
        // SAFETY: non-NULL, caller guarantees room for n elements; tmp[..n] is initialised.
        unsafe { core::ptr::copy_nonoverlapping(tmp.as_ptr().cast::<i64>(), out, n) };
        Ok(())
    })
}

/// Whether a tensor fits in the allocation it claims to view: is every byte its elements
/// occupy inside `[base, base + size_in_bytes)`? The question every importer of an untrusted
/// tensor must ask before reading or writing it.
///
/// - `tensor`: borrowed; `shape` and `strides` hold `ndim` elements when non-NULL (NULL strides
///   read as compact row-major, as `dlpack_dltensor_layout`).
/// - `flags`: the `DLManagedTensorVersioned.flags` that go with it (only
///   `IS_SUBBYTE_TYPE_PADDED` matters); 0 for a legacy tensor.
/// - `base`, `size_in_bytes`: the allocation, in bytes. For pointer-addressed device types
///   (`dlpack_device_is_pointer_addressed`) `base` is its first byte; for opaque handles it must
///   be the tensor's own `data` handle, and the range is checked as offsets from it. `base`
///   may be NULL: it is only compared as an address, never dereferenced.
/// - `out_fits`: receives true when every element lies inside: the bytes from
///   `data + lowest_byte` to `data + end_byte` of `dlpack_dltensor_layout`, so negative strides
///   (which reach below `data + byte_offset`) and `byte_offset` are both counted. An empty
///   tensor touches nothing and fits any allocation; a 0-d tensor is one element.
///
/// Returns `DLPACK_HELPERS_STATUS_OK` (answer in `*out_fits`); `NULL_POINTER`; the statuses of
/// `dlpack_dltensor_layout` (`OVERFLOW` when the byte range does not fit in `int64_t`);
/// `OVERFLOW` when `base + size_in_bytes` passes the end of the address space;
/// `OPAQUE_HANDLE` (opaque handle and `base != data`). Arithmetic is exact (128-bit), never
/// clamped. No allocation; thread-safe (reads only).
///
/// @param[in] base May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK with the answer in `*out_fits`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_fits` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the tensor's byte range does not fit in `int64_t`,
///   `base + size_in_bytes` passes the end of the address space, or `strides` is NULL and a
///   compact row-major stride it implies does not fit in `int64_t` (possible only for an empty
///   tensor, which otherwise fits any allocation; the message names the `shape` element)
/// @retval DLPACK_HELPERS_STATUS_OPAQUE_HANDLE when the device type uses opaque handles and `base`
///   is not the tensor's `data`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dltensor_fits_allocation(
    tensor: *const DLTensor,
    flags: u64,
    base: *const c_void,
    size_in_bytes: u64,
    out_fits: *mut bool,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_fits, "out_fits")?;
        // SAFETY: caller contract for non-NULL pointers.
        let t = unsafe { nonnull(tensor, "tensor") }?;
        let producer = Declared::Versioned {
            version: crate::abi::DLPackVersion::CURRENT,
            flags: flags & crate::rules::flags::KNOWN,
        };
        // SAFETY: caller contract.
        let view = unsafe { view_of(t, producer, &LENIENT) }?;
        let fits = layout::fits_allocation(
            &view,
            flags & crate::abi::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0,
            base as usize,
            size_in_bytes,
        )?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(fits) };
        Ok(())
    })
}

/// Whether `data` is an address on this device type (so `data + byte_offset` is the first
/// element): true for `kDLCPU`, `kDLCUDA`, `kDLCUDAHost`, `kDLROCM`, `kDLROCMHost`,
/// `kDLCUDAManaged` and `kDLOneAPI` (USM pointers); false for every other value, known
/// (OpenCL `cl_mem`, Vulkan, Metal `id<MTLBuffer>`, VPI, ExtDev, WebGPU, Hexagon, MAIA, Trn) or
/// unknown (dlpack#83, #186). Thread-safe, never fails.
#[unsafe(no_mangle)]
pub extern "C" fn dlpack_device_is_pointer_addressed(device: DLDevice) -> bool {
    boundary::value(false, || layout::is_pointer_addressed(device.device_type))
}

/// The address of a tensor's first element, `(char*)data + byte_offset` (peer cases 38, 39).
///
/// - `out_address`: receives the address on OK.
///
/// Returns `DLPACK_HELPERS_STATUS_OK` for pointer-addressed device types (see
/// `dlpack_device_is_pointer_addressed`); `OPAQUE_HANDLE` for the others (`data` is a handle:
/// no arithmetic is done, use `data` and `byte_offset` separately, or
/// `dlpack_dltensor_data_location`); `OVERFLOW` when the sum wraps; `NULL_POINTER`.
/// Reads only `data`, `device` and `byte_offset`. Thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK for a pointer-addressed device type
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_address` is NULL
/// @retval DLPACK_HELPERS_STATUS_OPAQUE_HANDLE when `data` is a handle on this device type (no
///   arithmetic is done)
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when `data + byte_offset` wraps
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dltensor_data_address(
    tensor: *const DLTensor,
    out_address: *mut *mut c_void,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_address, "out_address")?;
        // SAFETY: caller contract.
        let t = unsafe { nonnull(tensor, "tensor") }?;
        let a =
            layout::first_element_address(t.data as usize, t.byte_offset, t.device.device_type)?;
        // SAFETY: non-NULL caller storage; the address keeps the provenance of `data`.
        unsafe { out.write(t.data.cast::<u8>().wrapping_add(a - t.data as usize).cast()) };
        Ok(())
    })
}

/// Where a tensor's first element is, for every device type: for pointer-addressed types
/// `*out_data = data + byte_offset` and `*out_byte_offset = 0`; for opaque handles `data` and
/// `byte_offset` unchanged (peer case 39: never add an offset to a handle).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `OVERFLOW` when `data + byte_offset` wraps;
/// `NULL_POINTER`. Both outputs are written only on OK. Thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor`, `out_data` or `out_byte_offset` is
///   NULL
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when `data + byte_offset` wraps
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dltensor_data_location(
    tensor: *const DLTensor,
    out_data: *mut *mut c_void,
    out_byte_offset: *mut u64,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let od = out_ptr(out_data, "out_data")?;
        let oo = out_ptr(out_byte_offset, "out_byte_offset")?;
        // SAFETY: caller contract.
        let t = unsafe { nonnull(tensor, "tensor") }?;
        let (a, off) = layout::data_location(t.data as usize, t.byte_offset, t.device.device_type)?;
        // SAFETY: non-NULL caller storage.
        unsafe {
            od.write(t.data.cast::<u8>().wrapping_add(a - t.data as usize).cast());
            oo.write(off);
        }
        Ok(())
    })
}

/// The order of a tensor's dimensions by stride, innermost (fastest-varying) first, so that a
/// consumer does not re-derive it (peer case 59, cutlass#3031: a leading dimension found by
/// looking for stride 1 is ambiguous when an extent-1 dimension also has stride 1).
///
/// - `tensor`: borrowed; `shape` and `strides` hold `ndim` elements when non-NULL. NULL
///   `strides` mean compact row-major (no stride is computed, so nothing can overflow).
///   `data`, `dtype`, `device` and `byte_offset` are not read.
/// - `out_order`: receives `ndim` dimension indices (a permutation of `0..ndim`) on OK: first
///   the dimensions whose extent is not 1, by `|stride|` ascending (a broadcast stride 0 first,
///   a negative stride by its magnitude), equal `|stride|` with the higher index first; then
///   the extent-1 dimensions, higher index first, whatever their strides. So `out_order[0]` is
///   the innermost dimension of extent != 1 whenever there is one; a C-contiguous tensor
///   without extent-1 dimensions gives `{ndim-1, ..., 0}`, an F-contiguous one `{0, ..., ndim-1}`.
///   May be NULL when `ndim` is 0 (a 0-d tensor has no dimension: OK, nothing written).
/// - `capacity`: elements of room at `out_order`; at least `ndim`.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`; `NULL_POINTER`; `INVALID_NDIM`; `BUFFER_TOO_SMALL`;
/// `NULL_SHAPE`; `INVALID_SHAPE`. `out_order` is written only on OK. No allocation;
/// thread-safe (reads only).
///
/// @retval DLPACK_HELPERS_STATUS_OK with the order in `out_order[0..ndim)`
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` is NULL, or `out_order` is NULL and
///   `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM`
/// @retval DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL when `capacity` is below `ndim`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dltensor_dim_order(
    tensor: *const DLTensor,
    out_order: *mut i32,
    capacity: i32,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: caller contract for non-NULL pointers.
        let t = unsafe { nonnull(tensor, "tensor") }?;
        let n = layout::check_ndim(t.ndim, 0)?;
        if n == 0 {
            return Ok(());
        }
        let out = out_ptr(out_order, "out_order")?;
        if capacity < t.ndim {
            return Err(Error::fault(
                crate::rules::error::Fault::BufferTooSmall,
                format!(
                    "capacity is {capacity} but tensor.ndim is {n}: out_order needs room for \
                     {n} dimension indices"
                ),
            ));
        }
        if t.shape.is_null() {
            return Err(Error::fault(
                crate::rules::error::Fault::NullShape,
                format!("tensor.shape is NULL but ndim is {n}"),
            ));
        }
        // SAFETY: n in 1..=MAX_NDIM; non-NULL arrays hold n elements (caller contract).
        let shape = unsafe { core::slice::from_raw_parts(t.shape, n) };
        // SAFETY: as above.
        let strides =
            (!t.strides.is_null()).then(|| unsafe { core::slice::from_raw_parts(t.strides, n) });
        // SAFETY: non-NULL, room for `capacity >= n` elements (caller contract). `dim_order`
        // checks everything before it writes, so nothing is written on failure.
        let out = unsafe { core::slice::from_raw_parts_mut(out, n) };
        layout::dim_order(shape, strides, out)
    })
}
