//! Device queries.

use crate::abi::DLDevice;
use crate::capi::boundary;
use crate::rules::device;

/// Three-way answer of `dlpack_device_host_access`: one of the `DLPACK_HELPERS_HOST_ACCESS_*`
/// values.
pub type dlpack_helpers_host_access = i32;

/// Host code can never dereference memory of this device type (device memory or an opaque
/// handle).
pub const DLPACK_HELPERS_HOST_ACCESS_NEVER: dlpack_helpers_host_access = 0;
/// Host code can always dereference memory of this device type.
pub const DLPACK_HELPERS_HOST_ACCESS_ALWAYS: dlpack_helpers_host_access = 1;
/// It depends on the allocation, or the device type is unknown to this library: ask the
/// device's runtime (for `kDLOneAPI`, the USM kind of the pointer).
pub const DLPACK_HELPERS_HOST_ACCESS_DEPENDS: dlpack_helpers_host_access = 2;

/// Whether host (CPU) code may dereference a tensor's memory, judged from the device type alone.
///
/// True exactly for `kDLCPU` (1), `kDLCUDAHost` (3, pinned host memory), `kDLROCMHost` (11,
/// pinned host memory) and `kDLCUDAManaged` (13, managed memory, addressable from the host);
/// false for every other value, known or unknown, including the "depends" types of
/// `dlpack_device_host_access` (`kDLExtDev`, `kDLOneAPI`). `device_id` is not consulted
/// (DLPack 0.6: it is 0 for CPU, pinned and managed memory). Managed memory may still require the
/// device to be idle on GPUs without concurrent managed access.
///
/// Thread-safe, never fails, no side effects.
#[unsafe(no_mangle)]
pub extern "C" fn dlpack_is_cpu_accessible(device: DLDevice) -> bool {
    boundary::value(false, || device::is_cpu_accessible(device))
}

/// Three-way classification of host access for a device type, for callers that can look
/// further than `dlpack_is_cpu_accessible`. The answer for each `device.device_type`:
///
/// - `DLPACK_HELPERS_HOST_ACCESS_ALWAYS`: `kDLCPU` (1) host memory; `kDLCUDAHost` (3) pinned
///   memory from `cudaMallocHost`; `kDLROCMHost` (11) pinned memory from `hipMallocHost`;
///   `kDLCUDAManaged` (13) memory from `cudaMallocManaged`.
/// - `DLPACK_HELPERS_HOST_ACCESS_NEVER`: `kDLCUDA` (2), `kDLROCM` (10), `kDLVPI` (9),
///   `kDLWebGPU` (15), `kDLHexagon` (16), `kDLMAIA` (17), `kDLTrn` (18) device memory;
///   `kDLOpenCL` (4), `kDLVulkan` (7), `kDLMetal` (8) opaque buffer handles.
/// - `DLPACK_HELPERS_HOST_ACCESS_DEPENDS`: `kDLExtDev` (12, semantics implementation-defined),
///   `kDLOneAPI` (14, unified shared memory: the oneAPI runtime must be asked for the USM kind,
///   DLPack 0.7), and every value DLPack 1.3 does not assign (0, 5, 6, negative values, 19 and
///   above; 19 `kDLTPU` and 20 `kDLTPUHost` exist only after DLPack 1.3).
///
/// `device_id` is not consulted. Thread-safe, never fails, no side effects.
#[unsafe(no_mangle)]
pub extern "C" fn dlpack_device_host_access(device: DLDevice) -> dlpack_helpers_host_access {
    boundary::value(DLPACK_HELPERS_HOST_ACCESS_DEPENDS, || {
        device::host_access(device.device_type).as_raw()
    })
}

/// Option bit of `dlpack_device_check`: accept a device type DLPack 1.3 does not assign (the
/// consumer rule: a consumer passes unknown types through).
pub const DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE: u32 = 0x1;

/// Whether a `DLDevice` is one this library accepts, creates and returns: the one device rule
/// of every export, for callers and bindings that hold a device of their own (the Python
/// package's `Device` asks it instead of restating it).
///
/// - `device.device_id` must be non-negative, always: an index-less device is not `-1`, and an
///   id this library cannot establish is a distinct answer, never `-1` (peer case 54).
/// - `device.device_type` must be one DLPack 1.3 assigns (1-4, 7-18), the rule of the producer
///   helpers (`dlpack_tensor_create`, `dlpack_capsule_new_view`; peer case 55), unless `flags`
///   has `DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE` (the consumer rule: 0, 5, 6, 19
///   `kDLTPU`, 20 `kDLTPUHost`, 99, ... pass). 19 and 20 were assigned on DLPack's main branch
///   after 1.3; this library implements 1.3, so they are unassigned here.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_INVALID_DEVICE` (the message names the field and the
/// rule) or `_INVALID_ARGUMENT` (unknown `flags` bits). No allocation on success; thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK when the device is accepted
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device_id` is negative, or the device type is
///   not one DLPack 1.3 assigns and `DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE` is not given
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `flags` has unknown bits
#[unsafe(no_mangle)]
pub extern "C" fn dlpack_device_check(
    device: DLDevice,
    flags: u32,
) -> crate::capi::error::dlpack_helpers_status {
    boundary::status(|| {
        let unknown = flags & !DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE;
        if unknown != 0 {
            return Err(crate::rules::Error::invalid(format!(
                "flags has unknown bits {unknown:#x} (only DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE)"
            )));
        }
        device::check(
            device,
            flags & DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE != 0,
            "device",
        )
    })
}
