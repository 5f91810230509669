//! A HIP runtime that the application loads after the first pointer query: a bundled
//! `libamdhip64.so.6` (the fake of tests-c/fake/fake_hip.c, with that SONAME, in a directory on
//! no search path) opened by full path. Before, HIP is absent and memory no other backend knows
//! is confirmed host memory, as always; after, HIP is asked, so its device memory is
//! `kDLROCM`, never `kDLCPU` (earlier builds decided "absent" once per process and kept it).
//! The CUDA fake is loaded through its override, so that one backend is asked. One process per
//! scenario: loading a runtime cannot be undone, so this file holds one test.

mod common;

use common::*;
use dlpack_helpers::abi::DLDeviceType;
use dlpack_helpers::capi::device::*;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::info::*;
use dlpack_helpers::capi::pointer::*;
use dlpack_helpers::capi::stream::*;
use std::ffi::{CString, c_void};

count_thread_allocations!();

const CUDA_B: u32 = DLPACK_HELPERS_BACKEND_CUDA;
const HIP_B: u32 = DLPACK_HELPERS_BACKEND_HIP;
const ROCM_CAPS: u64 = DLPACK_HELPERS_CAP_ROCM | DLPACK_HELPERS_CAP_POINTER_ROCM;

#[test]
fn hip_loaded_after_the_first_query_is_asked() {
    let cuda = build_fake("fake_cuda");
    let other = build_fake("fake_ze"); // an unrelated library, loaded and unloaded below
    let bundled = build_fake_as("fake_hip", "libamdhip64.so.6");
    // SAFETY: set before the library reads the environment; this file holds one test.
    unsafe {
        std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", &cuda);
        std::env::remove_var("DLPACK_HELPERS_HIP_LIBRARY");
        std::env::remove_var("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY");
    }
    let device_mem = region(4096);
    let plain = region(64);

    // 1. HIP absent: confirmed host memory, CUDA the only backend asked (as always).
    let i = classify_at(device_mem, 0);
    if i.backends_asked & HIP_B != 0 || i.backends_unreachable & HIP_B != 0 {
        eprintln!("SKIP: a HIP runtime is installed on this machine, so HIP is not absent");
        return;
    }
    assert_eq!(
        (i.memory_class, i.device.device_type, i.device.device_id),
        (DLPACK_HELPERS_MEMORY_HOST, DLDeviceType::kDLCPU, 0)
    );
    assert_eq!((i.backends_asked, i.backends_unreachable), (CUDA_B, 0));
    assert_eq!(info_capabilities() & ROCM_CAPS, 0);
    assert!(!is_loaded(c"libamdhip64.so.6"));

    // Speed contract on the absent path: no allocation, also when the process loaded and
    // unloaded a library since the last query (HIP's residency is then asked again).
    let other_c = CString::new(other.to_str().unwrap()).unwrap();
    let mut info = classify_at(plain, 0);
    let n = thread_allocations(|| {
        for round in 0..50 {
            if round % 2 == 1 {
                // SAFETY: a live NUL-terminated path of a fake without constructors; the handle
                // is closed at once and nothing from it is used.
                let h =
                    unsafe { libc::dlopen(other_c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
                assert!(!h.is_null());
                // SAFETY: the handle just opened, closed once.
                unsafe { libc::dlclose(h) };
            }
            info.struct_size = std::mem::size_of::<dlpack_helpers_pointer_info>();
            // SAFETY: opaque address (never dereferenced), live out-struct.
            let s = unsafe {
                dlpack_pointer_classify(plain as *const c_void, std::ptr::null_mut(), &mut info)
            };
            assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
            assert_eq!(info.memory_class, DLPACK_HELPERS_MEMORY_HOST);
        }
    });
    assert_eq!(n, 0, "allocations on the absent path");

    // 2. The application opens its bundled runtime by full path and allocates device memory.
    let hip = Fake::open(&bundled);
    let register: unsafe extern "C" fn(usize, usize, i32, i32, i32) = hip.sym(c"fake_hip_register");
    // SAFETY: the fake's C signature; plain integers (ROCm 6 hipMemoryTypeDevice = 2, device 1).
    unsafe { register(device_mem, 4096, 2, 1, 0) };

    // 3. HIP is asked from now on: its device memory is kDLROCM, never kDLCPU.
    let i = classify_at(device_mem + 100, 0);
    assert_eq!(
        (i.memory_class, i.device.device_type, i.device.device_id),
        (DLPACK_HELPERS_MEMORY_DEVICE, DLDeviceType::kDLROCM, 1),
        "{i:?}"
    );
    assert_eq!(
        (i.answered_by, i.backends_asked, i.host_access),
        (HIP_B, CUDA_B | HIP_B, DLPACK_HELPERS_HOST_ACCESS_NEVER)
    );
    let mut d = dev(DLDeviceType::kDLCPU, 0);
    assert_eq!(
        // SAFETY: opaque address (never dereferenced), live out-pointer.
        unsafe { dlpack_pointer_get_device(device_mem as *const c_void, &mut d) },
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    assert_eq!((d.device_type, d.device_id), (DLDeviceType::kDLROCM, 1));
    // Host memory is still host memory, now confirmed by both runtimes.
    let i = classify_at(plain, 0);
    assert_eq!(
        (i.memory_class, i.backends_asked),
        (DLPACK_HELPERS_MEMORY_HOST, CUDA_B | HIP_B)
    );
    // The runtime found is the one the application loaded (no second copy from the path).
    assert_eq!(hip.count("hipPointerGetAttributes"), 3);
    assert_eq!(hip.count("hipInit"), 1);

    // 4. The capability bits and the stream paths see it too.
    assert_eq!(info_capabilities() & ROCM_CAPS, ROCM_CAPS);
    assert_stream_paths_serve(dev(DLDeviceType::kDLROCM, 1));
    assert_eq!(hip.count("hipStreamWaitEvent"), 1);

    // 5. Loaded now: the answer path allocates nothing, as for a runtime found at first use.
    let n = thread_allocations(|| {
        for _ in 0..50 {
            info.struct_size = std::mem::size_of::<dlpack_helpers_pointer_info>();
            // SAFETY: opaque address (never dereferenced), live out-struct.
            let s = unsafe {
                dlpack_pointer_classify(
                    device_mem as *const c_void,
                    std::ptr::null_mut(),
                    &mut info,
                )
            };
            assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
        }
    });
    assert_eq!(n, 0, "allocations once loaded");
}
