//! The native `Tensor` and `import_tensor`: glue over the C library's Python entry points
//! (`dlpack_object_import`, `dlpack_capsule_consume`, `dlpack_export_request_resolve`,
//! `dlpack_capsule_new_view`). The rules live in the library.

use crate::abi::{DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion, DLTensor};
use crate::args;
use crate::errors::check;
use crate::ffi;
use crate::values::{DType, Device};
use core::ffi::c_void;
use core::ptr::null_mut;
use core::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicUsize,
    Ordering::{AcqRel, Acquire, Relaxed, Release},
};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyTuple};
use std::sync::OnceLock;

const FLAG_READ_ONLY: u64 = 1;
const FLAG_IS_COPIED: u64 = 2;

/// An imported DLPack tensor (made by :func:`import_tensor`; not constructible directly).
///
/// Implements ``__dlpack__`` and ``__dlpack_device__`` (zero-copy views), so
/// ``numpy.from_dlpack(tensor)`` works, and its type publishes ``__dlpack_c_exchange_api__``
/// (DLPack 1.3) for C-level consumers.
///
/// Lifetime: the managed tensor is owned by this Tensor until the first export, then by a
/// private owner that this Tensor and every exported view reference. The producer's deleter runs
/// exactly once, when the LAST of them lets go: :meth:`release` (or leaving a ``with`` block)
/// drops only this Tensor's hold, so arrays made with ``numpy.from_dlpack(tensor)`` stay valid
/// after it; the Tensor itself then refuses access to the data (``ValueError``).
#[pyclass(frozen, module = "dlpack_helpers", name = "Tensor")]
pub struct Tensor {
    /// The managed tensor; NULL once freed (`state` says when it may be read).
    mt: AtomicPtr<DLManagedTensorVersioned>,
    /// Who is reading `mt` and whether it was released, so that a release on one thread never
    /// frees what another thread reads (free-threaded CPython, issue 36): `RELEASED` and `FREED`
    /// bits plus `BORROW` per live [`Held`]. `mt`/`owner` are freed exactly once, by whoever
    /// moves the state from "released, no borrow" to `FREED` (a compare-exchange).
    state: AtomicUsize,
    /// NULL, or (after the first export) a `"dltensor_versioned"` capsule made by
    /// `dlpack_capsule_new` that owns `mt` (its destructor calls the deleter); views reference it.
    owner: AtomicPtr<pyo3::ffi::PyObject>,
    /// NULL, or (a strong reference) the owner that the `Tensor` this one was imported from hands
    /// its views: set when this Tensor is an in-place view of another `Tensor`'s memory (a
    /// re-import: `import_tensor(t)`), so that its own views reference that owner directly
    /// instead of a capsule owning this view. A chain `x = import_tensor(x)` then stays one
    /// level deep: its release no longer recursed once per link (100,000 links overflowed the C
    /// stack; issue 34).
    root: AtomicPtr<pyo3::ffi::PyObject>,
    how: u32,
    /// The stream the data is ordered on (`dlpack_object_import_with_stream`): a recorded
    /// producer stream (`STREAM_HANDLE`) is waited for by every later export with a stream
    /// (peer case 53); the default streams order with blocking streams implicitly.
    ready: ffi::dlpack_helpers_stream,
    /// Set by `import_tensor` when this Tensor views another `Tensor` whose `READ_ONLY` was
    /// assumed (a legacy import): the versioned hop between them carries READ_ONLY as a stated
    /// bit, but the fact is the first import's (issue 25).
    assumed_read_only: AtomicBool,
    /// Whether `mt` passed `dlpack_tensor_validate`'s rules: always, since every import path of
    /// the library validates what it hands over (issue 34; before, a versioned tensor came
    /// unchecked and this was set at the first export). Views of it are made by
    /// `dlpack_*_new_view_validated` (issue 26). `mt` does not change while this Tensor holds it
    /// (nothing here writes it; DLPack: the producer does not).
    validated: AtomicBool,
    /// NULL, or (made by the first `shape`, `dtype` or `device` read) the Python objects those
    /// getters answer, made once. One pointer instead of the three caches inline: every import
    /// moves the Tensor value a few times before it lands in its Python object, and most
    /// Tensors are never asked (issue 34, callgrind: about 25 instructions per import and
    /// release).
    caches: AtomicPtr<Caches>,
}

/// [`Tensor::caches`].
#[derive(Default)]
struct Caches {
    shape: OnceLock<Py<PyTuple>>,
    dtype: OnceLock<Py<DType>>,
    device: OnceLock<Py<Device>>,
}

/// `Tensor::state`: `release` was called (no new borrow succeeds).
const RELEASED: usize = 1;
/// `Tensor::state`: `mt` and `owner` were freed (set once, by one thread).
const FREED: usize = 2;
/// `Tensor::state`: one live [`Held`].
const BORROW: usize = 4;

/// A borrow of a live Tensor's managed tensor: while it lives, a `release` on any thread
/// only marks the Tensor released, and the last borrow frees it (issue 36).
pub struct Held<'a> {
    t: &'a Tensor,
    mt: &'a DLManagedTensorVersioned,
}

impl core::ops::Deref for Held<'_> {
    type Target = DLManagedTensorVersioned;
    #[inline(always)]
    fn deref(&self) -> &DLManagedTensorVersioned {
        self.mt
    }
}

impl Drop for Held<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.t.unborrow();
    }
}

// SAFETY: every field is an atomic (`caches` points at `OnceLock`s) or immutable after construction; `mt` is read
// only under a `Held` borrow and freed once (`state`), so any thread may use a Tensor
// (free-threaded CPython, issue 36). Python objects are touched only while attached.
unsafe impl Send for Tensor {}
unsafe impl Sync for Tensor {}

impl Drop for Tensor {
    fn drop(&mut self) {
        // No `&self` is left (every `Held` borrows one), so no borrow can be live: free now
        // unless a `release` already did.
        if *self.state.get_mut() & FREED == 0 {
            *self.state.get_mut() |= RELEASED | FREED;
            self.free();
        }
        let caches = *self.caches.get_mut();
        if !caches.is_null() {
            // SAFETY: made by `caches()` with `Box::into_raw`, freed once, here.
            drop(unsafe { Box::from_raw(caches) });
        }
    }
}

impl Tensor {
    /// `mt` comes from one of the library's imports (`dlpack_capsule_import`,
    /// `dlpack_object_import_with_stream`), which validated it.
    pub fn new(mt: *mut DLManagedTensorVersioned, how: u32) -> Self {
        let none = ffi::dlpack_helpers_stream {
            kind: ffi::STREAM_NO_SYNC,
            handle: null_mut(),
        };
        Self::with_stream(mt, how, none)
    }

    /// A Tensor whose data is ordered on `ready` (see the field).
    pub fn with_stream(
        mt: *mut DLManagedTensorVersioned,
        how: u32,
        ready: ffi::dlpack_helpers_stream,
    ) -> Self {
        Tensor {
            mt: AtomicPtr::new(mt),
            owner: AtomicPtr::new(null_mut()),
            state: AtomicUsize::new(0),
            root: AtomicPtr::new(null_mut()),
            how,
            ready,
            assumed_read_only: AtomicBool::new(false),
            // Every `mt` comes from a library import, which validated it (issue 34).
            validated: AtomicBool::new(true),
            caches: AtomicPtr::new(null_mut()),
        }
    }

    /// The getters' caches, made by the first call (a race between threads keeps one).
    fn caches(&self) -> &Caches {
        let p = self.caches.load(Acquire);
        if !p.is_null() {
            // SAFETY: published once, freed only by `drop` (no `&self` left then).
            return unsafe { &*p };
        }
        let mine = Box::into_raw(Box::default());
        match self.caches.compare_exchange(null_mut(), mine, AcqRel, Acquire) {
            // SAFETY: just published; lives until `drop`.
            Ok(_) => unsafe { &*mine },
            Err(theirs) => {
                // SAFETY: ours, never published.
                drop(unsafe { Box::from_raw(mine) });
                // SAFETY: as above.
                unsafe { &*theirs }
            }
        }
    }

    /// Drop this Tensor's hold: mark it released; free now when nothing borrows it, else the
    /// last borrow frees it. Idempotent, from any thread.
    fn release_hold(&self) {
        let s = self.state.fetch_or(RELEASED, AcqRel);
        if s & RELEASED == 0 && s < BORROW {
            self.try_free();
        }
    }

    /// Free once released with no borrow left: exactly one caller wins the compare-exchange.
    #[cold]
    fn try_free(&self) {
        if self
            .state
            .compare_exchange(RELEASED, RELEASED | FREED, AcqRel, Relaxed)
            .is_ok()
        {
            self.free();
        }
    }

    #[inline(always)]
    fn unborrow(&self) {
        if self.state.fetch_sub(BORROW, AcqRel) == RELEASED | BORROW {
            self.try_free();
        }
    }

    fn free(&self) {
        let root = self.root.swap(null_mut(), Relaxed);
        if !root.is_null() {
            // SAFETY: our strong reference to the shared owner; the GIL is held.
            unsafe { pyo3::ffi::Py_DecRef(root) };
        }
        let owner = self.owner.swap(null_mut(), Relaxed);
        let mt = self.mt.swap(null_mut(), Relaxed);
        if !owner.is_null() {
            // SAFETY: our strong reference to the owner capsule; the GIL is held.
            unsafe { pyo3::ffi::Py_DecRef(owner) };
        } else if !mt.is_null() {
            // SAFETY: we own `mt` (no owner made yet): release it exactly once.
            unsafe { ffi::dlpack_tensor_delete(mt) };
        }
    }

    /// The managed tensor, borrowed (a [`Held`]: a release meanwhile, on any thread, waits
    /// for it to end before freeing), or `ValueError` once released.
    #[inline]
    pub fn managed(&self) -> PyResult<Held<'_>> {
        let s = self.state.fetch_add(BORROW, Acquire);
        let p = self.mt.load(Relaxed);
        if s & RELEASED != 0 || p.is_null() {
            self.unborrow();
            return Err(PyValueError::new_err(
                "the tensor was released (arrays exported from it stay valid)",
            ));
        }
        // SAFETY: not released when the borrow was taken, so not freed until it ends.
        Ok(Held {
            t: self,
            mt: unsafe { &*p },
        })
    }

    /// `DLPACK_HELPERS_READ_ONLY_ORIGIN_*` of the managed tensor (C
    /// `dlpack_tensor_read_only_origin`), or LEGACY when it was inherited from another Tensor.
    pub fn read_only_origin(&self) -> PyResult<i32> {
        let mt = self.managed()?;
        if mt.flags & FLAG_READ_ONLY == 0 {
            return Ok(ffi::READ_ONLY_ORIGIN_NONE);
        }
        if self.assumed_read_only.load(Relaxed) {
            return Ok(ffi::READ_ONLY_ORIGIN_LEGACY);
        }
        let mut out = -1;
        // SAFETY: the live tensor this object owns; valid out pointer.
        check(unsafe { ffi::dlpack_tensor_read_only_origin(&*mt, &mut out) })?;
        Ok(out)
    }

    /// Record that this Tensor's READ_ONLY is the assumed one of the Tensor it views.
    pub fn inherit_assumed_read_only(&self) {
        self.assumed_read_only.store(true, Relaxed);
    }

    /// Validate `mt` once per Tensor (`dlpack_tensor_validate`, NULL strides read as row-major,
    /// as `dlpack_capsule_new_view` checks a view), so that views of it are only copied
    /// (`dlpack_*_new_view_validated`). `Ok(true)` once it passed; an invalid tensor is an error
    /// on every export, never cached.
    pub fn validate_once(&self, mt: &DLManagedTensorVersioned) -> PyResult<bool> {
        if self.validated.load(Acquire) {
            return Ok(true);
        }
        let opts = ffi::dlpack_helpers_validate_options {
            struct_size: core::mem::size_of::<ffi::dlpack_helpers_validate_options>(),
            flags: ffi::VALIDATE_LENIENT_NULL_STRIDES,
            ..Default::default()
        };
        // SAFETY: `mt` is the live tensor this object owns; no layout wanted.
        check(unsafe { ffi::dlpack_tensor_validate(mt, &opts, null_mut()) })?;
        self.validated.store(true, Release);
        Ok(true)
    }

    /// Share `src`'s view owner (see the `root` field): this Tensor's managed tensor is an
    /// in-place view of `src`'s memory, kept alive by that owner. Set at most once (the first
    /// published reference wins; another is dropped).
    pub fn share_root(&self, src: &Tensor) -> PyResult<()> {
        if self.mt.load(Acquire).is_null() || !self.root.load(Acquire).is_null() {
            return Ok(());
        }
        let held = src.managed()?;
        let o = src.owner(&held)?;
        // SAFETY: a live object (src holds it under the borrow); the new reference is ours
        // until release.
        unsafe { pyo3::ffi::Py_IncRef(o) };
        if self
            .root
            .compare_exchange(null_mut(), o, AcqRel, Acquire)
            .is_err()
        {
            // SAFETY: the reference taken just above, not published.
            unsafe { pyo3::ffi::Py_DecRef(o) };
        }
        Ok(())
    }

    /// The object views of this tensor reference, if made: the shared root owner, else the
    /// owner capsule.
    #[inline(always)]
    fn view_owner_loaded(&self) -> *mut pyo3::ffi::PyObject {
        let r = self.root.load(Acquire);
        if !r.is_null() {
            r
        } else {
            self.owner.load(Acquire)
        }
    }

    /// The object views of this tensor reference, borrowed: the shared root owner (a
    /// re-import, issue 34), else the owner capsule of the managed tensor (made on first use);
    /// `mt` is this Tensor's managed tensor under a [`Held`] borrow (the owner lives as long as
    /// it). Two threads exporting a fresh Tensor at once may both make a capsule: the first
    /// published wins, and the other is renamed `"used_dltensor_versioned"` before it is
    /// dropped, so its destructor leaves the tensor alone (one owner, one deleter call; issue 36).
    pub fn owner(&self, mt: &DLManagedTensorVersioned) -> PyResult<*mut pyo3::ffi::PyObject> {
        let r = self.root.load(Acquire);
        if !r.is_null() {
            return Ok(r);
        }
        let o = self.owner.load(Acquire);
        if !o.is_null() {
            return Ok(o);
        }
        let mt = mt as *const DLManagedTensorVersioned as *mut DLManagedTensorVersioned;
        let mut cap: *mut c_void = null_mut();
        // SAFETY: a borrowed live `mt`; on OK the capsule owns it.
        check(unsafe { ffi::dlpack_capsule_new(mt, &mut cap) })?;
        match self
            .owner
            .compare_exchange(null_mut(), cap.cast(), AcqRel, Acquire)
        {
            Ok(_) => Ok(cap.cast()),
            Err(first) => {
                // SAFETY: our new capsule, never shared: renamed as consumed (a static name),
                // so its destructor calls no deleter, then released (attached thread).
                unsafe {
                    pyo3::ffi::PyCapsule_SetName(cap.cast(), c"used_dltensor_versioned".as_ptr());
                    pyo3::ffi::Py_DecRef(cap.cast());
                }
                Ok(first)
            }
        }
    }

    fn strides_vec(&self) -> PyResult<Vec<i64>> {
        let held = self.managed()?;
        let t = &held.dl_tensor;
        let n = readable_ndim(t)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut out = vec![0i64; n];
        if !t.strides.is_null() {
            // SAFETY: DLPack: `strides` holds `ndim` elements.
            out.copy_from_slice(unsafe { core::slice::from_raw_parts(t.strides, n) });
        } else {
            // NULL strides (DLPack < 1.2): compact row-major, as the library defines it.
            // SAFETY: `shape` holds `ndim` elements; `out` has room for them.
            check(unsafe {
                ffi::dlpack_compact_strides(t.ndim, t.shape, false, out.as_mut_ptr())
            })?;
        }
        Ok(out)
    }

    fn shape_vec(&self) -> PyResult<Vec<i64>> {
        let held = self.managed()?;
        let t = &held.dl_tensor;
        let n = readable_ndim(t)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: DLPack: `shape` holds `ndim` elements, valid while the borrow lives.
        Ok(unsafe { core::slice::from_raw_parts(t.shape, n) }.to_vec())
    }
}

/// `__dlpack__(max_version=v)` with no other argument, as an export request.
fn versioned_request(v: DLPackVersion) -> ffi::dlpack_helpers_export_request {
    ffi::dlpack_helpers_export_request {
        has_max_version: true,
        max_version: v,
        has_stream: false,
        stream: 0,
        has_dl_device: false,
        dl_device: DLDevice::default(),
        copy: ffi::COPY_IF_NEEDED,
    }
}

/// The number of `shape` (and `strides`) entries that may be read: `ndim`, once it is in
/// 0..=`DLPACK_HELPERS_MAX_NDIM` and `shape` is not NULL when it is above 0; else `ValueError`.
/// A Tensor holds what its producer handed over unvalidated until it is exported, and a shape
/// of `ndim` 2**30 was read past its end (a crash); a NULL shape read as `()`.
fn readable_ndim(t: &DLTensor) -> PyResult<usize> {
    if !(0..=ffi::MAX_NDIM).contains(&t.ndim) {
        return Err(PyValueError::new_err(format!(
            "the producer's tensor.ndim is {}; it must be in 0..={} (this library's bound)",
            t.ndim,
            ffi::MAX_NDIM
        )));
    }
    if t.ndim > 0 && t.shape.is_null() {
        return Err(PyValueError::new_err(format!(
            "the producer's tensor.shape is NULL but tensor.ndim is {}",
            t.ndim
        )));
    }
    Ok(t.ndim as usize)
}

/// What a buffer (`__getbuffer__`) keeps until `__releasebuffer__`: its shape and byte strides
/// (`Py_ssize_t` arrays the `Py_buffer` points into) and a strong reference to the object the
/// Tensor's DLPack views reference (the owner capsule of the managed tensor, or the shared root),
/// which keeps the memory alive past `release()`.
struct BufferInternal {
    shape: Vec<pyo3::ffi::Py_ssize_t>,
    strides: Vec<pyo3::ffi::Py_ssize_t>,
    owner: *mut pyo3::ffi::PyObject,
}

struct BufferFill {
    buf: *mut c_void,
    len: pyo3::ffi::Py_ssize_t,
    readonly: bool,
    itemsize: pyo3::ffi::Py_ssize_t,
    format: &'static core::ffi::CStr,
    internal: Box<BufferInternal>,
}

/// The PEP 3118 format code and item size of `d` (native byte order, the struct module's
/// native sizes: `h` 2, `i` 4, `q` 8 bytes), or why it has none.
fn buffer_format(
    d: crate::abi::DLDataType,
) -> Result<(&'static core::ffi::CStr, usize), &'static str> {
    use crate::abi::DLDataTypeCode as C;
    if d.lanes != 1 {
        return Err("a vector type (lanes > 1) has no PEP 3118 format code");
    }
    let f: &'static core::ffi::CStr = match (C(d.code), d.bits) {
        (C::kDLInt, 8) => c"b",
        (C::kDLInt, 16) => c"h",
        (C::kDLInt, 32) => c"i",
        (C::kDLInt, 64) => c"q",
        (C::kDLUInt, 8) => c"B",
        (C::kDLUInt, 16) => c"H",
        (C::kDLUInt, 32) => c"I",
        (C::kDLUInt, 64) => c"Q",
        (C::kDLFloat, 16) => c"e",
        (C::kDLFloat, 32) => c"f",
        (C::kDLFloat, 64) => c"d",
        (C::kDLComplex, 64) => c"Zf",
        (C::kDLComplex, 128) => c"Zd",
        (C::kDLBool, 8) => c"?",
        (C::kDLBfloat, _) => return Err("bfloat16 has no PEP 3118 format code"),
        (C::kDLOpaqueHandle, _) => return Err("opaque handles have no PEP 3118 format code"),
        (_, b) if b < 8 => {
            return Err("a sub-byte type has no PEP 3118 format code (items are not addressable)")
        }
        _ => return Err("the type has no PEP 3118 format code"),
    };
    Ok((f, d.bits as usize / 8))
}

/// Whether `strides` (bytes) of `shape` are compact, row-major (`c`) or column-major; extent-1
/// dimensions may carry any stride, and an empty tensor is both.
fn compact(shape: &[isize], strides: &[isize], itemsize: isize, c: bool) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut want = itemsize;
    let n = shape.len();
    for k in 0..n {
        let i = if c { n - 1 - k } else { k };
        if shape[i] != 1 && strides[i] != want {
            return false;
        }
        want *= shape[i];
    }
    true
}

/// Check a buffer request against `t`'s managed tensor (borrowed by `mt`) and gather what
/// `__getbuffer__` writes; takes a reference to the view owner only once nothing can refuse.
fn buffer_fill(
    t: &Tensor,
    mt: &DLManagedTensorVersioned,
    flags: core::ffi::c_int,
) -> PyResult<BufferFill> {
    use pyo3::ffi::{
        PyBUF_ANY_CONTIGUOUS, PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS, PyBUF_STRIDES, PyBUF_WRITABLE,
    };
    let dl = &mt.dl_tensor;
    let dtype = || DType { raw: dl.dtype }.__str__();
    let device = || Device { raw: dl.device }.__str__();
    let mut access: i32 = -1;
    // SAFETY: the live tensor `t` owns (borrowed); NULL context = the registered one.
    check(unsafe { ffi::dlpack_tensor_host_access(mt, null_mut(), &mut access) })?;
    if access != 1 {
        let why = if access == 0 { "never" } else { "unknown" };
        return Err(PyBufferError::new_err(format!(
            "dlpack_helpers.Tensor on device {}: host code cannot read its memory \
             (host_access() is '{why}'), so it has no buffer; export it with __dlpack__ \
             (e.g. numpy.from_dlpack(t, device='cpu') copies it to the host)",
            device()
        )));
    }
    let (format, itemsize) = buffer_format(dl.dtype).map_err(|why| {
        PyBufferError::new_err(format!(
            "dlpack_helpers.Tensor of dtype {}: {why}, so it has no buffer; export it with \
             __dlpack__ instead",
            dtype()
        ))
    })?;
    let readonly = mt.flags & FLAG_READ_ONLY != 0;
    if readonly && flags & PyBUF_WRITABLE != 0 {
        let origin = if t.read_only_origin()? == ffi::READ_ONLY_ORIGIN_LEGACY {
            "assumed: it came through the legacy struct; import_tensor(obj, legacy_writable=True) \
             says the memory may be written"
        } else {
            "stated by its producer"
        };
        return Err(PyBufferError::new_err(format!(
            "dlpack_helpers.Tensor is read-only ({origin}); a writable buffer was requested"
        )));
    }
    let shape = t.shape_vec()?;
    let strides = t.strides_vec()?;
    if shape.len() > pyo3::ffi::PyBUF_MAX_NDIM {
        return Err(PyBufferError::new_err(format!(
            "dlpack_helpers.Tensor has {} dimensions; a buffer has at most {}",
            shape.len(),
            pyo3::ffi::PyBUF_MAX_NDIM
        )));
    }
    let too_big = || PyBufferError::new_err("the tensor's byte extent does not fit a Py_ssize_t");
    let isz = itemsize as isize;
    let mut len: isize = isz;
    let mut sh = Vec::with_capacity(shape.len());
    let mut st = Vec::with_capacity(shape.len());
    for (&n, &s) in shape.iter().zip(&strides) {
        let n = isize::try_from(n).map_err(|_| too_big())?;
        sh.push(n);
        st.push(
            isize::try_from(s)
                .ok()
                .and_then(|s| s.checked_mul(isz))
                .ok_or_else(too_big)?,
        );
        len = len.checked_mul(n).ok_or_else(too_big)?;
    }
    let c = compact(&sh, &st, isz, true);
    let f = compact(&sh, &st, isz, false);
    let layout_refusal = if flags & PyBUF_STRIDES != PyBUF_STRIDES && !c {
        Some("the consumer asked for no strides, but the tensor is not C-contiguous")
    } else if flags & PyBUF_C_CONTIGUOUS == PyBUF_C_CONTIGUOUS && !c {
        Some("the consumer asked for a C-contiguous buffer, but the tensor is not")
    } else if flags & PyBUF_F_CONTIGUOUS == PyBUF_F_CONTIGUOUS && !f {
        Some("the consumer asked for a Fortran-contiguous buffer, but the tensor is not")
    } else if flags & PyBUF_ANY_CONTIGUOUS == PyBUF_ANY_CONTIGUOUS && !(c || f) {
        Some("the consumer asked for a contiguous buffer, but the tensor is not")
    } else {
        None
    };
    if let Some(why) = layout_refusal {
        return Err(PyBufferError::new_err(format!(
            "dlpack_helpers.Tensor: {why}"
        )));
    }
    let owner = t.owner(mt)?;
    // SAFETY: a live object (the Tensor holds it while `mt` is borrowed); the new reference is
    // the buffer's until `__releasebuffer__`.
    unsafe { pyo3::ffi::Py_IncRef(owner) };
    let buf = (dl.data as *mut u8)
        .wrapping_add(dl.byte_offset as usize)
        .cast();
    Ok(BufferFill {
        buf,
        len,
        readonly,
        itemsize: isz,
        format,
        internal: Box::new(BufferInternal {
            shape: sh,
            strides: st,
            owner,
        }),
    })
}

#[pymethods]
impl Tensor {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn py_new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        Err(PyTypeError::new_err(
            "dlpack_helpers.Tensor cannot be constructed directly; use dlpack_helpers.import_tensor(obj)",
        ))
    }

    /// ``DLPACK_HELPERS_IMPORTED_*`` bits (int): 0x1 the producer handed over the legacy
    /// (unversioned) struct, 0x2 it was imported after the ``TypeError`` retry without
    /// ``max_version``, 0x4 it came through the type's C exchange API.
    #[getter]
    fn how(&self) -> u32 {
        self.how
    }

    /// Where the tensor came from: ``"exchange_api"`` (the type's C exchange API),
    /// ``"legacy_capsule"`` (a ``"dltensor"`` capsule: the legacy struct, which cannot state
    /// read-only) or ``"versioned_capsule"`` (``"dltensor_versioned"``).
    #[getter]
    fn source(&self) -> &'static str {
        if self.how & ffi::IMPORTED_EXCHANGE_API != 0 {
            "exchange_api"
        } else if self.how & ffi::IMPORTED_LEGACY != 0 {
            "legacy_capsule"
        } else {
            "versioned_capsule"
        }
    }

    /// Drop this Tensor's hold on the managed tensor (idempotent). The producer's deleter runs
    /// now if nothing exported from this Tensor is alive, else when the last of those views lets
    /// go.
    fn release(&self) {
        self.release_hold();
    }

    /// Same as :meth:`release`.
    fn close(&self) {
        self.release_hold();
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, PyTuple>) -> bool {
        self.release_hold();
        false
    }

    /// Whether :meth:`release` was called.
    #[getter]
    fn released(&self) -> bool {
        self.state.load(Acquire) & RELEASED != 0
    }

    /// The managed tensor's DLPack ``(major, minor)`` version (a legacy tensor is wrapped as this library's version, 1.3).
    #[getter]
    fn version(&self) -> PyResult<(u32, u32)> {
        let v = self.managed()?.version;
        Ok((v.major, v.minor))
    }

    /// ``DLPACK_FLAG_BITMASK_*`` bits (int): 0x1 read-only, 0x2 is-copied, 0x4 sub-byte padded.
    #[getter]
    fn flags(&self) -> PyResult<u64> {
        Ok(self.managed()?.flags)
    }

    /// Whether the memory must not be written (``DLPACK_FLAG_BITMASK_READ_ONLY``).
    #[getter]
    fn readonly(&self) -> PyResult<bool> {
        Ok(self.managed()?.flags & FLAG_READ_ONLY != 0)
    }

    /// Where :attr:`readonly` comes from (C ``dlpack_tensor_read_only_origin``): ``None`` when
    /// the tensor is writable; ``"stated"`` when its producer said read-only (a versioned
    /// tensor with ``READ_ONLY``); ``"assumed"`` when it arrived through the legacy struct, which
    /// cannot say whether the memory may be written, so this package assumed read-only (also
    /// for a Tensor imported from such a Tensor). An assumed read-only tensor goes back to a
    /// legacy consumer in place (it states what its producer stated); a stated one never does
    /// (see :meth:`__dlpack__`).
    #[getter]
    fn readonly_origin(&self) -> PyResult<Option<&'static str>> {
        Ok(match self.read_only_origin()? {
            ffi::READ_ONLY_ORIGIN_NONE => None,
            ffi::READ_ONLY_ORIGIN_LEGACY => Some("assumed"),
            _ => Some("stated"),
        })
    }

    /// Where the memory is: a :class:`Device` (equal to the ``(device_type, device_id)``
    /// tuple).
    #[getter]
    fn device(&self, py: Python<'_>) -> PyResult<Py<Device>> {
        let raw = self.managed()?.dl_tensor.device;
        let cache = &self.caches().device;
        if let Some(d) = cache.get() {
            return Ok(d.clone_ref(py));
        }
        let d = Py::new(py, Device { raw })?;
        Ok(cache.get_or_init(|| d).clone_ref(py))
    }

    /// The element type: a :class:`DType` (equal to the ``(code, bits, lanes)`` tuple).
    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Py<DType>> {
        let raw = self.managed()?.dl_tensor.dtype;
        let cache = &self.caches().dtype;
        if let Some(d) = cache.get() {
            return Ok(d.clone_ref(py));
        }
        let d = Py::new(py, DType { raw })?;
        Ok(cache.get_or_init(|| d).clone_ref(py))
    }

    /// Number of dimensions.
    #[getter]
    fn ndim(&self) -> PyResult<i32> {
        Ok(self.managed()?.dl_tensor.ndim)
    }

    /// Extents, in elements, as a tuple of ints (``()`` for 0-d).
    #[getter]
    fn shape(&self, py: Python<'_>) -> PyResult<Py<PyTuple>> {
        let cache = &self.caches().shape;
        if let Some(s) = cache.get() {
            if !self.released() {
                return Ok(s.clone_ref(py));
            }
        }
        let t = PyTuple::new(py, self.shape_vec()?)?.unbind();
        Ok(cache.get_or_init(|| t).clone_ref(py))
    }

    /// Strides in elements, as a tuple of ints; compact row-major when the producer passed NULL
    /// (DLPack < 1.2).
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.strides_vec()?)
    }

    /// The dimensions by stride, innermost (fastest-varying) first, as a tuple of indices
    /// (``dlpack_dltensor_dim_order``, peer case 59): dimensions of extent != 1 by ``|stride|``
    /// ascending (broadcast stride 0 first, negative strides by magnitude; equal ``|stride|``:
    /// higher index first), then the extent-1 dimensions, higher index first, whatever their
    /// strides. So ``dim_order[0]`` is the innermost dimension of extent != 1 when one exists;
    /// C order gives ``(ndim-1, ..., 0)``, F order ``(0, ..., ndim-1)``; ``()`` for 0-d.
    #[getter]
    fn dim_order<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let held = self.managed()?;
        let t = &held.dl_tensor;
        let n = readable_ndim(t)?;
        let mut out = vec![0i32; n];
        // SAFETY: the live tensor this object owns; `out` has room for `ndim` indices.
        check(unsafe { ffi::dlpack_dltensor_dim_order(t, out.as_mut_ptr(), n as i32) })?;
        PyTuple::new(py, out)
    }

    /// ``dl_tensor.byte_offset``, in bytes.
    #[getter]
    fn byte_offset(&self) -> PyResult<u64> {
        Ok(self.managed()?.dl_tensor.byte_offset)
    }

    /// ``dl_tensor.data`` as an int (0 for NULL). For host-accessible memory the first element
    /// is at ``data_ptr + byte_offset`` (bytes); for opaque handles never add them.
    #[getter]
    fn data_ptr(&self) -> PyResult<usize> {
        Ok(self.managed()?.dl_tensor.data as usize)
    }

    /// Whether host code may read this tensor's memory, answered per tensor by the C library
    /// (``dlpack_tensor_host_access``): ``"always"`` (CPU, pinned or managed memory, or oneAPI
    /// USM host/shared memory), ``"never"`` (device memory), or ``"unknown"`` (the device type's
    /// answer depends on the memory and no backend could tell: for kDLOneAPI, Level Zero is not
    /// loaded or no context was registered with ``dlpack_level_zero_context_set``). The device
    /// table answers first, with no driver call, for every device type that decides it.
    ///
    /// Raises ``RuntimeError`` when a driver call fails, ``ValueError`` after ``release()``.
    fn host_access(&self) -> PyResult<&'static str> {
        let held = self.managed()?;
        let mt = &*held as *const DLManagedTensorVersioned;
        let mut out: i32 = -1;
        // SAFETY: `mt` is the live tensor this object owns; NULL context = the registered one.
        check(unsafe { ffi::dlpack_tensor_host_access(mt, core::ptr::null_mut(), &mut out) })?;
        Ok(match out {
            1 => "always",  // DLPACK_HELPERS_HOST_ACCESS_ALWAYS
            0 => "never",   // DLPACK_HELPERS_HOST_ACCESS_NEVER
            _ => "unknown", // DLPACK_HELPERS_HOST_ACCESS_UNKNOWN (3); never DEPENDS
        })
    }

    /// Compact row-major: the C library's ``DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS`` answer
    /// (``dlpack_tensor_layout``): extent-1 dimensions may carry any stride, empty tensors are
    /// contiguous. Raises ``ValueError`` after ``release()``.
    fn is_contiguous(&self) -> PyResult<bool> {
        let held = self.managed()?;
        let mt = &*held as *const DLManagedTensorVersioned;
        let mut layout = ffi::dlpack_helpers_layout::default();
        // SAFETY: `mt` is the live tensor this object owns; `layout` is local storage.
        check(unsafe { ffi::dlpack_tensor_layout(mt, &mut layout) })?;
        Ok(layout.properties & ffi::LAYOUT_C_CONTIGUOUS != 0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        if self.released() {
            return Ok("<dlpack_helpers.Tensor (released)>".into());
        }
        let mt = self.managed()?;
        Ok(format!(
            "<dlpack_helpers.Tensor shape={} dtype={} device={} version={:?} flags={} source={}>",
            self.shape(py)?.bind(py).repr()?,
            self.dtype(py)?.get().__str__(),
            self.device(py)?.get().__str__(),
            (mt.version.major, mt.version.minor),
            mt.flags,
            self.source(),
        ))
    }

    /// The buffer protocol (PEP 3118, issue 34; peer case 60): ``memoryview(t)`` views a
    /// host-accessible tensor's memory in place, with its format, item size, shape and byte
    /// strides. Read-only when :attr:`readonly` is true (a stated READ_ONLY, or the assumed one
    /// of a legacy import), so a writable request is then ``BufferError``. Refused with
    /// ``BufferError``: memory host code cannot read (:meth:`host_access` not ``"always"``),
    /// element types without a PEP 3118 format code (bfloat16, float8 and other sub-byte or
    /// narrow floats, vectors with lanes > 1, opaque handles) and a layout the request forbids
    /// (strided memory toward a consumer that asks for no strides or a contiguous buffer).
    ///
    /// Lifetime: the buffer holds this Tensor and the owner its DLPack views hold, so
    /// :meth:`release` while a buffer is alive frees nothing; the producer's deleter runs once,
    /// after the last of the Tensor, its views and its buffers lets go.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut pyo3::ffi::Py_buffer,
        flags: core::ffi::c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("the Py_buffer to fill is NULL"));
        }
        // SAFETY: the caller's Py_buffer: `obj` is NULL unless a buffer was made (PEP 3118
        // asks an exporter that fails to leave it NULL).
        unsafe { (*view).obj = null_mut() };
        let t = slf.get();
        let held = t.managed()?;
        let fill = buffer_fill(t, &held, flags)?;
        // SAFETY: `view` is the caller's Py_buffer (PEP 3118); filled only on success. `obj` is
        // a new reference to this Tensor; `internal` owns the shape/strides arrays and a
        // reference to the view owner, both released by `__releasebuffer__`.
        unsafe {
            let v = &mut *view;
            v.buf = fill.buf;
            v.len = fill.len;
            v.readonly = fill.readonly as core::ffi::c_int;
            v.itemsize = fill.itemsize;
            v.ndim = fill.internal.shape.len() as core::ffi::c_int;
            v.format = if flags & pyo3::ffi::PyBUF_FORMAT != 0 {
                fill.format.as_ptr() as *mut core::ffi::c_char
            } else {
                null_mut()
            };
            v.shape = if flags & pyo3::ffi::PyBUF_ND == pyo3::ffi::PyBUF_ND {
                fill.internal.shape.as_ptr() as *mut pyo3::ffi::Py_ssize_t
            } else {
                null_mut()
            };
            v.strides = if flags & pyo3::ffi::PyBUF_STRIDES == pyo3::ffi::PyBUF_STRIDES {
                fill.internal.strides.as_ptr() as *mut pyo3::ffi::Py_ssize_t
            } else {
                null_mut()
            };
            v.suboffsets = null_mut();
            v.internal = Box::into_raw(fill.internal).cast();
            v.obj = slf.clone().into_ptr();
        }
        Ok(())
    }

    /// Ends a buffer made by ``__getbuffer__``: drops its reference to the view owner (the
    /// producer's deleter runs here when nothing else holds the memory). CPython calls it once
    /// per buffer, then drops ``obj``.
    unsafe fn __releasebuffer__(&self, view: *mut pyo3::ffi::Py_buffer) {
        if view.is_null() {
            return;
        }
        // SAFETY: a Py_buffer this type filled: `internal` is the Box made there (taken once).
        unsafe {
            let internal = core::mem::replace(&mut (*view).internal, null_mut());
            if !internal.is_null() {
                let b = Box::from_raw(internal.cast::<BufferInternal>());
                pyo3::ffi::Py_DecRef(b.owner);
            }
        }
    }

    /// ``(device_type, device_id)`` as a tuple of ints (DLPack protocol).
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        let d = self.managed()?.dl_tensor.device;
        Ok((d.device_type.0, d.device_id))
    }

    /// This library's versions: ``{"dlpack_version": (1, 3), "dlpack_abi_major": 1,
    /// "version": "0.1.0"}`` (C ``dlpack_get_info``).
    #[staticmethod]
    fn __dlpack_info__(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        crate::dlpack_info(py)
    }

    /// Export this tensor as a DLPack capsule, following the library's producer rules
    /// (``dlpack_export_request_resolve``: array API ``__dlpack__``, peer cases 23/25/28/47).
    ///
    /// - ``max_version`` (a ``(major, minor)`` tuple of ints) picks the struct: a versioned
    ///   capsule (``"dltensor_versioned"``, 1.3) for ``(1, x)`` or newer, the legacy
    ///   ``"dltensor"`` for none or 0.x. The legacy struct cannot say read-only, so toward it
    ///   (issue 25): a tensor whose read-only bit was *assumed* (``readonly_origin ==
    ///   "assumed"``: it came through the legacy struct) is exported in place, stating what its
    ///   producer stated; a tensor whose producer *stated* read-only is never exported in place:
    ///   ``copy=None`` serves a compact copy of host-accessible memory (the consumer's buffer is
    ///   its own, so no write can reach the producer's), ``copy=False`` is ``BufferError``.
    ///   NumPy refuses both (``BufferError``); this package copies because the array API allows
    ///   a producer to copy under ``copy=None`` and the consumers that read only the legacy
    ///   struct (JAX, TensorFlow, Warp, ONNX Runtime) have no other way to receive the data.
    /// - ``dl_device``: the tensor's own device, or ``(kDLCPU, 0)`` (served in place for
    ///   host-accessible memory); any other device: ``BufferError``.
    /// - ``copy``: None copies only when needed, True always, False never (``BufferError``
    ///   when a copy is needed). This package copies host-accessible memory to the CPU only
    ///   (compact row-major, ``DLPACK_FLAG_BITMASK_IS_COPIED`` set on a versioned export).
    /// - ``stream``: an int, validated for the device (``ValueError`` for a value the array API
    ///   does not allow there, for example any integer for a CPU tensor); for a ``kDLOneAPI``
    ///   tensor also a queue object exposing ``addressof_ref()`` (dpctl's ``SyclQueue``, decoded
    ///   by ``dlpack_python_stream_decode``); any other non-integer is ``TypeError``. This
    ///   package queues no device work; a tensor imported through a producer's C exchange API
    ///   is ordered on the producer's stream recorded at the import, and the consumer's stream
    ///   is made to wait for it (``dlpack_stream_wait``: one event record and one stream wait,
    ///   no host block; ``RuntimeError`` when the device's runtime is unavailable). Tensors
    ///   imported through ``__dlpack__`` are ordered on the stream the import asked for.
    ///
    /// ``TypeError``/``ValueError`` for a malformed argument (the message names it); in-place
    /// exports reference the private owner, never this Tensor.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    pub fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<&Bound<'py, PyAny>>,
        dl_device: Option<&Bound<'py, PyAny>>,
        copy: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut req = ffi::dlpack_helpers_export_request {
            has_max_version: false,
            max_version: DLPackVersion { major: 0, minor: 0 },
            has_stream: false,
            stream: 0,
            has_dl_device: false,
            dl_device: DLDevice::default(),
            copy: args::copy(copy)?,
        };
        if let Some(v) = args::given(max_version) {
            req.has_max_version = true;
            req.max_version = args::version(v, "max_version")?;
        }
        let mut queue: Option<ffi::dlpack_helpers_stream> = None;
        if let Some(s) = args::given(stream) {
            if args::is_integer_like(s)? {
                req.has_stream = true;
                req.stream = args::stream(s)?;
            } else {
                // A queue object (oneAPI: dpctl's SyclQueue, `addressof_ref()`), decoded by the
                // library, which raises TypeError for anything the tensor's device does not take
                // (peer case 51).
                let device = self.managed()?.dl_tensor.device;
                let mut q = ffi::dlpack_helpers_stream {
                    kind: 0,
                    handle: null_mut(),
                };
                // SAFETY: borrowed object, valid out pointer, GIL held.
                check(unsafe {
                    ffi::dlpack_python_stream_decode(s.as_ptr().cast(), device, 0, &mut q)
                })?;
                queue = Some(q);
            }
        }
        if let Some(d) = args::given(dl_device) {
            req.has_dl_device = true;
            req.dl_device = args::device(d, "dl_device")?;
        }
        self.export(py, &req, queue.as_ref().filter(|q| !q.handle.is_null()))
    }

    /// The type's C exchange API (DLPack 1.3): a capsule named ``"dlpack_exchange_api"``
    /// holding a ``DLPackExchangeAPI`` whose functions convert ``Tensor`` objects.
    #[classattr]
    fn __dlpack_c_exchange_api__(py: Python<'_>) -> PyResult<Py<PyAny>> {
        crate::exchange::capsule(py)
    }
}

impl Tensor {
    /// The stream the data is ordered on, as recorded at the import.
    pub fn ready(&self) -> ffi::dlpack_helpers_stream {
        self.ready
    }

    /// `__dlpack__(max_version=v)` with no other argument (what `__dlpack__` does for exactly
    /// those arguments; the vectorcall entry's fast path, issue 26).
    #[inline]
    pub fn export_max_version<'py>(
        &self,
        py: Python<'py>,
        v: DLPackVersion,
    ) -> PyResult<Bound<'py, PyAny>> {
        // The plan memo's answer for this very request on this device, when it is an in-place
        // versioned view: straight to the view (issue 26; what `export` and `export_with` do
        // for it, without building the request and comparing it field by field).
        if let Some(mt) = self.in_place_ready() {
            if let Some((d, r, p)) = &plan_memo() {
                if *d == mt.dl_tensor.device
                    && r.has_max_version
                    && r.max_version == v
                    && r.copy == ffi::COPY_IF_NEEDED
                    && !r.has_stream
                    && !r.has_dl_device
                    && !p.copy
                    && p.kind == ffi::EXPORT_VERSIONED
                    && p.device == *d
                {
                    return self.view_validated(py, &mt);
                }
            }
        }
        self.export(py, &versioned_request(v), None)
    }

    /// A versioned in-place (or copied, as the plan says) export with max_version 1.3.
    pub fn export_versioned<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let req = versioned_request(DLPackVersion { major: 1, minor: 3 });
        self.export(py, &req, None)
    }

    fn export<'py>(
        &self,
        py: Python<'py>,
        req: &ffi::dlpack_helpers_export_request,
        queue: Option<&ffi::dlpack_helpers_stream>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mt = self.managed()?;
        let src = mt.dl_tensor.device;
        let memo = queue.is_none() && !req.has_stream && !req.has_dl_device;
        if memo {
            if let Some((d, r, p)) = &plan_memo() {
                if *d == src && same_request(r, req) {
                    return self.export_with(py, &mt, req, *p);
                }
            }
        }
        let mut plan = core::mem::MaybeUninit::<ffi::dlpack_helpers_export_plan>::uninit();
        let version = DLPackVersion { major: 1, minor: 3 };
        // SAFETY: valid request, stream and out pointers.
        check(unsafe {
            match queue {
                None => ffi::dlpack_export_request_resolve(
                    req,
                    src,
                    version,
                    ffi::PRODUCER_EXPORTS_LEGACY,
                    plan.as_mut_ptr(),
                ),
                Some(q) => ffi::dlpack_export_request_resolve_with_stream(
                    req,
                    q,
                    src,
                    version,
                    ffi::PRODUCER_EXPORTS_LEGACY,
                    plan.as_mut_ptr(),
                ),
            }
        })?;
        // SAFETY: written on OK.
        let plan = unsafe { plan.assume_init() };
        if memo {
            if let Ok(mut m) = PLAN_MEMO.try_lock() {
                m.0 = Some((src, *req, plan));
            }
        }
        self.export_with(py, &mt, req, plan)
    }

    /// The export `plan` says (a copy, or a view of this tensor), after the recorded producer
    /// stream is waited for.
    fn export_with<'py>(
        &self,
        py: Python<'py>,
        mt: &DLManagedTensorVersioned,
        req: &ffi::dlpack_helpers_export_request,
        plan: ffi::dlpack_helpers_export_plan,
    ) -> PyResult<Bound<'py, PyAny>> {
        let src = mt.dl_tensor.device;
        // The common export (issue 26): an in-place versioned view, on the tensor's own device.
        if !plan.copy && plan.kind == ffi::EXPORT_VERSIONED && plan.device == src {
            if let Some(mt) = self.in_place_ready() {
                return self.view_validated(py, &mt);
            }
        }
        // Peer case 53: data imported through a producer's no-sync export is ordered on the
        // producer's stream recorded then; the consumer's stream waits for it (no host block),
        // and a host copy waits on the host first.
        if self.ready.kind == ffi::STREAM_HANDLE {
            if plan.copy {
                // SAFETY: the recorded stream of the tensor's device; plain values.
                check(unsafe { ffi::dlpack_stream_synchronize(src, self.ready.handle) })?;
            } else if plan.sync == ffi::SYNC_STREAM_WAIT {
                // SAFETY: the recorded stream and the consumer's decoded stream, of `src`.
                check(unsafe { ffi::dlpack_stream_wait(src, self.ready.handle, &plan.stream) })?;
            }
        }
        let mut out: *mut c_void = null_mut();
        if plan.copy {
            return self.export_copy(py, mt, plan);
        } else {
            // A view shares our memory: never IS_COPIED. It references the owner, not this Tensor.
            let mut flags = mt.flags & !FLAG_IS_COPIED;
            if plan.kind == ffi::EXPORT_LEGACY && flags & FLAG_READ_ONLY != 0 {
                // Issue 25: the legacy struct cannot say read-only. An assumed READ_ONLY (the
                // tensor came through the legacy struct) goes back as it came; a stated one is
                // never lost: a copy under copy=None, BufferError under copy=False.
                if self.read_only_origin()? == ffi::READ_ONLY_ORIGIN_LEGACY {
                    flags &= !FLAG_READ_ONLY;
                } else if req.copy == ffi::COPY_NEVER {
                    return Err(PyBufferError::new_err(
                        "the tensor's producer stated read-only, max_version asks for the legacy \
                         struct (which cannot signal read-only) and copy=False forbids a copy; \
                         pass max_version=(1, 0) or newer, or copy=None",
                    ));
                } else {
                    if self.ready.kind == ffi::STREAM_HANDLE {
                        // The copy reads on the host: wait for the recorded producer stream first
                        // (a stream wait above orders only the consumer's stream).
                        // SAFETY: the recorded stream of the tensor's device; plain values.
                        check(unsafe { ffi::dlpack_stream_synchronize(src, self.ready.handle) })?;
                    }
                    return self.export_copy(py, mt, plan);
                }
            }
            let mut tensor = mt.dl_tensor;
            tensor.device = plan.device; // host-accessible memory served to the CPU reports (1, 0)
                                         // Re-exporting what was imported: a device type DLPack 1.3 does not assign (a
                                         // producer's kDLTPU, say) passes through, as in every consumer path (issue 22); the
                                         // request bit is not stored.
            let flags = flags | ffi::CREATE_ALLOW_UNASSIGNED_DEVICE;
            let owner = self.owner(mt)?;
            // SAFETY: `tensor` borrows our shape/strides (copied by the call); owner is alive.
            check(unsafe {
                if tensor.device == mt.dl_tensor.device && self.validate_once(mt)? {
                    // `tensor` is `mt`'s DLTensor, validated: only its flags differ, and the
                    // export checks those on every call (issue 26).
                    ffi::dlpack_capsule_new_view_validated(
                        &tensor,
                        flags,
                        owner.cast(),
                        plan.kind,
                        &mut out,
                    )
                } else {
                    ffi::dlpack_capsule_new_view(&tensor, flags, owner.cast(), plan.kind, &mut out)
                }
            })?;
        }
        // SAFETY: a new reference on OK.
        Ok(unsafe { Bound::from_owned_ptr(py, out.cast()) })
    }

    /// The managed tensor when an in-place view of it needs nothing but the copy: validated,
    /// its owner capsule made, and no recorded producer stream to wait for (issue 26).
    #[inline(always)]
    fn in_place_ready(&self) -> Option<Held<'_>> {
        if self.ready.kind == ffi::STREAM_HANDLE
            || !self.validated.load(Acquire)
            || self.view_owner_loaded().is_null()
        {
            return None;
        }
        self.managed().ok()
    }

    /// An in-place versioned view of `mt` (from `in_place_ready`): `dlpack_capsule_new_view_validated`
    /// with the tensor's flags (never IS_COPIED on a view), exactly what the general export path
    /// makes for it.
    #[inline(always)]
    fn view_validated<'py>(
        &self,
        py: Python<'py>,
        mt: &DLManagedTensorVersioned,
    ) -> PyResult<Bound<'py, PyAny>> {
        let owner = self.view_owner_loaded();
        let flags = (mt.flags & !FLAG_IS_COPIED) | ffi::CREATE_ALLOW_UNASSIGNED_DEVICE;
        let mut out: *mut c_void = null_mut();
        // SAFETY: `mt`'s DLTensor, validated and unchanged; the owner is alive.
        check(unsafe {
            ffi::dlpack_capsule_new_view_validated(
                &mt.dl_tensor,
                flags,
                owner.cast(),
                ffi::EXPORT_VERSIONED,
                &mut out,
            )
        })?;
        // SAFETY: a new reference on OK.
        Ok(unsafe { Bound::from_owned_ptr(py, out.cast()) })
    }

    /// A compact host copy exported as the plan says (`plan.flags`: IS_COPIED on a versioned
    /// export; a copy is the consumer's own, so never READ_ONLY).
    fn export_copy<'py>(
        &self,
        py: Python<'py>,
        mt: &DLManagedTensorVersioned,
        plan: ffi::dlpack_helpers_export_plan,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut out: *mut c_void = null_mut();
        let (tensor, buffer, shape) = host_copy(py, &mt.dl_tensor, plan.device)?;
        let mut t = tensor;
        t.shape = shape.as_ptr() as *mut i64;
        let flags = if plan.kind == ffi::EXPORT_LEGACY {
            0
        } else {
            plan.flags | FLAG_IS_COPIED
        };
        // SAFETY: `t` points into `buffer` (the owner); shape copied by the call.
        check(unsafe {
            ffi::dlpack_capsule_new_view(&t, flags, buffer.as_ptr().cast(), plan.kind, &mut out)
        })?;
        // SAFETY: a new reference on OK.
        Ok(unsafe { Bound::from_owned_ptr(py, out.cast()) })
    }
}

/// The last plan `dlpack_export_request_resolve` gave for a request without `stream` and
/// `dl_device`, with that request and the source device: then the plan depends on nothing
/// else (the producer's version and flags are this module's constants), so the same request
/// for a tensor on the same device reuses it (issue 26). Process-wide rather than per `Tensor`,
/// so that a `Tensor` stays small (it is made on every import). Behind a mutex that is only
/// ever tried (`try_lock`), never waited for: with the GIL off (issue 36) a thread that finds it
/// taken resolves the request itself, so exports on several threads never block one another and
/// never read a half-written memo.
type Memo = Option<(
    DLDevice,
    ffi::dlpack_helpers_export_request,
    ffi::dlpack_helpers_export_plan,
)>;
struct MemoCell(Memo);
// SAFETY: plain values; the plan's stream handle is an opaque number here (a request without
// `stream` resolves to no stream), never dereferenced through the memo.
unsafe impl Send for MemoCell {}
static PLAN_MEMO: std::sync::Mutex<MemoCell> = std::sync::Mutex::new(MemoCell(None));

/// A copy of the plan memo, or None when it is empty or another thread holds it right now.
#[inline]
fn plan_memo() -> Memo {
    PLAN_MEMO.try_lock().ok().and_then(|m| m.0)
}

/// Whether two requests without `stream` and `dl_device` are the same (the fields a resolution
/// reads then).
fn same_request(
    a: &ffi::dlpack_helpers_export_request,
    b: &ffi::dlpack_helpers_export_request,
) -> bool {
    a.has_max_version == b.has_max_version
        && (!a.has_max_version || a.max_version == b.max_version)
        && a.copy == b.copy
        && a.has_stream == b.has_stream
        && a.has_dl_device == b.has_dl_device
}

/// A compact row-major host copy of `t` for a plan that copies to `device`: the tensor (shape
/// to be set by the caller), the bytearray that owns the bytes, and the shape.
fn host_copy<'py>(
    py: Python<'py>,
    t: &DLTensor,
    device: DLDevice,
) -> PyResult<(DLTensor, Bound<'py, PyByteArray>, Vec<i64>)> {
    let src = (t.device.device_type.0, t.device.device_id);
    let dst = (device.device_type.0, device.device_id);
    // SAFETY: plain query.
    let host_accessible = unsafe { ffi::dlpack_is_cpu_accessible(t.device) };
    if device.device_type != DLDeviceType(1) || !host_accessible {
        // Name the remedy that works (issue 34): host-accessible memory (pinned `cuda_host`,
        // managed, ...) copies fine into CPU memory, just not into its own device type.
        return Err(PyBufferError::new_err(if host_accessible {
            format!(
                "a copy from device {src:?} to {dst:?} is needed, but dlpack_helpers.Tensor \
                 copies to the CPU only (it cannot allocate memory of device type {}); this \
                 tensor's memory is host-accessible, so pass dl_device=(1, 0) with copy=True \
                 for a compact CPU copy, or copy=None (or False) without dl_device for a view",
                dst.0
            )
        } else {
            format!(
                "a copy from device {src:?} to {dst:?} is needed, but dlpack_helpers.Tensor \
                 copies host-accessible memory to the CPU only and device {src:?} memory is not \
                 host-accessible: pass copy=None (or False) without dl_device to export a view, \
                 and copy it with the producer's framework"
            )
        }));
    }
    let bits = t.dtype.bits as usize * t.dtype.lanes as usize;
    if !bits.is_multiple_of(8) {
        return Err(PyBufferError::new_err(format!(
            "a copy is needed, but dlpack_helpers.Tensor cannot copy sub-byte elements ({} bits x {} lanes)",
            t.dtype.bits, t.dtype.lanes
        )));
    }
    let size = bits / 8;
    let n = readable_ndim(t)?;
    let shape: Vec<i64> = if n == 0 {
        Vec::new()
    } else {
        // SAFETY: DLPack: `shape` holds `ndim` elements.
        unsafe { core::slice::from_raw_parts(t.shape, n) }.to_vec()
    };
    let mut strides = vec![0i64; n];
    if n > 0 && !t.strides.is_null() {
        // SAFETY: DLPack: `strides` holds `ndim` elements.
        strides.copy_from_slice(unsafe { core::slice::from_raw_parts(t.strides, n) });
    } else if n > 0 {
        // SAFETY: shape has n elements, strides room for n.
        check(unsafe {
            ffi::dlpack_compact_strides(t.ndim, shape.as_ptr(), false, strides.as_mut_ptr())
        })?;
    }
    let count: usize = shape.iter().map(|&e| e.max(0) as usize).product();
    let nbytes = count
        .checked_mul(size)
        .ok_or_else(|| PyBufferError::new_err("the tensor is too large to copy"))?;
    let base = (t.data as usize).wrapping_add(t.byte_offset as usize) as *const u8;
    if count > 0 {
        // The tensor was validated at its import (its byte range fits the address space), but
        // DLPack's rules cannot say that memory is mapped: a `byte_offset` of 2**62 passes them
        // and was read here directly (a segfault; issue 34). The first and last bytes the copy
        // reads are asked of the kernel first.
        let (mut lo, mut hi) = (0i128, 0i128);
        for (&e, &s) in shape.iter().zip(&strides) {
            let reach = (e as i128 - 1) * s as i128 * size as i128;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        let at = |off: i128| (base as usize as i128 + off) as usize as *const u8;
        if !readable(at(lo)) || !readable(at(hi + size as i128 - 1)) {
            return Err(PyBufferError::new_err(format!(
                "a copy is needed, but the tensor's bytes at tensor.data {:#x} + tensor.byte_offset \
                 {} are not readable memory of this process (the producer's tensor describes \
                 memory it does not have)",
                t.data as usize, t.byte_offset
            )));
        }
    }
    let buf = PyByteArray::new_with(py, nbytes.max(1), |_| Ok(()))?;
    // SAFETY: the bytearray is fresh and not resized while we write.
    let dst_ptr = buf.data();
    if count > 0 {
        // Row-major odometer over all dimensions, one element at a time.
        let mut index = vec![0i64; n];
        for k in 0..count {
            let off: i64 = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
            // SAFETY: in bounds of the source tensor (host-accessible, the producer's layout)
            // and of the fresh destination buffer.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    base.offset(off as isize * size as isize),
                    dst_ptr.add(k * size),
                    size,
                )
            };
            for d in (0..n).rev() {
                index[d] += 1;
                if index[d] < shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
    }
    let out = DLTensor {
        data: dst_ptr.cast(),
        device,
        ndim: t.ndim,
        dtype: t.dtype,
        shape: null_mut(),
        strides: null_mut(), // compact row-major, filled in by dlpack_capsule_new_view
        byte_offset: 0,
    };
    Ok((out, buf, shape))
}

extern "C" {
    #[cfg(target_os = "linux")]
    fn pipe2(fds: *mut core::ffi::c_int, flags: core::ffi::c_int) -> core::ffi::c_int;
    #[cfg(not(target_os = "linux"))]
    fn pipe(fds: *mut core::ffi::c_int) -> core::ffi::c_int;
    fn write(fd: core::ffi::c_int, buf: *const c_void, n: usize) -> isize;
    fn close(fd: core::ffi::c_int) -> core::ffi::c_int;
}

/// Whether this process can read the byte at `p`, asked of the kernel: `write` of that byte into
/// a fresh pipe answers `EFAULT` for memory that is not mapped readable, where a load would
/// raise `SIGSEGV` (the C library's `host::probe` does the same for bare table addresses). A
/// pipe that cannot be made answers "readable": the check then adds nothing, as before it.
fn readable(p: *const u8) -> bool {
    let mut fds = [-1 as core::ffi::c_int; 2];
    // SAFETY: a writable array of two ints. Close-on-exec (Linux: O_CLOEXEC), so a concurrent
    // fork + exec never inherits them.
    #[cfg(target_os = "linux")]
    let made = unsafe { pipe2(fds.as_mut_ptr(), 0o2000000) };
    // SAFETY: as above.
    #[cfg(not(target_os = "linux"))]
    let made = unsafe { pipe(fds.as_mut_ptr()) };
    if made != 0 {
        return true;
    }
    // SAFETY: one byte into an empty pipe never blocks; the kernel reads `p`, not us.
    let n = unsafe { write(fds[1], p.cast(), 1) };
    // SAFETY: the two descriptors just made, closed once.
    unsafe {
        close(fds[0]);
        close(fds[1]);
    }
    n == 1
}
