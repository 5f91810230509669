//! Without CUDA or HIP libraries: the library works, reports the backends as unavailable with a
//! clear message, and serves registered backends for other device types.

mod common;

use common::*;
use dlpack_helpers::abi::DLDeviceType;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::info::{
    DLPACK_HELPERS_CAP_CUDA, DLPACK_HELPERS_CAP_ROCM, dlpack_get_info, dlpack_helpers_info,
};
use dlpack_helpers::capi::stream::*;
use std::ffi::c_void;
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

fn setup() {
    static ONCE: Once = Once::new();
    // SAFETY: set once, before any test reads the environment or calls the library (every test
    // calls setup() first).
    ONCE.call_once(|| unsafe {
        std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
        std::env::set_var("DLPACK_HELPERS_HIP_LIBRARY", "/nonexistent/libamdhip64.so");
    });
}

fn handle(h: usize) -> dlpack_helpers_stream {
    dlpack_helpers_stream {
        kind: DLPACK_HELPERS_STREAM_HANDLE,
        handle: h as *mut c_void,
    }
}

#[test]
fn backend_unavailable_is_reported_clearly() {
    setup();
    let s = handle(0x20);
    // SAFETY: stream handles are opaque values (no backend is loaded or the registered test backend
    // only compares them); the other pointers are NULL or live locals.
    let st = unsafe { dlpack_stream_wait(dev(DLDeviceType::kDLCUDA, 0), 0x10 as *mut c_void, &s) };
    assert_eq!(st, DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE);
    let m = last_error();
    assert!(
        m.contains("/nonexistent/libcuda.so.1") && m.contains("DLPACK_HELPERS_CUDA_LIBRARY"),
        "{m}"
    );
    // SAFETY: stream handles are opaque values (no backend is loaded or the registered test backend
    // only compares them); the other pointers are NULL or live locals.
    let st = unsafe { dlpack_stream_wait(dev(DLDeviceType::kDLROCM, 0), 0x10 as *mut c_void, &s) };
    assert_eq!(st, DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE);
    assert!(last_error().contains("DLPACK_HELPERS_HIP_LIBRARY"));
    assert_eq!(
        // SAFETY: plain-value arguments only: no pointer is read.
        unsafe { dlpack_stream_backend_check(DLDeviceType::kDLCUDA) },
        DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE
    );
    assert_eq!(
        // SAFETY: plain-value arguments only: no pointer is read.
        unsafe { dlpack_stream_backend_check(DLDeviceType::kDLVulkan) },
        DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE
    );
    // -1 and equal streams need no backend at all.
    let no_sync = dlpack_helpers_stream {
        kind: DLPACK_HELPERS_STREAM_NO_SYNC,
        handle: std::ptr::null_mut(),
    };
    assert_eq!(
        // SAFETY: stream handles are opaque values (no backend is loaded or the registered test
        // backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(dev(DLDeviceType::kDLCUDA, 0), 0x10 as *mut c_void, &no_sync) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(
        // SAFETY: stream handles are opaque values (no backend is loaded or the registered test
        // backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(dev(DLDeviceType::kDLCUDA, 0), 0x20 as *mut c_void, &s) },
        DLPACK_HELPERS_STATUS_OK
    );
    // Issue 12 item 3: with the driver overrides naming missing files, no backend can classify
    // a pointer: DEVICE_UNKNOWN, never (kDLCPU, 0), and nothing is written.
    let x = 5u32;
    let mut d = dev(DLDeviceType(-7), 9);
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_pointer_get_device(&x as *const u32 as *const c_void, &mut d) },
        DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN
    );
    assert_eq!((d.device_type, d.device_id), (DLDeviceType(-7), 9));
    let m = last_error();
    assert!(
        m.contains("backends asked: none") && m.contains("DLPACK_HELPERS_CUDA_LIBRARY"),
        "{m}"
    );
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid value.
    let mut info: dlpack_helpers_info = unsafe { std::mem::zeroed() };
    info.struct_size = std::mem::size_of::<dlpack_helpers_info>();
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_get_info(&mut info) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(
        info.capabilities & (DLPACK_HELPERS_CAP_CUDA | DLPACK_HELPERS_CAP_ROCM),
        0
    );
}

static WAITS: AtomicUsize = AtomicUsize::new(0);
static SYNCS: AtomicUsize = AtomicUsize::new(0);
static LAST: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn my_wait(
    ctx: *mut c_void,
    device_id: i32,
    producer: *mut c_void,
    consumer: *mut c_void,
) -> i32 {
    assert_eq!(ctx as usize, 0xc0ffee);
    WAITS.fetch_add(1, Ordering::SeqCst);
    LAST.store(
        producer as usize * 1000 + consumer as usize + device_id as usize * 1_000_000,
        Ordering::SeqCst,
    );
    if consumer as usize == 666 { 17 } else { 0 }
}
unsafe extern "C" fn my_sync(_ctx: *mut c_void, _device_id: i32, _stream: *mut c_void) -> i32 {
    SYNCS.fetch_add(1, Ordering::SeqCst);
    0
}

/// A registered backend (here for kDLOneAPI queues) serves waits and synchronizations, its
/// errors become DEVICE_ERROR, and registration rules hold.
#[test]
fn registered_backend_serves_its_device_type() {
    setup();
    let b = dlpack_helpers_stream_backend {
        ctx: 0xc0ffee as *mut c_void,
        wait: Some(my_wait),
        synchronize: Some(my_sync),
    };
    let one_api = DLDeviceType::kDLOneAPI;
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_backend_register(one_api, &b) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_backend_register(one_api, &b) },
        DLPACK_HELPERS_STATUS_INVALID_ARGUMENT
    );
    assert!(last_error().contains("already registered"));
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_backend_register(DLDeviceType::kDLCPU, &b) },
        DLPACK_HELPERS_STATUS_INVALID_ARGUMENT
    );
    let half = dlpack_helpers_stream_backend {
        synchronize: None,
        ..b
    };
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_backend_register(DLDeviceType::kDLMetal, &half) },
        DLPACK_HELPERS_STATUS_NULL_POINTER
    );
    assert!(last_error().contains("backend->synchronize"));
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_backend_register(DLDeviceType::kDLMetal, std::ptr::null()) },
        DLPACK_HELPERS_STATUS_NULL_POINTER
    );
    assert_eq!(
        // SAFETY: plain-value arguments only: no pointer is read.
        unsafe { dlpack_stream_backend_check(one_api) },
        DLPACK_HELPERS_STATUS_OK
    );

    let mut s = dlpack_helpers_stream {
        kind: -1,
        handle: std::ptr::null_mut(),
    };
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_decode(dev(one_api, 2), true, 7, 0, &mut s) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(
        // SAFETY: stream handles are opaque values (no backend is loaded or the registered test
        // backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(dev(one_api, 2), 3 as *mut c_void, &s) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(WAITS.load(Ordering::SeqCst), 1);
    assert_eq!(LAST.load(Ordering::SeqCst), 2_003_007);
    let bad = handle(666);
    assert_eq!(
        // SAFETY: stream handles are opaque values (no backend is loaded or the registered test
        // backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(dev(one_api, 0), 3 as *mut c_void, &bad) },
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    assert!(last_error().contains("code 17"), "{}", last_error());
    assert_eq!(
        // SAFETY: stream handles are opaque values (no backend is loaded or the registered test
        // backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_synchronize(dev(one_api, 0), 9 as *mut c_void) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(SYNCS.load(Ordering::SeqCst), 1);
    let unknown_kind = dlpack_helpers_stream {
        kind: 99,
        handle: std::ptr::null_mut(),
    };
    assert_eq!(
        // SAFETY: stream handles are opaque values (no backend is loaded or the registered test
        // backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(dev(one_api, 0), 3 as *mut c_void, &unknown_kind) },
        DLPACK_HELPERS_STATUS_INVALID_ARGUMENT
    );
    assert_eq!(
        // SAFETY: stream handles are opaque values (no backend is loaded or the registered test
        // backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(dev(one_api, 0), 3 as *mut c_void, std::ptr::null()) },
        DLPACK_HELPERS_STATUS_NULL_POINTER
    );
}
