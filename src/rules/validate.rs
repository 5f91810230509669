//! Validation of an untrusted tensor against the DLPack rules and the caller's requirements.
//!
//! Two phases, so that no array is formed from an unchecked `ndim`:
//! 1. [`check_header`]: version and flags (versioned tensors), `ndim` bound, NULL `shape`, NULL
//!    `strides` policy. Reads only scalar fields and pointer nullness.
//! 2. [`check_view`]: everything that needs `shape`/`strides`: extents, dtype, counts and byte
//!    extents without overflow, NULL `data`, and the caller's requirements. Returns the layout.
//!
//! The first violation is reported; rules are checked in the order of the list in
//! `docs/validation.md`. Nothing allocates unless a check fails (the error message).
//!
//! Policies (the spec leaves these open; see `docs/validation.md`):
//! - NULL strides with `ndim != 0`: compact row-major for legacy tensors and versioned tensors
//!   of minor ≤ 1; a violation (`NullStrides`) from 1.2 on, unless the caller passes
//!   `LENIENT_NULL_STRIDES`, which reads them as row-major (old NumPy exported NULL strides).
//! - NULL `data` is valid for an empty tensor (peer case 34) and invalid for a non-empty
//!   tensor on a pointer-addressed device type (including ndim 0, which has one element).
//! - Alignment is reported, never required by default (peer cases 40, 42); alignment checks
//!   are skipped for empty tensors.
//! - Writability required on a legacy tensor: unknown counts as not writable unless the caller
//!   passes `LEGACY_WRITABLE`.

use crate::abi::{DLDataType, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, DLPackVersion};
use crate::rules::device;
use crate::rules::error::{Error, Fault};
use crate::rules::flags::{self, Writability};
use crate::rules::layout::{self, Layout, TensorView};
use crate::rules::version;

/// Accept NULL strides at DLPack ≥ 1.2 as compact row-major.
pub const LENIENT_NULL_STRIDES: u32 = 1 << 0;
/// Require C (row-major) contiguity.
pub const REQUIRE_C_CONTIGUOUS: u32 = 1 << 1;
/// Require F (column-major) contiguity.
pub const REQUIRE_F_CONTIGUOUS: u32 = 1 << 2;
/// Require compactness in some dimension order.
pub const REQUIRE_COMPACT: u32 = 1 << 3;
/// Require a device type whose memory host code can always dereference.
pub const REQUIRE_CPU_ACCESSIBLE: u32 = 1 << 4;
/// Require permission to write (READ_ONLY clear).
pub const REQUIRE_WRITABLE: u32 = 1 << 5;
/// Require `options.dtype` exactly.
pub const REQUIRE_DTYPE: u32 = 1 << 6;
/// Refuse vector dtypes (`lanes > 1`).
pub const REJECT_VECTOR: u32 = 1 << 7;
/// Require the first element to be aligned to the element's natural alignment.
pub const REQUIRE_ELEMENT_ALIGNED: u32 = 1 << 8;
/// Refuse broadcast dimensions (stride 0 on an extent > 1).
pub const REJECT_BROADCAST: u32 = 1 << 9;
/// Refuse negative strides.
pub const REJECT_NEGATIVE_STRIDES: u32 = 1 << 10;
/// With `REQUIRE_WRITABLE`: treat legacy tensors (writability unknown) as writable.
pub const LEGACY_WRITABLE: u32 = 1 << 11;
/// Refuse a tensor whose flags have `DLPACK_FLAG_BITMASK_IS_COPIED` (peer case 52): a consumer
/// that needs aliasing (it writes through the tensor, or keeps it past the producer's release)
/// cannot use a copy. Legacy tensors have no flags and pass.
pub const REJECT_COPIED: u32 = 1 << 12;
/// Every option bit this version defines.
pub const ALL_OPTIONS: u32 = (1 << 13) - 1;

/// The caller's requirements. All-zero is the default: every DLPack rule, nothing more.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requirements {
    /// `LENIENT_NULL_STRIDES | REQUIRE_... | ...` bits.
    pub flags: u32,
    /// Largest `ndim` accepted; 0 for the library bound only.
    pub max_ndim: i32,
    /// Required alignment of `data` in bytes (a power of two; 0 or 1: none). 256 is the header's
    /// literal rule (peer case 42). Not checked for opaque handles.
    pub data_alignment: u64,
    /// Required alignment of the first element in bytes (`data + byte_offset`; `byte_offset`
    /// alone for opaque handles). A power of two; 0 or 1: none.
    pub first_element_alignment: u64,
    /// The dtype required with `REQUIRE_DTYPE`.
    pub dtype: DLDataType,
}

/// Who produced the tensor: decides the NULL-strides rule, flags and writability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Declared {
    /// A legacy `DLManagedTensor`, or a bare `DLTensor` of unknown version.
    Legacy,
    /// A `DLManagedTensorVersioned` (or a bare `DLTensor` with a declared version) and its flags.
    Versioned { version: DLPackVersion, flags: u64 },
}

impl Declared {
    fn flags(self) -> Option<u64> {
        match self {
            Declared::Legacy => None,
            Declared::Versioned { flags, .. } => Some(flags),
        }
    }
    fn padded(self) -> bool {
        self.flags()
            .is_some_and(|f| f & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0)
    }
}

/// Rule 1: the options are well-formed (known bits, power-of-two alignments, `max_ndim >= 0`).
/// Checked before the tensor is read (spec CORE-TENSOR-VALIDATE-2) by the exports that read
/// the options, and again (cheaply) by [`validate`] for Rust callers.
#[inline]
pub(crate) fn check_options(o: &Requirements) -> Result<(), Error> {
    let pow2_or_zero = |a: u64| a & a.wrapping_sub(1) == 0;
    if o.flags & !ALL_OPTIONS == 0
        && pow2_or_zero(o.data_alignment)
        && pow2_or_zero(o.first_element_alignment)
        && o.max_ndim >= 0
    {
        return Ok(());
    }
    options_error(o)
}

#[cold]
fn options_error(o: &Requirements) -> Result<(), Error> {
    if o.flags & !ALL_OPTIONS != 0 {
        return Err(Error::invalid(format!(
            "options->flags has unknown bits {:#x}",
            o.flags & !ALL_OPTIONS
        )));
    }
    for (name, a) in [
        ("data_alignment", o.data_alignment),
        ("first_element_alignment", o.first_element_alignment),
    ] {
        if a > 1 && !a.is_power_of_two() {
            return Err(Error::invalid(format!(
                "options->{name} is {a}, not a power of two"
            )));
        }
    }
    Err(Error::invalid(format!(
        "options->max_ndim is {}, negative",
        o.max_ndim
    )))
}

/// Phase 1: options, version and flags, `ndim`, NULL `shape`, NULL `strides`. Returns `ndim`
/// as a length that is safe to form arrays with.
#[inline(always)]
pub fn check_header(
    producer: Declared,
    ndim: i32,
    shape_null: bool,
    strides_null: bool,
    options: &Requirements,
) -> Result<usize, Error> {
    check_options(options)?;
    if let Declared::Versioned {
        version: v,
        flags: f,
    } = producer
    {
        version::check(v, "tensor->version")?;
        flags::check(f, v)?;
    }
    let n = layout::check_ndim(ndim, options.max_ndim)?;
    if n != 0 && shape_null {
        return Err(Error::fault(
            Fault::NullShape,
            format!(
                "tensor.shape is NULL but ndim is {n} (DLPack: shape may be NULL only when ndim == 0)"
            ),
        ));
    }
    if n != 0
        && strides_null
        && options.flags & LENIENT_NULL_STRIDES == 0
        && let Declared::Versioned { version: v, .. } = producer
        && v.minor >= 2
    {
        return Err(Error::fault(
            Fault::NullStrides,
            format!(
                "tensor.strides is NULL but ndim is {n} and the producer declares DLPack {}.{} \
                     (DLPack 1.2: strides must be non-NULL when ndim != 0; pass \
                     DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES to read them as row-major)",
                v.major, v.minor
            ),
        ));
    }
    Ok(n)
}

fn require(cond: bool, fault: Fault, msg: impl FnOnce() -> String) -> Result<(), Error> {
    if cond {
        Ok(())
    } else {
        Err(Error::fault(fault, msg()))
    }
}

/// Phase 2: the view's contents and the caller's requirements. Returns the full layout.
#[inline]
pub fn check_view(
    view: &TensorView<'_>,
    producer: Declared,
    options: &Requirements,
) -> Result<Layout, Error> {
    check_view_with(view, producer, options, true)
}

/// [`check_view`]; with `full_layout == false` the returned layout lacks the `F_CONTIGUOUS` and
/// `COMPACT` bits unless the options require them (the fast path when the caller discards it).
#[inline(always)]
pub fn check_view_with(
    view: &TensorView<'_>,
    producer: Declared,
    options: &Requirements,
    full_layout: bool,
) -> Result<Layout, Error> {
    let o = options;
    let full = full_layout || o.flags & (REQUIRE_F_CONTIGUOUS | REQUIRE_COMPACT) != 0;
    let l = layout::layout_partial(view, producer.padded(), full)?;
    let dt = view.dtype;
    require(
        o.flags & REJECT_VECTOR == 0 || dt.lanes == 1,
        Fault::DtypeMismatch,
        || {
            format!(
                "tensor.dtype.lanes is {}; the caller refuses vector types",
                dt.lanes
            )
        },
    )?;
    require(
        o.flags & REQUIRE_DTYPE == 0 || dt == o.dtype,
        Fault::DtypeMismatch,
        || {
            format!(
                "tensor.dtype is {dt} (code {}, bits {}, lanes {}), the caller requires {} (code {}, bits {}, lanes {})",
                dt.code, dt.bits, dt.lanes, o.dtype, o.dtype.code, o.dtype.bits, o.dtype.lanes
            )
        },
    )?;
    // Issue 22 (peer case 54): a device id is never negative; unknown device types pass through.
    device::check_id(view.device, "tensor.device")?;
    let pointer = layout::is_pointer_addressed(view.device.device_type);
    if l.numel > 0 && pointer {
        require(view.data != 0, Fault::NullData, || {
            format!(
                "tensor.data is NULL but the tensor has {} element(s) on device type {} (data may \
                 be NULL only for empty tensors)",
                l.numel, view.device.device_type.0
            )
        })?;
        let lo = view.data as i128 + l.lowest_byte as i128;
        let hi = view.data as i128 + l.end_byte as i128;
        require(lo >= 0 && hi <= usize::MAX as i128, Fault::Overflow, || {
            format!(
                "the tensor's bytes [{}, {}) relative to tensor.data {:#x} fall outside the address space",
                l.lowest_byte, l.end_byte, view.data
            )
        })?;
    }
    require(
        o.flags & REQUIRE_CPU_ACCESSIBLE == 0 || device::is_cpu_accessible(view.device),
        Fault::NotCpuAccessible,
        || {
            format!(
                "tensor.device.device_type is {}; the caller requires host-accessible memory \
                 (kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged)",
                view.device.device_type.0
            )
        },
    )?;
    if l.numel > 0 {
        if pointer && o.data_alignment > 1 {
            require(
                view.data as u64 % o.data_alignment == 0,
                Fault::Misaligned,
                || {
                    format!(
                        "tensor.data {:#x} is not aligned to {} bytes (options->data_alignment)",
                        view.data, o.data_alignment
                    )
                },
            )?;
        }
        let a =
            layout::first_element_alignment(view.data, view.byte_offset, view.device.device_type);
        let aligned = |req: u64| a == 0 || a >= req;
        if o.first_element_alignment > 1 {
            require(
                aligned(o.first_element_alignment),
                Fault::Misaligned,
                || {
                    format!(
                        "the first element (tensor.data + tensor.byte_offset {}) is aligned to {a} bytes, \
                     the caller requires {} (options->first_element_alignment)",
                        view.byte_offset, o.first_element_alignment
                    )
                },
            )?;
        }
        if o.flags & REQUIRE_ELEMENT_ALIGNED != 0 {
            let need = crate::rules::dtype::element(dt, producer.padded())?.natural_alignment();
            require(aligned(need), Fault::Misaligned, || {
                format!(
                    "the first element (tensor.data + tensor.byte_offset {}) is aligned to {a} bytes, \
                     not to its element size ({need} bytes)",
                    view.byte_offset
                )
            })?;
        }
    }
    let need = |bit: u32, prop: u32, what: &'static str| {
        require(
            o.flags & bit == 0 || l.has(prop),
            Fault::NotContiguous,
            || {
                format!(
                    "the tensor is not {what} (shape and strides decide; extent-1 dimensions ignored)"
                )
            },
        )
    };
    need(
        REQUIRE_C_CONTIGUOUS,
        layout::C_CONTIGUOUS,
        "C-contiguous (row-major)",
    )?;
    need(
        REQUIRE_F_CONTIGUOUS,
        layout::F_CONTIGUOUS,
        "F-contiguous (column-major)",
    )?;
    need(
        REQUIRE_COMPACT,
        layout::COMPACT,
        "compact in any dimension order",
    )?;
    require(
        o.flags & REJECT_BROADCAST == 0 || !l.has(layout::BROADCAST),
        Fault::UnsupportedStrides,
        || {
            "tensor.strides has a 0 on a dimension of extent > 1 (broadcast); the caller refuses it"
                .to_owned()
        },
    )?;
    require(
        o.flags & REJECT_NEGATIVE_STRIDES == 0 || !l.has(layout::NEGATIVE_STRIDES),
        Fault::UnsupportedStrides,
        || "tensor.strides has a negative stride; the caller refuses it".to_owned(),
    )?;
    if o.flags & REQUIRE_WRITABLE != 0 {
        match flags::writability(producer.flags()) {
            Writability::Writable => {}
            Writability::ReadOnly => {
                return Err(Error::fault(
                    Fault::ReadOnly,
                    "tensor->flags has DLPACK_FLAG_BITMASK_READ_ONLY; the caller requires a writable tensor",
                ));
            }
            Writability::Unknown => {
                require(o.flags & LEGACY_WRITABLE != 0, Fault::ReadOnly, || {
                    "the tensor is legacy (no flags), so its writability is unknown; the caller requires a \
                 writable tensor (pass DLPACK_HELPERS_VALIDATE_LEGACY_WRITABLE to assume it)"
                    .to_owned()
                })?
            }
        }
    }
    require(
        o.flags & REJECT_COPIED == 0
            || producer.flags().unwrap_or(0) & crate::abi::DLPACK_FLAG_BITMASK_IS_COPIED == 0,
        Fault::Copied,
        || {
            "tensor->flags has DLPACK_FLAG_BITMASK_IS_COPIED: the producer handed over a copy, and \
             the caller needs the producer's own memory (DLPACK_HELPERS_VALIDATE_REJECT_COPIED; peer \
             case 52)"
                .to_owned()
        },
    )?;
    Ok(l)
}

/// Option bits the fast path understands; any other bit sends the call down the full path.
pub(crate) const FAST_OPTIONS: u32 = LENIENT_NULL_STRIDES
    | REQUIRE_C_CONTIGUOUS
    | REQUIRE_CPU_ACCESSIBLE
    | REQUIRE_WRITABLE
    | REQUIRE_DTYPE
    | REJECT_VECTOR
    | REJECT_BROADCAST
    | REJECT_NEGATIVE_STRIDES
    | LEGACY_WRITABLE;

/// The most dimensions the fast path handles: every `ndim` the library accepts. (It once
/// stopped at 8; above that the full rule list cost 1.4-1.6x the same rules written as one C
/// pass, where the fast path's single fused loop costs what that C pass does.)
pub const FAST_MAX_NDIM: usize = layout::MAX_NDIM as usize;

/// `bits_allowed(code, bits) == Some(true)` for a whole-byte `bits` (8 to 248), as one bit per
/// byte count: bit `bits / 8` of entry `code`. Made from `dtype::bits_allowed` itself, so the two
/// cannot disagree; one load and a shift where the `match` was a jump table (issue 34,
/// callgrind: about 8 instructions of every validated import).
const WHOLE_BYTE_BITS_ALLOWED: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut code = 0;
    while code < 256 {
        let mut bytes = 1;
        while bytes < 32 {
            if let Some(true) = crate::rules::dtype::bits_allowed(code as u8, (bytes * 8) as u8) {
                t[code] |= 1 << bytes;
            }
            bytes += 1;
        }
        code += 1;
    }
    t
};

/// A conservative shortcut for the common case: `true` only when the full validation
/// ([`check_header`] then [`check_view`]) would accept the tensor; `false` means "run the full
/// path", which decides and names the violation. Handles: versioned major 1 (or legacy),
/// 1..=`MAX_NDIM` dimensions with non-NULL shape and strides, every extent >= 1, positive strides on
/// extents > 1, a scalar whole-byte dtype, a pointer-addressed device with non-NULL data, and
/// only the option bits in `FAST_OPTIONS` with no alignment requirement. A property test
/// checks that it never accepts what the full path refuses.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn fast_accept(
    data: usize,
    device: crate::abi::DLDevice,
    dtype: DLDataType,
    shape: &[i64],
    strides: &[i64],
    byte_offset: u64,
    producer: Declared,
    o: &Requirements,
) -> bool {
    let n_dims = shape.len();
    if o.flags & !FAST_OPTIONS != 0
        || o.data_alignment > 1
        || o.first_element_alignment > 1
        || o.max_ndim < 0
        || (o.max_ndim > 0 && n_dims > o.max_ndim as usize)
        || n_dims == 0
        || n_dims > FAST_MAX_NDIM
        || strides.len() != n_dims
        || data == 0
        || device.device_id < 0
        || !layout::is_pointer_addressed(device.device_type)
        || dtype.lanes != 1
        || dtype.bits % 8 != 0
        || (WHOLE_BYTE_BITS_ALLOWED[dtype.code as usize] >> (dtype.bits / 8)) & 1 == 0
        || byte_offset > i64::MAX as u64
    {
        return false;
    }
    let writable = match producer {
        Declared::Legacy => o.flags & LEGACY_WRITABLE != 0,
        Declared::Versioned { version, flags } => {
            if version.major != 1 || flags::undefined_bits(flags, version) != 0 {
                return false;
            }
            flags & crate::abi::DLPACK_FLAG_BITMASK_READ_ONLY == 0
        }
    };
    if (o.flags & REQUIRE_WRITABLE != 0 && !writable)
        || (o.flags & REQUIRE_DTYPE != 0 && dtype != o.dtype)
        || (o.flags & REQUIRE_CPU_ACCESSIBLE != 0 && !device::is_cpu_accessible(device))
    {
        return false;
    }
    // Extents >= 1 and positive strides: no empty tensor, no broadcast, no negative stride.
    let mut count: i64 = 1;
    let mut reach: i64 = 0;
    let mut c = true;
    let mut i = n_dims;
    while i > 0 {
        i -= 1;
        let (e, s) = (shape[i], strides[i]);
        if e == 1 {
            continue;
        }
        if e < 1 || s < 1 {
            return false;
        }
        c &= s == count;
        let (Some(nc), Some(r)) = (count.checked_mul(e), (e - 1).checked_mul(s)) else {
            return false;
        };
        let Some(nr) = reach.checked_add(r) else {
            return false;
        };
        count = nc;
        reach = nr;
    }
    if o.flags & REQUIRE_C_CONTIGUOUS != 0 && !c {
        return false;
    }
    // Bytes: [byte_offset, byte_offset + (reach + 1) * size) inside int64_t and the address space.
    let size = (dtype.bits / 8) as i64;
    let end = reach
        .checked_add(1)
        .and_then(|r| r.checked_mul(size))
        .and_then(|b| b.checked_add(byte_offset as i64));
    let nbytes_ok = count.checked_mul(size).is_some();
    match end {
        Some(end) if nbytes_ok => (data as u128 + end as u128) <= usize::MAX as u128,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
