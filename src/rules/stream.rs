//! Stream exchange rules: the `stream` argument of `__dlpack__` and the resolution of a whole
//! export request (`max_version`, `stream`, `dl_device`, `copy`) into a producer's plan.
//!
//! Everything here is pure and allocation-free on success (errors format a message).
//!
//! # Stream values (array API `__dlpack__`, DLPack spec §4.4, §6 item 19)
//!
//! | device family | absent (`None`) | -1 | 0 | 1 | 2 | > 2 | < -1 |
//! |---|---|---|---|---|---|---|---|
//! | CUDA (`kDLCUDA`, `kDLCUDAHost`, `kDLCUDAManaged`) | legacy default | no sync | **invalid** | legacy default | per-thread default | handle | invalid |
//! | ROCm (`kDLROCM`, `kDLROCMHost`) | default (NULL) | no sync | default (NULL) | **invalid** | **invalid** | handle | invalid |
//! | `kDLCPU` | nothing to sync | invalid (lenient: no-op) | invalid (lenient: no-op) | … | … | … | invalid (lenient: no-op) |
//! | any other type | device default (NULL) | no sync | **invalid** | handle | handle | handle | invalid |
//!
//! Pinned (`kDLCUDAHost`, `kDLROCMHost`) and managed memory follow the rules of their runtime:
//! such memory is written by work queued on that runtime's streams. Other device types with
//! queues have no standard encoding ("allowed by agreement"); this library's rule for them is
//! the one that needs no agreement: `None` is the device's default queue (a NULL handle), -1 is
//! "no sync", and a positive integer is an opaque, non-NULL handle for a registered backend. 0
//! is refused, as on CUDA: it would be a NULL handle, which stands for the default queue here, so
//! it could mean either "default" or "the handle 0" and the standard does not say which.
//!
//! # Decode and encode are inverses
//!
//! [`encode_decoded`] is the exact inverse of [`decode`] in strict mode: for every integer `v`
//! that `decode` accepts, `encode_decoded(decode(v)) == Some(v)`, and `encode_decoded` refuses
//! every stream that `decode` cannot produce. `None` has no inverse of its own where a value
//! means the same (CUDA `None` and 1 both decode to the legacy default stream, which encodes as
//! 1; ROCm `None` and 0 encode as 0). The lenient CPU mode maps every integer to
//! [`Kind::NoSync`] and so cannot be inverted: a CPU stream always encodes as `None`, the only
//! value the array API allows. [`encode`] takes a bare native handle (what a consumer holds) and
//! encodes the stream it names.

use crate::abi::{DLDevice, DLDeviceType, DLPACK_FLAG_BITMASK_IS_COPIED, DLPackVersion};
use crate::rules::version::{self, Export, Exporter};
use crate::rules::{Error, Refusal};

/// CUDA driver API value of the legacy default stream (`CU_STREAM_LEGACY`).
pub const CUDA_STREAM_LEGACY: usize = 0x1;
/// CUDA driver API value of the per-thread default stream (`CU_STREAM_PER_THREAD`).
pub const CUDA_STREAM_PER_THREAD: usize = 0x2;
/// HIP's per-thread default stream (`hipStreamPerThread`): has no protocol integer.
pub const HIP_STREAM_PER_THREAD: usize = 0x2;

/// Which runtime's rules apply to a device type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `kDLCPU`: no streams, only `None`.
    Cpu,
    /// `kDLCUDA`, `kDLCUDAHost`, `kDLCUDAManaged`.
    Cuda,
    /// `kDLROCM`, `kDLROCMHost`.
    Rocm,
    /// Everything else: opaque handles by agreement.
    Other,
}

/// The rule family of a device type.
#[inline]
pub const fn family(device_type: DLDeviceType) -> Family {
    match device_type.0 {
        1 => Family::Cpu,
        2 | 3 | 13 => Family::Cuda,
        10 | 11 => Family::Rocm,
        _ => Family::Other,
    }
}

/// What a decoded stream argument asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `-1`: the producer must not synchronize (or a lenient CPU value).
    NoSync,
    /// Stream-less device and no stream: nothing to synchronize.
    None,
    /// CUDA legacy default stream (`None` or 1); native handle `CU_STREAM_LEGACY`.
    LegacyDefault,
    /// CUDA per-thread default stream (2); native handle `CU_STREAM_PER_THREAD`.
    PerThreadDefault,
    /// The device's default (NULL) stream: ROCm `None` or 0, other devices' `None`.
    Default,
    /// A native stream handle given by the consumer.
    Handle,
    /// A SYCL queue (`sycl::queue *`, for example dpctl's `DPCTLSyclQueueRef`), `kDLOneAPI`.
    SyclQueue,
    /// A Level Zero command queue (`ze_command_queue_handle_t`), `kDLOneAPI`.
    ZeCommandQueue,
    /// A Level Zero command list (`ze_command_list_handle_t`, immediate or not), `kDLOneAPI`.
    ZeCommandList,
}

impl Kind {
    /// The C value (`DLPACK_HELPERS_STREAM_*`).
    pub const fn as_raw(self) -> i32 {
        match self {
            Kind::NoSync => 0,
            Kind::None => 1,
            Kind::LegacyDefault => 2,
            Kind::PerThreadDefault => 3,
            Kind::Default => 4,
            Kind::Handle => 5,
            Kind::SyclQueue => 6,
            Kind::ZeCommandQueue => 7,
            Kind::ZeCommandList => 8,
        }
    }
    /// The inverse of [`Kind::as_raw`].
    pub const fn from_raw(v: i32) -> Option<Kind> {
        Some(match v {
            0 => Kind::NoSync,
            1 => Kind::None,
            2 => Kind::LegacyDefault,
            3 => Kind::PerThreadDefault,
            4 => Kind::Default,
            5 => Kind::Handle,
            6 => Kind::SyclQueue,
            7 => Kind::ZeCommandQueue,
            8 => Kind::ZeCommandList,
            _ => return None,
        })
    }
    /// Whether a stream of this kind must be made to wait for the producer.
    pub const fn needs_wait(self) -> bool {
        !matches!(self, Kind::NoSync | Kind::None)
    }
    /// Whether this kind is an object handle (a queue or command list passed as an object, not
    /// as a protocol integer): see [`decode_handle`].
    pub const fn is_object_handle(self) -> bool {
        matches!(
            self,
            Kind::SyclQueue | Kind::ZeCommandQueue | Kind::ZeCommandList
        )
    }
}

/// Whether a device type defines streams as object handles: `kDLOneAPI` (a SYCL queue, or a
/// Level Zero command queue or command list; dpctl and dpnp pass a `SyclQueue` object as
/// `__dlpack__`'s `stream`, the array API leaving the meaning device-specific).
pub const fn takes_object_handles(device_type: DLDeviceType) -> bool {
    device_type.0 == 14
}

/// Decode a stream given as an object handle of a declared kind (see [`Kind::is_object_handle`])
/// for the device the consumer will use. Only `kDLOneAPI` defines such streams: any other device
/// is [`Error::InvalidStreamType`] (Python's `TypeError`); a NULL handle is
/// [`Error::InvalidStream`]; a kind that is not an object handle is [`Error::InvalidArgument`]
/// (integers go through [`decode`]).
pub fn decode_handle(device: DLDevice, kind: Kind, handle: usize) -> Result<Stream, Error> {
    if !kind.is_object_handle() {
        return Err(Error::invalid(format!(
            "stream kind {} is not an object handle kind (DLPACK_HELPERS_STREAM_SYCL_QUEUE, \
             _ZE_COMMAND_QUEUE, _ZE_COMMAND_LIST); decode integer streams with \
             dlpack_stream_decode",
            kind.as_raw()
        )));
    }
    if !takes_object_handles(device.device_type) {
        return Err(Error::InvalidStreamType(format!(
            "device type {} does not take queue objects as streams (only kDLOneAPI does); pass \
             an integer stream or None",
            device.device_type.0
        )));
    }
    if handle == 0 {
        return Err(Error::InvalidStream(format!(
            "the stream handle of kind {} for device ({}, {}) is NULL; pass None for the default \
             queue",
            kind.as_raw(),
            device.device_type.0,
            device.device_id
        )));
    }
    Ok(Stream::new(kind, handle))
}

/// [`resolve`] with the consumer's stream given as an object handle (`req.stream` must be
/// `None`): the plan is the one [`resolve`] makes without a stream, with the handle as its
/// stream and [`Sync::StreamWait`]. A handle with `dl_device = (kDLCPU, 0)` for a tensor
/// elsewhere is refused like an integer stream there ([`Error::InvalidStream`]).
pub fn resolve_with_handle(
    tensor: DLDevice,
    producer: Exporter,
    req: &Request,
    opts: DecodeOptions,
    kind: Kind,
    handle: usize,
) -> Result<Plan, Error> {
    if req.stream.is_some() {
        return Err(Error::invalid(
            "request->has_stream is true and a stream handle is given too: give the stream once",
        ));
    }
    let mut plan = resolve(tensor, producer, req, opts)?;
    if plan.device != tensor || req.dl_device.is_some_and(|d| d != tensor) {
        return Err(Error::InvalidStream(format!(
            "a stream handle was given with dl_device ({}, {}), but the data goes to the host, \
             which has no streams (array API: stream must be None then)",
            plan.device.device_type.0, plan.device.device_id
        )));
    }
    plan.stream = decode_handle(tensor, kind, handle)?;
    plan.sync = Sync::StreamWait;
    Ok(plan)
}

/// A decoded stream argument: what it means and the native handle to give the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stream {
    pub kind: Kind,
    /// The native handle (`CUstream`, `hipStream_t`, or a registered backend's handle) as an
    /// address; 0 for [`Kind::NoSync`], [`Kind::None`] and [`Kind::Default`] and never 0 for
    /// the other kinds.
    pub handle: usize,
}

impl Stream {
    pub const fn new(kind: Kind, handle: usize) -> Self {
        Stream { kind, handle }
    }
}

/// Decoding options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Accept any integer for `kDLCPU` as a no-op (PyTorch accepts -1, nanobind any integer).
    /// Off by default: the array API allows only `None` for stream-less devices.
    pub lenient_cpu: bool,
}

/// Which stream rule a value breaks (the message of [`Refusal::InvalidStream`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamRule {
    CpuHasNoStreams,
    BelowMinusOne,
    CudaZero,
    RocmOneOrTwo,
    OtherZero,
    HandleTooWide,
}

impl StreamRule {
    /// The rule, as the error message states it.
    pub const fn text(self) -> &'static str {
        match self {
            StreamRule::CpuHasNoStreams => {
                "kDLCPU has no streams, only None is accepted (array API)"
            }
            StreamRule::BelowMinusOne => "stream integers must be >= -1 (array API)",
            StreamRule::CudaZero => {
                "0 is disallowed on CUDA because it is ambiguous; pass 1 for the legacy default \
                 stream or 2 for the per-thread default stream (array API)"
            }
            StreamRule::RocmOneOrTwo => {
                "1 and 2 are not supported on ROCm; pass 0 for the default stream (array API)"
            }
            StreamRule::OtherZero => {
                "the array API standardizes no stream values for this device type; this library \
                 reads a positive integer as a queue handle and None as the default queue, and \
                 refuses 0, which could mean either"
            }
            StreamRule::HandleTooWide => "the handle does not fit a pointer on this platform",
        }
    }
}

/// Which `dl_device` rule a request breaks (the message of [`Refusal::UnsupportedDevice`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceRule {
    OwnOrCpuOnly,
    CpuIdZero,
}

impl DeviceRule {
    /// The rule, as the error message states it.
    pub const fn text(self) -> &'static str {
        match self {
            DeviceRule::OwnOrCpuOnly => {
                "only the tensor's own device and (kDLCPU, 0) can be served"
            }
            DeviceRule::CpuIdZero => "kDLCPU has device_id 0 only",
        }
    }
}

#[inline(always)]
fn invalid_stream(device: DLDevice, value: i64, rule: StreamRule) -> Refusal {
    Refusal::InvalidStream {
        device,
        value,
        rule,
    }
}

/// Decode the protocol's `stream` argument (`None` is `Option::None`) for the device the
/// consumer will use. See the module table.
#[inline(always)]
pub fn decode(
    device: DLDevice,
    stream: Option<i64>,
    opts: DecodeOptions,
) -> Result<Stream, Refusal> {
    let fam = family(device.device_type);
    let Some(v) = stream else {
        return Ok(match fam {
            Family::Cpu => Stream::new(Kind::None, 0),
            Family::Cuda => Stream::new(Kind::LegacyDefault, CUDA_STREAM_LEGACY),
            Family::Rocm | Family::Other => Stream::new(Kind::Default, 0),
        });
    };
    if fam == Family::Cpu {
        if opts.lenient_cpu {
            return Ok(Stream::new(Kind::NoSync, 0));
        }
        return Err(invalid_stream(device, v, StreamRule::CpuHasNoStreams));
    }
    if v == -1 {
        return Ok(Stream::new(Kind::NoSync, 0));
    }
    if v < -1 {
        return Err(invalid_stream(device, v, StreamRule::BelowMinusOne));
    }
    Ok(match (fam, v) {
        (Family::Cuda, 0) => {
            return Err(invalid_stream(device, v, StreamRule::CudaZero));
        }
        (Family::Cuda, 1) => Stream::new(Kind::LegacyDefault, CUDA_STREAM_LEGACY),
        (Family::Cuda, 2) => Stream::new(Kind::PerThreadDefault, CUDA_STREAM_PER_THREAD),
        (Family::Rocm, 0) => Stream::new(Kind::Default, 0),
        (Family::Rocm, 1 | 2) => {
            return Err(invalid_stream(device, v, StreamRule::RocmOneOrTwo));
        }
        (Family::Other, 0) => {
            return Err(invalid_stream(device, v, StreamRule::OtherZero));
        }
        _ => match usize::try_from(v) {
            Ok(h) => Stream::new(Kind::Handle, h),
            Err(_) => {
                return Err(invalid_stream(device, v, StreamRule::HandleTooWide));
            }
        },
    })
}

/// Encode a decoded stream back into the protocol integer: the exact inverse of [`decode`]
/// (see the module docs). `None` means "pass no stream".
///
/// - [`Kind::NoSync`] → -1 (on `kDLCPU`: `None`, the only value the array API allows there);
/// - [`Kind::None`] (`kDLCPU` only) → `None`;
/// - CUDA: [`Kind::LegacyDefault`] → 1, [`Kind::PerThreadDefault`] → 2;
/// - ROCm: [`Kind::Default`] → 0; other devices: [`Kind::Default`] → `None`;
/// - [`Kind::Handle`] → the handle's address.
///
/// Any other combination (a kind the device's decode table never yields, a NULL handle where
/// one is required, a non-NULL handle where none belongs, or the special values 0x1/0x2 that
/// [`decode`] gives another kind) is [`Error::InvalidStream`].
#[inline]
pub fn encode_decoded(device: DLDevice, stream: Stream) -> Result<Option<i64>, Error> {
    let fam = family(device.device_type);
    let h = stream.handle;
    let value = match (fam, stream.kind) {
        (Family::Cpu, Kind::None | Kind::NoSync) if h == 0 => None,
        (Family::Cpu, _) => return Err(not_decoded(device, stream, "kDLCPU has no streams")),
        (_, Kind::NoSync) if h == 0 => Some(-1),
        (Family::Cuda, Kind::LegacyDefault) if h == CUDA_STREAM_LEGACY => Some(1),
        (Family::Cuda, Kind::PerThreadDefault) if h == CUDA_STREAM_PER_THREAD => Some(2),
        (Family::Rocm, Kind::Default) if h == 0 => Some(0),
        (Family::Other, Kind::Default) if h == 0 => None,
        (_, Kind::SyclQueue | Kind::ZeCommandQueue | Kind::ZeCommandList) => {
            return Err(not_decoded(
                device,
                stream,
                "a queue object handle has no integer form: pass the queue object itself",
            ));
        }
        (_, Kind::Handle) => match i64::try_from(h) {
            Ok(v) => Some(v),
            Err(_) => {
                return Err(not_decoded(
                    device,
                    stream,
                    "the address does not fit a non-negative 64-bit integer",
                ));
            }
        },
        _ => {
            return Err(not_decoded(
                device,
                stream,
                "this kind and handle are not a stream of this device type",
            ));
        }
    };
    // Exactness by construction: the value must decode to the very stream given (this refuses
    // handles that collide with another kind's value, such as a CUDA "handle" 1 or a ROCm 2).
    if fam != Family::Cpu {
        match decode(device, value, DecodeOptions::default()) {
            Ok(back) if back == stream => {}
            _ => {
                return Err(not_decoded(
                    device,
                    stream,
                    "its protocol value would decode to a different stream",
                ));
            }
        }
    }
    Ok(value)
}

#[cold]
fn not_decoded(device: DLDevice, s: Stream, rule: &str) -> Error {
    Error::InvalidStream(format!(
        "stream (kind {}, handle 0x{:x}) of device ({}, {}) has no protocol value: {rule}",
        s.kind.as_raw(),
        s.handle,
        device.device_type.0,
        device.device_id
    ))
}

/// Encode a native stream of `device` into the protocol integer a consumer passes to a Python
/// producer's `__dlpack__(stream=…)`. `None` means "pass no stream".
///
/// The handle names a stream, encoded with [`encode_decoded`]:
/// CUDA: NULL and `CU_STREAM_LEGACY` → 1, `CU_STREAM_PER_THREAD` → 2, a handle → its address.
/// ROCm: NULL → 0, `hipStreamPerThread` (0x2) and 0x1 → error (no protocol value), a handle →
/// its address. CPU: `None` (only a NULL stream is accepted). Others: NULL (the default queue)
/// → `None`, a handle → its address.
#[inline]
pub fn encode(device: DLDevice, native: usize) -> Result<Option<i64>, Error> {
    let bad = |rule: &str| {
        Error::InvalidStream(format!(
            "native stream 0x{native:x} of device ({}, {}) has no protocol value: {rule}",
            device.device_type.0, device.device_id
        ))
    };
    if native > i64::MAX as usize {
        return Err(bad(
            "the address does not fit a non-negative 64-bit integer",
        ));
    }
    let stream = match family(device.device_type) {
        Family::Cpu if native == 0 => Stream::new(Kind::None, 0),
        Family::Cpu => return Err(bad("kDLCPU has no streams")),
        Family::Cuda if native == 0 || native == CUDA_STREAM_LEGACY => {
            Stream::new(Kind::LegacyDefault, CUDA_STREAM_LEGACY)
        }
        Family::Cuda if native == CUDA_STREAM_PER_THREAD => {
            Stream::new(Kind::PerThreadDefault, CUDA_STREAM_PER_THREAD)
        }
        Family::Rocm if native == HIP_STREAM_PER_THREAD => {
            return Err(bad(
                "the array API gives ROCm's per-thread default stream no value",
            ));
        }
        Family::Rocm if native == 1 => return Err(bad("1 is not a ROCm stream value")),
        Family::Rocm | Family::Other if native == 0 => Stream::new(Kind::Default, 0),
        _ => Stream::new(Kind::Handle, native),
    };
    encode_decoded(device, stream)
}

/// `copy` of `__dlpack__`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CopyMode {
    /// `copy=None`: reuse memory when possible, copy otherwise.
    #[default]
    IfNeeded,
    /// `copy=True`: always copy.
    Always,
    /// `copy=False`: never copy; `BufferError` when a copy is needed.
    Never,
}

/// The keyword arguments of `__dlpack__`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub max_version: Option<DLPackVersion>,
    pub stream: Option<i64>,
    pub dl_device: Option<DLDevice>,
    pub copy: CopyMode,
}

/// What the producer must do about synchronization before handing out the tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    /// Nothing (`-1`, or no stream on a stream-less device).
    None,
    /// Make the consumer's stream wait for the producer's stream, without blocking the host
    /// (skipped at run time when both are the same stream).
    StreamWait,
    /// Block the host until the producer's pending work (and any copy) is complete: the tensor
    /// goes to the CPU.
    Host,
}

impl Sync {
    pub const fn as_raw(self) -> i32 {
        match self {
            Sync::None => 0,
            Sync::StreamWait => 1,
            Sync::Host => 2,
        }
    }
}

/// The producer's plan for one `__dlpack__` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Legacy or versioned struct, and the version to write.
    pub export: Export,
    /// The device the exported tensor reports.
    pub device: DLDevice,
    /// The producer must copy the data (to `device`).
    pub copy: bool,
    /// Flag bits this plan decides for a versioned export: `DLPACK_FLAG_BITMASK_IS_COPIED` when
    /// `copy`. Always 0 for [`Export::Legacy`]: the legacy struct has no `flags` field (`copy`
    /// still says whether to copy).
    pub flags: u64,
    pub sync: Sync,
    /// The consumer's stream, decoded for `device`.
    pub stream: Stream,
}

#[inline(always)]
fn unsupported_device(from: DLDevice, to: DLDevice, rule: DeviceRule) -> Refusal {
    Refusal::UnsupportedDevice { from, to, rule }
}

/// Resolve a request against the producer's tensor device and version.
///
/// Rules (array API `__dlpack__`, DLPack spec §4.4–4.6, §6 items 19–22):
/// - struct and version: [`version::negotiate`];
/// - `dl_device` absent or equal to the tensor's device: no copy unless `copy=True`; the stream
///   is decoded for that device and a wait is planned unless it is -1 or stream-less;
/// - `dl_device = (kDLCPU, 0)` for a tensor elsewhere: `stream` must be `None`; host-accessible
///   memory (`kDLCUDAHost`, `kDLROCMHost`, `kDLCUDAManaged`) is exported in place as
///   `(kDLCPU, 0)` without a copy (policy, as NumPy does), any other device needs a copy
///   (`copy=False` → [`Refusal::CopyForbidden`]); either way the producer blocks the host until its
///   work is done ([`Sync::Host`]);
/// - any other `dl_device` → [`Refusal::UnsupportedDevice`] (the array API only requires kDLCPU);
/// - every copy of a versioned export sets `DLPACK_FLAG_BITMASK_IS_COPIED`; a legacy plan has
///   `flags == 0` (the legacy struct cannot carry flags), whatever `copy` is.
#[inline(always)]
pub fn resolve(
    tensor: DLDevice,
    producer: Exporter,
    req: &Request,
    opts: DecodeOptions,
) -> Result<Plan, Refusal> {
    let export = version::negotiate(producer, req.max_version)?;
    let target = req.dl_device.unwrap_or(tensor);
    // Issue 22 (peer case 54): no negative device id, neither the tensor's nor the request's.
    if tensor.device_id < 0 || target.device_id < 0 {
        return Err(Refusal::NegativeDeviceId {
            device: if tensor.device_id < 0 { tensor } else { target },
            requested: tensor.device_id >= 0,
        });
    }
    let same = target == tensor;
    let plan = |copy: bool, device: DLDevice, sync: Sync, stream: Stream| Plan {
        export,
        device,
        copy,
        flags: if copy && matches!(export, Export::Versioned(_)) {
            DLPACK_FLAG_BITMASK_IS_COPIED
        } else {
            0
        },
        sync,
        stream,
    };
    if same {
        let stream = decode(target, req.stream, opts)?;
        let sync = if stream.kind.needs_wait() {
            Sync::StreamWait
        } else {
            Sync::None
        };
        return Ok(plan(req.copy == CopyMode::Always, tensor, sync, stream));
    }
    if target.device_type != DLDeviceType::kDLCPU {
        return Err(unsupported_device(tensor, target, DeviceRule::OwnOrCpuOnly));
    }
    if target.device_id != 0 {
        return Err(unsupported_device(tensor, target, DeviceRule::CpuIdZero));
    }
    if let Some(v) = req.stream {
        return Err(Refusal::StreamWithCpuDevice { value: v });
    }
    let host = DLDevice {
        device_type: DLDeviceType::kDLCPU,
        device_id: 0,
    };
    let none = Stream::new(Kind::None, 0);
    let in_place = crate::rules::device::is_cpu_accessible(tensor);
    let copy = match (req.copy, in_place) {
        (CopyMode::Always, _) => true,
        (_, true) => false,
        (CopyMode::IfNeeded, false) => true,
        (CopyMode::Never, false) => {
            return Err(Refusal::CopyForbidden { from: tensor });
        }
    };
    Ok(plan(copy, host, Sync::Host, none))
}

#[cfg(test)]
mod tests {
    use super::*;

    // The tests judge the errors the C layer reports: the refusal turned into its `Error`.
    fn decode(d: DLDevice, s: Option<i64>, o: DecodeOptions) -> Result<Stream, Error> {
        super::decode(d, s, o).map_err(Error::from)
    }
    fn resolve(t: DLDevice, p: Exporter, r: &Request, o: DecodeOptions) -> Result<Plan, Error> {
        super::resolve(t, p, r, o).map_err(Error::from)
    }

    fn dev(t: i32, id: i32) -> DLDevice {
        DLDevice {
            device_type: DLDeviceType(t),
            device_id: id,
        }
    }
    const STRICT: DecodeOptions = DecodeOptions { lenient_cpu: false };
    const LENIENT: DecodeOptions = DecodeOptions { lenient_cpu: true };
    const CUDA: i32 = 2;
    const ROCM: i32 = 10;

    fn ok(d: DLDevice, s: Option<i64>) -> (Kind, usize) {
        let r = decode(d, s, STRICT).unwrap();
        (r.kind, r.handle)
    }
    fn err(d: DLDevice, s: Option<i64>) -> bool {
        matches!(decode(d, s, STRICT), Err(Error::InvalidStream(_)))
    }

    /// Peer case 23: CUDA numbering (1 legacy, 2 per-thread, 0 invalid).
    #[test]
    fn case_23_cuda_stream_numbering() {
        let d = dev(CUDA, 0);
        assert!(err(d, Some(0)));
        assert_eq!(ok(d, Some(1)), (Kind::LegacyDefault, CUDA_STREAM_LEGACY));
        assert_eq!(
            ok(d, Some(2)),
            (Kind::PerThreadDefault, CUDA_STREAM_PER_THREAD)
        );
        assert_eq!(ok(d, Some(-1)), (Kind::NoSync, 0));
        assert_eq!(ok(d, None), (Kind::LegacyDefault, CUDA_STREAM_LEGACY));
        assert!(err(d, Some(-2)));
        assert!(err(d, Some(i64::MIN)));
        assert_eq!(ok(d, Some(0x7f00_1234)), (Kind::Handle, 0x7f00_1234));
        assert_eq!(ok(d, Some(3)), (Kind::Handle, 3));
    }

    /// Peer case 25: both decode tables row by row; None never means "no sync".
    #[test]
    fn case_25_cuda_and_rocm_tables() {
        for t in [2, 3, 13] {
            let d = dev(t, 0);
            assert_eq!(
                ok(d, None),
                (Kind::LegacyDefault, CUDA_STREAM_LEGACY),
                "{t}"
            );
            assert!(err(d, Some(0)));
            assert_eq!(ok(d, Some(1)).0, Kind::LegacyDefault);
            assert_eq!(ok(d, Some(2)).0, Kind::PerThreadDefault);
            assert_eq!(ok(d, Some(-1)).0, Kind::NoSync);
            assert!(err(d, Some(-2)));
        }
        for t in [10, 11] {
            let d = dev(t, 1);
            assert_eq!(ok(d, None), (Kind::Default, 0), "{t}");
            assert_eq!(ok(d, Some(0)), (Kind::Default, 0));
            assert!(err(d, Some(1)));
            assert!(err(d, Some(2)));
            assert_eq!(ok(d, Some(3)), (Kind::Handle, 3));
            assert_eq!(ok(d, Some(-1)).0, Kind::NoSync);
            assert!(err(d, Some(-2)));
        }
    }

    /// Peer case 28: CPU takes only None by default; the lenient mode accepts any integer.
    #[test]
    fn case_28_cpu_stream_strict_and_lenient() {
        let d = dev(1, 0);
        assert_eq!(ok(d, None), (Kind::None, 0));
        assert!(err(d, Some(-1)));
        assert!(err(d, Some(7)));
        assert_eq!(decode(d, Some(-1), LENIENT).unwrap().kind, Kind::NoSync);
        assert_eq!(decode(d, Some(7), LENIENT).unwrap().kind, Kind::NoSync);
        assert_eq!(decode(d, None, LENIENT).unwrap().kind, Kind::None);
        // CUDA/ROCm accept every value the array API allows.
        for v in [-1, 1, 2, 3, 1 << 40] {
            assert!(decode(dev(CUDA, 0), Some(v), STRICT).is_ok());
        }
        for v in [-1, 0, 3, 1 << 40] {
            assert!(decode(dev(ROCM, 0), Some(v), STRICT).is_ok());
        }
    }

    #[test]
    fn other_devices_pass_handles_through() {
        for t in [14, 7, 8, 9, 4242, -3] {
            let d = dev(t, 0);
            assert_eq!(ok(d, None), (Kind::Default, 0));
            assert!(
                err(d, Some(0)),
                "{t}: 0 is refused (would be a NULL handle)"
            );
            assert_eq!(ok(d, Some(1)), (Kind::Handle, 1));
            assert_eq!(ok(d, Some(2)), (Kind::Handle, 2));
            assert_eq!(ok(d, Some(5)), (Kind::Handle, 5));
            assert_eq!(ok(d, Some(-1)).0, Kind::NoSync);
            assert!(err(d, Some(-5)));
        }
    }

    /// Test values: a dense range around the special values, every power of two and its
    /// neighbours, and the extremes.
    fn values() -> Vec<i64> {
        let mut v: Vec<i64> = (-300..=300).collect();
        for k in 0..63 {
            let p = 1i64 << k;
            v.extend([p - 1, p, p + 1, -p, -p - 1]);
        }
        v.extend([i64::MAX, i64::MAX - 1, i64::MIN, i64::MIN + 1]);
        v
    }

    /// One device of every rule family, including an unknown type and oneAPI.
    const CLASSES: [i32; 9] = [1, 2, 3, 13, 10, 11, 14, 9, 12345];

    /// Property: for every device class and every value, decode either refuses it or
    /// `encode_decoded` gives the same value back; a decoded HANDLE is never NULL and the other
    /// kinds carry only their documented handle.
    #[test]
    fn decode_then_encode_is_identity() {
        for t in CLASSES {
            let d = dev(t, 0);
            for v in values() {
                let Ok(s) = decode(d, Some(v), STRICT) else {
                    continue;
                };
                assert_eq!(
                    encode_decoded(d, s).unwrap(),
                    Some(v),
                    "device {t} value {v}"
                );
                match s.kind {
                    Kind::Handle => assert_ne!(s.handle, 0, "device {t} value {v}"),
                    Kind::LegacyDefault => assert_eq!(s.handle, CUDA_STREAM_LEGACY),
                    Kind::PerThreadDefault => assert_eq!(s.handle, CUDA_STREAM_PER_THREAD),
                    Kind::NoSync | Kind::None | Kind::Default => assert_eq!(s.handle, 0),
                    Kind::SyclQueue | Kind::ZeCommandQueue | Kind::ZeCommandList => {
                        panic!("an integer never decodes to a queue object: device {t} value {v}")
                    }
                }
            }
            // None decodes to the default, which encodes to its canonical value; that value
            // decodes to the same stream.
            let s = decode(d, None, STRICT).unwrap();
            let v = encode_decoded(d, s).unwrap();
            assert_eq!(decode(d, v, STRICT).unwrap(), s, "device {t}");
        }
        for v in [0, -1, 1, 2, 3, i64::MAX] {
            for t in CLASSES {
                let d = dev(t, 0);
                if let Ok(s) = decode(d, Some(v), STRICT) {
                    assert_eq!(encode_decoded(d, s).unwrap(), Some(v));
                }
            }
        }
    }

    /// Peer case 51: queue objects are streams of kDLOneAPI only, never NULL, never integers.
    #[test]
    fn object_handles_only_for_one_api() {
        let one = dev(14, 3);
        for kind in [Kind::SyclQueue, Kind::ZeCommandQueue, Kind::ZeCommandList] {
            assert!(kind.is_object_handle() && kind.needs_wait());
            assert_eq!(Kind::from_raw(kind.as_raw()), Some(kind));
            let s = decode_handle(one, kind, 0x5000).unwrap();
            assert_eq!((s.kind, s.handle), (kind, 0x5000));
            assert!(matches!(
                encode_decoded(one, s),
                Err(Error::InvalidStream(_))
            ));
            assert!(matches!(
                decode_handle(one, kind, 0),
                Err(Error::InvalidStream(_))
            ));
            for t in CLASSES.into_iter().filter(|&t| t != 14) {
                assert!(matches!(
                    decode_handle(dev(t, 0), kind, 0x5000),
                    Err(Error::InvalidStreamType(_))
                ));
            }
        }
        for k in [0, 1, 2, 3, 4, 5] {
            let kind = Kind::from_raw(k).unwrap();
            assert!(!kind.is_object_handle());
            assert!(matches!(
                decode_handle(one, kind, 0x5000),
                Err(Error::InvalidArgument(_))
            ));
        }
        assert_eq!(Kind::from_raw(9), None);
    }

    /// Property: `encode_decoded` accepts only what decode produces, so the other direction is
    /// an identity too.
    #[test]
    fn encode_accepts_only_decoded_streams() {
        let kinds = [0, 1, 2, 3, 4, 5, 6, 7, 8].map(|k| Kind::from_raw(k).unwrap());
        let handles = [0usize, 1, 2, 3, 0xdead_bee0, i64::MAX as usize, usize::MAX];
        for t in CLASSES {
            let d = dev(t, 0);
            for kind in kinds {
                for h in handles {
                    let s = Stream::new(kind, h);
                    let Ok(v) = encode_decoded(d, s) else {
                        continue;
                    };
                    if t == 1 {
                        // CPU: None and the lenient NoSync both mean "nothing to sync".
                        assert_eq!(v, None);
                        assert!(matches!(kind, Kind::None | Kind::NoSync) && h == 0);
                    } else {
                        assert_eq!(decode(d, v, STRICT).unwrap(), s, "{t} {s:?}");
                    }
                }
            }
        }
        // The lenient CPU mode is many-to-one: every integer encodes back as None.
        for v in [-1, 0, 7] {
            let s = decode(dev(1, 0), Some(v), LENIENT).unwrap();
            assert_eq!(encode_decoded(dev(1, 0), s).unwrap(), None);
        }
    }

    #[test]
    fn encode_round_trips_through_decode() {
        for (t, natives) in [
            (CUDA, vec![0usize, 1, 2, 0xdead_bee0]),
            (ROCM, vec![0, 0xdead_bee0]),
            (14, vec![0, 1, 2, 0xdead_bee0]),
        ] {
            for n in natives {
                let d = dev(t, 0);
                let v = encode(d, n).unwrap();
                let back = decode(d, v, STRICT).unwrap();
                let want = if t == CUDA && n == 0 {
                    CUDA_STREAM_LEGACY
                } else {
                    n
                };
                assert_eq!(back.handle, want, "{t} {n}");
            }
        }
        assert_eq!(encode(dev(CUDA, 0), 0).unwrap(), Some(1));
        assert_eq!(encode(dev(ROCM, 0), 0).unwrap(), Some(0));
        assert!(encode(dev(ROCM, 0), HIP_STREAM_PER_THREAD).is_err());
        assert!(encode(dev(ROCM, 0), 1).is_err());
        assert_eq!(encode(dev(1, 0), 0).unwrap(), None);
        assert!(encode(dev(1, 0), 8).is_err());
        assert!(encode(dev(CUDA, 0), usize::MAX).is_err());
        // Other device types: NULL is the default queue (None), which decodes back to it.
        assert_eq!(encode(dev(14, 0), 0).unwrap(), None);
        assert_eq!(decode(dev(14, 0), None, STRICT).unwrap().handle, 0);
        assert_eq!(encode(dev(14, 0), 1).unwrap(), Some(1));
    }

    fn producer() -> Exporter {
        Exporter {
            version: DLPackVersion::new(1, 3),
            exports_legacy: true,
            no_max_version_keyword: false,
        }
    }
    fn req(dl: Option<DLDevice>, copy: CopyMode, stream: Option<i64>) -> Request {
        Request {
            max_version: Some(DLPackVersion::new(1, 3)),
            stream,
            dl_device: dl,
            copy,
        }
    }

    /// Peer case 47: copy=False with a cross-device request is BufferError (CopyForbidden), and
    /// every copy sets IS_COPIED.
    #[test]
    fn case_47_copy_and_dl_device() {
        let cpu = dev(1, 0);
        let gpu = dev(CUDA, 0);
        let r = |src, c, s| resolve(src, producer(), &req(Some(cpu), c, s), STRICT);
        assert!(matches!(
            r(gpu, CopyMode::Never, None),
            Err(Error::CopyForbidden(_))
        ));
        for c in [CopyMode::IfNeeded, CopyMode::Always] {
            let p = r(gpu, c, None).unwrap();
            assert!(p.copy);
            assert_eq!(p.flags, DLPACK_FLAG_BITMASK_IS_COPIED);
            assert_eq!(p.device, cpu);
            assert_eq!(p.sync, Sync::Host);
        }
        let p = r(cpu, CopyMode::Always, None).unwrap();
        assert!(p.copy && p.flags == DLPACK_FLAG_BITMASK_IS_COPIED && p.device == cpu);
        // Policy: host-accessible memory is served in place, reported as (kDLCPU, 0), with a host
        // synchronization before return.
        for t in [3, 11, 13] {
            let p = r(dev(t, 0), CopyMode::Never, None).unwrap();
            assert!(!p.copy, "{t}");
            assert_eq!(p.flags, 0);
            assert_eq!(p.device, cpu);
            assert_eq!(p.sync, Sync::Host);
        }
        assert!(matches!(
            r(gpu, CopyMode::IfNeeded, Some(1)),
            Err(Error::InvalidStream(_))
        ));
        assert!(matches!(
            r(gpu, CopyMode::IfNeeded, Some(-1)),
            Err(Error::InvalidStream(_))
        ));
        // Unsupported targets.
        let other = resolve(
            gpu,
            producer(),
            &req(Some(dev(CUDA, 1)), CopyMode::IfNeeded, None),
            STRICT,
        );
        assert!(matches!(other, Err(Error::UnsupportedDevice(_))));
        let cpu1 = resolve(
            gpu,
            producer(),
            &req(Some(dev(1, 1)), CopyMode::IfNeeded, None),
            STRICT,
        );
        assert!(matches!(cpu1, Err(Error::UnsupportedDevice(_))));
    }

    /// Peer case 47, the exporter's cases on the tensor's own device: a CPU tensor asked for
    /// (kDLCPU, 0) shares unless copy=True, a device tensor cannot be exported to another
    /// device, and a tensor served where it is keeps its device id and waits on the stream.
    #[test]
    fn case_47_own_device_and_foreign_target() {
        let cpu = dev(1, 0);
        let r = |src, dl, c, s| resolve(src, producer(), &req(dl, c, s), STRICT);
        for c in [CopyMode::Never, CopyMode::IfNeeded] {
            let p = r(cpu, Some(cpu), c, None).unwrap();
            assert_eq!(
                (p.device, p.copy, p.flags, p.sync),
                (cpu, false, 0, Sync::None)
            );
        }
        assert!(matches!(
            r(cpu, Some(dev(CUDA, 0)), CopyMode::IfNeeded, None),
            Err(Error::UnsupportedDevice(_))
        ));
        let gpu1 = dev(CUDA, 1);
        for dl in [None, Some(gpu1)] {
            let p = r(gpu1, dl, CopyMode::IfNeeded, Some(7)).unwrap();
            assert_eq!((p.device, p.copy, p.flags), (gpu1, false, 0));
            assert_eq!(p.sync, Sync::StreamWait);
            assert_eq!(p.stream, Stream::new(Kind::Handle, 7));
        }
        // A stream with dl_device=(kDLCPU, 0) is refused for a CPU tensor too (kDLCPU takes only
        // None), as for a device tensor.
        assert!(matches!(
            r(cpu, Some(cpu), CopyMode::IfNeeded, Some(1)),
            Err(Error::InvalidStream(_))
        ));
    }

    /// A legacy plan never carries flags (the struct has none) but still says whether to copy;
    /// a versioned plan sets IS_COPIED exactly when it copies.
    #[test]
    fn legacy_plan_has_no_flags() {
        let cpu = dev(1, 0);
        for (mv, versioned) in [
            (None, false),
            (Some(DLPackVersion::new(0, 8)), false),
            (Some(DLPackVersion::new(1, 3)), true),
        ] {
            for (src, dl) in [(cpu, None), (dev(CUDA, 0), None), (dev(CUDA, 0), Some(cpu))] {
                for copy in [CopyMode::IfNeeded, CopyMode::Always, CopyMode::Never] {
                    let rq = Request {
                        max_version: mv,
                        stream: None,
                        dl_device: dl,
                        copy,
                    };
                    let got = resolve(src, producer(), &rq, STRICT);
                    if dl.is_some() && copy == CopyMode::Never {
                        assert!(matches!(got, Err(Error::CopyForbidden(_))));
                        continue;
                    }
                    let p = got.unwrap();
                    assert_eq!(matches!(p.export, Export::Versioned(_)), versioned);
                    let copies = copy == CopyMode::Always || dl.is_some();
                    assert_eq!(p.copy, copies, "{mv:?} {src:?} {dl:?} {copy:?}");
                    let want = if copies && versioned {
                        DLPACK_FLAG_BITMASK_IS_COPIED
                    } else {
                        0
                    };
                    assert_eq!(p.flags, want, "{mv:?} {src:?} {dl:?} {copy:?}");
                }
            }
        }
    }

    /// `dl_device` must equal the tensor's device to be "the same": (kDLCPU, 1) is refused for
    /// a CPU tensor as for any other (kDLCPU has device_id 0 only).
    #[test]
    fn cpu_device_id_other_than_zero_is_refused_everywhere() {
        for src in [dev(1, 0), dev(CUDA, 0), dev(13, 0)] {
            let got = resolve(
                src,
                producer(),
                &req(Some(dev(1, 1)), CopyMode::IfNeeded, None),
                STRICT,
            );
            assert!(matches!(got, Err(Error::UnsupportedDevice(_))), "{src:?}");
        }
        // A tensor that itself reports (kDLCPU, 1) is served as itself when no dl_device is
        // given, and as (kDLCPU, 0) in place when that is asked for.
        let odd = dev(1, 1);
        let p = resolve(odd, producer(), &req(None, CopyMode::Never, None), STRICT).unwrap();
        assert_eq!((p.device, p.copy, p.sync), (odd, false, Sync::None));
        let p = resolve(
            odd,
            producer(),
            &req(Some(dev(1, 0)), CopyMode::Never, None),
            STRICT,
        )
        .unwrap();
        assert_eq!((p.device, p.copy, p.sync), (dev(1, 0), false, Sync::Host));
    }

    /// Every combination of device, version, dl_device and copy resolves consistently.
    #[test]
    fn resolution_matrix() {
        let devices = [
            dev(1, 0),
            dev(CUDA, 0),
            dev(CUDA, 1),
            dev(3, 0),
            dev(13, 0),
            dev(ROCM, 0),
            dev(11, 0),
            dev(14, 0),
        ];
        let versions = [
            None,
            Some(DLPackVersion::new(0, 8)),
            Some(DLPackVersion::new(1, 0)),
            Some(DLPackVersion::new(1, 9)),
        ];
        for &src in &devices {
            for dl in std::iter::once(None).chain(devices.iter().copied().map(Some)) {
                for copy in [CopyMode::IfNeeded, CopyMode::Always, CopyMode::Never] {
                    for mv in versions {
                        let rq = Request {
                            max_version: mv,
                            stream: None,
                            dl_device: dl,
                            copy,
                        };
                        let got = resolve(src, producer(), &rq, STRICT);
                        let target = dl.unwrap_or(src);
                        let same = target == src;
                        match got {
                            Ok(p) => {
                                let versioned = matches!(p.export, Export::Versioned(_));
                                assert_eq!(
                                    p.flags,
                                    if p.copy && versioned {
                                        DLPACK_FLAG_BITMASK_IS_COPIED
                                    } else {
                                        0
                                    }
                                );
                                assert_eq!(p.export, version::negotiate(producer(), mv).unwrap());
                                if same {
                                    assert_eq!(p.copy, copy == CopyMode::Always);
                                    assert_eq!(p.device, src);
                                    assert_eq!(p.sync == Sync::StreamWait, src.device_type.0 != 1);
                                } else {
                                    assert_eq!(target, dev(1, 0));
                                    assert_eq!(p.sync, Sync::Host);
                                    assert_eq!(p.device, dev(1, 0));
                                    let host = crate::rules::device::is_cpu_accessible(src);
                                    assert_eq!(p.copy, copy == CopyMode::Always || !host);
                                }
                            }
                            Err(Error::CopyForbidden(_)) => {
                                assert!(!same && copy == CopyMode::Never);
                                assert!(!crate::rules::device::is_cpu_accessible(src));
                            }
                            Err(Error::UnsupportedDevice(_)) => {
                                assert!(!same && target != dev(1, 0))
                            }
                            Err(e) => panic!("{src:?} {dl:?} {copy:?} {mv:?}: {e}"),
                        }
                    }
                }
            }
        }
    }
}
