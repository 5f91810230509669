//! A CUDA driver that the application loads after the first pointer query (the fake of
//! tests-c/fake/fake_cuda.c with the SONAME `libcuda.so.1`, in a directory on no search path,
//! opened by full path). Before, CUDA is absent and memory no other backend knows is confirmed
//! host memory; after, CUDA is asked, so its device memory is `kDLCUDA`, never `kDLCPU`. The
//! HIP fake is loaded through its override, so that one backend is asked. 8 threads query while
//! the driver is loaded (the one-time late load under a race). One process per
//! scenario: loading a runtime cannot be undone, so this file holds one test.

mod common;

use common::*;
use dlpack_helpers::abi::DLDeviceType;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::info::*;
use dlpack_helpers::capi::pointer::*;
use dlpack_helpers::capi::stream::*;
use std::ffi::c_void;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};

const CUDA_B: u32 = DLPACK_HELPERS_BACKEND_CUDA;
const HIP_B: u32 = DLPACK_HELPERS_BACKEND_HIP;
const CUDA_CAPS: u64 = DLPACK_HELPERS_CAP_CUDA | DLPACK_HELPERS_CAP_POINTER_CUDA;

#[test]
fn cuda_loaded_after_the_first_query_is_asked() {
    let hip = build_fake("fake_hip");
    let bundled = build_fake_as("fake_cuda", "libcuda.so.1");
    // SAFETY: set before the library reads the environment; this file holds one test.
    unsafe {
        std::env::set_var("DLPACK_HELPERS_HIP_LIBRARY", &hip);
        std::env::remove_var("DLPACK_HELPERS_CUDA_LIBRARY");
        std::env::remove_var("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY");
    }
    let device_mem = region(64);

    // 1. CUDA absent: confirmed host memory, HIP the only backend asked (as always).
    let i = classify_at(device_mem, 0);
    if i.backends_asked & CUDA_B != 0 || i.backends_unreachable & CUDA_B != 0 {
        eprintln!("SKIP: a CUDA driver is installed on this machine, so CUDA is not absent");
        return;
    }
    assert_eq!(
        (i.memory_class, i.device.device_type, i.device.device_id),
        (DLPACK_HELPERS_MEMORY_HOST, DLDeviceType::kDLCPU, 0)
    );
    assert_eq!((i.backends_asked, i.backends_unreachable), (HIP_B, 0));
    assert_eq!(info_capabilities() & CUDA_CAPS, 0);
    assert_eq!(
        // SAFETY: plain-value argument.
        unsafe { dlpack_stream_backend_check(DLDeviceType::kDLCUDA) },
        DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE
    );

    // 2. While 8 threads keep classifying the address, the application opens the driver by full
    //    path and the memory becomes device memory of ordinal 1. Each answer is host memory
    //    (before) or CUDA device memory (after), never host again once device was seen, and
    //    every query that starts after the registration sees device memory.
    let registered = AtomicBool::new(false);
    let started = Barrier::new(9);
    let cuda = std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                let mut first = true;
                for _ in 0..10_000_000 {
                    let after = registered.load(Ordering::SeqCst);
                    let i = classify_at(device_mem, 0);
                    if first {
                        started.wait();
                        first = false;
                    }
                    if i.memory_class == DLPACK_HELPERS_MEMORY_DEVICE {
                        assert_eq!(
                            (i.device.device_type, i.device.device_id, i.answered_by),
                            (DLDeviceType::kDLCUDA, 1, CUDA_B)
                        );
                        return;
                    }
                    assert!(!after, "host memory after the driver registered it: {i:?}");
                    assert_eq!(i.memory_class, DLPACK_HELPERS_MEMORY_HOST, "{i:?}");
                }
                panic!("the driver loaded late was never asked");
            });
        }
        started.wait();
        let cuda = Fake::open(&bundled);
        let register: unsafe extern "C" fn(usize, u32, i32, i32) =
            cuda.sym(c"fake_register_pointer");
        // SAFETY: the fake's C signature; plain integers (CU_MEMORYTYPE_DEVICE = 2, ordinal 1).
        unsafe { register(device_mem, 2, 0, 1) };
        registered.store(true, Ordering::SeqCst);
        cuda
    });

    // 3. CUDA is asked from now on: kDLCUDA, never kDLCPU.
    let i = classify_at(device_mem, 0);
    assert_eq!(
        (i.memory_class, i.device.device_type, i.device.device_id),
        (DLPACK_HELPERS_MEMORY_DEVICE, DLDeviceType::kDLCUDA, 1),
        "{i:?}"
    );
    assert_eq!((i.answered_by, i.backends_asked), (CUDA_B, CUDA_B));
    let mut d = dev(DLDeviceType::kDLCPU, 0);
    assert_eq!(
        // SAFETY: opaque address (never dereferenced), live out-pointer.
        unsafe { dlpack_pointer_get_device(device_mem as *const c_void, &mut d) },
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    assert_eq!((d.device_type, d.device_id), (DLDeviceType::kDLCUDA, 1));
    // Racing threads may each run the one late load (no lock is held while the driver runs);
    // the first result is kept.
    assert!(cuda.count("cuInit") >= 1);

    // 4. The capability bits and the stream paths see it too.
    assert_eq!(info_capabilities() & CUDA_CAPS, CUDA_CAPS);
    assert_stream_paths_serve(dev(DLDeviceType::kDLCUDA, 0));
    assert_eq!(cuda.count("cuStreamWaitEvent"), 1);
}
