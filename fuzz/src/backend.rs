//! Stream backend exports: `dlpack_stream_backend_register` / `_register_ex`,
//! `dlpack_stream_wait`, `dlpack_stream_synchronize`, `dlpack_stream_backend_check`.
//!
//! Deterministic across inputs: before the first input, the CUDA and HIP overrides name missing
//! files (no built-in backend, whatever the machine has) and two test backends are registered,
//! once: `kDLOneAPI` with `wait_handle` (queue objects), `kDLMetal` without. Inputs then only
//! try registrations the library must refuse (the registry is permanent for the process, so an
//! accepted one would change the answers to later inputs), and make waits and synchronizations
//! whose backend calls are recorded and whose return codes the input chooses.

use crate::{Input, check_status};
use dlpack_helpers::abi::{DLDevice, DLDeviceType};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::stream::*;
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Once;

const ONE_API: i32 = 14;
const METAL: i32 = 8;
const CTX: usize = 0xC7C7;

/// One backend call as recorded: (which: `w`ait, `s`ynchronize or wait_`h`andle, device_id,
/// first handle, second handle, consumer kind).
type Call = (u8, i32, usize, usize, i32);

thread_local! {
    /// What the next backend call returns (0: success).
    static REPLY: Cell<i32> = const { Cell::new(0) };
    /// The last backend call.
    static CALL: Cell<Option<Call>> = const { Cell::new(None) };
}

fn record(which: u8, ctx: *mut c_void, device_id: i32, a: usize, b: usize, kind: i32) -> i32 {
    assert_eq!(ctx as usize, CTX, "the registered ctx is passed unchanged");
    CALL.with(|c| {
        assert!(c.get().is_none(), "two backend calls for one request");
        c.set(Some((which, device_id, a, b, kind)));
    });
    REPLY.with(Cell::get)
}

unsafe extern "C" fn wait(ctx: *mut c_void, dev: i32, p: *mut c_void, c: *mut c_void) -> i32 {
    record(
        b'w',
        ctx,
        dev,
        p as usize,
        c as usize,
        DLPACK_HELPERS_STREAM_HANDLE,
    )
}
unsafe extern "C" fn sync(ctx: *mut c_void, dev: i32, s: *mut c_void) -> i32 {
    record(b's', ctx, dev, s as usize, 0, 0)
}
unsafe extern "C" fn wait_handle(
    ctx: *mut c_void,
    dev: i32,
    p: *mut c_void,
    kind: i32,
    c: *mut c_void,
) -> i32 {
    record(b'h', ctx, dev, p as usize, c as usize, kind)
}

static SETUP: Once = Once::new();

fn setup() {
    SETUP.call_once(|| {
        for (var, file) in [
            ("DLPACK_HELPERS_CUDA_LIBRARY", "libcuda.so.1"),
            ("DLPACK_HELPERS_HIP_LIBRARY", "libamdhip64.so"),
            ("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY", "libze_loader.so.1"),
        ] {
            // SAFETY: libFuzzer runs the target on one thread, before any library call.
            unsafe { std::env::set_var(var, format!("/nonexistent/dlpack-helpers-fuzz/{file}")) };
        }
        let ex = dlpack_helpers_stream_backend_ex {
            struct_size: size_of::<dlpack_helpers_stream_backend_ex>(),
            ctx: CTX as *mut c_void,
            wait: Some(wait),
            synchronize: Some(sync),
            wait_handle: Some(wait_handle),
        };
        // SAFETY: a live struct; the callbacks are valid for the life of the process.
        let s = unsafe { dlpack_stream_backend_register_ex(DLDeviceType(ONE_API), &ex) };
        assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
        let plain = dlpack_helpers_stream_backend {
            ctx: CTX as *mut c_void,
            wait: Some(wait),
            synchronize: Some(sync),
        };
        // SAFETY: as above.
        let s = unsafe { dlpack_stream_backend_register(DLDeviceType(METAL), &plain) };
        assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
    });
}

fn registered(t: i32) -> bool {
    t == ONE_API || t == METAL
}

fn take_call() -> Option<Call> {
    CALL.with(|c| c.take())
}

/// Registrations the library must refuse; nothing changes.
fn refused_registration(input: &mut Input) {
    let t = match input.u8() % 4 {
        0 => 1, // kDLCPU
        1 => ONE_API,
        2 => METAL,
        _ => input.device().device_type.0,
    };
    let wait_fn = input.bool().then_some(wait as _);
    let sync_fn = input.bool().then_some(sync as _);
    let ex = input.bool();
    let struct_size = match input.u8() % 3 {
        0 => size_of::<dlpack_helpers_stream_backend_ex>(),
        1 => input.u8() as usize % size_of::<dlpack_helpers_stream_backend_ex>(),
        _ => size_of::<dlpack_helpers_stream_backend_ex>() + input.u8() as usize,
    };
    let small = struct_size < 4 * size_of::<usize>(); // does not reach past `synchronize`
    let must_refuse =
        t == 1 || registered(t) || wait_fn.is_none() || sync_fn.is_none() || (ex && small);
    if !must_refuse {
        return; // would be accepted: the registry is permanent, so never here
    }
    let s = if ex {
        let b = dlpack_helpers_stream_backend_ex {
            struct_size,
            ctx: CTX as *mut c_void,
            wait: wait_fn,
            synchronize: sync_fn,
            wait_handle: input.bool().then_some(wait_handle as _),
        };
        // SAFETY: a live struct of the full size, whatever struct_size says.
        unsafe { dlpack_stream_backend_register_ex(DLDeviceType(t), &b) }
    } else {
        let b = dlpack_helpers_stream_backend {
            ctx: CTX as *mut c_void,
            wait: wait_fn,
            synchronize: sync_fn,
        };
        // SAFETY: a live struct.
        unsafe { dlpack_stream_backend_register(DLDeviceType(t), &b) }
    };
    check_status(
        "dlpack_stream_backend_register",
        s,
        &[
            DLPACK_HELPERS_STATUS_NULL_POINTER,
            DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
        ],
    );
    assert_ne!(
        s, DLPACK_HELPERS_STATUS_OK,
        "registration accepted: type {t}"
    );
    if wait_fn.is_some() && sync_fn.is_some() {
        assert_eq!(s, DLPACK_HELPERS_STATUS_INVALID_ARGUMENT, "type {t}");
    }
    if !(t == 1 || registered(t) || (ex && small)) {
        assert_eq!(s, DLPACK_HELPERS_STATUS_NULL_POINTER, "type {t}");
    }
}

pub fn run(data: &[u8]) {
    setup();
    let mut input = Input::new(data);
    refused_registration(&mut input);
    assert!(
        take_call().is_none(),
        "a refused registration called the backend"
    );

    // backend_check: a registered type is served; nothing else is (no runtime, CPU needs none).
    let t = input.device().device_type;
    // SAFETY: no pointer arguments.
    let s = unsafe { dlpack_stream_backend_check(t) };
    check_status(
        "dlpack_stream_backend_check",
        s,
        &[DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE],
    );
    let want = if registered(t.0) {
        DLPACK_HELPERS_STATUS_OK
    } else {
        DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE
    };
    assert_eq!(s, want, "backend_check({})", t.0);

    // A wait, with the consumer's stream in any encoding.
    let device: DLDevice = match input.u8() % 4 {
        0 => DLDevice {
            device_type: DLDeviceType(ONE_API),
            device_id: input.u8() as i32 % 4,
        },
        1 => DLDevice {
            device_type: DLDeviceType(METAL),
            device_id: input.u8() as i32 % 4,
        },
        _ => input.device(),
    };
    let producer = input.small_i64() as usize;
    let kind = (input.u8() % 11) as i32 - 1;
    let handle = input.small_i64() as usize;
    let reply = if input.u8() < 200 { 0 } else { input.i32() };
    REPLY.with(|r| r.set(reply));
    let consumer = dlpack_helpers_stream {
        kind,
        handle: handle as *mut c_void,
    };
    let null_consumer = input.u8() == 0;
    let cp: *const dlpack_helpers_stream = if null_consumer {
        std::ptr::null()
    } else {
        &consumer
    };
    // SAFETY: handles are opaque to the library (the test backends only record them), the
    // consumer pointer is NULL or a live struct.
    let s = unsafe { dlpack_stream_wait(device, producer as *mut c_void, cp) };
    check_status(
        "dlpack_stream_wait",
        s,
        &[
            DLPACK_HELPERS_STATUS_NULL_POINTER,
            DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE,
            DLPACK_HELPERS_STATUS_DEVICE_ERROR,
            DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
            DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE,
            DLPACK_HELPERS_STATUS_INVALID_STREAM,
            DLPACK_HELPERS_STATUS_INVALID_DEVICE,
        ],
    );
    if device.device_id < 0 {
        // Peer case 54: a negative device id is refused before any backend is asked.
        assert_eq!(
            s, DLPACK_HELPERS_STATUS_INVALID_DEVICE,
            "device {device:?} waited on"
        );
        assert_eq!(take_call(), None, "a backend was called for {device:?}");
        return;
    }
    let call = take_call();
    let queue_object = matches!(
        kind,
        DLPACK_HELPERS_STREAM_SYCL_QUEUE
            | DLPACK_HELPERS_STREAM_ZE_COMMAND_QUEUE
            | DLPACK_HELPERS_STREAM_ZE_COMMAND_LIST
    );
    let id = device.device_id;
    if null_consumer {
        assert_eq!(s, DLPACK_HELPERS_STATUS_NULL_POINTER);
        assert!(call.is_none());
    } else if kind == DLPACK_HELPERS_STREAM_NO_SYNC || kind == DLPACK_HELPERS_STREAM_NONE {
        assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "kind {kind}: nothing to do");
        assert!(call.is_none(), "kind {kind} called the backend");
    } else if !(0..=8).contains(&kind) {
        assert_eq!(s, DLPACK_HELPERS_STATUS_INVALID_ARGUMENT, "kind {kind}");
        assert!(call.is_none());
    } else if queue_object {
        if device.device_type.0 != ONE_API {
            assert_eq!(s, DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE, "{device:?}");
            assert!(call.is_none());
        } else if handle == 0 {
            assert_eq!(s, DLPACK_HELPERS_STATUS_INVALID_STREAM);
            assert!(call.is_none());
        } else {
            assert_eq!(
                call,
                Some((b'h', id, producer, handle, kind)),
                "wait_handle arguments"
            );
            let want = if reply == 0 {
                DLPACK_HELPERS_STATUS_OK
            } else {
                DLPACK_HELPERS_STATUS_DEVICE_ERROR
            };
            assert_eq!(s, want, "backend answered {reply}");
        }
    } else if registered(device.device_type.0) {
        // A native stream on a registered backend: one wait call, unless there is nothing to
        // wait for (the same stream on both sides).
        match call {
            Some((which, d, p, _c, _)) => {
                assert_eq!((which, d, p), (b'w', id, producer));
                let want = if reply == 0 {
                    DLPACK_HELPERS_STATUS_OK
                } else {
                    DLPACK_HELPERS_STATUS_DEVICE_ERROR
                };
                assert_eq!(s, want, "backend answered {reply}");
            }
            None => assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "no call, yet {s}"),
        }
    } else {
        // No backend for the type (CUDA and HIP unavailable here): refused, or nothing to do.
        assert!(call.is_none());
        assert!(
            s == DLPACK_HELPERS_STATUS_OK || s == DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE,
            "{device:?} kind {kind}: {s}"
        );
    }
    if s == DLPACK_HELPERS_STATUS_DEVICE_ERROR {
        let m = crate::last_error();
        assert!(
            m.contains(&reply.to_string()),
            "message names the code {reply}: {m}"
        );
    }

    // A synchronization on the same device.
    let stream = input.small_i64() as usize;
    // SAFETY: an opaque handle.
    let s = unsafe { dlpack_stream_synchronize(device, stream as *mut c_void) };
    check_status(
        "dlpack_stream_synchronize",
        s,
        &[
            DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE,
            DLPACK_HELPERS_STATUS_DEVICE_ERROR,
        ],
    );
    let call = take_call();
    if registered(device.device_type.0) {
        assert_eq!(call, Some((b's', id, stream, 0, 0)));
        let want = if reply == 0 {
            DLPACK_HELPERS_STATUS_OK
        } else {
            DLPACK_HELPERS_STATUS_DEVICE_ERROR
        };
        assert_eq!(s, want);
    } else if device.device_type.0 == 1 {
        assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "kDLCPU does nothing");
        assert!(call.is_none());
    } else {
        assert!(call.is_none());
        assert_eq!(s, DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE, "{device:?}");
    }
}
