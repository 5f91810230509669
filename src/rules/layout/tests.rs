//! Layout tests: the peer cases, then property tests against a brute-force reference that
//! enumerates every element's offset.

use super::*;
use crate::abi::DLDataType;
use proptest::prelude::*;

const F32: DLDataType = DLDataType {
    code: 2,
    bits: 32,
    lanes: 1,
};
const F16: DLDataType = DLDataType {
    code: 2,
    bits: 16,
    lanes: 1,
};
const I32: DLDataType = DLDataType {
    code: 0,
    bits: 32,
    lanes: 1,
};
const CPU: DLDevice = DLDevice {
    device_type: DLDeviceType::kDLCPU,
    device_id: 0,
};

fn view<'a>(shape: &'a [i64], strides: Option<&'a [i64]>, dtype: DLDataType) -> TensorView<'a> {
    TensorView {
        data: 0x1000,
        device: CPU,
        dtype,
        shape,
        strides,
        byte_offset: 0,
    }
}

fn lay(shape: &[i64], strides: Option<&[i64]>) -> Layout {
    layout(&view(shape, strides, F32), false).unwrap()
}

#[test]
fn case_29_null_strides_mean_compact_row_major() {
    let l = lay(&[3, 4], None);
    assert_eq!(
        (l.numel, l.nbytes, l.lowest_byte, l.end_byte),
        (12, 48, 0, 48)
    );
    assert!(
        l.has(C_CONTIGUOUS) && l.has(COMPACT) && l.has(STRIDES_IMPLIED) && !l.has(F_CONTIGUOUS)
    );
    let mut s = [0i64; 2];
    compact_strides(&[3, 4], true, &mut s).unwrap();
    assert_eq!(s, [4, 1]);
    compact_strides(&[3, 4], false, &mut s).unwrap();
    assert_eq!(s, [1, 3]);
    // Only the strides must fit: the slowest extent enters none.
    let mut s3 = [0i64; 3];
    compact_strides(&[i64::MAX, 2, 3], true, &mut s3).unwrap();
    assert_eq!(s3, [6, 3, 1]);
    compact_strides(&[3, 2, i64::MAX], false, &mut s3).unwrap();
    assert_eq!(s3, [1, 3, 6]);
    let e = compact_strides(&[3, 2, i64::MAX], true, &mut s3).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Tensor {
                fault: Fault::Overflow,
                ..
            }
        ),
        "{e}"
    );
    let m = e.to_string();
    assert!(m.contains("shape[0]") && !m.contains("tensor"), "{m}");
    let e = compact_strides(&[i64::MAX, 2, 3], false, &mut s3).unwrap_err();
    assert!(e.to_string().contains("shape[2]"), "{e}");
    let e = compact_strides(&[2, -1, 3], true, &mut s3).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Tensor {
                fault: Fault::InvalidShape,
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("shape[1]") && !e.to_string().contains("tensor"),
        "{e}"
    );
    // ndim 0: one element.
    let l0 = lay(&[], None);
    assert_eq!((l0.numel, l0.nbytes), (1, 4));
    assert!(l0.has(C_CONTIGUOUS) && l0.has(F_CONTIGUOUS) && !l0.has(STRIDES_IMPLIED));
}

#[test]
fn case_30_size_one_dims_with_normalised_stride_are_contiguous() {
    assert!(lay(&[1, 77], Some(&[1, 1])).has(C_CONTIGUOUS));
    assert!(lay(&[1, 1, 768, 768], Some(&[1, 1, 768, 1])).has(C_CONTIGUOUS));
    let l = lay(&[2, 77], Some(&[1, 1]));
    assert!(!l.has(C_CONTIGUOUS) && !l.has(F_CONTIGUOUS) && !l.has(COMPACT));
}

#[test]
fn case_32_stride_zero_on_size_one_dims_is_ignored() {
    let l = lay(&[1], Some(&[0]));
    assert!(l.has(C_CONTIGUOUS) && l.has(F_CONTIGUOUS) && !l.has(BROADCAST));
    assert_eq!(l.storage_elements, 1);
    let l = lay(&[1, 3, 1, 4, 1], Some(&[0, 4, 0, 1, 0]));
    assert!(l.has(C_CONTIGUOUS) && !l.has(F_CONTIGUOUS) && !l.has(BROADCAST));
}

#[test]
fn case_33_empty_tensors_are_contiguous_whatever_their_strides() {
    for s in [[0i64, 0, 0, 0], [4096, 512, 128, 1], [1, 1, 1, 1]] {
        let l = lay(&[1, 8, 0, 128], Some(&s));
        assert!(l.has(C_CONTIGUOUS) && l.has(F_CONTIGUOUS) && l.has(COMPACT) && l.has(EMPTY));
        assert_eq!((l.numel, l.nbytes, l.end_byte - l.lowest_byte), (0, 0, 0));
    }
    assert!(lay(&[0], Some(&[0])).has(C_CONTIGUOUS));
}

#[test]
fn case_36_non_unit_and_zero_strides_are_honoured() {
    let l = lay(&[5], Some(&[2]));
    assert!(!l.has(C_CONTIGUOUS) && !l.has(COMPACT));
    assert_eq!((l.storage_elements, l.end_byte), (9, 36));
    let l = lay(&[10], Some(&[0]));
    assert!(!l.has(C_CONTIGUOUS) && !l.has(F_CONTIGUOUS) && l.has(BROADCAST));
    assert_eq!((l.numel, l.storage_elements, l.end_byte), (10, 1, 4));
    let l = lay(&[2, 4], Some(&[2, 3]));
    assert!(!l.has(C_CONTIGUOUS) && !l.has(F_CONTIGUOUS));
}

#[test]
fn negative_strides_reach_below_the_first_element() {
    // a[::-1] of 5 float32: data points at the last element of the buffer.
    let mut v = view(&[5], Some(&[-1]), F32);
    v.byte_offset = 16;
    let l = layout(&v, false).unwrap();
    assert!(l.has(NEGATIVE_STRIDES) && !l.has(C_CONTIGUOUS) && !l.has(COMPACT));
    assert_eq!((l.lowest_byte, l.end_byte), (0, 20));
}

#[test]
fn compact_in_some_order() {
    // A transposed 3x4 C array: F-contiguous; a 2x3x4 with permuted axes: compact only.
    let l = lay(&[4, 3], Some(&[1, 4]));
    assert!(l.has(F_CONTIGUOUS) && !l.has(C_CONTIGUOUS) && l.has(COMPACT));
    let l = lay(&[3, 2, 4], Some(&[4, 12, 1]));
    assert!(!l.has(F_CONTIGUOUS) && !l.has(C_CONTIGUOUS) && l.has(COMPACT));
}

#[test]
fn sub_byte_packed_and_padded_byte_extents() {
    let fp4 = DLDataType {
        code: 17,
        bits: 4,
        lanes: 1,
    };
    let l = layout(&view(&[3], None, fp4), false).unwrap();
    assert_eq!((l.nbytes, l.end_byte, l.element_bits), (2, 2, 4));
    assert!(l.has(PACKED_SUB_BYTE));
    let l = layout(&view(&[3], None, fp4), true).unwrap();
    assert_eq!((l.nbytes, l.end_byte, l.element_bits), (3, 3, 8));
    let fp6 = DLDataType {
        code: 15,
        bits: 6,
        lanes: 1,
    };
    assert_eq!(layout(&view(&[4], None, fp6), false).unwrap().nbytes, 3);
    // Vectors: float32x4 is 16 bytes per element.
    let v4 = DLDataType {
        code: 2,
        bits: 32,
        lanes: 4,
    };
    assert_eq!(layout(&view(&[2, 3], None, v4), false).unwrap().nbytes, 96);
}

#[test]
fn case_38_39_byte_offset_is_honoured_for_pointers_and_kept_apart_for_handles() {
    let base = 0x10_0000usize;
    assert_eq!(
        data_location(base, 32, DLDeviceType::kDLCPU).unwrap(),
        (base + 32, 0)
    );
    assert_eq!(
        first_element_address(base, 20, DLDeviceType::kDLCUDA).unwrap(),
        base + 20
    );
    for t in [4, 7, 8, 999] {
        assert_eq!(
            data_location(base, 20, DLDeviceType(t)).unwrap(),
            (base, 20)
        );
        let e = first_element_address(base, 20, DLDeviceType(t)).unwrap_err();
        assert!(matches!(
            e,
            Error::Tensor {
                fault: Fault::OpaqueHandle,
                ..
            }
        ));
    }
    assert!(data_location(usize::MAX - 3, 8, DLDeviceType::kDLCPU).is_err());
}

#[test]
fn case_40_42_alignment_is_reported() {
    let base = 0x4000usize; // 256-aligned
    assert_eq!(first_element_alignment(base, 8, DLDeviceType::kDLCPU), 8);
    assert_eq!(first_element_alignment(base, 3, DLDeviceType::kDLCPU), 1);
    assert_eq!(
        first_element_alignment(base + 4, 0, DLDeviceType::kDLCUDA),
        4
    );
    // Opaque handles: the alignment of byte_offset only.
    assert_eq!(
        first_element_alignment(base + 1, 64, DLDeviceType::kDLOpenCL),
        64
    );
    assert_eq!(first_element_alignment(0, 0, DLDeviceType::kDLCPU), 0);
    let _ = F16;
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    assert!(matches!(
        numel(&[2, -1]),
        Err(Error::Tensor {
            fault: Fault::InvalidShape,
            ..
        })
    ));
    assert!(matches!(
        numel(&[i64::MAX, 2]),
        Err(Error::Tensor {
            fault: Fault::Overflow,
            ..
        })
    ));
    assert_eq!(numel(&[i64::MAX, 0, i64::MAX]).unwrap(), 0);
    assert!(layout(&view(&[i64::MAX / 2], None, F32), false).is_err());
    assert!(layout(&view(&[3, 3], Some(&[i64::MAX, i64::MIN]), I32), false).is_err());
    let mut v = view(&[1], None, F32);
    v.byte_offset = u64::MAX;
    assert!(layout(&v, false).is_err());
    assert!(check_ndim(-1, 0).is_err() && check_ndim(MAX_NDIM + 1, 0).is_err());
    assert!(check_ndim(5, 4).is_err() && check_ndim(4, 4).is_ok());
}

/// Brute force: the element offset of every index, enumerated in C order.
fn offsets(shape: &[i64], strides: &[i64], c_order: bool) -> Vec<i64> {
    let n: i64 = shape.iter().product();
    let mut out = Vec::new();
    for mut k in 0..n {
        let mut off = 0;
        let dims: Vec<usize> = if c_order {
            (0..shape.len()).rev().collect()
        } else {
            (0..shape.len()).collect()
        };
        for d in dims {
            off += (k % shape[d]) * strides[d];
            k /= shape[d];
        }
        out.push(off);
    }
    out
}

fn small_tensor() -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
    (0usize..5).prop_flat_map(|nd| {
        (
            proptest::collection::vec(0i64..4, nd),
            proptest::collection::vec(-13i64..14, nd),
        )
    })
}

/// Strides that are a compact layout in a random permutation, to reach the positive cases.
fn permuted_compact() -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
    proptest::collection::vec(1i64..4, 0..5)
        .prop_flat_map(|shape| {
            let n = shape.len();
            (Just(shape), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
        })
        .prop_map(|(shape, perm)| {
            let mut strides = vec![0; shape.len()];
            let mut acc = 1;
            for &d in &perm {
                strides[d] = acc;
                acc *= shape[d];
            }
            (shape, strides)
        })
}

fn check_against_brute_force(shape: &[i64], strides: &[i64]) {
    let l = lay(shape, Some(strides));
    // The validator's fast path agrees on everything but the bits it skips.
    let p = layout_partial(&view(shape, Some(strides), F32), false, false).unwrap();
    let skipped = F_CONTIGUOUS | COMPACT;
    assert_eq!(p.properties & !skipped, l.properties & !skipped);
    assert_eq!(p.properties & C_CONTIGUOUS != 0, l.has(C_CONTIGUOUS));
    assert_eq!(
        (p.numel, p.lowest_byte, p.end_byte, p.storage_elements),
        (l.numel, l.lowest_byte, l.end_byte, l.storage_elements)
    );
    let n: i64 = shape.iter().product();
    assert_eq!(l.numel, n);
    assert_eq!(l.nbytes, 4 * n);
    assert_eq!(l.has(EMPTY), n == 0);
    if n == 0 {
        assert!(l.has(C_CONTIGUOUS) && l.has(F_CONTIGUOUS) && l.has(COMPACT));
        assert_eq!(l.end_byte - l.lowest_byte, 0);
        return;
    }
    let c = offsets(shape, strides, true);
    let f = offsets(shape, strides, false);
    let iota: Vec<i64> = (0..n).collect();
    assert_eq!(l.has(C_CONTIGUOUS), c == iota, "C {shape:?} {strides:?}");
    assert_eq!(l.has(F_CONTIGUOUS), f == iota, "F {shape:?} {strides:?}");
    let mut sorted = c.clone();
    sorted.sort();
    assert_eq!(
        l.has(COMPACT),
        sorted == iota,
        "compact {shape:?} {strides:?}"
    );
    let (lo, hi) = (*sorted.first().unwrap(), *sorted.last().unwrap());
    assert_eq!((l.lowest_byte, l.end_byte), (4 * lo, 4 * (hi + 1)));
    assert_eq!(l.storage_elements, hi - lo + 1);
    // NULL strides give the same answers as explicit compact row-major strides.
    let mut cs = vec![0; shape.len()];
    compact_strides(shape, true, &mut cs).unwrap();
    let implied = lay(shape, None);
    let explicit = lay(shape, Some(&cs));
    assert_eq!(implied.properties & !STRIDES_IMPLIED, explicit.properties);
    assert_eq!(
        (implied.lowest_byte, implied.end_byte),
        (explicit.lowest_byte, explicit.end_byte)
    );
}

proptest! {
    #[test]
    fn layout_matches_brute_force((shape, strides) in small_tensor()) {
        check_against_brute_force(&shape, &strides);
    }

    #[test]
    fn permuted_compact_layouts_are_compact((shape, strides) in permuted_compact()) {
        check_against_brute_force(&shape, &strides);
        prop_assert!(lay(&shape, Some(&strides)).has(COMPACT));
    }

    /// Arbitrary 64-bit garbage in every integer field: an answer or an error, never a panic.
    #[test]
    fn garbage_never_panics(
        shape in proptest::collection::vec(any::<i64>(), 0..6),
        strides in proptest::collection::vec(any::<i64>(), 6),
        code in any::<u8>(), bits in any::<u8>(), lanes in any::<u16>(),
        byte_offset in any::<u64>(), data in any::<usize>(), padded in any::<bool>(),
        device_type in any::<i32>(),
    ) {
        let strides = &strides[..shape.len()];
        let dtype = DLDataType { code, bits, lanes };
        for s in [None, Some(strides)] {
            let v = TensorView {
                data, device: DLDevice { device_type: DLDeviceType(device_type), device_id: 0 },
                dtype, shape: &shape, strides: s, byte_offset,
            };
            if let Ok(l) = layout(&v, padded) {
                prop_assert!(l.lowest_byte <= l.end_byte);
                prop_assert!(l.numel >= 0 && l.nbytes >= 0);
            }
        }
        let _ = data_location(data, byte_offset, DLDeviceType(device_type));
        let _ = first_element_alignment(data, byte_offset, DLDeviceType(device_type));
    }
}

fn plan(shape: &[i64], strides: Option<&[i64]>, dtype: DLDataType) -> Result<AllocPlan, Error> {
    let v = TensorView {
        data: 0x1000,
        device: CPU,
        dtype,
        shape,
        strides,
        byte_offset: 12345, // ignored: a plan starts at offset 0
    };
    alloc_plan(&v, false, 0)
}

#[test]
fn alloc_plan_sizes_compact_strided_negative_and_empty_tensors() {
    // Compact row-major 2x3 float32: 24 bytes, no offset.
    let p = plan(&[2, 3], None, F32).unwrap();
    assert_eq!((p.bytes, p.byte_offset), (24, 0));
    // Column-major strides of the same shape need the same bytes.
    let p = plan(&[2, 3], Some(&[1, 2]), F32).unwrap();
    assert_eq!((p.bytes, p.byte_offset), (24, 0));
    // A gap: rows 8 elements apart, 3 used: (1*8 + 2 + 1) * 4 bytes.
    let p = plan(&[2, 3], Some(&[8, 1]), F32).unwrap();
    assert_eq!((p.bytes, p.byte_offset), (44, 0));
    // Negative stride: element [0] is the highest one, 2 elements above the lowest.
    let p = plan(&[3], Some(&[-1]), I32).unwrap();
    assert_eq!((p.bytes, p.byte_offset), (12, 8));
    // Broadcast: one element's storage.
    let p = plan(&[4, 5], Some(&[0, 0]), F16).unwrap();
    assert_eq!((p.bytes, p.byte_offset), (2, 0));
    // Empty and 0-d tensors.
    assert_eq!(plan(&[0, 7], None, F32).unwrap().bytes, 0);
    assert_eq!(plan(&[], None, F32).unwrap().bytes, 4);
}

#[test]
fn alloc_plan_refuses_sizes_beyond_one_allocation_as_overflow() {
    // 2^61 float32 elements is 2^63 bytes: the count fits in int64_t, the byte size does not.
    let e = plan(&[1 << 61], None, F32).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Tensor {
                fault: Fault::Overflow,
                ..
            }
        ),
        "{e:?}"
    );
    // 2^60 float32 elements is 2^62 bytes: fits in int64_t, but not below isize::MAX - 64 - 64.
    let v = TensorView {
        data: 0,
        device: CPU,
        dtype: F32,
        shape: &[(1 << 61) / 2 - 8],
        strides: None,
        byte_offset: 0,
    };
    assert!(alloc_plan(&v, false, 0).is_ok());
    let v = TensorView {
        shape: &[(1i64 << 61) - 1],
        ..v
    };
    let e = alloc_plan(&v, false, 0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Tensor {
                fault: Fault::Overflow,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("more than one allocation can hold"),
        "{e}"
    );
}

fn order(shape: &[i64], strides: Option<&[i64]>) -> Vec<i32> {
    let mut out = vec![-1; shape.len()];
    dim_order(shape, strides, &mut out).unwrap();
    out
}

#[test]
fn case_59_dim_order_by_stride_with_fixed_rule_for_extent_one() {
    // C and F order, no extent-1 dimension.
    assert_eq!(order(&[2, 3, 4], Some(&[12, 4, 1])), [2, 1, 0]);
    assert_eq!(order(&[2, 3, 4], Some(&[1, 2, 6])), [0, 1, 2]);
    assert_eq!(order(&[2, 3, 4], None), [2, 1, 0]);
    // An extent-1 dimension in every position, with stride 1 (the cutlass#3031 ambiguity) or
    // any other stride: it goes last, and the innermost dimension of extent != 1 stays first.
    for pos in 0..3 {
        let mut shape = vec![2i64, 3];
        shape.insert(pos, 1);
        for s1 in [1i64, 0, 7, -5, 1 << 40] {
            // Row-major strides for the other two dimensions.
            let mut strides = vec![3i64, 1];
            strides.insert(pos, s1);
            let got = order(&shape, Some(&strides));
            let (outer, inner) = if pos == 0 {
                (1, 2)
            } else if pos == 1 {
                (0, 2)
            } else {
                (0, 1)
            };
            assert_eq!(got, [inner, outer, pos as i32], "{shape:?} {strides:?}");
            // Column-major strides.
            let mut strides = vec![1i64, 2];
            strides.insert(pos, s1);
            let got = order(&shape, Some(&strides));
            assert_eq!(got, [outer, inner, pos as i32], "{shape:?} {strides:?}");
        }
    }
    // Only extent-1 dimensions: index order reversed, whatever the strides.
    assert_eq!(order(&[1, 1, 1], Some(&[1, 1, 1])), [2, 1, 0]);
    assert_eq!(order(&[1, 1], Some(&[1, 9])), [1, 0]);
    // Broadcast (stride 0) first; negative strides by magnitude; equal |stride|: higher index
    // first.
    assert_eq!(order(&[4, 3], Some(&[0, 1])), [0, 1]);
    assert_eq!(order(&[4, 3], Some(&[-1, 4])), [0, 1]);
    assert_eq!(order(&[4, 3], Some(&[2, -2])), [1, 0]);
    assert_eq!(order(&[4, 3, 5], Some(&[0, 0, 0])), [2, 1, 0]);
    // Extent 0 is an ordinary dimension; 0-d gives nothing.
    assert_eq!(order(&[0, 3], Some(&[1, 5])), [0, 1]);
    assert_eq!(order(&[], None), Vec::<i32>::new());
    // Refusals write nothing.
    let mut out = [-1; 2];
    let e = dim_order(&[2, -1], None, &mut out).unwrap_err();
    assert!(e.to_string().contains("shape[1] is -1"), "{e}");
    assert_eq!(out, [-1, -1]);
    assert!(dim_order(&[2, 3, 4], None, &mut out).is_err());
    assert_eq!(out, [-1, -1]);
}

proptest! {
    #[test]
    fn dim_order_is_a_permutation_sorted_by_stride(
        dims in proptest::collection::vec((0i64..4, -50i64..50), 0..7)
    ) {
        let shape: Vec<i64> = dims.iter().map(|d| d.0).collect();
        let strides: Vec<i64> = dims.iter().map(|d| d.1).collect();
        let got = order(&shape, Some(&strides));
        let mut seen = got.clone();
        seen.sort();
        prop_assert_eq!(seen, (0..shape.len() as i32).collect::<Vec<_>>());
        for w in got.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            let key = |d: usize| (shape[d] == 1, if shape[d] == 1 { 0 } else { strides[d].unsigned_abs() }, core::cmp::Reverse(d));
            prop_assert!(key(a) < key(b), "{:?} {:?} -> {:?}", shape, strides, got);
        }
    }
}
