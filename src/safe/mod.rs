//! The safe Rust API: owners, views, errors and every helper as a safe function.
//!
//! This part sits on top of [`crate::capi`] (the C exports) and calls them, so Rust and C
//! callers share one implementation of every rule: [`Managed`] releases through
//! `dlpack_tensor_delete`, [`Managed::from_raw`] checks the major version as
//! `dlpack_tensor_check_version_or_delete` does, producers are built with
//! `dlpack_tensor_create`, and the `pyo3` feature imports through `dlpack_object_import`. Every
//! fallible function returns [`Result<_, Error>`](Error): the C status code and its message.
//!
//! Everything here is re-exported at the crate root (`dlpack_helpers::Managed`, …). The lower
//! parts stay public for what they add: [`crate::abi`] (the structs, with constants such as
//! [`DLDataType::F32`] and [`DLDevice::CPU`]) and [`crate::rules`] (the rules as pure
//! functions on [`crate::rules::layout::TensorView`], which [`TensorRef`] dereferences to).
//!
//! Layer: `safe` → `capi` → `host` → `rules` → `abi` (`tests/layers.rs`).

mod element;
mod error;
mod managed;
#[cfg(feature = "pyo3")]
mod python;
mod view;

pub use element::Element;
pub use error::{Error, Result};
pub use managed::{LegacyManaged, Managed};
#[cfg(feature = "pyo3")]
pub use python::{DLPackExport, ImportOptions, Imported, dlpack_device};
pub use view::TensorRef;

use crate::abi::{DLDataType, DLDevice, DLPackVersion};
use crate::rules::device::HostAccess;
use crate::rules::info::Info;
/// A dtype's or device's name, as `dtype_name` and `device_name` return it.
pub use crate::rules::names::Name;
use crate::rules::stream::{DecodeOptions, Plan, Request, Stream};
use crate::rules::version::{Compat, Export, Exporter};

/// What this library is: its version, the DLPack version it reads, and the capability bits of
/// `dlpack_get_info` (`rules::info::CAP_*`: stream backends, pointer queries, Python found in
/// the process). Never fails.
pub fn info() -> Info {
    crate::rules::info::info(crate::capi::info::capabilities())
}

/// Check a producer's DLPack version: `Compat::Exact`/`OlderMinor`/`NewerMinor` for major 1;
/// `UNSUPPORTED_VERSION` for any other major (`dlpack_version_check`).
pub fn check_version(version: DLPackVersion) -> Result<Compat> {
    Ok(crate::rules::version::check(version, "version")?)
}

/// The array API's producer logic for `__dlpack__(max_version=…)` (`dlpack_version_negotiate`):
/// which struct to export for a consumer reading up to `max_version` (`None`: the keyword was
/// not passed). `NO_COMMON_VERSION` (Python `BufferError`) or `KEYWORD_NOT_UNDERSTOOD`
/// (`TypeError`: the consumer retries without the keyword).
pub fn negotiate(producer: Exporter, max_version: Option<DLPackVersion>) -> Result<Export> {
    Ok(crate::rules::version::negotiate(producer, max_version)?)
}

/// Decode the array API's `stream=` integer for `device` (`None`: `stream=None`), as
/// `dlpack_stream_decode`: CUDA `1` legacy default, `2` per-thread, `-1` no sync, a handle
/// otherwise, `0` refused; ROCm `0` default; CPU only `None` (unless `options.lenient_cpu`).
/// `INVALID_STREAM` with the rule broken.
pub fn decode_stream(
    device: DLDevice,
    stream: Option<i64>,
    options: DecodeOptions,
) -> Result<Stream> {
    Ok(crate::rules::stream::decode(device, stream, options)?)
}

/// The `stream=` integer a consumer passes for a native stream handle on `device`
/// (`dlpack_stream_encode`; `None` means pass `stream=None`). `INVALID_STREAM`.
pub fn encode_stream(device: DLDevice, native_handle: usize) -> Result<Option<i64>> {
    Ok(crate::rules::stream::encode(device, native_handle)?)
}

/// A producer's whole `__dlpack__` request → export plan (`dlpack_export_request_resolve`):
/// version, target device, copy and synchronisation. Statuses: those of [`negotiate`] and
/// [`decode_stream`], `UNSUPPORTED_DEVICE`, `COPY_FORBIDDEN` (`copy=False` but a copy is
/// needed: `BufferError`, peer case 47).
pub fn resolve_export(
    tensor_device: DLDevice,
    producer: Exporter,
    request: &Request,
    options: DecodeOptions,
) -> Result<Plan> {
    Ok(crate::rules::stream::resolve(
        tensor_device,
        producer,
        request,
        options,
    )?)
}

/// The name of a dtype (`float32`, `bfloat16`, `int8x4`); `INVALID_DTYPE` for one that does
/// not validate. `DLDataType`'s `Display` prints the same name.
pub fn dtype_name(dtype: DLDataType) -> Result<Name> {
    Ok(crate::rules::names::dtype_name(dtype)?)
}

/// Parse a dtype name (`"float32"`, `"uint8"`, `"bool"`, `"float8_e4m3fn"`, `"int8x4"`);
/// `UNKNOWN_NAME`.
pub fn parse_dtype(name: &str) -> Result<DLDataType> {
    Ok(crate::rules::names::parse_dtype(name)?)
}

/// The name of a device (`cpu:0`, `cuda:1`); `UNKNOWN_NAME` or `INVALID_ARGUMENT` (negative
/// id). `DLDevice`'s `Display` prints the same name.
pub fn device_name(device: DLDevice) -> Result<Name> {
    Ok(crate::rules::names::device_name(device)?)
}

/// Parse `"cpu"`, `"cuda:1"`, …; `UNKNOWN_NAME`.
pub fn parse_device(name: &str) -> Result<DLDevice> {
    Ok(crate::rules::names::parse_device(name)?)
}

/// How the host can reach memory of `device`'s type: `Always` (CPU, CUDA host, ROCm host,
/// CUDA managed), `Never`, or `Depends` (ask the runtime about the pointer).
pub fn host_access(device: DLDevice) -> HostAccess {
    crate::rules::device::host_access(device.device_type)
}

/// Compact strides (in elements) for `shape`, row-major when `c_order`, else column-major
/// (`dlpack_compact_strides`). `INVALID_NDIM`, `INVALID_SHAPE`, `OVERFLOW`.
pub fn compact_strides(shape: &[i64], c_order: bool) -> Result<Vec<i64>> {
    let mut out = vec![0; shape.len()];
    crate::rules::layout::compact_strides(shape, c_order, &mut out)?;
    Ok(out)
}

/// The device that owns the memory at `address`, asked of the CUDA, HIP and Level Zero drivers
/// loaded in the process (`dlpack_pointer_get_device`): CUDA pinned host memory is
/// `(kDLCUDAHost, 0)`, device memory `(kDLCUDA, ordinal)`, …; `(kDLCPU, 0)` only when a backend
/// was asked and none claims it. Errors: `DEVICE_UNKNOWN` (no backend could answer: a device is
/// never guessed), `DEVICE_ERROR`, `NULL_POINTER` (address 0). Any address may be asked: the
/// drivers look it up, nothing is read at it.
pub fn pointer_device(address: usize) -> Result<DLDevice> {
    let mut d = DLDevice::default();
    // SAFETY: the export reads nothing at `address` (the drivers look it up) and writes `d`.
    let s = unsafe { crate::capi::stream::dlpack_pointer_get_device(address as *const _, &mut d) };
    if s != crate::capi::error::DLPACK_HELPERS_STATUS_OK {
        return Err(Error::last(s));
    }
    Ok(d)
}

fn check(status: i32) -> Result<()> {
    if status == crate::capi::error::DLPACK_HELPERS_STATUS_OK {
        Ok(())
    } else {
        Err(Error::last(status))
    }
}

/// Load and initialise the stream backend for `device_type` now and say whether it works
/// (`dlpack_stream_backend_check`): CUDA for `kDLCUDA`/`kDLCUDAHost`/`kDLCUDAManaged`, HIP for
/// `kDLROCM`/`kDLROCMHost`, or a backend registered in this copy of the library. Errors:
/// `BACKEND_UNAVAILABLE` with the library and the reason (also for `kDLCPU`, which needs none).
pub fn check_stream_backend(device_type: crate::abi::DLDeviceType) -> Result<()> {
    // SAFETY: a plain query; it takes no pointer.
    check(unsafe { crate::capi::stream::dlpack_stream_backend_check(device_type) })
}

/// Make the consumer's stream wait, without blocking the host, for the work queued so far on the
/// producer's stream (`dlpack_stream_wait`): what a producer does for `__dlpack__(stream=…)`.
/// `consumer` comes from [`decode_stream`] or [`resolve_export`]'s plan; `producer_stream` is the
/// producer's native handle (`CUstream`, `hipStream_t`; 0 for the default stream). Nothing
/// happens, and no runtime is loaded, for a `NoSync`/`None` consumer or when both name the same
/// stream. Errors: `BACKEND_UNAVAILABLE`, `DEVICE_ERROR` (the driver's error, named),
/// `INVALID_STREAM_TYPE`, `INVALID_STREAM`.
///
/// # Safety
/// Both handles are live streams of `device`'s runtime (or the special values a decode gives,
/// such as CUDA's 0x1/0x2): the library hands them to the driver, which cannot check them.
pub unsafe fn wait_stream(
    device: DLDevice,
    producer_stream: usize,
    consumer: Stream,
) -> Result<()> {
    let c = crate::capi::stream::dlpack_helpers_stream {
        kind: consumer.kind.as_raw(),
        handle: consumer.handle as *mut core::ffi::c_void,
    };
    // SAFETY: the caller's contract for the handles; `c` lives for the call.
    check(unsafe { crate::capi::stream::dlpack_stream_wait(device, producer_stream as *mut _, &c) })
}

/// Block the host until the work queued on `stream` (a native handle; 0 for the default
/// stream) of `device` is done (`dlpack_stream_synchronize`); nothing for `kDLCPU`. Errors:
/// `BACKEND_UNAVAILABLE`, `DEVICE_ERROR`.
///
/// # Safety
/// `stream` is a live stream of `device`'s runtime (or 0, or a special value a decode gives).
pub unsafe fn synchronize_stream(device: DLDevice, stream: usize) -> Result<()> {
    // SAFETY: the caller's contract.
    check(unsafe { crate::capi::stream::dlpack_stream_synchronize(device, stream as *mut _) })
}
