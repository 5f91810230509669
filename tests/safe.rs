//! The safe Rust API (`src/safe/`): owners release exactly once on every path, adoption checks the
//! version and the DLPack rules, producers describe Rust storage, views validate, errors carry
//! the status and message.

use dlpack_helpers::rules::flags::Writability;
use dlpack_helpers::rules::validate::{REQUIRE_CPU_ACCESSIBLE, Requirements};
use dlpack_helpers::rules::version::{Export, Exporter};
use dlpack_helpers::status::*;
use dlpack_helpers::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Storage that counts how often it is dropped.
struct Counted {
    values: Vec<f32>,
    drops: Arc<AtomicUsize>,
}

impl AsRef<[f32]> for Counted {
    fn as_ref(&self) -> &[f32] {
        &self.values
    }
}

impl AsMut<[f32]> for Counted {
    fn as_mut(&mut self) -> &mut [f32] {
        &mut self.values
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn counted(n: usize) -> (Counted, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    (
        Counted {
            values: (0..n).map(|i| i as f32).collect(),
            drops: Arc::clone(&drops),
        },
        drops,
    )
}

fn drops(d: &Arc<AtomicUsize>) -> usize {
    d.load(Ordering::SeqCst)
}

#[test]
fn vec_producer_reads_back_and_releases_once_on_drop() {
    let (c, d) = counted(6);
    let t = Managed::from_owner_mut(c, &[2, 3], None).unwrap();
    let v = t.view();
    assert_eq!(v.shape(), &[2, 3]);
    assert_eq!(
        v.strides(),
        Some(&[3, 1][..]),
        "DLPack 1.2: strides always stored"
    );
    assert_eq!(v.dtype(), DLDataType::F32);
    assert_eq!(v.device(), DLDevice::CPU);
    assert_eq!(t.version(), DLPackVersion::CURRENT);
    assert_eq!(v.writability(), Writability::Writable);
    assert_eq!(
        t.as_slice::<f32>().unwrap(),
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert_eq!(drops(&d), 0);
    drop(t);
    assert_eq!(drops(&d), 1);
}

#[test]
fn from_vec_needs_the_exact_element_count() {
    let e = Managed::from_vec(vec![1u8, 2, 3], &[2, 2]).unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
    assert!(e.message().contains("4 elements"), "{e}");
    let e = Managed::from_vec(vec![1u8; 4], &[2, -2]).unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_INVALID_SHAPE, "{e}");
}

#[test]
fn owner_strides_outside_the_storage_are_refused_and_the_owner_dropped_once() {
    let (c, d) = counted(4);
    let e = Managed::from_owner(c, &[2, 2], Some(&[3, 1])).unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_INVALID_ARGUMENT, "{e}");
    assert_eq!(drops(&d), 1);
    let (c, d) = counted(4);
    let e = Managed::from_owner(c, &[2, 2], Some(&[1])).unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_INVALID_ARGUMENT, "{e}");
    assert_eq!(drops(&d), 1);
}

#[test]
fn read_only_owner_is_flagged_and_refuses_mutable_slices() {
    let (c, d) = counted(3);
    let mut t = Managed::from_owner(c, &[3], None).unwrap();
    assert_eq!(t.flags() & abi::DLPACK_FLAG_BITMASK_READ_ONLY, 1);
    let e = t.as_mut_slice::<f32>().unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_READ_ONLY, "{e}");
    drop(t);
    assert_eq!(drops(&d), 1);
}

#[test]
fn adopted_or_shared_memory_gives_no_safe_mutable_slice() {
    let t = Managed::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    // SAFETY: `into_raw` just gave up ownership; from_raw takes it back.
    let mut adopted = unsafe { Managed::from_raw(t.into_raw()) }.unwrap();
    let e = adopted.as_mut_slice::<f64>().unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_READ_ONLY, "{e}");
    // SAFETY: nothing else reaches this memory.
    unsafe { adopted.as_mut_slice_unchecked::<f64>() }.unwrap()[0] = 3.0;
    let arc = Arc::new(adopted);
    let (mut a, mut b) = (Managed::share(&arc).unwrap(), Managed::share(&arc).unwrap());
    assert!(a.as_mut_slice::<f64>().is_err() && b.as_mut_slice::<f64>().is_err());
    assert_eq!(a.as_slice::<f64>().unwrap(), &[3.0, 2.0]);
}

#[test]
fn writable_owner_is_written_through_the_tensor() {
    let mut t = Managed::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    t.as_mut_slice::<f64>().unwrap()[1] = 5.0;
    assert_eq!(t.as_slice::<f64>().unwrap(), &[1.0, 5.0]);
    let e = t.as_slice::<f32>().unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_DTYPE_MISMATCH, "{e}");
}

#[test]
fn adopted_tensor_shares_validates_and_lays_out() {
    let t = Managed::from_vec((0..6).collect::<Vec<i32>>(), &[6]).unwrap();
    let raw = t.into_raw();
    // A transposed 3x2 view of the same owner, made through an Arc share.
    // SAFETY: `raw` was just released by `into_raw`: we own it.
    let t = Arc::new(unsafe { Managed::from_raw(raw) }.unwrap());
    let s = Managed::share(&t).unwrap();
    assert_eq!(s.as_slice::<i32>().unwrap(), t.as_slice::<i32>().unwrap());
    let l = s.view().layout().unwrap();
    assert_eq!((l.numel, l.nbytes), (6, 24));
    let e = s
        .view()
        .validate(&Requirements {
            flags: REQUIRE_CPU_ACCESSIBLE,
            max_ndim: 0,
            ..Requirements::default()
        })
        .map(|l| l.numel);
    assert_eq!(e, Ok(6));
}

#[test]
fn adoption_refuses_another_major_and_releases_it_once() {
    let (c, d) = counted(2);
    let raw = Managed::from_owner_mut(c, &[2], None).unwrap().into_raw();
    // SAFETY: we own `raw`; pretend a DLPack 2 producer sent it.
    unsafe { (*raw).version.major = 2 };
    // SAFETY: ownership moves to from_raw.
    let e = unsafe { Managed::from_raw(raw) }.unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
    assert_eq!(e.status_name(), "UNSUPPORTED_VERSION");
    assert_eq!(e.python_exception(), "BufferError");
    assert_eq!(drops(&d), 1, "the refused tensor was released exactly once");
}

#[test]
fn adoption_refuses_a_broken_tensor_and_releases_it_once() {
    let (c, d) = counted(2);
    let raw = Managed::from_owner_mut(c, &[2], None).unwrap().into_raw();
    // SAFETY: we own `raw`; bit 40 is no DLPack 1.3 flag.
    unsafe { (*raw).flags |= 1 << 40 };
    // SAFETY: ownership moves to from_raw.
    let e = unsafe { Managed::from_raw(raw) }.unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_INVALID_FLAGS, "{e}");
    assert_eq!(drops(&d), 1);
}

#[test]
fn adoption_of_null_is_an_error_not_a_crash() {
    // SAFETY: NULL is allowed.
    let e = unsafe { Managed::from_raw(std::ptr::null_mut()) }.unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_NULL_POINTER);
    // SAFETY: NULL is allowed.
    let e = unsafe { LegacyManaged::from_raw(std::ptr::null_mut()) }.unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_NULL_POINTER);
}

#[test]
fn shares_release_the_owner_after_the_last_one() {
    let (c, d) = counted(3);
    let t = Arc::new(Managed::from_owner_mut(c, &[3], None).unwrap());
    let a = Managed::share(&t).unwrap();
    let b = Managed::share(&t).unwrap();
    drop(t);
    drop(a);
    assert_eq!(drops(&d), 0);
    assert_eq!(b.as_slice::<f32>().unwrap(), &[0.0, 1.0, 2.0]);
    drop(b);
    assert_eq!(drops(&d), 1);
}

#[test]
fn legacy_round_trip_is_read_only_unless_asserted_and_releases_once() {
    let (c, d) = counted(3);
    let t = Managed::from_owner_mut(c, &[3], None).unwrap();
    let legacy = t.into_legacy(false).unwrap();
    assert_eq!(legacy.view().version(), None);
    assert_eq!(legacy.view().writability(), Writability::Unknown);
    assert_eq!(legacy.as_slice::<f32>().unwrap().len(), 3);
    let back = legacy.into_versioned(false).unwrap();
    assert_eq!(back.view().writability(), Writability::ReadOnly);
    drop(back);
    assert_eq!(drops(&d), 1);

    let (c, d) = counted(3);
    let writable = Managed::from_owner_mut(c, &[3], None)
        .unwrap()
        .into_legacy(false)
        .unwrap()
        .into_versioned(true)
        .unwrap();
    assert_eq!(writable.view().writability(), Writability::Writable);
    drop(writable);
    assert_eq!(drops(&d), 1);
}

#[test]
fn read_only_tensor_does_not_become_legacy_silently() {
    let (c, d) = counted(2);
    let t = Managed::from_owner(c, &[2], None).unwrap();
    let e = t.into_legacy(false).unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_READ_ONLY, "{e}");
    assert_eq!(drops(&d), 1, "released on error");
}

#[test]
fn release_from_another_thread_runs_the_deleter_once() {
    let (c, d) = counted(2);
    let t = Managed::from_owner_mut(c, &[2], None).unwrap();
    std::thread::spawn(move || drop(t)).join().unwrap();
    assert_eq!(drops(&d), 1);
}

#[test]
fn bare_dltensor_view_is_validated() {
    let shape = [2i64, 3];
    let data = [0f32; 6];
    let t = DLTensor {
        data: data.as_ptr().cast_mut().cast(),
        device: DLDevice::CPU,
        ndim: 2,
        dtype: DLDataType::F32,
        shape: shape.as_ptr().cast_mut(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    // SAFETY: shape holds ndim elements, data 6 floats alive for the view.
    let v = unsafe { TensorRef::from_dltensor(&t) }.unwrap();
    assert_eq!(v.as_slice::<f32>().unwrap().len(), 6);
    assert_eq!(
        dlpack_helpers::rules::layout::layout(&v, false)
            .unwrap()
            .numel,
        6
    );
    let bad = DLTensor { ndim: -1, ..t };
    // SAFETY: as above (ndim is refused before any array is read).
    let e = unsafe { TensorRef::from_dltensor(&bad) }.unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_INVALID_NDIM, "{e}");
}

#[test]
fn names_display_and_parse() {
    assert_eq!(DLDataType::F32.to_string(), "float32");
    assert_eq!(DLDataType::BF16.to_string(), "bfloat16");
    assert_eq!(DLDataType::BOOL.to_string(), "bool");
    assert_eq!(
        DLDataType {
            code: 99,
            bits: 8,
            lanes: 1
        }
        .to_string(),
        "dtype(code 99, bits 8, lanes 1)"
    );
    assert_eq!(DLDevice::cuda(1).to_string(), "cuda:1");
    assert_eq!(
        DLDevice::new(DLDeviceType(99), 0).to_string(),
        "device(type 99, id 0)"
    );
    assert_eq!(parse_dtype("float64").unwrap(), DLDataType::F64);
    assert_eq!(parse_device("cuda:1").unwrap(), DLDevice::cuda(1));
    let e = parse_dtype("float7").unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
    assert_eq!(dtype_name(DLDataType::U16).unwrap().as_str(), "uint16");
    assert_eq!(device_name(DLDevice::CPU).unwrap().as_str(), "cpu:0");
    // `Name` is nameable, prints with `{}` and compares with text.
    let n: dlpack_helpers::safe::Name = dtype_name(DLDataType::U16).unwrap();
    assert_eq!(format!("{n}|{n:>8}"), "uint16|  uint16");
    assert!(n == "uint16" && n.as_ref() == "uint16");
}

#[test]
fn errors_are_std_errors_with_status_and_message() {
    fn as_std(e: &(dyn std::error::Error + Send + Sync + 'static)) -> String {
        e.to_string()
    }
    let producer = Exporter {
        version: DLPackVersion::CURRENT,
        exports_legacy: false,
        no_max_version_keyword: false,
    };
    let e = negotiate(producer, None).unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_NO_COMMON_VERSION);
    assert!(as_std(&e).ends_with("[NO_COMMON_VERSION]"), "{e}");
    assert!(e.message().contains("max_version is None"), "{e}");
    assert_eq!(
        negotiate(producer, Some(DLPackVersion::new(1, 1))).unwrap(),
        Export::Versioned(DLPackVersion::CURRENT)
    );
    // The hot-path Refusal has the same text.
    let r = dlpack_helpers::rules::version::negotiate(producer, None).unwrap_err();
    assert_eq!(as_std(&r), e.message());
    assert_eq!(
        check_version(DLPackVersion::new(2, 0))
            .unwrap_err()
            .status(),
        10
    );
    assert_eq!(compact_strides(&[2, 3, 4], true).unwrap(), vec![12, 4, 1]);
    assert_eq!(compact_strides(&[2, 3, 4], false).unwrap(), vec![1, 2, 6]);
}

#[test]
fn owners_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Managed>();
    send_sync::<LegacyManaged>();
    send_sync::<TensorRef<'static>>();
    send_sync::<Error>();
}

#[test]
fn pointer_device_never_guesses() {
    let v = Box::new([0u8; 64]); // heap memory
    match pointer_device(v.as_ptr() as usize) {
        Ok(d) => assert_eq!(d, DLDevice::CPU, "a heap address is host memory"),
        Err(e) => assert_eq!(e.status(), DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN, "{e}"),
    }
    let e = pointer_device(0).unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_NULL_POINTER);
}

#[test]
fn stream_helpers_answer_without_a_driver() {
    use dlpack_helpers::rules::stream::{DecodeOptions, Kind};
    // CPU: no backend is needed, and none exists.
    let e = check_stream_backend(DLDeviceType::kDLCPU).unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE, "{e}");
    // SAFETY: kDLCPU has no streams: nothing is handed to a driver.
    unsafe { synchronize_stream(DLDevice::CPU, 0) }.unwrap();
    let none = decode_stream(DLDevice::CPU, None, DecodeOptions::default()).unwrap();
    assert_eq!(none.kind, Kind::None);
    // SAFETY: a `None` consumer stream: a no-op that loads no runtime.
    unsafe { wait_stream(DLDevice::CPU, 0, none) }.unwrap();
    // CUDA's legacy default stream: waits when a driver is present, else says why not.
    let legacy = decode_stream(DLDevice::cuda(0), Some(1), DecodeOptions::default()).unwrap();
    // Same stream (0 and 0x1 are both the legacy default): a no-op without any driver.
    // SAFETY: both handles are CUDA's legacy default stream.
    unsafe { wait_stream(DLDevice::cuda(0), 0, legacy) }.unwrap();
    // The per-thread default stream (0x2) waiting into the legacy one needs the driver.
    // SAFETY: both handles are CUDA's special default-stream values.
    match unsafe { wait_stream(DLDevice::cuda(0), 2, legacy) } {
        Ok(()) => {}
        Err(e) => assert_eq!(e.status(), DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE, "{e}"),
    }
}

#[test]
fn strided_views_are_read_in_row_major_order() {
    let values: Vec<f32> = (0..6).map(|i| i as f32).collect(); // [[0, 1, 2], [3, 4, 5]]
    let t = Managed::from_owner(values, &[3, 2], Some(&[1, 3])).unwrap(); // the transpose
    assert!(t.as_slice::<f32>().is_err());
    assert_eq!(
        t.to_vec::<f32>().unwrap(),
        vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    );
    let b = Managed::from_owner(vec![7i64, 8], &[3, 2], Some(&[0, 1])).unwrap(); // broadcast
    assert_eq!(b.to_vec::<i64>().unwrap(), vec![7, 8, 7, 8, 7, 8]);
    let empty = Managed::from_vec(Vec::<u8>::new(), &[0, 4]).unwrap();
    assert!(empty.to_vec::<u8>().unwrap().is_empty());
    let scalar = Managed::from_vec(vec![9u16], &[]).unwrap();
    assert_eq!(scalar.to_vec::<u16>().unwrap(), vec![9]);
    let e = t.to_vec::<f64>().unwrap_err();
    assert_eq!(e.status(), DLPACK_HELPERS_STATUS_DTYPE_MISMATCH);
}

#[test]
fn case_59_dim_order_of_a_view_puts_extent_one_last() {
    // A (3, 1, 4) float view whose extent-1 dimension has stride 1, like the innermost one
    // (cutlass#3031): the order is innermost first, the extent-1 dimension last.
    let shape = [3i64, 1, 4];
    let strides = [4i64, 1, 1];
    let data = [0f32; 12];
    let t = DLTensor {
        data: data.as_ptr().cast_mut().cast(),
        device: DLDevice::CPU,
        ndim: 3,
        dtype: DLDataType::F32,
        shape: shape.as_ptr().cast_mut(),
        strides: strides.as_ptr().cast_mut(),
        byte_offset: 0,
    };
    // SAFETY: shape and strides hold ndim elements, data 12 floats alive for the view.
    let v = unsafe { TensorRef::from_dltensor(&t) }.unwrap();
    assert_eq!(v.dim_order().unwrap(), [2, 0, 1]);
    let implied = DLTensor {
        strides: std::ptr::null_mut(),
        ..t
    };
    // SAFETY: as above.
    let v = unsafe { TensorRef::from_dltensor(&implied) }.unwrap();
    assert_eq!(v.dim_order().unwrap(), [2, 0, 1]);
}
