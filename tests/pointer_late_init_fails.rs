//! A HIP runtime that the application loads after the first pointer query, and whose `hipInit`
//! fails (the fake of tests-c/fake/fake_hip.c with the SONAME `libamdhip64.so.6`, opened by full
//! path, with FAKE_HIP_INIT_ERROR set). Before, HIP is absent and memory no other backend knows
//! is confirmed host memory; after, HIP is in the process but cannot be asked: it is
//! unreachable, and memory no asked backend knows is unknown, never host memory. One process
//! per scenario: loading a runtime cannot be undone, so this file holds one test.

mod common;

use common::*;
use dlpack_helpers::abi::DLDeviceType;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::info::*;
use dlpack_helpers::capi::pointer::*;
use dlpack_helpers::capi::stream::*;
use std::ffi::c_void;

const CUDA_B: u32 = DLPACK_HELPERS_BACKEND_CUDA;
const HIP_B: u32 = DLPACK_HELPERS_BACKEND_HIP;

#[test]
fn hip_loaded_late_whose_init_fails_is_unreachable_never_host() {
    let cuda = build_fake("fake_cuda");
    let bundled = build_fake_as("fake_hip", "libamdhip64.so.6");
    // SAFETY: set before the library reads the environment; this file holds one test.
    unsafe {
        std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", &cuda);
        std::env::remove_var("DLPACK_HELPERS_HIP_LIBRARY");
        std::env::remove_var("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY");
    }
    let device_mem = region(4096);
    let plain = region(64);

    // 1. HIP absent: confirmed host memory.
    let i = classify_at(device_mem, 0);
    if i.backends_asked & HIP_B != 0 || i.backends_unreachable & HIP_B != 0 {
        eprintln!("SKIP: a HIP runtime is installed on this machine, so HIP is not absent");
        return;
    }
    assert_eq!(
        (i.memory_class, i.backends_asked, i.backends_unreachable),
        (DLPACK_HELPERS_MEMORY_HOST, CUDA_B, 0)
    );

    // 2. The application loads a runtime that will not initialize (no usable GPU, say).
    // SAFETY: this file holds one test; nothing else reads the environment now.
    unsafe { std::env::set_var("FAKE_HIP_INIT_ERROR", "100") };
    let hip = Fake::open(&bundled);
    let register: unsafe extern "C" fn(usize, usize, i32, i32, i32) = hip.sym(c"fake_hip_register");
    // SAFETY: the fake's C signature; plain integers (ROCm 6 hipMemoryTypeDevice = 2, device 0).
    unsafe { register(device_mem, 4096, 2, 0, 0) };

    // 3. HIP is unreachable: neither its memory nor any other is confirmed host memory.
    for p in [device_mem, plain] {
        let i = classify_at(p, 0);
        assert_eq!(
            (i.memory_class, i.host_access, i.device.device_type.0),
            (
                DLPACK_HELPERS_MEMORY_UNKNOWN,
                DLPACK_HELPERS_HOST_ACCESS_UNKNOWN,
                0
            ),
            "{i:?}"
        );
        assert_eq!(
            (i.backends_asked, i.backends_unreachable, i.answered_by),
            (CUDA_B, HIP_B, 0)
        );
    }
    let mut d = dev(DLDeviceType(-3), -3);
    assert_eq!(
        // SAFETY: opaque address (never dereferenced), live out-pointer.
        unsafe { dlpack_pointer_get_device(device_mem as *const c_void, &mut d) },
        DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN
    );
    assert_eq!(d.device_type, DLDeviceType(-3), "written on failure");
    let m = last_error();
    assert!(
        m.contains("not assumed to be kDLCPU") && m.contains("HIP"),
        "{m}"
    );
    assert_eq!(
        // SAFETY: plain-value argument.
        unsafe { dlpack_stream_backend_check(DLDeviceType::kDLROCM) },
        DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE
    );
    let m = last_error();
    assert!(m.contains("hipInit failed"), "{m}");
    assert_eq!(
        info_capabilities() & (DLPACK_HELPERS_CAP_ROCM | DLPACK_HELPERS_CAP_POINTER_ROCM),
        0
    );
    // The failed load is kept (hipInit ran once), and stays unreachable.
    assert_eq!(hip.count("hipInit"), 1);
    assert_eq!(
        classify_at(plain, 0).memory_class,
        DLPACK_HELPERS_MEMORY_UNKNOWN
    );
}
