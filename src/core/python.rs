//! The Python embedding's rules, as safe logic: capsule names and their state machine, the
//! `__dlpack__` keyword plan and its `TypeError` retry, and the device/copy decision of an
//! exporter (array API `__dlpack__(dl_device=…, copy=…)`).
//!
//! The C side (`capi/python/`) resolves the Python C API at run time and calls into here.

use crate::abi::{DLDevice, DLDeviceType};
use crate::core::Error;
use crate::core::device;
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

/// What an exporter must do for a consumer's `dl_device` and `copy` (array API `__dlpack__`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevicePlan {
    /// Export the memory as it is, reporting this device; no copy, `IS_COPIED` clear.
    Share(DLDevice),
    /// The producer must copy to this device and set `DLPACK_FLAG_BITMASK_IS_COPIED`.
    Copy(DLDevice),
}

/// The device/copy decision of `__dlpack__(dl_device=…, copy=…, stream=…)` for a tensor on `src`.
///
/// - `requested` `None`: the tensor's own device; `copy` `Some(true)` asks for a copy there.
/// - `requested` `(kDLCPU, 0)`: `stream` must be `None` (array API) else `InvalidArgument`.
///   *Policy (peer case 47):* host-accessible memory (`kDLCUDAHost` 3, `kDLROCMHost` 11,
///   `kDLCUDAManaged` 13) serves a CPU request without a copy and is reported as `(kDLCPU, 0)`, as
///   NumPy does; the producer still owes a completed synchronisation before it returns
///   (managed memory in particular). Memory the host cannot reach needs a copy: `copy=False` →
///   `CopyForbidden` (`BufferError`), `copy=None`/`True` → [`DevicePlan::Copy`].
/// - `requested` equal to `src`: share (or copy if `copy=True`).
/// - any other device: `UnsupportedDevice` (`BufferError`): this decision covers host exports only.
pub fn plan_device(
    src: DLDevice,
    requested: Option<DLDevice>,
    copy: Option<bool>,
    stream_given: bool,
) -> Result<DevicePlan, Error> {
    let cpu = DLDevice {
        device_type: DLDeviceType::kDLCPU,
        device_id: 0,
    };
    let target = requested.unwrap_or(src);
    if requested.is_some() && target.device_type == DLDeviceType::kDLCPU && stream_given {
        return Err(Error::invalid(
            "stream must be None when dl_device is (kDLCPU, 0) (array API __dlpack__: the \
             producer synchronises before returning)",
        ));
    }
    if target == src {
        return Ok(if copy == Some(true) {
            DevicePlan::Copy(src)
        } else {
            DevicePlan::Share(src)
        });
    }
    if target.device_type != DLDeviceType::kDLCPU {
        return Err(Error::UnsupportedDevice(format!(
            "dl_device=({}, {}) was requested for a tensor on ({}, {}); only the tensor's own device \
             or (kDLCPU, 0) can be served (array API: BufferError)",
            target.device_type.0, target.device_id, src.device_type.0, src.device_id
        )));
    }
    let host = device::is_cpu_accessible(src);
    match (host, copy) {
        (true, Some(true)) | (false, None) | (false, Some(true)) => Ok(DevicePlan::Copy(cpu)),
        (true, _) => Ok(DevicePlan::Share(cpu)),
        (false, Some(false)) => Err(Error::CopyForbidden(format!(
            "dl_device=(kDLCPU, 0) with copy=False, but the tensor is on device type {} which the \
             host cannot read: a copy would be needed (array API: BufferError, not ValueError)",
            src.device_type.0
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(t: i32, id: i32) -> DLDevice {
        DLDevice {
            device_type: DLDeviceType(t),
            device_id: id,
        }
    }

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
        assert_eq!(
            retry_after_type_error(with_stream, "t").unwrap().stream,
            true
        );
    }

    /// Peer case 47: device negotiation of an exporter.
    #[test]
    fn case_47_device_negotiation() {
        let cpu = dev(1, 0);
        assert!(matches!(
            plan_device(dev(2, 0), Some(cpu), Some(false), false),
            Err(Error::CopyForbidden(_))
        ));
        assert_eq!(
            plan_device(dev(2, 0), Some(cpu), None, false),
            Ok(DevicePlan::Copy(cpu))
        );
        assert_eq!(
            plan_device(dev(2, 0), Some(cpu), Some(true), false),
            Ok(DevicePlan::Copy(cpu))
        );
        assert_eq!(
            plan_device(cpu, Some(cpu), Some(true), false),
            Ok(DevicePlan::Copy(cpu))
        );
        assert_eq!(
            plan_device(cpu, Some(cpu), Some(false), false),
            Ok(DevicePlan::Share(cpu))
        );
        // Policy: host-accessible memory serves a CPU request without a copy, reported as (1, 0).
        assert_eq!(
            plan_device(dev(3, 0), Some(cpu), Some(false), false),
            Ok(DevicePlan::Share(cpu))
        );
        assert_eq!(
            plan_device(dev(13, 0), Some(cpu), Some(false), false),
            Ok(DevicePlan::Share(cpu))
        );
        assert!(matches!(
            plan_device(dev(2, 0), Some(cpu), None, true),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            plan_device(cpu, Some(dev(2, 0)), None, false),
            Err(Error::UnsupportedDevice(_))
        ));
        assert_eq!(
            plan_device(dev(2, 1), None, None, true),
            Ok(DevicePlan::Share(dev(2, 1)))
        );
    }
}
