//! Version checks and the array API's version negotiation.

use crate::abi::DLPackVersion;
use crate::capi::boundary::{self, Fail};
use crate::capi::error::{dlpack_helpers_error, dlpack_helpers_status};
use crate::rules::Error;
use crate::rules::version::{self, Export, Exporter};

/// Newest DLPack major version this library reads (the ABI major of `DLManagedTensorVersioned`).
pub const DLPACK_HELPERS_DLPACK_MAJOR_VERSION: u32 = 1;
/// Newest DLPack minor version this library understands.
pub const DLPACK_HELPERS_DLPACK_MINOR_VERSION: u32 = 3;

const _: () = assert!(
    DLPACK_HELPERS_DLPACK_MAJOR_VERSION == crate::abi::DLPACK_MAJOR_VERSION
        && DLPACK_HELPERS_DLPACK_MINOR_VERSION == crate::abi::DLPACK_MINOR_VERSION
);

/// How a version relates to the newest one this library understands: one of the
/// `DLPACK_HELPERS_VERSION_*` values.
pub type dlpack_helpers_version_compat = i32;

/// Same major and minor as this library (DLPack 1.3).
pub const DLPACK_HELPERS_VERSION_EXACT: dlpack_helpers_version_compat = 0;
/// Same major, older minor (1.0 to 1.2): everything in it is understood.
pub const DLPACK_HELPERS_VERSION_OLDER_MINOR: dlpack_helpers_version_compat = 1;
/// Same major, newer minor (1.4 and later): usable, but it may carry enum values this library
/// does not know (DLPack 1.0: "the tensor is usable if the consumer can interpret all fields").
pub const DLPACK_HELPERS_VERSION_NEWER_MINOR: dlpack_helpers_version_compat = 2;

/// Write `compat` to the optional out-parameter `out_compat` (NULL: nothing written), as every
/// version-checking export does.
#[inline(always)]
pub(crate) fn write_compat(
    out_compat: *mut dlpack_helpers_version_compat,
    compat: version::Compat,
) {
    if !out_compat.is_null() {
        // SAFETY: non-NULL caller storage (each export's contract).
        unsafe { out_compat.write(compat.as_raw()) };
    }
}

/// Producer flag for `dlpack_version_negotiate`: the producer still exports the legacy
/// `DLManagedTensor` (capsule `"dltensor"`).
pub const DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY: u32 = 0x1;
/// Producer flag for `dlpack_version_negotiate`: the producer's `__dlpack__` predates the
/// `max_version` keyword (array API before 2023.12).
pub const DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD: u32 = 0x2;

/// Which struct a producer exports: one of the `DLPACK_HELPERS_EXPORT_*` values.
pub type dlpack_helpers_export_kind = i32;
/// Export the legacy `DLManagedTensor` in a capsule named `"dltensor"`.
pub const DLPACK_HELPERS_EXPORT_LEGACY: dlpack_helpers_export_kind = 0;
/// Export a `DLManagedTensorVersioned` in a capsule named `"dltensor_versioned"`.
pub const DLPACK_HELPERS_EXPORT_VERSIONED: dlpack_helpers_export_kind = 1;

/// The result of `dlpack_version_negotiate`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct dlpack_helpers_version_choice {
    /// `DLPACK_HELPERS_EXPORT_LEGACY` or `DLPACK_HELPERS_EXPORT_VERSIONED`.
    pub kind: dlpack_helpers_export_kind,
    /// For `DLPACK_HELPERS_EXPORT_VERSIONED`: the version to write into the tensor (the
    /// producer's own). For `DLPACK_HELPERS_EXPORT_LEGACY`: {0, 0}.
    pub version: DLPackVersion,
}

/// Check a DLPack version against the one this library reads.
///
/// - `version`: for example a received tensor's `version` field, or an exchange API header's.
/// - `out_compat`: receives `DLPACK_HELPERS_VERSION_EXACT`, `_OLDER_MINOR` or `_NEWER_MINOR`;
///   may be NULL.
///
/// Returns `DLPACK_HELPERS_STATUS_OK` for major 1, `DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION`
/// for any other major (0.x or 2.x and later). Thread-safe, no side effects but the last error.
///
/// @param[out] out_compat May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the major version is 1
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the major version is not 1
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_version_check(
    version: DLPackVersion,
    out_compat: *mut dlpack_helpers_version_compat,
) -> dlpack_helpers_status {
    boundary::status_or_report(
        move || {
            // The success path without an error value (issue 26: the error's frame cost about
            // 5 instructions per call); a refusal is reported by `version_check_report`.
            let compat = version::check(version, "version").map_err(|_| Fail::Null("version"))?;
            write_compat(out_compat, compat);
            Ok(())
        },
        // SAFETY: the export's caller contract.
        move || unsafe { version_check_report(version, out_compat) },
    )
}

/// `dlpack_version_check` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_version_check`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[out] out_compat May be NULL.
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when the major version is 1
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the major version is not 1
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `err` is non-NULL and `err->struct_size`
///   is below `sizeof(dlpack_helpers_error)` (nothing done)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_version_check_with_error(
    version: DLPackVersion,
    out_compat: *mut dlpack_helpers_version_compat,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_version_check` and of `err`.
    unsafe { boundary::with_error(err, || dlpack_version_check(version, out_compat)) }
}

/// The failure path of `dlpack_version_check`: its body, the refusal reported.
#[cold]
#[inline(never)]
unsafe extern "C" fn version_check_report(
    version: DLPackVersion,
    out_compat: *mut dlpack_helpers_version_compat,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let compat = version::check(version, "version")?;
        write_compat(out_compat, compat);
        Ok(())
    })
}

/// Producer side of `__dlpack__(max_version=…)`: which struct and version to export, following
/// the array API's recommended producer logic.
///
/// - `producer_version`: the producer's own DLPack version (normally {1, 3} for a producer built
///   on this library). A major of 0 means the producer can only export the legacy struct.
/// - `producer_flags`: `DLPACK_HELPERS_PRODUCER_*` bits; other bits are refused.
/// - `max_version`: the consumer's `max_version`, or NULL for "not given" (`None`).
/// - `out_choice`: receives the decision.
///
/// Decisions: `max_version` NULL → legacy if the producer exports it or its major is 0, else
/// `DLPACK_HELPERS_STATUS_NO_COMMON_VERSION`; `max_version` given to a producer flagged
/// `DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD` → `DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD`
/// (the consumer's cue to retry without the keyword); producer major 0 → legacy;
/// `*max_version >= producer_version` or the same major → versioned with `producer_version`
/// (the minor may exceed the consumer's: consumers must check the version they receive);
/// consumer major older → legacy for a 0.x consumer when the producer exports it, else
/// `DLPACK_HELPERS_STATUS_NO_COMMON_VERSION`.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_NO_COMMON_VERSION` (`BufferError`),
/// `_KEYWORD_NOT_UNDERSTOOD` (`TypeError`), `_INVALID_ARGUMENT` (unknown flag bits) or
/// `_NULL_POINTER` (`out_choice` NULL). `out_choice` is written only on OK. Pure and thread-safe.
///
/// @param[in] max_version May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `out_choice` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `producer_flags` has unknown bits
/// @retval DLPACK_HELPERS_STATUS_NO_COMMON_VERSION when the producer can export no struct the
///   consumer accepts (`BufferError`)
/// @retval DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD when `max_version` is given to a producer
///   flagged `DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD` (`TypeError`)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_version_negotiate(
    producer_version: DLPackVersion,
    producer_flags: u32,
    max_version: *const DLPackVersion,
    out_choice: *mut dlpack_helpers_version_choice,
) -> dlpack_helpers_status {
    boundary::status_or_report(
        // SAFETY: the caller's contract for the export's arguments.
        move || unsafe { negotiate(producer_version, producer_flags, max_version, out_choice) },
        // SAFETY: the caller's contract for the export's arguments.
        move || unsafe {
            negotiate_report(producer_version, producer_flags, max_version, out_choice)
        },
    )
}

/// `dlpack_version_negotiate` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_version_negotiate`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[in] max_version May be NULL.
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `out_choice` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `producer_flags` has unknown bits;
///   or when `err` is non-NULL and `err->struct_size` is below
///   `sizeof(dlpack_helpers_error)` (nothing done)
/// @retval DLPACK_HELPERS_STATUS_NO_COMMON_VERSION when the producer can export no struct the
///   consumer accepts (`BufferError`)
/// @retval DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD when `max_version` is given to a producer
///   flagged `DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD` (`TypeError`)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_version_negotiate_with_error(
    producer_version: DLPackVersion,
    producer_flags: u32,
    max_version: *const DLPackVersion,
    out_choice: *mut dlpack_helpers_version_choice,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_version_negotiate` and of `err`.
    unsafe {
        boundary::with_error(err, || {
            dlpack_version_negotiate(producer_version, producer_flags, max_version, out_choice)
        })
    }
}

/// The failure path of `dlpack_version_negotiate`: the same body, its error reported. The C ABI
/// and the export's own signature keep the arguments in their registers, so the export reaches
/// it with a jump.
#[cold]
#[inline(never)]
unsafe extern "C" fn negotiate_report(
    producer_version: DLPackVersion,
    producer_flags: u32,
    max_version: *const DLPackVersion,
    out_choice: *mut dlpack_helpers_version_choice,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: as the export.
        unsafe { negotiate(producer_version, producer_flags, max_version, out_choice) }
            .map_err(Error::from)
    })
}

/// The body of `dlpack_version_negotiate`; writes `out_choice` only on success.
///
/// # Safety
/// As the export.
#[inline(always)]
unsafe fn negotiate(
    producer_version: DLPackVersion,
    producer_flags: u32,
    max_version: *const DLPackVersion,
    out_choice: *mut dlpack_helpers_version_choice,
) -> Result<(), Fail> {
    if out_choice.is_null() {
        return Err(Fail::Null("out_choice"));
    }
    const KNOWN: u32 =
        DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY | DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD;
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
    // SAFETY: a non-NULL `max_version` points to a DLPackVersion (caller contract).
    let max = unsafe { max_version.as_ref() }.copied();
    let producer = Exporter {
        version: producer_version,
        exports_legacy: producer_flags & DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY != 0,
        no_max_version_keyword: producer_flags & DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD
            != 0,
    };
    let choice = match version::negotiate(producer, max)? {
        Export::Legacy => dlpack_helpers_version_choice {
            kind: DLPACK_HELPERS_EXPORT_LEGACY,
            version: DLPackVersion::new(0, 0),
        },
        Export::Versioned(v) => dlpack_helpers_version_choice {
            kind: DLPACK_HELPERS_EXPORT_VERSIONED,
            version: v,
        },
    };
    // SAFETY: `out_choice` is non-NULL caller storage.
    unsafe { out_choice.write(choice) };
    Ok(())
}
