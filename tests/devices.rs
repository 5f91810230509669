//! Issue 22 items 2 and 3: one device rule for every export that accepts, creates or returns a
//! `DLDevice`. Peer case 54 (pytorch/pytorch #181140: an index-less device became
//! `device_id = -1` and was forwarded): a negative id is refused everywhere with
//! `INVALID_DEVICE`. Peer case 55 (NVIDIA/TensorRT-Incubator PR #600: a buffer without a
//! device descriptor exported): producer helpers refuse device types DLPack 1.3 does not assign
//! (0, 99, and the post-1.3 19/20) unless the caller opts in; consumer helpers pass them through.

mod common;

use common::*;
use dlpack_helpers::abi::*;
use dlpack_helpers::capi::convert::*;
use dlpack_helpers::capi::device::*;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::names::*;
use dlpack_helpers::capi::stream::*;
use dlpack_helpers::capi::tensor::*;
use dlpack_helpers::capi::validate::*;

static SHAPE: [i64; 1] = [4];
static STRIDES: [i64; 1] = [1];
static mut DATA: [f32; 4] = [0.0; 4];

fn f32_dtype() -> DLDataType {
    DLDataType {
        code: 2,
        bits: 32,
        lanes: 1,
    }
}

fn tensor(d: DLDevice) -> DLTensor {
    DLTensor {
        data: (&raw mut DATA).cast(),
        device: d,
        ndim: 1,
        dtype: f32_dtype(),
        shape: SHAPE.as_ptr().cast_mut(),
        strides: STRIDES.as_ptr().cast_mut(),
        byte_offset: 0,
    }
}

fn create(d: DLDevice, flags: u64) -> (dlpack_helpers_status, *mut DLManagedTensorVersioned) {
    let mut out: *mut DLManagedTensorVersioned = std::ptr::null_mut();
    // SAFETY: the arrays hold `ndim` elements; the data is never dereferenced; live out-pointer.
    let s = unsafe {
        dlpack_tensor_create(
            (&raw mut DATA).cast(),
            d,
            1,
            SHAPE.as_ptr(),
            STRIDES.as_ptr(),
            f32_dtype(),
            0,
            flags,
            None,
            std::ptr::null_mut(),
            &mut out,
        )
    };
    (s, out)
}

fn resolve(tensor_device: DLDevice, dl_device: Option<DLDevice>) -> dlpack_helpers_status {
    let req = dlpack_helpers_export_request {
        has_max_version: true,
        max_version: DLPackVersion::CURRENT,
        has_stream: false,
        stream: 0,
        has_dl_device: dl_device.is_some(),
        dl_device: dl_device.unwrap_or_default(),
        copy: DLPACK_HELPERS_COPY_IF_NEEDED,
    };
    // SAFETY: a C struct of integers and bools: all bits zero is a valid value.
    let mut plan: dlpack_helpers_export_plan = unsafe { std::mem::zeroed() };
    // SAFETY: live locals.
    unsafe {
        dlpack_export_request_resolve(&req, tensor_device, DLPackVersion::CURRENT, 0, &mut plan)
    }
}

const NEGATIVE: [DLDevice; 4] = [
    DLDevice {
        device_type: DLDeviceType::kDLOneAPI,
        device_id: -1,
    },
    DLDevice {
        device_type: DLDeviceType::kDLCUDA,
        device_id: -1,
    },
    DLDevice {
        device_type: DLDeviceType::kDLCPU,
        device_id: -1,
    },
    DLDevice {
        device_type: DLDeviceType(99),
        device_id: i32::MIN,
    },
];

#[test]
fn case_54_negative_device_ids_are_refused_everywhere() {
    for d in NEGATIVE {
        let t = tensor(d);
        // Validation (the three forms).
        let mt = DLManagedTensorVersioned {
            version: DLPackVersion::CURRENT,
            manager_ctx: std::ptr::null_mut(),
            deleter: None,
            flags: 0,
            dl_tensor: t,
        };
        let legacy = DLManagedTensor {
            dl_tensor: t,
            manager_ctx: std::ptr::null_mut(),
            deleter: None,
        };
        // SAFETY: live locals; the arrays hold ndim elements.
        unsafe {
            assert_eq!(
                dlpack_tensor_validate(&mt, std::ptr::null(), std::ptr::null_mut()),
                DLPACK_HELPERS_STATUS_INVALID_DEVICE,
                "{d:?}"
            );
            assert!(last_error().contains("peer case 54"), "{}", last_error());
            assert_eq!(
                dlpack_legacy_tensor_validate(&legacy, std::ptr::null(), std::ptr::null_mut()),
                DLPACK_HELPERS_STATUS_INVALID_DEVICE
            );
            assert_eq!(
                dlpack_dltensor_validate(
                    &t,
                    DLPackVersion::CURRENT,
                    0,
                    std::ptr::null(),
                    std::ptr::null_mut()
                ),
                DLPACK_HELPERS_STATUS_INVALID_DEVICE
            );
        }
        // Creation, with or without the opt-in for unassigned types.
        for flags in [0, DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE] {
            let (s, out) = create(d, flags);
            assert_eq!(
                (s, out),
                (DLPACK_HELPERS_STATUS_INVALID_DEVICE, std::ptr::null_mut())
            );
        }
        // Request resolution: the tensor's device, and a requested dl_device.
        assert_eq!(
            resolve(d, None),
            DLPACK_HELPERS_STATUS_INVALID_DEVICE,
            "{d:?}"
        );
        assert!(last_error().contains("tensor_device"), "{}", last_error());
        let own = dev(DLDeviceType::kDLCUDA, 0);
        assert_eq!(
            resolve(own, Some(d)),
            DLPACK_HELPERS_STATUS_INVALID_DEVICE,
            "{d:?}"
        );
        assert!(last_error().contains("dl_device"), "{}", last_error());
        // The device of a managed tensor: never returned negative.
        let mut out = dev(DLDeviceType(5), 5);
        // SAFETY: live locals.
        unsafe {
            assert_eq!(
                dlpack_get_device(&mt, &mut out),
                DLPACK_HELPERS_STATUS_INVALID_DEVICE
            );
            assert_eq!(
                dlpack_legacy_get_device(&legacy, &mut out),
                DLPACK_HELPERS_STATUS_INVALID_DEVICE
            );
        }
        assert_eq!(
            (out.device_type.0, out.device_id),
            (5, 5),
            "nothing written"
        );
        // The device rule itself, and the names.
        for flags in [0, DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE] {
            assert_eq!(
                dlpack_device_check(d, flags),
                DLPACK_HELPERS_STATUS_INVALID_DEVICE
            );
        }
        let mut buf = [0 as std::ffi::c_char; DLPACK_HELPERS_NAME_MAX];
        assert_eq!(
            // SAFETY: a live buffer of its size.
            unsafe { dlpack_device_format(d, buf.as_mut_ptr(), buf.len(), std::ptr::null_mut()) },
            DLPACK_HELPERS_STATUS_INVALID_DEVICE
        );
    }
    // Non-negative ids pass the same paths.
    let ok = dev(DLDeviceType::kDLOneAPI, 0);
    assert_eq!(resolve(ok, None), DLPACK_HELPERS_STATUS_OK);
    let (s, out) = create(ok, 0);
    assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
    // SAFETY: the tensor just made.
    unsafe { dlpack_tensor_delete(out) };
    assert_eq!(dlpack_device_check(ok, 0), DLPACK_HELPERS_STATUS_OK);
    // dlpack_get_device(NULL, NULL) names `tensor`, its first argument (issue 22 item 7).
    // SAFETY: NULL pointers are refused before anything is read.
    unsafe {
        assert_eq!(
            dlpack_get_device(std::ptr::null(), std::ptr::null_mut()),
            DLPACK_HELPERS_STATUS_NULL_POINTER
        );
        assert!(last_error().starts_with("tensor"), "{}", last_error());
        assert_eq!(
            dlpack_legacy_get_device(std::ptr::null(), std::ptr::null_mut()),
            DLPACK_HELPERS_STATUS_NULL_POINTER
        );
        assert!(last_error().starts_with("tensor"), "{}", last_error());
    }
}

#[test]
fn case_55_producers_refuse_unassigned_device_types_unless_asked() {
    for t in [0, 5, 6, 19, 20, 21, 99, -3, i32::MAX] {
        let d = dev(DLDeviceType(t), 0);
        let (s, out) = create(d, 0);
        assert_eq!(
            (s, out),
            (DLPACK_HELPERS_STATUS_INVALID_DEVICE, std::ptr::null_mut()),
            "{t}"
        );
        let m = last_error();
        assert!(
            m.contains("DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE"),
            "{m}"
        );
        if t == 19 || t == 20 {
            assert!(m.contains("after 1.3"), "{m}");
        }
        assert_eq!(
            dlpack_device_check(d, 0),
            DLPACK_HELPERS_STATUS_INVALID_DEVICE
        );
        assert_eq!(
            dlpack_device_check(d, DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE),
            DLPACK_HELPERS_STATUS_OK
        );
        // The opt-in makes the tensor; the request bit is not stored in its flags.
        let (s, out) = create(d, DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE | 1);
        assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "{}", last_error());
        // SAFETY: the tensor just made, read then released once.
        unsafe {
            assert_eq!(((*out).flags, (*out).dl_tensor.device), (1, d));
            dlpack_tensor_delete(out);
        }
        // Consumer helpers pass unknown types through: validation, the managed tensor's device.
        let mt = DLManagedTensorVersioned {
            version: DLPackVersion::CURRENT,
            manager_ctx: std::ptr::null_mut(),
            deleter: None,
            flags: 0,
            dl_tensor: tensor(d),
        };
        let mut got = dev(DLDeviceType(5), 5);
        // SAFETY: live locals.
        unsafe {
            assert_eq!(
                dlpack_tensor_validate(&mt, std::ptr::null(), std::ptr::null_mut()),
                DLPACK_HELPERS_STATUS_OK,
                "{}",
                last_error()
            );
            assert_eq!(dlpack_get_device(&mt, &mut got), DLPACK_HELPERS_STATUS_OK);
        }
        assert_eq!(got, d);
    }
    // Every device type DLPack 1.3 assigns is made without the opt-in; unknown flag bits next to
    // the request bit are still refused.
    for t in [1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18] {
        let (s, out) = create(dev(DLDeviceType(t), 1), 0);
        assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "{t}: {}", last_error());
        // SAFETY: the tensor just made.
        unsafe { dlpack_tensor_delete(out) };
    }
    let (s, _) = create(
        dev(DLDeviceType(99), 0),
        DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE | 0x100,
    );
    assert_eq!(s, DLPACK_HELPERS_STATUS_INVALID_FLAGS);
    assert_eq!(
        dlpack_device_check(dev(DLDeviceType::kDLCPU, 0), 0x2),
        DLPACK_HELPERS_STATUS_INVALID_ARGUMENT
    );
}

/// `BUFFER_TOO_SMALL` writes the needed length (without the NUL) to `out_len`, so a caller can
/// size its buffer (issue 22 item 7); the buffer itself is untouched.
#[test]
fn buffer_too_small_writes_the_needed_length() {
    let mut buf = [b'#' as std::ffi::c_char; 4];
    let mut len = usize::MAX;
    // SAFETY: a live buffer of its size; a live length.
    unsafe {
        assert_eq!(
            dlpack_dtype_format(f32_dtype(), buf.as_mut_ptr(), buf.len(), &mut len),
            DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL
        );
        assert_eq!(len, "float32".len());
        assert!(buf.iter().all(|&c| c == b'#' as std::ffi::c_char));
        len = usize::MAX;
        let d = dev(DLDeviceType::kDLCUDAManaged, 12);
        assert_eq!(
            dlpack_device_format(d, buf.as_mut_ptr(), buf.len(), &mut len),
            DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL
        );
        assert_eq!(len, "cuda_managed:12".len());
        // NULL out_len stays allowed.
        assert_eq!(
            dlpack_device_format(d, buf.as_mut_ptr(), 0, std::ptr::null_mut()),
            DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL
        );
        // Other failures leave out_len alone.
        len = 77;
        assert_eq!(
            dlpack_device_format(
                dev(DLDeviceType(99), 0),
                buf.as_mut_ptr(),
                buf.len(),
                &mut len
            ),
            DLPACK_HELPERS_STATUS_UNKNOWN_NAME
        );
        assert_eq!(len, 77);
    }
}
