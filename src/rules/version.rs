//! DLPack version checks and the array API's version negotiation.
//!
//! Rules (DLPack 1.0, `DLPackVersion` doc; array API `__dlpack__` notes):
//! - a major change means the layout of `DLManagedTensorVersioned` changed: a consumer that does
//!   not know the major may call the deleter and must read nothing else;
//! - a minor change only adds (enum values, flags): the tensor is usable if every field is
//!   understood, so a newer minor is accepted and reported as such.

use crate::abi::DLPackVersion;
use crate::rules::{Error, Refusal};

/// How a received version relates to the newest one this library understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compat {
    /// Same major and minor as this library (1.3).
    Exact,
    /// Same major, older minor: everything in it is understood.
    OlderMinor,
    /// Same major, newer minor: usable, but it may carry enum values (device types, dtype
    /// codes, flag bits) this library does not know; those are rejected where they matter.
    NewerMinor,
}

impl Compat {
    /// The C value (`DLPACK_HELPERS_VERSION_*`).
    pub const fn as_raw(self) -> i32 {
        match self {
            Compat::Exact => 0,
            Compat::OlderMinor => 1,
            Compat::NewerMinor => 2,
        }
    }
}

/// Check a version against the one this library reads. `what` names the argument in the error.
#[inline]
pub fn check(version: DLPackVersion, what: &'static str) -> Result<Compat, Error> {
    let ours = DLPackVersion::CURRENT;
    if version.major != ours.major {
        return Err(Error::UnsupportedVersion {
            what,
            found: version,
            supported: ours.major,
        });
    }
    Ok(match version.minor.cmp(&ours.minor) {
        core::cmp::Ordering::Equal => Compat::Exact,
        core::cmp::Ordering::Less => Compat::OlderMinor,
        core::cmp::Ordering::Greater => Compat::NewerMinor,
    })
}

/// What a producer can export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exporter {
    /// The producer's own DLPack version (what it writes into `DLManagedTensorVersioned`).
    /// A major of 0 means the producer only knows the legacy struct.
    pub version: DLPackVersion,
    /// The producer still exports the legacy `DLManagedTensor` (capsule `"dltensor"`).
    pub exports_legacy: bool,
    /// The producer's `__dlpack__` predates the `max_version` keyword (array API 2023.12):
    /// passing it is a `TypeError`, and the consumer must retry without it.
    pub no_max_version_keyword: bool,
}

/// The struct a producer exports, chosen by [`negotiate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// Legacy `DLManagedTensor` in a `"dltensor"` capsule (no version, no flags).
    Legacy,
    /// `DLManagedTensorVersioned` of this version in a `"dltensor_versioned"` capsule.
    Versioned(DLPackVersion),
}

/// The array API's recommended producer logic for `__dlpack__(max_version=…)`:
///
/// - `max_version` absent: legacy if the producer still exports it, else `BufferError`
///   ([`Refusal::NoLegacyExport`], `NO_COMMON_VERSION`);
/// - the producer predates the keyword and `max_version` is given: `TypeError`
///   ([`Refusal::MaxVersionKeyword`], `KEYWORD_NOT_UNDERSTOOD`), so the consumer retries without it;
/// - producer major 0 (legacy only): legacy;
/// - `max_version >= producer version`, or the same major: versioned, the producer's version
///   (the consumer must check what it got: the minor may be higher than it asked for);
/// - the consumer's major is older: legacy for a 0.x consumer if still exported, else
///   `BufferError`.
#[inline(always)]
pub fn negotiate(
    producer: Exporter,
    max_version: Option<DLPackVersion>,
) -> Result<Export, Refusal> {
    let p = producer.version;
    let Some(m) = max_version else {
        return if producer.exports_legacy || p.major == 0 {
            Ok(Export::Legacy)
        } else {
            Err(Refusal::NoLegacyExport { producer: p })
        };
    };
    if producer.no_max_version_keyword {
        return Err(Refusal::MaxVersionKeyword { max: m });
    }
    if p.major == 0 {
        return Ok(Export::Legacy);
    }
    if m >= p || m.major == p.major {
        return Ok(Export::Versioned(p));
    }
    // The consumer's major is older than the producer's.
    if m.major == 0 && producer.exports_legacy {
        return Ok(Export::Legacy);
    }
    Err(Refusal::NoStructForMajor {
        max: m,
        producer: p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: fn(u32, u32) -> DLPackVersion = DLPackVersion::new;

    #[test]
    fn check_majors_and_minors() {
        assert_eq!(check(V(1, 3), "t"), Ok(Compat::Exact));
        assert_eq!(check(V(1, 0), "t"), Ok(Compat::OlderMinor));
        assert_eq!(check(V(1, 9), "t"), Ok(Compat::NewerMinor));
        assert!(matches!(
            check(V(0, 8), "t"),
            Err(Error::UnsupportedVersion { .. })
        ));
        assert!(matches!(
            check(V(2, 0), "t"),
            Err(Error::UnsupportedVersion { .. })
        ));
    }

    /// Peer case 20: `max_version` must be honoured, never ignored.
    #[test]
    fn case_20_max_version_honoured() {
        let with_legacy = Exporter {
            version: V(1, 3),
            exports_legacy: true,
            no_max_version_keyword: false,
        };
        assert_eq!(negotiate(with_legacy, None), Ok(Export::Legacy));
        assert_eq!(
            negotiate(with_legacy, Some(V(1, 0))),
            Ok(Export::Versioned(V(1, 3)))
        );
        assert_eq!(
            negotiate(with_legacy, Some(V(1, 5))),
            Ok(Export::Versioned(V(1, 3)))
        );
        assert_eq!(negotiate(with_legacy, Some(V(0, 8))), Ok(Export::Legacy));
        assert_eq!(
            negotiate(with_legacy, Some(V(2, 0))),
            Ok(Export::Versioned(V(1, 3)))
        );
        let no_legacy = Exporter {
            exports_legacy: false,
            ..with_legacy
        };
        assert!(matches!(
            negotiate(no_legacy, None).map_err(Error::from),
            Err(Error::NoCommonVersion(_))
        ));
        assert!(matches!(
            negotiate(no_legacy, Some(V(0, 8))).map_err(Error::from),
            Err(Error::NoCommonVersion(_))
        ));
    }
}
