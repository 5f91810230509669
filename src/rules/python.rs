//! The Python embedding's rules, as safe logic: capsule names and their state machine, and the
//! `__dlpack__` keyword plan with its `TypeError` retry. An exporter's `dl_device`/`copy`/
//! `stream` decision is [`crate::rules::stream::resolve`] (one place for that rule).
//!
//! The C side (`capi/python/`) resolves the Python C API at run time and calls into here.

use crate::rules::Error;
use core::ffi::CStr;

/// Capsule name of an unconsumed legacy `DLManagedTensor` (DLPack Python specification).
pub const CAPSULE_LEGACY: &CStr = c"dltensor";
/// Capsule name of a consumed legacy tensor: its destructor must do nothing.
pub const CAPSULE_LEGACY_USED: &CStr = c"used_dltensor";
/// Capsule name of an unconsumed `DLManagedTensorVersioned`.
pub const CAPSULE_VERSIONED: &CStr = c"dltensor_versioned";
/// Capsule name of a consumed versioned tensor.
pub const CAPSULE_VERSIONED_USED: &CStr = c"used_dltensor_versioned";
/// Capsule name of the static `DLPackExchangeAPI` table (DLPack 1.3 type attribute).
pub const CAPSULE_EXCHANGE_API: &CStr = c"dlpack_exchange_api";

/// What a capsule name says about the capsule (DLPack Python specification; spec §6 item 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapsuleState {
    /// `"dltensor"`: the producer still owns a legacy tensor.
    Legacy,
    /// `"dltensor_versioned"`: the producer still owns a versioned tensor.
    Versioned,
    /// `"used_dltensor"`: a consumer owns it; the capsule destructor does nothing.
    LegacyUsed,
    /// `"used_dltensor_versioned"`.
    VersionedUsed,
    /// Any other name (for example IREE's non-standard `"dltensor_used"`, peer case 8).
    Other,
}

/// Classify a capsule name, byte for byte (no prefix or case folding).
pub fn classify(name: &[u8]) -> CapsuleState {
    if name == CAPSULE_LEGACY.to_bytes() {
        CapsuleState::Legacy
    } else if name == CAPSULE_VERSIONED.to_bytes() {
        CapsuleState::Versioned
    } else if name == CAPSULE_LEGACY_USED.to_bytes() {
        CapsuleState::LegacyUsed
    } else if name == CAPSULE_VERSIONED_USED.to_bytes() {
        CapsuleState::VersionedUsed
    } else {
        CapsuleState::Other
    }
}

/// Which keywords a consumer passes to `__dlpack__` in one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keywords {
    pub max_version: bool,
    pub stream: bool,
    pub dl_device: bool,
    pub copy: bool,
}

/// The first attempt passes `max_version` always (peer case 18: a consumer that never asks gets
/// the legacy struct, which cannot say read-only) and every keyword the request sets.
pub fn first_attempt(stream: bool, dl_device: bool, copy: bool) -> Keywords {
    Keywords {
        max_version: true,
        stream,
        dl_device,
        copy,
    }
}

/// After a `TypeError` from `attempt`: the keyword-less retry of the array API, or an error.
///
/// A `TypeError` is the array API's "keyword not understood" signal (an older producer). The
/// retry drops `max_version` (and keeps `stream`, which predates it), but only when neither
/// `dl_device` nor `copy` was requested: dropping them would silently change the request (peer
/// case 21, as NumPy does). Other exceptions (`NotImplementedError`, `BufferError`) are never
/// retried: they are not the keyword signal.
pub fn retry_after_type_error(attempt: Keywords, message: &str) -> Result<Keywords, Error> {
    if !attempt.max_version {
        return Err(Error::ProducerTypeError(message.to_owned()));
    }
    if attempt.dl_device || attempt.copy {
        return Err(Error::ProducerTypeError(format!(
            "{message} (the producer's __dlpack__ raised TypeError for max_version/dl_device/copy; \
             not retried without them because dl_device or copy was requested and dropping them \
             would change the request)"
        )));
    }
    Ok(Keywords {
        max_version: false,
        ..attempt
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Peer case 8: the names are the specification's strings, byte for byte.
    #[test]
    fn case_8_capsule_names_are_exact() {
        assert_eq!(CAPSULE_LEGACY.to_bytes(), b"dltensor");
        assert_eq!(CAPSULE_LEGACY_USED.to_bytes(), b"used_dltensor");
        assert_eq!(CAPSULE_VERSIONED.to_bytes(), b"dltensor_versioned");
        assert_eq!(
            CAPSULE_VERSIONED_USED.to_bytes(),
            b"used_dltensor_versioned"
        );
        assert_eq!(CAPSULE_EXCHANGE_API.to_bytes(), b"dlpack_exchange_api");
        assert_eq!(classify(b"dltensor_used"), CapsuleState::Other);
        assert_eq!(classify(b"DLTensor"), CapsuleState::Other);
        assert_eq!(classify(b"dltensor"), CapsuleState::Legacy);
        assert_eq!(
            classify(b"used_dltensor_versioned"),
            CapsuleState::VersionedUsed
        );
    }

    /// Peer case 21: retry only on TypeError, and only when nothing but max_version is dropped.
    #[test]
    fn case_21_retry_plan() {
        let first = first_attempt(false, false, false);
        assert!(first.max_version);
        let retry = retry_after_type_error(first, "TypeError: x").unwrap();
        assert!(!retry.max_version);
        assert!(matches!(
            retry_after_type_error(retry, "again"),
            Err(Error::ProducerTypeError(_))
        ));
        let with_copy = first_attempt(false, false, true);
        assert!(matches!(
            retry_after_type_error(with_copy, "t"),
            Err(Error::ProducerTypeError(_))
        ));
        let with_dev = first_attempt(false, true, false);
        assert!(matches!(
            retry_after_type_error(with_dev, "t"),
            Err(Error::ProducerTypeError(_))
        ));
        let with_stream = first_attempt(true, false, false);
        assert!(retry_after_type_error(with_stream, "t").unwrap().stream);
    }
}
