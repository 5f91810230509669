//! Device and pointer exports: the device-type tables (`dlpack_is_cpu_accessible`,
//! `dlpack_device_host_access`), per-tensor host access (bare, versioned, legacy), the first
//! element's location, and the pointer queries (`dlpack_pointer_classify`,
//! `dlpack_pointer_get_device`, `dlpack_level_zero_context_set`).
//!
//! No GPU runtime is asked: before the first call every runtime's override names a missing
//! file, so the answers do not depend on the machine (every backend is unreachable, and a device
//! is never guessed: unknown memory is never host memory). Addresses are never dereferenced
//! by the library, so any integer is a legal pointer argument.

use crate::{Input, Out, check_status};
use dlpack_helpers::abi::{
    DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLTensor,
};
use dlpack_helpers::capi::device::*;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::layout::{
    dlpack_device_is_pointer_addressed, dlpack_dltensor_data_location,
};
use dlpack_helpers::capi::pointer::*;
use dlpack_helpers::capi::stream::dlpack_pointer_get_device;
use std::ffi::c_void;
use std::sync::Once;

static NO_RUNTIMES: Once = Once::new();

fn no_runtimes() {
    NO_RUNTIMES.call_once(|| {
        for (var, file) in [
            ("DLPACK_HELPERS_CUDA_LIBRARY", "libcuda.so.1"),
            ("DLPACK_HELPERS_HIP_LIBRARY", "libamdhip64.so"),
            ("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY", "libze_loader.so.1"),
        ] {
            // SAFETY: libFuzzer runs the target on one thread, and this runs before the first
            // library call reads the environment.
            unsafe { std::env::set_var(var, format!("/nonexistent/dlpack-helpers-fuzz/{file}")) };
        }
    });
}

/// The documented table of `dlpack_device_host_access` (header, by device type).
fn table(t: i32) -> dlpack_helpers_host_access {
    match t {
        1 | 3 | 11 | 13 => DLPACK_HELPERS_HOST_ACCESS_ALWAYS,
        2 | 4 | 7 | 8 | 9 | 10 | 15 | 16 | 17 | 18 => DLPACK_HELPERS_HOST_ACCESS_NEVER,
        _ => DLPACK_HELPERS_HOST_ACCESS_DEPENDS,
    }
}

/// The per-tensor answer with no runtime reachable: the table where it decides, else unknown.
fn per_tensor(t: i32) -> dlpack_helpers_host_access {
    match table(t) {
        DLPACK_HELPERS_HOST_ACCESS_DEPENDS => DLPACK_HELPERS_HOST_ACCESS_UNKNOWN,
        a => a,
    }
}

fn host_access_statuses() -> [i32; 2] {
    [
        DLPACK_HELPERS_STATUS_NULL_POINTER,
        DLPACK_HELPERS_STATUS_DEVICE_ERROR,
    ]
}

fn check_access(what: &str, s: i32, out: Out<dlpack_helpers_host_access>, want: Option<i32>) {
    match want {
        Some(w) => {
            assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "{what}");
            let got = out.get();
            assert_eq!(got, w, "{what}");
            assert_ne!(
                got, DLPACK_HELPERS_HOST_ACCESS_DEPENDS,
                "{what}: never DEPENDS"
            );
        }
        None => assert!(out.untouched(), "{what}: out_access written on failure"),
    }
}

pub fn run(data: &[u8]) {
    no_runtimes();
    let mut input = Input::new(data);
    let device: DLDevice = input.device();
    let t = device.device_type.0;
    let data_ptr = input.small_i64() as usize as *mut c_void;
    let byte_offset = input.u64() >> (input.u8() % 64);
    let ze_context = if input.bool() {
        std::ptr::null_mut()
    } else {
        input.small_i64() as usize as *mut c_void
    };

    // The device-type tables: total, no side effects.
    assert_eq!(
        dlpack_is_cpu_accessible(device),
        matches!(t, 1 | 3 | 11 | 13),
        "is_cpu_accessible({t})"
    );
    assert_eq!(
        dlpack_device_host_access(device),
        table(t),
        "device_host_access({t})"
    );

    // Per-tensor host access: bare, versioned (version checked first), legacy.
    let tensor = DLTensor {
        data: data_ptr,
        device,
        ndim: 0,
        dtype: dlpack_helpers::abi::DLDataType {
            code: 0,
            bits: 8,
            lanes: 1,
        },
        shape: std::ptr::null_mut(),
        strides: std::ptr::null_mut(),
        byte_offset,
    };
    let mut out = Out::new();
    // SAFETY: a live tensor; ze_context is an opaque handle the library only passes on.
    let s = unsafe { dlpack_dltensor_host_access(&tensor, ze_context, out.ptr()) };
    check_status("dlpack_dltensor_host_access", s, &host_access_statuses());
    check_access("dltensor_host_access", s, out, Some(per_tensor(t)));

    let version = input.version();
    let v = DLManagedTensorVersioned {
        version,
        manager_ctx: std::ptr::null_mut(),
        deleter: None,
        flags: 0,
        dl_tensor: tensor,
    };
    let mut out = Out::new();
    // SAFETY: a live tensor, borrowed.
    let s = unsafe { dlpack_tensor_host_access(&v, ze_context, out.ptr()) };
    let mut documented = host_access_statuses().to_vec();
    documented.push(DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
    check_status("dlpack_tensor_host_access", s, &documented);
    let want = (version.major == 1).then(|| per_tensor(t));
    if want.is_none() {
        assert_eq!(s, DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION, "{version:?}");
    }
    check_access("tensor_host_access", s, out, want);

    let l = DLManagedTensor {
        dl_tensor: tensor,
        manager_ctx: std::ptr::null_mut(),
        deleter: None,
    };
    let mut out = Out::new();
    // SAFETY: a live tensor, borrowed.
    let s = unsafe { dlpack_legacy_tensor_host_access(&l, ze_context, out.ptr()) };
    check_status(
        "dlpack_legacy_tensor_host_access",
        s,
        &host_access_statuses(),
    );
    check_access("legacy_tensor_host_access", s, out, Some(per_tensor(t)));

    // The first element: data + byte_offset for pointer-addressed memory, never for a handle.
    let mut at = Out::<*mut c_void>::new();
    let mut off = Out::<u64>::new();
    // SAFETY: a live tensor and two out pointers.
    let s = unsafe { dlpack_dltensor_data_location(&tensor, at.ptr(), off.ptr()) };
    check_status(
        "dlpack_dltensor_data_location",
        s,
        &[DLPACK_HELPERS_STATUS_OVERFLOW],
    );
    if dlpack_device_is_pointer_addressed(device) {
        match (data_ptr as usize as u64).checked_add(byte_offset) {
            Some(sum) if sum <= usize::MAX as u64 => {
                assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
                assert_eq!((at.get() as usize as u64, off.get()), (sum, 0));
            }
            _ => {
                assert_eq!(
                    s, DLPACK_HELPERS_STATUS_OVERFLOW,
                    "{data_ptr:?} + {byte_offset}"
                );
                assert!(at.untouched() && off.untouched());
            }
        }
    } else {
        assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
        assert_eq!(
            (at.get(), off.get()),
            (data_ptr, byte_offset),
            "a handle was moved"
        );
    }

    // Pointer queries: every backend is unreachable here, so nothing is ever confirmed.
    let ptr = input.small_i64() as usize as *const c_void;
    let struct_size = match input.u8() % 4 {
        0 => size_of::<dlpack_helpers_pointer_info>(),
        1 => input.u8() as usize % (size_of::<dlpack_helpers_pointer_info>() + 16),
        2 => size_of::<usize>(),
        _ => size_of::<dlpack_helpers_pointer_info>() + 64,
    };
    // Room for the largest struct_size asked, aligned like the struct, filled with 0xA5 to
    // see every byte written.
    #[repr(C, align(8))]
    struct Room([u8; size_of::<dlpack_helpers_pointer_info>() + 64]);
    let mut room = Room([0xA5u8; size_of::<dlpack_helpers_pointer_info>() + 64]);
    let buf = &mut room.0;
    buf[..size_of::<usize>()].copy_from_slice(&struct_size.to_ne_bytes());
    let info = buf.as_mut_ptr().cast::<dlpack_helpers_pointer_info>();
    // SAFETY: `buf` has room for `struct_size` bytes (at most its length) and the struct's
    // alignment.
    let s = unsafe { dlpack_pointer_classify(ptr, ze_context, info) };
    check_status(
        "dlpack_pointer_classify",
        s,
        &[
            DLPACK_HELPERS_STATUS_NULL_POINTER,
            DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
            DLPACK_HELPERS_STATUS_DEVICE_ERROR,
        ],
    );
    if ptr.is_null() {
        assert_eq!(s, DLPACK_HELPERS_STATUS_NULL_POINTER);
    } else if struct_size < size_of::<usize>() {
        assert_eq!(
            s, DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
            "struct_size {struct_size}"
        );
    } else {
        assert_eq!(
            s, DLPACK_HELPERS_STATUS_OK,
            "classify({ptr:?}), struct_size {struct_size}"
        );
        let filled = usize::from_ne_bytes(buf[..size_of::<usize>()].try_into().unwrap());
        assert!(filled <= struct_size.min(size_of::<dlpack_helpers_pointer_info>()));
        assert!(
            buf[filled..].iter().all(|&b| b == 0xA5),
            "bytes past the filled size {filled} were written (struct_size {struct_size})"
        );
        if filled == size_of::<dlpack_helpers_pointer_info>() {
            // SAFETY: the library filled the whole struct.
            let i = unsafe { info.read() };
            assert_eq!(i.memory_class, DLPACK_HELPERS_MEMORY_UNKNOWN, "{i:?}");
            assert_ne!(i.host_access, DLPACK_HELPERS_HOST_ACCESS_ALWAYS, "{i:?}");
            assert_eq!(i.answered_by, 0, "{i:?}");
            assert_eq!(i.device.device_type, DLDeviceType(0), "{i:?}");
        }
    }
    if input.bool() {
        // The registered context is what a NULL ze_context means from now on.
        // SAFETY: an opaque handle, stored and never dereferenced while no loader is reachable.
        assert_eq!(
            unsafe { dlpack_level_zero_context_set(ze_context) },
            DLPACK_HELPERS_STATUS_OK
        );
    }
    let mut dev = Out::<DLDevice>::new();
    // SAFETY: an address the library never dereferences, and a live out pointer.
    let s = unsafe { dlpack_pointer_get_device(ptr, dev.ptr()) };
    check_status(
        "dlpack_pointer_get_device",
        s,
        &[
            DLPACK_HELPERS_STATUS_NULL_POINTER,
            DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN,
            DLPACK_HELPERS_STATUS_DEVICE_ERROR,
        ],
    );
    let want = if ptr.is_null() {
        DLPACK_HELPERS_STATUS_NULL_POINTER
    } else {
        DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN // never guessed, never (kDLCPU, 0)
    };
    assert_eq!(s, want, "pointer_get_device({ptr:?})");
    assert!(dev.untouched(), "out_device written on failure");
}
