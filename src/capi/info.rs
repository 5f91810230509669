//! `dlpack_get_info`: the C counterpart of the proposed `__dlpack_info__`.

use crate::abi::DLPackVersion;
use crate::capi::boundary::{self, out_ptr};
use crate::capi::error::dlpack_helpers_status;
use crate::rules::{Error, info};
use core::ffi::c_char;
use core::mem::{offset_of, size_of};

/// Capability bit of `dlpack_helpers_info.capabilities`: CUDA stream synchronization is
/// available (the CUDA driver was found at run time).
pub const DLPACK_HELPERS_CAP_CUDA: u64 = 0x1;
/// Capability bit: ROCm (HIP) stream synchronization is available.
pub const DLPACK_HELPERS_CAP_ROCM: u64 = 0x2;
/// Capability bit: the Python entry points found a Python interpreter in this process.
pub const DLPACK_HELPERS_CAP_PYTHON: u64 = 0x4;
/// Capability bit: the Level Zero loader (`libze_loader.so.1`, override
/// `DLPACK_HELPERS_LEVEL_ZERO_LIBRARY`) loaded and `zeInit` succeeded. Level Zero serves pointer
/// classification only; oneAPI stream waits go through a registered backend.
pub const DLPACK_HELPERS_CAP_LEVEL_ZERO: u64 = 0x8;
/// Capability bit: `dlpack_pointer_classify` / `dlpack_pointer_get_device` can ask the CUDA
/// driver (CUDA device, pinned and managed memory are recognized).
pub const DLPACK_HELPERS_CAP_POINTER_CUDA: u64 = 0x10;
/// Capability bit: pointer classification can ask the HIP runtime (`hipPointerGetAttributes`;
/// ROCm device, pinned and managed memory are recognized).
pub const DLPACK_HELPERS_CAP_POINTER_ROCM: u64 = 0x20;
/// Capability bit: pointer classification can ask Level Zero (`zeMemGetAllocProperties`; USM
/// host, device and shared memory are recognized) when given a `ze_context_handle_t`
/// (argument or `dlpack_level_zero_context_set`).
pub const DLPACK_HELPERS_CAP_POINTER_LEVEL_ZERO: u64 = 0x40;

/// The specification version this library implements, as `YYYYMM`: 202612 is spec 2026.12
/// (`spec/README.md`). `dlpack_helpers_info.spec_version` reports the value of the library
/// actually loaded. The spec version is independent of the library version.
pub const DLPACK_HELPERS_SPEC_VERSION: u32 = 202612;
/// Profile bit of `dlpack_helpers_info.profiles`: the library implements the core profile
/// (release, versions, device queries, info, errors, validation, layout, names, conversion).
pub const DLPACK_HELPERS_PROFILE_CORE: u32 = 0x1;
/// Profile bit: the streams profile (stream encodings, waits, queries that call a device driver).
pub const DLPACK_HELPERS_PROFILE_STREAMS: u32 = 0x2;
/// Profile bit: the python profile (capsules, `__dlpack__` import and export, Python errors).
pub const DLPACK_HELPERS_PROFILE_PYTHON: u32 = 0x4;
/// Profile bit: the exchange profile (`DLPackExchangeAPI` table lookup).
pub const DLPACK_HELPERS_PROFILE_EXCHANGE: u32 = 0x8;

const _: () = assert!(
    DLPACK_HELPERS_SPEC_VERSION == info::SPEC_VERSION
        && DLPACK_HELPERS_PROFILE_CORE == info::PROFILE_CORE
        && DLPACK_HELPERS_PROFILE_STREAMS == info::PROFILE_STREAMS
        && DLPACK_HELPERS_PROFILE_PYTHON == info::PROFILE_PYTHON
        && DLPACK_HELPERS_PROFILE_EXCHANGE == info::PROFILE_EXCHANGE
);

const _: () = assert!(
    DLPACK_HELPERS_CAP_CUDA == info::CAP_CUDA
        && DLPACK_HELPERS_CAP_ROCM == info::CAP_ROCM
        && DLPACK_HELPERS_CAP_PYTHON == info::CAP_PYTHON
        && DLPACK_HELPERS_CAP_LEVEL_ZERO == info::CAP_LEVEL_ZERO
        && DLPACK_HELPERS_CAP_POINTER_CUDA == info::CAP_POINTER_CUDA
        && DLPACK_HELPERS_CAP_POINTER_ROCM == info::CAP_POINTER_ROCM
        && DLPACK_HELPERS_CAP_POINTER_LEVEL_ZERO == info::CAP_POINTER_LEVEL_ZERO
);

/// Capabilities detected at run time (`DLPACK_HELPERS_CAP_*`).
///
/// - `CAP_CUDA` / `CAP_ROCM`: the CUDA driver / HIP runtime loads and initializes
///   (`cuInit` / `hipInit` succeed). Choice: the first call loads the drivers (`dlopen` +
///   `cuInit`/`hipInit`, no context is created, typically milliseconds up to about a second), so
///   that the bit means "stream synchronization will work" rather than "a file exists". The
///   result is kept for the process, so later calls cost nothing, except "not found": a runtime
///   the application loads later sets its bits from then on (`dl::Runtime`).
/// - `CAP_PYTHON`: the Python C API resolved in this process.
/// - `CAP_LEVEL_ZERO`, `CAP_POINTER_*`: which backends can classify pointers (the loaders are
///   loaded once, as for `CAP_CUDA`). A caller tells "not host memory" from "no backend to
///   ask" with these bits: without any `CAP_POINTER_*` bit, `dlpack_pointer_get_device`
///   answers `DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN`.
pub(crate) fn capabilities() -> u64 {
    let mut caps =
        crate::capi::stream::backend_capabilities() | crate::capi::pointer::capabilities();
    if crate::host::cpython::available() {
        caps |= info::CAP_PYTHON;
    }
    caps
}

/// What this library is and supports. Set `struct_size` to `sizeof(dlpack_helpers_info)`
/// before calling `dlpack_get_info`; the struct only grows at its end, so a caller compiled
/// against an older header keeps working.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dlpack_helpers_info {
    /// In: the size in bytes of the caller's struct. Out: the number of bytes the library
    /// filled: `sizeof(dlpack_helpers_info)` of the loaded library when the caller's struct is at
    /// least that big, else the end of the last whole field that fits. A field was filled iff
    /// `offsetof(field) + sizeof(field) <= struct_size`.
    pub struct_size: usize,
    /// Library version string, for example `"0.1.0"`: static, NUL-terminated, never free it.
    pub version: *const c_char,
    /// Library major version (`DLPACK_HELPERS_VERSION_MAJOR` of the library actually loaded).
    pub major: u32,
    /// Library minor version.
    pub minor: u32,
    /// Library patch version.
    pub patch: u32,
    /// The DLPack ABI major (layout of `DLManagedTensorVersioned`) this library reads: 1.
    pub dlpack_abi_major: u32,
    /// The newest DLPack version this library understands: {1, 3}.
    pub dlpack_version: DLPackVersion,
    /// `DLPACK_HELPERS_CAP_*` bits for what is available at run time in this process, now: a
    /// device runtime that was not in the process at an earlier call and that the application
    /// has loaded since (for example a bundled `libamdhip64.so.6` opened by full path) is found
    /// and reported; a runtime that loaded but failed to initialize stays unreported.
    pub capabilities: u64,
    /// Whether legacy (unversioned) `DLManagedTensor`s are accepted: true.
    pub accepts_legacy: bool,
    /// The specification version the loaded library implements, as `YYYYMM`
    /// (`DLPACK_HELPERS_SPEC_VERSION` of that library; 202612 for spec 2026.12). Appended in
    /// 0.1.0 after `accepts_legacy`: a caller whose `struct_size` ends before it gets it unwritten.
    pub spec_version: u32,
    /// `DLPACK_HELPERS_PROFILE_*` bits of the profiles (conformance classes of the
    /// specification) the loaded library implements: this library implements all four.
    pub profiles: u32,
}

/// Fill `out_info` with the library's version, the DLPack version and ABI it supports, its
/// run-time capabilities, and the specification version and profiles it implements.
///
/// - `out_info->struct_size` must be set by the caller to the size of its struct, at least
///   `sizeof(size_t)`. Only fields that fit entirely are written (padding bytes between them
///   may be written too; nothing at or past the returned size); on return `struct_size` holds
///   the number of bytes filled (at most `sizeof(dlpack_helpers_info)` of this library).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `DLPACK_HELPERS_STATUS_NULL_POINTER` (NULL `out_info`) or
/// `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` (`struct_size` smaller than `sizeof(size_t)`; nothing
/// written). Thread-safe.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `out_info` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `out_info->struct_size` is smaller than
///   `sizeof(size_t)` (nothing written)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_get_info(
    out_info: *mut dlpack_helpers_info,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_info, "out_info")?;
        // SAFETY: non-NULL; `struct_size` is the first field in every version of the struct.
        let caller_size = unsafe { core::ptr::addr_of!((*out).struct_size).read() };
        if caller_size < size_of::<usize>() {
            return Err(Error::invalid(format!(
                "out_info->struct_size is {caller_size}, smaller than its own field (set it to \
                 sizeof(dlpack_helpers_info))"
            )));
        }
        let i = info::info(capabilities());
        let full = dlpack_helpers_info {
            struct_size: 0,
            version: info::VERSION_C.as_ptr(),
            major: i.major,
            minor: i.minor,
            patch: i.patch,
            dlpack_abi_major: i.dlpack_abi_major,
            dlpack_version: i.dlpack_version,
            capabilities: i.capabilities,
            accepts_legacy: i.accepts_legacy,
            spec_version: i.spec_version,
            profiles: i.profiles,
        };
        // Field end offsets, in order; fill the longest prefix of whole fields that fits.
        const ENDS: [usize; 11] = [
            offset_of!(dlpack_helpers_info, struct_size) + size_of::<usize>(),
            offset_of!(dlpack_helpers_info, version) + size_of::<*const c_char>(),
            offset_of!(dlpack_helpers_info, major) + 4,
            offset_of!(dlpack_helpers_info, minor) + 4,
            offset_of!(dlpack_helpers_info, patch) + 4,
            offset_of!(dlpack_helpers_info, dlpack_abi_major) + 4,
            offset_of!(dlpack_helpers_info, dlpack_version) + size_of::<DLPackVersion>(),
            offset_of!(dlpack_helpers_info, capabilities) + 8,
            offset_of!(dlpack_helpers_info, accepts_legacy) + 1,
            offset_of!(dlpack_helpers_info, spec_version) + 4,
            offset_of!(dlpack_helpers_info, profiles) + 4,
        ];
        // SAFETY: `out` holds `caller_size` bytes (checked above to cover `struct_size`).
        unsafe { crate::capi::boundary::write_struct_sized(out, &full, &ENDS, caller_size) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::error::DLPACK_HELPERS_STATUS_OK;

    #[repr(C, align(8))]
    struct Buf([u8; 80]);

    /// `dlpack_get_info` on an 80-byte buffer of 0xEE bytes whose `struct_size` is `size`.
    fn get(size: usize) -> (dlpack_helpers_status, [u8; 80]) {
        let mut buf = Buf([0xEE; 80]);
        let p = buf.0.as_mut_ptr().cast::<dlpack_helpers_info>();
        // SAFETY: an aligned 80-byte buffer; the call writes at most `size` (<= 80) bytes.
        let s = unsafe {
            core::ptr::addr_of_mut!((*p).struct_size).write(size);
            dlpack_get_info(p)
        };
        (s, buf.0)
    }

    fn u32_at(buf: &[u8; 80], off: usize) -> u32 {
        u32::from_ne_bytes(buf[off..off + 4].try_into().unwrap())
    }

    #[test]
    fn spec_version_and_profiles_are_reported() {
        let full = size_of::<dlpack_helpers_info>();
        let (s, buf) = get(full);
        assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
        assert_eq!(
            u32_at(&buf, offset_of!(dlpack_helpers_info, spec_version)),
            202612
        );
        assert_eq!(u32_at(&buf, offset_of!(dlpack_helpers_info, profiles)), 0xF);
        assert_eq!(buf[full], 0xEE, "nothing written past the struct");
    }

    #[test]
    fn an_older_struct_without_the_appended_fields_keeps_working() {
        // A caller compiled before spec_version/profiles: its struct ends with accepts_legacy.
        let old = offset_of!(dlpack_helpers_info, accepts_legacy) + 1;
        let (s, buf) = get(old);
        assert_eq!(s, DLPACK_HELPERS_STATUS_OK);
        assert_eq!(
            usize::from_ne_bytes(buf[..size_of::<usize>()].try_into().unwrap()),
            old
        );
        assert_eq!(buf[old - 1], 1, "accepts_legacy is filled");
        assert!(
            buf[old..].iter().all(|&b| b == 0xEE),
            "a byte past the caller's struct was written"
        );
        // Up to spec_version but not profiles.
        let (_, buf) = get(offset_of!(dlpack_helpers_info, profiles));
        assert_eq!(
            u32_at(&buf, offset_of!(dlpack_helpers_info, spec_version)),
            202612
        );
        assert_eq!(
            u32_at(&buf, offset_of!(dlpack_helpers_info, profiles)),
            0xEEEE_EEEE
        );
    }
}
