//! A failed `cuDevicePrimaryCtxRetain` (out of memory, a device in exclusive-process mode) is
//! that call's error, not the process's: the next use asks the driver again (found by a new-user
//! test: one transient failure made every later pointer query from a thread without a context
//! DEVICE_ERROR until exit). One test in its own process, so no other test retained the context.

mod common;

use common::*;
use dlpack_helpers::abi::{DLDevice, DLDeviceType};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::stream::dlpack_pointer_get_device;
use std::ffi::c_void;

#[test]
fn primary_context_retain_failure_is_not_kept() {
    let path = build_fake("fake_cuda");
    // SAFETY: the only test in this process, before the library reads the variables.
    unsafe {
        std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", &path);
        std::env::set_var("DLPACK_HELPERS_HIP_LIBRARY", "/nonexistent/libamdhip64.so");
    }
    let f = Fake::open(&path);
    let c = region(64);
    let register: unsafe extern "C" fn(usize, u32, i32, i32) = f.sym(c"fake_register_pointer");
    let needs_context: unsafe extern "C" fn(i32) = f.sym(c"fake_pointer_needs_context");
    // SAFETY: the fake's C signatures; plain integers only.
    unsafe {
        register(c, 2, 0, 1); // device memory of ordinal 1
        needs_context(1); // the pointer query asks for a current context: the retry retains one
    }
    f.fail("cuDevicePrimaryCtxRetain", 2); // CUDA_ERROR_OUT_OF_MEMORY
    let query = || {
        let mut d = dev(DLDeviceType(-7), -7);
        // SAFETY: the pointer is an address the library only hands to the fake driver; `d` is
        // live.
        let s = unsafe { dlpack_pointer_get_device(c as *const c_void, &mut d) };
        (s, d)
    };
    let (s, d) = query();
    assert_eq!(s, DLPACK_HELPERS_STATUS_DEVICE_ERROR, "{}", last_error());
    assert!(
        last_error().contains("cuDevicePrimaryCtxRetain"),
        "{}",
        last_error()
    );
    assert_eq!(
        d.device_type,
        DLDeviceType(-7),
        "nothing written on failure"
    );
    f.fail("cuDevicePrimaryCtxRetain", 0);
    let (s, d) = query();
    assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "{}", last_error());
    assert_eq!(
        d,
        DLDevice {
            device_type: DLDeviceType::kDLCUDA,
            device_id: 1
        }
    );
    assert_eq!(f.count("cuDevicePrimaryCtxRetain"), 2, "asked again, once");
    // Kept once retained: a third query retains nothing more.
    assert_eq!(query().0, DLPACK_HELPERS_STATUS_OK);
    assert_eq!(f.count("cuDevicePrimaryCtxRetain"), 2);
}
