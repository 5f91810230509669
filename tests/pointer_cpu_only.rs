//! Issue 22 item 1 (peer case 55): in a process where no CUDA, HIP or Level Zero runtime is
//! loaded, loadable or named by an override, memory of those runtimes cannot exist, so a pointer
//! is confirmed host memory: `dlpack_pointer_get_device` answers `(kDLCPU, 0)` (it answered
//! `DEVICE_UNKNOWN`, "backends asked: none", before) and `dlpack_pointer_classify` says
//! `MEMORY_HOST` with no backend asked. A CUDA driver the application loads later (the fake of
//! tests-c/fake/fake_cuda.c with the SONAME `libcuda.so.1`, opened by full path) is asked from
//! then on: its device memory is `kDLCUDA`, and plain memory stays host memory, now confirmed by
//! CUDA. One process (this file holds one test): loading a runtime cannot be undone.

mod common;

use common::*;
use dlpack_helpers::abi::DLDeviceType;
use dlpack_helpers::capi::device::DLPACK_HELPERS_HOST_ACCESS_ALWAYS;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::pointer::*;
use dlpack_helpers::capi::stream::dlpack_pointer_get_device;
use std::ffi::c_void;

const CUDA_B: u32 = DLPACK_HELPERS_BACKEND_CUDA;

fn get_device(p: usize) -> (i32, i32, i32) {
    let mut d = dev(DLDeviceType(-7), -7);
    // SAFETY: an address the library never dereferences (or hands to the fake driver); a live
    // out-pointer.
    let s = unsafe { dlpack_pointer_get_device(p as *const c_void, &mut d) };
    (s, d.device_type.0, d.device_id)
}

#[test]
fn case_55_cpu_only_process_gets_host_memory_then_a_late_runtime_is_asked() {
    let bundled = build_fake_as("fake_cuda", "libcuda.so.1");
    // SAFETY: set before the library reads the environment; this file holds one test.
    unsafe {
        std::env::remove_var("DLPACK_HELPERS_CUDA_LIBRARY");
        std::env::remove_var("DLPACK_HELPERS_HIP_LIBRARY");
        std::env::remove_var("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY");
    }
    let heap = Box::leak(vec![0u8; 4096].into_boxed_slice()).as_ptr() as usize;
    let stack = 0u64;
    let stack = &stack as *const u64 as usize;

    // 1. No runtime in the process.
    let i = classify_at(heap, 0);
    if i.backends_asked != 0 || i.backends_unreachable != 0 {
        eprintln!(
            "SKIP: a device runtime is installed on this machine (asked {:#x}, unreachable {:#x}), \
             so this is not a CPU-only process",
            i.backends_asked, i.backends_unreachable
        );
        return;
    }
    assert_eq!(
        (
            i.memory_class,
            i.host_access,
            i.device.device_type,
            i.device.device_id,
            i.device_id_known,
            i.answered_by
        ),
        (
            DLPACK_HELPERS_MEMORY_HOST,
            DLPACK_HELPERS_HOST_ACCESS_ALWAYS,
            DLDeviceType::kDLCPU,
            0,
            1,
            0
        ),
        "{i:?}"
    );
    for p in [heap, heap + 4095, stack] {
        assert_eq!(
            get_device(p),
            (DLPACK_HELPERS_STATUS_OK, 1, 0),
            "{}",
            last_error()
        );
    }

    // 2. The application loads a CUDA driver by full path; memory it registers is device memory
    //    of ordinal 1, never kDLCPU; plain memory is host memory confirmed by CUDA.
    let device_mem = region(64);
    assert_eq!(get_device(device_mem), (DLPACK_HELPERS_STATUS_OK, 1, 0));
    let cuda = Fake::open(&bundled);
    let register: unsafe extern "C" fn(usize, u32, i32, i32) = cuda.sym(c"fake_register_pointer");
    // SAFETY: the fake's C signature; plain integers (CU_MEMORYTYPE_DEVICE = 2, ordinal 1).
    unsafe { register(device_mem, 2, 0, 1) };
    assert_eq!(
        get_device(device_mem),
        (DLPACK_HELPERS_STATUS_OK, DLDeviceType::kDLCUDA.0, 1),
        "{}",
        last_error()
    );
    let i = classify_at(heap, 0);
    assert_eq!(
        (i.memory_class, i.device.device_type, i.backends_asked),
        (DLPACK_HELPERS_MEMORY_HOST, DLDeviceType::kDLCPU, CUDA_B)
    );
    assert_eq!(get_device(heap), (DLPACK_HELPERS_STATUS_OK, 1, 0));
}
