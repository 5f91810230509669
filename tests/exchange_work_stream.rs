//! Peer case 53: `dlpack_exchange_api_current_work_stream` reads a producer table's
//! `current_work_stream` per device type and never takes NULL off `kDLCPU` for "the default
//! stream". The tables here are C-ABI tables written in Rust (no Python in this process).

mod common;

use common::last_error;
use dlpack_helpers::abi::{
    DLDevice, DLDeviceType, DLPackExchangeAPI, DLPackExchangeAPIHeader, DLPackVersion,
};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::python::exchange::*;
use dlpack_helpers::capi::python::import::DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR;
use dlpack_helpers::capi::stream::*;
use std::cell::Cell;
use std::ffi::{c_int, c_void};

thread_local! {
    /// What the table answers: `ANSWER` as the stream, or -1 when it is `usize::MAX`. Per
    /// thread: the export calls the table on the caller's thread, and the tests of this file run
    /// in parallel, so a shared answer would let one test's -1 reach another's query.
    static ANSWER: Cell<usize> = const { Cell::new(0) };
    /// The device the table was last asked for, `(type << 16) | id`, on this thread.
    static ASKED: Cell<usize> = const { Cell::new(0) };
}

unsafe extern "C" fn answer(t: DLDeviceType, id: i32, out: *mut *mut c_void) -> c_int {
    ASKED.set(((t.0 as usize) << 16) | id as usize);
    let a = ANSWER.get();
    if a == usize::MAX {
        return -1;
    }
    // SAFETY: the caller's out pointer (the export passes a live local).
    unsafe { *out = a as *mut c_void };
    0
}

fn table(version: (u32, u32), f: bool) -> DLPackExchangeAPI {
    DLPackExchangeAPI {
        header: DLPackExchangeAPIHeader {
            version: DLPackVersion {
                major: version.0,
                minor: version.1,
            },
            prev_api: std::ptr::null_mut(),
        },
        managed_tensor_allocator: None,
        managed_tensor_from_py_object_no_sync: None,
        managed_tensor_to_py_object_no_sync: None,
        dltensor_from_py_object_no_sync: None,
        current_work_stream: if f { Some(answer) } else { None },
    }
}

fn ask(t: &DLPackExchangeAPI, device: (i32, i32), flags: u32, a: usize) -> (i32, i32, usize) {
    ANSWER.set(a);
    let mut s = dlpack_helpers_stream {
        kind: -7,
        handle: 0x77 as *mut c_void,
    };
    let d = DLDevice {
        device_type: DLDeviceType(device.0),
        device_id: device.1,
    };
    // SAFETY: a live table and out pointer.
    let st = unsafe { dlpack_exchange_api_current_work_stream(t, d, flags, &mut s) };
    (st, s.kind, s.handle as usize)
}

const NULL_IS_DEFAULT: u32 = DLPACK_HELPERS_WORK_STREAM_NULL_IS_DEFAULT;

#[test]
fn case_53_current_work_stream_answers_per_device_type() {
    let t = table((1, 3), true);
    let ok = DLPACK_HELPERS_STATUS_OK;
    // kDLCPU: NULL is the only answer, "no streams".
    assert_eq!(ask(&t, (1, 0), 0, 0), (ok, DLPACK_HELPERS_STREAM_NONE, 0));
    assert_eq!(ASKED.get(), 1 << 16);
    // CUDA family: a handle, the named default streams, and NULL refused.
    for cuda in [2, 3, 13] {
        assert_eq!(
            ask(&t, (cuda, 1), 0, 0x1234),
            (ok, DLPACK_HELPERS_STREAM_HANDLE, 0x1234)
        );
        assert_eq!(ASKED.get(), ((cuda as usize) << 16) | 1);
        assert_eq!(
            ask(&t, (cuda, 0), 0, 0x1),
            (ok, DLPACK_HELPERS_STREAM_LEGACY_DEFAULT, 0x1)
        );
        assert_eq!(
            ask(&t, (cuda, 0), 0, 0x2),
            (ok, DLPACK_HELPERS_STREAM_PER_THREAD_DEFAULT, 0x2)
        );
        let (st, kind, h) = ask(&t, (cuda, 0), 0, 0);
        assert_eq!(
            st,
            DLPACK_HELPERS_STATUS_NULL_WORK_STREAM,
            "{}",
            last_error()
        );
        assert!(last_error().contains("NULL"), "{}", last_error());
        assert_eq!((kind, h), (-7, 0x77), "out_stream written on failure");
        // Opt-in: NULL read as the legacy default stream.
        assert_eq!(
            ask(&t, (cuda, 0), NULL_IS_DEFAULT, 0),
            (ok, DLPACK_HELPERS_STREAM_LEGACY_DEFAULT, 0x1)
        );
    }
    // ROCm family: a handle; NULL refused, or the NULL stream on opt-in.
    for rocm in [10, 11] {
        assert_eq!(
            ask(&t, (rocm, 0), 0, 0x99000),
            (ok, DLPACK_HELPERS_STREAM_HANDLE, 0x99000)
        );
        assert_eq!(
            ask(&t, (rocm, 0), 0, 0).0,
            DLPACK_HELPERS_STATUS_NULL_WORK_STREAM
        );
        assert_eq!(
            ask(&t, (rocm, 0), NULL_IS_DEFAULT, 0),
            (ok, DLPACK_HELPERS_STREAM_DEFAULT, 0)
        );
    }
    // Other device types (oneAPI, Ascend-like unknown types): a handle, or NULL refused even
    // with the opt-in (tvm-ffi #690: an Ascend table answered NULL).
    for other in [14, 4, 7, 99] {
        assert_eq!(
            ask(&t, (other, 0), 0, 0x5000),
            (ok, DLPACK_HELPERS_STREAM_HANDLE, 0x5000)
        );
        for flags in [0, NULL_IS_DEFAULT] {
            assert_eq!(
                ask(&t, (other, 0), flags, 0).0,
                DLPACK_HELPERS_STATUS_NULL_WORK_STREAM
            );
        }
    }
}

#[test]
fn case_53_current_work_stream_failures() {
    let t = table((1, 3), true);
    // -1 (no Python here: no exception to read): a producer error naming the device.
    let (st, ..) = ask(&t, (2, 0), 0, usize::MAX);
    assert_eq!(st, DLPACK_HELPERS_STATUS_PRODUCER_ERROR, "{}", last_error());
    assert!(last_error().contains("(2, 0)"), "{}", last_error());
    // A NULL function, a wrong major, unknown flags, NULL arguments.
    assert_eq!(
        ask(&table((1, 3), false), (2, 0), 0, 0x10).0,
        DLPACK_HELPERS_STATUS_EXCHANGE_API_INVALID
    );
    assert_eq!(
        ask(&table((2, 0), true), (2, 0), 0, 0x10).0,
        DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION
    );
    assert_eq!(
        ask(&t, (2, 0), 0x80, 0x10).0,
        DLPACK_HELPERS_STATUS_INVALID_ARGUMENT
    );
    assert_eq!(
        ask(&t, (2, 0), DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR, 0x10).0,
        DLPACK_HELPERS_STATUS_OK
    );
    let mut s = dlpack_helpers_stream {
        kind: 0,
        handle: std::ptr::null_mut(),
    };
    let d = DLDevice {
        device_type: DLDeviceType(2),
        device_id: 0,
    };
    // SAFETY: NULL table / NULL out pointer: refused before any read.
    unsafe {
        assert_eq!(
            dlpack_exchange_api_current_work_stream(std::ptr::null(), d, 0, &mut s),
            DLPACK_HELPERS_STATUS_NULL_POINTER
        );
        assert_eq!(
            dlpack_exchange_api_current_work_stream(&t, d, 0, std::ptr::null_mut()),
            DLPACK_HELPERS_STATUS_NULL_POINTER
        );
    }
}

/// A negative device id is refused with `INVALID_DEVICE` before the table is called (peer
/// case 54; spec EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-3): it reached the table and came back
/// OK before.
#[test]
fn case_54_negative_device_id_never_reaches_the_table() {
    let t = table((1, 3), true);
    for device in [(2, -1), (1, -1), (10, i32::MIN)] {
        ASKED.set(usize::MAX);
        let (st, kind, handle) = ask(&t, device, 0, 0x1234);
        assert_eq!(
            st,
            DLPACK_HELPERS_STATUS_INVALID_DEVICE,
            "{device:?}: {}",
            last_error()
        );
        assert_eq!(ASKED.get(), usize::MAX, "{device:?}: the table was called");
        assert_eq!(
            (kind, handle),
            (-7, 0x77),
            "{device:?}: out_stream written on failure"
        );
    }
}
