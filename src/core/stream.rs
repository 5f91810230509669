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
//! | any other type | device default (NULL) | no sync | handle | handle | handle | handle | invalid |
//!
//! Pinned (`kDLCUDAHost`, `kDLROCMHost`) and managed memory follow the rules of their runtime:
//! such memory is written by work queued on that runtime's streams. Other device types with
//! queues have no standard encoding ("allowed by agreement"); this library passes the integer
//! through as an opaque handle for a registered backend.

use crate::abi::{DLDevice, DLDeviceType, DLPACK_FLAG_BITMASK_IS_COPIED, DLPackVersion};
use crate::core::Error;
use crate::core::version::{self, Export, Producer};

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
            _ => return None,
        })
    }
    /// Whether a stream of this kind must be made to wait for the producer.
    pub const fn needs_wait(self) -> bool {
        !matches!(self, Kind::NoSync | Kind::None)
    }
}

/// A decoded stream argument: what it means and the native handle to give the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stream {
    pub kind: Kind,
    /// The native handle (`CUstream`, `hipStream_t`, or a registered backend's handle) as an
    /// address; 0 for [`Kind::NoSync`], [`Kind::None`] and [`Kind::Default`].
    pub handle: usize,
}

impl Stream {
    pub const fn new(kind: Kind, handle: usize) -> Self {
        Stream { kind, handle }
    }
}

/// Decoding options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Accept any integer for `kDLCPU` as a no-op (PyTorch accepts -1, nanobind any integer).
    /// Off by default: the array API allows only `None` for stream-less devices.
    pub lenient_cpu: bool,
}

#[cold]
fn invalid_stream(device: DLDevice, value: i64, rule: &str) -> Error {
    Error::InvalidStream(format!(
        "stream={value} is not valid for device ({}, {}): {rule}",
        device.device_type.0, device.device_id
    ))
}

/// Decode the protocol's `stream` argument (`None` is `Option::None`) for the device the
/// consumer will use. See the module table.
#[inline]
pub fn decode(device: DLDevice, stream: Option<i64>, opts: Options) -> Result<Stream, Error> {
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
        return Err(invalid_stream(
            device,
            v,
            "kDLCPU has no streams, only None is accepted (array API)",
        ));
    }
    if v == -1 {
        return Ok(Stream::new(Kind::NoSync, 0));
    }
    if v < -1 {
        return Err(invalid_stream(
            device,
            v,
            "stream integers must be >= -1 (array API)",
        ));
    }
    Ok(match (fam, v) {
        (Family::Cuda, 0) => {
            return Err(invalid_stream(
                device,
                v,
                "0 is disallowed on CUDA because it is ambiguous; pass 1 for the legacy default \
                 stream or 2 for the per-thread default stream (array API)",
            ));
        }
        (Family::Cuda, 1) => Stream::new(Kind::LegacyDefault, CUDA_STREAM_LEGACY),
        (Family::Cuda, 2) => Stream::new(Kind::PerThreadDefault, CUDA_STREAM_PER_THREAD),
        (Family::Rocm, 0) => Stream::new(Kind::Default, 0),
        (Family::Rocm, 1 | 2) => {
            return Err(invalid_stream(
                device,
                v,
                "1 and 2 are not supported on ROCm; pass 0 for the default stream (array API)",
            ));
        }
        _ => Stream::new(Kind::Handle, v as usize),
    })
}

/// Encode a native stream of `device` into the protocol integer a consumer passes to a Python
/// producer's `__dlpack__(stream=…)`. `None` means "pass no stream" (stream-less devices).
///
/// CUDA: NULL and `CU_STREAM_LEGACY` → 1, `CU_STREAM_PER_THREAD` → 2, a handle → its address.
/// ROCm: NULL → 0, `hipStreamPerThread` → error (no protocol value), a handle → its address.
/// CPU: `None` (only a NULL stream is accepted). Others: NULL → `None`, a handle → its address.
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
    match family(device.device_type) {
        Family::Cpu if native == 0 => Ok(None),
        Family::Cpu => Err(bad("kDLCPU has no streams")),
        Family::Cuda if native == 0 => Ok(Some(1)),
        Family::Rocm if native == HIP_STREAM_PER_THREAD => Err(bad(
            "the array API gives ROCm's per-thread default stream no value",
        )),
        Family::Rocm if native == 1 => Err(bad("1 is not a ROCm stream value")),
        Family::Other if native == 0 => Ok(None),
        _ => Ok(Some(native as i64)),
    }
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
    /// Flag bits to set on a versioned export (`DLPACK_FLAG_BITMASK_IS_COPIED` for a copy).
    pub flags: u64,
    pub sync: Sync,
    /// The consumer's stream, decoded for `device`.
    pub stream: Stream,
}

#[cold]
fn unsupported_device(from: DLDevice, to: DLDevice, why: &str) -> Error {
    Error::UnsupportedDevice(format!(
        "dl_device=({}, {}) requested for a tensor on ({}, {}): {why} (array API: BufferError)",
        to.device_type.0, to.device_id, from.device_type.0, from.device_id
    ))
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
///   (`copy=False` → [`Error::CopyForbidden`]); either way the producer blocks the host until its
///   work is done ([`Sync::Host`]);
/// - any other `dl_device` → [`Error::UnsupportedDevice`] (the array API only requires kDLCPU);
/// - every copy sets `DLPACK_FLAG_BITMASK_IS_COPIED` (the legacy struct cannot carry it).
#[inline]
pub fn resolve(
    tensor: DLDevice,
    producer: Producer,
    req: &Request,
    opts: Options,
) -> Result<Plan, Error> {
    let export = version::negotiate(producer, req.max_version)?;
    let target = req.dl_device.unwrap_or(tensor);
    let same = target == tensor
        || (target.device_type == DLDeviceType::kDLCPU
            && tensor.device_type == DLDeviceType::kDLCPU);
    let plan = |copy: bool, device: DLDevice, sync: Sync, stream: Stream| Plan {
        export,
        device,
        copy,
        flags: if copy {
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
        return Err(unsupported_device(
            tensor,
            target,
            "only the tensor's own device and (kDLCPU, 0) can be served",
        ));
    }
    if target.device_id != 0 {
        return Err(unsupported_device(
            tensor,
            target,
            "kDLCPU has device_id 0 only",
        ));
    }
    if let Some(v) = req.stream {
        return Err(Error::InvalidStream(format!(
            "stream={v} was passed with dl_device=(kDLCPU, 0): a CPU export takes stream None and \
             the producer synchronizes before returning (array API)"
        )));
    }
    let host = DLDevice {
        device_type: DLDeviceType::kDLCPU,
        device_id: 0,
    };
    let none = Stream::new(Kind::None, 0);
    let in_place = crate::core::device::is_cpu_accessible(tensor);
    let copy = match (req.copy, in_place) {
        (CopyMode::Always, _) => true,
        (_, true) => false,
        (CopyMode::IfNeeded, false) => true,
        (CopyMode::Never, false) => {
            return Err(Error::CopyForbidden(format!(
                "dl_device=(kDLCPU, 0) requested for a tensor on ({}, {}) with copy=False, but the \
                 memory is not host-accessible and needs a copy (array API: BufferError)",
                tensor.device_type.0, tensor.device_id
            )));
        }
    };
    Ok(plan(copy, host, Sync::Host, none))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(t: i32, id: i32) -> DLDevice {
        DLDevice {
            device_type: DLDeviceType(t),
            device_id: id,
        }
    }
    const STRICT: Options = Options { lenient_cpu: false };
    const LENIENT: Options = Options { lenient_cpu: true };
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
        let d = dev(14, 0);
        assert_eq!(ok(d, None), (Kind::Default, 0));
        assert_eq!(ok(d, Some(0)), (Kind::Handle, 0));
        assert_eq!(ok(d, Some(5)), (Kind::Handle, 5));
        assert_eq!(ok(d, Some(-1)).0, Kind::NoSync);
        assert!(err(d, Some(-5)));
    }

    #[test]
    fn encode_round_trips_through_decode() {
        for (t, natives) in [
            (CUDA, vec![0usize, 1, 2, 0xdead_bee0]),
            (ROCM, vec![0, 0xdead_bee0]),
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
        assert_eq!(encode(dev(1, 0), 0).unwrap(), None);
        assert!(encode(dev(1, 0), 8).is_err());
        assert!(encode(dev(CUDA, 0), usize::MAX).is_err());
    }

    fn producer() -> Producer {
        Producer {
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
                        let same =
                            target == src || (target.device_type.0 == 1 && src.device_type.0 == 1);
                        match got {
                            Ok(p) => {
                                assert_eq!(p.copy, p.flags == DLPACK_FLAG_BITMASK_IS_COPIED);
                                assert_eq!(p.export, version::negotiate(producer(), mv).unwrap());
                                if same {
                                    assert_eq!(p.copy, copy == CopyMode::Always);
                                    assert_eq!(p.device, src);
                                    assert_eq!(p.sync == Sync::StreamWait, src.device_type.0 != 1);
                                } else {
                                    assert_eq!(target, dev(1, 0));
                                    assert_eq!(p.sync, Sync::Host);
                                    assert_eq!(p.device, dev(1, 0));
                                    let host = crate::core::device::is_cpu_accessible(src);
                                    assert_eq!(p.copy, copy == CopyMode::Always || !host);
                                }
                            }
                            Err(Error::CopyForbidden(_)) => {
                                assert!(!same && copy == CopyMode::Never);
                                assert!(!crate::core::device::is_cpu_accessible(src));
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
