//! Using dlpack-helpers from Rust: the crate's safe API (`dlpack_helpers::rules`) on the DLPack
//! mirrors in `dlpack_helpers::abi`, in another Rust program.
//!
//! A producer exports a `Vec<f64>` as a `DLManagedTensorVersioned` after negotiating the version
//! the way `__dlpack__(max_version=…)` does; the consumer wraps the raw pointer in an owner that
//! releases it exactly once (on drop, through the same `dlpack_tensor_delete` C users call),
//! checks the version, decides host access from the device type, and reads the elements.
//!
//! Run: `cargo run --release --example rust_consumer` (it exits non-zero if a step misbehaves).

use dlpack_helpers::abi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion,
    DLTensor,
};
use dlpack_helpers::rules::device::{HostAccess, host_access, is_cpu_accessible};
use dlpack_helpers::rules::version::{self, Compat, Export, Exporter};
use dlpack_helpers::rules::{Error, info};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

static RELEASED: AtomicUsize = AtomicUsize::new(0);

// ---- producer -------------------------------------------------------------------------------

/// Everything the exported tensor points into; `manager_ctx` is this box.
struct Exported {
    managed: DLManagedTensorVersioned,
    values: Vec<f64>,
    shape: [i64; 1],
    strides: [i64; 1],
}

unsafe extern "C" fn exported_deleter(tensor: *mut DLManagedTensorVersioned) {
    RELEASED.fetch_add(1, Ordering::SeqCst);
    // SAFETY: `manager_ctx` is the `Box<Exported>` leaked in `export`, released once by contract.
    drop(unsafe { Box::from_raw((*tensor).manager_ctx.cast::<Exported>()) });
}

/// Export `values` for a consumer that reads up to `max_version` (`None`: `max_version=None`).
fn export(
    values: Vec<f64>,
    max_version: Option<DLPackVersion>,
) -> Result<*mut DLManagedTensorVersioned, Error> {
    let producer = Exporter {
        version: DLPackVersion::CURRENT,
        exports_legacy: false,
        no_max_version_keyword: false,
    };
    let Export::Versioned(v) = version::negotiate(producer, max_version)? else {
        unreachable!("this producer does not export the legacy struct");
    };
    let n = values.len() as i64;
    let mut e = Box::new(Exported {
        managed: DLManagedTensorVersioned {
            version: v,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(exported_deleter),
            flags: 0,
            dl_tensor: DLTensor {
                data: std::ptr::null_mut(),
                device: DLDevice {
                    device_type: DLDeviceType::kDLCPU,
                    device_id: 0,
                },
                ndim: 1,
                dtype: DLDataType {
                    code: DLDataTypeCode::kDLFloat.0,
                    bits: 64,
                    lanes: 1,
                },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
        values,
        shape: [n],
        strides: [1],
    });
    e.managed.dl_tensor.data = e.values.as_mut_ptr().cast::<c_void>();
    e.managed.dl_tensor.shape = e.shape.as_mut_ptr();
    e.managed.dl_tensor.strides = e.strides.as_mut_ptr();
    let raw = Box::into_raw(e);
    // SAFETY: `raw` is a live box; the tensor records it as its context and points into it.
    unsafe {
        (*raw).managed.manager_ctx = raw.cast::<c_void>();
        Ok(&raw mut (*raw).managed)
    }
}

// ---- consumer -------------------------------------------------------------------------------

/// Owns a received tensor: its deleter runs exactly once, when the owner is dropped.
struct Owned(NonNull<DLManagedTensorVersioned>);

impl Owned {
    /// # Safety
    /// `tensor` is a live managed tensor whose ownership moves to the returned value.
    unsafe fn adopt(tensor: *mut DLManagedTensorVersioned) -> Option<Owned> {
        NonNull::new(tensor).map(Owned)
    }
    fn version(&self) -> DLPackVersion {
        // SAFETY: `version` is readable in a tensor of every major (DLPack 1.0).
        unsafe { self.0.as_ref().version }
    }
    /// The tensor, only once its major version is one this library reads.
    fn tensor(&self) -> Result<(&DLTensor, Compat), Error> {
        let compat = version::check(self.version(), "tensor->version")?;
        // SAFETY: major 1: the layout is the one `abi` mirrors.
        Ok((unsafe { &self.0.as_ref().dl_tensor }, compat))
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: we own the tensor; `dlpack_tensor_delete` reads only the deleter, which is
        // safe for any major, and calls it once.
        unsafe { dlpack_helpers::capi::tensor::dlpack_tensor_delete(self.0.as_ptr()) }
    }
}

fn sum(owned: &Owned) -> Result<f64, String> {
    let (t, compat) = owned.tensor().map_err(|e| e.to_string())?;
    if !is_cpu_accessible(t.device) {
        return Err(format!(
            "device type {} is not host memory ({:?})",
            t.device.device_type.0,
            host_access(t.device.device_type)
        ));
    }
    if t.ndim != 1
        || t.dtype
            != (DLDataType {
                code: DLDataTypeCode::kDLFloat.0,
                bits: 64,
                lanes: 1,
            })
    {
        return Err("expected a 1-d float64 tensor".into());
    }
    // SAFETY: a 1-d CPU tensor of major 1: shape and strides hold one element each (strides are
    // in elements, never NULL from DLPack 1.2 on), data + byte_offset is the first element.
    let (n, stride, base) = unsafe {
        (
            *t.shape,
            *t.strides,
            t.data
                .cast::<u8>()
                .add(t.byte_offset as usize)
                .cast::<f64>(),
        )
    };
    println!(
        "consumer: DLPack {}.{} ({compat:?}), {n} elements",
        owned.version().major,
        owned.version().minor
    );
    // SAFETY: every index is inside the tensor described above.
    Ok((0..n)
        .map(|i| unsafe { *base.offset((i * stride) as isize) })
        .sum())
}

fn main() {
    let lib = info::info(0); // capability bits are a C-API matter; 0 here
    println!(
        "dlpack-helpers {} reads DLPack {}.{}",
        lib.version, lib.dlpack_version.major, lib.dlpack_version.minor
    );
    assert_eq!(host_access(DLDeviceType::kDLCUDA), HostAccess::Never);
    assert_eq!(host_access(DLDeviceType::kDLOneAPI), HostAccess::Depends);

    // A consumer reading up to DLPack 1.0 gets the producer's 1.3 (same major).
    let raw = export(
        (1..=10).map(f64::from).collect(),
        Some(DLPackVersion::new(1, 0)),
    )
    .expect("export");
    // SAFETY: `raw` was just exported for us.
    let owned = unsafe { Owned::adopt(raw) }.expect("non-NULL");
    assert_eq!(sum(&owned), Ok(55.0));
    drop(owned);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 1);

    // max_version=None from a producer without the legacy struct: BufferError, nothing exported.
    let err = export(vec![1.0], None).unwrap_err();
    println!("producer refused: {err}");
    assert!(matches!(err, Error::NoCommonVersion(_)));

    // A future major: refused, and only the deleter runs (when the owner drops).
    let raw = export(vec![1.0, 2.0], Some(DLPackVersion::CURRENT)).expect("export");
    // SAFETY: `raw` is live and ours; we pretend it came from a DLPack 2 producer.
    unsafe { (*raw).version.major = 2 };
    // SAFETY: `raw` is a live managed tensor that nothing else owns: `Owned` releases it once.
    let owned = unsafe { Owned::adopt(raw) }.expect("non-NULL");
    let refused = sum(&owned).unwrap_err();
    println!("consumer refused: {refused}");
    drop(owned);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 2);
    println!("rust_consumer: ok");
}
