//! Device-type facts: which device types host code may dereference.
//!
//! DLPack gives no normative definition of "CPU-accessible" (spec §6 item 18). This module
//! decides it from the device type alone, with the reason for each type:
//!
//! | device type | value | host access | reason |
//! |---|---|---|---|
//! | `kDLCPU` | 1 | always | host memory |
//! | `kDLCUDA` | 2 | never | CUDA device memory |
//! | `kDLCUDAHost` | 3 | always | pinned host memory from `cudaMallocHost` (DLPack 0.5) |
//! | `kDLOpenCL` | 4 | never | `data` is a `cl_mem` handle |
//! | `kDLVulkan` | 7 | never | `data` is a Vulkan buffer handle |
//! | `kDLMetal` | 8 | never | `data` is an `id<MTLBuffer>` |
//! | `kDLVPI` | 9 | never | Verilog simulator buffer |
//! | `kDLROCM` | 10 | never | ROCm device memory |
//! | `kDLROCMHost` | 11 | always | pinned host memory from `hipMallocHost` (DLPack 0.6) |
//! | `kDLExtDev` | 12 | depends | extension device, semantics implementation-defined (DLPack 0.3) |
//! | `kDLCUDAManaged` | 13 | always | `cudaMallocManaged` memory is addressable from the host (DLPack 0.6) |
//! | `kDLOneAPI` | 14 | depends | USM: the oneAPI runtime must be asked for the USM kind (DLPack 0.7) |
//! | `kDLWebGPU` | 15 | never | WebGPU buffer |
//! | `kDLHexagon` | 16 | never | Hexagon DSP memory |
//! | `kDLMAIA` | 17 | never | MAIA device memory |
//! | `kDLTrn` | 18 | never | Trainium device memory |
//! | anything else | 0, 5, 6, 19, 20, negative, ≥ 21 | depends | not a DLPack 1.3 device type: unknown to this library |
//!
//! 19 (`kDLTPU`) and 20 (`kDLTPUHost`) were assigned on DLPack's main branch after 1.3; they are
//! not part of the 1.3 ABI this library implements, so they are "depends" (unknown) like every
//! other unassigned value.
//!
//! Which `DLDevice` values the library accepts ([`check`], issue 22, peer cases 54 and 55):
//!
//! - a negative `device_id` never (every export that accepts, creates or returns a device): an
//!   index-less device is not `-1`, and an id the library cannot establish is a distinct
//!   answer, never `-1`;
//! - a device type DLPack 1.3 does not assign (0, 5, 6, 19, 20, negative, ≥ 21) only where
//!   the caller passes unknown types through (consumer helpers: validation, host access,
//!   names of assigned types only) or opts in (producer helpers with
//!   `DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE`, `dlpack_device_check` with
//!   `DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE`). A tensor this library makes declares DLPack
//!   1.3, whose `DLDeviceType` has no 19 or 20: a producer that emits JAX's `kDLTPU` /
//!   `kDLTPUHost` opts in and knows its consumers read DLPack's main branch.

use crate::abi::{DLDevice, DLDeviceType};
use crate::rules::Error;

/// Whether host code may dereference memory of a device type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HostAccess {
    /// The device type alone guarantees host code can read and write the memory.
    Always,
    /// The device type alone guarantees host code can not dereference the memory.
    Never,
    /// It depends on the allocation (oneAPI USM kind, extension device) or the device type is
    /// unknown to this library: ask the device's runtime.
    Depends,
}

impl HostAccess {
    /// The C value (`DLPACK_HELPERS_HOST_ACCESS_*`).
    pub const fn as_raw(self) -> i32 {
        match self {
            HostAccess::Never => 0,
            HostAccess::Always => 1,
            HostAccess::Depends => 2,
        }
    }
}

/// Classify a device type (see the module table).
#[inline]
pub const fn host_access(device_type: DLDeviceType) -> HostAccess {
    match device_type.0 {
        1 | 3 | 11 | 13 => HostAccess::Always,
        2 | 4 | 7 | 8 | 9 | 10 | 15 | 16 | 17 | 18 => HostAccess::Never,
        _ => HostAccess::Depends,
    }
}

/// True exactly when [`host_access`] is [`HostAccess::Always`]: `kDLCPU`, `kDLCUDAHost`,
/// `kDLROCMHost`, `kDLCUDAManaged`. The device id is not consulted (DLPack 0.6: it is 0 for
/// CPU, pinned and managed memory).
#[inline]
pub const fn is_cpu_accessible(device: DLDevice) -> bool {
    matches!(device.device_type.0, 1 | 3 | 11 | 13)
}

/// True for the device types named in DLPack 1.3 (1–4, 7–18).
#[inline]
pub const fn is_known_device_type(device_type: DLDeviceType) -> bool {
    matches!(device_type.0, 1..=4 | 7..=18)
}

/// Whether a device is one the library accepts, creates or returns: `device_id >= 0` always,
/// and, unless `allow_unassigned`, a device type DLPack 1.3 assigns (see the module docs).
/// `what` names the device in the message (`"device"`, `"tensor.device"`, `"dl_device"`).
#[inline]
pub fn check(device: DLDevice, allow_unassigned: bool, what: &str) -> Result<(), Error> {
    if device.device_id < 0 {
        return Err(negative_id(device, what));
    }
    if !allow_unassigned && !is_known_device_type(device.device_type) {
        return Err(unassigned(device, what));
    }
    Ok(())
}

/// Whether `device` passes [`check_id`] (its id is a non-negative ordinal), without building
/// an error: for success paths that report a refusal elsewhere.
#[inline(always)]
pub fn id_ok(device: DLDevice) -> bool {
    device.device_id >= 0
}

/// Only the id rule of [`check`] (consumer helpers: unknown device types pass through).
#[inline]
pub fn check_id(device: DLDevice, what: &str) -> Result<(), Error> {
    if !id_ok(device) {
        return Err(negative_id(device, what));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn negative_id(device: DLDevice, what: &str) -> Error {
    Error::InvalidDevice(format!(
        "{what}.device_id is {} on device type {}: a device id is a non-negative ordinal (an \
         index-less device is not -1; peer case 54)",
        device.device_id, device.device_type.0
    ))
}

#[cold]
#[inline(never)]
fn unassigned(device: DLDevice, what: &str) -> Error {
    let post = if matches!(device.device_type.0, 19 | 20) {
        " (19 kDLTPU and 20 kDLTPUHost were assigned on DLPack's main branch after 1.3)"
    } else {
        ""
    };
    Error::InvalidDevice(format!(
        "{what}.device_type is {}, which DLPack 1.3 does not assign{post}: a producer helper \
         makes tensors only on DLPack 1.3 device types unless the caller opts in \
         (DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE; peer case 55)",
        device.device_type.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_accessible_agrees_with_classification_for_every_value() {
        for v in (-300..300).chain([i32::MIN, i32::MAX, 999]) {
            let d = DLDevice {
                device_type: DLDeviceType(v),
                device_id: 0,
            };
            assert_eq!(
                is_cpu_accessible(d),
                host_access(d.device_type) == HostAccess::Always,
                "{v}"
            );
        }
    }

    #[test]
    fn check_refuses_negative_ids_and_unassigned_types() {
        let d = |t, id| DLDevice {
            device_type: DLDeviceType(t),
            device_id: id,
        };
        for t in (-3..=25).chain([99, i32::MIN, i32::MAX]) {
            for id in [0, 1, i32::MAX] {
                assert_eq!(
                    check(d(t, id), false, "d").is_ok(),
                    is_known_device_type(DLDeviceType(t))
                );
                assert!(check(d(t, id), true, "d").is_ok());
                assert!(check_id(d(t, id), "d").is_ok());
            }
            for id in [-1, i32::MIN] {
                assert!(matches!(
                    check(d(t, id), true, "d"),
                    Err(Error::InvalidDevice(_))
                ));
                assert!(matches!(
                    check_id(d(t, id), "d"),
                    Err(Error::InvalidDevice(_))
                ));
            }
        }
        let Err(Error::InvalidDevice(m)) = check(d(19, 0), false, "device") else {
            panic!()
        };
        assert!(m.contains("kDLTPU"), "{m}");
    }
}
