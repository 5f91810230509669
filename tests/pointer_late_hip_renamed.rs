//! A HIP runtime bundled under a renamed file and SONAME, as a wheel repair tool writes it
//! (`libamdhip64-1a2b3c4d.so.6`), opened by full path after the first pointer query. None of
//! the runtime's usual names is loaded then, so a check by name alone missed it and its device
//! memory was confirmed host memory (found by a new-user test); the loaded objects are walked
//! for the runtime's file family (`libamdhip64` followed by `.` or `-`) too. One process per
//! scenario: loading a runtime cannot be undone, so this file holds one test.

mod common;

use common::*;
use dlpack_helpers::abi::DLDeviceType;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::pointer::*;
use dlpack_helpers::capi::stream::*;
use std::ffi::c_void;

const CUDA_B: u32 = DLPACK_HELPERS_BACKEND_CUDA;
const HIP_B: u32 = DLPACK_HELPERS_BACKEND_HIP;

#[test]
fn renamed_bundled_hip_loaded_late_is_asked() {
    let cuda = build_fake("fake_cuda");
    let bundled = build_fake_as("fake_hip", "libamdhip64-1a2b3c4d.so.6");
    // SAFETY: set before the library reads the environment; this file holds one test.
    unsafe {
        std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", &cuda);
        std::env::remove_var("DLPACK_HELPERS_HIP_LIBRARY");
        std::env::remove_var("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY");
    }
    let device_mem = region(4096);
    let i = classify_at(device_mem, 0);
    if i.backends_asked & HIP_B != 0 || i.backends_unreachable & HIP_B != 0 {
        eprintln!("SKIP: a HIP runtime is installed on this machine, so HIP is not absent");
        return;
    }
    assert_eq!(
        (i.memory_class, i.backends_asked),
        (DLPACK_HELPERS_MEMORY_HOST, CUDA_B)
    );

    let hip = Fake::open(&bundled);
    assert!(!is_loaded(c"libamdhip64.so.6") && !is_loaded(c"libamdhip64.so"));
    let register: unsafe extern "C" fn(usize, usize, i32, i32, i32) = hip.sym(c"fake_hip_register");
    // SAFETY: the fake's C signature; plain integers (ROCm 6 hipMemoryTypeDevice = 2, device 1).
    unsafe { register(device_mem, 4096, 2, 1, 0) };

    let i = classify_at(device_mem + 100, 0);
    assert_eq!(
        (
            i.memory_class,
            i.device.device_type,
            i.device.device_id,
            i.answered_by
        ),
        (
            DLPACK_HELPERS_MEMORY_DEVICE,
            DLDeviceType::kDLROCM,
            1,
            HIP_B
        ),
        "{}",
        last_error()
    );
    let mut d = dev(DLDeviceType(-1), -1);
    // SAFETY: an opaque address (never dereferenced), a live out-struct.
    let s = unsafe { dlpack_pointer_get_device(device_mem as *const c_void, &mut d) };
    assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "{}", last_error());
    assert_eq!((d.device_type, d.device_id), (DLDeviceType::kDLROCM, 1));
    // The backend opened is the application's copy, not another one from a search path: it
    // counted the query.
    assert!(hip.count("hipPointerGetAttributes") >= 2);
}
