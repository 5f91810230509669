//! `dlpack_rs_ext`: a PyO3 extension that exchanges tensors through dlpack-helpers' safe API
//! (`pyo3` feature). One `unsafe` block (writing a producer's memory in place, where only the
//! caller can promise that nothing else touches it); `#![deny(unsafe_code)]` checks the rest.
#![deny(unsafe_code)]

use dlpack_helpers::{
    DLDevice, DLDeviceType, DLPackExport, DLPackVersion, Error, ImportOptions, Managed, TensorRef,
};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Owners dropped by tensors this module produced (each exactly once).
static DROPS: AtomicUsize = AtomicUsize::new(0);

/// Rust storage that counts its drop.
struct Counted(Vec<f64>);

impl AsMut<[f64]> for Counted {
    fn as_mut(&mut self) -> &mut [f64] {
        &mut self.0
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

fn arange(n: usize) -> Result<Managed, Error> {
    Managed::from_owner_mut(
        Counted((0..n).map(|i| i as f64).collect()),
        &[n as i64],
        None,
    )
}

/// How many owners this module's tensors have dropped so far.
#[pyfunction]
fn drops() -> usize {
    DROPS.load(Ordering::SeqCst)
}

/// A `"dltensor_versioned"` capsule owning `[0.0, 1.0, …]` (float64, n elements).
#[pyfunction]
fn arange_capsule(py: Python<'_>, n: usize) -> PyResult<Bound<'_, PyCapsule>> {
    arange(n)?.into_capsule(py)
}

/// An object with `__dlpack__` / `__dlpack_device__` exporting `[0.0, 1.0, …]`.
#[pyfunction]
fn arange_export(py: Python<'_>, n: usize) -> PyResult<Bound<'_, DLPackExport>> {
    arange(n)?.into_pyobject_export(py)
}

fn describe(v: &TensorRef<'_>) -> (String, String, Vec<i64>, Option<Vec<i64>>) {
    (
        v.dtype().to_string(),
        v.device().to_string(),
        v.shape().to_vec(),
        v.strides().map(<[i64]>::to_vec),
    )
}

/// Import `obj` (any `__dlpack__` object or a capsule) and describe it: (dtype, device, shape,
/// strides, version, read_only, legacy, after_retry, exchange_api).
#[pyfunction]
#[pyo3(signature = (obj, *, max_version=None, stream=None, copy=None, legacy_writable=false, use_exchange_api=true))]
#[allow(clippy::type_complexity)]
fn inspect(
    obj: &Bound<'_, PyAny>,
    max_version: Option<(u32, u32)>,
    stream: Option<i64>,
    copy: Option<bool>,
    legacy_writable: bool,
    use_exchange_api: bool,
) -> PyResult<(
    String,
    String,
    Vec<i64>,
    Option<Vec<i64>>,
    (u32, u32),
    bool,
    bool,
    bool,
    bool,
)> {
    let opts = ImportOptions {
        max_version: max_version.map(|(a, b)| DLPackVersion::new(a, b)),
        stream,
        copy,
        legacy_writable,
        use_exchange_api,
        ..ImportOptions::default()
    };
    let imported = Managed::import_pyobject(obj, &opts)?;
    let t = &imported.tensor;
    let v = t.view();
    let (dtype, device, shape, strides) = describe(&v);
    Ok((
        dtype,
        device,
        shape,
        strides,
        (t.version().major, t.version().minor),
        v.is_read_only(),
        imported.legacy,
        imported.after_retry,
        imported.exchange_api,
    ))
}

/// The sum of a float64 C-contiguous host tensor (imported, read through a slice, released).
#[pyfunction]
fn sum_f64(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    let t = Managed::from_pyobject(obj)?;
    Ok(t.as_slice::<f64>()?.iter().sum())
}

/// The elements of a float64 host tensor in row-major order, for any strides.
#[pyfunction]
fn to_list_f64(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    Ok(Managed::from_pyobject(obj)?.to_vec::<f64>()?)
}

/// Double a writable float64 tensor in place (a legacy or read-only one is `BufferError`);
/// `copy` and `dl_device` are passed to `__dlpack__` when given.
#[pyfunction]
#[pyo3(signature = (obj, *, copy=None, dl_device=None))]
fn double_in_place(
    obj: &Bound<'_, PyAny>,
    copy: Option<bool>,
    dl_device: Option<(i32, i32)>,
) -> PyResult<()> {
    let opts = ImportOptions {
        copy,
        dl_device: dl_device.map(|(t, i)| DLDevice::new(DLDeviceType(t), i)),
        ..ImportOptions::default()
    };
    let mut t = Managed::import_pyobject(obj, &opts)?.tensor;
    // The safe `as_mut_slice` refuses memory a producer shares; writing it needs the promise.
    #[allow(unsafe_code)]
    // SAFETY: the GIL is held for the whole loop and no Python code runs in it, so the producer
    // (NumPy, PyTorch) cannot touch the array meanwhile; nothing else holds this import.
    let elements = unsafe { t.as_mut_slice_unchecked::<f64>() }?;
    for x in elements {
        *x *= 2.0;
    }
    Ok(())
}

/// `obj.__dlpack_device__()` as `(device_type, device_id)`.
#[pyfunction]
fn device_of(obj: &Bound<'_, PyAny>) -> PyResult<(i32, i32)> {
    let d = dlpack_helpers::dlpack_device(obj)?;
    Ok((d.device_type.0, d.device_id))
}

/// Import `obj` and hand the same memory back as a new `__dlpack__` object (a round trip).
#[pyfunction]
fn reexport<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, DLPackExport>> {
    Managed::from_pyobject(obj)?.into_pyobject_export(obj.py())
}

#[pymodule]
fn dlpack_rs_ext(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(drops, m)?)?;
    m.add_function(wrap_pyfunction!(arange_capsule, m)?)?;
    m.add_function(wrap_pyfunction!(arange_export, m)?)?;
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(sum_f64, m)?)?;
    m.add_function(wrap_pyfunction!(double_in_place, m)?)?;
    m.add_function(wrap_pyfunction!(reexport, m)?)?;
    m.add_function(wrap_pyfunction!(device_of, m)?)?;
    m.add_function(wrap_pyfunction!(to_list_f64, m)?)?;
    m.add_class::<DLPackExport>()?;
    Ok(())
}
