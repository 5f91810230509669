//! Stream synchronization through a test double of the CUDA driver (tests-c/fake/fake_cuda.c),
//! loaded through DLPACK_HELPERS_CUDA_LIBRARY exactly as the real libcuda.so.1 would be.
//! The same checks run on a real GPU in scripts/gpu-check.

mod common;

use common::*;
use dlpack_helpers::abi::{DLDevice, DLDeviceType, DLPackVersion};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::info::{
    DLPACK_HELPERS_CAP_CUDA, DLPACK_HELPERS_CAP_ROCM, dlpack_get_info, dlpack_helpers_info,
};
use dlpack_helpers::capi::stream::*;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, OnceLock};

const CUDA: DLDeviceType = DLDeviceType::kDLCUDA;

/// One fake per process; tests that count calls hold the lock.
fn fake() -> (&'static Fake, MutexGuard<'static, ()>) {
    static FAKE: OnceLock<Fake> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let f = FAKE.get_or_init(|| {
        let path = build_fake("fake_cuda");
        // SAFETY: set once, before the library reads it (every test comes through here first).
        unsafe {
            std::env::set_var("DLPACK_HELPERS_CUDA_LIBRARY", &path);
            std::env::set_var("DLPACK_HELPERS_HIP_LIBRARY", "/nonexistent/libamdhip64.so");
        }
        assert_eq!(
            // SAFETY: plain-value arguments only: no pointer is read.
            unsafe { dlpack_stream_backend_check(CUDA) },
            DLPACK_HELPERS_STATUS_OK,
            "{}",
            last_error()
        );
        Fake::open(&path)
    });
    (f, LOCK.lock().unwrap_or_else(|e| e.into_inner()))
}

fn handle(h: usize) -> dlpack_helpers_stream {
    dlpack_helpers_stream {
        kind: DLPACK_HELPERS_STREAM_HANDLE,
        handle: h as *mut c_void,
    }
}

fn wait(d: DLDevice, producer: usize, consumer: dlpack_helpers_stream) -> dlpack_helpers_status {
    // SAFETY: stream handles are opaque values that only the fake runtime records (never
    // dereferenced); the other pointers are NULL or live locals.
    unsafe { dlpack_stream_wait(d, producer as *mut c_void, &consumer) }
}

/// After warm-up: one event record and one stream wait per call, no event creation, no host
/// blocking, and the context pushed and popped in pairs.
#[test]
fn event_pool_reuse_one_record_one_wait_per_call() {
    let (f, _g) = fake();
    assert_eq!(
        wait(dev(CUDA, 0), 0x100, handle(0x200)),
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    f.reset();
    for i in 0..100 {
        assert_eq!(
            wait(dev(CUDA, 0), 0x100 + i, handle(0x200 + i)),
            DLPACK_HELPERS_STATUS_OK
        );
    }
    assert_eq!(f.count("cuEventCreate"), 0);
    assert_eq!(f.count("cuEventRecord"), 100);
    assert_eq!(f.count("cuStreamWaitEvent"), 100);
    assert_eq!(f.count("cuStreamSynchronize"), 0);
    assert_eq!(
        f.count("cuCtxPushCurrent_v2"),
        f.count("cuCtxPopCurrent_v2")
    );
    assert_eq!(
        f.count("cuDevicePrimaryCtxRetain"),
        0,
        "primary context retained once"
    );
}

/// Peer case 24: the event is recorded on the producer's stream and the consumer's stream waits
/// on that same event, for the legacy default stream (1) and for an explicit handle.
#[test]
fn case_24_consumer_stream_waits_on_producer_event() {
    let (f, _g) = fake();
    let producer = 0xa000usize;
    for (has, value, native) in [
        (true, 1i64, 0x1usize),
        (false, 0, 0x1),
        (true, 0xb000, 0xb000),
        (true, 2, 0x2),
    ] {
        let mut s = dlpack_helpers_stream {
            kind: -1,
            handle: std::ptr::null_mut(),
        };
        assert_eq!(
            // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
            // values.
            unsafe { dlpack_stream_decode(dev(CUDA, 0), has, value, 0, &mut s) },
            DLPACK_HELPERS_STATUS_OK
        );
        f.reset();
        assert_eq!(
            wait(dev(CUDA, 0), producer, s),
            DLPACK_HELPERS_STATUS_OK,
            "{}",
            last_error()
        );
        let (rec_event, rec_stream) = f.last("cuEventRecord");
        let (wait_stream, wait_event) = f.last("cuStreamWaitEvent");
        assert_eq!(rec_stream, producer);
        assert_eq!(wait_stream, native);
        assert_eq!(rec_event, wait_event);
        assert_eq!(
            (f.count("cuEventRecord"), f.count("cuStreamWaitEvent")),
            (1, 1)
        );
    }
}

/// Peer case 27 (CPU part): the ordering is made in stream order; the host is never blocked.
#[test]
fn case_27_wait_does_not_block_the_host() {
    let (f, _g) = fake();
    f.reset();
    assert_eq!(
        wait(dev(CUDA, 0), 0xa000, handle(0xc000)),
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(f.count("cuStreamSynchronize"), 0);
    assert_eq!(f.count("cuStreamWaitEvent"), 1);
}

/// Same stream (NULL and CU_STREAM_LEGACY included) and -1 skip every driver call.
#[test]
fn skips_same_stream_and_no_sync() {
    let (f, _g) = fake();
    f.reset();
    assert_eq!(
        wait(dev(CUDA, 0), 0xa000, handle(0xa000)),
        DLPACK_HELPERS_STATUS_OK
    );
    let legacy = dlpack_helpers_stream {
        kind: DLPACK_HELPERS_STREAM_LEGACY_DEFAULT,
        // CU_STREAM_LEGACY: a token the driver compares, never an address to dereference.
        handle: std::ptr::without_provenance_mut(1),
    };
    assert_eq!(wait(dev(CUDA, 0), 0, legacy), DLPACK_HELPERS_STATUS_OK);
    let mut s = dlpack_helpers_stream {
        kind: -1,
        handle: std::ptr::null_mut(),
    };
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_decode(dev(CUDA, 0), true, -1, 0, &mut s) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(s.kind, DLPACK_HELPERS_STREAM_NO_SYNC);
    assert_eq!(wait(dev(CUDA, 0), 0xa000, s), DLPACK_HELPERS_STATUS_OK);
    assert_eq!(
        f.count("cuEventRecord") + f.count("cuStreamWaitEvent") + f.count("cuCtxGetCurrent"),
        0
    );
}

/// Driver errors become DEVICE_ERROR with the call and the driver's error name; the context is
/// popped and the event returned to the pool on the error path.
#[test]
fn driver_errors_map_to_statuses_with_messages() {
    let (f, _g) = fake();
    wait(dev(CUDA, 0), 0x1000, handle(0x2000));
    f.reset();
    f.fail("cuEventRecord", 700);
    assert_eq!(
        wait(dev(CUDA, 0), 0x1000, handle(0x2000)),
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    let m = last_error();
    assert!(
        m.contains("cuEventRecord") && m.contains("CUDA_ERROR_ILLEGAL_ADDRESS (700)"),
        "{m}"
    );
    f.fail("cuEventRecord", 0);
    f.fail("cuStreamWaitEvent", 400);
    assert_eq!(
        wait(dev(CUDA, 0), 0x1000, handle(0x2000)),
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    let m = last_error();
    assert!(
        m.contains("cuStreamWaitEvent") && m.contains("CUDA_ERROR_INVALID_HANDLE"),
        "{m}"
    );
    f.fail("cuStreamWaitEvent", 0);
    assert_eq!(
        wait(dev(CUDA, 0), 0x1000, handle(0x2000)),
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    assert_eq!(
        f.count("cuEventCreate"),
        0,
        "the event went back to the pool after the errors"
    );
    assert_eq!(
        f.count("cuCtxPushCurrent_v2"),
        f.count("cuCtxPopCurrent_v2")
    );
    // A device the driver does not have.
    assert_eq!(
        wait(dev(CUDA, 5), 0x1000, handle(0x2000)),
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    assert!(
        last_error().contains("CUDA_ERROR_INVALID_DEVICE"),
        "{}",
        last_error()
    );
    // A negative id is refused before any driver call (issue 22, peer case 54).
    let before = f.count("cuDeviceGet");
    assert_eq!(
        wait(dev(CUDA, -1), 0x1000, handle(0x2000)),
        DLPACK_HELPERS_STATUS_INVALID_DEVICE
    );
    assert_eq!(f.count("cuDeviceGet"), before);
    // Host synchronization errors too.
    f.fail("cuStreamSynchronize", 700);
    assert_eq!(
        // SAFETY: stream handles are opaque values that only the fake runtime records (never
        // dereferenced); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_synchronize(dev(CUDA, 0), 0x3000 as *mut c_void) },
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    assert!(last_error().contains("cuStreamSynchronize"));
    f.fail("cuStreamSynchronize", 0);
}

/// Device 1 is served in device 1's primary context (the fake refuses to record an event of one
/// context in another), and a thread whose current context already is the primary one gets no
/// push.
#[test]
fn contexts_primary_and_current() {
    let (f, _g) = fake();
    assert_eq!(
        wait(dev(CUDA, 1), 0x1000, handle(0x2000)),
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    assert_eq!(
        wait(dev(CUDA, 0), 0x1000, handle(0x2000)),
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    std::thread::scope(|s| {
        s.spawn(|| {
            let retain: unsafe extern "C" fn(*mut *mut c_void, i32) -> i32 =
                f.sym(c"cuDevicePrimaryCtxRetain");
            let push: unsafe extern "C" fn(*mut c_void) -> i32 = f.sym(c"cuCtxPushCurrent_v2");
            let mut ctx = std::ptr::null_mut();
            // SAFETY: the fake driver's C signatures; `ctx` is a live local out-pointer and then
            // the context the fake returned.
            assert_eq!(unsafe { retain(&mut ctx, 1) }, 0);
            // SAFETY: the fake driver's C signatures; `ctx` is a live local out-pointer and then
            // the context the fake returned.
            assert_eq!(unsafe { push(ctx) }, 0);
            f.reset();
            assert_eq!(
                wait(dev(CUDA, 1), 0x1000, handle(0x2000)),
                DLPACK_HELPERS_STATUS_OK,
                "{}",
                last_error()
            );
            assert_eq!(f.count("cuCtxPushCurrent_v2"), 0);
            // The other device still gets its own context pushed.
            assert_eq!(
                wait(dev(CUDA, 0), 0x1000, handle(0x2000)),
                DLPACK_HELPERS_STATUS_OK,
                "{}",
                last_error()
            );
            assert_eq!(f.count("cuCtxPushCurrent_v2"), 1);
        });
    });
}

/// 8 threads at once: every call succeeds (the fake fails any event used by two threads between
/// record and wait), one record and one wait per call, at most one event per concurrent caller.
#[test]
fn eight_threads_at_once() {
    let (f, _g) = fake();
    f.reset();
    let before = f.count("cuEventCreate");
    std::thread::scope(|s| {
        for t in 0..8usize {
            s.spawn(move || {
                for i in 0..500usize {
                    let st = wait(dev(CUDA, 0), 0x10_000 + t, handle(0x20_000 + t * 1000 + i));
                    assert_eq!(st, DLPACK_HELPERS_STATUS_OK, "{}", last_error());
                }
            });
        }
    });
    assert_eq!(f.count("cuEventRecord"), 4000);
    assert_eq!(f.count("cuStreamWaitEvent"), 4000);
    assert!(
        f.count("cuEventCreate") - before <= 8,
        "{} events created",
        f.count("cuEventCreate")
    );
}

#[test]
fn host_synchronize_drains_the_given_stream() {
    let (f, _g) = fake();
    f.reset();
    assert_eq!(
        // SAFETY: stream handles are opaque values that only the fake runtime records (never
        // dereferenced); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_synchronize(dev(CUDA, 0), 0x4000 as *mut c_void) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(f.count("cuStreamSynchronize"), 1);
    assert_eq!(f.last("cuStreamSynchronize").0, 0x4000);
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_synchronize(dev(DLDeviceType::kDLCPU, 0), std::ptr::null_mut()) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(f.count("cuStreamSynchronize"), 1);
}

/// Peer cases 10 and 12: pinned memory is kDLCUDAHost, managed memory kDLCUDAManaged, both with
/// device id 0; device memory reports its ordinal; unknown memory is not guessed to be kDLCPU.
#[test]
fn case_10_case_12_pointer_device_query() {
    let (f, _g) = fake();
    let reg: unsafe extern "C" fn(*const c_void, u32, i32, i32) = f.sym(c"fake_register_pointer");
    let bufs = [0u64; 4];
    let p = |i: usize| &bufs[i] as *const u64 as *const c_void;
    // SAFETY: the fake's C signature; it only records the addresses of `bufs`, which outlives every
    // query.
    unsafe {
        reg(p(0), 1, 0, 0); // pinned host
        reg(p(1), 2, 1, 1); // managed (driver says device, IS_MANAGED set) on device 1
        reg(p(2), 2, 0, 1); // device memory on device 1
    }
    let q = |ptr| {
        let mut d = dev(DLDeviceType(-7), -7);
        assert_eq!(
            // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
            // values.
            unsafe { dlpack_pointer_get_device(ptr, &mut d) },
            DLPACK_HELPERS_STATUS_OK,
            "{}",
            last_error()
        );
        (d.device_type, d.device_id)
    };
    assert_eq!(q(p(0)), (DLDeviceType::kDLCUDAHost, 0));
    assert_eq!(q(p(1)), (DLDeviceType::kDLCUDAManaged, 0));
    assert_eq!(q(p(2)), (DLDeviceType::kDLCUDA, 1));
    // Memory CUDA does not know, while the HIP override names a missing file: HIP memory could
    // exist and HIP could not be asked, so the device is unknown, not kDLCPU (issue 12 item 3;
    // rules::pointer's unit tests show when kDLCPU is confirmed).
    let mut d = dev(DLDeviceType(-7), -7);
    assert_eq!(
        // SAFETY: the pointer and context arguments are opaque addresses the library only hands to
        // the fake drivers (never dereferenced); the out-pointers are live.
        unsafe { dlpack_pointer_get_device(p(3), &mut d) },
        DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN
    );
    assert_eq!(d.device_type, DLDeviceType(-7));
    assert!(last_error().contains("HIP"), "{}", last_error());
    let mut d = dev(DLDeviceType::kDLCPU, 0);
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_pointer_get_device(std::ptr::null(), &mut d) },
        DLPACK_HELPERS_STATUS_NULL_POINTER
    );
    f.fail("cuPointerGetAttributes", 700);
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_pointer_get_device(p(0), &mut d) },
        DLPACK_HELPERS_STATUS_DEVICE_ERROR
    );
    // The message names the call and the pointer asked about (not a device the query is not
    // about).
    let m = last_error();
    assert!(
        m.contains("cuPointerGetAttributes") && m.contains(&format!("pointer {:p}", p(0))),
        "{m}"
    );
    f.fail("cuPointerGetAttributes", 0);
}

#[test]
fn capabilities_report_cuda_only() {
    let (_f, _g) = fake();
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
        info.capabilities & DLPACK_HELPERS_CAP_CUDA,
        DLPACK_HELPERS_CAP_CUDA
    );
    assert_eq!(info.capabilities & DLPACK_HELPERS_CAP_ROCM, 0);
}

/// A producer serving `__dlpack__(stream=2)`: resolve, then wait as the plan says.
#[test]
fn producer_flow_resolve_then_wait() {
    let (f, _g) = fake();
    let req = dlpack_helpers_export_request {
        has_max_version: true,
        max_version: DLPackVersion::new(1, 3),
        has_stream: true,
        stream: 2,
        has_dl_device: false,
        dl_device: dev(DLDeviceType::kDLCPU, 0),
        copy: DLPACK_HELPERS_COPY_IF_NEEDED,
    };
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is a valid value.
    let mut plan: dlpack_helpers_export_plan = unsafe { std::mem::zeroed() };
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    let st = unsafe {
        dlpack_export_request_resolve(&req, dev(CUDA, 0), DLPackVersion::new(1, 3), 0, &mut plan)
    };
    assert_eq!(st, DLPACK_HELPERS_STATUS_OK, "{}", last_error());
    assert_eq!(plan.sync, DLPACK_HELPERS_SYNC_STREAM_WAIT);
    assert_eq!(plan.stream.kind, DLPACK_HELPERS_STREAM_PER_THREAD_DEFAULT);
    f.reset();
    assert_eq!(
        // SAFETY: stream handles are opaque values that only the fake runtime records (never
        // dereferenced); the other pointers are NULL or live locals.
        unsafe { dlpack_stream_wait(plan.device, 0x7000 as *mut c_void, &plan.stream) },
        DLPACK_HELPERS_STATUS_OK
    );
    assert_eq!(f.last("cuStreamWaitEvent").0, 0x2);
}

/// Issue 17: a wait for pinned (`kDLCUDAHost`) or managed (`kDLCUDAManaged`) memory, whose
/// device id is always 0, runs in the context of the producer's stream (`cuStreamGetCtx`), not
/// in the calling thread's current context or device 0's primary one: the producer's stream may
/// belong to another device's context, and the driver refuses to record an event of one context
/// on a stream of another (the fake does too). Two contexts: device 0's primary context is
/// current on the calling thread (as after a framework used device 0), the producer's stream
/// belongs to device 1's; then the same from a thread with no current context.
#[test]
fn host_and_managed_wait_in_the_producer_streams_context() {
    let (f, _g) = fake();
    let retain: unsafe extern "C" fn(*mut *mut c_void, i32) -> i32 =
        f.sym(c"cuDevicePrimaryCtxRetain");
    let push: unsafe extern "C" fn(*mut c_void) -> i32 = f.sym(c"cuCtxPushCurrent_v2");
    let pop: unsafe extern "C" fn(*mut *mut c_void) -> i32 = f.sym(c"cuCtxPopCurrent_v2");
    let set_ctx: unsafe extern "C" fn(usize, *mut c_void) = f.sym(c"fake_set_stream_context");
    let (mut ctx0, mut ctx1) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: the fake driver's C signature; the out-pointer is a live local.
    assert_eq!(unsafe { retain(&mut ctx0, 0) }, 0);
    // SAFETY: the fake driver's C signature; the out-pointer is a live local.
    assert_eq!(unsafe { retain(&mut ctx1, 1) }, 0);
    assert_ne!(ctx0, ctx1);
    let (ctx0, ctx1) = (ctx0 as usize, ctx1 as usize);
    let (producer, consumer) = (0x6100usize, 0x6200usize);
    // SAFETY: the fake's C signature; it only records the two values.
    unsafe {
        set_ctx(producer, ctx1 as *mut c_void);
        set_ctx(consumer, ctx1 as *mut c_void);
    }
    let run = |expect_ctx_current: usize| {
        for t in [DLDeviceType::kDLCUDAHost, DLDeviceType::kDLCUDAManaged] {
            f.reset();
            assert_eq!(
                wait(dev(t, 0), producer, handle(consumer)),
                DLPACK_HELPERS_STATUS_OK,
                "{t:?}: {}",
                last_error()
            );
            assert_eq!(f.last("cuEventRecord").1, producer);
            assert_eq!(f.last("cuStreamWaitEvent").0, consumer);
            assert_eq!(f.last("cuStreamGetCtx").0, producer);
            assert_eq!(
                f.count("cuCtxPushCurrent_v2"),
                f.count("cuCtxPopCurrent_v2")
            );
            assert_eq!(f.last("cuCtxPushCurrent_v2").0, ctx1);
            assert_eq!(
                // SAFETY: the producer stream is an opaque value the fake runtime only records
                // (never dereferenced).
                unsafe { dlpack_stream_synchronize(dev(t, 0), producer as *mut c_void) },
                DLPACK_HELPERS_STATUS_OK,
                "{}",
                last_error()
            );
            let cur: unsafe extern "C" fn(*mut *mut c_void) -> i32 = f.sym(c"cuCtxGetCurrent");
            let mut now = std::ptr::null_mut();
            // SAFETY: the fake driver's C signature; the out-pointer is a live local.
            assert_eq!(unsafe { cur(&mut now) }, 0);
            assert_eq!(
                now as usize, expect_ctx_current,
                "the caller's context is restored"
            );
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: `ctx0` is a context the fake driver returned above.
            assert_eq!(unsafe { push(ctx0 as *mut c_void) }, 0);
            run(ctx0);
            let mut out = std::ptr::null_mut();
            // SAFETY: the fake driver's C signature; the out-pointer is a live local.
            assert_eq!(unsafe { pop(&mut out) }, 0);
        });
    });
    std::thread::scope(|s| {
        s.spawn(|| run(0));
    });
    // Special handles (the default streams, NULL included) name a stream of whichever context is
    // current, so they are not asked: as before, the current context, else device 0's primary.
    std::thread::scope(|s| {
        s.spawn(|| {
            for special in [0usize, 0x1, 0x2] {
                f.reset();
                assert_eq!(
                    wait(dev(DLDeviceType::kDLCUDAHost, 0), special, handle(consumer)),
                    DLPACK_HELPERS_STATUS_OK,
                    "{}",
                    last_error()
                );
                assert_eq!(f.count("cuStreamGetCtx"), 0);
                assert_eq!(f.last("cuCtxPushCurrent_v2").0, ctx0);
            }
        });
    });
}
