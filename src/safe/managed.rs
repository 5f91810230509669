//! [`Managed`] and [`LegacyManaged`]: owners of a managed tensor that release it exactly once.

use super::element::Element;
use super::error::{Error, Result};
use super::view::TensorRef;
use crate::abi::{
    DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPACK_FLAG_BITMASK_READ_ONLY,
    DLPackVersion, DLTensor,
};
use crate::capi::convert::{
    DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, dlpack_legacy_tensor_wrap, dlpack_tensor_create,
    dlpack_versioned_to_legacy,
};
use crate::capi::error::DLPACK_HELPERS_STATUS_OK;
use crate::capi::tensor::{dlpack_legacy_tensor_delete, dlpack_tensor_delete};
use crate::rules::layout::{self, TensorView};
use crate::rules::validate::Declared;
use crate::rules::{self, version};
use core::ffi::c_void;
use core::fmt;
use core::ptr::NonNull;

/// An owned DLPack 1.x `DLManagedTensorVersioned`: its deleter runs exactly once, when the
/// owner is dropped (through `dlpack_tensor_delete`, as C callers release), unless
/// [`Managed::into_raw`] hands ownership on.
///
/// Getting one:
/// - as a consumer, [`Managed::from_raw`] adopts a pointer a producer handed over (checked:
///   major version 1, then every DLPack rule; refused tensors are released at once), or
///   [`Managed::from_pyobject`] (`pyo3` feature) imports any `__dlpack__` object;
/// - as a producer, [`Managed::from_vec`], [`Managed::from_owner`] or
///   [`Managed::from_owner_mut`] describe Rust-owned storage (a `Vec<T>`, a `Box<[T]>`, any
///   owner) without copying; the owner is dropped when the tensor's deleter runs, wherever that
///   is (a C consumer, Python, another thread). No `unsafe` and no `extern "C"` callback.
///
/// Reading: [`Managed::view`] gives a validated [`TensorRef`] (shape, strides, dtype, device,
/// layout, requirements), [`Managed::as_slice`] the elements of a C-contiguous host tensor.
///
/// Thread-safety: `Send` (DLPack: a deleter may run on any thread, without the GIL — producers
/// such as NumPy and PyTorch take the GIL inside it) and `Sync` (shared access only reads).
/// Peer cases followed: the major check on adoption with release of a refused tensor (peer
/// case 20), one release (peer case 7), READ_ONLY honoured (peer case 50).
pub struct Managed {
    ptr: NonNull<DLManagedTensorVersioned>,
    /// Made here from storage this owner alone reaches (`from_vec`, `from_owner_mut`) and never
    /// shared since: the one case where a safe `&mut [T]` of the elements is sound.
    exclusive: bool,
}

// SAFETY: DLPack lets a managed tensor's deleter run on any thread (dlpack.h, and the Python
// specification: "may be called from any thread"); the producer constructors require
// `Send` owners. Nothing else in the struct is thread-bound.
unsafe impl Send for Managed {}
// SAFETY: `&Managed` only reads the metadata and hands out shared slices of `Element` types.
unsafe impl Sync for Managed {}

impl Managed {
    /// Adopt a managed tensor a producer handed over; ownership moves to the result at the
    /// call, whatever it returns.
    ///
    /// Checked as `dlpack_tensor_check_version_or_delete` then `dlpack_tensor_validate` with
    /// default options: a major other than 1 is `UNSUPPORTED_VERSION` (only the deleter was
    /// called, nothing else read: DLPack 1.0); a tensor that breaks a DLPack rule is the
    /// validation status (`INVALID_FLAGS`, `NULL_STRIDES`, `INVALID_SHAPE`, `OVERFLOW`, …). In
    /// both cases the tensor has been released (its deleter ran once) when the error returns.
    /// NULL is `NULL_POINTER` (nothing to release).
    ///
    /// # Safety
    /// `tensor` is NULL or a live `DLManagedTensorVersioned` that nobody else will release, and
    /// whose `dl_tensor` describes memory valid until its deleter runs (the producer's promise).
    pub unsafe fn from_raw(tensor: *mut DLManagedTensorVersioned) -> Result<Self> {
        let Some(ptr) = NonNull::new(tensor) else {
            return Err(rules::Error::NullPointer("tensor").into());
        };
        // From here on the owner releases on every path.
        let owner = Managed {
            ptr,
            exclusive: false,
        };
        // SAFETY: `version` is at the same offset in every major (frozen prefix).
        let v = unsafe { ptr.as_ref() }.version;
        version::check(v, "tensor->version")?;
        owner.checked_view()?;
        Ok(owner)
    }

    /// Give up ownership without releasing: the caller (or whoever it hands the pointer to)
    /// must release it exactly once (`dlpack_tensor_delete`, or [`Managed::from_raw`] again).
    pub fn into_raw(self) -> *mut DLManagedTensorVersioned {
        let p = self.ptr.as_ptr();
        core::mem::forget(self);
        p
    }

    /// The pointer, still owned by `self`: for C functions that borrow a tensor.
    pub fn as_raw(&self) -> *mut DLManagedTensorVersioned {
        self.ptr.as_ptr()
    }

    fn raw(&self) -> &DLManagedTensorVersioned {
        // SAFETY: live and major 1 (checked on adoption), so the whole struct is the 1.x layout.
        unsafe { self.ptr.as_ref() }
    }

    fn checked_view(&self) -> Result<TensorRef<'_>> {
        let m = self.raw();
        let declared = Declared::Versioned {
            version: m.version,
            flags: m.flags,
        };
        // SAFETY: a live managed tensor (from_raw's contract or our own constructors).
        unsafe { TensorRef::checked(&m.dl_tensor, declared) }
    }

    /// The producer's DLPack version (major 1).
    pub fn version(&self) -> DLPackVersion {
        self.raw().version
    }

    /// The `DLPACK_FLAG_BITMASK_*` flags.
    pub fn flags(&self) -> u64 {
        self.raw().flags
    }

    /// The raw `DLTensor` (for C functions that take one; [`Managed::view`] is the safe reader).
    pub fn dl_tensor(&self) -> &DLTensor {
        &self.raw().dl_tensor
    }

    /// The validated view, borrowed from `self`.
    pub fn view(&self) -> TensorRef<'_> {
        // Validated on adoption or creation and never changed since (no `&mut` access to the
        // metadata is handed out).
        self.checked_view()
            .expect("a Managed tensor was validated when it was adopted or created")
    }

    /// The elements of a C-contiguous host tensor of dtype `T` ([`TensorRef::as_slice`]).
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        self.view().as_slice()
    }

    /// The elements copied in row-major order, for any strides ([`TensorRef::to_vec`]).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.view().to_vec()
    }

    /// The elements for writing, for a tensor this owner made from Rust storage
    /// ([`Managed::from_vec`], [`Managed::from_owner_mut`]) and has not handed out: `&mut self`
    /// then makes the slice the only reference to the memory. Errors: as [`Managed::as_slice`];
    /// `READ_ONLY` for a tensor adopted from a producer or a [`Managed::share`] (its memory may
    /// be reached by others: the producer, other shares; use
    /// [`Managed::as_mut_slice_unchecked`]) and for a read-only one.
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        if !self.exclusive {
            return Err(rules::Error::fault(
                rules::Fault::ReadOnly,
                "the tensor's memory is shared with its producer (adopted or shared tensor): \
                 a safe &mut slice is only given for storage this owner made; see \
                 Managed::as_mut_slice_unchecked",
            )
            .into());
        }
        // SAFETY: exclusive storage and `&mut self`: no other reference to the elements lives.
        unsafe { self.view().as_mut_slice() }
    }

    /// The elements for writing, for any tensor whose producer allows writing (versioned,
    /// `READ_ONLY` clear; a legacy tensor never does). Errors: as [`Managed::as_slice`],
    /// `READ_ONLY`.
    ///
    /// # Safety
    /// Nothing else reads or writes the elements while the slice lives: not the producer (for a
    /// Python producer, hold the GIL and run no Python code that touches the array), not another
    /// share of the same memory, not another thread.
    pub unsafe fn as_mut_slice_unchecked<T: Element>(&mut self) -> Result<&mut [T]> {
        // SAFETY: the caller's contract.
        unsafe { self.view().as_mut_slice() }
    }

    /// Whether the host can read this tensor's memory, asking the runtime when the device type
    /// alone does not say (`dlpack_tensor_host_access` with the registered Level Zero context):
    /// `Some(true)`/`Some(false)`, or `None` when nobody can tell (no runtime to ask). Errors:
    /// `DEVICE_ERROR` (the driver call failed).
    pub fn memory_host_access(&self) -> Result<Option<bool>> {
        use crate::capi::device::{
            DLPACK_HELPERS_HOST_ACCESS_ALWAYS, DLPACK_HELPERS_HOST_ACCESS_NEVER,
        };
        let mut a = 0;
        // SAFETY: a live tensor of major 1; a valid out-pointer; NULL context: the registered one.
        let s = unsafe {
            crate::capi::pointer::dlpack_tensor_host_access(
                self.as_raw(),
                core::ptr::null_mut(),
                &mut a,
            )
        };
        if s != DLPACK_HELPERS_STATUS_OK {
            return Err(Error::last(s));
        }
        Ok(match a {
            DLPACK_HELPERS_HOST_ACCESS_ALWAYS => Some(true),
            DLPACK_HELPERS_HOST_ACCESS_NEVER => Some(false),
            _ => None,
        })
    }

    /// Wrap C-contiguous Rust storage as a writable 1.3 tensor on the CPU: `shape`'s product
    /// must equal `values.len()`. Nothing is copied but the metadata; the `Vec` is dropped when
    /// the tensor's deleter runs.
    ///
    /// Errors: `INVALID_ARGUMENT` (the element count differs), `INVALID_NDIM`, `INVALID_SHAPE`,
    /// `OVERFLOW`, `OUT_OF_MEMORY` (the statuses of `dlpack_tensor_create`). On error `values`
    /// is dropped.
    pub fn from_vec<T: Element>(values: Vec<T>, shape: &[i64]) -> Result<Self> {
        let n = layout::numel(shape)?;
        if usize::try_from(n).ok() != Some(values.len()) {
            return Err(Error::from(rules::Error::InvalidArgument(format!(
                "shape {shape:?} has {n} elements, the Vec has {}",
                values.len()
            ))));
        }
        Self::from_owner_mut(values, shape, None)
    }

    /// Wrap any owner of elements as a read-only (`READ_ONLY`) 1.3 tensor on the CPU:
    /// `shape` and `strides` (in elements; `None`: compact row-major) describe the elements
    /// within `owner.as_ref()`. The owner moves into the tensor and is dropped when its deleter
    /// runs (on any thread: hence `Send`).
    ///
    /// Errors: `INVALID_ARGUMENT` (`strides` of another length than `shape`, or elements
    /// outside the owner's slice), and the statuses of `dlpack_tensor_create`. On error the
    /// owner is dropped.
    pub fn from_owner<O, T>(owner: O, shape: &[i64], strides: Option<&[i64]>) -> Result<Self>
    where
        O: AsRef<[T]> + Send + 'static,
        T: Element,
    {
        let owner = Box::new(owner);
        let s: &[T] = (*owner).as_ref();
        let (data, len) = (s.as_ptr().cast_mut(), s.len());
        create(
            owner,
            data,
            len,
            shape,
            strides,
            DLPACK_FLAG_BITMASK_READ_ONLY,
        )
    }

    /// [`Managed::from_owner`] for an owner that lends its elements mutably
    /// (`Vec<T>`, `Box<[T]>`, `[T; N]`, …): the tensor is writable (no `READ_ONLY`).
    pub fn from_owner_mut<O, T>(owner: O, shape: &[i64], strides: Option<&[i64]>) -> Result<Self>
    where
        O: AsMut<[T]> + Send + 'static,
        T: Element,
    {
        let mut owner = Box::new(owner);
        let s: &mut [T] = (*owner).as_mut();
        let (data, len) = (s.as_mut_ptr(), s.len());
        create(owner, data, len, shape, strides, 0)
    }

    /// Another owner of the same memory: a new DLPack 1.3 tensor with the same device, dtype,
    /// shape, strides, byte offset and flags, whose deleter drops a clone of `this`. The
    /// memory is released when the last of `this` and its shares is gone. For handing one
    /// tensor to several consumers (each takes its own managed tensor); nothing is copied but
    /// the metadata. Errors: `OUT_OF_MEMORY`.
    pub fn share(this: &std::sync::Arc<Managed>) -> Result<Managed> {
        let t = *this.dl_tensor();
        let flags = this.flags();
        // SAFETY: `t` is the validated description of a live tensor, kept alive by the Arc
        // clone that the new tensor owns.
        unsafe { create_with_owner(Box::new(std::sync::Arc::clone(this)), &t, flags) }
    }

    /// Convert to a legacy `DLManagedTensor` for a consumer that reads only the legacy struct
    /// (`dlpack_versioned_to_legacy`: the legacy tensor owns this one). `READ_ONLY` when the
    /// tensor is read-only (the legacy struct cannot carry the flag; `allow_read_only` drops
    /// it knowingly), `INVALID_FLAGS` for a padded sub-byte tensor. On error `self` is
    /// released.
    pub fn into_legacy(self, allow_read_only: bool) -> Result<LegacyManaged> {
        let mut out: *mut DLManagedTensor = core::ptr::null_mut();
        let options = if allow_read_only {
            crate::capi::convert::DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY
        } else {
            0
        };
        // SAFETY: an owned, live tensor; valid out-pointer. On OK the legacy tensor owns it.
        let s = unsafe {
            dlpack_versioned_to_legacy(self.as_raw(), options, core::ptr::null_mut(), &mut out)
        };
        if s != DLPACK_HELPERS_STATUS_OK {
            return Err(Error::last(s));
        }
        core::mem::forget(self);
        // SAFETY: a new legacy tensor we own, validated by the conversion.
        unsafe { LegacyManaged::from_raw(out) }
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        // SAFETY: we own the tensor and release it once; `dlpack_tensor_delete` reads only the
        // frozen `deleter` field, valid for any major.
        unsafe { dlpack_tensor_delete(self.ptr.as_ptr()) }
    }
}

impl fmt::Debug for Managed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.view();
        f.debug_struct("Managed")
            .field("version", &self.version())
            .field("flags", &self.flags())
            .field("device", &format_args!("{}", v.device()))
            .field("dtype", &format_args!("{}", v.dtype()))
            .field("shape", &v.shape())
            .field("strides", &v.strides())
            .finish()
    }
}

/// The deleter side of [`Managed::from_owner`]: drops the boxed owner. Called exactly once by
/// the tensor's deleter (`dlpack_tensor_create`'s `release`); a panic in the owner's `Drop` is
/// caught here and not unwound into C.
extern "C" fn drop_owner<O>(ctx: *mut c_void) {
    // SAFETY: `ctx` is the `Box<O>` leaked in `create`, released once by dlpack_tensor_create's
    // contract.
    let owner = unsafe { Box::from_raw(ctx.cast::<O>()) };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(owner)));
}

fn create<O: Send + 'static, T: Element>(
    owner: Box<O>,
    data: *mut T,
    len: usize,
    shape: &[i64],
    strides: Option<&[i64]>,
    flags: u64,
) -> Result<Managed> {
    let invalid = |m: String| Error::from(rules::Error::InvalidArgument(m));
    if let Some(st) = strides
        && st.len() != shape.len()
    {
        return Err(invalid(format!(
            "strides has {} entries, shape {}",
            st.len(),
            shape.len()
        )));
    }
    let ndim = i32::try_from(shape.len())
        .map_err(|_| invalid(format!("shape has {} dimensions", shape.len())))?;
    layout::check_ndim_named(ndim, 0, "shape.len()")?;
    let view = TensorView {
        data: data as usize,
        device: DLDevice::CPU,
        dtype: T::DTYPE,
        shape,
        strides,
        byte_offset: 0,
    };
    let bytes = (len as u64).saturating_mul(size_of::<T>() as u64);
    if !layout::fits_allocation(&view, false, data as usize, bytes)? {
        return Err(invalid(format!(
            "shape {shape:?} with strides {strides:?} reaches outside the owner's {len} elements"
        )));
    }
    let t = DLTensor {
        data: data.cast(),
        device: DLDevice::CPU,
        ndim,
        dtype: T::DTYPE,
        shape: shape.as_ptr().cast_mut(),
        strides: strides.map_or(core::ptr::null_mut(), |s| s.as_ptr().cast_mut()),
        byte_offset: 0,
    };
    // SAFETY: `shape`/`strides` hold `ndim` elements; `data` points into the boxed owner, whose
    // heap address stays put until `drop_owner::<O>` frees it.
    let mut m = unsafe { create_with_owner(owner, &t, flags) }?;
    // The boxed owner moved into the tensor: only this owner reaches its elements.
    m.exclusive = true;
    Ok(m)
}

/// `dlpack_tensor_create` of `t`'s description (copied) with `flags`, whose deleter drops
/// `owner` once; on failure `owner` is dropped here.
///
/// # Safety
/// `t.shape`/`t.strides` (when non-NULL) hold `t.ndim` elements; `t.data` stays valid while
/// `owner` lives.
unsafe fn create_with_owner<O: Send + 'static>(
    owner: Box<O>,
    t: &DLTensor,
    flags: u64,
) -> Result<Managed> {
    let ctx = Box::into_raw(owner).cast::<c_void>();
    let mut out: *mut DLManagedTensorVersioned = core::ptr::null_mut();
    // SAFETY: the caller's contract; the arrays are copied by the call.
    let s = unsafe {
        dlpack_tensor_create(
            t.data,
            t.device,
            t.ndim,
            t.shape,
            t.strides,
            t.dtype,
            t.byte_offset,
            flags,
            Some(drop_owner::<O>),
            ctx,
            &mut out,
        )
    };
    if s != DLPACK_HELPERS_STATUS_OK {
        let e = Error::last(s);
        // SAFETY: on failure `release` was not called: the box is still ours.
        drop(unsafe { Box::from_raw(ctx.cast::<O>()) });
        return Err(e);
    }
    // SAFETY: a new, valid 1.3 tensor that we own.
    unsafe { Managed::from_raw(out) }
}

/// An owned legacy `DLManagedTensor` (DLPack before 1.0): its deleter runs exactly once, on
/// drop (`dlpack_legacy_tensor_delete`). Legacy tensors carry no version and no flags: their
/// writability is unknown, so [`LegacyManaged::into_versioned`] marks them `READ_ONLY` unless
/// the caller asserts otherwise (peer case 50). `Send` and `Sync` as [`Managed`].
pub struct LegacyManaged {
    ptr: NonNull<DLManagedTensor>,
}

// SAFETY: as Managed: DLPack deleters may run on any thread.
unsafe impl Send for LegacyManaged {}
// SAFETY: shared access only reads.
unsafe impl Sync for LegacyManaged {}

impl LegacyManaged {
    /// Adopt a legacy managed tensor; ownership moves at the call. Validated with the legacy
    /// rules (`dlpack_legacy_tensor_validate`); an invalid one is released and its status
    /// returned. NULL is `NULL_POINTER`.
    ///
    /// # Safety
    /// `tensor` is NULL or a live `DLManagedTensor` nobody else releases, describing memory valid
    /// until its deleter runs.
    pub unsafe fn from_raw(tensor: *mut DLManagedTensor) -> Result<Self> {
        let Some(ptr) = NonNull::new(tensor) else {
            return Err(rules::Error::NullPointer("tensor").into());
        };
        let owner = LegacyManaged { ptr };
        owner.checked_view()?;
        Ok(owner)
    }

    fn checked_view(&self) -> Result<TensorRef<'_>> {
        // SAFETY: live (from_raw's contract).
        let t = unsafe { &self.ptr.as_ref().dl_tensor };
        // SAFETY: as above.
        unsafe { TensorRef::checked(t, Declared::Legacy) }
    }

    /// Give up ownership without releasing.
    pub fn into_raw(self) -> *mut DLManagedTensor {
        let p = self.ptr.as_ptr();
        core::mem::forget(self);
        p
    }

    /// The pointer, still owned by `self`.
    pub fn as_raw(&self) -> *mut DLManagedTensor {
        self.ptr.as_ptr()
    }

    /// The validated view.
    pub fn view(&self) -> TensorRef<'_> {
        self.checked_view()
            .expect("a LegacyManaged tensor was validated when it was adopted")
    }

    /// The elements of a C-contiguous host tensor of dtype `T`.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        self.view().as_slice()
    }

    /// Wrap as a DLPack 1.3 versioned tensor (`dlpack_legacy_tensor_wrap`): `READ_ONLY` unless
    /// `writable` (the caller knows its producer shares writable memory). On error `self` is
    /// released.
    pub fn into_versioned(self, writable: bool) -> Result<Managed> {
        let mut out: *mut DLManagedTensorVersioned = core::ptr::null_mut();
        let options = if writable {
            DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE
        } else {
            0
        };
        // SAFETY: an owned, validated legacy tensor; on OK the wrapper owns it.
        let s = unsafe { dlpack_legacy_tensor_wrap(self.as_raw(), 0, options, &mut out) };
        if s != DLPACK_HELPERS_STATUS_OK {
            return Err(Error::last(s));
        }
        core::mem::forget(self);
        // SAFETY: a new 1.3 tensor we own.
        unsafe { Managed::from_raw(out) }
    }
}

impl Drop for LegacyManaged {
    fn drop(&mut self) {
        // SAFETY: owned; released once.
        unsafe { dlpack_legacy_tensor_delete(self.ptr.as_ptr()) }
    }
}

impl fmt::Debug for LegacyManaged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.view();
        f.debug_struct("LegacyManaged")
            .field("device", &format_args!("{}", v.device()))
            .field("dtype", &format_args!("{}", v.dtype()))
            .field("shape", &v.shape())
            .finish()
    }
}
