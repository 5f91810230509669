//! Layout of a strided tensor: element count, bytes, contiguity, broadcast and negative strides,
//! the byte range touched, the first element's address and alignment.
//!
//! Rules (DLPack header; spec §6 items 7–13; peer cases 29, 30, 32, 33, 36, 38–40, 42):
//! - strides are in elements, `byte_offset` in bytes; element `i` lives at
//!   `data + byte_offset + sum(i[d] * strides[d]) * element_size`.
//! - NULL strides mean compact row-major (legacy and ≤ 1.1 producers; whether NULL is *allowed*
//!   is decided by validation, not here). Those implied strides must fit in `int64_t`, also for
//!   an empty tensor (whose extents of 0 count as 1 in them): `{0, 2^62, 4}` implies a stride of
//!   2^64, so its layout is `Overflow`, as filling the strides in is (peer case 49).
//! - The stride of a dimension of extent 1 never affects an address: contiguity ignores it, and
//!   a stride of 0 there is not a broadcast (peer cases 30, 32).
//! - A tensor with an extent of 0 has no elements: it is contiguous in every sense whatever its
//!   strides, spans 0 bytes and is never dereferenced (peer case 33).
//! - A stride of 0 on an extent > 1 is a broadcast; a negative stride reverses a dimension. Both
//!   are legal and reported; neither is contiguous.
//!
//! Nothing here allocates: strides implied by NULL are computed on the fly.

use crate::abi::{DLDataType, DLDevice, DLDeviceType};
use crate::rules::dtype::{self, Element};
use crate::rules::error::{Error, Fault};

/// The largest `ndim` any function accepts. DLPack sets no bound; NumPy allows 64. A larger
/// value is rejected before any shape or strides array is read.
pub const MAX_NDIM: i32 = 1024;

/// A borrowed view of a `DLTensor`'s fields, after `ndim` was checked and the arrays formed.
#[derive(Clone, Copy, Debug)]
pub struct TensorView<'a> {
    /// `data` as an integer: an address for pointer-addressed devices, else an opaque handle.
    pub data: usize,
    pub device: DLDevice,
    pub dtype: DLDataType,
    /// `shape[0..ndim]` (empty for ndim 0, whatever the pointer).
    pub shape: &'a [i64],
    /// `strides[0..ndim]`, or `None` when the pointer is NULL (or ndim is 0).
    pub strides: Option<&'a [i64]>,
    pub byte_offset: u64,
}

/// `Layout::properties` bit: C (row-major) contiguous.
pub const C_CONTIGUOUS: u32 = 1 << 0;
/// F (column-major) contiguous.
pub const F_CONTIGUOUS: u32 = 1 << 1;
/// Compact in some dimension order: positive strides, every element at a distinct address,
/// no gaps (C- and F-contiguous tensors are compact).
pub const COMPACT: u32 = 1 << 2;
/// A dimension of extent > 1 has stride 0.
pub const BROADCAST: u32 = 1 << 3;
/// A dimension of extent > 1 has a negative stride.
pub const NEGATIVE_STRIDES: u32 = 1 << 4;
/// `strides` was NULL: compact row-major strides were assumed.
pub const STRIDES_IMPLIED: u32 = 1 << 5;
/// The tensor has no elements (some extent is 0).
pub const EMPTY: u32 = 1 << 6;
/// The dtype is a packed sub-byte type: addresses are in bits, not whole bytes.
pub const PACKED_SUB_BYTE: u32 = 1 << 7;

/// Everything about a tensor's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Number of elements (product of the extents; 1 for ndim 0). At most `i64::MAX`.
    pub numel: i64,
    /// Bytes the elements would take stored compactly: `numel * itemsize`, or
    /// `ceil(numel * bits * lanes / 8)` for packed sub-byte types.
    pub nbytes: i64,
    /// Number of element slots between the lowest and the highest element touched, inclusive
    /// (smaller than `numel` for a broadcast; 0 when empty).
    pub storage_elements: i64,
    /// Lowest byte touched, relative to `data` (includes `byte_offset`; below it for negative
    /// strides). Equal to `end_byte` when empty.
    pub lowest_byte: i64,
    /// One past the highest byte touched, relative to `data`.
    pub end_byte: i64,
    /// `C_CONTIGUOUS | F_CONTIGUOUS | ...` bits.
    pub properties: u32,
    /// Bits one element occupies in memory (see `dtype::Element`).
    pub element_bits: u32,
}

impl Layout {
    pub const fn has(&self, bit: u32) -> bool {
        self.properties & bit != 0
    }
}

/// Check a raw `ndim`: it must be in `0..=MAX_NDIM` (and at most `max` when `max > 0`).
#[inline]
pub fn check_ndim(ndim: i32, max: i32) -> Result<usize, Error> {
    check_ndim_named(ndim, max, "tensor.ndim")
}

/// [`check_ndim`], naming the value `what` in the message (`ndim` for a bare argument).
#[inline]
pub fn check_ndim_named(ndim: i32, max: i32, what: &str) -> Result<usize, Error> {
    if !(0..=MAX_NDIM).contains(&ndim) {
        return Err(Error::fault(
            Fault::InvalidNdim,
            format!("{what} is {ndim}; it must be in 0..={MAX_NDIM} (this library's bound)"),
        ));
    }
    if max > 0 && ndim > max {
        return Err(Error::fault(
            Fault::InvalidNdim,
            format!("{what} is {ndim}, above the caller's maximum of {max} (options.max_ndim)"),
        ));
    }
    Ok(ndim as usize)
}

/// Device types whose `data` is an address that host or device code may offset: `kDLCPU`,
/// `kDLCUDA`, `kDLCUDAHost`, `kDLROCM`, `kDLROCMHost`, `kDLCUDAManaged`, `kDLOneAPI` (USM
/// pointers). Every other value, known (OpenCL `cl_mem`, Vulkan, Metal `id<MTLBuffer>`, VPI,
/// ExtDev, WebGPU, Hexagon, MAIA, Trn) or unknown, is treated as an opaque handle
/// (DLPack: dlpack#83, #186; peer case 39).
#[inline]
pub const fn is_pointer_addressed(device_type: DLDeviceType) -> bool {
    matches!(device_type.0, 1 | 2 | 3 | 10 | 11 | 13 | 14)
}

/// Number of elements: the product of the extents, checked. Negative extents are an error.
/// An extent of 0 makes the count 0 whatever the other extents.
#[inline]
pub fn numel(shape: &[i64]) -> Result<i64, Error> {
    let mut n: i64 = 1;
    let mut overflow = false;
    let mut zero = false;
    for (i, &e) in shape.iter().enumerate() {
        if e < 0 {
            return Err(Error::fault(
                Fault::InvalidShape,
                format!("tensor.shape[{i}] is {e}; extents must be >= 0"),
            ));
        }
        if e == 0 {
            zero = true;
        }
        match n.checked_mul(e) {
            Some(v) => n = v,
            None => overflow = true,
        }
    }
    if zero {
        Ok(0)
    } else if overflow {
        Err(Error::fault(
            Fault::Overflow,
            "the element count (product of tensor.shape) does not fit in int64_t".to_owned(),
        ))
    } else {
        Ok(n)
    }
}

/// Compact strides (in elements) for `shape`, row-major (`c_order`) or column-major, written to
/// `out[0..shape.len()]`. Extents of 0 count as 1 so that every stride is meaningful.
///
/// Only the strides must fit in `int64_t`: the slowest-varying extent (the first row-major, the
/// last column-major) enters no stride, so it may be as large as `int64_t` allows. Errors name
/// the arguments `shape` / `out_strides`, not a tensor.
pub fn compact_strides(shape: &[i64], c_order: bool, out: &mut [i64]) -> Result<(), Error> {
    if out.len() < shape.len() {
        return Err(Error::invalid("out_strides is shorter than shape"));
    }
    compact_strides_with(shape, c_order, |i, v| out[i] = v)
}

/// [`compact_strides`], handing each stride to `put(index, stride)`: every index in
/// `0..shape.len()` exactly once when it returns `Ok` (the C export collects them in an
/// uninitialised buffer and copies them out only on success, without zeroing 8 KiB per call).
#[inline]
pub fn compact_strides_with(
    shape: &[i64],
    c_order: bool,
    put: impl FnMut(usize, i64),
) -> Result<(), Error> {
    if let Some((i, &e)) = shape.iter().enumerate().find(|&(_, &e)| e < 0) {
        return Err(Error::fault(
            Fault::InvalidShape,
            format!("shape[{i}] is {e}; extents must be >= 0"),
        ));
    }
    compact_strides_raw(shape, c_order, put).map_err(|i| {
        Error::fault(
            Fault::Overflow,
            format!(
                "the compact stride of shape[{i}] (product of the faster-varying extents) \
                 does not fit in int64_t"
            ),
        )
    })
}

/// The one computation of compact strides (extents already known to be `>= 0`; extents of 0
/// count as 1). `Err(i)`: the stride of `shape[i]` does not fit in `int64_t`; then `put` was
/// called only for the faster-varying dimensions.
#[inline]
fn compact_strides_raw(
    shape: &[i64],
    c_order: bool,
    mut put: impl FnMut(usize, i64),
) -> Result<(), usize> {
    let n = shape.len();
    let mut acc: i64 = 1;
    for k in 0..n {
        let i = if c_order { n - 1 - k } else { k };
        put(i, acc);
        if k + 1 == n {
            break; // the slowest extent enters no stride
        }
        acc = acc
            .checked_mul(shape[i].max(1))
            .ok_or(if c_order { i - 1 } else { i + 1 })?;
    }
    Ok(())
}

/// NULL strides on an empty tensor: the compact row-major strides they imply must fit in
/// `int64_t` (peer case 49), or every consumer that fills them in (as `compact_strides`,
/// every wrap and view do) would get `Overflow` after validation said OK. Out of line: only an
/// empty tensor can fail it (for a non-empty one every implied stride is at most its element
/// count, which is checked), so the non-empty path never calls it. `shape` is known `>= 0`.
#[cold]
#[inline(never)]
fn check_implied_strides(shape: &[i64]) -> Result<(), Error> {
    compact_strides_raw(shape, true, |_, _| {}).map_err(|i| {
        Error::fault(
            Fault::Overflow,
            format!(
                "tensor.strides is NULL, so compact row-major strides are implied, but the \
                 implied stride of tensor.shape[{i}] (product of the faster-varying extents, \
                 extents of 0 counted as 1) does not fit in int64_t (peer case 49)"
            ),
        )
    })
}

/// Contiguity in one order: each non-trivial dimension's stride equals the product of the
/// extents of the faster-varying ones (extent-1 dimensions are skipped).
fn contiguous_in_order(shape: &[i64], strides: &[i64], c_order: bool) -> bool {
    let n = shape.len();
    let mut expected: i64 = 1;
    for k in 0..n {
        let i = if c_order { n - 1 - k } else { k };
        let e = shape[i];
        if e == 1 {
            continue;
        }
        if strides[i] != expected {
            return false;
        }
        // Cannot overflow: the product of all extents (numel) fits.
        expected = expected.wrapping_mul(e);
    }
    true
}

/// Compact in some order: the non-trivial dimensions, taken by increasing stride, have strides
/// 1, e0, e0*e1, ... . Uses a fixed bitset, no allocation.
fn compact_any_order(shape: &[i64], strides: &[i64]) -> bool {
    let mut used = [0u64; (MAX_NDIM as usize).div_ceil(64)];
    let mut remaining = shape.iter().filter(|&&e| e != 1).count();
    let mut expected: i64 = 1;
    while remaining > 0 {
        let found = (0..shape.len()).find(|&i| {
            shape[i] != 1 && used[i / 64] & (1 << (i % 64)) == 0 && strides[i] == expected
        });
        let Some(i) = found else { return false };
        used[i / 64] |= 1 << (i % 64);
        expected = expected.wrapping_mul(shape[i]);
        remaining -= 1;
    }
    true
}

/// The error for a negative extent, out of line.
#[cold]
#[inline(never)]
fn negative_extent(i: usize, e: i64) -> Error {
    Error::fault(
        Fault::InvalidShape,
        format!("tensor.shape[{i}] is {e}; extents must be >= 0"),
    )
}

#[cold]
#[inline(never)]
fn overflow(what: &str) -> Error {
    Error::fault(Fault::Overflow, format!("{what} does not fit in int64_t"))
}

/// Compute the layout of a view. `padded` is the `IS_SUBBYTE_TYPE_PADDED` flag.
///
/// Errors: negative extent (`InvalidShape`), invalid dtype, counts or byte extents beyond
/// `int64_t` (`Overflow`), `byte_offset` above `INT64_MAX` (`Overflow`), NULL strides whose
/// implied compact row-major strides do not fit in `int64_t` (`Overflow`; only an empty tensor
/// can have them, see the module docs).
#[inline]
pub fn layout(view: &TensorView<'_>, padded: bool) -> Result<Layout, Error> {
    layout_partial(view, padded, true)
}

/// [`layout`], but with `full == false` the `F_CONTIGUOUS` and `COMPACT` bits are left out for
/// explicit strides (validation's fast path when the caller needs neither).
#[inline(always)]
pub fn layout_partial(view: &TensorView<'_>, padded: bool, full: bool) -> Result<Layout, Error> {
    let shape = view.shape;
    let el: Element = dtype::element(view.dtype, padded)?;
    let bits = el.storage_bits as i128;
    let Ok(offset) = i64::try_from(view.byte_offset) else {
        return Err(Error::fault(
            Fault::Overflow,
            format!(
                "tensor.byte_offset is {}, above INT64_MAX",
                view.byte_offset
            ),
        ));
    };
    let mut props = if el.packed { PACKED_SUB_BYTE } else { 0 };
    let strides = match view.strides {
        Some(s) if s.len() != shape.len() => {
            return Err(Error::invalid(
                "tensor.strides and tensor.shape differ in length",
            ));
        }
        Some(s) => Some(s),
        None => {
            if !shape.is_empty() {
                props |= STRIDES_IMPLIED;
            }
            None
        }
    };
    // Pass 1 (explicit strides): extents, element count, reach below/above the first element,
    // broadcast and negative strides and C-contiguity, all in one loop from the last dimension.
    // Overflows are remembered, not returned, because an extent of 0 elsewhere makes them moot.
    let mut n: i64 = 1;
    let (mut lo, mut hi) = (0i64, 0i64);
    let mut c = true;
    let (mut zero, mut count_overflow, mut reach_overflow) = (false, false, false);
    match strides {
        None => n = numel(shape)?,
        Some(strides) => {
            // Indexed from the last dimension, overflows flagged rather than branched on (a
            // wrapped value is only ever used when an error or an empty tensor follows): the
            // per-dimension cost of the same loop in C.
            // Zipped and reversed: no bounds check per dimension (an indexed loop kept one, which
            // cost a third of the instructions of each skipped extent-1 dimension).
            // The index is needed only for a refusal: what remains of the reversed iterator.
            let mut dims = shape.iter().zip(strides).rev();
            while let Some((&e, &s)) = dims.next() {
                if e <= 1 {
                    if e < 0 {
                        return Err(negative_extent(dims.len(), e));
                    }
                    zero |= e == 0;
                    continue;
                }
                c &= s == n;
                let (v, o) = n.overflowing_mul(e);
                n = v;
                count_overflow |= o;
                let (r, o) = (e - 1).overflowing_mul(s);
                if o {
                    reach_overflow = true;
                } else if r < 0 {
                    props |= NEGATIVE_STRIDES;
                    let (v, o) = lo.overflowing_add(r);
                    lo = v;
                    reach_overflow |= o;
                } else {
                    if r == 0 {
                        props |= BROADCAST;
                    }
                    let (v, o) = hi.overflowing_add(r);
                    hi = v;
                    reach_overflow |= o;
                }
            }
            if zero {
                n = 0;
                props &= !(NEGATIVE_STRIDES | BROADCAST);
            } else if count_overflow {
                return Err(Error::fault(
                    Fault::Overflow,
                    "the element count (product of tensor.shape) does not fit in int64_t"
                        .to_owned(),
                ));
            } else if reach_overflow {
                return Err(overflow("the element offset range (extent - 1) * stride"));
            }
        }
    }
    if n == 0 {
        if strides.is_none() && shape.len() > 1 {
            check_implied_strides(shape)?;
        }
        return Ok(Layout {
            numel: 0,
            nbytes: 0,
            storage_elements: 0,
            lowest_byte: offset,
            end_byte: offset,
            properties: props | EMPTY | C_CONTIGUOUS | F_CONTIGUOUS | COMPACT,
            element_bits: el.storage_bits,
        });
    }
    match strides {
        None => {
            props |= C_CONTIGUOUS | COMPACT;
            if shape.iter().filter(|&&e| e != 1).count() <= 1 {
                props |= F_CONTIGUOUS;
            }
            hi = n - 1;
        }
        Some(strides) => {
            if c {
                props |= C_CONTIGUOUS | COMPACT;
            }
            if full {
                if contiguous_in_order(shape, strides, false) {
                    props |= F_CONTIGUOUS | COMPACT;
                } else if !c
                    && props & (BROADCAST | NEGATIVE_STRIDES) == 0
                    && compact_any_order(shape, strides)
                {
                    props |= COMPACT;
                }
            }
        }
    }
    let Some(storage) = hi.checked_sub(lo).and_then(|d| d.checked_add(1)) else {
        return Err(overflow("the storage extent"));
    };
    let bytes = if el.storage_bits % 8 == 0 {
        // Whole bytes per element: plain 64-bit arithmetic.
        let size = (el.storage_bits / 8) as i64;
        (|| {
            Some((
                n.checked_mul(size)?,
                offset.checked_add(lo.checked_mul(size)?)?,
                offset.checked_add(hi.checked_add(1)?.checked_mul(size)?)?,
            ))
        })()
    } else {
        // Packed sub-byte: bit positions; `>> 3` is floor division by 8 (also for negative
        // values), without a 128-bit divide.
        let (n, lo, hi, off) = (n as i128, lo as i128, hi as i128, offset as i128);
        (|| {
            Some((
                i64::try_from((n * bits + 7) >> 3).ok()?,
                i64::try_from(off + ((lo * bits) >> 3)).ok()?,
                i64::try_from(off + (((hi + 1) * bits + 7) >> 3)).ok()?,
            ))
        })()
    };
    match bytes {
        Some((nbytes, lowest_byte, end_byte)) => Ok(Layout {
            numel: n,
            nbytes,
            storage_elements: storage,
            lowest_byte,
            end_byte,
            properties: props,
            element_bits: el.storage_bits,
        }),
        None => Err(overflow("the byte size or byte range")),
    }
}

/// Where the first element is: `(data + byte_offset, 0)` for pointer-addressed device types,
/// `(data, byte_offset)` unchanged for opaque handles (peer cases 38, 39). `Overflow` when the
/// addition wraps.
#[inline]
pub fn data_location(
    data: usize,
    byte_offset: u64,
    device_type: DLDeviceType,
) -> Result<(usize, u64), Error> {
    if !is_pointer_addressed(device_type) {
        return Ok((data, byte_offset));
    }
    usize::try_from(byte_offset)
        .ok()
        .and_then(|o| data.checked_add(o))
        .map(|a| (a, 0))
        .ok_or_else(|| {
            Error::fault(
                Fault::Overflow,
                format!("tensor.data + tensor.byte_offset ({data:#x} + {byte_offset}) wraps around the address space"),
            )
        })
}

/// The address of the first element, only for pointer-addressed device types; `OpaqueHandle`
/// for the others.
#[inline]
pub fn first_element_address(
    data: usize,
    byte_offset: u64,
    device_type: DLDeviceType,
) -> Result<usize, Error> {
    if !is_pointer_addressed(device_type) {
        return Err(Error::fault(
            Fault::OpaqueHandle,
            format!(
                "tensor.device.device_type {} has an opaque data handle, not an address: pass \
                 tensor.data and tensor.byte_offset ({byte_offset}) separately (DLPack: no pointer \
                 arithmetic on OpenCL, Vulkan, Metal or unknown handles)",
                device_type.0
            ),
        ));
    }
    data_location(data, byte_offset, device_type).map(|(a, _)| a)
}

/// The largest power of two dividing the first element's address (`data + byte_offset` for
/// pointer-addressed types; `byte_offset` alone for opaque handles, whose base alignment is
/// unknown), or 0 when that value is 0 (aligned to everything). Computed modulo 2^64.
#[inline]
pub const fn first_element_alignment(
    data: usize,
    byte_offset: u64,
    device_type: DLDeviceType,
) -> u64 {
    let v = if is_pointer_addressed(device_type) {
        (data as u64).wrapping_add(byte_offset)
    } else {
        byte_offset
    };
    if v == 0 {
        0
    } else {
        1u64 << v.trailing_zeros()
    }
}

/// Whether every byte the view's elements occupy lies inside the allocation `[base, base +
/// size_in_bytes)` (issue 12; the peer fault: an extent check that ignored negative strides
/// with a non-zero `byte_offset`). Exact: the byte range is [`layout`]'s `lowest_byte ..
/// end_byte` (negative strides reach below the first element), taken relative to `data`, in
/// 128-bit arithmetic.
///
/// - An empty view (an extent of 0) touches no byte: it fits any allocation.
/// - A 0-d view has one element at `data + byte_offset`.
/// - Opaque handles (see [`is_pointer_addressed`]): `base` must be the same handle as `data`
///   (the range is then checked as offsets from it), else `OpaqueHandle`.
///
/// Errors: the layout's (`InvalidShape`, `InvalidDtype`, `Overflow`), `Overflow` when `base +
/// size_in_bytes` passes the end of the address space, `OpaqueHandle` as above.
pub fn fits_allocation(
    view: &TensorView<'_>,
    padded: bool,
    base: usize,
    size_in_bytes: u64,
) -> Result<bool, Error> {
    let l = layout(view, padded)?;
    let alloc_end = base as i128 + size_in_bytes as i128;
    if alloc_end > usize::MAX as i128 + 1 {
        return Err(Error::fault(
            Fault::Overflow,
            format!(
                "base + size_in_bytes ({base:#x} + {size_in_bytes}) passes the end of the address \
                 space"
            ),
        ));
    }
    let origin = if is_pointer_addressed(view.device.device_type) {
        view.data as i128
    } else if view.data == base {
        base as i128
    } else {
        return Err(Error::fault(
            Fault::OpaqueHandle,
            format!(
                "tensor.device.device_type {} has an opaque data handle: base must be that same \
                 handle ({:#x}), got {base:#x}",
                view.device.device_type.0, view.data
            ),
        ));
    };
    if l.numel == 0 {
        return Ok(true);
    }
    let lo = origin + l.lowest_byte as i128;
    let hi = origin + l.end_byte as i128;
    Ok(lo >= base as i128 && hi <= alloc_end)
}

/// Alignment in bytes of the buffers [`alloc_plan`] sizes (`dlpack_tensor_alloc`): a cache line,
/// and enough for every dtype and for 512-bit vector loads.
pub const ALLOC_ALIGNMENT: usize = 64;

/// The buffer a new tensor of `view`'s shape, strides and dtype needs (`dlpack_tensor_alloc`):
/// the bytes from the lowest to one past the highest byte an element touches, and the
/// `byte_offset` that puts element `[0, …, 0]` inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocPlan {
    /// Bytes to allocate: 0 for an empty tensor, else `end_byte - lowest_byte` of [`layout`].
    pub bytes: usize,
    /// `byte_offset` of the tensor: `-lowest_byte` (0 unless a stride is negative).
    pub byte_offset: u64,
}

/// Plan the buffer of a new tensor: `view.data` and `view.byte_offset` are ignored (taken as 0).
///
/// Errors: [`layout`]'s (`InvalidShape`, `InvalidDtype`, `Overflow`), and `Overflow` when the
/// buffer, rounded up to [`ALLOC_ALIGNMENT`] with room for `overhead` more bytes, would not fit in
/// `isize::MAX` (the most any allocation can hold): never a wrapped size.
pub fn alloc_plan(
    view: &TensorView<'_>,
    padded: bool,
    overhead: usize,
) -> Result<AllocPlan, Error> {
    let at_zero = TensorView {
        data: 0,
        byte_offset: 0,
        ..*view
    };
    let l = layout(&at_zero, padded)?;
    if l.numel == 0 {
        return Ok(AllocPlan {
            bytes: 0,
            byte_offset: 0,
        });
    }
    let bytes = l.end_byte as i128 - l.lowest_byte as i128;
    let limit = isize::MAX as i128 - ALLOC_ALIGNMENT as i128 - overhead as i128;
    if bytes > limit {
        return Err(Error::fault(
            Fault::Overflow,
            format!(
                "the tensor needs {bytes} bytes, more than one allocation can hold ({limit} \
                 bytes)"
            ),
        ));
    }
    Ok(AllocPlan {
        bytes: bytes as usize,
        byte_offset: (-(l.lowest_byte as i128)) as u64,
    })
}

#[cfg(test)]
mod tests;

/// The order of a tensor's dimensions by stride, innermost (fastest-varying) first, written to
/// `out[0..shape.len()]` as dimension indices (peer case 59, cutlass#3031: deducing the leading
/// dimension by looking for stride 1 is ambiguous when an extent-1 dimension has stride 1 too).
///
/// The rule, fixed so that every caller gets the same answer:
/// - dimensions whose extent is not 1 come first, by `|stride|` ascending (a broadcast stride 0
///   first; a negative stride counts by its magnitude); equal `|stride|` puts the higher index
///   first (row-major tradition: the last index varies fastest);
/// - extent-1 dimensions (whose stride never affects an address) come last, higher index first,
///   whatever their strides; so `out[0]` is a dimension of extent != 1 whenever one exists;
/// - `strides == None` means compact row-major, whose order is the index order reversed: nothing
///   is computed, so it cannot overflow.
///
/// Errors: `InvalidShape` (negative extent), `InvalidArgument` when `out` is shorter than
/// `shape`. No allocation.
pub fn dim_order(shape: &[i64], strides: Option<&[i64]>, out: &mut [i32]) -> Result<(), Error> {
    let n = shape.len();
    if let Some((i, &e)) = shape.iter().enumerate().find(|&(_, &e)| e < 0) {
        return Err(Error::fault(
            Fault::InvalidShape,
            format!("tensor.shape[{i}] is {e}; extents must be >= 0"),
        ));
    }
    if out.len() < n {
        return Err(Error::invalid("out_order is shorter than ndim"));
    }
    // Dimensions of extent != 1, higher index first, then stably ordered by |stride|.
    let mut k = 0;
    for i in (0..n).rev() {
        if shape[i] != 1 {
            out[k] = i as i32;
            k += 1;
        }
    }
    if let Some(s) = strides {
        // Keys are distinct (the index breaks ties), so an unstable sort is deterministic and
        // allocates nothing.
        out[..k].sort_unstable_by_key(|&d| (s[d as usize].unsigned_abs(), core::cmp::Reverse(d)));
    }
    for i in (0..n).rev() {
        if shape[i] == 1 {
            out[k] = i as i32;
            k += 1;
        }
    }
    debug_assert_eq!(k, n);
    Ok(())
}
