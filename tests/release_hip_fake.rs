//! Peer case 52 on the HIP test double (tests-c/fake/fake_hip.c): a release tied to a stream
//! runs the deleter exactly once, only after the event recorded on the stream completes (the
//! fake's gate holds the stream; no sleep), on the library's completion thread.

mod common;

use common::*;
use dlpack_helpers::abi::{DLDevice, DLDeviceType};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::stream::*;
use std::ffi::c_void;

const ROCM: DLDevice = DLDevice {
    device_type: DLDeviceType::kDLROCM,
    device_id: 1,
};

#[test]
fn case_52_release_waits_for_the_stream_and_runs_once_hip() {
    let path = build_fake("fake_hip");
    // SAFETY: set before the library reads it (the only test of this binary).
    unsafe {
        std::env::set_var("DLPACK_HELPERS_HIP_LIBRARY", &path);
        std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
    }
    assert_eq!(
        // SAFETY: plain-value argument.
        unsafe { dlpack_stream_backend_check(ROCM.device_type) },
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    let f = Fake::open(&path);
    let gate: unsafe extern "C" fn(*mut c_void, i32) = f.sym(c"fake_hip_gate");
    let s = 0x5000 as *mut c_void; // a made-up stream handle: the fake only records it
    // SAFETY: the fake's C signature; the handle is never dereferenced.
    unsafe { gate(s, 1) };
    f.reset();
    let t = released::new();
    // SAFETY: `t` is handed over; `s` is a stream of the fake runtime.
    let st = unsafe { dlpack_tensor_delete_after_stream(t, ROCM, s) };
    assert_eq!(st, DLPACK_HELPERS_STATUS_OK, "{}", last_error());
    assert_eq!(f.count("hipEventRecord"), 1);
    assert_eq!(f.last("hipEventRecord").1, 0x5000);
    until("the completion thread polls the event twice", || {
        f.count("hipEventQuery") >= 2
    });
    assert_eq!(
        released::runs(),
        0,
        "the deleter ran before the event completed"
    );
    // SAFETY: as above.
    unsafe { gate(s, 0) };
    released::wait_for(1);
    assert_ne!(released::threads()[0], std::thread::current().id());
    // Exactly once, and the event back in the pool: a second release (gate open) completes
    // with no new event, and the first deleter has still run once.
    f.reset();
    let t2 = released::new();
    // SAFETY: as above.
    let st = unsafe { dlpack_tensor_delete_after_stream(t2, ROCM, s) };
    assert_eq!(st, DLPACK_HELPERS_STATUS_OK, "{}", last_error());
    released::wait_for(2);
    assert_eq!(released::runs(), 2);
    assert_eq!(f.count("hipEventCreateWithFlags"), 0);
    assert_eq!(
        f.count("hipStreamSynchronize"),
        0,
        "never a blocking synchronize"
    );
    // The device made current for the record was restored (the caller's stays 0).
    let get: unsafe extern "C" fn(*mut i32) -> i32 = f.sym(c"hipGetDevice");
    let mut d = -1;
    // SAFETY: the fake runtime's C signature; `d` is a live local out-pointer.
    assert_eq!(unsafe { get(&mut d) }, 0);
    assert_eq!(d, 0);
}
