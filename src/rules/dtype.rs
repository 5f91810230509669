//! dtype rules: which `(code, bits, lanes)` triples are valid, and how many bits one element
//! occupies in memory.
//!
//! Policy (DLPack 1.3 header, `DLDataTypeCode` docs and dlpack#66, #114, #158; spec §6 items 3,
//! 13–15). The bits allowed for each code:
//!
//! | code | name | bits allowed |
//! |---|---|---|
//! | 0 `kDLInt`, 1 `kDLUInt` | `int<N>`, `uint<N>` | 1, 2, 4 (sub-byte), 8, 16, 32, 64, 128 |
//! | 2 `kDLFloat` | `float<N>` | 16, 32, 64, 128 |
//! | 3 `kDLOpaqueHandle` | `handle<N>` | any non-zero multiple of 8 |
//! | 4 `kDLBfloat` | `bfloat16` | 16 only (peer case 45) |
//! | 5 `kDLComplex` | `complex<N>` (N = size of the whole number) | 32, 64, 128 |
//! | 6 `kDLBool` | `bool` | 8 only (peer case 43: any other `bits` is refused, packed or padded) |
//! | 7–14 float8 variants | `float8_*` | 8 only |
//! | 15, 16 float6 variants | `float6_*` | 6 only (DLPack 1.1: otherwise stop importing) |
//! | 17 `kDLFloat4_e2m1fn` | `float4_e2m1fn` | 4 only |
//! | anything else (18 `kDLBcomplex` is post-1.3) | — | refused as unknown |
//!
//! - `lanes` must be at least 1. Vector types (`lanes > 1`) are accepted for every code alike:
//!   one element is `bits * lanes` bits (header: "lanes: number of lanes for vector types").
//!   Validation can refuse them with an option (`DLPACK_HELPERS_VALIDATE_REJECT_VECTOR`).
//! - An element whose `bits * lanes` is a multiple of 8 is byte-sized: it occupies exactly
//!   `bits * lanes / 8` bytes and the padded flag does not change anything.
//! - Otherwise the element is sub-byte (`int4`, `float4_e2m1fn`, `float6_*`, ...): packed by
//!   default (DLPack 1.1, little bit-endian: element `k` occupies bits `[k*b, (k+1)*b)` of the
//!   buffer, `b = bits * lanes`), and padded when `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED` is
//!   set. The header does not define the padded layout; this library assumes each element is
//!   padded to `ceil(b / 8)` whole bytes (one byte per element for b < 8), the header's own size
//!   formula. A legacy tensor carries no flags, so its sub-byte data is packed.

use crate::abi::{DLDataType, DLDataTypeCode as C};
use crate::rules::error::{Error, Fault};

/// How one element of a valid dtype is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Element {
    /// Bits one element occupies in memory (`bits * lanes`, or rounded up to whole bytes for a
    /// padded sub-byte type). At most 255 * 65535.
    pub storage_bits: u32,
    /// True when `bits * lanes` is not a multiple of 8.
    pub sub_byte: bool,
    /// True for a sub-byte type stored packed (no padding between elements).
    pub packed: bool,
}

impl Element {
    /// Bytes per element when elements are byte-sized or padded; `None` for packed sub-byte.
    pub const fn itemsize(self) -> Option<u32> {
        if self.packed {
            None
        } else {
            Some(self.storage_bits / 8)
        }
    }

    /// The natural alignment of an element in bytes: the largest power of two that divides its
    /// size in bytes (1 for packed sub-byte types). complex64 → 8, a 3-lane float32 → 4.
    pub const fn natural_alignment(self) -> u64 {
        match self.itemsize() {
            Some(0) | None => 1,
            Some(n) => 1u64 << n.trailing_zeros(),
        }
    }
}

/// Whether `bits` is allowed for `code` (lanes not considered). `None` for unknown codes.
#[inline(always)]
pub const fn bits_allowed(code: u8, bits: u8) -> Option<bool> {
    Some(match code {
        0 | 1 => matches!(bits, 1 | 2 | 4 | 8 | 16 | 32 | 64 | 128),
        2 => matches!(bits, 16 | 32 | 64 | 128),
        3 => bits != 0 && bits % 8 == 0,
        4 => bits == 16,
        5 => matches!(bits, 32 | 64 | 128),
        6 => bits == 8,
        7..=14 => bits == 8,
        15 | 16 => bits == 6,
        17 => bits == 4,
        _ => return None,
    })
}

/// The DLPack name of a code, for messages: `"kDLFloat"`.
pub const fn code_name(code: u8) -> &'static str {
    match code {
        0 => "kDLInt",
        1 => "kDLUInt",
        2 => "kDLFloat",
        3 => "kDLOpaqueHandle",
        4 => "kDLBfloat",
        5 => "kDLComplex",
        6 => "kDLBool",
        7 => "kDLFloat8_e3m4",
        8 => "kDLFloat8_e4m3",
        9 => "kDLFloat8_e4m3b11fnuz",
        10 => "kDLFloat8_e4m3fn",
        11 => "kDLFloat8_e4m3fnuz",
        12 => "kDLFloat8_e5m2",
        13 => "kDLFloat8_e5m2fnuz",
        14 => "kDLFloat8_e8m0fnu",
        15 => "kDLFloat6_e2m3fn",
        16 => "kDLFloat6_e3m2fn",
        17 => "kDLFloat4_e2m1fn",
        _ => "unknown",
    }
}

const fn allowed_text(code: u8) -> &'static str {
    match code {
        0 | 1 => "1, 2, 4, 8, 16, 32, 64 or 128",
        2 => "16, 32, 64 or 128",
        3 => "a non-zero multiple of 8",
        4 => "16",
        5 => "32, 64 or 128 (the size of the whole complex number)",
        6 => "8 (kDLBool is one byte per element)",
        7..=14 => "8",
        15 | 16 => "6 (DLPack 1.1: otherwise stop importing)",
        17 => "4 (DLPack 1.1: otherwise stop importing)",
        _ => "nothing",
    }
}

/// Check a dtype and describe its element storage. `padded` is the tensor's
/// `IS_SUBBYTE_TYPE_PADDED` flag (always false for legacy tensors).
#[inline(always)]
pub fn element(dtype: DLDataType, padded: bool) -> Result<Element, Error> {
    let DLDataType { code, bits, lanes } = dtype;
    if !matches!(bits_allowed(code, bits), Some(true)) || lanes == 0 {
        return Err(element_error(dtype));
    }
    let b = bits as u32 * lanes as u32;
    let sub_byte = b % 8 != 0;
    let packed = sub_byte && !padded;
    let storage_bits = if sub_byte && padded {
        b.div_ceil(8) * 8
    } else {
        b
    };
    Ok(Element {
        storage_bits,
        sub_byte,
        packed,
    })
}

/// The error of [`element`], out of line: the message is built only for a refused dtype.
#[cold]
#[inline(never)]
fn element_error(dtype: DLDataType) -> Error {
    let DLDataType { code, bits, .. } = dtype;
    match bits_allowed(code, bits) {
        None => Error::fault(
            Fault::InvalidDtype,
            format!(
                "tensor.dtype.code is {code}, which is not a DLPack 1.3 type code (0-17; \
                 unknown codes must be refused, DLPack 1.1)"
            ),
        ),
        Some(false) => Error::fault(
            Fault::InvalidDtype,
            format!(
                "tensor.dtype.bits is {bits} for code {code} ({}), but that code needs bits {}",
                code_name(code),
                allowed_text(code)
            ),
        ),
        Some(true) => Error::fault(
            Fault::InvalidDtype,
            "tensor.dtype.lanes is 0; it must be 1 for scalars or the vector width (DLPack)"
                .to_owned(),
        ),
    }
}

/// True for `(6, 8, 1)` only: a byte-sized bool, distinct from `uint8` `(1, 8, 1)`.
pub const fn is_bool(dtype: DLDataType) -> bool {
    dtype.code == C::kDLBool.0 && dtype.bits == 8 && dtype.lanes == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn dt(code: u8, bits: u8, lanes: u16) -> DLDataType {
        DLDataType { code, bits, lanes }
    }

    fn fault(r: Result<Element, Error>) -> Option<Fault> {
        match r {
            Err(Error::Tensor { fault, .. }) => Some(fault),
            _ => None,
        }
    }

    #[test]
    fn case_43_bool_is_byte_sized_and_distinct_from_uint8() {
        let b = element(dt(6, 8, 1), false).unwrap();
        assert_eq!(b.itemsize(), Some(1));
        assert!(is_bool(dt(6, 8, 1)));
        assert!(!is_bool(dt(1, 8, 1)));
        assert_eq!(element(dt(1, 8, 1), false).unwrap().itemsize(), Some(1));
        // Documented policy: kDLBool with bits != 8 is refused, packed or padded.
        assert_eq!(
            fault(element(dt(6, 1, 1), false)),
            Some(Fault::InvalidDtype)
        );
        assert_eq!(fault(element(dt(6, 1, 1), true)), Some(Fault::InvalidDtype));
    }

    #[test]
    fn case_45_bfloat16_needs_16_bits_and_vectors_are_accepted() {
        assert_eq!(element(dt(4, 16, 1), false).unwrap().itemsize(), Some(2));
        assert_eq!(
            fault(element(dt(4, 32, 1), false)),
            Some(Fault::InvalidDtype)
        );
        assert_eq!(element(dt(2, 16, 1), false).unwrap().itemsize(), Some(2));
        // Documented policy: vectors accepted for every code, itemsize bits*lanes/8.
        assert_eq!(element(dt(4, 16, 2), false).unwrap().itemsize(), Some(4));
    }

    #[test]
    fn sub_byte_packed_and_padded() {
        let p = element(dt(17, 4, 1), false).unwrap();
        assert!(p.packed && p.sub_byte && p.storage_bits == 4 && p.itemsize().is_none());
        let q = element(dt(17, 4, 1), true).unwrap();
        assert!(!q.packed && q.itemsize() == Some(1));
        assert_eq!(element(dt(15, 6, 1), true).unwrap().itemsize(), Some(1));
        assert_eq!(
            fault(element(dt(15, 8, 1), false)),
            Some(Fault::InvalidDtype)
        );
        assert_eq!(
            fault(element(dt(17, 8, 1), false)),
            Some(Fault::InvalidDtype)
        );
        // Two fp4 lanes make one byte: not sub-byte.
        assert_eq!(element(dt(17, 4, 2), false).unwrap().itemsize(), Some(1));
        assert_eq!(
            fault(element(dt(2, 32, 0), false)),
            Some(Fault::InvalidDtype)
        );
        assert_eq!(
            fault(element(dt(18, 32, 1), false)),
            Some(Fault::InvalidDtype)
        );
        assert_eq!(
            fault(element(dt(200, 8, 1), false)),
            Some(Fault::InvalidDtype)
        );
    }

    #[test]
    fn every_triple_is_classified_without_panic() {
        for code in 0..=255u8 {
            for bits in 0..=255u8 {
                for lanes in [0u16, 1, 2, 3, 65535] {
                    for padded in [false, true] {
                        if let Ok(e) = element(dt(code, bits, lanes), padded) {
                            assert!(e.storage_bits >= bits as u32 * lanes as u32);
                            assert!(e.natural_alignment().is_power_of_two());
                        }
                    }
                }
            }
        }
    }
}
