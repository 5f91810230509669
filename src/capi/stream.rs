//! Stream exchange: the C counterparts of `__dlpack__(stream=…, max_version=…, dl_device=…,
//! copy=…)` and `__dlpack_device__`, and stream synchronization through the CUDA driver or the
//! HIP runtime (both opened at run time, never linked) or a registered backend.
//!
//! The rules are decided in `rules::stream`; see `docs/streams.md` for examples.

use crate::abi::{DLDevice, DLDeviceType, DLPackVersion};
use crate::capi::boundary::{self, Fail, nonnull, out_ptr};
use crate::capi::error::dlpack_helpers_status;
use crate::capi::version::{
    DLPACK_HELPERS_EXPORT_LEGACY, DLPACK_HELPERS_EXPORT_VERSIONED,
    DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY, DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD,
};
use crate::host::{cuda, hip};
use crate::rules::stream::{self, CopyMode, DecodeOptions, Family, Kind, Request, Stream};
use crate::rules::version::{Export, Exporter};
use crate::rules::{Error, info};
use core::ffi::c_void;
use core::mem::size_of;
use std::sync::{Mutex, OnceLock};

/// What a decoded stream argument means: one of the `DLPACK_HELPERS_STREAM_*` values.
pub type dlpack_helpers_stream_kind = i32;
/// `stream = -1`: the producer must not synchronize (also a lenient CPU value).
pub const DLPACK_HELPERS_STREAM_NO_SYNC: dlpack_helpers_stream_kind = 0;
/// A stream-less device (`kDLCPU`) and no stream: nothing to synchronize.
pub const DLPACK_HELPERS_STREAM_NONE: dlpack_helpers_stream_kind = 1;
/// CUDA's legacy default stream (`None` or 1); `handle` is `CU_STREAM_LEGACY` (0x1).
pub const DLPACK_HELPERS_STREAM_LEGACY_DEFAULT: dlpack_helpers_stream_kind = 2;
/// CUDA's per-thread default stream (2); `handle` is `CU_STREAM_PER_THREAD` (0x2).
pub const DLPACK_HELPERS_STREAM_PER_THREAD_DEFAULT: dlpack_helpers_stream_kind = 3;
/// The device's default (NULL) stream: ROCm `None` or 0, other device types' `None`; `handle`
/// NULL.
pub const DLPACK_HELPERS_STREAM_DEFAULT: dlpack_helpers_stream_kind = 4;
/// A native stream handle (`CUstream`, `hipStream_t`, or a registered backend's queue); `handle`
/// is never NULL (a NULL handle is always `_DEFAULT`, or CUDA's `_LEGACY_DEFAULT`).
pub const DLPACK_HELPERS_STREAM_HANDLE: dlpack_helpers_stream_kind = 5;
/// `kDLOneAPI` only: a SYCL queue given as an object (`sycl::queue *`; dpctl's
/// `DPCTLSyclQueueRef`, the address `SyclQueue.addressof_ref()` returns); `handle` non-NULL. Has
/// no integer form (`dlpack_stream_encode_decoded` refuses it).
pub const DLPACK_HELPERS_STREAM_SYCL_QUEUE: dlpack_helpers_stream_kind = 6;
/// `kDLOneAPI` only: a Level Zero command queue (`ze_command_queue_handle_t`); `handle` non-NULL.
pub const DLPACK_HELPERS_STREAM_ZE_COMMAND_QUEUE: dlpack_helpers_stream_kind = 7;
/// `kDLOneAPI` only: a Level Zero command list (`ze_command_list_handle_t`, immediate or not);
/// `handle` non-NULL.
pub const DLPACK_HELPERS_STREAM_ZE_COMMAND_LIST: dlpack_helpers_stream_kind = 8;

const _: () = assert!(
    DLPACK_HELPERS_STREAM_SYCL_QUEUE == Kind::SyclQueue.as_raw()
        && DLPACK_HELPERS_STREAM_ZE_COMMAND_QUEUE == Kind::ZeCommandQueue.as_raw()
        && DLPACK_HELPERS_STREAM_ZE_COMMAND_LIST == Kind::ZeCommandList.as_raw()
        && DLPACK_HELPERS_STREAM_NO_SYNC == Kind::NoSync.as_raw()
        && DLPACK_HELPERS_STREAM_NONE == Kind::None.as_raw()
        && DLPACK_HELPERS_STREAM_LEGACY_DEFAULT == Kind::LegacyDefault.as_raw()
        && DLPACK_HELPERS_STREAM_PER_THREAD_DEFAULT == Kind::PerThreadDefault.as_raw()
        && DLPACK_HELPERS_STREAM_DEFAULT == Kind::Default.as_raw()
        && DLPACK_HELPERS_STREAM_HANDLE == Kind::Handle.as_raw()
);

/// A decoded stream: what it means and the native handle to give the device runtime.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct dlpack_helpers_stream {
    /// One of the `DLPACK_HELPERS_STREAM_*` values.
    pub kind: dlpack_helpers_stream_kind,
    /// The native handle (`CUstream`, `hipStream_t`, …): the special values 0x1/0x2 for CUDA's
    /// default streams, NULL for `_NO_SYNC`, `_NONE` and `_DEFAULT`, non-NULL for `_HANDLE` and
    /// the queue-object kinds (`_SYCL_QUEUE`, `_ZE_COMMAND_QUEUE`, `_ZE_COMMAND_LIST`).
    pub handle: *mut c_void,
}

impl dlpack_helpers_stream {
    fn from_core(s: Stream) -> Self {
        dlpack_helpers_stream {
            kind: s.kind.as_raw(),
            handle: s.handle as *mut c_void,
        }
    }
    fn to_core(self, what: &str) -> Result<Stream, Error> {
        let kind = Kind::from_raw(self.kind).ok_or_else(|| {
            Error::invalid(format!(
                "{what}->kind is {}, not a DLPACK_HELPERS_STREAM_* value",
                self.kind
            ))
        })?;
        Ok(Stream::new(kind, self.handle as usize))
    }
}

/// Flag for `dlpack_stream_decode` and `dlpack_export_request_resolve`: accept any stream integer
/// for `kDLCPU` as "no synchronization" (PyTorch accepts -1, nanobind any integer). Off by
/// default: the array API allows only `None` for stream-less devices (peer case 28).
pub const DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM: u32 = 0x4;

/// Decode the `stream` argument of `__dlpack__` for the device the consumer will use.
///
/// - `device`: the device of the data the consumer receives (the tensor's device, or the
///   requested `dl_device`).
/// - `has_stream`, `stream`: the protocol integer; `has_stream = false` is Python's `None` (and
///   `stream` is ignored).
/// - `flags`: 0 or `DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM`; other bits are refused.
/// - `out_stream`: receives the meaning and the native handle.
///
/// Rules (array API `__dlpack__`; peer cases 23, 25, 28):
/// - CUDA (`kDLCUDA`, and `kDLCUDAHost`/`kDLCUDAManaged`, whose memory CUDA streams write):
///   `None` and 1 → legacy default stream, 2 → per-thread default stream, > 2 → handle, -1 →
///   no sync; 0 is ambiguous and refused.
/// - ROCm (`kDLROCM`, `kDLROCMHost`): `None` and 0 → default (NULL) stream, > 2 → handle, -1 →
///   no sync; 1 and 2 are refused.
/// - `kDLCPU`: only `None` (→ `DLPACK_HELPERS_STREAM_NONE`); with the lenient flag any integer
///   → `DLPACK_HELPERS_STREAM_NO_SYNC`.
/// - Other device types, including `kDLOneAPI` and values this library does not know (the array
///   API standardizes no encoding for them, "by agreement"): `None` → default (NULL handle), -1 →
///   no sync, > 0 → handle; 0 is refused, because a NULL handle means the default here and 0
///   could mean either.
/// - Any value below -1 is refused on every device (except `kDLCPU` in the lenient mode, above).
///
/// Every accepted value comes back unchanged from `dlpack_stream_encode_decoded` (decode and
/// encode are inverses), except in lenient CPU mode, which maps every integer to `_NO_SYNC`.
/// `out_stream->handle` is NULL exactly for the kinds `_NO_SYNC`, `_NONE` and `_DEFAULT`.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_INVALID_STREAM` (the array API's `ValueError`),
/// `_INVALID_ARGUMENT` (unknown flags) or `_NULL_POINTER`. No allocation on success; pure and
/// thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `out_stream` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM when the value is not valid for the device (the
///   array API's `ValueError`)
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `flags` has unknown bits
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative (peer case 54)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_stream_decode(
    device: DLDevice,
    has_stream: bool,
    stream: i64,
    flags: u32,
    out_stream: *mut dlpack_helpers_stream,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // Issue 22 (peer case 54): no negative device id is accepted.
        crate::rules::device::check_id(device, "device")?;
        let out = out_ptr(out_stream, "out_stream")?;
        if flags & !DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM != 0 {
            return Err(Error::invalid(format!(
                "flags has unknown bits 0x{:x} (known: DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM)",
                flags & !DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM
            )));
        }
        let opts = DecodeOptions {
            lenient_cpu: flags & DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM != 0,
        };
        let s = stream::decode(device, has_stream.then_some(stream), opts)?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(dlpack_helpers_stream::from_core(s)) };
        Ok(())
    })
}

/// Decode a stream that a consumer passes as an object rather than an integer, where the device
/// family defines streams that way: `kDLOneAPI`, whose producers (dpctl, dpnp) receive a SYCL
/// queue as `__dlpack__`'s `stream` (peer case 51). The handle is carried as a pointer-sized
/// value with its kind, through `dlpack_export_request_resolve_with_stream` and
/// `dlpack_stream_wait` to a backend registered with `dlpack_stream_backend_register_ex`.
///
/// - `device`: the device the consumer will use (`kDLOneAPI`).
/// - `kind`: `DLPACK_HELPERS_STREAM_SYCL_QUEUE` (`sycl::queue *`),
///   `_ZE_COMMAND_QUEUE` (`ze_command_queue_handle_t`) or `_ZE_COMMAND_LIST`
///   (`ze_command_list_handle_t`).
/// - `handle`: the queue or list (non-NULL; pass no stream for the default queue).
/// - `out_stream`: receives `{kind, handle}`.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_INVALID_STREAM_TYPE` (a device type other than
/// `kDLOneAPI`: Python's `TypeError`), `_INVALID_ARGUMENT` (`kind` is not one of the three) or
/// `_NULL_POINTER` (`handle` or `out_stream`). Pure, thread-safe, no allocation.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `handle` or `out_stream` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE when the device type is not `kDLOneAPI`
///   (Python's `TypeError`)
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `kind` is not one of the three queue-object
///   kinds
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative (peer case 54)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_stream_decode_handle(
    device: DLDevice,
    kind: dlpack_helpers_stream_kind,
    handle: *mut c_void,
    out_stream: *mut dlpack_helpers_stream,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // Issue 22 (peer case 54): no negative device id is accepted.
        crate::rules::device::check_id(device, "device")?;
        let out = out_ptr(out_stream, "out_stream")?;
        let k = Kind::from_raw(kind).ok_or_else(|| {
            Error::invalid(format!(
                "kind is {kind}, not a DLPACK_HELPERS_STREAM_* value"
            ))
        })?;
        if handle.is_null() {
            return Err(Error::NullPointer("handle"));
        }
        let s = stream::decode_handle(device, k, handle as usize)?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(dlpack_helpers_stream::from_core(s)) };
        Ok(())
    })
}

/// Encode a native stream into the integer a consumer passes to a Python producer's
/// `__dlpack__(stream=…)`; decoding the result with `dlpack_stream_decode` gives that stream
/// back (a consumer that wants no synchronization passes -1 itself, or uses
/// `dlpack_stream_encode_decoded` with kind `_NO_SYNC`).
///
/// - `device`: the device the consumer works on.
/// - `native_stream`: the consumer's stream (`CUstream`, `hipStream_t`, …; NULL for the default).
/// - `out_has_stream`: receives false when no stream should be passed (`None`), else true.
/// - `out_stream`: receives the integer (unchanged when `*out_has_stream` is false).
///
/// CUDA: NULL and `CU_STREAM_LEGACY` → 1, `CU_STREAM_PER_THREAD` → 2, a handle → its address
/// (never 0, peer case 23). ROCm: NULL → 0, a handle → its address; `hipStreamPerThread` (0x2)
/// and 0x1 have no value (refused). `kDLCPU`: NULL → no stream; anything else is refused. Other
/// device types (see `dlpack_stream_decode`): NULL (the default queue) → no stream, a handle →
/// its address. An address above `INT64_MAX` is refused.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_INVALID_STREAM` or `_NULL_POINTER` (either out-pointer
/// NULL). Both out-values are written only on OK. Pure, thread-safe.
///
/// @param[in] native_stream May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `out_has_stream` or `out_stream` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM when the stream has no protocol integer on this
///   device
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative (peer case 54)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_stream_encode(
    device: DLDevice,
    native_stream: *mut c_void,
    out_has_stream: *mut bool,
    out_stream: *mut i64,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // Issue 22 (peer case 54): no negative device id is accepted.
        crate::rules::device::check_id(device, "device")?;
        let has = out_ptr(out_has_stream, "out_has_stream")?;
        let out = out_ptr(out_stream, "out_stream")?;
        let v = stream::encode(device, native_stream as usize)?;
        // SAFETY: non-NULL caller storage.
        unsafe {
            has.write(v.is_some());
            if let Some(v) = v {
                out.write(v);
            }
        }
        Ok(())
    })
}

/// Encode a decoded stream back into its protocol integer: the exact inverse of
/// `dlpack_stream_decode` (in its default, strict mode). For every integer that
/// `dlpack_stream_decode` accepts for `device`, this gives the same integer back, and it refuses
/// every stream that `dlpack_stream_decode` cannot produce for `device`.
///
/// - `device`: the device the stream belongs to.
/// - `stream`: a decoded stream (from `dlpack_stream_decode` or `plan.stream`).
/// - `out_has_stream`: receives false when no stream should be passed (`None`), else true.
/// - `out_stream`: receives the integer (unchanged when `*out_has_stream` is false).
///
/// `_NO_SYNC` → -1; CUDA `_LEGACY_DEFAULT` (handle 0x1) → 1, `_PER_THREAD_DEFAULT` (0x2) → 2;
/// ROCm `_DEFAULT` → 0; other device types' `_DEFAULT` → no stream; `_HANDLE` → its address.
/// `kDLCPU`: `_NONE` and `_NO_SYNC` (the lenient mode's result) → no stream, the only value the
/// array API allows there, so the lenient mode is not inverted.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_INVALID_STREAM` (a kind or handle that decoding never
/// yields for `device`: a NULL or special handle with kind `_HANDLE`, a non-NULL handle with
/// `_DEFAULT`, a CUDA kind on ROCm, …), `_INVALID_ARGUMENT` (`stream->kind` is not a
/// `DLPACK_HELPERS_STREAM_*` value) or `_NULL_POINTER`. Both out-values are written only on OK.
/// Pure, thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `stream`, `out_has_stream` or `out_stream` is
///   NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM when decoding never yields this kind and handle for
///   `device`
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `stream->kind` is not a
///   `DLPACK_HELPERS_STREAM_*` value
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative (peer case 54)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_stream_encode_decoded(
    device: DLDevice,
    stream: *const dlpack_helpers_stream,
    out_has_stream: *mut bool,
    out_stream: *mut i64,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // Issue 22 (peer case 54): no negative device id is accepted.
        crate::rules::device::check_id(device, "device")?;
        // SAFETY: caller contract: a non-NULL stream points to a live struct.
        let s = unsafe { nonnull(stream, "stream") }?.to_core("stream")?;
        let has = out_ptr(out_has_stream, "out_has_stream")?;
        let out = out_ptr(out_stream, "out_stream")?;
        let v = stream::encode_decoded(device, s)?;
        // SAFETY: non-NULL caller storage.
        unsafe {
            has.write(v.is_some());
            if let Some(v) = v {
                out.write(v);
            }
        }
        Ok(())
    })
}

/// `copy` of `__dlpack__`: one of the `DLPACK_HELPERS_COPY_*` values.
pub type dlpack_helpers_copy_mode = i32;
/// `copy=None` (the zero value): reuse the memory when possible, copy otherwise.
pub const DLPACK_HELPERS_COPY_IF_NEEDED: dlpack_helpers_copy_mode = 0;
/// `copy=True`: always copy.
pub const DLPACK_HELPERS_COPY_ALWAYS: dlpack_helpers_copy_mode = 1;
/// `copy=False`: never copy; a request that needs a copy fails with
/// `DLPACK_HELPERS_STATUS_COPY_FORBIDDEN` (`BufferError`).
pub const DLPACK_HELPERS_COPY_NEVER: dlpack_helpers_copy_mode = 2;

/// What a consumer asks of a producer: the keyword arguments of `__dlpack__`. A zero-initialized
/// request is `__dlpack__()` with no arguments.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dlpack_helpers_export_request {
    /// Whether `max_version` is given (false: `None`, the consumer reads the legacy struct only).
    pub has_max_version: bool,
    /// The newest DLPack version the consumer reads.
    pub max_version: DLPackVersion,
    /// Whether `stream` is given (false: `None`).
    pub has_stream: bool,
    /// The stream integer, in the protocol's encoding (see `dlpack_stream_decode`).
    pub stream: i64,
    /// Whether `dl_device` is given (false: `None`, the tensor's own device).
    pub has_dl_device: bool,
    /// The device the consumer wants the data on.
    pub dl_device: DLDevice,
    /// One of the `DLPACK_HELPERS_COPY_*` values.
    pub copy: dlpack_helpers_copy_mode,
}

/// What the producer must synchronize: one of the `DLPACK_HELPERS_SYNC_*` values.
pub type dlpack_helpers_sync = i32;
/// Nothing to synchronize (stream -1, or a stream-less device without a stream).
pub const DLPACK_HELPERS_SYNC_NONE: dlpack_helpers_sync = 0;
/// Make the consumer's stream (`plan.stream`) wait for the producer's stream without blocking the
/// host: call `dlpack_stream_wait` (it does nothing when both are the same stream).
pub const DLPACK_HELPERS_SYNC_STREAM_WAIT: dlpack_helpers_sync = 1;
/// The data goes to the CPU: finish the producer's pending work (and the copy) before returning,
/// for example with `dlpack_stream_synchronize` on the producer's stream.
pub const DLPACK_HELPERS_SYNC_HOST: dlpack_helpers_sync = 2;

const _: () = assert!(
    DLPACK_HELPERS_SYNC_NONE == stream::Sync::None.as_raw()
        && DLPACK_HELPERS_SYNC_STREAM_WAIT == stream::Sync::StreamWait.as_raw()
        && DLPACK_HELPERS_SYNC_HOST == stream::Sync::Host.as_raw()
);

/// The producer's plan for one export, from `dlpack_export_request_resolve`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dlpack_helpers_export_plan {
    /// `DLPACK_HELPERS_EXPORT_LEGACY` (capsule `"dltensor"`) or `DLPACK_HELPERS_EXPORT_VERSIONED`
    /// (capsule `"dltensor_versioned"`).
    pub kind: i32,
    /// For a versioned export, the version to write; {0, 0} for legacy.
    pub version: DLPackVersion,
    /// The device the exported tensor reports.
    pub device: DLDevice,
    /// Whether the producer must copy the data (to `device`; on `stream` when it has one).
    pub copy: bool,
    /// The flag bits this plan decides, to OR into `DLManagedTensorVersioned.flags` (the producer
    /// adds its own, such as `DLPACK_FLAG_BITMASK_READ_ONLY`). For `DLPACK_HELPERS_EXPORT_VERSIONED`:
    /// `DLPACK_FLAG_BITMASK_IS_COPIED` exactly when `copy`, else 0. For
    /// `DLPACK_HELPERS_EXPORT_LEGACY`: always 0, since `DLManagedTensor` has no flags; `copy`
    /// still says whether to copy.
    pub flags: u64,
    /// One of the `DLPACK_HELPERS_SYNC_*` values.
    pub sync: dlpack_helpers_sync,
    /// The consumer's stream decoded for `device` (see `dlpack_stream_decode`): kind
    /// `DLPACK_HELPERS_STREAM_NONE` when `device` is `kDLCPU` and no stream was given,
    /// `_NO_SYNC` for a `kDLCPU` tensor given a stream under
    /// `DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM`.
    pub stream: dlpack_helpers_stream,
}

/// Producer side of `__dlpack__(stream=…, max_version=…, dl_device=…, copy=…)`: resolve a
/// consumer's request against the tensor's device and the producer's version into a plan.
///
/// - `request`: the consumer's arguments (zero-initialized = no arguments).
/// - `tensor_device`: where the producer's data lives (`__dlpack_device__`).
/// - `producer_version`, `producer_flags`: as for `dlpack_version_negotiate`
///   (`DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY`, `_NO_MAX_VERSION_KEYWORD`), plus
///   `DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM`.
/// - `out_plan`: receives the plan.
///
/// Rules (array API `__dlpack__`; DLPack spec §4.4–4.6; peer cases 23, 25, 28, 47):
/// - struct and version as `dlpack_version_negotiate`;
/// - `dl_device` absent or equal to `tensor_device` (type and id): no copy unless `copy` is
///   ALWAYS; the stream is decoded for the device as by `dlpack_stream_decode`; `sync` is
///   STREAM_WAIT unless the stream is -1 or the device has no streams (then NONE);
/// - `dl_device = (kDLCPU, 0)` for a tensor elsewhere: the stream must be absent
///   (`_INVALID_STREAM` otherwise); `sync` is HOST. Host-accessible memory (`kDLCUDAHost`,
///   `kDLROCMHost`, `kDLCUDAManaged`) is served in place and reported as `(kDLCPU, 0)` (policy,
///   as NumPy does); other memory needs a copy, and `copy` NEVER fails with
///   `_COPY_FORBIDDEN` (`BufferError`, peer case 47);
/// - any other `dl_device`, including `(kDLCPU, id)` with `id != 0` → `_UNSUPPORTED_DEVICE`
///   (`BufferError`);
/// - a negative `device_id` in `tensor_device` or `dl_device` → `_INVALID_DEVICE` (`ValueError`;
///   peer case 54: an index-less device is not -1);
/// - `flags`: `DLPACK_FLAG_BITMASK_IS_COPIED` for every copy of a versioned export; always 0 for
///   a legacy export (its struct has no flags), whatever `copy` is.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_INVALID_STREAM`, `_COPY_FORBIDDEN`,
/// `_UNSUPPORTED_DEVICE`, `_NO_COMMON_VERSION`, `_KEYWORD_NOT_UNDERSTOOD`, `_INVALID_ARGUMENT`
/// (unknown flag bits or `copy` value) or `_NULL_POINTER`. `out_plan` is written only on OK. No
/// allocation on success; pure and thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `request` or `out_plan` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM when the stream is not valid for the device, or
///   given for a CPU export of data elsewhere
/// @retval DLPACK_HELPERS_STATUS_COPY_FORBIDDEN when serving the request needs a copy and `copy` is
///   NEVER (`BufferError`)
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE when `dl_device` is neither the tensor's device
///   nor `(kDLCPU, 0)` (`BufferError`)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `tensor_device.device_id` or the requested
///   `dl_device.device_id` is negative (`ValueError`; peer case 54)
/// @retval DLPACK_HELPERS_STATUS_NO_COMMON_VERSION as `dlpack_version_negotiate`
/// @retval DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD as `dlpack_version_negotiate`
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `producer_flags` has unknown bits or `copy`
///   is not a `DLPACK_HELPERS_COPY_*` value
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_export_request_resolve(
    request: *const dlpack_helpers_export_request,
    tensor_device: DLDevice,
    producer_version: DLPackVersion,
    producer_flags: u32,
    out_plan: *mut dlpack_helpers_export_plan,
) -> dlpack_helpers_status {
    boundary::status_or_report(
        // SAFETY: the caller's contract for the export's arguments.
        move || unsafe {
            resolve(
                request,
                tensor_device,
                producer_version,
                producer_flags,
                out_plan,
            )
        },
        // SAFETY: the caller's contract for the export's arguments.
        move || unsafe {
            resolve_report(
                request,
                tensor_device,
                producer_version,
                producer_flags,
                out_plan,
            )
        },
    )
}

/// The failure path of `dlpack_export_request_resolve`: the same body, its error reported (the
/// export's own C signature, so the export reaches it with a jump).
#[cold]
#[inline(never)]
unsafe extern "C" fn resolve_report(
    request: *const dlpack_helpers_export_request,
    tensor_device: DLDevice,
    producer_version: DLPackVersion,
    producer_flags: u32,
    out_plan: *mut dlpack_helpers_export_plan,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: as the export.
        unsafe {
            resolve(
                request,
                tensor_device,
                producer_version,
                producer_flags,
                out_plan,
            )
        }
        .map_err(Error::from)
    })
}

/// `dlpack_export_request_resolve` for a consumer whose stream is an object handle rather than
/// an integer (`kDLOneAPI`: a SYCL queue or Level Zero command queue/list, from
/// `dlpack_stream_decode_handle` or `dlpack_python_stream_decode`).
///
/// - `stream`: may be NULL (then exactly `dlpack_export_request_resolve`), or a stream whose kind is
///   `DLPACK_HELPERS_STREAM_SYCL_QUEUE`, `_ZE_COMMAND_QUEUE` or `_ZE_COMMAND_LIST`; then
///   `request->has_stream` must be false (the stream is given once).
/// - the other arguments as for `dlpack_export_request_resolve`.
///
/// With a handle, the plan is the one made without a stream, with `plan.stream` the handle and
/// `plan.sync` `DLPACK_HELPERS_SYNC_STREAM_WAIT` (call `dlpack_stream_wait`, served by a backend
/// registered with `dlpack_stream_backend_register_ex`).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_INVALID_STREAM` (also: NULL handle, or a handle with
/// `dl_device` `(kDLCPU, 0)`), `_INVALID_STREAM_TYPE` (a device type that takes no queue
/// objects), `_COPY_FORBIDDEN`, `_UNSUPPORTED_DEVICE`, `_NO_COMMON_VERSION`,
/// `_KEYWORD_NOT_UNDERSTOOD`, `_INVALID_ARGUMENT` (as `dlpack_export_request_resolve`, and both
/// streams given, or a kind that is not an object handle) or `_NULL_POINTER` (`request` or
/// `out_plan`). Pure, thread-safe.
///
/// @param[in] stream May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `request` or `out_plan` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM as `dlpack_export_request_resolve`, and for a NULL
///   handle or a handle with `dl_device` `(kDLCPU, 0)`
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE when the device type takes no queue objects
/// @retval DLPACK_HELPERS_STATUS_COPY_FORBIDDEN when serving the request needs a copy and `copy` is
///   NEVER (`BufferError`)
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE when `dl_device` is neither the tensor's device
///   nor `(kDLCPU, 0)` (`BufferError`)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `tensor_device.device_id` or the requested
///   `dl_device.device_id` is negative (`ValueError`; peer case 54)
/// @retval DLPACK_HELPERS_STATUS_NO_COMMON_VERSION as `dlpack_version_negotiate`
/// @retval DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD as `dlpack_version_negotiate`
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT as `dlpack_export_request_resolve`, and when both
///   streams are given or `stream->kind` is not an object handle
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_export_request_resolve_with_stream(
    request: *const dlpack_helpers_export_request,
    stream: *const dlpack_helpers_stream,
    tensor_device: DLDevice,
    producer_version: DLPackVersion,
    producer_flags: u32,
    out_plan: *mut dlpack_helpers_export_plan,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: caller contract: a non-NULL stream points to a live struct.
        let s = match unsafe { stream.as_ref() } {
            Some(s) => Some(s.to_core("stream")?),
            None => None,
        };
        // SAFETY: caller contract.
        let (req, producer, opts) =
            unsafe { parse_request(request, producer_flags, producer_version, out_plan) }?;
        let p = match s {
            None => stream::resolve(tensor_device, producer, &req, opts)?,
            Some(h) => {
                stream::resolve_with_handle(tensor_device, producer, &req, opts, h.kind, h.handle)?
            }
        };
        // SAFETY: `parse_request` checked that `out_plan` is non-NULL caller storage.
        unsafe { write_plan(&p, out_plan) };
        Ok(())
    })
}

/// The body of `dlpack_export_request_resolve`; writes `out_plan` only on success.
///
/// # Safety
/// As the export.
#[inline(always)]
unsafe fn resolve(
    request: *const dlpack_helpers_export_request,
    tensor_device: DLDevice,
    producer_version: DLPackVersion,
    producer_flags: u32,
    out_plan: *mut dlpack_helpers_export_plan,
) -> Result<(), Fail> {
    // SAFETY: caller contract.
    let (req, producer, opts) =
        unsafe { parse_request(request, producer_flags, producer_version, out_plan) }?;
    let p = stream::resolve(tensor_device, producer, &req, opts)?;
    // SAFETY: `parse_request` checked that `out_plan` is non-NULL caller storage.
    unsafe { write_plan(&p, out_plan) };
    Ok(())
}

/// The arguments of the two resolve exports, checked and turned into the rules' types: the
/// request (non-NULL), `out_plan` (non-NULL), `producer_flags` (known bits) and `copy`.
///
/// # Safety
/// As `dlpack_export_request_resolve`.
#[inline(always)]
unsafe fn parse_request(
    request: *const dlpack_helpers_export_request,
    producer_flags: u32,
    producer_version: DLPackVersion,
    out_plan: *mut dlpack_helpers_export_plan,
) -> Result<(Request, Exporter, DecodeOptions), Fail> {
    // SAFETY: caller contract: a non-NULL request points to a live struct.
    let Some(r) = (unsafe { request.as_ref() }) else {
        return Err(Fail::Null("request"));
    };
    if out_plan.is_null() {
        return Err(Fail::Null("out_plan"));
    }
    const KNOWN: u32 = DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY
        | DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD
        | DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM;
    if producer_flags & !KNOWN != 0 {
        return Err(Fail::Invalid {
            message: |bits| {
                format!(
                    "producer_flags has unknown bits 0x{bits:x} (known: DLPACK_HELPERS_PRODUCER_*)"
                )
            },
            value: (producer_flags & !KNOWN).into(),
        });
    }
    let copy = match r.copy {
        DLPACK_HELPERS_COPY_IF_NEEDED => CopyMode::IfNeeded,
        DLPACK_HELPERS_COPY_ALWAYS => CopyMode::Always,
        DLPACK_HELPERS_COPY_NEVER => CopyMode::Never,
        other => {
            return Err(Fail::Invalid {
                message: |v| {
                    format!(
                        "request->copy is {}, not a DLPACK_HELPERS_COPY_* value",
                        v as i32
                    )
                },
                value: other as u32 as u64,
            });
        }
    };
    let req = Request {
        max_version: r.has_max_version.then_some(r.max_version),
        stream: r.has_stream.then_some(r.stream),
        dl_device: r.has_dl_device.then_some(r.dl_device),
        copy,
    };
    let producer = Exporter {
        version: producer_version,
        exports_legacy: producer_flags & DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY != 0,
        no_max_version_keyword: producer_flags & DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD
            != 0,
    };
    let opts = DecodeOptions {
        lenient_cpu: producer_flags & DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM != 0,
    };
    Ok((req, producer, opts))
}

/// Write a resolved plan to the caller's `out_plan`.
///
/// # Safety
/// `out_plan` is non-NULL caller storage.
#[inline(always)]
unsafe fn write_plan(p: &stream::Plan, out_plan: *mut dlpack_helpers_export_plan) {
    let (kind, version) = match p.export {
        Export::Legacy => (DLPACK_HELPERS_EXPORT_LEGACY, DLPackVersion::new(0, 0)),
        Export::Versioned(v) => (DLPACK_HELPERS_EXPORT_VERSIONED, v),
    };
    let plan = dlpack_helpers_export_plan {
        kind,
        version,
        device: p.device,
        copy: p.copy,
        flags: p.flags,
        sync: p.sync.as_raw(),
        stream: dlpack_helpers_stream::from_core(p.stream),
    };
    // SAFETY: non-NULL caller storage (the caller's contract).
    unsafe { out_plan.write(plan) };
}

/// Stream functions an application supplies for a device type (oneAPI queues, Vulkan, Metal, or
/// its own runtime): see `dlpack_stream_backend_register`. Both functions return 0 on success
/// and any other value on failure (reported as `DLPACK_HELPERS_STATUS_DEVICE_ERROR` with the
/// value in the message). They must not throw or unwind.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dlpack_helpers_stream_backend {
    /// Passed back unchanged as the first argument of each function; must stay valid for the
    /// life of the process.
    pub ctx: *mut c_void,
    /// Make `consumer_stream` wait for all work queued so far on `producer_stream` without
    /// blocking the host (for example record an event on one and wait on it from the other).
    /// Required.
    pub wait: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            device_id: i32,
            producer_stream: *mut c_void,
            consumer_stream: *mut c_void,
        ) -> i32,
    >,
    /// Block the host until all work queued on `stream` is complete. Required.
    pub synchronize:
        Option<unsafe extern "C" fn(ctx: *mut c_void, device_id: i32, stream: *mut c_void) -> i32>,
}

/// Consumer-handle wait of `dlpack_helpers_stream_backend_ex`: make the consumer's queue
/// (`consumer_kind`: `DLPACK_HELPERS_STREAM_SYCL_QUEUE`, `_ZE_COMMAND_QUEUE` or
/// `_ZE_COMMAND_LIST`) wait for all work queued so far on the producer's stream, without
/// blocking the host. Returns 0 on success, any other value on failure.
pub type dlpack_helpers_stream_wait_handle_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        device_id: i32,
        producer_stream: *mut c_void,
        consumer_kind: dlpack_helpers_stream_kind,
        consumer_handle: *mut c_void,
    ) -> i32,
>;

/// `dlpack_helpers_stream_backend` grown with the wait on queue-object streams (oneAPI). Set
/// `struct_size` to `sizeof(dlpack_helpers_stream_backend_ex)`; the struct only grows at its end
/// (fields past `struct_size` count as NULL).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dlpack_helpers_stream_backend_ex {
    /// Size in bytes of the caller's struct; at least up to and including `synchronize`.
    pub struct_size: usize,
    /// As in `dlpack_helpers_stream_backend`.
    pub ctx: *mut c_void,
    /// As in `dlpack_helpers_stream_backend` (integer and native-handle streams). Required.
    pub wait: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            device_id: i32,
            producer_stream: *mut c_void,
            consumer_stream: *mut c_void,
        ) -> i32,
    >,
    /// As in `dlpack_helpers_stream_backend`. Required.
    pub synchronize:
        Option<unsafe extern "C" fn(ctx: *mut c_void, device_id: i32, stream: *mut c_void) -> i32>,
    /// Wait on a consumer stream given as a queue object (its kind says which). Optional: without
    /// it, `dlpack_stream_wait` refuses such streams with `_BACKEND_UNAVAILABLE`.
    pub wait_handle: dlpack_helpers_stream_wait_handle_fn,
}

#[derive(Clone, Copy)]
struct Registered {
    device_type: DLDeviceType,
    backend: dlpack_helpers_stream_backend,
    wait_handle: dlpack_helpers_stream_wait_handle_fn,
}

// SAFETY: the registrant promises that `ctx` and the functions may be used from any thread.
unsafe impl Send for Registered {}
// SAFETY: the same promise covers calls from several threads at once (documented on
// dlpack_stream_backend_register); the struct itself is immutable after registration.
unsafe impl Sync for Registered {}

/// Registration slots, filled in order; lookups read them without a lock.
const MAX_BACKENDS: usize = 16;
static BACKENDS: [OnceLock<Registered>; MAX_BACKENDS] = [const { OnceLock::new() }; MAX_BACKENDS];
static REGISTER_LOCK: Mutex<()> = Mutex::new(());

fn registered(device_type: DLDeviceType) -> Option<&'static Registered> {
    BACKENDS
        .iter()
        .map_while(|slot| slot.get())
        .find(|r| r.device_type == device_type)
}

/// Register stream functions for a device type. A registered backend serves
/// `dlpack_stream_wait` and `dlpack_stream_synchronize` for that device type, and takes
/// precedence over the built-in CUDA and HIP backends (an application with its own runtime).
///
/// - `device_type`: the DLPack device type served (any value but `kDLCPU`).
/// - `backend`: copied; both functions must be non-NULL; `backend->ctx` must stay valid for the
///   life of the process.
///
/// Registration is permanent for the process; at most 16 device types can be registered, each
/// once. Returns `DLPACK_HELPERS_STATUS_OK`, `_NULL_POINTER` (`backend` or one of its functions
/// NULL) or `_INVALID_ARGUMENT` (`kDLCPU`, already registered, or no slot left). Thread-safe;
/// lookups afterwards take no lock.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `backend` or one of its functions is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `device_type` is `kDLCPU` or already
///   registered, or no slot is left
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_stream_backend_register(
    device_type: DLDeviceType,
    backend: *const dlpack_helpers_stream_backend,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: caller contract.
        let b = *unsafe { nonnull(backend, "backend") }?;
        register(device_type, b, None)
    })
}

/// `dlpack_stream_backend_register` with a `dlpack_helpers_stream_backend_ex`, whose optional
/// `wait_handle` serves consumer streams given as queue objects (`DLPACK_HELPERS_STREAM_SYCL_QUEUE`,
/// `_ZE_COMMAND_QUEUE`, `_ZE_COMMAND_LIST`; peer case 51). The same rules as
/// `dlpack_stream_backend_register`.
///
/// - `device_type`: the DLPack device type served (any value but `kDLCPU`).
/// - `backend`: copied; `struct_size` must reach past `synchronize`; `wait` and `synchronize`
///   non-NULL, `wait_handle` optional.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_NULL_POINTER` (`backend`, `wait` or `synchronize`
/// NULL) or `_INVALID_ARGUMENT` (`struct_size` too small, `kDLCPU`, already registered, or no
/// slot left). Thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `backend`, `wait` or `synchronize` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `struct_size` is too small, `device_type` is
///   `kDLCPU` or already registered, or no slot is left
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_stream_backend_register_ex(
    device_type: DLDeviceType,
    backend: *const dlpack_helpers_stream_backend_ex,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: caller contract.
        let b = unsafe { nonnull(backend, "backend") }?;
        type B = dlpack_helpers_stream_backend_ex;
        let base_end = core::mem::offset_of!(B, synchronize) + size_of::<usize>();
        if b.struct_size < base_end {
            return Err(Error::invalid(format!(
                "backend->struct_size is {}, too small to hold ctx, wait and synchronize (set it \
                 to sizeof(dlpack_helpers_stream_backend_ex))",
                b.struct_size
            )));
        }
        let wait_handle =
            if b.struct_size >= core::mem::offset_of!(B, wait_handle) + size_of::<usize>() {
                b.wait_handle
            } else {
                None
            };
        register(
            device_type,
            dlpack_helpers_stream_backend {
                ctx: b.ctx,
                wait: b.wait,
                synchronize: b.synchronize,
            },
            wait_handle,
        )
    })
}

fn register(
    device_type: DLDeviceType,
    b: dlpack_helpers_stream_backend,
    wait_handle: dlpack_helpers_stream_wait_handle_fn,
) -> Result<(), Error> {
    {
        if b.wait.is_none() {
            return Err(Error::NullPointer("backend->wait"));
        }
        if b.synchronize.is_none() {
            return Err(Error::NullPointer("backend->synchronize"));
        }
        if device_type == DLDeviceType::kDLCPU {
            return Err(Error::invalid(
                "device_type is kDLCPU, which has no streams",
            ));
        }
        let _g = REGISTER_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        if registered(device_type).is_some() {
            return Err(Error::invalid(format!(
                "a stream backend for device type {} is already registered (registration is permanent)",
                device_type.0
            )));
        }
        let slot = BACKENDS.iter().find(|s| s.get().is_none()).ok_or_else(|| {
            Error::invalid(format!(
                "no backend slot left ({MAX_BACKENDS} device types registered)"
            ))
        })?;
        let _ = slot.set(Registered {
            device_type,
            backend: b,
            wait_handle,
        });
        Ok(())
    }
}

fn backend_error(what: &str, code: i32, device: DLDevice) -> Error {
    Error::DeviceError(format!(
        "the registered stream backend's {what} failed for device ({}, {}) with code {code}",
        device.device_type.0, device.device_id
    ))
}

fn unavailable(device: DLDevice) -> Error {
    if device.device_type == DLDeviceType::kDLCPU {
        return Error::BackendUnavailable(
            "kDLCPU has no streams, so it has no stream backend and none can be registered \
             (dlpack_stream_synchronize does nothing for it)"
                .to_owned(),
        );
    }
    Error::BackendUnavailable(format!(
        "no stream backend for device type {}: CUDA and ROCm are built in; register others with \
         dlpack_stream_backend_register",
        device.device_type.0
    ))
}

/// Two native handles name the same stream (CUDA: NULL is the legacy default stream too).
fn same_stream(family: Family, a: usize, b: usize) -> bool {
    let norm = |h: usize| {
        if family == Family::Cuda && h == 0 {
            stream::CUDA_STREAM_LEGACY
        } else {
            h
        }
    };
    norm(a) == norm(b)
}

fn wait(device: DLDevice, producer: usize, consumer: Stream) -> Result<(), Error> {
    if !consumer.kind.needs_wait() {
        return Ok(());
    }
    if consumer.kind.is_object_handle() {
        // Validates the device family and the handle as decoding does.
        let c = stream::decode_handle(device, consumer.kind, consumer.handle)?;
        let r = registered(device.device_type).ok_or_else(|| unavailable(device))?;
        let f = r.wait_handle.ok_or_else(|| {
            Error::BackendUnavailable(format!(
                "the stream backend registered for device type {} cannot wait on queue objects \
                 (kind {}): register it with dlpack_stream_backend_register_ex and a wait_handle",
                device.device_type.0,
                c.kind.as_raw()
            ))
        })?;
        // SAFETY: the registrant's function with its own context.
        let code = unsafe {
            f(
                r.backend.ctx,
                device.device_id,
                producer as *mut c_void,
                c.kind.as_raw(),
                c.handle as *mut c_void,
            )
        };
        return if code == 0 {
            Ok(())
        } else {
            Err(backend_error("wait_handle", code, device))
        };
    }
    let fam = stream::family(device.device_type);
    if same_stream(fam, producer, consumer.handle) {
        return Ok(());
    }
    if let Some(r) = registered(device.device_type) {
        let f = r.backend.wait.expect("checked at registration");
        // SAFETY: the registrant's function with its own context.
        let code = unsafe {
            f(
                r.backend.ctx,
                device.device_id,
                producer as *mut c_void,
                consumer.handle as *mut c_void,
            )
        };
        return if code == 0 {
            Ok(())
        } else {
            Err(backend_error("wait", code, device))
        };
    }
    match fam {
        Family::Cuda => cuda::get()?.wait(device, producer, consumer.handle),
        Family::Rocm => hip::get()?.wait(device, producer, consumer.handle),
        Family::Cpu | Family::Other => Err(unavailable(device)),
    }
}

fn synchronize(device: DLDevice, stream_handle: usize) -> Result<(), Error> {
    if let Some(r) = registered(device.device_type) {
        let f = r.backend.synchronize.expect("checked at registration");
        // SAFETY: the registrant's function with its own context.
        let code = unsafe {
            f(
                r.backend.ctx,
                device.device_id,
                stream_handle as *mut c_void,
            )
        };
        return if code == 0 {
            Ok(())
        } else {
            Err(backend_error("synchronize", code, device))
        };
    }
    match stream::family(device.device_type) {
        Family::Cpu => Ok(()),
        Family::Cuda => cuda::get()?.synchronize(device, stream_handle),
        Family::Rocm => hip::get()?.synchronize(device, stream_handle),
        Family::Other => Err(unavailable(device)),
    }
}

/// Producer's synchronization duty for `DLPACK_HELPERS_SYNC_STREAM_WAIT`: make the consumer's
/// stream wait for all work queued so far on the producer's stream, without blocking the host
/// (array API `__dlpack__`; peer cases 24 and 27).
///
/// - `device`: the tensor's device; selects the backend (a registered one, else CUDA for
///   `kDLCUDA`/`kDLCUDAHost`/`kDLCUDAManaged`, HIP for `kDLROCM`/`kDLROCMHost`) and, for
///   `kDLCUDA`/`kDLROCM`, the device whose context or current device is used.
/// - `producer_stream`: the producer's native stream (for example its current stream; NULL for
///   the default stream).
/// - `consumer_stream`: the decoded consumer stream (`plan.stream`, or from
///   `dlpack_stream_decode`).
///
/// Does nothing, without loading any runtime, when the consumer's kind is `_NO_SYNC` or `_NONE`
/// or both handles name the same stream (CUDA: NULL and `CU_STREAM_LEGACY` are the same).
/// Otherwise records a pooled event on the producer stream and makes the consumer stream wait
/// on it: after the first call per context (CUDA) or device (HIP), one event record and one
/// stream wait per call, no event creation. The driver is loaded and initialized on first use;
/// CUDA calls for `kDLCUDA` run in the primary context of the device (the current one when it
/// already is); for `kDLCUDAHost`/`kDLCUDAManaged`, whose device id is always 0, in the context
/// of the producer's stream (`cuStreamGetCtx`; for NULL, 0x1 and 0x2 the current context, else
/// device 0's primary one). Streams must be live and belong to that device.
///
/// A consumer stream given as a queue object (kinds `DLPACK_HELPERS_STREAM_SYCL_QUEUE`,
/// `_ZE_COMMAND_QUEUE`, `_ZE_COMMAND_LIST`, `kDLOneAPI` only) goes to the `wait_handle` of the
/// backend registered for the device type with `dlpack_stream_backend_register_ex`, with its
/// kind; there is no built-in oneAPI backend.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_BACKEND_UNAVAILABLE` (driver absent, `cuInit` failed,
/// no backend for the device type, or a registered backend without `wait_handle` for a queue
/// object), `_DEVICE_ERROR` (the driver's or backend's error, named in the message),
/// `_INVALID_STREAM_TYPE` (a queue object for a device type other than `kDLOneAPI`),
/// `_INVALID_STREAM` (a NULL queue object), `_INVALID_ARGUMENT` (unknown kind) or
/// `_NULL_POINTER`. Thread-safe: any number of threads may
/// call at once; initialization is lock-free after the first call.
///
/// @param[in] producer_stream May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `consumer_stream` is NULL
/// @retval DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE when no backend serves the device type (driver
///   absent, `cuInit` failed, none registered)
/// @retval DLPACK_HELPERS_STATUS_DEVICE_ERROR when the runtime reports an error (named in the
///   message)
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `consumer_stream->kind` is unknown
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE when a queue object is given for a device type
///   other than `kDLOneAPI`
/// @retval DLPACK_HELPERS_STATUS_INVALID_STREAM when a queue object is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative (peer case 54)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_stream_wait(
    device: DLDevice,
    producer_stream: *mut c_void,
    consumer_stream: *const dlpack_helpers_stream,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // Issue 22 (peer case 54): no negative device id is accepted.
        crate::rules::device::check_id(device, "device")?;
        // SAFETY: caller contract.
        let c =
            unsafe { nonnull(consumer_stream, "consumer_stream") }?.to_core("consumer_stream")?;
        wait(device, producer_stream as usize, c)
    })
}

/// Block the host until all work queued on `stream` is complete, for
/// `DLPACK_HELPERS_SYNC_HOST` (a CPU export must be complete before `__dlpack__` returns).
///
/// - `device`: selects the backend as for `dlpack_stream_wait`; `kDLCPU` does nothing.
/// - `stream`: the native stream to drain (normally the producer's); NULL for the default stream.
///   The context is chosen as for `dlpack_stream_wait`, with `stream` as the producer's.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_BACKEND_UNAVAILABLE` or `_DEVICE_ERROR`. Thread-safe.
///
/// @param[in] stream May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE when no backend serves the device type
/// @retval DLPACK_HELPERS_STATUS_DEVICE_ERROR when the runtime reports an error (named in the
///   message)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative (peer case 54)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_stream_synchronize(
    device: DLDevice,
    stream: *mut c_void,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // Issue 22 (peer case 54): no negative device id is accepted.
        crate::rules::device::check_id(device, "device")?;
        synchronize(device, stream as usize)
    })
}

/// Release a versioned managed tensor after the work queued so far on a stream is done,
/// without blocking: the consumer's side of "release after the last device use" (peer case 52:
/// a consumer that called the deleter right after launching its kernel let a recycling producer
/// free memory the kernel had yet to read).
///
/// - `tensor`: a `DLManagedTensorVersioned` of any major version (only its frozen `deleter`
///   field is read, when the release runs). NULL: nothing happens (OK).
/// - `device`: the device whose stream `stream` is; selects the runtime as for
///   `dlpack_stream_wait` (CUDA for `kDLCUDA`/`kDLCUDAHost`/`kDLCUDAManaged`, HIP for
///   `kDLROCM`/`kDLROCMHost`; contexts and current devices chosen the same way).
/// - `stream`: the native stream of the last device use (`CUstream`, `hipStream_t`; NULL and
///   CUDA's 0x1/0x2 for the default streams).
///
/// What happens: one pooled event (the pool `dlpack_stream_wait` uses) is recorded on `stream`
/// on the calling thread, and the release is queued; this call returns at once. A completion
/// thread of the library (started on first use, one per process) polls the event
/// (`cuEventQuery`/`hipEventQuery`, never a blocking synchronize) and, once the work before it
/// is done, calls the deleter exactly once, on that thread, then returns the event to its pool.
/// If the runtime reports an error for the event (a context that can no longer run work), the
/// deleter runs then. The deleter must therefore be callable from any thread (the DLPack Python
/// specification requires it). At process exit (`atexit`) releases still pending are never run
/// and no further runtime call is made: their memory goes with the process (no crash, no deleter
/// racing the runtimes' teardown). Not for a process that `fork`s and keeps using releases in the
/// child. A `kDLCPU` tensor (no streams) is released at once, on the calling thread.
///
/// Ownership: on OK the library owns the tensor (the caller must not touch it again); on any
/// other status nothing was released and the caller still owns it (for example: synchronize the
/// stream and call `dlpack_tensor_delete`).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_BACKEND_UNAVAILABLE` (no built-in runtime for the device
/// type or it did not load, a backend registered with `dlpack_stream_backend_register` for it,
/// which has no event query, or the completion thread could not be started) or `_DEVICE_ERROR`
/// (the event could not be created or recorded). Thread-safe.
///
/// @param[in] tensor May be NULL.
/// @param[in] stream May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the release is queued (or done: NULL tensor, `kDLCPU`)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative (checked
///   first; the tensor stays the caller's, not released)
/// @retval DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE when no built-in runtime with events serves
///   the device type, or the completion thread could not be started (the tensor is not released)
/// @retval DLPACK_HELPERS_STATUS_DEVICE_ERROR when the runtime failed to create or record the event
///   (the tensor is not released)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_delete_after_stream(
    tensor: *mut crate::abi::DLManagedTensorVersioned,
    device: DLDevice,
    stream: *mut c_void,
) -> dlpack_helpers_status {
    boundary::status(|| {
        if tensor.is_null() {
            return Ok(());
        }
        // A negative id is no device: refused with the tensor still the caller's (peer case 54).
        crate::rules::device::check_id(device, "device")?;
        let fam = stream::family(device.device_type);
        if fam == Family::Cpu {
            // SAFETY: the caller hands the tensor over (its contract); no streams to wait for.
            unsafe { crate::capi::tensor::dlpack_tensor_delete(tensor) };
            return Ok(());
        }
        if registered(device.device_type).is_some() {
            return Err(Error::BackendUnavailable(format!(
                "device type {} is served by a registered stream backend, which has no event \
                 query: synchronize the stream (dlpack_stream_synchronize) and call \
                 dlpack_tensor_delete instead",
                device.device_type.0
            )));
        }
        let token = match fam {
            Family::Cuda => {
                let (ctx, ev) = cuda::get()?.record(device, stream as usize)?;
                crate::host::release::Token::Cuda(ctx, ev)
            }
            Family::Rocm => {
                let (key, ev) = hip::get()?.record(device, stream as usize)?;
                crate::host::release::Token::Hip(key, ev)
            }
            Family::Cpu | Family::Other => return Err(unavailable(device)),
        };
        let t = tensor as usize;
        let release = Box::new(move || {
            // SAFETY: the tensor handed over by the caller, released exactly once (this closure
            // is called once, by the completion thread).
            unsafe {
                crate::capi::tensor::dlpack_tensor_delete(
                    t as *mut crate::abi::DLManagedTensorVersioned,
                )
            }
        });
        crate::host::release::submit(crate::host::release::Pending { token, release })
            .map_err(|(e, _unrun)| e)
        // On Err the pending release is dropped unrun (the caller keeps the tensor); its event
        // stays recorded and is not reused.
    })
}

/// Load and initialize the built-in backend for a device type now, and say whether it works:
/// CUDA (`libcuda.so.1`, override with the environment variable `DLPACK_HELPERS_CUDA_LIBRARY`)
/// for `kDLCUDA`, `kDLCUDAHost`, `kDLCUDAManaged`; HIP (`libamdhip64.so`, override with
/// `DLPACK_HELPERS_HIP_LIBRARY`) for `kDLROCM`, `kDLROCMHost`. A registered backend answers
/// first, for any type (it also takes precedence over CUDA and HIP), and is the only backend
/// for other types. The first call per runtime loads it (cost of `dlopen` and
/// `cuInit`/`hipInit`); the answer is kept for the process, except "not found": when the
/// runtime's library was not in the process (and no override named one), a later call finds a
/// runtime the application has loaded since (for example by full path) and loads it then.
///
/// Returns `DLPACK_HELPERS_STATUS_OK` or `_BACKEND_UNAVAILABLE` with a message naming the
/// library and the reason (also for `kDLCPU`, which has no streams and needs no backend:
/// `dlpack_stream_synchronize` does nothing for it). Thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK when the backend for the device type is loaded and initialized
/// @retval DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE when it is not (also for `kDLCPU`, which needs
///   none); the message names the library and the reason
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_stream_backend_check(
    device_type: DLDeviceType,
) -> dlpack_helpers_status {
    boundary::status(|| {
        if registered(device_type).is_some() {
            return Ok(());
        }
        let d = DLDevice {
            device_type,
            device_id: 0,
        };
        match stream::family(device_type) {
            Family::Cuda => cuda::get().map(|_| ()),
            Family::Rocm => hip::get().map(|_| ()),
            Family::Cpu | Family::Other => Err(unavailable(d)),
        }
    })
}

/// `CAP_CUDA` / `CAP_ROCM` bits of the built-in backends that load and initialize. Used by
/// `dlpack_get_info`: the first call pays for loading the drivers once (see `rules::info`).
pub(crate) fn backend_capabilities() -> u64 {
    let mut caps = 0;
    if cuda::available() {
        caps |= info::CAP_CUDA;
    }
    if hip::available() {
        caps |= info::CAP_ROCM;
    }
    caps
}

/// The C counterpart of `__dlpack_device__` for a producer that holds a raw host-visible
/// pointer and has not exported yet: which DLPack device the memory at `ptr` belongs to.
///
/// The backends are asked as by `dlpack_pointer_classify` (CUDA driver, then HIP runtime, then
/// Level Zero with the context registered by `dlpack_level_zero_context_set`), and the first
/// that claims the memory answers: CUDA managed memory → `(kDLCUDAManaged, 0)` (peer case 12),
/// CUDA pinned or registered host memory → `(kDLCUDAHost, 0)` (peer case 10), CUDA device
/// memory → `(kDLCUDA, ordinal)`; HIP pinned host memory → `(kDLROCMHost, 0)`, HIP device and
/// managed memory → `(kDLROCM, device)`; Level Zero USM device and shared memory →
/// `(kDLOneAPI, ordinal)` where the device list registered with
/// `dlpack_level_zero_context_set_devices` names its device, else `_DEVICE_ID_UNKNOWN` (also
/// for USM host memory): the id is never answered as -1 (peer case 54). `(kDLCPU, 0)` when
/// the memory is confirmed host memory: every backend that could own it was asked and none
/// knows the pointer, or is absent from the process (a CPU-only process, where no CUDA, HIP or
/// Level Zero runtime is loaded or loadable, gets `(kDLCPU, 0)` for any host pointer: memory of
/// a runtime that is not in the process cannot exist in it; issue 22, peer case 55).
/// Otherwise (a backend that could own it was unreachable: its override names a missing file,
/// it failed to initialize, Level Zero is in use without a context, or was asked in one
/// context only) nothing is written and the status is `_DEVICE_UNKNOWN`, with a message naming the
/// backends asked and those that could not be: a device is never guessed (earlier builds
/// answered `(kDLCPU, 0)` without a driver and for HIP memory, the "device memory called CPU"
/// fault of the peer cases). `dlpack_pointer_classify` gives the same facts as
/// fields, and `dlpack_get_info`'s `DLPACK_HELPERS_CAP_POINTER_*` bits say which backends can
/// answer in this process.
///
/// - `ptr`: any address inside the allocation (non-NULL).
/// - `out_device`: receives the device.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_NULL_POINTER`, `_DEVICE_UNKNOWN`,
/// `_DEVICE_ID_UNKNOWN` or `_DEVICE_ERROR` (a driver call failed). Thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `ptr` or `out_device` is NULL
/// @retval DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN when a backend that could own the memory could not
///   be asked, or Level Zero was asked in one context only (nothing is written)
/// @retval DLPACK_HELPERS_STATUS_DEVICE_ID_UNKNOWN when the memory is Level Zero USM memory whose
///   SYCL ordinal is not established (nothing is written)
/// @retval DLPACK_HELPERS_STATUS_DEVICE_ERROR when a driver call failed
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_pointer_get_device(
    ptr: *const c_void,
    out_device: *mut DLDevice,
) -> dlpack_helpers_status {
    boundary::status(|| {
        if ptr.is_null() {
            return Err(Error::NullPointer("ptr"));
        }
        let out = out_ptr(out_device, "out_device")?;
        let v = crate::capi::pointer::classify(ptr as usize, None)?;
        if v.class == crate::rules::pointer::MemoryClass::Unknown {
            return Err(crate::capi::pointer::unknown(ptr as usize, &v));
        }
        if !v.id_known {
            return Err(crate::capi::pointer::id_unknown(ptr as usize, &v));
        }
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(v.device) };
        Ok(())
    })
}
