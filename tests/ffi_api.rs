//! Issue 35, the C ABI for other languages' FFIs: `dlpack_tensor_alloc` (a producer with no
//! callback) against a brute-force enumeration of every element, and the `*_with_error`
//! variants' error object against the base functions and the thread's last error message.

use core::ffi::CStr;
use dlpack_helpers::abi::*;
use dlpack_helpers::capi::convert::*;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::names::*;
use dlpack_helpers::capi::tensor::*;
use dlpack_helpers::capi::validate::*;
use dlpack_helpers::capi::version::*;
use proptest::prelude::*;

const CPU: DLDevice = DLDevice {
    device_type: DLDeviceType::kDLCPU,
    device_id: 0,
};

fn last() -> String {
    // SAFETY: always a valid NUL-terminated string.
    unsafe { CStr::from_ptr(dlpack_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn fresh() -> dlpack_helpers_error {
    dlpack_helpers_error {
        struct_size: core::mem::size_of::<dlpack_helpers_error>(),
        status: 0x5A5A_5A5A,
        reserved: 0x5A5A_5A5A,
        message_length: 0x5A5A,
        message: [0x5A; DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY],
    }
}

fn text(e: &dlpack_helpers_error) -> String {
    // SAFETY: a filled object's message is NUL-terminated inside the buffer.
    unsafe { CStr::from_ptr(e.message.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// The object after a call that returned `s`: filled with `s` and the thread's message when `s`
/// is not OK, else untouched.
fn check(e: &dlpack_helpers_error, s: dlpack_helpers_status) {
    if s == DLPACK_HELPERS_STATUS_OK {
        let f = fresh();
        assert_eq!(
            (e.status, e.reserved, e.message_length),
            (f.status, f.reserved, f.message_length)
        );
        assert_eq!(e.message, f.message);
    } else {
        let m = last();
        assert_eq!(e.status, s);
        assert_eq!(e.reserved, 0);
        assert_eq!(e.struct_size, core::mem::size_of::<dlpack_helpers_error>());
        assert_eq!(e.message_length, m.len());
        assert_eq!(text(e), m);
        assert!(!m.is_empty());
    }
}

#[test]
fn every_variant_returns_the_base_status_and_fills_the_object_only_on_failure() {
    let name = |s: &CStr| s.as_ptr();
    let mut dt = DLDataType {
        code: 0,
        bits: 0,
        lanes: 0,
    };
    let mut dev = CPU;
    for n in [c"float32", c"bfloat33", c""] {
        let mut e = fresh();
        // SAFETY: valid arguments.
        let (base, var) = unsafe {
            (
                dlpack_dtype_parse(name(n), &mut dt),
                dlpack_dtype_parse_with_error(name(n), &mut dt, &mut e),
            )
        };
        assert_eq!(base, var);
        check(&e, var);
    }
    for n in [c"cuda:1", c"cuda:-1", c"nowhere:0"] {
        let mut e = fresh();
        // SAFETY: valid arguments.
        let (base, var) = unsafe {
            (
                dlpack_device_parse(name(n), &mut dev),
                dlpack_device_parse_with_error(name(n), &mut dev, &mut e),
            )
        };
        assert_eq!(base, var);
        check(&e, var);
    }
    for (major, minor) in [(1, 3), (1, 9), (0, 0), (2, 0)] {
        let v = DLPackVersion { major, minor };
        let mut e = fresh();
        let mut c = 0;
        // SAFETY: valid arguments.
        let (base, var) = unsafe {
            (
                dlpack_version_check(v, &mut c),
                dlpack_version_check_with_error(v, &mut c, &mut e),
            )
        };
        assert_eq!(base, var);
        check(&e, var);
        let mut e = fresh();
        // SAFETY: NULL out_choice is refused.
        let s = unsafe {
            dlpack_version_negotiate_with_error(
                v,
                0,
                core::ptr::null(),
                core::ptr::null_mut(),
                &mut e,
            )
        };
        assert_eq!(s, DLPACK_HELPERS_STATUS_NULL_POINTER);
        check(&e, s);
    }
    // Validators: a tensor made by dlpack_tensor_alloc, then broken.
    let shape = [2i64, 3];
    let mut t: *mut DLManagedTensorVersioned = core::ptr::null_mut();
    // SAFETY: valid arguments.
    let s =
        unsafe { dlpack_tensor_alloc(CPU, 2, shape.as_ptr(), core::ptr::null(), F32, 0, &mut t) };
    assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
    for lanes in [1u16, 0] {
        // SAFETY: `t` is live.
        unsafe { (*t).dl_tensor.dtype.lanes = lanes };
        let mut e = fresh();
        // SAFETY: valid arguments.
        let (base, var) = unsafe {
            (
                dlpack_tensor_validate(t, core::ptr::null(), core::ptr::null_mut()),
                dlpack_tensor_validate_with_error(
                    t,
                    core::ptr::null(),
                    core::ptr::null_mut(),
                    &mut e,
                ),
            )
        };
        assert_eq!(base, var);
        check(&e, var);
        let mut e = fresh();
        // SAFETY: valid arguments.
        let s = unsafe {
            dlpack_dltensor_validate_with_error(
                &(*t).dl_tensor,
                DLPackVersion::CURRENT,
                0,
                core::ptr::null(),
                core::ptr::null_mut(),
                &mut e,
            )
        };
        assert_eq!(s, var);
        check(&e, s);
    }
    // SAFETY: `t` is ours; its deleter frees everything.
    unsafe {
        (*t).dl_tensor.dtype.lanes = 1;
        dlpack_tensor_delete(t);
    }
}

#[test]
fn too_small_object_is_refused_and_nothing_runs() {
    let mut t = DLManagedTensorVersioned {
        version: DLPackVersion { major: 9, minor: 0 },
        manager_ctx: core::ptr::null_mut(),
        deleter: Some(panic_deleter),
        flags: 0,
        // SAFETY: an all-zero DLTensor is a valid value.
        dl_tensor: unsafe { core::mem::zeroed() },
    };
    unsafe extern "C" fn panic_deleter(_: *mut DLManagedTensorVersioned) {
        std::process::abort(); // must never run: the call is refused before anything is done
    }
    for size in [0, 8, core::mem::size_of::<dlpack_helpers_error>() - 1] {
        let mut e = fresh();
        e.struct_size = size;
        // SAFETY: valid arguments.
        let s = unsafe {
            dlpack_tensor_check_version_or_delete_with_error(&mut t, core::ptr::null_mut(), &mut e)
        };
        assert_eq!(s, DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
        assert!(last().contains("struct_size"), "{}", last());
        assert_eq!(e.struct_size, size);
        assert_eq!(e.status, 0x5A5A_5A5A);
    }
}

const F32: DLDataType = DLDataType {
    code: 2,
    bits: 32,
    lanes: 1,
};

fn dtypes() -> impl Strategy<Value = DLDataType> {
    prop_oneof![
        Just(F32),
        Just(DLDataType {
            code: 0,
            bits: 8,
            lanes: 1
        }),
        Just(DLDataType {
            code: 5,
            bits: 128,
            lanes: 1
        }),
        Just(DLDataType {
            code: 2,
            bits: 16,
            lanes: 4
        }),
    ]
}

proptest! {
    /// Every element the strides reach lies inside the zeroed buffer, whose start is `data` and
    /// size the brute-force span (lowest to highest element, one element wide).
    #[test]
    fn alloc_covers_every_element_exactly(
        shape in proptest::collection::vec(0i64..5, 0..4),
        raw_strides in proptest::collection::vec(-7i64..8, 4),
        explicit in any::<bool>(),
        dt in dtypes(),
    ) {
        let n = shape.len();
        let item = (dt.bits as i64 / 8) * dt.lanes as i64;
        let mut compact = vec![0i64; n];
        let mut acc = 1;
        for d in (0..n).rev() {
            compact[d] = acc;
            acc *= shape[d].max(1);
        }
        let strides: Vec<i64> = if explicit { raw_strides[..n].to_vec() } else { compact.clone() };
        let mut t: *mut DLManagedTensorVersioned = core::ptr::null_mut();
        // SAFETY: valid arguments.
        let s = unsafe {
            dlpack_tensor_alloc(
                CPU,
                n as i32,
                shape.as_ptr(),
                if explicit { strides.as_ptr() } else { core::ptr::null() },
                dt,
                0,
                &mut t,
            )
        };
        prop_assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "{}", last());
        // SAFETY: a live tensor of ours.
        let tt = unsafe { &*t };
        let data = tt.dl_tensor.data as usize;
        prop_assert!(data != 0 && data % DLPACK_HELPERS_ALLOC_ALIGNMENT == 0);
        prop_assert_eq!(tt.dl_tensor.ndim as usize, n);
        if n > 0 {
            // SAFETY: ndim elements each.
            let (sh, st) = unsafe {
                (
                    core::slice::from_raw_parts(tt.dl_tensor.shape, n),
                    core::slice::from_raw_parts(tt.dl_tensor.strides, n),
                )
            };
            prop_assert_eq!(sh, &shape[..]);
            prop_assert_eq!(st, &strides[..]);
        }
        // Brute force: every element's offset (elements) from element [0, ...].
        let mut offsets = vec![0i64];
        for d in 0..n {
            let mut next = Vec::new();
            for o in &offsets {
                for i in 0..shape[d] {
                    next.push(o + i * strides[d]);
                }
            }
            offsets = next;
        }
        if !offsets.is_empty() {
            let lo = *offsets.iter().min().unwrap();
            let hi = *offsets.iter().max().unwrap();
            prop_assert_eq!(tt.dl_tensor.byte_offset as i64, -lo * item);
            let span = ((hi - lo + 1) * item) as usize;
            // SAFETY: the buffer holds `span` bytes from `data` (the property under test; a
            // shorter one would be caught by the sanitizer part's run of this file).
            let buf = unsafe { core::slice::from_raw_parts_mut(data as *mut u8, span) };
            prop_assert!(buf.iter().all(|&b| b == 0));
            for o in &offsets {
                let at = (tt.dl_tensor.byte_offset as i64 + o * item) as usize;
                prop_assert!(at + item as usize <= span);
                buf[at..at + item as usize].fill(0xEE);
            }
        }
        // SAFETY: ours; frees buffer and metadata once.
        unsafe { dlpack_tensor_delete(t) };
    }
}

#[test]
fn create_check_and_conversion_variants_fill_the_object() {
    let shape = [2i64, 3];
    let mut out: *mut DLManagedTensorVersioned = core::ptr::null_mut();
    let mut e = fresh();
    // SAFETY: NULL data for a non-empty CPU tensor is refused.
    let s = unsafe {
        dlpack_tensor_create_with_error(
            core::ptr::null_mut(),
            CPU,
            2,
            shape.as_ptr(),
            core::ptr::null(),
            F32,
            0,
            0,
            None,
            core::ptr::null_mut(),
            &mut out,
            &mut e,
        )
    };
    assert_eq!(s, DLPACK_HELPERS_STATUS_NULL_DATA);
    check(&e, s);
    assert!(out.is_null());
    let mut legacy: *mut DLManagedTensor = core::ptr::null_mut();
    let mut e = fresh();
    // SAFETY: NULL tensor is refused.
    let s = unsafe {
        dlpack_versioned_to_legacy_with_error(
            core::ptr::null_mut(),
            0,
            core::ptr::null_mut(),
            &mut legacy,
            &mut e,
        )
    };
    assert_eq!(s, DLPACK_HELPERS_STATUS_NULL_POINTER);
    check(&e, s);
    let mut e = fresh();
    // SAFETY: NULL legacy is refused.
    let s = unsafe {
        dlpack_legacy_to_versioned_with_error(core::ptr::null_mut(), 0, &mut out, &mut e)
    };
    assert_eq!(s, DLPACK_HELPERS_STATUS_NULL_POINTER);
    check(&e, s);
    let mut e = fresh();
    let mut c = 0;
    // SAFETY: NULL tensor is refused.
    let s = unsafe { dlpack_tensor_check_version_with_error(core::ptr::null(), &mut c, &mut e) };
    assert_eq!(s, DLPACK_HELPERS_STATUS_NULL_POINTER);
    check(&e, s);
    let mut e = fresh();
    // SAFETY: NULL tensor is refused.
    let s = unsafe {
        dlpack_legacy_tensor_validate_with_error(
            core::ptr::null(),
            core::ptr::null(),
            core::ptr::null_mut(),
            &mut e,
        )
    };
    assert_eq!(s, DLPACK_HELPERS_STATUS_NULL_POINTER);
    check(&e, s);
}
