//! Pointer classification with every driver override naming a missing file (issue 12 item 3,
//! issue 13): the answer is unknown, never kDLCPU; the unreachable backends are named; the
//! per-tensor answer still comes from the device table where it decides.

mod common;

use common::*;
use dlpack_helpers::abi::{DLDataType, DLDeviceType, DLTensor};
use dlpack_helpers::capi::device::*;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::info::*;
use dlpack_helpers::capi::pointer::*;
use dlpack_helpers::capi::stream::{dlpack_pointer_get_device, dlpack_stream_backend_check};
use std::ffi::c_void;
use std::sync::Once;

fn setup() {
    static ONCE: Once = Once::new();
    // SAFETY: set once, before any test reads the environment or calls the library (every test
    // calls setup() first).
    ONCE.call_once(|| unsafe {
        std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
        std::env::set_var("DLPACK_HELPERS_HIP_LIBRARY", "/nonexistent/libamdhip64.so");
        std::env::set_var(
            "DLPACK_HELPERS_LEVEL_ZERO_LIBRARY",
            "/nonexistent/libze_loader.so.1",
        );
    });
}

fn info_of(p: *const c_void, ctx: usize) -> (dlpack_helpers_status, dlpack_helpers_pointer_info) {
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid value.
    let mut i: dlpack_helpers_pointer_info = unsafe { std::mem::zeroed() };
    i.struct_size = std::mem::size_of::<dlpack_helpers_pointer_info>();
    // SAFETY: the pointer and context arguments are opaque addresses the library only hands to the
    // fake drivers (never dereferenced); the out-pointers are live.
    let s = unsafe { dlpack_pointer_classify(p, ctx as *mut c_void, &mut i) };
    (s, i)
}

#[test]
fn missing_libraries_give_unknown_never_cpu() {
    setup();
    let x = [0u8; 64];
    let p = x.as_ptr().cast::<c_void>();
    let (s, i) = info_of(p, 0x77);
    assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "{}", last_error());
    assert_eq!(i.memory_class, DLPACK_HELPERS_MEMORY_UNKNOWN);
    assert_eq!(i.host_access, DLPACK_HELPERS_HOST_ACCESS_UNKNOWN);
    assert_eq!(i.backends_asked, 0);
    assert_eq!(
        i.backends_unreachable,
        DLPACK_HELPERS_BACKEND_CUDA
            | DLPACK_HELPERS_BACKEND_HIP
            | DLPACK_HELPERS_BACKEND_LEVEL_ZERO
    );
    assert_eq!(i.answered_by, 0);
    assert_eq!((i.device.device_type.0, i.device.device_id), (0, 0));
    let mut d = dev(DLDeviceType(-3), -3);
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_pointer_get_device(p, &mut d) },
        DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN
    );
    assert_eq!(d.device_type, DLDeviceType(-3));
    let m = last_error();
    assert!(
        m.contains("not assumed to be kDLCPU") && m.contains("Level Zero"),
        "{m}"
    );
    // Bad arguments.
    assert_eq!(
        info_of(std::ptr::null(), 0).0,
        DLPACK_HELPERS_STATUS_NULL_POINTER
    );
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid value.
    let mut small: dlpack_helpers_pointer_info = unsafe { std::mem::zeroed() };
    small.struct_size = 4;
    assert_eq!(
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        unsafe { dlpack_pointer_classify(p, std::ptr::null_mut(), &mut small) },
        DLPACK_HELPERS_STATUS_INVALID_ARGUMENT
    );
    // An older, shorter struct gets whole fields only.
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid value.
    let mut short: dlpack_helpers_pointer_info = unsafe { std::mem::zeroed() };
    short.struct_size = 12;
    assert_eq!(
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        unsafe { dlpack_pointer_classify(p, std::ptr::null_mut(), &mut short) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(short.struct_size, 12);
    // The backend's own message names the override that points at the missing file, without
    // telling the user to set what is already set.
    assert_eq!(
        // SAFETY: a plain value.
        unsafe { dlpack_stream_backend_check(DLDeviceType::kDLROCM) },
        DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE
    );
    let m = last_error();
    assert!(
        m.contains("/nonexistent/libamdhip64.so")
            && m.contains("the file DLPACK_HELPERS_HIP_LIBRARY names")
            && !m.contains("to override"),
        "{m}"
    );
}

#[test]
fn tensor_host_access_table_first_then_unknown() {
    setup();
    let mut buf = [0u8; 16];
    let mut shape = [16i64];
    let mut t = DLTensor {
        data: buf.as_mut_ptr().cast(),
        device: dev(DLDeviceType::kDLCPU, 0),
        ndim: 1,
        dtype: DLDataType {
            code: 1,
            bits: 8,
            lanes: 1,
        },
        shape: shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    let ask = |t: &DLTensor| {
        let mut a = -1;
        assert_eq!(
            // SAFETY: the pointer and context arguments are opaque addresses the library only hands
            // to the fake drivers (never dereferenced); the out-pointers are live.
            unsafe { dlpack_dltensor_host_access(t, 0x77 as *mut c_void, &mut a) },
            DLPACK_HELPERS_STATUS_OK
        );
        a
    };
    assert_eq!(ask(&t), DLPACK_HELPERS_HOST_ACCESS_ALWAYS);
    t.device = dev(DLDeviceType::kDLCUDA, 0);
    assert_eq!(ask(&t), DLPACK_HELPERS_HOST_ACCESS_NEVER);
    t.device = dev(DLDeviceType::kDLOneAPI, 0);
    assert_eq!(ask(&t), DLPACK_HELPERS_HOST_ACCESS_UNKNOWN);
    t.device = dev(DLDeviceType::kDLExtDev, 0);
    assert_eq!(ask(&t), DLPACK_HELPERS_HOST_ACCESS_UNKNOWN);
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid value.
    let mut info: dlpack_helpers_info = unsafe { std::mem::zeroed() };
    info.struct_size = std::mem::size_of::<dlpack_helpers_info>();
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_get_info(&mut info) },
        DLPACK_HELPERS_STATUS_OK
    );
    let backends = DLPACK_HELPERS_CAP_CUDA
        | DLPACK_HELPERS_CAP_ROCM
        | DLPACK_HELPERS_CAP_LEVEL_ZERO
        | DLPACK_HELPERS_CAP_POINTER_CUDA
        | DLPACK_HELPERS_CAP_POINTER_ROCM
        | DLPACK_HELPERS_CAP_POINTER_LEVEL_ZERO;
    assert_eq!(info.capabilities & backends, 0);
}
