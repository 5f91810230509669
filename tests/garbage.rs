//! Arbitrary bytes in every integer field of a tensor, through the C entry points: a status,
//! never a panic or undefined behaviour. `shape` and `strides`, when not NULL, point at
//! `DLPACK_HELPERS_MAX_NDIM` arbitrary values (the one thing a caller must guarantee is that
//! `ndim` elements are readable; any larger `ndim` is refused before reading).
//!
//! `PROPTEST_CASES=1000000 cargo test --release --test garbage` for a long run.

use dlpack_helpers::abi::*;
use dlpack_helpers::capi::convert::*;
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::layout::*;
use dlpack_helpers::capi::names::*;
use dlpack_helpers::capi::validate::*;
use proptest::prelude::*;

fn int_field() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        -3i64..8,
        Just(i64::MAX),
        Just(i64::MIN),
        Just(0)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000),
        ..ProptestConfig::default()
    })]
    #[test]
    fn arbitrary_fields_give_a_status_never_a_panic(
        version in (0u32..3, any::<u32>()),
        flags in prop_oneof![any::<u64>(), 0u64..8],
        data in any::<usize>(),
        device in (any::<i32>(), any::<i32>()),
        ndim in prop_oneof![any::<i32>(), -2i32..10, Just(DLPACK_HELPERS_MAX_NDIM), Just(DLPACK_HELPERS_MAX_NDIM + 1)],
        dtype in (any::<u8>(), any::<u8>(), any::<u16>()),
        byte_offset in any::<u64>(),
        shape_seed in proptest::collection::vec(int_field(), 1..12),
        strides_seed in proptest::collection::vec(int_field(), 1..12),
        null_shape in any::<bool>(),
        null_strides in any::<bool>(),
        opt in (any::<u32>(), any::<i32>(), any::<u64>(), any::<u64>(), any::<usize>()),
    ) {
        // Every readable slot holds one of the arbitrary values (tiled, to keep cases cheap).
        let tile = |seed: &[i64]| -> Vec<i64> { seed.iter().copied().cycle().take(DLPACK_HELPERS_MAX_NDIM as usize).collect() };
        let (mut shape, mut strides) = (tile(&shape_seed), tile(&strides_seed));
        let t = DLTensor {
            data: data as *mut _,
            device: DLDevice { device_type: DLDeviceType(device.0), device_id: device.1 },
            ndim,
            dtype: DLDataType { code: dtype.0, bits: dtype.1, lanes: dtype.2 },
            shape: if null_shape { std::ptr::null_mut() } else { shape.as_mut_ptr() },
            strides: if null_strides { std::ptr::null_mut() } else { strides.as_mut_ptr() },
            byte_offset,
        };
        let mut m = DLManagedTensorVersioned {
            version: DLPackVersion::new(version.0, version.1 % 8),
            manager_ctx: std::ptr::null_mut(),
            deleter: None,
            flags,
            dl_tensor: t,
        };
        let o = dlpack_helpers_validate_options {
            struct_size: opt.4 % 64,
            flags: opt.0,
            max_ndim: opt.1,
            data_alignment: opt.2,
            first_element_alignment: opt.3,
            dtype: t.dtype,
        };
        let mut l = dlpack_helpers_layout::default();
        // SAFETY: the structs are live locals and `shape`/`strides` hold DLPACK_HELPERS_MAX_NDIM
        // readable values; the field values are arbitrary on purpose: the contract under test is
        // that the library only reads them and never dereferences `data`.
        for s in unsafe { [
            dlpack_tensor_validate(&m, &o, &mut l),
            dlpack_tensor_validate(&m, std::ptr::null(), std::ptr::null_mut()),
            dlpack_dltensor_validate(&t, DLPackVersion::new(0, 0), flags, &o, &mut l),
            dlpack_tensor_layout(&m, &mut l),
            dlpack_dltensor_layout(&t, flags, &mut l),
        ] } {
            prop_assert_ne!(s, DLPACK_HELPERS_STATUS_PANIC);
            if s == DLPACK_HELPERS_STATUS_OK {
                prop_assert!(l.numel >= 0 && l.nbytes >= 0 && l.lowest_byte <= l.end_byte);
            }
        }
        let mut a = std::ptr::null_mut();
        let mut off = 0u64;
        // SAFETY: the structs are live locals and `shape`/`strides` hold DLPACK_HELPERS_MAX_NDIM
        // readable values; the field values are arbitrary on purpose: the contract under test is
        // that the library only reads them and never dereferences `data`.
        unsafe {
            prop_assert_ne!(dlpack_dltensor_data_address(&t, &mut a), DLPACK_HELPERS_STATUS_PANIC);
            prop_assert_ne!(dlpack_dltensor_data_location(&t, &mut a, &mut off), DLPACK_HELPERS_STATUS_PANIC);
            let mut buf = [0 as std::ffi::c_char; DLPACK_HELPERS_NAME_MAX];
            prop_assert_ne!(dlpack_dtype_format(t.dtype, buf.as_mut_ptr(), buf.len(), std::ptr::null_mut()), DLPACK_HELPERS_STATUS_PANIC);
            prop_assert_ne!(dlpack_device_format(t.device, buf.as_mut_ptr(), buf.len(), std::ptr::null_mut()), DLPACK_HELPERS_STATUS_PANIC);
            // Ownership conversions: on OK the wrapper owns `m` (NULL deleter: nothing to free).
            let mut legacy = std::ptr::null_mut();
            let s = dlpack_versioned_to_legacy(&mut m, opt.0 & 1, std::ptr::null_mut(), &mut legacy);
            prop_assert_ne!(s, DLPACK_HELPERS_STATUS_PANIC);
            if s == DLPACK_HELPERS_STATUS_OK {
                dlpack_helpers::capi::tensor::dlpack_legacy_tensor_delete(legacy);
            }
            let mut created = std::ptr::null_mut();
            let s = dlpack_tensor_create(t.data, t.device, t.ndim, t.shape, t.strides, t.dtype, t.byte_offset, flags, None, std::ptr::null_mut(), &mut created);
            prop_assert_ne!(s, DLPACK_HELPERS_STATUS_PANIC);
            if s == DLPACK_HELPERS_STATUS_OK {
                prop_assert_eq!(dlpack_tensor_validate(created, std::ptr::null(), std::ptr::null_mut()), DLPACK_HELPERS_STATUS_OK);
                dlpack_helpers::capi::tensor::dlpack_tensor_delete(created);
            }
        }
    }
}
