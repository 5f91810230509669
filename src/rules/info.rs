//! What this library is and supports: the data behind `dlpack_get_info`.

use crate::abi::DLPackVersion;

/// Library version, from Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Library version with a trailing NUL, for C.
pub const VERSION_C: &core::ffi::CStr =
    match core::ffi::CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes())
    {
        Ok(s) => s,
        Err(_) => panic!("version string contains a NUL"),
    };

const fn parse_u32(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut v = 0u32;
    while i < b.len() {
        assert!(b[i].is_ascii_digit(), "version component is not a number");
        v = v * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    v
}

pub const VERSION_MAJOR: u32 = parse_u32(env!("CARGO_PKG_VERSION_MAJOR"));
pub const VERSION_MINOR: u32 = parse_u32(env!("CARGO_PKG_VERSION_MINOR"));
pub const VERSION_PATCH: u32 = parse_u32(env!("CARGO_PKG_VERSION_PATCH"));

/// Capability bit: CUDA stream synchronization is available (driver found at run time).
pub const CAP_CUDA: u64 = 1 << 0;
/// Capability bit: ROCm (HIP) stream synchronization is available (runtime found at run time).
pub const CAP_ROCM: u64 = 1 << 1;
/// Capability bit: the Python embedding entry points found a Python interpreter in the process.
pub const CAP_PYTHON: u64 = 1 << 2;
/// Capability bit: the Level Zero loader loaded and initialized (`zeInit`).
pub const CAP_LEVEL_ZERO: u64 = 1 << 3;
/// Capability bit: the CUDA driver can classify pointers (`cuPointerGetAttributes`).
pub const CAP_POINTER_CUDA: u64 = 1 << 4;
/// Capability bit: the HIP runtime can classify pointers (`hipPointerGetAttributes` and
/// `hipRuntimeGetVersion` present).
pub const CAP_POINTER_ROCM: u64 = 1 << 5;
/// Capability bit: Level Zero can classify USM pointers (`zeMemGetAllocProperties`), given a
/// context by the caller.
pub const CAP_POINTER_LEVEL_ZERO: u64 = 1 << 6;

/// The specification version this library implements (`spec/`, 2026.12), as YYYYMM.
pub const SPEC_VERSION: u32 = 202612;
/// Profile bit (conformance class of `spec/profiles/`): core.
pub const PROFILE_CORE: u32 = 1 << 0;
/// Profile bit: streams (stream decoding, waits, driver queries).
pub const PROFILE_STREAMS: u32 = 1 << 1;
/// Profile bit: python (capsules, `__dlpack__` import and export).
pub const PROFILE_PYTHON: u32 = 1 << 2;
/// Profile bit: exchange (`DLPackExchangeAPI` tables).
pub const PROFILE_EXCHANGE: u32 = 1 << 3;
/// Every profile this library implements: all four.
pub const PROFILES: u32 = PROFILE_CORE | PROFILE_STREAMS | PROFILE_PYTHON | PROFILE_EXCHANGE;

/// A snapshot of what the library supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    pub version: &'static str,
    /// Newest DLPack version understood.
    pub dlpack_version: DLPackVersion,
    /// The DLPack ABI major (layout of `DLManagedTensorVersioned`) this library reads.
    pub dlpack_abi_major: u32,
    /// Whether legacy (unversioned) `DLManagedTensor`s are accepted.
    pub accepts_legacy: bool,
    /// `CAP_*` bits for what is available at run time in this process.
    pub capabilities: u64,
    /// The specification version implemented (`SPEC_VERSION`).
    pub spec_version: u32,
    /// `PROFILE_*` bits of the profiles implemented.
    pub profiles: u32,
}

/// The library's description of itself. `capabilities` are the `CAP_*` bits detected at run time
/// by the layer that owns the backends (`capi::info::capabilities`).
pub fn info(capabilities: u64) -> Info {
    Info {
        major: VERSION_MAJOR,
        minor: VERSION_MINOR,
        patch: VERSION_PATCH,
        version: VERSION,
        dlpack_version: DLPackVersion::CURRENT,
        dlpack_abi_major: DLPackVersion::CURRENT.major,
        accepts_legacy: true,
        capabilities,
        spec_version: SPEC_VERSION,
        profiles: PROFILES,
    }
}
