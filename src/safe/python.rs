//! The `pyo3` feature: [`Managed`] to and from Python objects, for PyO3 extension modules.
//!
//! - Import: [`Managed::from_pyobject`] / [`Managed::import_pyobject`] take any object with
//!   `__dlpack__` (NumPy, PyTorch, CuPy, JAX, …) or a raw DLPack capsule, through the same
//!   exports the `dlpack_helpers` Python package uses (`dlpack_object_import`,
//!   `dlpack_capsule_import`), so the rules are the package's: `max_version` always passed and
//!   retried without it on `TypeError` (peer cases 18, 21), the capsule renamed before anything
//!   can fail (peer case 1), the major checked (peer case 20), a legacy tensor read-only unless
//!   asserted writable (writability by provenance, peer case 50), the producer's exception
//!   propagated unchanged (`DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`), and the DLPack 1.3 C
//!   exchange API used when the producer's type publishes one and no `stream`/`dl_device`/`copy`
//!   is asked.
//! - Export: [`Managed::into_capsule`] (a `"dltensor_versioned"` capsule owning the tensor,
//!   `dlpack_capsule_new`) and [`DLPackExport`], a Python object with `__dlpack__(*, stream,
//!   max_version, dl_device, copy)` and `__dlpack_device__()` that any `from_dlpack` accepts,
//!   any number of times (each export shares the tensor; it is released when the last export
//!   and the object are gone).
//!
//! Errors become the exception [`Error::python_exception`] names (`BufferError`,
//! `TypeError`, …) with the message; `From<Error> for PyErr` lets `?` do it in a `#[pyfunction]`.
//!
//! # Process-wide state: this copy and the package's
//!
//! A Rust extension built with this crate contains its own copy of the library (the rlib is
//! linked statically; cargo cannot link the package's `libdlpack_helpers.so` as a Rust
//! dependency). Tensors and capsules cross freely between the copies and any other DLPack code:
//! a tensor carries its own deleter, capsules follow the standard names and destructor rules,
//! and both copies find the same CPython, CUDA, HIP and Level Zero libraries in the process.
//! What each copy keeps for itself:
//!
//! | state | per copy | consequence |
//! |---|---|---|
//! | stream backends (`dlpack_stream_backend_register`) | yes | register a backend in the copy that uses it: one registered through the package (or a C extension linked to `libdlpack_helpers.so`) is not seen by this crate, and the other way round |
//! | Level Zero context (`dlpack_level_zero_context_set`) | yes | set it in this copy too if this crate classifies `kDLOneAPI` pointers |
//! | exchange-API cache (per producer type) | yes | each copy checks a type's `__dlpack_c_exchange_api__` once: a cost, not a behaviour change |
//! | runtime loaders (CUDA driver, HIP, Level Zero, CPython C API) | yes | each copy loads them once; the runtimes themselves (contexts, streams) are the process's, shared |
//! | last error message (thread-local) | yes | never read across copies: [`Error`] carries its message |
//!
//! Nothing else is global. An extension that needs one registry with the package (its own
//! stream backend used by the package's `import_tensor`, say) calls the package's shared
//! library through its C API instead (`python/native/build.rs` shows the link).
//! `tests/pyo3-extension/` builds an extension with this feature and tests it against NumPy
//! and, when present, PyTorch.

use super::error::Error;
use super::managed::Managed;
use crate::abi::{DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion};
use crate::capi::convert::DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE;
use crate::capi::error::{DLPACK_HELPERS_STATUS_OK, DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET};
use crate::capi::python::capsule::{
    dlpack_capsule_import, dlpack_capsule_new, dlpack_legacy_capsule_new,
};
use crate::capi::python::import::{
    DLPACK_HELPERS_IMPORT_EXCHANGE_API, DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR,
    DLPACK_HELPERS_IMPORTED_AFTER_RETRY, DLPACK_HELPERS_IMPORTED_EXCHANGE_API,
    DLPACK_HELPERS_IMPORTED_LEGACY, dlpack_helpers_import_request, dlpack_object_import,
};
use crate::capi::stream::{
    DLPACK_HELPERS_COPY_ALWAYS, DLPACK_HELPERS_COPY_IF_NEEDED, DLPACK_HELPERS_COPY_NEVER,
};
use crate::rules::stream::{CopyMode, DecodeOptions, Request};
use crate::rules::version::{Export, Exporter};
use core::ffi::c_void;
use pyo3::exceptions::{
    PyAttributeError, PyBufferError, PyMemoryError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::sync::Arc;

/// Raised as the exception the array API prescribes for the status (`Error::python_exception`),
/// with `Display`'s text (`message [STATUS_NAME]`).
impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        let m = e.to_string();
        match e.python_exception() {
            "BufferError" => PyBufferError::new_err(m),
            "TypeError" => PyTypeError::new_err(m),
            "ValueError" => PyValueError::new_err(m),
            "AttributeError" => PyAttributeError::new_err(m),
            "MemoryError" => PyMemoryError::new_err(m),
            _ => PyRuntimeError::new_err(m),
        }
    }
}

/// The arguments of an import ([`Managed::import_pyobject`]); `Default` is `from_dlpack(obj)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportOptions {
    /// `max_version=`: `None` for this library's newest (1.3). Always passed (peer case 18).
    pub max_version: Option<DLPackVersion>,
    /// `stream=`: the array API's stream integer for the producer's device; `None` passes
    /// nothing.
    pub stream: Option<i64>,
    /// `dl_device=`: passed when `Some`.
    pub dl_device: Option<DLDevice>,
    /// `copy=`: `None` (not passed), `Some(true)`, `Some(false)`.
    pub copy: Option<bool>,
    /// Take the tensor from the producer type's C exchange API (DLPack 1.3) when it has one and
    /// no `stream`, `dl_device` or `copy` is asked. Default `true`, as the package.
    pub use_exchange_api: bool,
    /// Assert that a legacy tensor's memory may be written (the legacy struct cannot say; by
    /// default it becomes `READ_ONLY`: peer case 50). Default `false`.
    pub legacy_writable: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            max_version: None,
            stream: None,
            dl_device: None,
            copy: None,
            use_exchange_api: true,
            legacy_writable: false,
        }
    }
}

/// An imported tensor and how it came (`DLPACK_HELPERS_IMPORTED_*`).
#[derive(Debug)]
pub struct Imported {
    /// The tensor, owned: released once when dropped.
    pub tensor: Managed,
    /// The producer handed a legacy `DLManagedTensor` (converted; `READ_ONLY` unless
    /// `legacy_writable`).
    pub legacy: bool,
    /// The producer refused `max_version` with `TypeError` and was called again without it.
    pub after_retry: bool,
    /// The tensor came through the producer type's C exchange API.
    pub exchange_api: bool,
}

impl Managed {
    /// `from_dlpack(obj)`: import any object with `__dlpack__`, or a DLPack capsule, with the
    /// default [`ImportOptions`]. See [`Managed::import_pyobject`].
    pub fn from_pyobject(obj: &Bound<'_, PyAny>) -> PyResult<Managed> {
        Ok(Managed::import_pyobject(obj, &ImportOptions::default())?.tensor)
    }

    /// Import any object with `__dlpack__` (or a raw `"dltensor"`/`"dltensor_versioned"`
    /// capsule, which is consumed) as the package's `import_tensor` does; the result is then
    /// adopted as [`Managed::from_raw`] does (major 1, every DLPack rule; a refused tensor is
    /// released).
    ///
    /// Errors: the producer's own exception, unchanged, when it raised (also the
    /// `AttributeError` of a missing `__dlpack__`); `TypeError` for a capsule together with
    /// `max_version`/`stream`/`dl_device`/`copy`; otherwise the exception of the status
    /// (`BufferError` for `UNSUPPORTED_VERSION`, validation failures, …). Holds the GIL
    /// (`obj`'s `Python` token).
    pub fn import_pyobject(obj: &Bound<'_, PyAny>, options: &ImportOptions) -> PyResult<Imported> {
        let py = obj.py();
        let mut flags = DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR;
        if options.use_exchange_api {
            flags |= DLPACK_HELPERS_IMPORT_EXCHANGE_API;
        }
        if options.legacy_writable {
            flags |= DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE;
        }
        let mut out: *mut DLManagedTensorVersioned = core::ptr::null_mut();
        let mut how = 0u32;
        let status = if obj.is_instance_of::<PyCapsule>() {
            if options.max_version.is_some()
                || options.stream.is_some()
                || options.dl_device.is_some()
                || options.copy.is_some()
            {
                return Err(PyTypeError::new_err(
                    "a DLPack capsule was passed together with max_version, stream, dl_device \
                     or copy, which only apply to __dlpack__; pass the producer instead",
                ));
            }
            // The exchange API belongs to `__dlpack__` producers, not to a capsule.
            let flags = flags & !DLPACK_HELPERS_IMPORT_EXCHANGE_API;
            // SAFETY: a borrowed capsule, valid out-pointers, the GIL held (`py`).
            unsafe { dlpack_capsule_import(obj.as_ptr().cast(), flags, &mut out, &mut how) }
        } else {
            let stream = options.stream.map(|s| s.into_pyobject(py)).transpose()?;
            let req = dlpack_helpers_import_request {
                max_version: options.max_version.unwrap_or(DLPackVersion::new(0, 0)),
                stream: stream
                    .as_ref()
                    .map_or(core::ptr::null_mut(), |s| s.as_ptr().cast::<c_void>()),
                has_dl_device: options.dl_device.is_some(),
                dl_device: options.dl_device.unwrap_or_default(),
                copy: match options.copy {
                    None => DLPACK_HELPERS_COPY_IF_NEEDED,
                    Some(true) => DLPACK_HELPERS_COPY_ALWAYS,
                    Some(false) => DLPACK_HELPERS_COPY_NEVER,
                },
                flags,
            };
            // SAFETY: `obj` and `stream` are live objects for the call, the request and the
            // out-pointers are valid, the GIL is held.
            unsafe { dlpack_object_import(obj.as_ptr().cast(), &req, &mut out, &mut how) }
        };
        if status == DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET {
            // The producer's exception (or a BaseException), left set for us: raise it as is.
            return Err(PyErr::fetch(py));
        }
        if status != DLPACK_HELPERS_STATUS_OK {
            return Err(Error::last(status).into());
        }
        // SAFETY: on OK the caller owns `out`, a live versioned tensor of major 1.
        let tensor = unsafe { Managed::from_raw(out) }?;
        Ok(Imported {
            tensor,
            legacy: how & DLPACK_HELPERS_IMPORTED_LEGACY != 0,
            after_retry: how & DLPACK_HELPERS_IMPORTED_AFTER_RETRY != 0,
            exchange_api: how & DLPACK_HELPERS_IMPORTED_EXCHANGE_API != 0,
        })
    }

    /// Hand the tensor to Python as a `"dltensor_versioned"` capsule (`dlpack_capsule_new`):
    /// the capsule owns it; its destructor releases it unless a consumer took it (renaming the
    /// capsule `used_dltensor_versioned`), and then the consumer releases it. Errors:
    /// `RuntimeError` when Python cannot make the capsule (the tensor is released).
    pub fn into_capsule(self, py: Python<'_>) -> PyResult<Bound<'_, PyCapsule>> {
        let mut cap: *mut c_void = core::ptr::null_mut();
        // SAFETY: an owned live tensor; on OK the capsule owns it. GIL held (`py`).
        let s = unsafe { dlpack_capsule_new(self.as_raw(), &mut cap) };
        if s != DLPACK_HELPERS_STATUS_OK {
            return Err(Error::last(s).into());
        }
        core::mem::forget(self);
        // SAFETY: a new reference to a capsule.
        let any = unsafe { Bound::from_owned_ptr(py, cap.cast()) };
        Ok(any.cast_into::<PyCapsule>()?)
    }

    /// Wrap as a Python object with `__dlpack__` and `__dlpack_device__` ([`DLPackExport`]).
    pub fn into_pyobject_export(self, py: Python<'_>) -> PyResult<Bound<'_, DLPackExport>> {
        Bound::new(
            py,
            DLPackExport {
                tensor: Arc::new(self),
            },
        )
    }
}

/// `obj.__dlpack_device__()` as a [`DLDevice`] (`dlpack_object_query_device`), for choosing the
/// `stream`/`dl_device` of an import: the producer's own exception is raised unchanged;
/// `TypeError` when the result is not a pair of ints in `int32` range.
pub fn dlpack_device(obj: &Bound<'_, PyAny>) -> PyResult<DLDevice> {
    let mut d = DLDevice::default();
    // SAFETY: a live object, a valid out-pointer, the GIL held.
    let s = unsafe {
        crate::capi::python::import::dlpack_object_query_device(
            obj.as_ptr().cast(),
            DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR,
            &mut d,
        )
    };
    if s == DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET {
        return Err(PyErr::fetch(obj.py()));
    }
    if s != DLPACK_HELPERS_STATUS_OK {
        return Err(Error::last(s).into());
    }
    Ok(d)
}

/// A Python object exporting a [`Managed`] tensor through the DLPack protocol:
/// `__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)` and
/// `__dlpack_device__()`, so `numpy.from_dlpack(x)`, `torch.from_dlpack(x)` and the package's
/// `import_tensor(x)` accept it.
///
/// Each `__dlpack__` call exports a new managed tensor sharing the memory ([`Managed::share`]):
/// the tensor is released when this object and every export are gone. The request is resolved
/// as `dlpack_export_request_resolve` does: `max_version` negotiation (a `"dltensor_versioned"`
/// capsule, or the legacy `"dltensor"` one for a consumer without `max_version`; a read-only
/// tensor is never exported as legacy: `BufferError`), the `stream` integer checked for the
/// device (`ValueError` for a value the array API forbids), `dl_device` other than the
/// tensor's refused (`BufferError`), `copy=True` refused (`BufferError`: this object shares
/// memory, it does not copy). No stream work is done: wrap device memory only when it is ready
/// for every stream.
#[pyclass(frozen, module = "dlpack_helpers", name = "DLPackExport")]
pub struct DLPackExport {
    tensor: Arc<Managed>,
}

#[pymethods]
impl DLPackExport {
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let stream = match stream {
            None => None,
            Some(s) if s.is_none() => None,
            Some(s) => {
                if s.is_instance_of::<pyo3::types::PyBool>() {
                    return Err(PyTypeError::new_err(
                        "stream must be an int or None, not bool",
                    ));
                }
                Some(s.extract::<i64>()?)
            }
        };
        let device = self.tensor.view().device();
        let request = Request {
            max_version: max_version.map(|(a, b)| DLPackVersion::new(a, b)),
            stream,
            dl_device: dl_device.map(|(t, i)| DLDevice::new(DLDeviceType(t), i)),
            copy: match copy {
                None => CopyMode::IfNeeded,
                Some(true) => CopyMode::Always,
                Some(false) => CopyMode::Never,
            },
        };
        let producer = Exporter {
            version: DLPackVersion::CURRENT,
            exports_legacy: true,
            no_max_version_keyword: false,
        };
        let plan = super::resolve_export(device, producer, &request, DecodeOptions::default())?;
        if plan.copy {
            return Err(PyBufferError::new_err(
                "copy=True (or a dl_device that needs a copy) was requested, but this object \
                 shares its tensor's memory and does not copy",
            ));
        }
        let shared = Managed::share(&self.tensor)?;
        match plan.export {
            Export::Versioned(_) => shared.into_capsule(py),
            Export::Legacy => {
                let legacy = shared.into_legacy(false)?;
                let mut cap: *mut c_void = core::ptr::null_mut();
                // SAFETY: an owned legacy tensor; on OK the capsule owns it. GIL held.
                let s = unsafe { dlpack_legacy_capsule_new(legacy.as_raw(), &mut cap) };
                if s != DLPACK_HELPERS_STATUS_OK {
                    return Err(Error::last(s).into());
                }
                let _ = legacy.into_raw();
                // SAFETY: a new reference to a capsule.
                let any = unsafe { Bound::from_owned_ptr(py, cap.cast()) };
                Ok(any.cast_into::<PyCapsule>()?)
            }
        }
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        let d = self.tensor.view().device();
        (d.device_type.0, d.device_id)
    }
}
