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

use crate::abi::{DLDevice, DLDeviceType};

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
}
