//! Validation tests: the peer cases that need versions, flags and options.

use super::*;
use crate::abi::{
    DLDataType, DLDevice, DLDeviceType, DLPACK_FLAG_BITMASK_IS_COPIED,
    DLPACK_FLAG_BITMASK_READ_ONLY,
};

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
const BASE: usize = 0x10_0000; // 256-aligned

fn v(version: (u32, u32), flags: u64) -> Declared {
    Declared::Versioned {
        version: DLPackVersion::new(version.0, version.1),
        flags,
    }
}

/// Both phases, as the C API runs them.
fn validate(
    producer: Declared,
    data: usize,
    dtype: DLDataType,
    shape: &[i64],
    strides: Option<&[i64]>,
    byte_offset: u64,
    o: &Requirements,
) -> Result<Layout, Error> {
    let n = check_header(producer, shape.len() as i32, false, strides.is_none(), o)?;
    assert_eq!(n, shape.len());
    check_view(
        &TensorView {
            data,
            device: CPU,
            dtype,
            shape,
            strides,
            byte_offset,
        },
        producer,
        o,
    )
}

fn fault<T: core::fmt::Debug>(r: Result<T, Error>) -> Fault {
    match r {
        Err(Error::Tensor { fault, .. }) => fault,
        other => panic!("expected a tensor fault, got {other:?}"),
    }
}

const D: Requirements = Requirements {
    flags: 0,
    max_ndim: 0,
    data_alignment: 0,
    first_element_alignment: 0,
    dtype: F32,
};

#[test]
fn case_29_null_strides_by_version() {
    for p in [Declared::Legacy, v((1, 1), 0), v((1, 0), 0)] {
        let l = validate(p, BASE, F32, &[3, 4], None, 0, &D).unwrap();
        assert_eq!((l.numel, l.nbytes), (12, 48));
        assert!(l.has(layout::C_CONTIGUOUS) && l.has(layout::STRIDES_IMPLIED));
    }
    // Default: a violation from 1.2 on, with a message naming the rule.
    for minor in [2, 3, 9] {
        let e = validate(v((1, minor), 0), BASE, F32, &[3, 4], None, 0, &D).unwrap_err();
        assert!(e.to_string().contains("DLPack 1.2"), "{e}");
        assert_eq!(fault::<()>(Err(e)), Fault::NullStrides);
    }
    // Lenient mode reads them as row-major.
    let lenient = Requirements {
        flags: LENIENT_NULL_STRIDES,
        ..D
    };
    let l = validate(v((1, 3), 0), BASE, F32, &[3, 4], None, 0, &lenient).unwrap();
    assert!(l.has(layout::C_CONTIGUOUS) && l.numel == 12);
    // ndim 0 with NULL shape and strides: valid at any version, one element.
    let n = check_header(v((1, 3), 0), 0, true, true, &D).unwrap();
    assert_eq!(n, 0);
    // NULL shape with ndim != 0 is never valid.
    assert_eq!(
        fault(check_header(Declared::Legacy, 2, true, false, &D)),
        Fault::NullShape
    );
}

#[test]
fn case_34_null_data_is_valid_only_for_empty_tensors() {
    let s = [3i64, 1];
    for data in [0, BASE] {
        let l = validate(v((1, 3), 0), data, I32, &[0, 3], Some(&s), 0, &D).unwrap();
        assert_eq!(l.numel, 0);
        // No alignment error for empty tensors, even in strict modes.
        let strict = Requirements {
            flags: REQUIRE_ELEMENT_ALIGNED,
            data_alignment: 256,
            first_element_alignment: 64,
            ..D
        };
        assert!(validate(v((1, 3), 0), data + 1, I32, &[0, 3], Some(&s), 3, &strict).is_ok());
    }
    assert_eq!(
        fault(validate(
            v((1, 3), 0),
            0,
            I32,
            &[2, 3],
            Some(&[3, 1]),
            0,
            &D
        )),
        Fault::NullData
    );
    assert_eq!(
        fault(validate(v((1, 3), 0), 0, I32, &[], None, 0, &D)),
        Fault::NullData
    );
}

#[test]
fn case_40_nonzero_byte_offset_is_valid_and_element_alignment_is_opt_in() {
    let l = validate(v((1, 3), 0), BASE, F16, &[4], Some(&[1]), 8, &D);
    assert!(l.is_ok());
    assert_eq!(layout::first_element_alignment(BASE, 8, CPU.device_type), 8);
    // f32 at byte_offset 3: valid by default, alignment 1, refused only in the strict mode.
    assert!(validate(v((1, 3), 0), BASE, F32, &[4], Some(&[1]), 3, &D).is_ok());
    assert_eq!(layout::first_element_alignment(BASE, 3, CPU.device_type), 1);
    let strict = Requirements {
        flags: REQUIRE_ELEMENT_ALIGNED,
        ..D
    };
    assert_eq!(
        fault(validate(
            v((1, 3), 0),
            BASE,
            F32,
            &[4],
            Some(&[1]),
            3,
            &strict
        )),
        Fault::Misaligned
    );
    assert!(validate(v((1, 3), 0), BASE, F16, &[4], Some(&[1]), 8, &strict).is_ok());
}

#[test]
fn case_42_256_byte_alignment_is_not_assumed() {
    // data = base + 4, byte_offset 0: accepted by default, flagged in strict-256 mode.
    assert!(validate(v((1, 3), 0), BASE + 4, F32, &[4], Some(&[1]), 0, &D).is_ok());
    assert_eq!(
        layout::first_element_alignment(BASE + 4, 0, CPU.device_type),
        4
    );
    let strict256 = Requirements {
        data_alignment: 256,
        ..D
    };
    assert_eq!(
        fault(validate(
            v((1, 3), 0),
            BASE + 4,
            F32,
            &[4],
            Some(&[1]),
            0,
            &strict256
        )),
        Fault::Misaligned
    );
    // data = base, byte_offset 4: accepted in both.
    assert!(validate(v((1, 3), 0), BASE, F32, &[4], Some(&[1]), 4, &D).is_ok());
    assert!(validate(v((1, 3), 0), BASE, F32, &[4], Some(&[1]), 4, &strict256).is_ok());
}

#[test]
fn case_43_bool_sub_byte_is_refused_legacy_and_versioned() {
    let b1 = DLDataType {
        code: 6,
        bits: 1,
        lanes: 1,
    };
    let b8 = DLDataType {
        code: 6,
        bits: 8,
        lanes: 1,
    };
    assert_eq!(
        validate(Declared::Legacy, BASE, b8, &[4], None, 0, &D)
            .unwrap()
            .nbytes,
        4
    );
    assert_eq!(
        fault(validate(Declared::Legacy, BASE, b1, &[8], None, 0, &D)),
        Fault::InvalidDtype
    );
    assert_eq!(
        fault(validate(v((1, 3), 0), BASE, b1, &[8], Some(&[1]), 0, &D)),
        Fault::InvalidDtype
    );
    let padded = crate::abi::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
    assert_eq!(
        fault(validate(
            v((1, 3), padded),
            BASE,
            b1,
            &[8],
            Some(&[1]),
            0,
            &D
        )),
        Fault::InvalidDtype
    );
}

#[test]
fn case_46_writability_from_flags() {
    let w = Requirements {
        flags: REQUIRE_WRITABLE,
        ..D
    };
    let s: &[i64] = &[1];
    assert!(validate(v((1, 3), 0), BASE, F32, &[2], Some(s), 0, &w).is_ok());
    assert!(
        validate(
            v((1, 3), DLPACK_FLAG_BITMASK_IS_COPIED),
            BASE,
            F32,
            &[2],
            Some(s),
            0,
            &w
        )
        .is_ok()
    );
    assert_eq!(
        fault(validate(
            v((1, 3), DLPACK_FLAG_BITMASK_READ_ONLY),
            BASE,
            F32,
            &[2],
            Some(s),
            0,
            &w
        )),
        Fault::ReadOnly
    );
    let ro_copied = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
    assert_eq!(
        fault(validate(
            v((1, 3), ro_copied),
            BASE,
            F32,
            &[2],
            Some(s),
            0,
            &w
        )),
        Fault::ReadOnly
    );
    // Legacy: unknown, refused by default, accepted when the caller opts in.
    assert_eq!(
        fault(validate(Declared::Legacy, BASE, F32, &[2], Some(s), 0, &w)),
        Fault::ReadOnly
    );
    let assume = Requirements {
        flags: REQUIRE_WRITABLE | LEGACY_WRITABLE,
        ..D
    };
    assert!(validate(Declared::Legacy, BASE, F32, &[2], Some(s), 0, &assume).is_ok());
    // Without the requirement, read-only tensors validate.
    assert!(
        validate(
            v((1, 3), DLPACK_FLAG_BITMASK_READ_ONLY),
            BASE,
            F32,
            &[2],
            Some(s),
            0,
            &D
        )
        .is_ok()
    );
}

#[test]
fn requirements() {
    let s: &[i64] = &[1, 3];
    let t = |o: Requirements, strides: &[i64]| {
        validate(v((1, 3), 0), BASE, F32, &[3, 2], Some(strides), 0, &o)
    };
    assert_eq!(
        fault(t(
            Requirements {
                flags: REQUIRE_C_CONTIGUOUS,
                ..D
            },
            s
        )),
        Fault::NotContiguous
    );
    assert!(
        t(
            Requirements {
                flags: REQUIRE_F_CONTIGUOUS | REQUIRE_COMPACT,
                ..D
            },
            s
        )
        .is_ok()
    );
    assert_eq!(
        fault(t(
            Requirements {
                flags: REJECT_BROADCAST,
                ..D
            },
            &[0, 1]
        )),
        Fault::UnsupportedStrides
    );
    assert_eq!(
        fault(t(
            Requirements {
                flags: REJECT_NEGATIVE_STRIDES,
                ..D
            },
            &[-2, 1]
        )),
        Fault::UnsupportedStrides
    );
    // A negative stride that reaches below address 0 is an overflow, not a wrap.
    assert_eq!(
        fault(validate(v((1, 3), 0), 4, F32, &[3], Some(&[-1]), 0, &D)),
        Fault::Overflow
    );
    assert_eq!(
        fault(t(
            Requirements {
                flags: REQUIRE_DTYPE,
                dtype: F16,
                ..D
            },
            s
        )),
        Fault::DtypeMismatch
    );
    assert!(
        t(
            Requirements {
                flags: REQUIRE_DTYPE,
                dtype: F32,
                ..D
            },
            s
        )
        .is_ok()
    );
    let vec4 = DLDataType {
        code: 2,
        bits: 32,
        lanes: 4,
    };
    assert_eq!(
        fault(validate(
            v((1, 3), 0),
            BASE,
            vec4,
            &[2],
            Some(&[1]),
            0,
            &Requirements {
                flags: REJECT_VECTOR,
                ..D
            }
        )),
        Fault::DtypeMismatch
    );
    assert_eq!(
        fault(t(Requirements { max_ndim: 1, ..D }, s)),
        Fault::InvalidNdim
    );
    assert!(matches!(
        t(
            Requirements {
                flags: 1 << 30,
                ..D
            },
            s
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        t(
            Requirements {
                data_alignment: 3,
                ..D
            },
            s
        ),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        check_header(v((2, 0), 0), 1, false, false, &D),
        Err(Error::UnsupportedVersion { .. })
    ));
    assert_eq!(
        fault(check_header(v((1, 3), 0x10), 1, false, false, &D)),
        Fault::InvalidFlags
    );
    let gpu = TensorView {
        data: BASE,
        device: DLDevice {
            device_type: DLDeviceType::kDLCUDA,
            device_id: 0,
        },
        dtype: F32,
        shape: &[2],
        strides: Some(&[1]),
        byte_offset: 0,
    };
    assert_eq!(
        fault(check_view(
            &gpu,
            v((1, 3), 0),
            &Requirements {
                flags: REQUIRE_CPU_ACCESSIBLE,
                ..D
            }
        )),
        Fault::NotCpuAccessible
    );
}

mod fast_path {
    use super::*;
    use proptest::prelude::*;

    fn dtype() -> impl Strategy<Value = DLDataType> {
        prop_oneof![
            4 => Just(F32),
            2 => Just(F16),
            2 => Just(I32),
            2 => Just(DLDataType { code: 6, bits: 8, lanes: 1 }),
            2 => Just(DLDataType { code: 4, bits: 16, lanes: 1 }),
            1 => Just(DLDataType { code: 4, bits: 32, lanes: 1 }),
            1 => Just(DLDataType { code: 17, bits: 4, lanes: 1 }),
            1 => Just(DLDataType { code: 2, bits: 32, lanes: 4 }),
            1 => (any::<u8>(), any::<u8>(), 0u16..3).prop_map(|(code, bits, lanes)| DLDataType { code, bits, lanes }),
        ]
    }

    fn producer() -> impl Strategy<Value = Declared> {
        prop_oneof![
            Just(Declared::Legacy),
            (
                prop_oneof![4 => Just(1u32), 1 => 0u32..3],
                0u32..6,
                prop_oneof![4 => 0u64..8, 1 => 0u64..16, 1 => any::<u64>()]
            )
                .prop_map(|(major, minor, flags)| Declared::Versioned {
                    version: DLPackVersion::new(major, minor),
                    flags
                }),
        ]
    }

    fn options() -> impl Strategy<Value = Requirements> {
        (
            prop_oneof![
                4 => (0u32..(1 << 12)).prop_map(|f| f & FAST_OPTIONS & !(REQUIRE_DTYPE | REQUIRE_C_CONTIGUOUS)),
                2 => (0u32..(1 << 12)).prop_map(|f| f & FAST_OPTIONS),
                1 => 0u32..(1 << 12),
                1 => any::<u32>()
            ],
            prop_oneof![4 => Just(0i32), 1 => -1i32..10],
            prop_oneof![4 => Just(0u64), 1 => Just(1), 1 => Just(256), 1 => any::<u64>()],
            prop_oneof![4 => Just(0u64), 1 => Just(4), 1 => any::<u64>()],
            dtype(),
        )
            .prop_map(|(flags, max_ndim, data_alignment, first_element_alignment, dtype)| Requirements {
                flags,
                max_ndim,
                data_alignment,
                first_element_alignment,
                dtype,
            })
    }

    /// Row-major strides for `shape` (saturating; extents 0 count as 1).
    fn compact(shape: Vec<i64>) -> (Vec<i64>, Vec<i64>) {
        let mut strides = vec![0i64; shape.len()];
        let mut acc = 1i64;
        for i in (0..shape.len()).rev() {
            strides[i] = acc;
            acc = acc.saturating_mul(shape[i].max(1));
        }
        (shape, strides)
    }

    fn dims() -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
        prop_oneof![
            2 => proptest::collection::vec(prop_oneof![8 => 1i64..6, 1 => Just(0i64), 1 => Just(1 << 40)], 0..10).prop_map(compact),
            // Many dimensions (the fast path takes any ndim): extents small enough that the
            // count often fits.
            1 => proptest::collection::vec(prop_oneof![60 => 1i64..3, 1 => Just(0i64), 1 => Just(1 << 40)], 10..70).prop_map(compact),
            3 => random_dims(),
        ]
    }

    fn random_dims() -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
        prop_oneof![4 => 0usize..10, 1 => 10usize..70].prop_flat_map(|n| {
            (
                proptest::collection::vec(prop_oneof![8 => 1i64..5, 1 => -1i64..1, 1 => Just(i64::MAX), 1 => Just(1 << 40)], n),
                proptest::collection::vec(prop_oneof![8 => -3i64..40, 1 => Just(i64::MAX), 1 => Just(i64::MIN), 1 => Just(1 << 62)], n),
            )
        })
    }

    static ACCEPTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static ACCEPTED_MANY_DIMS: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        /// The fast path never accepts a tensor the full validation refuses.
        #[test]
        fn fast_accept_implies_full_accept(
            (shape, strides) in dims(),
            dt in dtype(),
            p in producer(),
            o in options(),
            data in prop_oneof![1 => Just(0usize), 8 => Just(BASE), 1 => any::<usize>(), 1 => Just(usize::MAX - 64)],
            device_type in prop_oneof![8 => Just(1i32), 1 => Just(2), 1 => Just(4), 1 => Just(13), 1 => any::<i32>()],
            byte_offset in prop_oneof![2 => Just(0u64), 2 => 0u64..64, 1 => any::<u64>(), 1 => Just(i64::MAX as u64)],
        ) {
            let device = DLDevice { device_type: DLDeviceType(device_type), device_id: 0 };
            if fast_accept(data, device, dt, &shape, &strides, byte_offset, p, &o) {
                ACCEPTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if shape.len() > 8 {
                    ACCEPTED_MANY_DIMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                let n = check_header(p, shape.len() as i32, false, false, &o);
                prop_assert!(n.is_ok(), "{:?}", n);
                let v = TensorView { data, device, dtype: dt, shape: &shape, strides: Some(&strides), byte_offset };
                let full = check_view(&v, p, &o);
                prop_assert!(full.is_ok(), "{:?}", full);
            }
        }
    }

    /// The generators reach the fast path often enough for the property to mean something.
    #[test]
    fn fast_path_property_reaches_acceptance() {
        fast_accept_implies_full_accept();
        let n = ACCEPTED.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            n >= 40,
            "only {n} of the generated tensors reached the fast path"
        );
        let many = ACCEPTED_MANY_DIMS.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            many >= 5,
            "only {many} tensors of more than 8 dimensions reached the fast path"
        );
    }

    /// Every scalar dtype: the fast path takes exactly the whole-byte ones the full path
    /// accepts (its table of allowed widths, issue 34, neither refuses one nor lets one
    /// through), on a tensor nothing else would send down the full path.
    #[test]
    fn fast_path_dtype_table_matches_the_full_rules() {
        let dev = DLDevice {
            device_type: DLDeviceType::kDLCPU,
            device_id: 0,
        };
        let (shape, strides) = ([3i64], [1i64]);
        let mut taken = 0;
        for code in 0..=255u8 {
            for bits in 0..=255u8 {
                let dt = DLDataType {
                    code,
                    bits,
                    lanes: 1,
                };
                let fast = fast_accept(BASE, dev, dt, &shape, &strides, 0, v((1, 3), 0), &D);
                let view = TensorView {
                    data: BASE,
                    device: dev,
                    dtype: dt,
                    shape: &shape,
                    strides: Some(&strides),
                    byte_offset: 0,
                };
                let full = check_view(&view, v((1, 3), 0), &D).is_ok();
                assert_eq!(fast, full && bits % 8 == 0, "code {code} bits {bits}");
                taken += fast as u32;
            }
        }
        // Codes 0..=14: 5 + 5 + 4 + 31 (opaque) + 1 + 3 + 1 + 8 whole-byte widths.
        assert!(taken >= 50, "only {taken} dtypes took the fast path");
    }

    #[test]
    fn fast_path_takes_the_common_case() {
        let shape = [2i64, 3, 4, 5];
        let strides = [60i64, 20, 5, 1];
        let o = Requirements {
            flags: REQUIRE_C_CONTIGUOUS,
            ..D
        };
        let dev = DLDevice {
            device_type: DLDeviceType::kDLCPU,
            device_id: 0,
        };
        assert!(fast_accept(
            BASE,
            dev,
            F32,
            &shape,
            &strides,
            0,
            v((1, 3), 0),
            &o
        ));
        // Anything unusual goes down the full path.
        assert!(!fast_accept(
            BASE,
            dev,
            F32,
            &shape,
            &[60, 20, 5, 2],
            0,
            v((1, 3), 0),
            &o
        ));
        assert!(!fast_accept(
            0,
            dev,
            F32,
            &shape,
            &strides,
            0,
            v((1, 3), 0),
            &o
        ));
        assert!(!fast_accept(
            BASE,
            dev,
            F32,
            &shape,
            &strides,
            0,
            v((1, 3), DLPACK_FLAG_BITMASK_READ_ONLY),
            &Requirements {
                flags: REQUIRE_WRITABLE,
                ..D
            }
        ));
    }
}

/// Peer case 52: `REJECT_COPIED` refuses an `IS_COPIED` tensor with its own fault; without the
/// option a copy validates, and legacy tensors (no flags) pass it.
#[test]
fn case_52_reject_copied() {
    let r = Requirements {
        flags: REJECT_COPIED,
        ..D
    };
    let s: &[i64] = &[1];
    let copied = v((1, 3), DLPACK_FLAG_BITMASK_IS_COPIED);
    assert_eq!(
        fault(validate(copied, BASE, F32, &[2], Some(s), 0, &r)),
        Fault::Copied
    );
    assert!(validate(copied, BASE, F32, &[2], Some(s), 0, &D).is_ok());
    assert!(validate(v((1, 3), 0), BASE, F32, &[2], Some(s), 0, &r).is_ok());
    assert!(validate(Declared::Legacy, BASE, F32, &[2], Some(s), 0, &r).is_ok());
}

/// Issue 34 item 6: a dtype refusal names the dtypes as a user reads them (`float32`), the
/// triple after it.
#[test]
fn dtype_mismatch_names_the_dtypes() {
    let shape = [2i64];
    let strides = [1i64];
    let view = TensorView {
        data: 0x1000,
        device: crate::abi::DLDevice::CPU,
        dtype: DLDataType {
            code: 2,
            bits: 32,
            lanes: 1,
        },
        shape: &shape,
        strides: Some(&strides),
        byte_offset: 0,
    };
    let o = Requirements {
        flags: REQUIRE_DTYPE,
        dtype: DLDataType {
            code: 2,
            bits: 64,
            lanes: 1,
        },
        ..Requirements::default()
    };
    let e = check_view(&view, Declared::Legacy, &o)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tensor.dtype is float32 (code 2, bits 32, lanes 1)")
            && e.contains("requires float64 (code 2, bits 64, lanes 1)"),
        "{e}"
    );
}
