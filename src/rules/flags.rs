//! `DLManagedTensorVersioned.flags`: which bits are defined and what writability they mean.
//!
//! Policy:
//! - Bits the declared version does not define are a violation from a producer that declares
//!   minor ≤ 3 (1.0 defines `READ_ONLY` and `IS_COPIED`; 1.1 adds `IS_SUBBYTE_TYPE_PADDED`;
//!   1.2 and 1.3 add none); from a newer minor they are accepted and ignored (DLPack 1.0: a minor
//!   change only adds, and the spec gives no rule for unknown bits).
//! - Writability (peer case 46, array-api#749): a versioned tensor is read-only exactly when
//!   `READ_ONLY` is set, writable otherwise; a legacy tensor carries no flags, so its
//!   writability is *unknown*. The default for a caller that must decide is documented where
//!   the decision is made (validation: unknown counts as not writable unless the caller opts in).

use crate::abi::{
    DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED,
    DLPACK_FLAG_BITMASK_READ_ONLY, DLPackVersion,
};
use crate::rules::error::{Error, Fault};

/// Every flag bit DLPack 1.3 defines.
pub const KNOWN: u64 = DLPACK_FLAG_BITMASK_READ_ONLY
    | DLPACK_FLAG_BITMASK_IS_COPIED
    | DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;

/// Whether a consumer may write through a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Writability {
    /// Versioned, `READ_ONLY` clear.
    Writable,
    /// Versioned, `READ_ONLY` set.
    ReadOnly,
    /// Legacy: the struct cannot say.
    Unknown,
}

impl Writability {
    /// The C value (`DLPACK_HELPERS_WRITABILITY_*`).
    pub const fn as_raw(self) -> i32 {
        match self {
            Writability::ReadOnly => 0,
            Writability::Writable => 1,
            Writability::Unknown => 2,
        }
    }
}

/// Writability from flags: `None` for a legacy tensor.
pub const fn writability(flags: Option<u64>) -> Writability {
    match flags {
        None => Writability::Unknown,
        Some(f) if f & DLPACK_FLAG_BITMASK_READ_ONLY != 0 => Writability::ReadOnly,
        Some(_) => Writability::Writable,
    }
}

/// The flag bits DLPack 1.0 defines (`IS_SUBBYTE_TYPE_PADDED` came with 1.1).
pub const KNOWN_1_0: u64 = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;

/// The flag bits a producer declaring `version` (major 1) may set: 1.0 defines `READ_ONLY` and
/// `IS_COPIED`, 1.1 adds `IS_SUBBYTE_TYPE_PADDED`, 1.2 and 1.3 add none. For a minor newer than
/// 1.3 this is still [`KNOWN`]: the bits this library knows; [`check`] accepts the others.
#[inline]
pub const fn known_for(version: DLPackVersion) -> u64 {
    if version.minor == 0 { KNOWN_1_0 } else { KNOWN }
}

/// Flag bits of `flags` that `version` does not define, where that is a violation: none from a
/// minor newer than 1.3 (see the module policy).
#[inline]
pub const fn undefined_bits(flags: u64, version: DLPackVersion) -> u64 {
    if version.major == 1 && version.minor <= 3 {
        flags & !known_for(version)
    } else {
        0
    }
}

/// Reject flag bits the producer's version does not define (see the module policy).
#[inline]
pub fn check(flags: u64, version: DLPackVersion) -> Result<(), Error> {
    check_named(flags, version, "tensor->flags")
}

/// [`check`], naming the field `what` in the message (for example "the capsule's
/// tensor->flags" on import).
#[inline]
pub fn check_named(flags: u64, version: DLPackVersion, what: &str) -> Result<(), Error> {
    let unknown = undefined_bits(flags, version);
    if unknown != 0 {
        let known = if version.minor == 0 {
            "READ_ONLY 0x1, IS_COPIED 0x2"
        } else {
            "READ_ONLY 0x1, IS_COPIED 0x2, IS_SUBBYTE_TYPE_PADDED 0x4"
        };
        return Err(Error::fault(
            Fault::InvalidFlags,
            format!(
                "{what} has bits {unknown:#x} that DLPack {}.{} does not define (known: \
                 {known})",
                version.major, version.minor
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_46_read_only_flag_decides_writability() {
        assert_eq!(writability(Some(0)), Writability::Writable);
        assert_eq!(
            writability(Some(DLPACK_FLAG_BITMASK_READ_ONLY)),
            Writability::ReadOnly
        );
        assert_eq!(
            writability(Some(DLPACK_FLAG_BITMASK_IS_COPIED)),
            Writability::Writable
        );
        assert_eq!(
            writability(Some(
                DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED
            )),
            Writability::ReadOnly
        );
        assert_eq!(writability(None), Writability::Unknown);
    }

    #[test]
    fn unknown_bits_depend_on_the_minor() {
        assert!(check(KNOWN, DLPackVersion::new(1, 3)).is_ok());
        assert!(check(0x8, DLPackVersion::new(1, 3)).is_err());
        assert!(check(0x8, DLPackVersion::new(1, 4)).is_ok());
    }

    #[test]
    fn padded_bit_needs_minor_1() {
        let padded = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
        let e = check(padded, DLPackVersion::new(1, 0)).unwrap_err();
        assert!(e.to_string().contains("0x4"), "{e}");
        assert!(e.to_string().contains("1.0"), "{e}");
        assert!(check(KNOWN_1_0, DLPackVersion::new(1, 0)).is_ok());
        for minor in 1..=4 {
            assert!(
                check(KNOWN, DLPackVersion::new(1, minor)).is_ok(),
                "1.{minor}"
            );
        }
        assert_eq!(known_for(DLPackVersion::new(1, 0)), KNOWN_1_0);
        assert_eq!(known_for(DLPackVersion::new(1, 1)), KNOWN);
        assert_eq!(known_for(DLPackVersion::new(1, 9)), KNOWN);
    }
}
