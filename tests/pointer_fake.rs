//! Pointer classification and per-tensor host access through test doubles of the CUDA driver,
//! the HIP runtime and the Level Zero loader (tests-c/fake/{fake_cuda,fake_hip,fake_ze}.c),
//! loaded through DLPACK_HELPERS_{CUDA,HIP,LEVEL_ZERO}_LIBRARY. Every class of every backend,
//! each driver call failing, interior / last-byte / one-past pointers, driver-call counts, 8
//! threads, and peer case 51 (a kDLOneAPI tensor end to end).

mod common;

use common::*;
use dlpack_helpers::abi::*;
use dlpack_helpers::capi::device::*;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::info::*;
use dlpack_helpers::capi::layout::dlpack_helpers_layout;
use dlpack_helpers::capi::pointer::*;
use dlpack_helpers::capi::stream::*;
use dlpack_helpers::capi::tensor::dlpack_tensor_check_version_or_delete;
use dlpack_helpers::capi::validate::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

count_thread_allocations!();

struct Fakes {
    cuda: Fake,
    hip: Fake,
    ze: Fake,
}

/// The three fakes, loaded once; tests serialize on the lock (the fakes' counters and the
/// registered Level Zero context are process-wide).
fn fakes() -> (&'static Fakes, MutexGuard<'static, ()>) {
    static F: OnceLock<Fakes> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let f = F.get_or_init(|| {
        let cuda = build_fake("fake_cuda");
        let hip = build_fake("fake_hip");
        let ze = build_fake("fake_ze");
        // SAFETY: set once, before the library reads them.
        unsafe {
            std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", &cuda);
            std::env::set_var("DLPACK_HELPERS_HIP_LIBRARY", &hip);
            std::env::set_var("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY", &ze);
        }
        Fakes {
            cuda: Fake::open(&cuda),
            hip: Fake::open(&hip),
            ze: Fake::open(&ze),
        }
    });
    let g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: the context is an opaque handle the library only hands to the fake Level Zero loader
    // (NULL unsets it).
    unsafe { dlpack_level_zero_context_set(std::ptr::null_mut()) };
    (f, g)
}

const CTX: usize = 0xC0_0000;
const OTHER_CTX: usize = 0xC1_0000;

/// A fake allocation: the fakes only compare addresses, so a leaked host buffer stands in.
fn region(size: usize) -> usize {
    Box::leak(vec![0u8; size].into_boxed_slice()).as_ptr() as usize
}

fn hip_register(f: &Fakes, base: usize, size: usize, ty: i32, device: i32, managed: i32) {
    let r: unsafe extern "C" fn(usize, usize, i32, i32, i32) = f.hip.sym(c"fake_hip_register");
    // SAFETY: the fake's C signature; plain integer arguments only.
    unsafe { r(base, size, ty, device, managed) }
}
fn ze_register(f: &Fakes, ctx: usize, base: usize, size: usize, ty: u32, device: usize) {
    let r: unsafe extern "C" fn(usize, usize, usize, u32, usize) = f.ze.sym(c"fake_ze_register");
    // SAFETY: the fake's C signature; plain integer arguments only.
    unsafe { r(ctx, base, size, ty, device) }
}
fn cuda_register(f: &Fakes, p: usize, memory_type: u32, managed: i32, ordinal: i32) {
    let r: unsafe extern "C" fn(usize, u32, i32, i32) = f.cuda.sym(c"fake_register_pointer");
    // SAFETY: the fake's C signature; plain integer arguments only.
    unsafe { r(p, memory_type, managed, ordinal) }
}
fn reset(f: &Fakes) {
    f.cuda.reset();
    f.hip.reset();
    f.ze.reset();
}

fn classify(p: usize, ctx: usize) -> dlpack_helpers_pointer_info {
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid value.
    let mut i: dlpack_helpers_pointer_info = unsafe { std::mem::zeroed() };
    i.struct_size = std::mem::size_of::<dlpack_helpers_pointer_info>();
    // SAFETY: the pointer and context arguments are opaque addresses the library only hands to the
    // fake drivers (never dereferenced); the out-pointers are live.
    let s = unsafe { dlpack_pointer_classify(p as *const c_void, ctx as *mut c_void, &mut i) };
    assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "{}", last_error());
    i
}
fn summary(i: &dlpack_helpers_pointer_info) -> (i32, i32, i32, i32, u32) {
    (
        i.memory_class,
        i.host_access,
        i.device.device_type.0,
        i.device.device_id,
        i.answered_by,
    )
}

const ALL: u32 =
    DLPACK_HELPERS_BACKEND_CUDA | DLPACK_HELPERS_BACKEND_HIP | DLPACK_HELPERS_BACKEND_LEVEL_ZERO;

#[test]
fn every_class_of_every_backend() {
    let (f, _g) = fakes();
    let (b, hip_b, ze_b) = (
        DLPACK_HELPERS_BACKEND_CUDA,
        DLPACK_HELPERS_BACKEND_HIP,
        DLPACK_HELPERS_BACKEND_LEVEL_ZERO,
    );
    let (a, n) = (
        DLPACK_HELPERS_HOST_ACCESS_ALWAYS,
        DLPACK_HELPERS_HOST_ACCESS_NEVER,
    );
    // CUDA: pinned, managed, device.
    let c = region(64);
    cuda_register(f, c, 1, 0, 0);
    cuda_register(f, c + 8, 2, 1, 1);
    cuda_register(f, c + 16, 2, 0, 1);
    assert_eq!(
        summary(&classify(c, 0)),
        (DLPACK_HELPERS_MEMORY_PINNED_HOST, a, 3, 0, b)
    );
    assert_eq!(
        summary(&classify(c + 8, 0)),
        (DLPACK_HELPERS_MEMORY_MANAGED, a, 13, 0, b)
    );
    assert_eq!(
        summary(&classify(c + 16, 0)),
        (DLPACK_HELPERS_MEMORY_DEVICE, n, 2, 1, b)
    );
    // HIP (ROCm 6 encoding): host 1, device 2, managed 3, isManaged, unified 11, array 10.
    let h = region(6 * 256);
    for (i, (ty, managed)) in [(1, 0), (2, 0), (3, 0), (2, 1), (11, 0), (10, 0)]
        .into_iter()
        .enumerate()
    {
        hip_register(f, h + i * 256, 256, ty, 1, managed);
    }
    let want = [
        (DLPACK_HELPERS_MEMORY_PINNED_HOST, a, 11, 0),
        (DLPACK_HELPERS_MEMORY_DEVICE, n, 10, 1),
        (DLPACK_HELPERS_MEMORY_MANAGED, a, 10, 1),
        (DLPACK_HELPERS_MEMORY_MANAGED, a, 10, 1),
        (DLPACK_HELPERS_MEMORY_MANAGED, a, 10, 1),
        (DLPACK_HELPERS_MEMORY_DEVICE, n, 10, 1),
    ];
    for (i, w) in want.into_iter().enumerate() {
        let got = classify(h + i * 256, 0);
        assert_eq!(summary(&got), (w.0, w.1, w.2, w.3, hip_b), "hip region {i}");
        assert_eq!(got.backends_asked, b | hip_b);
    }
    // Level Zero: host, device, shared, with the device handle for device and shared.
    let z = region(3 * 128);
    for (i, ty) in [1u32, 2, 3].into_iter().enumerate() {
        ze_register(f, CTX, z + i * 128, 128, ty, 0xDE0 + i);
    }
    let got = classify(z, CTX);
    assert_eq!(
        summary(&got),
        (DLPACK_HELPERS_MEMORY_PINNED_HOST, a, 14, 0, ze_b)
    );
    assert_eq!((got.native_device as usize, got.backends_asked), (0, ALL));
    // Peer case 54: without a registered device list the SYCL ordinal is not established, and
    // says so in its own field: never a -1 id.
    assert_eq!(got.device_id_known, 0);
    let got = classify(z + 128, CTX);
    assert_eq!(
        summary(&got),
        (DLPACK_HELPERS_MEMORY_DEVICE, n, 14, 0, ze_b)
    );
    assert_eq!(
        (got.native_device as usize, got.device_id_known),
        (0xDE1, 0)
    );
    let got = classify(z + 256, CTX);
    assert_eq!(
        summary(&got),
        (DLPACK_HELPERS_MEMORY_MANAGED, a, 14, 0, ze_b)
    );
    assert_eq!(got.device_id_known, 0);
    // The registered context serves a NULL argument; another context does not know it.
    // SAFETY: the context is an opaque handle the library only hands to the fake Level Zero loader
    // (NULL unsets it).
    unsafe { dlpack_level_zero_context_set(CTX as *mut c_void) };
    assert_eq!(
        classify(z + 128, 0).memory_class,
        DLPACK_HELPERS_MEMORY_DEVICE
    );
    // Asked in another context, Level Zero does not know the allocation: its "not mine" cannot
    // exclude USM memory of another context, so the answer is unknown, never host memory (a
    // new-user test found this device memory reported as confirmed kDLCPU).
    let u = dlpack_helpers_pointer_info {
        host_access: -1,
        ..classify(z + 128, OTHER_CTX)
    };
    assert_eq!(
        summary(&u),
        (DLPACK_HELPERS_MEMORY_UNKNOWN, -1, 0, 0, 0),
        "device memory of CTX asked in OTHER_CTX"
    );
    assert_eq!(
        classify(z + 128, OTHER_CTX).host_access,
        DLPACK_HELPERS_HOST_ACCESS_UNKNOWN
    );
    assert_eq!((u.backends_asked, u.backends_unreachable), (ALL, 0));
    // Unknown to all three, every one asked: still unknown, since Level Zero answered for CTX only.
    let plain = region(8);
    let got = classify(plain, CTX);
    assert_eq!(summary(&got), (DLPACK_HELPERS_MEMORY_UNKNOWN, 3, 0, 0, 0));
    assert_eq!((got.backends_asked, got.backends_unreachable), (ALL, 0));
    let mut d = dev(DLDeviceType(-1), -1);
    // The same through dlpack_pointer_get_device: plain memory with CTX registered, and CTX's
    // device memory with OTHER_CTX registered.
    for (p, registered) in [(plain, CTX), (z + 128, OTHER_CTX)] {
        // SAFETY: the context is an opaque handle the library only hands to the fake Level Zero
        // loader.
        unsafe { dlpack_level_zero_context_set(registered as *mut c_void) };
        assert_eq!(
            // SAFETY: the pointer is an opaque address the library only hands to the fake drivers
            // (never dereferenced); the out-pointer is live.
            unsafe { dlpack_pointer_get_device(p as *const c_void, &mut d) },
            DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN
        );
        assert_eq!(d.device_type, DLDeviceType(-1), "nothing written");
        assert!(last_error().contains("another context"), "{}", last_error());
    }
    // SAFETY: as above.
    unsafe { dlpack_level_zero_context_set(CTX as *mut c_void) };
    // Without any context, Level Zero (present) cannot be asked: unknown, never kDLCPU.
    // SAFETY: the context is an opaque handle the library only hands to the fake Level Zero loader
    // (NULL unsets it).
    unsafe { dlpack_level_zero_context_set(std::ptr::null_mut()) };
    let got = classify(plain, 0);
    assert_eq!(got.memory_class, DLPACK_HELPERS_MEMORY_UNKNOWN);
    assert_eq!(got.host_access, DLPACK_HELPERS_HOST_ACCESS_UNKNOWN);
    assert_eq!(
        (got.backends_asked, got.backends_unreachable),
        (b | hip_b, ze_b)
    );
    assert_eq!(
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        unsafe { dlpack_pointer_get_device(plain as *const c_void, &mut d) },
        DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN
    );
    // get_device reports the claimed device of HIP memory (the old CPU answer was a guess).
    assert_eq!(
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        unsafe { dlpack_pointer_get_device((h + 256) as *const c_void, &mut d) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!((d.device_type, d.device_id), (DLDeviceType::kDLROCM, 1));
}

/// Any address inside an allocation answers like its base, including its last byte; one past
/// the end is not part of it. One driver call per query for HIP and Level Zero.
#[test]
fn interior_last_byte_and_one_past() {
    let (f, _g) = fakes();
    let h = region(1024);
    hip_register(f, h, 1000, 2, 0, 0);
    let z = region(1024);
    ze_register(f, CTX, z, 1000, 2, 0xD0);
    for (base, ctx, backend) in [
        (h, 0, DLPACK_HELPERS_BACKEND_HIP),
        (z, CTX, DLPACK_HELPERS_BACKEND_LEVEL_ZERO),
    ] {
        for off in [0, 1, 500, 999] {
            let i = classify(base + off, ctx);
            assert_eq!(
                (i.memory_class, i.answered_by),
                (DLPACK_HELPERS_MEMORY_DEVICE, backend),
                "offset {off}"
            );
        }
        let past = classify(base + 1000, ctx);
        assert_ne!(
            past.answered_by, backend,
            "one past the end belongs to no allocation"
        );
    }
    reset(f);
    classify(h + 999, 0);
    assert_eq!(f.hip.count("hipPointerGetAttributes"), 1);
    assert_eq!(f.ze.count("zeMemGetAllocProperties"), 0);
    classify(z + 999, CTX);
    assert_eq!(f.hip.count("hipPointerGetAttributes"), 2);
    assert_eq!(f.ze.count("zeMemGetAllocProperties"), 1);
}

/// Each driver call failing is DEVICE_ERROR naming the call, nothing written; never a guess.
#[test]
fn each_driver_call_failing() {
    let (f, _g) = fakes();
    let z = region(64);
    ze_register(f, CTX, z, 64, 3, 0xD1);
    let cases: [(&Fake, &str, i32, &str); 3] = [
        (
            &f.cuda,
            "cuPointerGetAttributes",
            700,
            "cuPointerGetAttributes",
        ),
        (
            &f.hip,
            "hipPointerGetAttributes",
            400,
            "hipPointerGetAttributes",
        ),
        (
            &f.ze,
            "zeMemGetAllocProperties",
            0x7800_0001,
            "zeMemGetAllocProperties",
        ),
    ];
    for (fake, call, code, needle) in cases {
        fake.fail(call, code);
        // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid
        // value.
        let mut i: dlpack_helpers_pointer_info = unsafe { std::mem::zeroed() };
        i.struct_size = std::mem::size_of::<dlpack_helpers_pointer_info>();
        i.memory_class = 99;
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        let s = unsafe { dlpack_pointer_classify(z as *const c_void, CTX as *mut c_void, &mut i) };
        assert_eq!(s, DLPACK_HELPERS_STATUS_DEVICE_ERROR, "{call}");
        assert_eq!(i.memory_class, 99, "nothing written on failure");
        assert!(last_error().contains(needle), "{}", last_error());
        let mut d = dev(DLDeviceType(-1), -1);
        // SAFETY: the context is an opaque handle the library only hands to the fake Level Zero
        // loader (NULL unsets it).
        unsafe { dlpack_level_zero_context_set(CTX as *mut c_void) };
        assert_eq!(
            // SAFETY: the pointer and context arguments are opaque addresses the library only hands
            // to the fake drivers (never dereferenced); the out-pointers are live.
            unsafe { dlpack_pointer_get_device(z as *const c_void, &mut d) },
            DLPACK_HELPERS_STATUS_DEVICE_ERROR
        );
        assert_eq!(d.device_type, DLDeviceType(-1));
        // SAFETY: the context is an opaque handle the library only hands to the fake Level Zero
        // loader (NULL unsets it).
        unsafe { dlpack_level_zero_context_set(std::ptr::null_mut()) };
        fake.fail(call, 0);
    }
    // A failing zeMemGetAllocProperties is also DEVICE_ERROR for the per-tensor answer.
    f.ze.fail("zeMemGetAllocProperties", 0x7800_0001);
    let t = one_api_tensor(z, 8);
    let mut a = -1;
    assert_eq!(
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        unsafe { dlpack_dltensor_host_access(&t.dl_tensor, CTX as *mut c_void, &mut a) },
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    assert_eq!(a, -1);
    f.ze.fail("zeMemGetAllocProperties", 0);
}

static SHAPE: [i64; 1] = [8];

fn one_api_tensor(data: usize, n: i64) -> DLManagedTensorVersioned {
    assert_eq!(n, SHAPE[0]);
    DLManagedTensorVersioned {
        version: DLPackVersion::new(1, 3),
        manager_ctx: std::ptr::null_mut(),
        deleter: None,
        flags: 0,
        dl_tensor: DLTensor {
            data: data as *mut c_void,
            device: dev(DLDeviceType::kDLOneAPI, 0),
            ndim: 1,
            dtype: DLDataType {
                code: 2,
                bits: 32,
                lanes: 1,
            },
            shape: SHAPE.as_ptr() as *mut i64,
            strides: [1i64].as_ptr() as *mut i64,
            byte_offset: 0,
        },
    }
}

/// Speed contract: the device table answers without any driver call; only "depends" asks, and
/// then exactly one Level Zero call, no CUDA or HIP call.
#[test]
fn host_access_counts_driver_calls() {
    let (f, _g) = fakes();
    let z = region(64);
    ze_register(f, CTX, z, 64, 1, 0);
    let mut t = one_api_tensor(z, 8);
    let counts = |f: &Fakes| {
        (
            f.cuda.count("cuPointerGetAttributes"),
            f.hip.count("hipPointerGetAttributes"),
            f.ze.count("zeMemGetAllocProperties"),
        )
    };
    for (ty, want) in [
        (DLDeviceType::kDLCPU, DLPACK_HELPERS_HOST_ACCESS_ALWAYS),
        (DLDeviceType::kDLCUDA, DLPACK_HELPERS_HOST_ACCESS_NEVER),
        (DLDeviceType::kDLCUDAHost, DLPACK_HELPERS_HOST_ACCESS_ALWAYS),
        (DLDeviceType::kDLROCM, DLPACK_HELPERS_HOST_ACCESS_NEVER),
        (DLDeviceType::kDLROCMHost, DLPACK_HELPERS_HOST_ACCESS_ALWAYS),
    ] {
        t.dl_tensor.device = dev(ty, 0);
        reset(f);
        for _ in 0..1000 {
            let mut a = -1;
            assert_eq!(
                // SAFETY: the pointer and context arguments are opaque addresses the library only
                // hands to the fake drivers (never dereferenced); the out-pointers are live.
                unsafe { dlpack_tensor_host_access(&t, CTX as *mut c_void, &mut a) },
                DLPACK_HELPERS_STATUS_OK
            );
            assert_eq!(a, want);
        }
        assert_eq!(counts(f), (0, 0, 0), "device type {}", ty.0);
    }
    t.dl_tensor.device = dev(DLDeviceType::kDLOneAPI, 0);
    reset(f);
    for _ in 0..1000 {
        let mut a = -1;
        assert_eq!(
            // SAFETY: the pointer and context arguments are opaque addresses the library only hands
            // to the fake drivers (never dereferenced); the out-pointers are live.
            unsafe { dlpack_tensor_host_access(&t, CTX as *mut c_void, &mut a) },
            DLPACK_HELPERS_STATUS_OK
        );
        assert_eq!(a, DLPACK_HELPERS_HOST_ACCESS_ALWAYS);
    }
    assert_eq!(counts(f), (0, 0, 1000));
    // No context: unknown without a driver call. NULL data: unknown. Legacy form: same answer.
    reset(f);
    let mut a = -1;
    assert_eq!(
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        unsafe { dlpack_tensor_host_access(&t, std::ptr::null_mut(), &mut a) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(
        (a, counts(f)),
        (DLPACK_HELPERS_HOST_ACCESS_UNKNOWN, (0, 0, 0))
    );
    let legacy = DLManagedTensor {
        dl_tensor: t.dl_tensor,
        manager_ctx: std::ptr::null_mut(),
        deleter: None,
    };
    assert_eq!(
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        unsafe { dlpack_legacy_tensor_host_access(&legacy, CTX as *mut c_void, &mut a) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(a, DLPACK_HELPERS_HOST_ACCESS_ALWAYS);
    let mut bad = t;
    bad.version = DLPackVersion::new(2, 0);
    assert_eq!(
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        unsafe { dlpack_tensor_host_access(&bad, CTX as *mut c_void, &mut a) },
        DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION
    );
    assert_eq!(
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        unsafe { dlpack_tensor_host_access(std::ptr::null(), CTX as *mut c_void, &mut a) },
        DLPACK_HELPERS_STATUS_NULL_POINTER
    );
}

/// Speed contract: one driver call per backend asked, whatever the memory class (CUDA device
/// memory used to take three `cuPointerGetAttribute` calls: managed?, type, ordinal).
#[test]
fn one_driver_call_per_backend_per_query() {
    let (f, _g) = fakes();
    let c = region(64);
    cuda_register(f, c, 1, 0, 0);
    cuda_register(f, c + 8, 2, 1, 1);
    cuda_register(f, c + 16, 2, 0, 1);
    let h = region(64);
    hip_register(f, h, 64, 2, 1, 0);
    let z = region(64);
    ze_register(f, CTX, z, 64, 2, 0xD2);
    let plain = region(64);
    let calls = |f: &Fakes| {
        (
            f.cuda.count("cuPointerGetAttributes"),
            f.hip.count("hipPointerGetAttributes"),
            f.ze.count("zeMemGetAllocProperties"),
        )
    };
    for (what, p, want) in [
        ("CUDA pinned", c, (1, 0, 0)),
        ("CUDA managed", c + 8, (1, 0, 0)),
        ("CUDA device", c + 16, (1, 0, 0)),
        ("HIP device", h + 63, (1, 1, 0)),
        ("Level Zero device", z, (1, 1, 1)),
        ("plain host", plain, (1, 1, 1)),
    ] {
        reset(f);
        let i = classify(p, CTX);
        assert_eq!(calls(f), want, "{what}: {:?}", summary(&i));
        reset(f);
        let mut d = dev(DLDeviceType(-1), -1);
        // SAFETY: the context is an opaque handle the library only hands to the fake Level Zero
        // loader (NULL unsets it).
        unsafe { dlpack_level_zero_context_set(CTX as *mut c_void) };
        // SAFETY: the pointer is an opaque address the library only hands to the fake drivers;
        // the out-pointer is live.
        let s = unsafe { dlpack_pointer_get_device(p as *const c_void, &mut d) };
        // SAFETY: as above (NULL unsets the registration).
        unsafe { dlpack_level_zero_context_set(std::ptr::null_mut()) };
        // Plain memory nobody claims is unknown once Level Zero (one context only) was asked.
        // Level Zero device memory without a registered device list: the ordinal is not
        // established (peer case 54), with the same one driver call.
        let want_status = if p == plain {
            DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN
        } else if p == z {
            DLPACK_HELPERS_STATUS_DEVICE_ID_UNKNOWN
        } else {
            DLPACK_HELPERS_STATUS_OK
        };
        assert_eq!(s, want_status, "{what}: {}", last_error());
        assert_eq!(calls(f), want, "{what}: dlpack_pointer_get_device");
    }
}

/// A driver that wants a current context for pointer queries (CUDA_ERROR_INVALID_CONTEXT on a
/// thread without one): the query is asked again inside device 0's primary context, which is
/// popped afterwards; the answer is the memory's, not an error and not "not CUDA's".
#[test]
fn cuda_pointer_query_without_a_current_context() {
    let (f, _g) = fakes();
    let c = region(64);
    cuda_register(f, c, 2, 0, 1);
    let needs: unsafe extern "C" fn(i32) = f.cuda.sym(c"fake_pointer_needs_context");
    // SAFETY: the fake's C signature; a plain integer argument.
    unsafe { needs(1) };
    reset(f);
    let i = classify(c, 0);
    // SAFETY: as above (0 restores the default).
    unsafe { needs(0) };
    assert_eq!(
        summary(&i),
        (
            DLPACK_HELPERS_MEMORY_DEVICE,
            DLPACK_HELPERS_HOST_ACCESS_NEVER,
            2,
            1,
            DLPACK_HELPERS_BACKEND_CUDA
        )
    );
    assert_eq!(f.cuda.count("cuPointerGetAttributes"), 2);
    assert_eq!(
        (
            f.cuda.count("cuCtxPushCurrent_v2"),
            f.cuda.count("cuCtxPopCurrent_v2")
        ),
        (1, 1)
    );
}

/// Speed contract: a successful classification or host-access answer allocates nothing.
#[test]
fn no_allocation_on_success() {
    let (f, _g) = fakes();
    let h = region(64);
    hip_register(f, h, 64, 2, 0, 0);
    let z = region(64);
    ze_register(f, CTX, z, 64, 3, 0xD4);
    let plain = region(64);
    let t = one_api_tensor(z, 8);
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid value.
    let mut info: dlpack_helpers_pointer_info = unsafe { std::mem::zeroed() };
    let mut d = dev(DLDeviceType::kDLCPU, 0);
    let mut a = -1;
    let run = |info: &mut dlpack_helpers_pointer_info, d: &mut DLDevice, a: &mut i32| {
        for p in [h, z, plain] {
            info.struct_size = std::mem::size_of::<dlpack_helpers_pointer_info>();
            let s =
                // SAFETY: the pointer and context arguments are opaque addresses the library only
                // hands to the fake drivers (never dereferenced); the out-pointers are live.
                unsafe { dlpack_pointer_classify(p as *const c_void, CTX as *mut c_void, info) };
            assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
        }
        assert_eq!(
            // SAFETY: the pointer and context arguments are opaque addresses the library only hands
            // to the fake drivers (never dereferenced); the out-pointers are live.
            unsafe { dlpack_pointer_get_device(z as *const c_void, d) },
            DLPACK_HELPERS_STATUS_OK
        );
        assert_eq!(
            // SAFETY: the pointer and context arguments are opaque addresses the library only hands
            // to the fake drivers (never dereferenced); the out-pointers are live.
            unsafe { dlpack_tensor_host_access(&t, std::ptr::null_mut(), a) },
            DLPACK_HELPERS_STATUS_OK
        );
    };
    // The context with its device list (ordinal 0: the allocation's device), registered once:
    // the registration copies the list; the queries that use it allocate nothing.
    let list = [0xD4usize as *mut c_void];
    // SAFETY: one live handle; the context is an opaque handle the fake loader compares.
    unsafe { dlpack_level_zero_context_set_devices(CTX as *mut c_void, list.as_ptr(), 1) };
    run(&mut info, &mut d, &mut a); // loads the drivers (allowed to allocate once)
    // The counter sees this thread's allocations.
    assert_eq!(
        thread_allocations(|| drop(std::hint::black_box(Box::new(1u8)))),
        1
    );
    let n = thread_allocations(|| {
        for _ in 0..100 {
            run(&mut info, &mut d, &mut a);
        }
    });
    assert_eq!(n, 0);
}

/// 8 threads classify HIP, Level Zero and plain memory at once; every answer is exact and each
/// query costs the documented calls.
#[test]
fn eight_threads() {
    let (f, _g) = fakes();
    let h = region(4096);
    hip_register(f, h, 4096, 3, 1, 0);
    let z = region(4096);
    ze_register(f, CTX, z, 4096, 2, 0xD2);
    let plain = region(64);
    reset(f);
    const N: usize = 2000;
    std::thread::scope(|s| {
        for t in 0..8 {
            s.spawn(move || {
                for i in 0..N {
                    let off = (i * 7 + t) % 4096;
                    assert_eq!(
                        classify(h + off, CTX).memory_class,
                        DLPACK_HELPERS_MEMORY_MANAGED
                    );
                    assert_eq!(
                        classify(z + off, CTX).memory_class,
                        DLPACK_HELPERS_MEMORY_DEVICE
                    );
                    assert_eq!(
                        classify(plain, CTX).memory_class,
                        DLPACK_HELPERS_MEMORY_UNKNOWN
                    );
                }
            });
        }
    });
    let q = (8 * N) as i64;
    // HIP: one call for each of the three queries; Level Zero: the two that HIP did not claim.
    assert_eq!(f.hip.count("hipPointerGetAttributes"), 3 * q);
    assert_eq!(f.ze.count("zeMemGetAllocProperties"), 2 * q);
}

#[test]
fn capabilities_name_each_backend() {
    let (_f, _g) = fakes();
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid value.
    let mut info: dlpack_helpers_info = unsafe { std::mem::zeroed() };
    info.struct_size = std::mem::size_of::<dlpack_helpers_info>();
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_get_info(&mut info) },
        DLPACK_HELPERS_STATUS_OK
    );
    let want = DLPACK_HELPERS_CAP_CUDA
        | DLPACK_HELPERS_CAP_ROCM
        | DLPACK_HELPERS_CAP_LEVEL_ZERO
        | DLPACK_HELPERS_CAP_POINTER_CUDA
        | DLPACK_HELPERS_CAP_POINTER_ROCM
        | DLPACK_HELPERS_CAP_POINTER_LEVEL_ZERO;
    assert_eq!(info.capabilities & want, want);
}

static WAIT_HANDLE_CALLS: AtomicUsize = AtomicUsize::new(0);
static LAST: Mutex<(i32, usize, i32, usize)> = Mutex::new((0, 0, 0, 0));

unsafe extern "C" fn q_wait(_: *mut c_void, _: i32, _: *mut c_void, _: *mut c_void) -> i32 {
    0
}
unsafe extern "C" fn q_sync(_: *mut c_void, _: i32, _: *mut c_void) -> i32 {
    0
}
unsafe extern "C" fn q_wait_handle(
    ctx: *mut c_void,
    device_id: i32,
    producer: *mut c_void,
    kind: i32,
    consumer: *mut c_void,
) -> i32 {
    assert_eq!(ctx as usize, 0x5EC);
    WAIT_HANDLE_CALLS.fetch_add(1, Ordering::SeqCst);
    *LAST.lock().unwrap() = (device_id, producer as usize, kind, consumer as usize);
    if consumer as usize == 0xBAD { 9 } else { 0 }
}

/// Peer case 51 (dpctl #1969): a kDLOneAPI tensor through import (version check), host access
/// answered from its USM kind, validation with REQUIRE_CPU_ACCESSIBLE, and an export whose
/// consumer stream is a SYCL queue object carried as a handle of its kind to a registered
/// backend's wait.
#[test]
fn case_51() {
    let (f, _g) = fakes();
    let shared = region(64);
    let device = region(64);
    ze_register(f, CTX, shared, 64, 3, 0xD3);
    ze_register(f, CTX, device, 64, 2, 0xD3);
    // SAFETY: the context is an opaque handle the library only hands to the fake Level Zero loader
    // (NULL unsets it).
    unsafe { dlpack_level_zero_context_set(CTX as *mut c_void) };
    let mut t = one_api_tensor(shared, 8);
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_tensor_check_version_or_delete(&mut t, std::ptr::null_mut()) },
        DLPACK_HELPERS_STATUS_OK
    );
    // Host access from the pointer: shared → always, device → never, never guessed.
    let access = |t: &DLManagedTensorVersioned| {
        let mut a = -1;
        assert_eq!(
            // SAFETY: the pointer and context arguments are opaque addresses the library only hands
            // to the fake drivers (never dereferenced); the out-pointers are live.
            unsafe { dlpack_tensor_host_access(t, std::ptr::null_mut(), &mut a) },
            DLPACK_HELPERS_STATUS_OK
        );
        a
    };
    assert_eq!(access(&t), DLPACK_HELPERS_HOST_ACCESS_ALWAYS);
    let mut dev_t = one_api_tensor(device, 8);
    assert_eq!(access(&dev_t), DLPACK_HELPERS_HOST_ACCESS_NEVER);
    // The device table alone still says "depends" for kDLOneAPI.
    assert_eq!(
        dlpack_device_host_access(t.dl_tensor.device),
        DLPACK_HELPERS_HOST_ACCESS_DEPENDS
    );
    // Validation: pure REQUIRE_CPU_ACCESSIBLE refuses kDLOneAPI; with RESOLVE_HOST_ACCESS the
    // memory answers.
    let mut o = dlpack_helpers_validate_options {
        struct_size: std::mem::size_of::<dlpack_helpers_validate_options>(),
        flags: DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE,
        ..Default::default()
    };
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    let validate = |t: &DLManagedTensorVersioned, o: &dlpack_helpers_validate_options| unsafe {
        dlpack_tensor_validate(t, o, std::ptr::null_mut())
    };
    assert_eq!(validate(&t, &o), DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE);
    o.flags |= DLPACK_HELPERS_VALIDATE_RESOLVE_HOST_ACCESS;
    assert_eq!(
        validate(&t, &o),
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    assert_eq!(
        validate(&dev_t, &o),
        DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE
    );
    assert!(last_error().contains("device memory"), "{}", last_error());
    // Other rules still come first.
    dev_t.dl_tensor.ndim = -1;
    assert_eq!(validate(&dev_t, &o), DLPACK_HELPERS_STATUS_INVALID_NDIM);
    // Unknown memory (not a USM allocation of the context) fails too.
    let plain = region(64);
    let u = one_api_tensor(plain, 8);
    assert_eq!(validate(&u, &o), DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE);
    assert!(last_error().contains("unknown kind"), "{}", last_error());
    // Out-parameters only on OK: a tensor that passes every other rule, refused by the
    // host-access check, leaves `out_layout` as it was (the fuzz tensor target found it written);
    // an accepted one gets its layout.
    let sentinel = dlpack_helpers_layout {
        numel: -7,
        properties: 0xDEAD,
        ..Default::default()
    };
    for (tensor, want) in [
        (&dev_t, DLPACK_HELPERS_STATUS_INVALID_NDIM),
        (&u, DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE),
        (
            &one_api_tensor(device, 8),
            DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE,
        ),
        (&t, DLPACK_HELPERS_STATUS_OK),
    ] {
        let mut layout = sentinel;
        // SAFETY: the tensor and options are live locals; `layout` is live storage.
        let s = unsafe { dlpack_tensor_validate(tensor, &o, &mut layout) };
        assert_eq!(s, want, "{}", last_error());
        if s == DLPACK_HELPERS_STATUS_OK {
            assert_eq!(layout.numel, 8);
        } else {
            assert_eq!(layout, sentinel, "out_layout written on {}", last_error());
        }
    }

    // Export with a SYCL queue as the consumer's stream.
    let queue: usize = 0x5A_0000;
    let mut s = dlpack_helpers_stream {
        kind: -1,
        handle: std::ptr::null_mut(),
    };
    let one = dev(DLDeviceType::kDLOneAPI, 2);
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe {
            dlpack_stream_decode_handle(
                one,
                DLPACK_HELPERS_STREAM_SYCL_QUEUE,
                queue as *mut c_void,
                &mut s,
            )
        },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(
        (s.kind, s.handle as usize),
        (DLPACK_HELPERS_STREAM_SYCL_QUEUE, queue)
    );
    let req = dlpack_helpers_export_request {
        has_max_version: true,
        max_version: DLPackVersion::new(1, 3),
        has_stream: false,
        stream: 0,
        has_dl_device: false,
        dl_device: one,
        copy: DLPACK_HELPERS_COPY_IF_NEEDED,
    };
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid value.
    let mut plan: dlpack_helpers_export_plan = unsafe { std::mem::zeroed() };
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe {
            dlpack_export_request_resolve_with_stream(
                &req,
                &s,
                one,
                DLPackVersion::new(1, 3),
                0,
                &mut plan,
            )
        },
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    assert_eq!(plan.sync, DLPACK_HELPERS_SYNC_STREAM_WAIT);
    assert_eq!(plan.stream, s);
    assert!(!plan.copy);
    // A queue for a CUDA tensor is a TypeError; both streams at once is refused.
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe {
            dlpack_export_request_resolve_with_stream(
                &req,
                &s,
                dev(DLDeviceType::kDLCUDA, 0),
                DLPackVersion::new(1, 3),
                0,
                &mut plan,
            )
        },
        DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE
    );
    let both = dlpack_helpers_export_request {
        has_stream: true,
        stream: 5,
        ..req
    };
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe {
            dlpack_export_request_resolve_with_stream(
                &both,
                &s,
                one,
                DLPackVersion::new(1, 3),
                0,
                &mut plan,
            )
        },
        DLPACK_HELPERS_STATUS_INVALID_ARGUMENT
    );
    // No backend registered yet for kDLOneAPI in this process: unavailable, not a guess.
    assert_eq!(
        // SAFETY: stream handles are opaque values the library never dereferences (a registered
        // test backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(one, 0x100 as *mut c_void, &s) },
        DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE
    );
    let b = dlpack_helpers_stream_backend_ex {
        struct_size: std::mem::size_of::<dlpack_helpers_stream_backend_ex>(),
        ctx: 0x5EC as *mut c_void,
        wait: Some(q_wait),
        synchronize: Some(q_sync),
        wait_handle: Some(q_wait_handle),
    };
    assert_eq!(
        // SAFETY: stream handles are opaque values the library never dereferences (a registered
        // test backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_backend_register_ex(DLDeviceType::kDLOneAPI, &b) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(
        // SAFETY: stream handles are opaque values the library never dereferences (a registered
        // test backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(one, 0x100 as *mut c_void, &plan.stream) },
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    assert_eq!(WAIT_HANDLE_CALLS.load(Ordering::SeqCst), 1);
    assert_eq!(
        *LAST.lock().unwrap(),
        (2, 0x100, DLPACK_HELPERS_STREAM_SYCL_QUEUE, queue)
    );
    let bad = dlpack_helpers_stream {
        kind: DLPACK_HELPERS_STREAM_ZE_COMMAND_LIST,
        handle: 0xBAD as *mut c_void,
    };
    assert_eq!(
        // SAFETY: stream handles are opaque values the library never dereferences (a registered
        // test backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(one, 0x100 as *mut c_void, &bad) },
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    assert!(last_error().contains("wait_handle"), "{}", last_error());
    let small = dlpack_helpers_stream_backend_ex {
        struct_size: 8,
        ..b
    };
    assert_eq!(
        // SAFETY: stream handles are opaque values the library never dereferences (a registered
        // test backend only compares them); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_backend_register_ex(DLDeviceType::kDLMetal, &small) },
        DLPACK_HELPERS_STATUS_INVALID_ARGUMENT
    );
    // SAFETY: the context is an opaque handle the library only hands to the fake Level Zero loader
    // (NULL unsets it).
    unsafe { dlpack_level_zero_context_set(std::ptr::null_mut()) };
}

/// Peer case 54 (issue 22): the pointer query of Level Zero USM memory never answers
/// `(kDLOneAPI, -1)`. With the device list registered for the context, device and shared memory
/// answer the SYCL ordinal: the index of the allocation's `ze_device_handle_t`, or of its root
/// device for a sub-device (`zeDeviceGetRootDevice` on the fake loader, asked only for a handle
/// the list does not name). USM host memory, a device the list does not name, a list registered
/// for another context, and no list at all: `DEVICE_ID_UNKNOWN` from `dlpack_pointer_get_device`
/// (nothing written) and `device_id_known == 0` with id 0 from `dlpack_pointer_classify`.
#[test]
fn case_54_level_zero_ordinal_from_the_registered_devices() {
    let (f, _g) = fakes();
    const DEV0: usize = 0xD00;
    const DEV1: usize = 0xD01;
    const TILE: usize = 0xD11; // a sub-device of DEV1
    const STRANGER: usize = 0xDFF;
    let z = region(5 * 64);
    ze_register(f, CTX, z, 64, 2, DEV1); // device memory on ordinal 1
    ze_register(f, CTX, z + 64, 64, 3, DEV0); // shared memory on ordinal 0
    ze_register(f, CTX, z + 128, 64, 2, TILE); // device memory on a tile of ordinal 1
    ze_register(f, CTX, z + 192, 64, 1, 0); // USM host memory: no device
    ze_register(f, CTX, z + 256, 64, 2, STRANGER); // a device the list does not name
    let set_root: unsafe extern "C" fn(usize, usize) = f.ze.sym(c"fake_ze_set_root");
    // SAFETY: the fake's C signature; plain integers.
    unsafe { set_root(TILE, DEV1) };
    let get = |p: usize| {
        let mut d = dev(DLDeviceType(-7), -7);
        // SAFETY: the pointer is an opaque address the library only hands to the fake drivers;
        // the out-pointer is live.
        let s = unsafe { dlpack_pointer_get_device(p as *const c_void, &mut d) };
        (s, d.device_type.0, d.device_id)
    };
    let unknown = (DLPACK_HELPERS_STATUS_DEVICE_ID_UNKNOWN, -7, -7);
    // Before any list: not established, never -1.
    // SAFETY: the context is an opaque handle the library only hands to the fake loader.
    unsafe { dlpack_level_zero_context_set(CTX as *mut c_void) };
    assert_eq!(get(z), unknown);
    assert!(last_error().contains("no device list"), "{}", last_error());
    // The list: ordinal 0 is DEV0, 1 is DEV1, 2 a non-Level-Zero device (NULL place holder).
    let list = [
        DEV0 as *mut c_void,
        DEV1 as *mut c_void,
        std::ptr::null_mut(),
    ];
    assert_eq!(
        // SAFETY: three live handles; the context is opaque.
        unsafe { dlpack_level_zero_context_set_devices(CTX as *mut c_void, list.as_ptr(), 3) },
        DLPACK_HELPERS_STATUS_OK
    );
    reset(f);
    assert_eq!(get(z + 8), (DLPACK_HELPERS_STATUS_OK, 14, 1));
    assert_eq!(get(z + 64), (DLPACK_HELPERS_STATUS_OK, 14, 0));
    assert_eq!(
        f.ze.count("zeDeviceGetRootDevice"),
        0,
        "named handles need no root"
    );
    assert_eq!(
        get(z + 128),
        (DLPACK_HELPERS_STATUS_OK, 14, 1),
        "a tile of ordinal 1"
    );
    assert_eq!(f.ze.count("zeDeviceGetRootDevice"), 1);
    assert_eq!(
        get(z + 192),
        unknown,
        "USM host memory belongs to no device"
    );
    assert!(last_error().contains("USM host memory"), "{}", last_error());
    assert_eq!(get(z + 256), unknown, "a device the list does not name");
    assert!(
        last_error().contains("not in the device list"),
        "{}",
        last_error()
    );
    // classify: the same facts as fields.
    let i = classify(z + 128, CTX);
    assert_eq!(
        (
            i.memory_class,
            i.device.device_type.0,
            i.device.device_id,
            i.device_id_known
        ),
        (DLPACK_HELPERS_MEMORY_DEVICE, 14, 1, 1)
    );
    assert_eq!(i.native_device as usize, TILE);
    for p in [z + 192, z + 256] {
        let i = classify(p, CTX);
        assert_eq!(
            (
                i.device.device_type.0,
                i.device.device_id,
                i.device_id_known
            ),
            (14, 0, 0)
        );
    }
    // The list applies to its own context only: asked in OTHER_CTX (where the fake knows a
    // copy of the allocation), the id is not established.
    ze_register(f, OTHER_CTX, z, 64, 2, DEV1);
    let i = classify(z, OTHER_CTX);
    assert_eq!(
        (i.memory_class, i.device.device_id, i.device_id_known),
        (DLPACK_HELPERS_MEMORY_DEVICE, 0, 0)
    );
    // A plain context registration clears the list.
    // SAFETY: the context is an opaque handle.
    unsafe { dlpack_level_zero_context_set(CTX as *mut c_void) };
    assert_eq!(get(z), unknown);
    // Bad arguments leave the registration as it was.
    assert_eq!(
        // SAFETY: NULL devices with a count: refused before reading.
        unsafe { dlpack_level_zero_context_set_devices(CTX as *mut c_void, std::ptr::null(), 2) },
        DLPACK_HELPERS_STATUS_NULL_POINTER
    );
    assert_eq!(
        // SAFETY: refused before reading.
        unsafe {
            dlpack_level_zero_context_set_devices(
                CTX as *mut c_void,
                list.as_ptr(),
                DLPACK_HELPERS_LEVEL_ZERO_MAX_DEVICES + 1,
            )
        },
        DLPACK_HELPERS_STATUS_INVALID_ARGUMENT
    );
    // SAFETY: NULL context clears everything.
    unsafe { dlpack_level_zero_context_set_devices(std::ptr::null_mut(), std::ptr::null(), 0) };
    assert_eq!(
        // SAFETY: NULL clears the registration.
        unsafe { dlpack_level_zero_context_set(std::ptr::null_mut()) },
        0
    );
}

/// Peer case 14 (jax-ml/jax PR #38824: ROCm pinned host buffers exported as plain kDLROCM):
/// `hipHostMalloc` memory (the fake HIP runtime's hipMemoryTypeHost, pinned on device 1) is
/// `(kDLROCMHost, 0)`, host-accessible, with id 0 whatever device pinned it; kDLROCM is not
/// host-accessible. The device table and the pointer query agree.
#[test]
fn case_14_rocm_pinned_host_is_rocm_host() {
    let (f, _g) = fakes();
    let rocm_host = dev(DLDeviceType::kDLROCMHost, 0);
    assert!(dlpack_is_cpu_accessible(rocm_host));
    assert!(!dlpack_is_cpu_accessible(dev(DLDeviceType::kDLROCM, 0)));
    assert_eq!(
        dlpack_device_host_access(rocm_host),
        DLPACK_HELPERS_HOST_ACCESS_ALWAYS
    );
    let p = region(256);
    hip_register(f, p, 256, 1, 1, 0); // hipMemoryTypeHost (ROCm 6), pinned by device 1
    let i = classify(p + 100, 0);
    assert_eq!(
        summary(&i),
        (
            DLPACK_HELPERS_MEMORY_PINNED_HOST,
            DLPACK_HELPERS_HOST_ACCESS_ALWAYS,
            DLDeviceType::kDLROCMHost.0,
            0,
            DLPACK_HELPERS_BACKEND_HIP
        )
    );
    let mut d = dev(DLDeviceType(-7), -7);
    assert_eq!(
        // SAFETY: an address the library only hands to the fake drivers; a live out-pointer.
        unsafe { dlpack_pointer_get_device(p as *const c_void, &mut d) },
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    assert_eq!((d.device_type, d.device_id), (DLDeviceType::kDLROCMHost, 0));
    assert!(
        dlpack_is_cpu_accessible(d),
        "the answer is host-accessible, never kDLROCM"
    );
}

/// Peer case 17 (pytorch/pytorch PR #40123: ROCm tensors exported with the CUDA device type):
/// with both the CUDA driver and the HIP runtime in the process (fakes), HIP device memory is
/// `(kDLROCM, device)` and never `kDLCUDA`, although CUDA is asked first; CUDA device memory is
/// `(kDLCUDA, ordinal)`.
#[test]
fn case_17_rocm_device_memory_is_rocm_never_cuda() {
    let (f, _g) = fakes();
    let h = region(256);
    hip_register(f, h, 256, 2, 1, 0); // hipMemoryTypeDevice on device 1
    let c = region(64);
    cuda_register(f, c, 2, 0, 1); // CU_MEMORYTYPE_DEVICE, ordinal 1
    reset(f);
    let i = classify(h, 0);
    assert_eq!(
        summary(&i),
        (
            DLPACK_HELPERS_MEMORY_DEVICE,
            DLPACK_HELPERS_HOST_ACCESS_NEVER,
            DLDeviceType::kDLROCM.0,
            1,
            DLPACK_HELPERS_BACKEND_HIP
        )
    );
    assert_eq!(
        f.cuda.count("cuPointerGetAttributes"),
        1,
        "CUDA was asked and said no"
    );
    let get = |p: usize| {
        let mut d = dev(DLDeviceType(-7), -7);
        // SAFETY: an address the library only hands to the fake drivers; a live out-pointer.
        let s = unsafe { dlpack_pointer_get_device(p as *const c_void, &mut d) };
        (s, d.device_type, d.device_id)
    };
    assert_eq!(
        get(h + 255),
        (DLPACK_HELPERS_STATUS_OK, DLDeviceType::kDLROCM, 1)
    );
    assert_eq!(get(c), (DLPACK_HELPERS_STATUS_OK, DLDeviceType::kDLCUDA, 1));
}
