//! Stream decoding and encoding (the protocol integer <-> native handle) and `__dlpack__`
//! request resolution.

use crate::{Input, Out, check_status};
use dlpack_helpers::abi::{DLDevice, DLDeviceType, DLPACK_FLAG_BITMASK_IS_COPIED};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::stream::*;
use dlpack_helpers::capi::version::DLPACK_HELPERS_EXPORT_VERSIONED;
use std::ffi::c_void;

fn decode(
    device: DLDevice,
    has: bool,
    value: i64,
    flags: u32,
) -> (i32, Out<dlpack_helpers_stream>) {
    let mut out = Out::new();
    // SAFETY: valid out pointer.
    let s = unsafe { dlpack_stream_decode(device, has, value, flags, out.ptr()) };
    check_status(
        "dlpack_stream_decode",
        s,
        &[
            DLPACK_HELPERS_STATUS_INVALID_STREAM,
            DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
            DLPACK_HELPERS_STATUS_INVALID_DEVICE,
        ],
    );
    // Issue 22 (peer case 54): a negative device id is refused, and only that.
    assert_eq!(
        s == DLPACK_HELPERS_STATUS_INVALID_DEVICE,
        device.device_id < 0,
        "decode({device:?}, {has}, {value}, {flags:#x}) = {s}"
    );
    if s != DLPACK_HELPERS_STATUS_OK {
        assert!(
            out.untouched(),
            "out_stream written on failure: decode({device:?}, {has}, {value}, {flags:#x}) = {s}"
        );
    }
    (s, out)
}

/// The answer of the fuzzed exchange table's `current_work_stream` (this thread's).
mod table {
    use dlpack_helpers::abi::{
        DLDeviceType, DLPackExchangeAPI, DLPackExchangeAPIHeader, DLPackVersion,
    };
    use std::cell::Cell;
    use std::ffi::{c_int, c_void};

    thread_local! {
        pub static ANSWER: Cell<(c_int, usize)> = const { Cell::new((0, 0)) };
    }

    unsafe extern "C" fn answer(_t: DLDeviceType, _id: i32, out: *mut *mut c_void) -> c_int {
        let (rc, h) = ANSWER.with(|a| a.get());
        if rc == 0 {
            // SAFETY: the export passes a live out pointer.
            unsafe { *out = h as *mut c_void };
        }
        rc
    }

    pub fn new(major: u32, with_fn: bool) -> DLPackExchangeAPI {
        DLPackExchangeAPI {
            header: DLPackExchangeAPIHeader {
                version: DLPackVersion { major, minor: 3 },
                prev_api: std::ptr::null_mut(),
            },
            managed_tensor_allocator: None,
            managed_tensor_from_py_object_no_sync: None,
            managed_tensor_to_py_object_no_sync: None,
            dltensor_from_py_object_no_sync: None,
            current_work_stream: if with_fn { Some(answer) } else { None },
        }
    }
}

/// `dlpack_exchange_api_current_work_stream` (peer case 53): any device, answer and flags get
/// a documented status; OK never carries a NULL-named stream off kDLCPU unless the caller
/// opted in, and a CPU answer is always "none".
fn work_stream(input: &mut Input) {
    use dlpack_helpers::capi::python::exchange::*;
    let device = input.device();
    let rc = if input.u8() < 32 { -1 } else { 0 };
    let handle = if input.bool() {
        0
    } else {
        input.small_i64() as usize
    };
    let flags = if input.u8() < 240 {
        (input.u8() & 0x3) as u32
    } else {
        input.u32()
    };
    let t = table::new(if input.u8() < 16 { 2 } else { 1 }, input.u8() >= 8);
    table::ANSWER.with(|a| a.set((rc, handle)));
    let mut out = Out::<dlpack_helpers_stream>::new();
    // SAFETY: a live table and out pointer.
    let s = unsafe { dlpack_exchange_api_current_work_stream(&t, device, flags, out.ptr()) };
    check_status(
        "dlpack_exchange_api_current_work_stream",
        s,
        &[
            DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
            DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION,
            DLPACK_HELPERS_STATUS_EXCHANGE_API_INVALID,
            DLPACK_HELPERS_STATUS_NULL_WORK_STREAM,
            DLPACK_HELPERS_STATUS_PRODUCER_ERROR,
            // A negative device id, refused before the table is called (spec
            // EXCH-EXCHANGE-API-CURRENT-WORK-STREAM-3).
            DLPACK_HELPERS_STATUS_INVALID_DEVICE,
        ],
    );
    if s == DLPACK_HELPERS_STATUS_INVALID_DEVICE {
        assert!(device.device_id < 0, "INVALID_DEVICE for device id {}", device.device_id);
    }
    if s != DLPACK_HELPERS_STATUS_OK {
        assert!(out.untouched(), "out_stream written on failure");
        return;
    }
    let st = out.get();
    if device.device_type == DLDeviceType::kDLCPU {
        assert_eq!(st.kind, DLPACK_HELPERS_STREAM_NONE);
    } else if handle == 0 {
        assert_ne!(
            flags & DLPACK_HELPERS_WORK_STREAM_NULL_IS_DEFAULT,
            0,
            "NULL accepted"
        );
        assert!(
            st.kind == DLPACK_HELPERS_STREAM_LEGACY_DEFAULT
                || st.kind == DLPACK_HELPERS_STREAM_DEFAULT,
            "NULL read as {st:?}"
        );
    } else {
        assert_eq!(st.handle as usize, handle, "the answer changed: {st:?}");
    }
}

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    // One case per input (stateless: see lib.rs, "Speed"): an exchange table's work-stream
    // answer (one input in eight), or a stream decode.
    if input.u8() < 32 {
        work_stream(&mut input);
        return;
    }
    {
        let device = input.device();
        let has = input.bool();
        let value = input.small_i64();
        let flags = input.flags();
        let (s, out) = decode(device, has, value, flags);
        let lenient_cpu = device.device_type == DLDeviceType::kDLCPU
            && flags == DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM;
        // Below -1 is refused on every device, except by a CPU producer in the lenient mode
        // (any integer is a no-op there; found by this target: the header said "every device").
        if has && value < -1 && !lenient_cpu {
            assert_ne!(
                s, DLPACK_HELPERS_STATUS_OK,
                "stream {value} < -1 accepted: decode({device:?}, {flags:#x})"
            );
        }
        if flags & !DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM != 0 && device.device_id >= 0 {
            assert_eq!(s, DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
        }
        if s == DLPACK_HELPERS_STATUS_OK {
            let st = out.get();
            assert!(
                (0..=5).contains(&st.kind),
                "unknown stream kind {}",
                st.kind
            );
            if device.device_type == DLDeviceType::kDLCPU {
                assert!(
                    st.kind == DLPACK_HELPERS_STREAM_NONE
                        || st.kind == DLPACK_HELPERS_STREAM_NO_SYNC
                );
            }
            if st.kind == DLPACK_HELPERS_STREAM_HANDLE && !st.handle.is_null() {
                // A native handle encodes back to the integer it came from.
                let (mut h, mut v) = (Out::<bool>::new(), Out::<i64>::new());
                // SAFETY: valid out pointers.
                let e = unsafe { dlpack_stream_encode(device, st.handle, h.ptr(), v.ptr()) };
                check_status(
                    "dlpack_stream_encode",
                    e,
                    &[
                        DLPACK_HELPERS_STATUS_INVALID_STREAM,
                        DLPACK_HELPERS_STATUS_INVALID_DEVICE,
                    ],
                );
                assert_eq!(
                    e, DLPACK_HELPERS_STATUS_OK,
                    "handle {:p} of {device:?} does not encode",
                    st.handle
                );
                assert!(h.get(), "handle encoded as None");
                assert_eq!(v.get(), value, "round trip of stream {value} on {device:?}");
            }
        }

        // Any native pointer either encodes to an integer that decodes without error, or is refused.
        let native = input.small_i64() as usize as *mut c_void;
        let (mut h, mut v) = (Out::<bool>::new(), Out::<i64>::new());
        // SAFETY: valid out pointers; the handle is only compared, never dereferenced.
        let e = unsafe { dlpack_stream_encode(device, native, h.ptr(), v.ptr()) };
        check_status(
            "dlpack_stream_encode",
            e,
            &[
                DLPACK_HELPERS_STATUS_INVALID_STREAM,
                DLPACK_HELPERS_STATUS_INVALID_DEVICE,
            ],
        );
        assert!(device.device_id >= 0 || e == DLPACK_HELPERS_STATUS_INVALID_DEVICE);
        if e == DLPACK_HELPERS_STATUS_OK {
            let has = h.get();
            let value = if has { v.get() } else { 0 };
            let (d, _) = decode(device, has, value, 0);
            assert_eq!(
                d, DLPACK_HELPERS_STATUS_OK,
                "encode({device:?}, {native:p}) = ({has}, {value}) does not decode"
            );
        } else {
            assert!(h.untouched() && v.untouched());
        }

        // Queue-object streams (kDLOneAPI only): decode_handle accepts exactly an object kind,
        // a non-NULL handle and kDLOneAPI; its result has no integer form.
        let kind = (input.u8() % 11) as i32 - 1;
        let handle = input.small_i64() as usize as *mut c_void;
        let hdev = if input.bool() {
            DLDevice {
                device_type: DLDeviceType::kDLOneAPI,
                device_id: device.device_id,
            }
        } else {
            device
        };
        let mut hs = Out::<dlpack_helpers_stream>::new();
        // SAFETY: valid out pointer; the handle is never dereferenced.
        let e = unsafe { dlpack_stream_decode_handle(hdev, kind, handle, hs.ptr()) };
        check_status(
            "dlpack_stream_decode_handle",
            e,
            &[
                DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE,
                DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
                DLPACK_HELPERS_STATUS_NULL_POINTER,
                DLPACK_HELPERS_STATUS_INVALID_DEVICE,
            ],
        );
        let object_kind = (DLPACK_HELPERS_STREAM_SYCL_QUEUE
            ..=DLPACK_HELPERS_STREAM_ZE_COMMAND_LIST)
            .contains(&kind);
        let expect_ok = object_kind
            && !handle.is_null()
            && hdev.device_type == DLDeviceType::kDLOneAPI
            && hdev.device_id >= 0;
        assert_eq!(
            e == DLPACK_HELPERS_STATUS_OK,
            expect_ok,
            "decode_handle({hdev:?}, {kind}, {handle:p}) = {e}"
        );
        if e == DLPACK_HELPERS_STATUS_OK {
            let st = hs.get();
            assert_eq!((st.kind, st.handle), (kind, handle));
            let (mut h, mut v) = (Out::<bool>::new(), Out::<i64>::new());
            // SAFETY: valid pointers.
            let back = unsafe { dlpack_stream_encode_decoded(hdev, &st, h.ptr(), v.ptr()) };
            assert_eq!(
                back, DLPACK_HELPERS_STATUS_INVALID_STREAM,
                "a queue object encoded"
            );
            let request = dlpack_helpers_export_request {
                has_max_version: true,
                max_version: input.version(),
                has_stream: input.bool(),
                stream: 7,
                has_dl_device: false,
                dl_device: hdev,
                copy: DLPACK_HELPERS_COPY_IF_NEEDED,
            };
            let mut plan = Out::<dlpack_helpers_export_plan>::new();
            // SAFETY: valid pointers.
            let r = unsafe {
                dlpack_export_request_resolve_with_stream(
                    &request,
                    &st,
                    hdev,
                    input.version(),
                    0,
                    plan.ptr(),
                )
            };
            if r == DLPACK_HELPERS_STATUS_OK {
                assert!(!request.has_stream, "both streams accepted");
                let plan = plan.get();
                assert_eq!(plan.stream, st);
                assert_eq!(plan.sync, DLPACK_HELPERS_SYNC_STREAM_WAIT);
            } else {
                assert!(plan.untouched(), "out_plan written on failure");
            }
        } else {
            assert!(hs.untouched(), "out_stream written on failure");
        }

        // Request resolution.
        let request = dlpack_helpers_export_request {
            has_max_version: input.bool(),
            max_version: input.version(),
            has_stream: input.bool(),
            stream: input.small_i64(),
            has_dl_device: input.bool(),
            dl_device: input.device(),
            copy: (input.u8() % 5) as i32 - 1,
        };
        let tensor_device = input.device();
        let pv = input.version();
        let pflags = input.flags();
        let mut plan = Out::<dlpack_helpers_export_plan>::new();
        // SAFETY: valid pointers.
        let s = unsafe {
            dlpack_export_request_resolve(&request, tensor_device, pv, pflags, plan.ptr())
        };
        check_status(
            "dlpack_export_request_resolve",
            s,
            &[
                DLPACK_HELPERS_STATUS_INVALID_STREAM,
                DLPACK_HELPERS_STATUS_COPY_FORBIDDEN,
                DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE,
                DLPACK_HELPERS_STATUS_NO_COMMON_VERSION,
                DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD,
                DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
                DLPACK_HELPERS_STATUS_INVALID_DEVICE,
            ],
        );
        // Issue 22 (peer case 54): a negative id is refused, and only a negative id.
        let negative = tensor_device.device_id < 0
            || (request.has_dl_device && request.dl_device.device_id < 0);
        if s == DLPACK_HELPERS_STATUS_INVALID_DEVICE {
            assert!(
                negative,
                "INVALID_DEVICE for {request:?} on {tensor_device:?}"
            );
        }
        if negative {
            assert_ne!(s, DLPACK_HELPERS_STATUS_OK, "a negative device id resolved");
        }
        let cpu = DLDevice {
            device_type: DLDeviceType::kDLCPU,
            device_id: 0,
        };
        // Each refusal only where its rule applies: a copy is forbidden only for copy=False with
        // a dl_device elsewhere; a device is unsupported only when it is neither the tensor's own
        // nor (kDLCPU, 0).
        if s == DLPACK_HELPERS_STATUS_COPY_FORBIDDEN {
            assert!(
                request.copy == DLPACK_HELPERS_COPY_NEVER
                    && request.has_dl_device
                    && request.dl_device != tensor_device,
                "COPY_FORBIDDEN for {request:?} on {tensor_device:?}"
            );
        }
        if s == DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE {
            let r = request.dl_device;
            assert!(
                request.has_dl_device && r != tensor_device && r != cpu,
                "UNSUPPORTED_DEVICE for {request:?} on {tensor_device:?}"
            );
        }
        if s != DLPACK_HELPERS_STATUS_OK {
            assert!(plan.untouched(), "out_plan written on failure");
            return;
        }
        let plan = plan.get();
        assert!(plan.kind == 0 || plan.kind == 1);
        assert!((0..=2).contains(&plan.sync));
        assert!((0..=5).contains(&plan.stream.kind)); // integer streams only
        if !plan.copy {
            assert_eq!(
                plan.flags & DLPACK_FLAG_BITMASK_IS_COPIED,
                0,
                "IS_COPIED without a copy: {plan:?}"
            );
        } else if plan.kind == DLPACK_HELPERS_EXPORT_VERSIONED {
            assert_ne!(
                plan.flags & DLPACK_FLAG_BITMASK_IS_COPIED,
                0,
                "a copy without IS_COPIED: {plan:?}"
            );
        }
        if request.copy == DLPACK_HELPERS_COPY_NEVER {
            assert!(!plan.copy, "copy=False but the plan copies: {plan:?}");
        }
        if request.copy == DLPACK_HELPERS_COPY_ALWAYS {
            assert!(plan.copy, "copy=True but the plan shares: {plan:?}");
        }
        // The plan's device is the tensor's own or (kDLCPU, 0): nothing else can be served.
        assert!(
            plan.device == tensor_device || plan.device == cpu,
            "plan device {:?}",
            plan.device
        );
        if request.has_dl_device {
            let r = request.dl_device;
            // Served exactly as asked: (kDLCPU, id != 0) is refused, never mapped to (kDLCPU, 0).
            assert!(plan.device == r, "plan {plan:?} for dl_device {r:?}");
        }
    }
}
