//! Peer case 52 on the CUDA test double (tests-c/fake/fake_cuda.c): a release tied to a stream
//! (`dlpack_tensor_delete_after_stream`) runs the deleter exactly once, only after the work
//! queued on the stream before it is done, never on the caller's thread and without a blocking
//! synchronize. The stream is held by a gate (`cuStreamWaitValue32_v2` on a flag the test
//! sets), never by a sleep.

mod common;

use common::*;
use dlpack_helpers::abi::{DLDevice, DLDeviceType};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::stream::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

const CUDA: DLDevice = DLDevice {
    device_type: DLDeviceType::kDLCUDA,
    device_id: 0,
};

type Handle = *mut c_void;

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
            // SAFETY: plain-value argument.
            unsafe { dlpack_stream_backend_check(CUDA.device_type) },
            DLPACK_HELPERS_STATUS_OK,
            "{}",
            last_error()
        );
        Fake::open(&path)
    });
    (f, LOCK.lock().unwrap_or_else(|e| e.into_inner()))
}

/// An emulated stream of device 0's primary context, held by a gate: nothing queued on it after
/// this call runs until `flag` is set to 1.
fn gated_stream(f: &Fake, flag: &'static AtomicU32) -> Handle {
    let retain: unsafe extern "C" fn(*mut Handle, i32) -> i32 = f.sym(c"cuDevicePrimaryCtxRetain");
    let push: unsafe extern "C" fn(Handle) -> i32 = f.sym(c"cuCtxPushCurrent_v2");
    let pop: unsafe extern "C" fn(*mut Handle) -> i32 = f.sym(c"cuCtxPopCurrent_v2");
    let create: unsafe extern "C" fn(*mut Handle, u32) -> i32 = f.sym(c"cuStreamCreate");
    let wait_value: unsafe extern "C" fn(Handle, u64, u32, u32) -> i32 =
        f.sym(c"cuStreamWaitValue32_v2");
    let (mut ctx, mut s, mut popped): (Handle, Handle, Handle) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    // SAFETY: the fake driver's C signatures with live local out-pointers; `flag` is a static
    // the fake's stream worker reads (the address of a 32-bit value, as the real call takes).
    unsafe {
        assert_eq!(retain(&mut ctx, 0), 0);
        assert_eq!(push(ctx), 0);
        assert_eq!(create(&mut s, 0), 0);
        assert_eq!(wait_value(s, flag.as_ptr() as u64, 1, 0), 0);
        assert_eq!(pop(&mut popped), 0);
    }
    s
}

fn release_after(t: *mut dlpack_helpers::abi::DLManagedTensorVersioned, s: Handle) -> i32 {
    // SAFETY: `t` is a live tensor handed over; `s` a stream of the fake driver.
    unsafe { dlpack_tensor_delete_after_stream(t, CUDA, s) }
}

#[test]
fn case_52_release_waits_for_the_stream_and_runs_once() {
    static GATE: AtomicU32 = AtomicU32::new(0);
    let (f, _g) = fake();
    let s = gated_stream(f, &GATE);
    f.reset();
    let base = released::runs();
    let t = released::new();
    assert_eq!(
        release_after(t, s),
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    assert_eq!(f.count("cuEventRecord"), 1);
    assert_eq!(
        f.count("cuStreamSynchronize"),
        0,
        "never a blocking synchronize"
    );
    // The completion thread has looked at the event twice and found the stream's work pending.
    until("the completion thread polls the event twice", || {
        f.count("cuEventQuery") >= 2
    });
    assert_eq!(
        released::runs(),
        base,
        "the deleter ran before the event completed"
    );
    // Open the gate: the stream's work runs, the event completes, the deleter runs once.
    GATE.store(1, Ordering::SeqCst);
    released::wait_for(base + 1);
    let threads = released::threads();
    assert_ne!(
        threads[base],
        std::thread::current().id(),
        "the deleter ran on the caller's thread"
    );
    // Exactly once: a second release on the same (now open) stream completes after the first
    // was handled; the first's deleter has still run once, and the event came from the pool.
    f.reset();
    let t2 = released::new();
    assert_eq!(
        release_after(t2, s),
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    released::wait_for(base + 2);
    assert_eq!(released::runs(), base + 2);
    assert_eq!(
        f.count("cuEventCreate"),
        0,
        "the completed event went back to the pool"
    );
    assert_eq!(f.count("cuStreamSynchronize"), 0);
}

/// On failure nothing is released: the caller keeps the tensor.
#[test]
fn case_52_failed_record_keeps_the_tensor() {
    let (f, _g) = fake();
    let base = released::runs();
    let t = released::new();
    f.fail("cuEventRecord", 700);
    let s = release_after(t, 0x1 as Handle);
    f.fail("cuEventRecord", 0);
    assert_eq!(s, DLPACK_HELPERS_STATUS_DEVICE_ERROR, "{}", last_error());
    assert!(last_error().contains("cuEventRecord"), "{}", last_error());
    assert_eq!(released::runs(), base);
    // Still ours: release it now, once.
    // SAFETY: the tensor is still owned by this test.
    unsafe { dlpack_helpers::capi::tensor::dlpack_tensor_delete(t) };
    assert_eq!(released::runs(), base + 1);
}

/// `kDLCPU` has no streams: released at once; NULL is nothing.
#[test]
fn case_52_cpu_release_is_immediate_and_null_is_ok() {
    let (_f, _g) = fake();
    let base = released::runs();
    let t = released::new();
    let cpu = dev(DLDeviceType::kDLCPU, 0);
    // SAFETY: `t` is handed over; NULL tensor is allowed.
    unsafe {
        assert_eq!(
            dlpack_tensor_delete_after_stream(t, cpu, std::ptr::null_mut()),
            DLPACK_HELPERS_STATUS_OK
        );
        assert_eq!(released::runs(), base + 1);
        assert_eq!(
            dlpack_tensor_delete_after_stream(std::ptr::null_mut(), CUDA, std::ptr::null_mut()),
            DLPACK_HELPERS_STATUS_OK
        );
    }
}

/// A negative device id is no device (peer case 54; spec STREAMS-TENSOR-DELETE-AFTER-STREAM-2):
/// refused with `INVALID_DEVICE` before anything else, the tensor still the caller's (its
/// deleter has not run), on every device family. It released a `(kDLCPU, -1)` tensor before.
#[test]
fn case_54_negative_device_id_is_refused_and_the_tensor_kept() {
    let (_f, _g) = fake();
    for dt in [
        DLDeviceType::kDLCPU,
        DLDeviceType::kDLCUDA,
        DLDeviceType(10),
        DLDeviceType(99),
    ] {
        let base = released::runs();
        let t = released::new();
        // SAFETY: `t` is live; the refusal leaves it with the caller, released below.
        unsafe {
            assert_eq!(
                dlpack_tensor_delete_after_stream(t, dev(dt, -1), std::ptr::null_mut()),
                DLPACK_HELPERS_STATUS_INVALID_DEVICE,
                "device type {}",
                dt.0
            );
            assert_eq!(
                released::runs(),
                base,
                "released on a refusal (device type {})",
                dt.0
            );
            assert!(last_error().contains("device_id"), "{}", last_error());
            dlpack_helpers::capi::tensor::dlpack_tensor_delete(t);
        }
        assert_eq!(released::runs(), base + 1);
    }
}

/// A process that exits while a release waits for its stream does not crash, and the deleter
/// is not run during exit (the stream's work never ran). Checked in a child process: this test
/// runs itself with `DLPACK_RELEASE_CHILD` set.
#[test]
fn case_52_exit_with_a_pending_release_does_not_crash() {
    if std::env::var_os("DLPACK_RELEASE_CHILD").is_some() {
        static GATE: AtomicU32 = AtomicU32::new(0);
        let (f, _g) = fake();
        let s = gated_stream(f, &GATE);
        assert_eq!(
            release_after(released::new(), s),
            DLPACK_HELPERS_STATUS_OK,
            "{}",
            last_error()
        );
        until("the completion thread polls the event", || {
            f.count("cuEventQuery") >= 1
        });
        println!("queued");
        std::process::exit(0); // libc exit: atexit handlers run, the gate is still closed
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "case_52_exit_with_a_pending_release_does_not_crash",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("DLPACK_RELEASE_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child failed: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("queued"), "{stdout}");
    assert!(!stdout.contains("deleter ran"), "{stdout}");
}
