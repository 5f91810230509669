//! `DLManagedTensorVersioned.flags`: which bits are defined and what writability they mean.
//!
//! Policy:
//! - Bits DLPack 1.3 does not define (3 and above) are a violation from a producer that
//!   declares minor ≤ 3; from a newer minor they are accepted and ignored (DLPack 1.0: a minor
//!   change only adds, and the spec gives no rule for unknown bits).
//! - Writability (peer case 46, array-api#749): a versioned tensor is read-only exactly when
//!   `READ_ONLY` is set, writable otherwise; a legacy tensor carries no flags, so its
//!   writability is *unknown*. The default for a caller that must decide is documented where
//!   the decision is made (validation: unknown counts as not writable unless the caller opts in).

use crate::abi::{
    DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED,
    DLPACK_FLAG_BITMASK_READ_ONLY, DLPackVersion,
};
use crate::core::error::{Error, Fault};

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

/// Reject flag bits the producer's version does not define (see the module policy).
#[inline]
pub fn check(flags: u64, version: DLPackVersion) -> Result<(), Error> {
    let unknown = flags & !KNOWN;
    if unknown != 0 && version.major == 1 && version.minor <= 3 {
        return Err(Error::fault(
            Fault::InvalidFlags,
            format!(
                "tensor->flags has bits {unknown:#x} that DLPack {}.{} does not define (known: \
                 READ_ONLY 0x1, IS_COPIED 0x2, IS_SUBBYTE_TYPE_PADDED 0x4)",
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
}
