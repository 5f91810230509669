//! Validation of untrusted tensors: every DLPack rule, plus the caller's requirements.

use crate::abi::{DLDataType, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor};
use crate::capi::boundary::{self, nonnull};
use crate::capi::error::{dlpack_helpers_error, dlpack_helpers_status};
use crate::capi::layout::{dlpack_helpers_layout, to_c, versioned_parts, view_of};
use crate::rules::Error;
use crate::rules::layout::TensorView;
use crate::rules::validate::{self, Declared, Requirements};
use core::mem::size_of;

/// Validation option bit: accept NULL `strides` (with `ndim != 0`) from a producer declaring
/// DLPack 1.2 or newer, reading them as compact row-major. Default: refused with
/// `DLPACK_HELPERS_STATUS_NULL_STRIDES` (DLPack 1.2 rule; peer case 29). Legacy and 1.0/1.1
/// producers may always send NULL strides.
pub const DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES: u32 = 1;
/// Require C (row-major) contiguity (`NOT_CONTIGUOUS` otherwise).
pub const DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS: u32 = 2;
/// Require F (column-major) contiguity (`NOT_CONTIGUOUS` otherwise).
pub const DLPACK_HELPERS_VALIDATE_REQUIRE_F_CONTIGUOUS: u32 = 4;
/// Require compactness in some dimension order (`NOT_CONTIGUOUS` otherwise).
pub const DLPACK_HELPERS_VALIDATE_REQUIRE_COMPACT: u32 = 8;
/// Require a device type host code can always dereference, as `dlpack_is_cpu_accessible`
/// (`NOT_CPU_ACCESSIBLE` otherwise).
pub const DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE: u32 = 16;
/// Require permission to write: `READ_ONLY` clear (`READ_ONLY` status otherwise). A legacy
/// tensor's writability is unknown and counts as not writable unless
/// `DLPACK_HELPERS_VALIDATE_LEGACY_WRITABLE` is also set (peer case 46).
pub const DLPACK_HELPERS_VALIDATE_REQUIRE_WRITABLE: u32 = 32;
/// Require exactly `options->dtype` (`DTYPE_MISMATCH` otherwise).
pub const DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE: u32 = 64;
/// Refuse vector dtypes, `lanes > 1` (`DTYPE_MISMATCH`). Default: vectors are accepted for
/// every code alike, an element being `bits * lanes` bits.
pub const DLPACK_HELPERS_VALIDATE_REJECT_VECTOR: u32 = 128;
/// Require the first element to be aligned to the element's natural alignment (the largest
/// power of two dividing its size in bytes), the opt-in strict mode of peer case 40
/// (`MISALIGNED` otherwise). Skipped for empty tensors.
pub const DLPACK_HELPERS_VALIDATE_REQUIRE_ELEMENT_ALIGNED: u32 = 256;
/// Refuse broadcast dimensions, stride 0 on an extent > 1 (`UNSUPPORTED_STRIDES`).
pub const DLPACK_HELPERS_VALIDATE_REJECT_BROADCAST: u32 = 512;
/// Refuse negative strides on extents > 1 (`UNSUPPORTED_STRIDES`).
pub const DLPACK_HELPERS_VALIDATE_REJECT_NEGATIVE_STRIDES: u32 = 1024;
/// With `REQUIRE_WRITABLE`: assume legacy tensors are writable.
pub const DLPACK_HELPERS_VALIDATE_LEGACY_WRITABLE: u32 = 2048;
/// Refuse a tensor whose flags have `DLPACK_FLAG_BITMASK_IS_COPIED` (`COPIED_REJECTED`): for a
/// consumer that needs the producer's own memory (it writes through it, or ties its release to
/// its last device use, peer case 52). Legacy tensors have no flags and pass.
pub const DLPACK_HELPERS_VALIDATE_REJECT_COPIED: u32 = 4096;
/// With `REQUIRE_CPU_ACCESSIBLE`: a device type whose host access "depends"
/// (`dlpack_device_host_access`) is answered from the tensor's memory, as by
/// `dlpack_tensor_host_access` with the Level Zero context registered by
/// `dlpack_level_zero_context_set` (`kDLOneAPI`: USM host and shared memory pass, USM device
/// memory and anything unknown fail with `NOT_CPU_ACCESSIBLE`; a failing driver call is
/// `DEVICE_ERROR`). Without it, validation is pure and `kDLOneAPI` always fails
/// `REQUIRE_CPU_ACCESSIBLE`. This check runs after every other rule; no driver is called for
/// device types the table decides. (Bit 16, so that bits added to the pure options stay
/// contiguous.)
pub const DLPACK_HELPERS_VALIDATE_RESOLVE_HOST_ACCESS: u32 = 1 << 16;
const _: () = assert!(
    DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES == validate::LENIENT_NULL_STRIDES
        && DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS == validate::REQUIRE_C_CONTIGUOUS
        && DLPACK_HELPERS_VALIDATE_REQUIRE_F_CONTIGUOUS == validate::REQUIRE_F_CONTIGUOUS
        && DLPACK_HELPERS_VALIDATE_REQUIRE_COMPACT == validate::REQUIRE_COMPACT
        && DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE == validate::REQUIRE_CPU_ACCESSIBLE
        && DLPACK_HELPERS_VALIDATE_REQUIRE_WRITABLE == validate::REQUIRE_WRITABLE
        && DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE == validate::REQUIRE_DTYPE
        && DLPACK_HELPERS_VALIDATE_REJECT_VECTOR == validate::REJECT_VECTOR
        && DLPACK_HELPERS_VALIDATE_REQUIRE_ELEMENT_ALIGNED == validate::REQUIRE_ELEMENT_ALIGNED
        && DLPACK_HELPERS_VALIDATE_REJECT_BROADCAST == validate::REJECT_BROADCAST
        && DLPACK_HELPERS_VALIDATE_REJECT_NEGATIVE_STRIDES == validate::REJECT_NEGATIVE_STRIDES
        && DLPACK_HELPERS_VALIDATE_LEGACY_WRITABLE == validate::LEGACY_WRITABLE
        && DLPACK_HELPERS_VALIDATE_REJECT_COPIED == validate::REJECT_COPIED
);

/// What a caller requires beyond the DLPack rules. Zero-initialise it and set `struct_size` to
/// `sizeof(dlpack_helpers_validate_options)`; all-zero fields mean "every DLPack rule, nothing
/// more". The struct only grows at its end: fields past the caller's `struct_size` take their
/// zero default, so a caller built against an older header keeps working. Passing NULL
/// options means all defaults.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct dlpack_helpers_validate_options {
    /// Size in bytes of the caller's struct; at least `sizeof(size_t)`.
    pub struct_size: usize,
    /// `DLPACK_HELPERS_VALIDATE_*` bits.
    pub flags: u32,
    /// Largest `ndim` accepted (`INVALID_NDIM` above it); 0: `DLPACK_HELPERS_MAX_NDIM` only.
    pub max_ndim: i32,
    /// Required alignment of `data`, in bytes: a power of two, 0 or 1 for none. 256 is the
    /// header's literal "aligned to 256 bytes" rule, which major producers do not follow (peer
    /// case 42): use it only when you know your producer. Checked only for pointer-addressed
    /// device types and non-empty tensors.
    pub data_alignment: u64,
    /// Required alignment of the first element (`data + byte_offset`; `byte_offset` alone for
    /// opaque handles), in bytes: a power of two, 0 or 1 for none. Skipped for empty tensors.
    pub first_element_alignment: u64,
    /// The dtype required with `DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE`.
    pub dtype: DLDataType,
}

/// Read caller options honouring `struct_size`.
///
/// # Safety
/// A non-NULL `p` must point to at least `p->struct_size` readable bytes.
#[inline(always)]
pub(crate) unsafe fn read_options(
    p: *const dlpack_helpers_validate_options,
) -> Result<Requirements, Error> {
    if p.is_null() {
        return Ok(Requirements::default());
    }
    // SAFETY: `struct_size` is the first field in every version of the struct.
    let size = unsafe { core::ptr::addr_of!((*p).struct_size).read() };
    if size < size_of::<usize>() {
        return Err(Error::invalid(format!(
            "options->struct_size is {size}, smaller than its own field (set it to \
             sizeof(dlpack_helpers_validate_options))"
        )));
    }
    let o = if size >= size_of::<dlpack_helpers_validate_options>() {
        // SAFETY: the caller's struct is at least as large as ours.
        unsafe { p.read() }
    } else {
        let mut o = dlpack_helpers_validate_options::default();
        // Only whole fields count (spec ABI-STRUCT-1): a `struct_size` ending inside a field
        // leaves that field at its zero default, never half of the caller's bytes.
        type O = dlpack_helpers_validate_options;
        let whole = [
            core::mem::offset_of!(O, flags) + size_of::<u32>(),
            core::mem::offset_of!(O, max_ndim) + size_of::<u32>(),
            core::mem::offset_of!(O, data_alignment) + size_of::<u64>(),
            core::mem::offset_of!(O, first_element_alignment) + size_of::<u64>(),
            core::mem::offset_of!(O, dtype) + size_of::<crate::abi::DLDataType>(),
        ]
        .into_iter()
        .filter(|&end| end <= size)
        .max()
        .unwrap_or(size_of::<usize>());
        // SAFETY: the caller's struct holds `size >= whole` bytes; `o` more. Fields beyond
        // `whole` keep their zero default.
        unsafe {
            core::ptr::copy_nonoverlapping(p.cast::<u8>(), (&mut o as *mut O).cast::<u8>(), whole)
        };
        o
    };
    let r = Requirements {
        flags: o.flags & !DLPACK_HELPERS_VALIDATE_RESOLVE_HOST_ACCESS,
        max_ndim: o.max_ndim,
        data_alignment: o.data_alignment,
        first_element_alignment: o.first_element_alignment,
        dtype: o.dtype,
    };
    // Well-formed options before any read of the tensor (spec CORE-TENSOR-VALIDATE-2).
    crate::rules::validate::check_options(&r)?;
    Ok(r)
}

/// Whether the caller's options set `DLPACK_HELPERS_VALIDATE_RESOLVE_HOST_ACCESS` (options
/// already read successfully by `read_options`).
#[inline(always)]
fn resolve_bit(p: *const dlpack_helpers_validate_options) -> bool {
    // SAFETY: `read_options` accepted `p`, so a non-NULL `p` holds `struct_size` readable bytes;
    // `flags` is read only when the caller's struct includes it.
    !p.is_null()
        && unsafe { core::ptr::addr_of!((*p).struct_size).read() }
            >= core::mem::offset_of!(dlpack_helpers_validate_options, flags) + 4
        && unsafe { core::ptr::addr_of!((*p).flags).read() }
            & DLPACK_HELPERS_VALIDATE_RESOLVE_HOST_ACCESS
            != 0
}

/// # Safety
/// As the exports below.
#[inline(always)]
unsafe fn run(
    t: &DLTensor,
    producer: Declared,
    o: &Requirements,
    out_layout: *mut dlpack_helpers_layout,
    resolve_host_access: bool,
) -> Result<(), Error> {
    if resolve_host_access
        && o.flags & validate::REQUIRE_CPU_ACCESSIBLE != 0
        && crate::rules::device::host_access(t.device.device_type)
            == crate::rules::device::HostAccess::Depends
    {
        let pure = Requirements {
            flags: o.flags & !validate::REQUIRE_CPU_ACCESSIBLE,
            ..*o
        };
        // The layout goes to a local first: `out_layout` is written only when the host-access
        // check below passes too (out-parameters only on OK).
        let mut local = core::mem::MaybeUninit::<dlpack_helpers_layout>::uninit();
        let tmp = if out_layout.is_null() {
            core::ptr::null_mut()
        } else {
            local.as_mut_ptr()
        };
        // SAFETY: caller contract; `tmp` is NULL or local storage.
        unsafe { run_pure(t, producer, &pure, tmp) }?;
        let a = crate::capi::pointer::tensor_host_access(
            t.device,
            t.data as usize,
            crate::capi::pointer::registered_context(),
        )?;
        if a == crate::capi::device::DLPACK_HELPERS_HOST_ACCESS_ALWAYS {
            if !out_layout.is_null() {
                // SAFETY: `run_pure` succeeded with `tmp` = `local`, so it wrote it; `out_layout`
                // is non-NULL caller storage.
                unsafe { out_layout.write(local.assume_init()) };
            }
            return Ok(());
        }
        return Err(Error::Tensor {
            fault: crate::rules::Fault::NotCpuAccessible,
            message: format!(
                "tensor.device.device_type is {} and its memory at tensor.data {:#x} is {} (asked \
                 through the pointer backends with the registered Level Zero context); the caller \
                 requires host-accessible memory",
                t.device.device_type.0,
                t.data as usize,
                if a == crate::capi::device::DLPACK_HELPERS_HOST_ACCESS_NEVER {
                    "device memory"
                } else {
                    "of unknown kind"
                }
            ),
        });
    }
    // SAFETY: caller contract.
    unsafe { run_pure(t, producer, o, out_layout) }
}

/// The fast path: `true` only when the full rule list would accept `t` (see
/// `validate::fast_accept`); `false` decides nothing.
///
/// # Safety
/// As the exports below.
#[inline(always)]
unsafe fn fast(t: &DLTensor, producer: Declared, o: &Requirements) -> bool {
    if t.ndim >= 1
        && t.ndim as usize <= validate::FAST_MAX_NDIM
        && !t.shape.is_null()
        && !t.strides.is_null()
    {
        let n = t.ndim as usize;
        // SAFETY: 1 <= n <= FAST_MAX_NDIM and both pointers are non-NULL; the caller guarantees
        // `ndim` readable elements behind them.
        let (shape, strides) = unsafe {
            (
                core::slice::from_raw_parts(t.shape, n),
                core::slice::from_raw_parts(t.strides, n),
            )
        };
        return validate::fast_accept(
            t.data as usize,
            t.device,
            t.dtype,
            shape,
            strides,
            t.byte_offset,
            producer,
            o,
        );
    }
    false
}

/// The pure rules (no driver call): the fast path first, then the full rule list.
///
/// # Safety
/// As the exports below.
#[inline(always)]
unsafe fn run_pure(
    t: &DLTensor,
    producer: Declared,
    o: &Requirements,
    out_layout: *mut dlpack_helpers_layout,
) -> Result<(), Error> {
    // SAFETY: caller contract.
    if out_layout.is_null() && unsafe { fast(t, producer, o) } {
        return Ok(());
    }
    // SAFETY: caller contract.
    unsafe { run_full(t, producer, o, out_layout) }
}

/// Validate `t` as the exports do (fast path first, then the full rule list) and return its
/// view, for the wraps and `dlpack_tensor_create`, which copy `shape` and `strides` next.
///
/// # Safety
/// As the exports below.
#[inline(always)]
pub(crate) unsafe fn checked_view<'a>(
    t: &'a DLTensor,
    producer: Declared,
    o: &Requirements,
) -> Result<TensorView<'a>, Error> {
    // SAFETY: caller contract.
    if unsafe { fast(t, producer, o) } {
        let n = t.ndim as usize;
        // SAFETY: the fast path accepted: 1 <= n, both pointers non-NULL with n elements.
        let (shape, strides) = unsafe {
            (
                core::slice::from_raw_parts(t.shape, n),
                core::slice::from_raw_parts(t.strides, n),
            )
        };
        return Ok(TensorView {
            data: t.data as usize,
            device: t.device,
            dtype: t.dtype,
            shape,
            strides: Some(strides),
            byte_offset: t.byte_offset,
        });
    }
    // SAFETY: caller contract.
    unsafe { checked_view_full(t, producer, o) }
}

/// The check every import runs on a versioned tensor it received (issue 34): the rules of
/// `dlpack_tensor_validate` with `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES` (NULL strides
/// read as row-major, as NumPy and every consumer read them), fast path first. The caller has
/// checked the major (1) and the flags already; they are checked again here at no cost.
///
/// # Safety
/// `t` is a live managed tensor of major 1 whose non-NULL `shape` and `strides` hold `ndim`
/// elements (DLPack's contract, the one thing no check can see).
#[inline(always)]
pub(crate) unsafe fn received(t: &DLManagedTensorVersioned) -> Result<(), Error> {
    let producer = Declared::Versioned {
        version: t.version,
        flags: t.flags,
    };
    let o = Requirements {
        flags: validate::LENIENT_NULL_STRIDES,
        ..Requirements::default()
    };
    // SAFETY: caller contract; no layout wanted.
    unsafe { run_pure(&t.dl_tensor, producer, &o, core::ptr::null_mut()) }
}

/// [`received`]'s fast path alone (`validate::fast_accept`): `true` only when the full rules
/// accept `t`; `false` decides nothing (call [`received`]). No error value is built or moved,
/// so the import's hot path stays a few compares (issue 34).
///
/// # Safety
/// As [`received`].
#[inline(always)]
pub(crate) unsafe fn received_fast(t: &DLManagedTensorVersioned) -> bool {
    let producer = Declared::Versioned {
        version: t.version,
        flags: t.flags,
    };
    let o = Requirements {
        flags: validate::LENIENT_NULL_STRIDES,
        ..Requirements::default()
    };
    // SAFETY: caller contract.
    unsafe { fast(&t.dl_tensor, producer, &o) }
}

/// [`checked_view`] through the full rule list, out of line.
///
/// # Safety
/// As the exports below.
#[inline(never)]
unsafe fn checked_view_full<'a>(
    t: &'a DLTensor,
    producer: Declared,
    o: &Requirements,
) -> Result<TensorView<'a>, Error> {
    // SAFETY: caller contract.
    let view = unsafe { view_of(t, producer, o) }?;
    validate::check_view(&view, producer, o)?;
    Ok(view)
}

/// The full rule list (every case the fast path does not take, every failure, and every call
/// that wants the layout), out of line so that the fast path's frame stays small.
///
/// # Safety
/// As the exports below.
#[inline(never)]
unsafe fn run_full(
    t: &DLTensor,
    producer: Declared,
    o: &Requirements,
    out_layout: *mut dlpack_helpers_layout,
) -> Result<(), Error> {
    // SAFETY: caller contract.
    let view = unsafe { view_of(t, producer, o) }?;
    let l = validate::check_view_with(&view, producer, o, !out_layout.is_null())?;
    if !out_layout.is_null() {
        // SAFETY: non-NULL caller storage.
        unsafe { out_layout.write(to_c(&l, &view)) };
    }
    Ok(())
}

/// Validate a received versioned managed tensor against every DLPack rule and the caller's
/// requirements, reporting the first violation. Rules, in the order checked (details and
/// policies in `docs/validation.md`):
///
/// 1. `options` well-formed (`INVALID_ARGUMENT`: `struct_size` too small, unknown option bits,
///    an alignment that is not a power of two, negative `max_ndim`);
/// 2. `version.major == 1` (`UNSUPPORTED_VERSION`; nothing else is read);
/// 3. `flags` without bits the declared version does not define (`INVALID_FLAGS`; bits beyond
///    DLPack 1.3's three are accepted from minor ≥ 4);
/// 4. `0 <= ndim <= DLPACK_HELPERS_MAX_NDIM` and `<= options->max_ndim` (`INVALID_NDIM`);
/// 5. `shape` non-NULL when `ndim != 0` (`NULL_SHAPE`);
/// 6. `strides` non-NULL when `ndim != 0` for DLPack ≥ 1.2 (`NULL_STRIDES`, unless
///    `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES`; peer case 29);
/// 7. the scalar fields before the arrays: dtype: known code, `lanes >= 1`, `bits` allowed for
///    the code (`INVALID_DTYPE`; bool must be 8 bits, bfloat16 16, float6 6, float4 4; peer
///    cases 43, 45); `byte_offset <= INT64_MAX` (`OVERFLOW`); then extents ≥ 0
///    (`INVALID_SHAPE`); element count, byte size and byte range within `int64_t`, and for NULL
///    strides read as row-major the implied compact strides within `int64_t`, empty tensors
///    included (`OVERFLOW`; peer case 49) (spec `CORE-DLTENSOR-VALIDATE-13`);
/// 8. `REJECT_VECTOR` / `REQUIRE_DTYPE` (`DTYPE_MISMATCH`);
/// 9. `device.device_id >= 0` (`INVALID_DEVICE`; peer case 54: an index-less device is not
///    -1; device types DLPack does not assign pass through, a consumer reads what it is given),
///    then non-NULL `data` when the tensor has elements on a pointer-addressed device (`NULL_DATA`;
///    peer case 34), and all its bytes inside the address space (`OVERFLOW`);
/// 10. `REQUIRE_CPU_ACCESSIBLE` (`NOT_CPU_ACCESSIBLE`); alignment options (`MISALIGNED`; peer
///     cases 40, 42); contiguity options (`NOT_CONTIGUOUS`; peer cases 30, 32, 33, 36);
///     `REJECT_BROADCAST` / `REJECT_NEGATIVE_STRIDES` (`UNSUPPORTED_STRIDES`);
///     `REQUIRE_WRITABLE` (`READ_ONLY`; peer case 46); `REJECT_COPIED` (`COPIED_REJECTED`;
///     peer case 52).
///
/// - `tensor`: borrowed; its `shape` and `strides`, when non-NULL, must hold `ndim` elements
///   (the only thing that cannot be checked). `data` is never dereferenced.
/// - `options`: may be NULL (defaults).
/// - `out_layout`: may be NULL; on OK receives the layout (as `dlpack_tensor_layout`).
///
/// Also `DLPACK_HELPERS_STATUS_NULL_POINTER` for a NULL `tensor`. The message of
/// `dlpack_last_error_message()` names the field and the rule. No allocation on success;
/// thread-safe (reads only).
///
/// @param[in] options May be NULL.
/// @param[out] out_layout May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when every rule and requirement holds
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `options` is malformed: `struct_size` too
///   small, unknown bits, an alignment that is not a power of two, negative `max_ndim`
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
///   (nothing past `version` is read)
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits the declared version does not
///   define
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative, above
///   `DLPACK_HELPERS_MAX_NDIM` or above `options->max_ndim`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_NULL_STRIDES when `strides` is NULL, `ndim != 0` and the version
///   is 1.2 or newer (unless `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES`)
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space, or `strides` is NULL and a
///   compact row-major stride it implies does not fit in `int64_t` (possible only for an empty
///   tensor: extents of 0 count as 1 in it; the message names the `shape` element)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_DTYPE_MISMATCH when `REJECT_VECTOR` or `REQUIRE_DTYPE` refuses the
///   dtype
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE when `REQUIRE_CPU_ACCESSIBLE` is set and the
///   device is not host-accessible
/// @retval DLPACK_HELPERS_STATUS_MISALIGNED when an alignment option is not met
/// @retval DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS when a contiguity option is not met
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES when `REJECT_BROADCAST` or
///   `REJECT_NEGATIVE_STRIDES` refuses the strides
/// @retval DLPACK_HELPERS_STATUS_READ_ONLY when `REQUIRE_WRITABLE` is set and the tensor is
///   read-only (or legacy without `LEGACY_WRITABLE`)
/// @retval DLPACK_HELPERS_STATUS_COPIED_REJECTED when `REJECT_COPIED` is set and the tensor's
///   flags have `DLPACK_FLAG_BITMASK_IS_COPIED`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_validate(
    tensor: *const DLManagedTensorVersioned,
    options: *const dlpack_helpers_validate_options,
    out_layout: *mut dlpack_helpers_layout,
) -> dlpack_helpers_status {
    boundary::status(|| {
        if tensor.is_null() {
            return Err(Error::NullPointer("tensor"));
        }
        // SAFETY: options first (rule 1), then the version-guarded read.
        let o = unsafe { read_options(options) }?;
        // SAFETY: non-NULL managed tensor (caller contract).
        let (t, producer) = unsafe { versioned_parts(tensor) }?;
        // SAFETY: caller contract.
        unsafe { run(t, producer, &o, out_layout, resolve_bit(options)) }
    })
}

/// `dlpack_tensor_validate` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_tensor_validate`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[in] options May be NULL.
/// @param[out] out_layout May be NULL.
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when every rule and requirement holds
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `options` is malformed: `struct_size` too
///   small, unknown bits, an alignment that is not a power of two, negative `max_ndim`;
///   or when `err` is non-NULL and `err->struct_size` is below
///   `sizeof(dlpack_helpers_error)` (nothing done)
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
///   (nothing past `version` is read)
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits the declared version does not
///   define
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative, above
///   `DLPACK_HELPERS_MAX_NDIM` or above `options->max_ndim`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_NULL_STRIDES when `strides` is NULL, `ndim != 0` and the version
///   is 1.2 or newer (unless `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES`)
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space, or `strides` is NULL and a
///   compact row-major stride it implies does not fit in `int64_t` (possible only for an empty
///   tensor: extents of 0 count as 1 in it; the message names the `shape` element)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_DTYPE_MISMATCH when `REJECT_VECTOR` or `REQUIRE_DTYPE` refuses the
///   dtype
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE when `REQUIRE_CPU_ACCESSIBLE` is set and the
///   device is not host-accessible
/// @retval DLPACK_HELPERS_STATUS_MISALIGNED when an alignment option is not met
/// @retval DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS when a contiguity option is not met
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES when `REJECT_BROADCAST` or
///   `REJECT_NEGATIVE_STRIDES` refuses the strides
/// @retval DLPACK_HELPERS_STATUS_READ_ONLY when `REQUIRE_WRITABLE` is set and the tensor is
///   read-only (or legacy without `LEGACY_WRITABLE`)
/// @retval DLPACK_HELPERS_STATUS_COPIED_REJECTED when `REJECT_COPIED` is set and the tensor's
///   flags have `DLPACK_FLAG_BITMASK_IS_COPIED`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_validate_with_error(
    tensor: *const DLManagedTensorVersioned,
    options: *const dlpack_helpers_validate_options,
    out_layout: *mut dlpack_helpers_layout,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_tensor_validate` and of `err`.
    unsafe { boundary::with_error(err, || dlpack_tensor_validate(tensor, options, out_layout)) }
}

/// `dlpack_tensor_validate` for a legacy `DLManagedTensor`: no version or flags, so NULL
/// strides always mean compact row-major, sub-byte dtypes are packed, and writability is
/// unknown (`REQUIRE_WRITABLE` fails unless `LEGACY_WRITABLE` is set). Same statuses.
///
/// @param[in] options May be NULL.
/// @param[out] out_layout May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when every rule and requirement holds
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `options` is malformed: `struct_size` too
///   small, unknown bits, an alignment that is not a power of two, negative `max_ndim`
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative, above
///   `DLPACK_HELPERS_MAX_NDIM` or above `options->max_ndim`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space, or `strides` is NULL and a
///   compact row-major stride it implies does not fit in `int64_t` (possible only for an empty
///   tensor: extents of 0 count as 1 in it; the message names the `shape` element)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_DTYPE_MISMATCH when `REJECT_VECTOR` or `REQUIRE_DTYPE` refuses the
///   dtype
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE when `REQUIRE_CPU_ACCESSIBLE` is set and the
///   device is not host-accessible
/// @retval DLPACK_HELPERS_STATUS_MISALIGNED when an alignment option is not met
/// @retval DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS when a contiguity option is not met
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES when `REJECT_BROADCAST` or
///   `REJECT_NEGATIVE_STRIDES` refuses the strides
/// @retval DLPACK_HELPERS_STATUS_READ_ONLY when `REQUIRE_WRITABLE` is set and the tensor is
///   read-only (or legacy without `LEGACY_WRITABLE`)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_tensor_validate(
    tensor: *const DLManagedTensor,
    options: *const dlpack_helpers_validate_options,
    out_layout: *mut dlpack_helpers_layout,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: caller contract.
        let t = unsafe { nonnull(tensor, "tensor") }?;
        // SAFETY: caller contract.
        let o = unsafe { read_options(options) }?;
        // SAFETY: caller contract.
        unsafe {
            run(
                &t.dl_tensor,
                Declared::Legacy,
                &o,
                out_layout,
                resolve_bit(options),
            )
        }
    })
}

/// `dlpack_legacy_tensor_validate` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_legacy_tensor_validate`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[in] options May be NULL.
/// @param[out] out_layout May be NULL.
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when every rule and requirement holds
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `options` is malformed: `struct_size` too
///   small, unknown bits, an alignment that is not a power of two, negative `max_ndim`;
///   or when `err` is non-NULL and `err->struct_size` is below
///   `sizeof(dlpack_helpers_error)` (nothing done)
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative, above
///   `DLPACK_HELPERS_MAX_NDIM` or above `options->max_ndim`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space, or `strides` is NULL and a
///   compact row-major stride it implies does not fit in `int64_t` (possible only for an empty
///   tensor: extents of 0 count as 1 in it; the message names the `shape` element)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_DTYPE_MISMATCH when `REJECT_VECTOR` or `REQUIRE_DTYPE` refuses the
///   dtype
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE when `REQUIRE_CPU_ACCESSIBLE` is set and the
///   device is not host-accessible
/// @retval DLPACK_HELPERS_STATUS_MISALIGNED when an alignment option is not met
/// @retval DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS when a contiguity option is not met
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES when `REJECT_BROADCAST` or
///   `REJECT_NEGATIVE_STRIDES` refuses the strides
/// @retval DLPACK_HELPERS_STATUS_READ_ONLY when `REQUIRE_WRITABLE` is set and the tensor is
///   read-only (or legacy without `LEGACY_WRITABLE`)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_tensor_validate_with_error(
    tensor: *const DLManagedTensor,
    options: *const dlpack_helpers_validate_options,
    out_layout: *mut dlpack_helpers_layout,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_legacy_tensor_validate` and of `err`.
    unsafe {
        boundary::with_error(err, || {
            dlpack_legacy_tensor_validate(tensor, options, out_layout)
        })
    }
}

/// `dlpack_tensor_validate` for a bare `DLTensor` (for example one filled by
/// `DLPackDLTensorFromPyObjectNoSync`), with the producer's version and flags passed by value:
/// `version.major == 0` means legacy/unknown (no flags; NULL strides allowed), anything else is
/// checked like a versioned tensor's `version` and `flags`. Same statuses.
///
/// @param[in] options May be NULL.
/// @param[out] out_layout May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when every rule and requirement holds
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `options` is malformed: `struct_size` too
///   small, unknown bits, an alignment that is not a power of two, negative `max_ndim`
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
///   (nothing past `version` is read)
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits the declared version does not
///   define
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative, above
///   `DLPACK_HELPERS_MAX_NDIM` or above `options->max_ndim`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_NULL_STRIDES when `strides` is NULL, `ndim != 0` and the version
///   is 1.2 or newer (unless `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES`)
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space, or `strides` is NULL and a
///   compact row-major stride it implies does not fit in `int64_t` (possible only for an empty
///   tensor: extents of 0 count as 1 in it; the message names the `shape` element)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_DTYPE_MISMATCH when `REJECT_VECTOR` or `REQUIRE_DTYPE` refuses the
///   dtype
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE when `REQUIRE_CPU_ACCESSIBLE` is set and the
///   device is not host-accessible
/// @retval DLPACK_HELPERS_STATUS_MISALIGNED when an alignment option is not met
/// @retval DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS when a contiguity option is not met
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES when `REJECT_BROADCAST` or
///   `REJECT_NEGATIVE_STRIDES` refuses the strides
/// @retval DLPACK_HELPERS_STATUS_READ_ONLY when `REQUIRE_WRITABLE` is set and the tensor is
///   read-only (or legacy without `LEGACY_WRITABLE`)
/// @retval DLPACK_HELPERS_STATUS_COPIED_REJECTED when `REJECT_COPIED` is set and `flags` has
///   `DLPACK_FLAG_BITMASK_IS_COPIED`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dltensor_validate(
    tensor: *const DLTensor,
    version: DLPackVersion,
    flags: u64,
    options: *const dlpack_helpers_validate_options,
    out_layout: *mut dlpack_helpers_layout,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: caller contract.
        let t = unsafe { nonnull(tensor, "tensor") }?;
        let producer = if version.major == 0 {
            Declared::Legacy
        } else {
            Declared::Versioned { version, flags }
        };
        // SAFETY: caller contract.
        let o = unsafe { read_options(options) }?;
        // SAFETY: caller contract.
        unsafe { run(t, producer, &o, out_layout, resolve_bit(options)) }
    })
}

/// `dlpack_dltensor_validate` with a caller-owned error object: the same call, and when it fails, its status
/// and message also in `*err` (`dlpack_helpers_error`), readable from any thread afterwards
/// (Go goroutines, Java virtual threads and .NET async code move between OS threads, so a
/// later `dlpack_last_error_message()` call may read another call's message).
///
/// - The arguments before `err`, the behaviour, statuses, ownership and thread-safety are
///   those of `dlpack_dltensor_validate`, and a failure sets the thread's last error message as it does.
/// - `err`: NULL (the call is then exactly the base function), or a caller-owned object whose
///   `struct_size` is at least `sizeof(dlpack_helpers_error)`; a smaller one is refused with
///   `DLPACK_HELPERS_STATUS_INVALID_ARGUMENT` before anything else is done (`err` not
///   written). On any other failing status `*err` receives that status, the full message
///   length and the message (cut on a UTF-8 character boundary to fit); on OK `*err` is not
///   written. No allocation beyond the base function's; one compare more on success.
///
/// @param[in] options May be NULL.
/// @param[out] out_layout May be NULL.
/// @param[in,out] err May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK when every rule and requirement holds
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `options` is malformed: `struct_size` too
///   small, unknown bits, an alignment that is not a power of two, negative `max_ndim`;
///   or when `err` is non-NULL and `err->struct_size` is below
///   `sizeof(dlpack_helpers_error)` (nothing done)
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
///   (nothing past `version` is read)
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when `flags` has bits the declared version does not
///   define
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative, above
///   `DLPACK_HELPERS_MAX_NDIM` or above `options->max_ndim`
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0`
/// @retval DLPACK_HELPERS_STATUS_NULL_STRIDES when `strides` is NULL, `ndim != 0` and the version
///   is 1.2 or newer (unless `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES`)
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space, or `strides` is NULL and a
///   compact row-major stride it implies does not fit in `int64_t` (possible only for an empty
///   tensor: extents of 0 count as 1 in it; the message names the `shape` element)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code
/// @retval DLPACK_HELPERS_STATUS_DTYPE_MISMATCH when `REJECT_VECTOR` or `REQUIRE_DTYPE` refuses the
///   dtype
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `device.device_id` is negative
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device
/// @retval DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE when `REQUIRE_CPU_ACCESSIBLE` is set and the
///   device is not host-accessible
/// @retval DLPACK_HELPERS_STATUS_MISALIGNED when an alignment option is not met
/// @retval DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS when a contiguity option is not met
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES when `REJECT_BROADCAST` or
///   `REJECT_NEGATIVE_STRIDES` refuses the strides
/// @retval DLPACK_HELPERS_STATUS_READ_ONLY when `REQUIRE_WRITABLE` is set and the tensor is
///   read-only (or legacy without `LEGACY_WRITABLE`)
/// @retval DLPACK_HELPERS_STATUS_COPIED_REJECTED when `REJECT_COPIED` is set and `flags` has
///   `DLPACK_FLAG_BITMASK_IS_COPIED`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dltensor_validate_with_error(
    tensor: *const DLTensor,
    version: DLPackVersion,
    flags: u64,
    options: *const dlpack_helpers_validate_options,
    out_layout: *mut dlpack_helpers_layout,
    err: *mut dlpack_helpers_error,
) -> dlpack_helpers_status {
    // SAFETY: the caller's contract of `dlpack_dltensor_validate` and of `err`.
    unsafe {
        boundary::with_error(err, || {
            dlpack_dltensor_validate(tensor, version, flags, options, out_layout)
        })
    }
}
