//! The managed-tensor ownership state machine: any sequence of release, check-or-release and
//! read-only calls on versioned and legacy tensors of any version runs each deleter exactly
//! once (DLPack: whoever holds a managed tensor calls its deleter exactly once).

use crate::{Input, Out, check_status};
use dlpack_helpers::abi::{DLDevice, DLManagedTensor, DLManagedTensorVersioned};
use dlpack_helpers::capi::convert::{
    DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, dlpack_legacy_tensor_wrap,
};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::tensor::*;
use dlpack_helpers::capi::version::dlpack_helpers_version_compat;
use std::cell::RefCell;

thread_local! {
    /// Deleter calls per tensor id.
    static CALLS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

fn note(id: usize) {
    CALLS.with(|c| c.borrow_mut()[id] += 1);
}

unsafe extern "C" fn deleter_v(t: *mut DLManagedTensorVersioned) {
    // SAFETY: made by Box::into_raw below; manager_ctx carries the id.
    let t = unsafe { Box::from_raw(t) };
    note(t.manager_ctx as usize);
}

unsafe extern "C" fn deleter_l(t: *mut DLManagedTensor) {
    // SAFETY: as above.
    let t = unsafe { Box::from_raw(t) };
    note(t.manager_ctx as usize);
}

enum Held {
    Versioned(*mut DLManagedTensorVersioned),
    Legacy(*mut DLManagedTensor),
}

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    CALLS.with(|c| c.borrow_mut().clear());
    let mut held: Vec<Option<Held>> = Vec::new();
    let mut null_deleter_boxes = Vec::new();
    let mut steps = 0;
    while !input.is_empty() && steps < 256 {
        steps += 1;
        let op = input.u8();
        let slot = input.u8() as usize;
        if op % 8 == 0 || held.is_empty() {
            // A new tensor: versioned (any version) or legacy; with a NULL deleter sometimes.
            let id = CALLS.with(|c| {
                let mut c = c.borrow_mut();
                c.push(0);
                c.len() - 1
            });
            let device = input.device();
            let null_deleter = input.u8() < 16;
            // SAFETY: all-zero DLTensor is valid plain data.
            let mut dl_tensor: dlpack_helpers::abi::DLTensor = unsafe { std::mem::zeroed() };
            dl_tensor.device = device;
            if op & 0x20 != 0 {
                // A valid 0-d int8 tensor (so that wraps can succeed).
                static BYTE: u8 = 0;
                dl_tensor.data = (&raw const BYTE).cast_mut().cast();
                dl_tensor.dtype = dlpack_helpers::abi::DLDataType {
                    code: 0,
                    bits: 8,
                    lanes: 1,
                };
            }
            if op & 0x10 == 0 {
                let t = Box::into_raw(Box::new(DLManagedTensorVersioned {
                    version: input.version(),
                    manager_ctx: id as *mut _,
                    deleter: if null_deleter { None } else { Some(deleter_v) },
                    flags: input.u64(),
                    dl_tensor,
                }));
                if null_deleter {
                    null_deleter_boxes.push((t as usize, true));
                    CALLS.with(|c| c.borrow_mut()[id] = 1); // nothing to free: counts as released
                }
                held.push(Some(Held::Versioned(t)));
            } else {
                let t = Box::into_raw(Box::new(DLManagedTensor {
                    dl_tensor,
                    manager_ctx: id as *mut _,
                    deleter: if null_deleter { None } else { Some(deleter_l) },
                }));
                if null_deleter {
                    null_deleter_boxes.push((t as usize, false));
                    CALLS.with(|c| c.borrow_mut()[id] = 1);
                }
                held.push(Some(Held::Legacy(t)));
            }
            continue;
        }
        let i = slot % held.len();
        let Some(h) = held[i].take() else { continue };
        let mut wrapped = None;
        let keep = match (&h, op % 8) {
            (Held::Versioned(t), 1) => {
                // SAFETY: a live tensor we own.
                unsafe { dlpack_tensor_delete(*t) };
                false
            }
            (Held::Versioned(t), 2) => {
                let mut c = Out::<dlpack_helpers_version_compat>::new();
                // SAFETY: a live tensor we own.
                let s = unsafe { dlpack_tensor_check_version_or_delete(*t, c.ptr()) };
                check_status(
                    "check_version_or_delete",
                    s,
                    &[DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION],
                );
                s == DLPACK_HELPERS_STATUS_OK
            }
            (Held::Versioned(t), 3) => {
                let mut c = Out::<dlpack_helpers_version_compat>::new();
                // SAFETY: a live tensor, borrowed.
                let s = unsafe { dlpack_tensor_check_version(*t, c.ptr()) };
                check_status(
                    "check_version",
                    s,
                    &[DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION],
                );
                true
            }
            (Held::Versioned(t), _) => {
                let mut d = Out::<DLDevice>::new();
                // SAFETY: a live tensor, borrowed.
                let s = unsafe { dlpack_get_device(*t, d.ptr()) };
                check_status(
                    "get_device",
                    s,
                    &[DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION],
                );
                // SAFETY: live.
                let (v, want) = unsafe { ((**t).version, (**t).dl_tensor.device) };
                assert_eq!(s == DLPACK_HELPERS_STATUS_OK, v.major == 1);
                if s == DLPACK_HELPERS_STATUS_OK {
                    assert_eq!(d.get(), want);
                } else {
                    assert!(d.untouched());
                }
                true
            }
            (Held::Legacy(t), 3) => {
                // The one legacy -> versioned conversion (issue 12): on OK the wrapper owns the
                // legacy tensor and is read-only unless writability was asserted; on failure
                // nothing was called and we still own it.
                let writable = input.bool();
                let options = if writable {
                    DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE
                } else {
                    0
                } | if input.u8() < 8 { input.u32() } else { 0 };
                let extra = input.u64() & if input.bool() { 0x6 } else { u64::MAX };
                let mut out = Out::<*mut DLManagedTensorVersioned>::new();
                // SAFETY: a live tensor we own.
                let s = unsafe { dlpack_legacy_tensor_wrap(*t, extra, options, out.ptr()) };
                check_status(
                    "legacy_tensor_wrap",
                    s,
                    &[
                        DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
                        DLPACK_HELPERS_STATUS_INVALID_FLAGS,
                        DLPACK_HELPERS_STATUS_INVALID_DTYPE,
                        DLPACK_HELPERS_STATUS_NULL_DATA,
                        DLPACK_HELPERS_STATUS_INVALID_NDIM,
                        DLPACK_HELPERS_STATUS_OVERFLOW,
                    ],
                );
                if s == DLPACK_HELPERS_STATUS_OK {
                    let w = out.get();
                    // SAFETY: the wrapper we now own.
                    let flags = unsafe { (*w).flags };
                    // Writability is asserted by the options the call received (the random
                    // extra bits may carry DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE too), and every
                    // other flag the caller gave is kept as given.
                    let asserted = options & DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE != 0;
                    let ro = dlpack_helpers::abi::DLPACK_FLAG_BITMASK_READ_ONLY;
                    assert_eq!(
                        flags & ro != 0,
                        !asserted || extra & ro != 0,
                        "writability invented"
                    );
                    assert_eq!(flags & !ro, extra & !ro, "a flag appeared or disappeared");
                    wrapped = Some(Held::Versioned(w));
                    false
                } else {
                    assert!(out.untouched(), "out_tensor written on failure");
                    true
                }
            }
            (Held::Legacy(t), 1 | 2) => {
                // SAFETY: a live tensor we own.
                unsafe { dlpack_legacy_tensor_delete(*t) };
                false
            }
            (Held::Legacy(t), _) => {
                let mut d = Out::<DLDevice>::new();
                // SAFETY: a live tensor, borrowed.
                let s = unsafe { dlpack_legacy_get_device(*t, d.ptr()) };
                check_status("legacy_get_device", s, &[]);
                // SAFETY: live.
                assert_eq!(d.get(), unsafe { (**t).dl_tensor.device });
                true
            }
        };
        if keep {
            held[i] = Some(h);
        }
        if let Some(w) = wrapped {
            held.push(Some(w));
        }
    }
    // Release everything still held.
    for h in held.into_iter().flatten() {
        match h {
            // SAFETY: live tensors we own.
            Held::Versioned(t) => unsafe { dlpack_tensor_delete(t) },
            // SAFETY: as above.
            Held::Legacy(t) => unsafe { dlpack_legacy_tensor_delete(t) },
        }
    }
    CALLS.with(|c| {
        for (id, n) in c.borrow().iter().enumerate() {
            assert_eq!(*n, 1, "tensor {id}: deleter ran {n} times");
        }
    });
    // Tensors without a deleter are the caller's to free.
    for (p, versioned) in null_deleter_boxes {
        // SAFETY: made by Box::into_raw above and never freed by the library (NULL deleter).
        unsafe {
            if versioned {
                drop(Box::from_raw(p as *mut DLManagedTensorVersioned));
            } else {
                drop(Box::from_raw(p as *mut DLManagedTensor));
            }
        }
    }
}
