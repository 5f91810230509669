//! Stream synchronization through a test double of the HIP runtime (tests-c/fake/fake_hip.c),
//! loaded through DLPACK_HELPERS_HIP_LIBRARY.

mod common;

use common::*;
use dlpack_helpers::abi::{DLDevice, DLDeviceType};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::stream::*;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, OnceLock};

const ROCM: DLDeviceType = DLDeviceType::kDLROCM;

fn fake() -> (&'static Fake, MutexGuard<'static, ()>) {
    static FAKE: OnceLock<Fake> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let f = FAKE.get_or_init(|| {
        let path = build_fake("fake_hip");
        // SAFETY: set once, before the library reads it.
        unsafe { std::env::set_var("DLPACK_HELPERS_HIP_LIBRARY", &path) };
        assert_eq!(
            // SAFETY: plain-value arguments only: no pointer is read.
            unsafe { dlpack_stream_backend_check(ROCM) },
            DLPACK_HELPERS_STATUS_OK,
            "{}",
            last_error()
        );
        Fake::open(&path)
    });
    (f, LOCK.lock().unwrap_or_else(|e| e.into_inner()))
}

fn wait(d: DLDevice, producer: usize, consumer: usize) -> dlpack_helpers_status {
    let c = dlpack_helpers_stream {
        kind: DLPACK_HELPERS_STREAM_HANDLE,
        handle: consumer as *mut c_void,
    };
    // SAFETY: stream handles are opaque values that only the fake runtime records (never
    // dereferenced); the other pointers are NULL or live locals.
    unsafe { dlpack_stream_wait(d, producer as *mut c_void, &c) }
}

#[test]
fn event_pool_reuse_and_device_restore() {
    let (f, _g) = fake();
    assert_eq!(
        wait(dev(ROCM, 1), 0x100, 0x200),
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    f.reset();
    for i in 0..50 {
        assert_eq!(
            wait(dev(ROCM, 1), 0x100, 0x300 + i),
            DLPACK_HELPERS_STATUS_OK,
            "{}",
            last_error()
        );
    }
    assert_eq!(f.count("hipEventCreateWithFlags"), 0);
    assert_eq!(f.count("hipEventRecord"), 50);
    assert_eq!(f.count("hipStreamWaitEvent"), 50);
    // Device 1 made current, then device 0 restored, on every call.
    assert_eq!(f.count("hipSetDevice"), 100);
    let get: unsafe extern "C" fn(*mut i32) -> i32 = f.sym(c"hipGetDevice");
    let mut d = -1;
    // SAFETY: the fake runtime's C signature; `d` is a live local out-pointer.
    assert_eq!(unsafe { get(&mut d) }, 0);
    assert_eq!(d, 0);
    let (rec_event, rec_stream) = f.last("hipEventRecord");
    let (wait_stream, wait_event) = f.last("hipStreamWaitEvent");
    assert_eq!(
        (rec_stream, wait_stream, rec_event),
        (0x100, 0x300 + 49, wait_event)
    );
}

/// Peer case 25 on ROCm: `None` and 0 are the NULL stream; the same stream skips.
#[test]
fn case_25_rocm_default_stream_is_null() {
    let (f, _g) = fake();
    let mut s = dlpack_helpers_stream {
        kind: -1,
        // A sentinel the decode must overwrite with NULL; never dereferenced.
        handle: std::ptr::without_provenance_mut(1),
    };
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_decode(dev(ROCM, 0), true, 0, 0, &mut s) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(
        (s.kind, s.handle as usize),
        (DLPACK_HELPERS_STREAM_DEFAULT, 0)
    );
    f.reset();
    assert_eq!(
        // SAFETY: stream handles are opaque values that only the fake runtime records (never
        // dereferenced); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(dev(ROCM, 0), std::ptr::null_mut(), &s) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(f.count("hipEventRecord"), 0);
    assert_eq!(
        // SAFETY: stream handles are opaque values that only the fake runtime records (never
        // dereferenced); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(dev(ROCM, 0), 0x500 as *mut c_void, &s) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(f.last("hipStreamWaitEvent").0, 0);
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_decode(dev(ROCM, 0), true, 1, 0, &mut s) },
        DLPACK_HELPERS_STATUS_INVALID_STREAM
    );
}

#[test]
fn errors_map_to_statuses() {
    let (f, _g) = fake();
    f.fail("hipStreamWaitEvent", 400);
    assert_eq!(
        wait(dev(ROCM, 0), 0x100, 0x200),
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    let m = last_error();
    assert!(
        m.contains("hipStreamWaitEvent") && m.contains("hipErrorInvalidHandle (400)"),
        "{m}"
    );
    f.fail("hipStreamWaitEvent", 0);
    assert_eq!(
        wait(dev(ROCM, 7), 0x100, 0x200),
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    assert!(last_error().contains("hipSetDevice"), "{}", last_error());
    f.fail("hipStreamSynchronize", 1);
    assert_eq!(
        // SAFETY: stream handles are opaque values that only the fake runtime records (never
        // dereferenced); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_synchronize(dev(ROCM, 0), 0x9 as *mut c_void) },
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    f.fail("hipStreamSynchronize", 0);
    assert_eq!(
        // SAFETY: stream handles are opaque values that only the fake runtime records (never
        // dereferenced); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_synchronize(dev(ROCM, 0), 0x9 as *mut c_void) },
        DLPACK_HELPERS_STATUS_OK
    );
}

#[test]
fn eight_threads_at_once() {
    let (f, _g) = fake();
    f.reset();
    std::thread::scope(|s| {
        for t in 0..8usize {
            s.spawn(move || {
                for i in 0..300usize {
                    let st = wait(dev(ROCM, t as i32 % 2), 0x1_0000 + t, 0x2_0000 + i);
                    assert_eq!(st, DLPACK_HELPERS_STATUS_OK, "{}", last_error());
                }
            });
        }
    });
    assert_eq!(f.count("hipEventRecord"), 2400);
    assert_eq!(f.count("hipStreamWaitEvent"), 2400);
    assert!(f.count("hipEventCreateWithFlags") <= 16);
}
