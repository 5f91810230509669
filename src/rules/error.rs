//! The crate's error type. Each variant maps to exactly one C status code in `capi/error.rs`.

use crate::abi::{DLDevice, DLPackVersion};
use crate::rules::stream::{DeviceRule, StreamRule};

/// Everything that can go wrong in a helper. Messages name the argument and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A required pointer argument is NULL.
    #[error("{0} is NULL")]
    NullPointer(&'static str),
    /// An argument's value is out of its documented range.
    #[error("{0}")]
    InvalidArgument(String),
    /// A Rust panic was caught at the C boundary.
    #[error("internal error (panic caught at the C boundary): {0}")]
    Panic(String),
    /// A versioned tensor (or version) whose major this library cannot read.
    #[error(
        "{what} has DLPack version {}.{}, but this library reads major version {supported} only \
         (DLPack 1.0: on a major mismatch only the deleter may be called)",
        found.major, found.minor
    )]
    UnsupportedVersion {
        what: &'static str,
        found: DLPackVersion,
        supported: u32,
    },
    /// Version negotiation found nothing the producer can export for the consumer
    /// (the array API's `BufferError`).
    #[error("{0}")]
    NoCommonVersion(String),
    /// The producer does not understand a keyword the consumer passed (the array API's
    /// `TypeError`: retry without the keyword).
    #[error("{0}")]
    KeywordNotUnderstood(String),
    /// The `stream` argument is not valid for the device (array API: `ValueError`).
    #[error("{0}")]
    InvalidStream(String),
    /// A copy is needed but the request says `copy=False` (array API: `BufferError`).
    #[error("{0}")]
    CopyForbidden(String),
    /// The requested `dl_device` cannot be served (array API: `BufferError`).
    #[error("{0}")]
    UnsupportedDevice(String),
    /// The device runtime (CUDA driver, HIP runtime, registered backend) is not available.
    #[error("{0}")]
    BackendUnavailable(String),
    /// The device runtime reported an error.
    #[error("{0}")]
    DeviceError(String),
    /// No backend could classify a pointer: the answer is unknown, never guessed.
    #[error("{0}")]
    DeviceUnknown(String),
    /// A stream object of a type the device family does not define (Python's `TypeError`).
    #[error("{0}")]
    InvalidStreamType(String),
    /// An exchange table's `current_work_stream` answered NULL for a device other than
    /// `kDLCPU`: it did not name the stream the data is ordered on (peer case 53).
    #[error("{0}")]
    NullWorkStream(String),
    /// A `DLDevice` with a negative `device_id`, or (producer helpers, without the opt-in) a
    /// device type DLPack 1.3 does not assign (issue 22, peer cases 54 and 55).
    #[error("{0}")]
    InvalidDevice(String),
    /// The memory's device type is established but its DLPack device id is not (Level Zero USM
    /// whose device is not in the registered device list): never answered as -1 (peer case 54).
    #[error("{0}")]
    DeviceIdUnknown(String),
    /// No Python interpreter in this process (the Python C API did not resolve at run time).
    #[error(
        "{0}: no Python interpreter in this process (the Python C API functions did not resolve at run time)"
    )]
    PythonUnavailable(&'static str),
    /// An argument that must be a capsule is another Python object.
    #[error("{0}")]
    NotACapsule(String),
    /// A capsule whose name is none of the DLPack names.
    #[error("{0}")]
    CapsuleName(String),
    /// A DLPack capsule that a consumer already took (`used_dltensor…`).
    #[error("{0}")]
    CapsuleConsumed(String),
    /// The object has no `__dlpack__` / `__dlpack_device__` (the array API's `AttributeError`).
    #[error("{0}")]
    NoDlpackMethod(String),
    /// The producer raised `BufferError` (kept as `BufferError`).
    #[error("{0}")]
    ProducerBufferError(String),
    /// The producer raised `TypeError` that no retry could resolve.
    #[error("{0}")]
    ProducerTypeError(String),
    /// The producer raised another exception; the message starts with its type name.
    #[error("{0}")]
    ProducerError(String),
    /// The producer returned something that is not what the protocol says.
    #[error("{0}")]
    BadProducerResult(String),
    /// An exchange API table that must not be used (NULL, wrong capsule, NULL required pointer).
    #[error("{0}")]
    ExchangeApiInvalid(String),
    /// The readability check of a DLPack 1.2 integer table address could not run (no pipe:
    /// the process is out of file descriptors). Same status as `ExchangeApiInvalid`, but not a
    /// fact about the type: never cached, checked again on the next lookup.
    #[error("{0}")]
    ExchangeApiUnchecked(String),
    /// The object's type offers no C exchange API.
    #[error("{0}")]
    NoExchangeApi(String),
    /// A Python exception caused the failure and was left set for the caller (the
    /// `KEEP_PYTHON_ERROR` request flag, or an exception that does not derive from `Exception`,
    /// which is never cleared). The message describes it; the exception itself is the answer.
    #[error("{0}")]
    PythonErrorSet(String),
    /// A tensor breaks a DLPack rule or a caller's requirement (validation, layout, names,
    /// ownership conversions). `fault` says which rule; it maps to one status code.
    #[error("{message}")]
    Tensor { fault: Fault, message: String },
}

/// Which tensor rule or requirement failed: one status code each (codes 20–39, see
/// `capi/error.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// `ndim` negative, above the library bound or above the caller's maximum.
    InvalidNdim,
    /// `shape` is NULL while `ndim != 0`.
    NullShape,
    /// `strides` is NULL while `ndim != 0` and the producer declares DLPack 1.2 or newer.
    NullStrides,
    /// A negative extent in `shape`.
    InvalidShape,
    /// The element count, a stride product or the byte extent does not fit in 64 bits.
    Overflow,
    /// `data` is NULL for a non-empty tensor on a pointer-addressed device.
    NullData,
    /// Unknown dtype code, or bits/lanes inconsistent with the code.
    InvalidDtype,
    /// The dtype is valid but not the one the caller requires (or a vector when refused).
    DtypeMismatch,
    /// `flags` carries bits DLPack does not define, or a combination the target cannot carry.
    InvalidFlags,
    /// The caller requires a contiguity the tensor does not have.
    NotContiguous,
    /// The caller requires host access and the device type does not guarantee it.
    NotCpuAccessible,
    /// The caller requires an alignment the data pointer or first element does not have.
    Misaligned,
    /// The caller requires writability and the tensor is read-only (or, for legacy, unknown).
    ReadOnly,
    /// `data` is an opaque handle on this device type: no pointer arithmetic.
    OpaqueHandle,
    /// A caller buffer is too small for the formatted name.
    BufferTooSmall,
    /// A name that does not parse as a dtype or device.
    UnknownName,
    /// The caller refuses broadcast (stride 0) or negative strides.
    UnsupportedStrides,
    /// Memory for a new managed tensor could not be allocated.
    OutOfMemory,
    /// The caller refuses copies (`REJECT_COPIED`) and the tensor has `IS_COPIED`.
    Copied,
}

impl Error {
    #[cold]
    pub(crate) fn fault(fault: Fault, message: impl Into<String>) -> Self {
        Error::Tensor {
            fault,
            message: message.into(),
        }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }
}

/// A refusal from the hot negotiation and stream functions ([`crate::rules::version::negotiate`],
/// [`crate::rules::stream::decode`], [`crate::rules::stream::resolve`]): which rule failed and the
/// few integers its message needs, as a small `Copy` value.
///
/// Why not [`Error`]: its variants carry `String`s, so a `Result<_, Error>` is a large value
/// with drop glue that every *successful* call returned through memory and matched again (the
/// measured cost was 1.7-2.1x the instructions of the same logic in C). A `Result<_, Refusal>`
/// has no destructor and stays in registers once inlined; the message is formatted only on the
/// failure path, when the C layer's `?` turns it into an [`Error`] (`From` below), with the same
/// text as before: argument, value and rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `max_version` absent, and the producer no longer exports the legacy struct.
    NoLegacyExport { producer: DLPackVersion },
    /// `max_version` given to a producer whose `__dlpack__` predates the keyword.
    MaxVersionKeyword { max: DLPackVersion },
    /// The consumer's major is older and the producer exports no struct of that major.
    NoStructForMajor {
        max: DLPackVersion,
        producer: DLPackVersion,
    },
    /// A `stream` value the device's rules refuse.
    InvalidStream {
        device: DLDevice,
        value: i64,
        rule: StreamRule,
    },
    /// A `stream` passed with `dl_device = (kDLCPU, 0)`.
    StreamWithCpuDevice { value: i64 },
    /// A `dl_device` the producer cannot serve.
    UnsupportedDevice {
        from: DLDevice,
        to: DLDevice,
        rule: DeviceRule,
    },
    /// A negative device id: the request's `dl_device` (`requested`) or the tensor's.
    NegativeDeviceId { device: DLDevice, requested: bool },
    /// `copy=False`, but serving `(kDLCPU, 0)` from this device needs a copy.
    CopyForbidden { from: DLDevice },
}

/// The message of the [`Error`] the refusal becomes (argument, value and rule), formatted only
/// when asked.
impl core::fmt::Display for Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Display::fmt(&Error::from(*self), f)
    }
}

impl std::error::Error for Refusal {}

impl From<Refusal> for Error {
    #[cold]
    #[inline(never)]
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::NoLegacyExport { producer: p } => Error::NoCommonVersion(format!(
                "max_version is None (the consumer only reads the legacy DLManagedTensor), but the \
                 producer (DLPack {}.{}) no longer exports the legacy struct (array API: BufferError)",
                p.major, p.minor
            )),
            Refusal::MaxVersionKeyword { max: m } => Error::KeywordNotUnderstood(format!(
                "max_version=({}, {}) was passed, but the producer's __dlpack__ predates the \
                 max_version keyword (array API: TypeError; retry without max_version)",
                m.major, m.minor
            )),
            Refusal::NoStructForMajor {
                max: m,
                producer: p,
            } => Error::NoCommonVersion(format!(
                "max_version=({}, {}) is older than the producer's DLPack {}.{} and the producer \
                 exports no struct of major {} (array API: BufferError)",
                m.major, m.minor, p.major, p.minor, m.major
            )),
            Refusal::InvalidStream {
                device,
                value,
                rule,
            } => Error::InvalidStream(format!(
                "stream={value} is not valid for device ({}, {}): {}",
                device.device_type.0,
                device.device_id,
                rule.text()
            )),
            Refusal::StreamWithCpuDevice { value } => Error::InvalidStream(format!(
                "stream={value} was passed with dl_device=(kDLCPU, 0): a CPU export takes stream \
                 None and the producer synchronizes before returning (array API)"
            )),
            Refusal::UnsupportedDevice { from, to, rule } => Error::UnsupportedDevice(format!(
                "dl_device=({}, {}) requested for a tensor on ({}, {}): {} (array API: BufferError)",
                to.device_type.0,
                to.device_id,
                from.device_type.0,
                from.device_id,
                rule.text()
            )),
            Refusal::NegativeDeviceId { device, requested } => Error::InvalidDevice(format!(
                "{}.device_id is {} on device type {}: a device id is a non-negative ordinal (an \
                 index-less device is not -1; peer case 54)",
                if requested {
                    "dl_device"
                } else {
                    "tensor_device"
                },
                device.device_id,
                device.device_type.0
            )),
            Refusal::CopyForbidden { from } => Error::CopyForbidden(format!(
                "dl_device=(kDLCPU, 0) requested for a tensor on ({}, {}) with copy=False, but the \
                 memory is not host-accessible and needs a copy (array API: BufferError)",
                from.device_type.0, from.device_id
            )),
        }
    }
}
