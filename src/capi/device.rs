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
