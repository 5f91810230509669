//! Version negotiation and version checks against the decisions documented in the header.

use crate::{Input, Out, check_status};
use dlpack_helpers::abi::{DLManagedTensorVersioned, DLPackVersion};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::tensor::{
    dlpack_tensor_check_version, dlpack_tensor_check_version_or_delete, dlpack_tensor_delete,
};
use dlpack_helpers::capi::version::*;
use std::cell::Cell;

/// The documented decision of `dlpack_version_negotiate` (header, in order).
fn model(
    p: DLPackVersion,
    flags: u32,
    max: Option<DLPackVersion>,
) -> Result<(i32, DLPackVersion), i32> {
    let legacy = flags & DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY != 0;
    if flags
        & !(DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY | DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD)
        != 0
    {
        return Err(DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
    }
    let none = DLPackVersion::new(0, 0);
    let Some(m) = max else {
        // A 0.x producer can only export the legacy struct.
        return if legacy || p.major == 0 {
            Ok((DLPACK_HELPERS_EXPORT_LEGACY, none))
        } else {
            Err(DLPACK_HELPERS_STATUS_NO_COMMON_VERSION)
        };
    };
    if flags & DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD != 0 {
        return Err(DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD);
    }
    if p.major == 0 {
        return Ok((DLPACK_HELPERS_EXPORT_LEGACY, none));
    }
    if (m.major, m.minor) >= (p.major, p.minor) || m.major == p.major {
        return Ok((DLPACK_HELPERS_EXPORT_VERSIONED, p));
    }
    if m.major == 0 && legacy {
        return Ok((DLPACK_HELPERS_EXPORT_LEGACY, none));
    }
    Err(DLPACK_HELPERS_STATUS_NO_COMMON_VERSION)
}

fn compat_of(v: DLPackVersion) -> Option<i32> {
    (v.major == 1).then(|| match v.minor {
        3 => DLPACK_HELPERS_VERSION_EXACT,
        m if m < 3 => DLPACK_HELPERS_VERSION_OLDER_MINOR,
        _ => DLPACK_HELPERS_VERSION_NEWER_MINOR,
    })
}

thread_local! {
    static DELETED: Cell<u32> = const { Cell::new(0) };
}

unsafe extern "C" fn counting_deleter(t: *mut DLManagedTensorVersioned) {
    DELETED.with(|d| d.set(d.get() + 1));
    // SAFETY: made by Box::into_raw in `run`; the library calls the deleter once.
    drop(unsafe { Box::from_raw(t) });
}

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    // One case per input (stateless: see lib.rs, "Speed").
    {
        let p = input.version();
        let flags = input.flags();
        let max = input.bool().then(|| input.version());
        let mut out = Out::<dlpack_helpers_version_choice>::new();
        let maxp = max
            .as_ref()
            .map_or(std::ptr::null(), |m| m as *const DLPackVersion);
        // SAFETY: valid pointers or NULL where allowed.
        let s = unsafe { dlpack_version_negotiate(p, flags, maxp, out.ptr()) };
        check_status(
            "dlpack_version_negotiate",
            s,
            &[
                DLPACK_HELPERS_STATUS_NO_COMMON_VERSION,
                DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD,
                DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
            ],
        );
        match model(p, flags, max) {
            Ok((kind, v)) => {
                assert_eq!(
                    s, DLPACK_HELPERS_STATUS_OK,
                    "negotiate({p:?}, {flags:#x}, {max:?})"
                );
                let c = out.get();
                assert_eq!(
                    (c.kind, c.version),
                    (kind, v),
                    "negotiate({p:?}, {flags:#x}, {max:?})"
                );
            }
            Err(want) => {
                assert_eq!(s, want, "negotiate({p:?}, {flags:#x}, {max:?})");
                assert!(out.untouched(), "out_choice written on failure");
            }
        }

        // dlpack_version_check and the tensor checks read nothing but `version`.
        let v = input.version();
        let mut out = Out::<dlpack_helpers_version_compat>::new();
        // SAFETY: valid out pointer.
        let s = unsafe { dlpack_version_check(v, out.ptr()) };
        check_status(
            "dlpack_version_check",
            s,
            &[DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION],
        );
        match compat_of(v) {
            Some(c) => {
                assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
                assert_eq!(out.get(), c);
            }
            None => {
                assert_eq!(s, DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
                assert!(out.untouched());
            }
        }

        let t = Box::into_raw(Box::new(DLManagedTensorVersioned {
            version: v,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(counting_deleter),
            flags: input.u64(),
            // SAFETY: an all-zero DLTensor is valid plain data (NULL pointers, zero integers).
            dl_tensor: unsafe { std::mem::zeroed() },
        }));
        let before = DELETED.with(Cell::get);
        let mut out = Out::<dlpack_helpers_version_compat>::new();
        // SAFETY: a live tensor.
        let s = unsafe { dlpack_tensor_check_version(t, out.ptr()) };
        check_status(
            "dlpack_tensor_check_version",
            s,
            &[DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION],
        );
        assert_eq!(s == DLPACK_HELPERS_STATUS_OK, compat_of(v).is_some());
        assert_eq!(
            DELETED.with(Cell::get),
            before,
            "check_version released the tensor"
        );
        let mut out = Out::<dlpack_helpers_version_compat>::new();
        // SAFETY: a live tensor, owned here.
        let s = unsafe { dlpack_tensor_check_version_or_delete(t, out.ptr()) };
        check_status(
            "dlpack_tensor_check_version_or_delete",
            s,
            &[DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION],
        );
        let released = DELETED.with(Cell::get) - before;
        if s == DLPACK_HELPERS_STATUS_OK {
            assert_eq!(released, 0, "released on OK");
            assert_eq!(Some(out.get()), compat_of(v));
            // SAFETY: still ours: release it once.
            unsafe { dlpack_tensor_delete(t) };
            assert_eq!(DELETED.with(Cell::get) - before, 1);
        } else {
            assert_eq!(
                released, 1,
                "UNSUPPORTED_VERSION must release the tensor exactly once"
            );
            assert!(out.untouched());
        }
    }
}
