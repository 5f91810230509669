//! Issue 22 item 1: "unknown" stays for an override naming a library that cannot be loaded
//! while the runtime is resident. The application has loaded a CUDA driver (the fake of
//! tests-c/fake/fake_cuda.c with the SONAME `libcuda.so.1`, opened by full path) and
//! `DLPACK_HELPERS_CUDA_LIBRARY` names a missing file: CUDA memory may exist but cannot be asked
//! about, so no pointer is confirmed host memory (`DEVICE_UNKNOWN`, CUDA unreachable), never
//! `(kDLCPU, 0)`. One process: this file holds one test.

mod common;

use common::*;
use dlpack_helpers::abi::DLDeviceType;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::pointer::*;
use dlpack_helpers::capi::stream::dlpack_pointer_get_device;
use std::ffi::c_void;

#[test]
fn override_naming_a_missing_file_while_the_runtime_is_resident_is_unknown() {
    let bundled = build_fake_as("fake_cuda", "libcuda.so.1");
    // SAFETY: set before the library reads the environment; this file holds one test.
    unsafe {
        std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
        std::env::remove_var("DLPACK_HELPERS_HIP_LIBRARY");
        std::env::remove_var("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY");
    }
    let cuda = Fake::open(&bundled);
    let device_mem = region(64);
    let register: unsafe extern "C" fn(usize, u32, i32, i32) = cuda.sym(c"fake_register_pointer");
    // SAFETY: the fake's C signature; plain integers (CU_MEMORYTYPE_DEVICE = 2, ordinal 0).
    unsafe { register(device_mem, 2, 0, 0) };
    for p in [device_mem, region(64)] {
        let i = classify_at(p, 0);
        assert_eq!(
            (i.memory_class, i.device_id_known),
            (DLPACK_HELPERS_MEMORY_UNKNOWN, 0),
            "{i:?}"
        );
        assert_ne!(
            i.backends_unreachable & DLPACK_HELPERS_BACKEND_CUDA,
            0,
            "{i:?}"
        );
        let mut d = dev(DLDeviceType(-7), -7);
        assert_eq!(
            // SAFETY: an address handed to no driver; a live out-pointer.
            unsafe { dlpack_pointer_get_device(p as *const c_void, &mut d) },
            DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN
        );
        assert_eq!((d.device_type.0, d.device_id), (-7, -7), "nothing written");
        let m = last_error();
        assert!(
            m.contains("/nonexistent/libcuda.so.1") || m.contains("DLPACK_HELPERS_CUDA_LIBRARY"),
            "{m}"
        );
    }
    assert_eq!(
        cuda.count("cuPointerGetAttributes"),
        0,
        "the resident driver is not asked"
    );
}
