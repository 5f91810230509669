//! The CUDA driver loads but cuInit fails (a machine with the driver package and no GPU): the
//! backend is unavailable and the message carries the driver's error.

mod common;

use common::*;
use dlpack_helpers::abi::DLDeviceType;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::stream::*;

#[test]
fn cuinit_failure_is_backend_unavailable() {
    let path = build_fake("fake_cuda");
    // SAFETY: the only test in this process, before the library reads the variables.
    unsafe {
        std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", &path);
        std::env::set_var("FAKE_CUDA_INIT_ERROR", "100");
    }
    assert_eq!(
        // SAFETY: plain-value arguments only: no pointer is read.
        unsafe { dlpack_stream_backend_check(DLDeviceType::kDLCUDA) },
        DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE
    );
    let m = last_error();
    assert!(
        m.contains("cuInit failed") && m.contains("CUDA_ERROR_NO_DEVICE (100)"),
        "{m}"
    );
}
