//! Issue 12, data integrity through the C entry points: writability is never invented (peer
//! case 50), arithmetic never clamps (peer case 49: every stride/size producer against exact
//! 128-bit arithmetic), the allocation-fit question, and the new statuses.
//!
//! `PROPTEST_CASES=100000 cargo test --release --test integrity` for a long run.

use core::ffi::{CStr, c_void};
use dlpack_helpers::abi::*;
use dlpack_helpers::capi::convert::*;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::flags::*;
use dlpack_helpers::capi::layout::*;
use dlpack_helpers::capi::python::import::*;
use dlpack_helpers::capi::tensor::*;
use dlpack_helpers::capi::validate::*;
use proptest::prelude::*;
use std::cell::Cell;

const INT8: DLDataType = DLDataType {
    code: 0,
    bits: 8,
    lanes: 1,
};
const F32: DLDataType = DLDataType {
    code: 2,
    bits: 32,
    lanes: 1,
};
const CPU: DLDevice = DLDevice {
    device_type: DLDeviceType::kDLCPU,
    device_id: 0,
};

thread_local! {
    /// Legacy deleter calls on this thread. Per thread: the tests of this file run in parallel
    /// and several release tensors with `count_legacy`, so a process-wide count could move
    /// between one test's before and after (a failure without a fault). The library runs a
    /// deleter on the thread that releases the tensor.
    static RELEASED: Cell<usize> = const { Cell::new(0) };
}

unsafe extern "C" fn count_legacy(_: *mut DLManagedTensor) {
    RELEASED.set(RELEASED.get() + 1);
}

fn tensor(
    data: *mut c_void,
    shape: &mut [i64],
    strides: Option<&mut [i64]>,
    dtype: DLDataType,
) -> DLTensor {
    DLTensor {
        data,
        device: CPU,
        ndim: shape.len() as i32,
        dtype,
        shape: if shape.is_empty() {
            core::ptr::null_mut()
        } else {
            shape.as_mut_ptr()
        },
        strides: strides.map_or(core::ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: 0,
    }
}

fn legacy(t: DLTensor) -> DLManagedTensor {
    DLManagedTensor {
        dl_tensor: t,
        manager_ctx: core::ptr::null_mut(),
        deleter: Some(count_legacy),
    }
}

fn message() -> String {
    // SAFETY: never NULL, NUL-terminated.
    unsafe { CStr::from_ptr(dlpack_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn writability(t: *const DLManagedTensorVersioned) -> dlpack_helpers_writability {
    let mut w = -1;
    assert_eq!(
        // SAFETY: every caller passes a live tensor as `t`; `w` is a live local.
        unsafe { dlpack_tensor_writability(t, &mut w) },
        DLPACK_HELPERS_STATUS_OK
    );
    w
}

fn require_writable(t: *const DLManagedTensorVersioned) -> dlpack_helpers_status {
    let o = dlpack_helpers_validate_options {
        struct_size: core::mem::size_of::<dlpack_helpers_validate_options>(),
        flags: DLPACK_HELPERS_VALIDATE_REQUIRE_WRITABLE,
        ..Default::default()
    };
    // SAFETY: every caller passes a live tensor as `t`; `o` is a live local.
    unsafe { dlpack_tensor_validate(t, &o, core::ptr::null_mut()) }
}

/// Peer case 50: a hand-made legacy tensor. Writability answers, REQUIRE_WRITABLE validation
/// and the flags of every wrap agree (read-only/unknown) unless the caller asserts writability;
/// a versioned writable tensor stays writable; READ_ONLY never crosses into legacy silently.
#[test]
fn case_50_legacy_writability_is_never_invented() {
    let mut buf = [0f32; 6];
    let mut shape = [2i64, 3];
    let mut l = legacy(tensor(buf.as_mut_ptr().cast(), &mut shape, None, F32));
    let mut w = -1;
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    assert_eq!(unsafe { dlpack_legacy_tensor_writability(&l, &mut w) }, 0);
    assert_eq!(w, DLPACK_HELPERS_WRITABILITY_UNKNOWN);

    // dlpack_legacy_to_versioned: always READ_ONLY, whatever flags the caller adds.
    for extra in [0, DLPACK_FLAG_BITMASK_IS_COPIED] {
        let mut out = core::ptr::null_mut();
        assert_eq!(
            // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
            // values.
            unsafe { dlpack_legacy_to_versioned(&mut l, extra, &mut out) },
            0,
            "{}",
            message()
        );
        // SAFETY: `out` is the live tensor made above (status OK).
        let flags = unsafe { (*out).flags };
        assert_eq!(flags, extra | DLPACK_FLAG_BITMASK_READ_ONLY);
        assert_eq!(writability(out), DLPACK_HELPERS_WRITABILITY_READ_ONLY);
        assert_eq!(require_writable(out), DLPACK_HELPERS_STATUS_READ_ONLY);
        // Its strides were filled in, exactly.
        // SAFETY: `out` is the live tensor made above (status OK); it carries `ndim` strides.
        let s = unsafe { core::slice::from_raw_parts((*out).dl_tensor.strides, 2) };
        assert_eq!(s, [3, 1]);
        let before = RELEASED.get();
        // SAFETY: `out` is the live tensor made above (status OK), released exactly once, here.
        unsafe { dlpack_tensor_delete(out) };
        assert_eq!(RELEASED.get(), before + 1);
    }
    // dlpack_legacy_tensor_wrap: READ_ONLY without the opt-in, exactly `flags` with it.
    let mut out = core::ptr::null_mut();
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_legacy_tensor_wrap(&mut l, 0, 0, &mut out) },
        0
    );
    // SAFETY: `out` is the live tensor made above (status OK).
    assert_eq!(unsafe { (*out).flags }, DLPACK_FLAG_BITMASK_READ_ONLY);
    // SAFETY: `out` is the live tensor made above (status OK), released exactly once, here.
    unsafe { dlpack_tensor_delete(out) };
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe {
            dlpack_legacy_tensor_wrap(&mut l, 0, DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, &mut out)
        },
        0
    );
    // SAFETY: `out` is the live tensor made above (status OK).
    assert_eq!(unsafe { (*out).flags }, 0);
    assert_eq!(writability(out), DLPACK_HELPERS_WRITABILITY_WRITABLE);
    assert_eq!(require_writable(out), DLPACK_HELPERS_STATUS_OK);

    // Issue 25: a READ_ONLY the wrap assumed goes back to legacy as it came (no opt-in).
    let mut assumed = core::ptr::null_mut();
    let mut back = core::ptr::null_mut();
    let mut dropped = 0u64;
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_legacy_to_versioned(&mut legacy(l.dl_tensor), 0, &mut assumed) },
        0
    );
    assert_eq!(
        // SAFETY: `assumed` is the live tensor made above; out-pointers are live locals.
        unsafe { dlpack_versioned_to_legacy(assumed, 0, &mut dropped, &mut back) },
        0
    );
    // SAFETY: `back` is the live tensor made above (status OK), released exactly once, here.
    unsafe { dlpack_legacy_tensor_delete(back) };
    // The mirror: a stated READ_ONLY → legacy is refused (BufferError) unless dropped explicitly.
    let mut ro = core::ptr::null_mut();
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe {
            dlpack_legacy_to_versioned(
                &mut legacy(l.dl_tensor),
                DLPACK_FLAG_BITMASK_READ_ONLY,
                &mut ro,
            )
        },
        0
    );
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_versioned_to_legacy(ro, 0, &mut dropped, &mut back) },
        DLPACK_HELPERS_STATUS_READ_ONLY
    );
    // SAFETY: dlpack_status_string and dlpack_status_python_exception return a static NUL-
    // terminated string for any code.
    let exc = unsafe {
        CStr::from_ptr(dlpack_status_python_exception(
            DLPACK_HELPERS_STATUS_READ_ONLY,
        ))
    };
    assert_eq!(exc.to_str().unwrap(), "BufferError");
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe {
            dlpack_versioned_to_legacy(
                ro,
                DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY,
                &mut dropped,
                &mut back,
            )
        },
        0
    );
    assert_eq!(
        dropped & DLPACK_FLAG_BITMASK_READ_ONLY,
        DLPACK_FLAG_BITMASK_READ_ONLY
    );
    // SAFETY: `back` is the live tensor made above (status OK), released exactly once, here.
    unsafe { dlpack_legacy_tensor_delete(back) };
    // The writable wrap goes to legacy without any opt-in, and the round trip keeps data.
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_versioned_to_legacy(out, 0, &mut dropped, &mut back) },
        0
    );
    assert_eq!(dropped, 0);
    // SAFETY: `back` is the live tensor made above (status OK).
    assert_eq!(unsafe { (*back).dl_tensor.data }, buf.as_mut_ptr().cast());
    // SAFETY: `back` is the live tensor made above (status OK), released exactly once, here.
    unsafe { dlpack_legacy_tensor_delete(back) };
}

/// Shapes whose implied row-major stride of dimension 0 is exactly `2^63 - 1`, `2^63`, `2^64`.
fn boundary_shapes() -> Vec<(Vec<i64>, bool)> {
    let p62 = 1i64 << 62;
    vec![
        (vec![1, i64::MAX, 1], true), // stride 2^63 - 1
        (vec![0, i64::MAX, 1], true), // the same, empty
        (vec![2, p62, 2], false),     // stride 2^63
        (vec![0, p62, 2], false),     // the same with a zero extent: still not representable
        (vec![0, p62, 4], false),     // stride 2^64 (the peer case's shape)
        (vec![4, p62, 4], false),     // stride 2^64, 2^66 elements
    ]
}

/// Peer case 49: every path that fills strides in answers the exact stride or OVERFLOW.
#[test]
fn case_49_implied_strides_are_exact_or_overflow() {
    for (mut shape, fits) in boundary_shapes() {
        let exact = shape[1] as i128 * shape[2] as i128;
        assert_eq!(exact <= i64::MAX as i128, fits, "{shape:?}");
        // dlpack_compact_strides
        let mut out = [0i64; 3];
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        let s = unsafe { dlpack_compact_strides(3, shape.as_ptr(), false, out.as_mut_ptr()) };
        if fits {
            assert_eq!(s, 0, "{shape:?}: {}", message());
            assert_eq!(out[0] as i128, exact);
        } else {
            assert_eq!(s, DLPACK_HELPERS_STATUS_OVERFLOW, "{shape:?}");
        }
        // dlpack_legacy_to_versioned / dlpack_legacy_tensor_wrap (the path of every consume
        // and import of a legacy capsule).
        let mut byte = 0u8;
        let mut l = legacy(tensor((&raw mut byte).cast(), &mut shape, None, INT8));
        let numel: i128 = shape.iter().map(|&e| e as i128).product();
        let mut v = core::ptr::null_mut();
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        let s = unsafe { dlpack_legacy_to_versioned(&mut l, 0, &mut v) };
        if fits && numel <= i64::MAX as i128 {
            assert_eq!(s, 0, "{shape:?}: {}", message());
            // SAFETY: `v` is the live tensor made above (status OK); it carries `ndim` strides.
            let st = unsafe { core::slice::from_raw_parts((*v).dl_tensor.strides, 3) };
            assert_eq!(st[0] as i128, exact);
            // SAFETY: `v` is the live tensor made above (status OK), released exactly once, here.
            unsafe { dlpack_tensor_delete(v) };
        } else {
            assert_eq!(
                s,
                DLPACK_HELPERS_STATUS_OVERFLOW,
                "{shape:?}: {}",
                message()
            );
            assert!(v.is_null(), "out written on failure");
        }
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        let s2 = unsafe {
            dlpack_legacy_tensor_wrap(&mut l, 0, DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, &mut v)
        };
        assert_eq!(s2, s, "{shape:?}");
        if s2 == 0 {
            // SAFETY: `v` is the live tensor made above (status OK), released exactly once, here.
            unsafe { dlpack_tensor_delete(v) };
        }
        // dlpack_tensor_create with NULL strides
        let mut c = core::ptr::null_mut();
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        let s3 = unsafe {
            dlpack_tensor_create(
                (&raw mut byte).cast(),
                CPU,
                3,
                shape.as_ptr(),
                core::ptr::null(),
                INT8,
                0,
                0,
                None,
                core::ptr::null_mut(),
                &mut c,
            )
        };
        assert_eq!(s3, s, "{shape:?}");
        if s3 == 0 {
            // SAFETY: `c` is the live tensor made above (status OK); it carries `ndim` strides.
            let st = unsafe { core::slice::from_raw_parts((*c).dl_tensor.strides, 3) };
            assert_eq!(st[0] as i128, exact);
            // SAFETY: `c` is the live tensor made above (status OK), released exactly once, here.
            unsafe { dlpack_tensor_delete(c) };
        }
    }
}

/// Exact reference: numel, compact bytes, byte range of a strided view (relative to data), and
/// the storage extent in elements.
fn reference(
    shape: &[i64],
    strides: &[i64],
    bits: i128,
    offset: i128,
) -> (i128, i128, i128, i128, i128) {
    // Exact while within 2^127; saturation happens only far beyond int64_t, where every value
    // is "does not fit" anyway.
    let numel: i128 = shape
        .iter()
        .fold(1i128, |a, &e| a.saturating_mul(e as i128));
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&e, &s) in shape.iter().zip(strides) {
        if e > 1 {
            let r = (e as i128 - 1) * s as i128;
            if r < 0 {
                lo = lo.saturating_add(r);
            } else {
                hi = hi.saturating_add(r);
            }
        }
    }
    let nbytes = numel.saturating_mul(bits).saturating_add(7) / 8;
    if numel == 0 {
        return (0, 0, offset, offset, 0);
    }
    (
        numel,
        nbytes,
        offset.saturating_add(lo.saturating_mul(bits).div_euclid(8)),
        offset.saturating_add(
            hi.saturating_add(1)
                .saturating_mul(bits)
                .saturating_add(7)
                .div_euclid(8),
        ),
        hi.saturating_sub(lo).saturating_add(1),
    )
}

fn extent() -> impl Strategy<Value = i64> {
    prop_oneof![
        0i64..5,
        Just(1i64 << 31),
        Just(1i64 << 32),
        Just(1i64 << 62),
        Just(i64::MAX),
        0i64..i64::MAX
    ]
}

fn stride() -> impl Strategy<Value = i64> {
    prop_oneof![
        -4i64..5,
        Just(1i64 << 31),
        Just(-(1i64 << 32)),
        Just(i64::MAX),
        Just(i64::MIN),
        any::<i64>()
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        ..ProptestConfig::default()
    })]

    /// Every stride/size producer of the API against exact 128-bit arithmetic: compact strides
    /// (`dlpack_compact_strides`, and the strides `dlpack_tensor_create` and
    /// `dlpack_legacy_to_versioned` fill in), the layout (`dlpack_dltensor_layout`: numel,
    /// nbytes, byte range) and the allocation fit (`dlpack_dltensor_fits_allocation`). Each is
    /// the exact value or OVERFLOW, never a clamped or wrapped one.
    #[test]
    fn every_stride_and_size_is_exact_or_overflow(
        shape in proptest::collection::vec(extent(), 0..5),
        strides in proptest::collection::vec(stride(), 5),
        explicit in any::<bool>(),
        bits in prop_oneof![Just(8u8), Just(4u8), Just(64u8)],
        offset in prop_oneof![0u64..64, Just(1u64 << 40)],
        base_delta in -64i64..64,
        size in prop_oneof![0u64..4096, Just(u64::MAX / 2)],
    ) {
        let n = shape.len();
        // Exact compact strides.
        let mut exact_c = vec![0i128; n];
        let mut acc = 1i128;
        for i in (0..n).rev() {
            exact_c[i] = acc;
            // Saturating only far beyond int64_t (2^127): every such value is "does not fit".
            acc = acc.saturating_mul(shape[i].max(1) as i128);
        }
        let c_fits = exact_c.iter().all(|&s| s <= i64::MAX as i128);
        let mut out = vec![0i64; n];
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        let s = unsafe { dlpack_compact_strides(n as i32, shape.as_ptr(), false, out.as_mut_ptr()) };
        if c_fits {
            prop_assert_eq!(s, 0);
            for i in 0..n { prop_assert_eq!(out[i] as i128, exact_c[i]); }
        } else {
            prop_assert_eq!(s, DLPACK_HELPERS_STATUS_OVERFLOW);
        }
        // The layout of the view (explicit strides or NULL).
        let dtype = DLDataType { code: 0, bits, lanes: 1 };
        let mut shape_v = shape.clone();
        let mut strides_v: Vec<i64> = strides[..n].to_vec();
        let used: Vec<i128> = if explicit { strides_v.iter().map(|&s| s as i128).collect() } else { exact_c.clone() };
        let mut t = tensor(0x1000_0000 as *mut c_void, &mut shape_v, if explicit { Some(&mut strides_v) } else { None }, dtype);
        t.byte_offset = offset;
        let mut l = dlpack_helpers_layout::default();
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        let s = unsafe { dlpack_dltensor_layout(&t, 0, &mut l) };
        let numel: i128 = shape.iter().fold(1i128, |a, &e| a.saturating_mul(e as i128));
        let fits64 = |v: i128| v >= i64::MIN as i128 && v <= i64::MAX as i128;
        let representable = used.iter().all(|&s| fits64(s));
        if representable {
            let st: Vec<i64> = used.iter().map(|&s| s as i64).collect();
            let (rn, rb, rlo, rhi, rst) = reference(&shape, &st, bits as i128, offset as i128);
            // The reach products, per dimension, must fit as well (the library's rule).
            let reach_ok = numel == 0 || shape.iter().zip(&st).all(|(&e, &s)| e <= 1 || fits64((e as i128 - 1) * s as i128));
            let all_fit = fits64(numel) && fits64(rb) && fits64(rlo) && fits64(rhi) && fits64(rst) && reach_ok;
            if s == 0 {
                prop_assert!(all_fit || numel == 0, "OK for an unrepresentable layout: {:?} {:?}", shape, st);
                prop_assert_eq!(l.numel as i128, rn);
                prop_assert_eq!(l.nbytes as i128, rb);
                prop_assert_eq!(l.lowest_byte as i128, rlo);
                prop_assert_eq!(l.end_byte as i128, rhi);
                prop_assert_eq!(l.storage_elements as i128, rst);
                // The fit question against an allocation around data.
                let base = (0x1000_0000i64 + base_delta) as usize;
                let mut fits = false;
                // SAFETY: the pointer arguments are NULL or point to live locals; the rest are
                // plain values.
                let f = unsafe { dlpack_dltensor_fits_allocation(&t, 0, base as *const c_void, size, &mut fits) };
                prop_assert_eq!(f, 0);
                let want = rn == 0 || (0x1000_0000i128 + rlo >= base as i128 && 0x1000_0000i128 + rhi <= base as i128 + size as i128);
                prop_assert_eq!(fits, want);
            } else {
                prop_assert_eq!(s, DLPACK_HELPERS_STATUS_OVERFLOW, "{:?} {:?}", shape, st);
                prop_assert!(!all_fit, "OVERFLOW for a representable layout: {:?} {:?}", shape, st);
            }
        } else {
            // NULL strides whose compact form does not fit: the layout may still be computed
            // (it needs no stride of the slowest extent) only when nothing reported overflows.
            prop_assert!(s == 0 || s == DLPACK_HELPERS_STATUS_OVERFLOW);
        }
        // Strides filled in by the wraps: exactly the compact ones, or OVERFLOW.
        if !explicit && n > 0 && bits == 8 {
            let mut l2 = legacy(t);
            l2.dl_tensor.byte_offset = 0;
            let mut v = core::ptr::null_mut();
            // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
            // values.
            let s = unsafe { dlpack_legacy_tensor_wrap(&mut l2, 0, DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, &mut v) };
            if s == 0 {
                prop_assert!(c_fits);
                // SAFETY: `v` is the live tensor made above (status OK); it carries `ndim` strides.
                let st = unsafe { core::slice::from_raw_parts((*v).dl_tensor.strides, n) };
                for i in 0..n { prop_assert_eq!(st[i] as i128, exact_c[i]); }
                // SAFETY: `v` is the live tensor made above (status OK), released exactly once,
                // here.
                unsafe { dlpack_tensor_delete(v) };
            } else if !c_fits {
                prop_assert_eq!(s, DLPACK_HELPERS_STATUS_OVERFLOW);
            }
        }
    }
}

/// Issue 12 item 5: does the view fit in the allocation `[base, base + size)`?
#[test]
fn fits_allocation_counts_negative_strides_offsets_empty_and_0d() {
    let mut buf = [0f32; 12];
    let base = buf.as_mut_ptr();
    let fits = |t: &DLTensor, base: *const c_void, size: u64| -> Result<bool, i32> {
        let mut f = false;
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        match unsafe { dlpack_dltensor_fits_allocation(t, 0, base, size, &mut f) } {
            0 => Ok(f),
            s => Err(s),
        }
    };
    // A reversed 1-d view: data at the last element via byte_offset, stride -1 (the peer
    // fault: the check ignored that negative strides reach below data + byte_offset).
    let mut shape = [12i64];
    let mut strides = [-1i64];
    let mut t = tensor(base.cast(), &mut shape, Some(&mut strides), F32);
    t.byte_offset = 11 * 4;
    assert_eq!(fits(&t, base.cast(), 48), Ok(true));
    assert_eq!(fits(&t, base.cast(), 47), Ok(false));
    // SAFETY: `base` points at a live 12-element buffer: one element in stays inside it.
    assert_eq!(fits(&t, unsafe { base.add(1) }.cast(), 44), Ok(false)); // misses element 0
    t.byte_offset = 10 * 4; // reaches one element below the allocation
    assert_eq!(fits(&t, base.cast(), 48), Ok(false));
    // Empty: touches nothing, fits anything (even size 0, even NULL data).
    let mut empty = [0i64, 3];
    let e = tensor(core::ptr::null_mut(), &mut empty, None, F32);
    assert_eq!(fits(&e, base.cast(), 0), Ok(true));
    // 0-d: one element.
    let z = tensor(base.cast(), &mut [], None, F32);
    assert_eq!(fits(&z, base.cast(), 4), Ok(true));
    assert_eq!(fits(&z, base.cast(), 3), Ok(false));
    // Overflow: the allocation wraps the address space; the byte range does not fit int64.
    assert_eq!(
        fits(&z, usize::MAX as *const c_void, 2),
        Err(DLPACK_HELPERS_STATUS_OVERFLOW)
    );
    let mut huge = [1i64 << 62, 4];
    let h = tensor(base.cast(), &mut huge, None, F32);
    assert_eq!(
        fits(&h, base.cast(), u64::MAX / 2),
        Err(DLPACK_HELPERS_STATUS_OVERFLOW)
    );
    // Opaque handles: only against the same handle.
    let mut o = z;
    o.device.device_type = DLDeviceType(4);
    assert_eq!(fits(&o, base.cast(), 4), Ok(true));
    assert_eq!(
        // SAFETY: `base` points at a live 12-element buffer: one element in stays inside it.
        fits(&o, unsafe { base.add(1) }.cast(), 4),
        Err(DLPACK_HELPERS_STATUS_OPAQUE_HANDLE)
    );
    // NULL arguments.
    let mut f = false;
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_dltensor_fits_allocation(core::ptr::null(), 0, base.cast(), 4, &mut f) },
        DLPACK_HELPERS_STATUS_NULL_POINTER
    );
    assert_eq!(
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_dltensor_fits_allocation(&z, 0, base.cast(), 4, core::ptr::null_mut()) },
        DLPACK_HELPERS_STATUS_NULL_POINTER
    );
}

/// The new status and flags: fixed values, named, mapped.
#[test]
fn python_error_set_status_and_import_flags() {
    assert_eq!(DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET, 71);
    let name =
        // SAFETY: dlpack_status_string and dlpack_status_python_exception return a static NUL-
        // terminated string for any code.
        unsafe { CStr::from_ptr(dlpack_status_string(DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET)) };
    assert_eq!(name.to_str().unwrap(), "PYTHON_ERROR_SET");
    // SAFETY: dlpack_status_string and dlpack_status_python_exception return a static NUL-
    // terminated string for any code.
    let exc = unsafe {
        CStr::from_ptr(dlpack_status_python_exception(
            DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET,
        ))
    };
    assert_eq!(exc.to_str().unwrap(), "RuntimeError");
    assert_eq!(DLPACK_HELPERS_IMPORT_EXCHANGE_API, 0x1);
    assert_eq!(DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR, 0x2);
    assert_eq!(DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, 0x4);
    // Without Python in this process every new Python entry point says so.
    let mut d = DLDevice::default();
    let obj = 8usize as *mut c_void;
    assert_eq!(
        // SAFETY: no Python runs in this process, so the call answers PYTHON_UNAVAILABLE without
        // reading `obj` (a dummy address); the out-pointers are live locals.
        unsafe { dlpack_helpers::capi::python::import::dlpack_object_query_device(obj, 0, &mut d) },
        DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE
    );
    let mut t = core::ptr::null_mut();
    assert_eq!(
        // SAFETY: no Python runs in this process, so the call answers PYTHON_UNAVAILABLE without
        // reading `obj` (a dummy address); the out-pointers are live locals.
        unsafe {
            dlpack_helpers::capi::python::capsule::dlpack_capsule_import(
                obj,
                0,
                &mut t,
                core::ptr::null_mut(),
            )
        },
        DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE
    );
}

/// Shapes with NULL strides and whether their compact row-major strides fit in `int64_t`,
/// with the `shape` element named when they do not (extents of 0 count as 1 in the strides).
fn implied_stride_shapes() -> Vec<(Vec<i64>, Option<usize>)> {
    let p = |k: u32| 1i64 << k;
    vec![
        (vec![0, p(62), 4], Some(0)), // stride[0] = 2^64 (the new-user report)
        (vec![0, p(61), 4], Some(0)), // stride[0] = 2^63: one past INT64_MAX
        (vec![0, i64::MAX, 2], Some(0)), // 2^64 - 2
        (vec![4, 0, p(62), 4], Some(1)), // stride[1] = 2^64 (and stride[0] with it)
        (vec![0, p(60), 4], None),    // stride[0] = 2^62: fits
        (vec![0, p(61) - 1, 4], None), // 2^63 - 4: fits
        (vec![0, i64::MAX, 1], None), // INT64_MAX exactly
        (vec![3, 0, 5], None),        // small empty
        (vec![2, 3, 4], None),        // not empty
        (vec![i64::MAX, 1], None),    // not empty, slowest extent enters no stride
    ]
}

fn lenient() -> dlpack_helpers_validate_options {
    dlpack_helpers_validate_options {
        struct_size: core::mem::size_of::<dlpack_helpers_validate_options>(),
        flags: DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES,
        ..Default::default()
    }
}

/// Peer case 49 for the checks: a validator or layout function that answers OK for NULL
/// strides promises that the compact row-major strides they imply exist. For an empty tensor
/// those can exceed `int64_t` (`{0, 2^62, 4}` int8 implies 2^64): every validator and layout
/// function then answers OVERFLOW naming the `shape` element, as `dlpack_compact_strides` and
/// every path that fills the strides in do; fitting shapes and non-empty tensors still pass.
#[test]
fn case_49_validation_and_layout_refuse_implied_strides_that_do_not_fit() {
    for (mut shape, bad) in implied_stride_shapes() {
        let n = shape.len();
        let label = format!("{shape:?}");
        let mut byte = 0u8;
        let want = if bad.is_some() {
            DLPACK_HELPERS_STATUS_OVERFLOW
        } else {
            DLPACK_HELPERS_STATUS_OK
        };
        let named = |what: &str, s: dlpack_helpers_status| {
            assert_eq!(s, want, "{what} {label}: {}", message());
            if let Some(i) = bad {
                let m = message();
                assert!(m.contains(&format!("shape[{i}]")), "{what} {label}: {m}");
            }
        };
        let mut st = vec![0i64; n];
        // SAFETY: `shape` and `st` hold `n` elements.
        let s = unsafe { dlpack_compact_strides(n as i32, shape.as_ptr(), false, st.as_mut_ptr()) };
        named("dlpack_compact_strides", s);
        let t = tensor((&raw mut byte).cast(), &mut shape, None, INT8);
        let sentinel = dlpack_helpers_layout {
            numel: -7,
            ..Default::default()
        };
        let mut l = sentinel;
        // SAFETY: `t` is a live DLTensor whose shape holds `n` elements; `l` a live local.
        named("dlpack_dltensor_layout", unsafe {
            dlpack_dltensor_layout(&t, 0, &mut l)
        });
        assert!(
            bad.is_none() || l == sentinel,
            "out_layout written on failure"
        );
        let mut fits = false;
        named(
            "dlpack_dltensor_fits_allocation",
            // SAFETY: as above; `base` is only compared.
            unsafe {
                dlpack_dltensor_fits_allocation(&t, 0, (&raw const byte).cast(), 1, &mut fits)
            },
        );
        let o = lenient();
        for (what, version, opts) in [
            (
                "legacy",
                DLPackVersion { major: 0, minor: 0 },
                core::ptr::null(),
            ),
            (
                "1.0",
                DLPackVersion { major: 1, minor: 0 },
                core::ptr::null(),
            ),
            (
                "1.1",
                DLPackVersion { major: 1, minor: 1 },
                core::ptr::null(),
            ),
            (
                "1.3 lenient",
                DLPackVersion { major: 1, minor: 3 },
                &raw const o,
            ),
        ] {
            let mut l = sentinel;
            named(
                &format!("dlpack_dltensor_validate {what}"),
                // SAFETY: as above; `opts` is NULL or a live local.
                unsafe { dlpack_dltensor_validate(&t, version, 0, opts, &mut l) },
            );
            assert!(
                bad.is_none() || l == sentinel,
                "out_layout written on failure"
            );
            if version.major == 0 {
                let m = legacy(t);
                named(
                    "dlpack_legacy_tensor_validate",
                    // SAFETY: `m` is a live legacy tensor.
                    unsafe { dlpack_legacy_tensor_validate(&m, opts, core::ptr::null_mut()) },
                );
                continue;
            }
            let mut v = DLManagedTensorVersioned {
                version,
                manager_ctx: core::ptr::null_mut(),
                deleter: None,
                flags: 0,
                dl_tensor: t,
            };
            named(
                &format!("dlpack_tensor_validate {what}"),
                // SAFETY: `v` is a live versioned tensor; `opts` NULL or a live local.
                unsafe { dlpack_tensor_validate(&v, opts, core::ptr::null_mut()) },
            );
            let mut l = sentinel;
            named(
                &format!("dlpack_tensor_layout {what}"),
                // SAFETY: as above.
                unsafe { dlpack_tensor_layout(&v, &mut l) },
            );
            // The conversions that fill the strides in agreed already; they still do.
            let mut back = core::ptr::null_mut();
            // SAFETY: `v` is live, owned here (NULL deleter); on OK the wrapper owns it.
            let s =
                unsafe { dlpack_versioned_to_legacy(&mut v, 0, core::ptr::null_mut(), &mut back) };
            named(&format!("dlpack_versioned_to_legacy {what}"), s);
            if s == DLPACK_HELPERS_STATUS_OK {
                // SAFETY: `back` is the live wrapper made above, released once, here.
                unsafe { dlpack_legacy_tensor_delete(back) };
            }
        }
        // Without the lenient option a 1.3 tensor with NULL strides is NULL_STRIDES first.
        let v = DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 3 },
            manager_ctx: core::ptr::null_mut(),
            deleter: None,
            flags: 0,
            dl_tensor: t,
        };
        assert_eq!(
            // SAFETY: `v` is a live versioned tensor.
            unsafe { dlpack_tensor_validate(&v, core::ptr::null(), core::ptr::null_mut()) },
            DLPACK_HELPERS_STATUS_NULL_STRIDES
        );
        // The same shapes with explicit strides are not this rule's business: an empty tensor
        // with any representable strides stays valid.
        if shape.contains(&0) {
            let mut strides = vec![1i64; n];
            let t = tensor((&raw mut byte).cast(), &mut shape, Some(&mut strides), INT8);
            let mut l = dlpack_helpers_layout::default();
            // SAFETY: as above.
            let s = unsafe { dlpack_dltensor_layout(&t, 0, &mut l) };
            assert_eq!(s, DLPACK_HELPERS_STATUS_OK, "{shape:?}: {}", message());
            assert_ne!(l.properties & DLPACK_HELPERS_LAYOUT_EMPTY, 0);
        }
    }
}

/// Spec ABI-STRUCT-1: an options `struct_size` that ends inside a field leaves that field at
/// its default; only whole fields are read. A size of 9 to 11 applied part of `flags` before
/// (a REQUIRE_C_CONTIGUOUS bit in its first byte refused a Fortran-ordered tensor).
#[test]
fn options_struct_size_reads_only_whole_fields() {
    let mut buf = [0f32; 6];
    let mut shape = [2i64, 3];
    let mut strides = [1i64, 2]; // column-major: not C-contiguous
    let dl = tensor(buf.as_mut_ptr().cast(), &mut shape, Some(&mut strides), F32);
    let mut o = dlpack_helpers_validate_options {
        struct_size: core::mem::size_of::<dlpack_helpers_validate_options>(),
        flags: DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS,
        ..Default::default()
    };
    let v = DLPackVersion { major: 1, minor: 3 };
    let validate = |o: &dlpack_helpers_validate_options| {
        // SAFETY: a live tensor and options struct.
        unsafe { dlpack_dltensor_validate(&dl, v, 0, o, core::ptr::null_mut()) }
    };
    assert_eq!(validate(&o), DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS);
    for size in 8..12 {
        o.struct_size = size;
        assert_eq!(validate(&o), DLPACK_HELPERS_STATUS_OK, "struct_size {size}");
    }
    o.struct_size = 12;
    assert_eq!(validate(&o), DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS);
}
