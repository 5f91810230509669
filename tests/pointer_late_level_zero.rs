//! A Level Zero loader that the application loads after the first pointer query (the fake of
//! tests-c/fake/fake_ze.c with the SONAME `libze_loader.so.1`, in a directory on no search path,
//! opened by full path). Before, Level Zero is absent: with or without a context, memory the
//! CUDA fake (loaded through its override) does not know is confirmed host memory. After, the
//! loader is asked in the context given, so its USM memory is `kDLOneAPI`, never `kDLCPU`; and a
//! query without a context cannot ask it, so it is unreachable (earlier builds kept "absent"
//! for the process). One process per scenario: this file holds one test.

mod common;

use common::*;
use dlpack_helpers::abi::DLDeviceType;
use dlpack_helpers::capi::info::*;
use dlpack_helpers::capi::pointer::*;

const CUDA_B: u32 = DLPACK_HELPERS_BACKEND_CUDA;
const ZE_B: u32 = DLPACK_HELPERS_BACKEND_LEVEL_ZERO;
const CTX: usize = 0xC0_0000;
const ZE_CAPS: u64 = DLPACK_HELPERS_CAP_LEVEL_ZERO | DLPACK_HELPERS_CAP_POINTER_LEVEL_ZERO;

#[test]
fn level_zero_loaded_after_the_first_query_is_asked() {
    let cuda = build_fake("fake_cuda");
    let bundled = build_fake_as("fake_ze", "libze_loader.so.1");
    // SAFETY: set before the library reads the environment; this file holds one test.
    unsafe {
        std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", &cuda);
        std::env::remove_var("DLPACK_HELPERS_HIP_LIBRARY");
        std::env::remove_var("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY");
    }
    let usm = region(4096);
    let plain = region(64);

    // 1. Level Zero absent: confirmed host memory, with a context and without.
    let i = classify_at(usm, CTX);
    if i.backends_asked & ZE_B != 0 || i.backends_unreachable & ZE_B != 0 {
        eprintln!("SKIP: a Level Zero loader is installed on this machine, so it is not absent");
        return;
    }
    assert_eq!(
        (i.memory_class, i.device.device_type, i.backends_asked),
        (DLPACK_HELPERS_MEMORY_HOST, DLDeviceType::kDLCPU, CUDA_B)
    );
    assert_eq!(classify_at(usm, 0).memory_class, DLPACK_HELPERS_MEMORY_HOST);
    assert_eq!(info_capabilities() & ZE_CAPS, 0);

    // 2. The application (its SYCL runtime) loads the loader and allocates USM device memory.
    let ze = Fake::open(&bundled);
    let register: unsafe extern "C" fn(usize, usize, usize, u32, usize) =
        ze.sym(c"fake_ze_register");
    // SAFETY: the fake's C signature; plain integers (ZE_MEMORY_TYPE_DEVICE = 2).
    unsafe { register(CTX, usm, 4096, 2, 0xDE0) };

    // 3. Asked in the context given: USM device memory, never kDLCPU.
    let i = classify_at(usm + 8, CTX);
    assert_eq!(
        (i.memory_class, i.device.device_type, i.device.device_id),
        (DLPACK_HELPERS_MEMORY_DEVICE, DLDeviceType::kDLOneAPI, 0),
        "{i:?}"
    );
    // No device list registered: the SYCL ordinal is not established (never -1; peer case 54).
    assert_eq!(i.device_id_known, 0);
    assert_eq!((i.answered_by, i.native_device as usize), (ZE_B, 0xDE0));
    assert_eq!(
        classify_at(plain, CTX).backends_asked,
        CUDA_B | ZE_B,
        "host memory is now confirmed by both"
    );
    // Without a context the loader cannot be asked, and it is in the process: unknown.
    let i = classify_at(plain, 0);
    assert_eq!(
        (i.memory_class, i.backends_unreachable),
        (DLPACK_HELPERS_MEMORY_UNKNOWN, ZE_B)
    );
    assert_eq!(info_capabilities() & ZE_CAPS, ZE_CAPS);
    assert_eq!(ze.count("zeInit"), 1);
}
