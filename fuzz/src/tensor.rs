//! Validation, layout and names (their exports): any tensor description (up to 6
//! dimensions, any extents, strides, dtype, version, flags, options; `data` never dereferenced)
//! gets a documented status and never a panic; a valid tensor has a layout; dtype and device
//! names round-trip through format and parse, and parsing arbitrary bytes never panics.

use crate::{Input, Out, check_status};
use dlpack_helpers::abi::{DLDataType, DLDevice, DLManagedTensorVersioned, DLTensor};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::layout::*;
use dlpack_helpers::capi::names::*;
use dlpack_helpers::capi::validate::*;
use std::ffi::{CString, c_char, c_void};

const VALIDATION: &[dlpack_helpers_status] = &[
    DLPACK_HELPERS_STATUS_INVALID_ARGUMENT,
    DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION,
    DLPACK_HELPERS_STATUS_INVALID_NDIM,
    DLPACK_HELPERS_STATUS_NULL_SHAPE,
    DLPACK_HELPERS_STATUS_NULL_STRIDES,
    DLPACK_HELPERS_STATUS_INVALID_SHAPE,
    DLPACK_HELPERS_STATUS_OVERFLOW,
    DLPACK_HELPERS_STATUS_NULL_DATA,
    DLPACK_HELPERS_STATUS_INVALID_DTYPE,
    DLPACK_HELPERS_STATUS_DTYPE_MISMATCH,
    DLPACK_HELPERS_STATUS_INVALID_FLAGS,
    DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS,
    DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE,
    DLPACK_HELPERS_STATUS_MISALIGNED,
    DLPACK_HELPERS_STATUS_READ_ONLY,
    DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES,
    DLPACK_HELPERS_STATUS_COPIED_REJECTED,
    DLPACK_HELPERS_STATUS_INVALID_DEVICE,
];

/// The producer helper `dlpack_tensor_create` and `dlpack_device_check` on the same
/// description (issue 22, peer cases 54 and 55): a negative device id is always refused, an
/// unassigned device type unless the caller opts in, and the opt-in bit is never stored.
fn producer_paths(t: &DLTensor, flags: u64, allow: bool) {
    use dlpack_helpers::capi::convert::*;
    use dlpack_helpers::capi::device::*;
    use dlpack_helpers::capi::tensor::dlpack_tensor_delete;
    if t.ndim > 6 {
        return;
    }
    let d = t.device;
    let assigned = matches!(d.device_type.0, 1..=4 | 7..=18);
    let c = dlpack_device_check(d, 0);
    let ca = dlpack_device_check(d, DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE);
    check_status(
        "dlpack_device_check",
        c,
        &[DLPACK_HELPERS_STATUS_INVALID_DEVICE],
    );
    check_status(
        "dlpack_device_check",
        ca,
        &[DLPACK_HELPERS_STATUS_INVALID_DEVICE],
    );
    assert_eq!(c == DLPACK_HELPERS_STATUS_OK, d.device_id >= 0 && assigned);
    assert_eq!(ca == DLPACK_HELPERS_STATUS_OK, d.device_id >= 0);
    let req = if allow {
        flags | DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE
    } else {
        flags
    };
    let mut out = Out::<*mut DLManagedTensorVersioned>::new();
    // SAFETY: non-NULL arrays hold at least `ndim` (<= 6) elements (the caller's arrays).
    let s = unsafe {
        dlpack_tensor_create(
            t.data,
            d,
            t.ndim,
            t.shape,
            t.strides,
            t.dtype,
            t.byte_offset,
            req,
            None,
            std::ptr::null_mut(),
            out.ptr(),
        )
    };
    let mut documented = VALIDATION.to_vec();
    documented.extend([
        DLPACK_HELPERS_STATUS_NULL_POINTER,
        DLPACK_HELPERS_STATUS_OUT_OF_MEMORY,
    ]);
    check_status("dlpack_tensor_create", s, &documented);
    // The random flags may carry the request bit themselves.
    let opted_in = req & DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE != 0;
    if d.device_id < 0 || (!assigned && !opted_in) {
        assert_ne!(
            s, DLPACK_HELPERS_STATUS_OK,
            "created on {d:?} (opt-in {opted_in})"
        );
    }
    if s == DLPACK_HELPERS_STATUS_OK {
        let p = out.get();
        // SAFETY: a tensor the library just made.
        unsafe {
            assert_eq!(
                (*p).flags & DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE,
                0,
                "the opt-in bit was stored"
            );
            dlpack_tensor_delete(p);
        }
    } else {
        assert!(out.untouched(), "out_tensor written on failure");
    }
}

fn dtype(input: &mut Input) -> DLDataType {
    let sel = input.u8();
    if sel < 200 {
        const BITS: [u8; 8] = [1, 4, 6, 8, 16, 32, 64, 128];
        DLDataType {
            code: sel % 18,
            bits: BITS[(sel / 18 % 8) as usize],
            lanes: if sel & 0x80 != 0 { 4 } else { 1 },
        }
    } else {
        DLDataType {
            code: input.u8(),
            bits: input.u8(),
            lanes: u16::from_le_bytes(input.bytes()),
        }
    }
}

fn extent(input: &mut Input) -> i64 {
    let sel = input.u8();
    match sel {
        0..=199 => (sel % 6) as i64,
        200..=219 => -1,
        _ => input.i64(),
    }
}

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    // A tensor description.
    let ndim_sel = input.u8();
    let ndim = if ndim_sel < 240 {
        (ndim_sel % 7) as i32
    } else {
        input.i32()
    };
    let n = ndim.clamp(0, 6) as usize;
    let mut shape = [0i64; 6];
    let mut strides = [0i64; 6];
    for i in 0..n {
        shape[i] = extent(&mut input);
        strides[i] = input.small_i64();
    }
    let null_shape = input.u8() < 16;
    let null_strides = input.u8() < 64;
    let t = DLTensor {
        data: if input.u8() < 32 {
            std::ptr::null_mut()
        } else {
            (input.u64() & !0xF | 0x1000) as *mut c_void
        },
        device: input.device(),
        ndim,
        dtype: dtype(&mut input),
        shape: if null_shape {
            std::ptr::null_mut()
        } else {
            shape.as_mut_ptr()
        },
        strides: if null_strides {
            std::ptr::null_mut()
        } else {
            strides.as_mut_ptr()
        },
        byte_offset: if input.u8() < 200 {
            (input.u8() as u64) * 4
        } else {
            input.u64()
        },
    };
    // `ndim` above 6 with non-NULL arrays would make the library read past them (a caller
    // contract no one can check): only out-of-range values it must refuse before reading.
    if ndim > 6 && ndim <= 1024 && !(null_shape && null_strides) {
        return;
    }
    let mt = DLManagedTensorVersioned {
        version: input.version(),
        manager_ctx: std::ptr::null_mut(),
        deleter: None,
        flags: input.u64() & if input.bool() { 0x7 } else { u64::MAX },
        dl_tensor: t,
    };
    let options = dlpack_helpers_validate_options {
        struct_size: if input.u8() < 240 {
            size_of::<dlpack_helpers_validate_options>()
        } else {
            input.u8() as usize
        },
        flags: input.flags()
            | if input.bool() { 0 } else { input.u32() & 0x3ff }
            | if input.u8() < 64 {
                DLPACK_HELPERS_VALIDATE_REJECT_COPIED
            } else {
                0
            },
        max_ndim: (input.u8() % 8) as i32 - 1,
        data_alignment: 1u64 << (input.u8() % 10),
        first_element_alignment: if input.bool() {
            0
        } else {
            1u64 << (input.u8() % 10)
        },
        dtype: dtype(&mut input),
    };
    let opts: *const dlpack_helpers_validate_options = if input.bool() {
        &options
    } else {
        std::ptr::null()
    };
    let mut layout = Out::<dlpack_helpers_layout>::new();
    // SAFETY: non-NULL arrays hold at least `ndim` elements (checked above).
    let s = unsafe { dlpack_tensor_validate(&mt, opts, layout.ptr()) };
    check_status("dlpack_tensor_validate", s, VALIDATION);
    // REJECT_COPIED never passes a versioned tensor flagged IS_COPIED (peer case 52), when the
    // options struct's `struct_size` covers its `flags` field (a shorter struct's flags are not
    // read: the extensible-struct rule; found by this target).
    let flags_read = options.struct_size
        >= core::mem::offset_of!(dlpack_helpers_validate_options, flags) + size_of::<u32>();
    if s == DLPACK_HELPERS_STATUS_OK && !opts.is_null() && flags_read {
        assert!(
            options.flags & DLPACK_HELPERS_VALIDATE_REJECT_COPIED == 0
                || mt.flags & dlpack_helpers::abi::DLPACK_FLAG_BITMASK_IS_COPIED == 0,
            "REJECT_COPIED passed an IS_COPIED tensor: struct_size {}, version {:?}, flags {:#x}, options {:#x}",
            options.struct_size,
            mt.version,
            mt.flags,
            options.flags
        );
    }
    // Issue 22 (peer case 54): a tensor with a negative device id never validates.
    if mt.dl_tensor.device.device_id < 0 {
        assert_ne!(
            s, DLPACK_HELPERS_STATUS_OK,
            "a negative device id validated"
        );
    }
    producer_paths(&mt.dl_tensor, mt.flags, input.bool());
    if s == DLPACK_HELPERS_STATUS_OK {
        let mut l2 = Out::<dlpack_helpers_layout>::new();
        // SAFETY: as above.
        let s2 = unsafe { dlpack_tensor_layout(&mt, l2.ptr()) };
        assert_eq!(s2, DLPACK_HELPERS_STATUS_OK, "a valid tensor has no layout");
    } else {
        assert!(layout.untouched(), "out_layout written on failure");
    }
    let mut layout = Out::<dlpack_helpers_layout>::new();
    // SAFETY: as above.
    let s = unsafe { dlpack_dltensor_layout(&mt.dl_tensor, mt.flags, layout.ptr()) };
    check_status("dlpack_dltensor_layout", s, VALIDATION);
    // Peer case 49: a layout computed from NULL strides promises that the compact row-major
    // strides they imply exist (empty tensors included), so filling them in cannot fail.
    if s == DLPACK_HELPERS_STATUS_OK && null_strides && (1..=6).contains(&ndim) {
        let mut implied = [0i64; 6];
        // SAFETY: `shape` holds 6 elements, `implied` room for 6; ndim is at most 6.
        let c = unsafe {
            dlpack_compact_strides(ndim, mt.dl_tensor.shape, false, implied.as_mut_ptr())
        };
        assert_eq!(
            c, DLPACK_HELPERS_STATUS_OK,
            "dlpack_dltensor_layout accepted NULL strides whose implied strides do not fit"
        );
    }
    // The allocation-fit question (issue 12): a status or an answer, never a wrapped range; an
    // OK answer agrees with the layout's byte range, recomputed exactly in 128 bits.
    let layout_status = s;
    let base = input.u64() as usize;
    let size = input.u64() >> (input.u8() % 64);
    let mut fits = Out::<bool>::new();
    // SAFETY: as above.
    let s = unsafe {
        dlpack_dltensor_fits_allocation(
            &mt.dl_tensor,
            mt.flags,
            base as *const c_void,
            size,
            fits.ptr(),
        )
    };
    check_status(
        "dlpack_dltensor_fits_allocation",
        s,
        &[VALIDATION, &[DLPACK_HELPERS_STATUS_OPAQUE_HANDLE]].concat(),
    );
    if s == DLPACK_HELPERS_STATUS_OK {
        assert_eq!(
            layout_status, DLPACK_HELPERS_STATUS_OK,
            "fits answered for a tensor without a layout"
        );
        let (l, f) = (layout.get(), fits.get());
        let origin = mt.dl_tensor.data as usize as i128;
        let want = l.numel == 0
            || (origin + l.lowest_byte as i128 >= base as i128
                && origin + l.end_byte as i128 <= base as i128 + size as i128);
        if dlpack_device_is_pointer_addressed(mt.dl_tensor.device) {
            assert_eq!(
                f, want,
                "fits_allocation disagrees with the layout's byte range"
            );
        }
    } else {
        assert!(fits.untouched(), "out_fits written on failure");
    }
    let mut addr = Out::<*mut c_void>::new();
    // SAFETY: reads only data, device and byte_offset.
    let s = unsafe { dlpack_dltensor_data_address(&mt.dl_tensor, addr.ptr()) };
    check_status(
        "dlpack_dltensor_data_address",
        s,
        &[
            DLPACK_HELPERS_STATUS_OPAQUE_HANDLE,
            DLPACK_HELPERS_STATUS_OVERFLOW,
        ],
    );

    // Names: format -> parse round trip, and parse of arbitrary bytes.
    let d = dtype(&mut input);
    let mut buf = [0 as c_char; 64];
    let mut len = 0usize;
    // SAFETY: a 64-byte buffer.
    let s = unsafe { dlpack_dtype_format(d, buf.as_mut_ptr(), buf.len(), &mut len) };
    check_status(
        "dlpack_dtype_format",
        s,
        &[DLPACK_HELPERS_STATUS_INVALID_DTYPE],
    );
    if s == DLPACK_HELPERS_STATUS_OK {
        let mut back = Out::<DLDataType>::new();
        // SAFETY: NUL-terminated by format.
        let p = unsafe { dlpack_dtype_parse(buf.as_ptr(), back.ptr()) };
        assert_eq!(
            p, DLPACK_HELPERS_STATUS_OK,
            "a formatted dtype name does not parse"
        );
        let b = back.get();
        assert_eq!(
            (b.code, b.bits, b.lanes),
            (d.code, d.bits, d.lanes),
            "dtype name round trip"
        );
    }
    let dev = input.device();
    // SAFETY: as above.
    let s = unsafe { dlpack_device_format(dev, buf.as_mut_ptr(), buf.len(), &mut len) };
    check_status(
        "dlpack_device_format",
        s,
        &[
            DLPACK_HELPERS_STATUS_UNKNOWN_NAME,
            DLPACK_HELPERS_STATUS_INVALID_DEVICE,
        ],
    );
    // Issue 22: a negative id is INVALID_DEVICE (checked before the type), and only that.
    assert_eq!(
        s == DLPACK_HELPERS_STATUS_INVALID_DEVICE,
        dev.device_id < 0,
        "device_format({dev:?}) = {s}"
    );
    if s == DLPACK_HELPERS_STATUS_OK {
        let mut back = Out::<DLDevice>::new();
        // SAFETY: NUL-terminated by format.
        let p = unsafe { dlpack_device_parse(buf.as_ptr(), back.ptr()) };
        assert_eq!(
            p, DLPACK_HELPERS_STATUS_OK,
            "a formatted device name does not parse"
        );
        assert_eq!(back.get(), dev, "device name round trip");
    }
    let rest: Vec<u8> = input
        .bytes::<24>()
        .into_iter()
        .filter(|&b| b != 0)
        .collect();
    let name = CString::new(rest).expect("no NUL");
    let mut dt = Out::<DLDataType>::new();
    // SAFETY: NUL-terminated.
    let s = unsafe { dlpack_dtype_parse(name.as_ptr(), dt.ptr()) };
    check_status(
        "dlpack_dtype_parse",
        s,
        &[DLPACK_HELPERS_STATUS_UNKNOWN_NAME],
    );
    let mut dv = Out::<DLDevice>::new();
    // SAFETY: NUL-terminated.
    let s = unsafe { dlpack_device_parse(name.as_ptr(), dv.ptr()) };
    check_status(
        "dlpack_device_parse",
        s,
        &[DLPACK_HELPERS_STATUS_UNKNOWN_NAME],
    );
}
