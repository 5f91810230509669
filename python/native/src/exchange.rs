//! The C exchange API of `Tensor` (DLPack 1.3 `__dlpack_c_exchange_api__`, a capsule named
//! `"dlpack_exchange_api"` holding a static `DLPackExchangeAPI`), so C-level consumers take
//! tensors from ours without calling `__dlpack__`. Every function is called with the GIL held
//! (DLPack 1.3); failures set a Python exception (or call `SetError`) and return -1.

use crate::abi::{
    DLDeviceType, DLManagedTensorVersioned, DLPackExchangeAPI, DLPackExchangeAPIHeader,
    DLPackSetErrorFn, DLPackVersion, DLTensor,
};
use crate::errors::check;
use crate::ffi;
use crate::tensor::Tensor;
use core::ffi::{c_int, c_void};
use core::ptr::null_mut;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// `DLPACK_FLAG_BITMASK_IS_COPIED`: never set on a view.
const FLAG_IS_COPIED: u64 = 2;

struct Table(DLPackExchangeAPI);
// SAFETY: immutable after construction; the only pointer (`prev_api`) is NULL.
unsafe impl Sync for Table {}

static TABLE: Table = Table(DLPackExchangeAPI {
    header: DLPackExchangeAPIHeader {
        version: DLPackVersion { major: 1, minor: 3 },
        prev_api: null_mut(),
    },
    managed_tensor_allocator: Some(allocator),
    managed_tensor_from_py_object_no_sync: Some(from_py_object),
    managed_tensor_to_py_object_no_sync: Some(to_py_object),
    dltensor_from_py_object_no_sync: Some(dltensor_from_py_object),
    current_work_stream: Some(current_work_stream),
});

/// The capsule value of `Tensor.__dlpack_c_exchange_api__`.
pub fn capsule(py: Python<'_>) -> PyResult<Py<PyAny>> {
    // SAFETY: a static table and a static name; no destructor (the table lives forever).
    let p = unsafe {
        pyo3::ffi::PyCapsule_New(
            (&TABLE.0 as *const DLPackExchangeAPI).cast_mut().cast(),
            c"dlpack_exchange_api".as_ptr(),
            None,
        )
    };
    // SAFETY: a new reference or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, p) }.map(|b| b.unbind())
}

/// The body of each table function: 0, or -1 with the Python exception set. Nothing unwinds
/// into the C caller: a Rust panic becomes the `PanicException` PyO3 raises for one (a panic
/// unwinding out of an `extern "C"` function would abort the process).
fn guarded(f: impl FnOnce(Python<'_>) -> PyResult<()>) -> c_int {
    Python::attach(|py| {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(py)))
            .unwrap_or_else(|p| Err(panic_error(p.as_ref())));
        match r {
            Ok(()) => 0,
            Err(e) => {
                e.restore(py);
                -1
            }
        }
    })
}

/// A caught panic as the Python exception the table functions raise.
fn panic_error(payload: &(dyn core::any::Any + Send)) -> PyErr {
    pyo3::panic::PanicException::new_err(format!(
        "a Rust panic in dlpack_helpers.Tensor's exchange API: {}",
        panic_message(payload)
    ))
}

/// A caught panic's message (`panic!` with a literal or a formatted string), or "(no message)".
fn panic_message(payload: &(dyn core::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

unsafe extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const core::ffi::c_char) -> *mut c_void;
}

/// `PyThreadState_GetUnchecked` (3.13 on) or `_PyThreadState_UncheckedGet` (its name before),
/// looked up when the module is initialised (`remember_type`); NULL when neither is exported
/// (then the table functions take the GIL state as before).
static CURRENT_TSTATE: core::sync::atomic::AtomicPtr<c_void> =
    core::sync::atomic::AtomicPtr::new(null_mut());

fn find_current_tstate() {
    for name in [
        c"PyThreadState_GetUnchecked",
        c"_PyThreadState_UncheckedGet",
    ] {
        // SAFETY: dlsym with RTLD_DEFAULT (NULL on glibc) and a NUL-terminated name.
        let p = unsafe { dlsym(null_mut(), name.as_ptr()) };
        if !p.is_null() {
            CURRENT_TSTATE.store(p, core::sync::atomic::Ordering::Release);
            return;
        }
    }
}

/// Whether the calling thread holds the GIL with its own `PyGILState` thread state current:
/// the case where `PyGILState_Ensure` (what `Python::attach` does from a C caller) would change
/// nothing. `false` in every other case (no thread state, the GIL released or held by another
/// thread, another interpreter's state current, the query missing), never a wrong `true`,
/// unlike `PyGILState_Check`, which answers 1 once a subinterpreter exists. About 30
/// instructions; valid with or without the GIL.
fn holds_own_gil_state() -> bool {
    let f = CURRENT_TSTATE.load(core::sync::atomic::Ordering::Acquire);
    if f.is_null() {
        return false;
    }
    // SAFETY: the address of CPython's `PyThreadState *(void)` query found above.
    let current: unsafe extern "C" fn() -> *mut c_void = unsafe { core::mem::transmute(f) };
    // SAFETY: plain queries of the calling thread's state, valid without the GIL.
    unsafe {
        let own = pyo3::ffi::PyGILState_GetThisThreadState();
        !own.is_null() && own.cast::<c_void>() == current()
    }
}

/// `guarded` for `managed_tensor_from_py_object_no_sync`, the import's hot path (issue 26): its
/// callers hold the GIL (DLPack 1.3: it inspects a `PyObject *` and fails with a Python
/// exception), and then the GIL state is not taken again: `Python::attach` from a C caller
/// (outside any PyO3 frame) costs a `PyGILState_Ensure`/`Release` pair and PyO3's own
/// bookkeeping, about 100 instructions. A caller without the GIL (ctypes calls table
/// functions with the GIL released) still gets it taken, as before. With the GIL held, the
/// success path drops no `Py<T>`; an error is raised under `Python::attach`
/// (`errors::raise_attached`), so that its objects are not left in PyO3's deferred pool.
fn guarded_attached(f: impl FnOnce(Python<'_>) -> PyResult<()>) -> c_int {
    if !holds_own_gil_state() {
        return guarded(f);
    }
    let run = || {
        // SAFETY: this thread holds the GIL (checked above).
        let py = unsafe { Python::assume_attached() };
        match f(py) {
            Ok(()) => 0,
            Err(e) => {
                crate::errors::raise_attached(e);
                -1
            }
        }
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(r) => r,
        Err(p) => {
            crate::errors::raise_attached(panic_error(p.as_ref()));
            -1
        }
    }
}

/// The `Tensor` type object, stored when the module is initialised (`remember_type`): an object
/// of exactly this type is a `Tensor` at the cost of one load and one comparison (issue 26;
/// PyO3's checked cast reaches the type through its lazy type object, about 25 instructions).
static TENSOR_TYPE: core::sync::atomic::AtomicPtr<pyo3::ffi::PyTypeObject> =
    core::sync::atomic::AtomicPtr::new(null_mut());

/// Store `Tensor`'s type object for `ours` and find the thread-state query of
/// `holds_own_gil_state` (module initialisation; the type lives as long as the
/// module, which is never unloaded).
pub fn remember_type(py: Python<'_>) {
    find_current_tstate();
    TENSOR_TYPE.store(
        py.get_type::<Tensor>().as_type_ptr(),
        core::sync::atomic::Ordering::Release,
    );
}

/// A NULL pointer argument is `ValueError` (a crash before: pyo3 aborts on a NULL object, and
/// a NULL out pointer was written).
fn not_null<T>(p: *mut T, what: &str) -> PyResult<()> {
    if p.is_null() {
        return Err(PyValueError::new_err(format!(
            "{what} is NULL (dlpack_helpers.Tensor's exchange API)"
        )));
    }
    Ok(())
}

#[inline(always)]
fn ours<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, Tensor>> {
    // SAFETY: a live object (GIL held by the caller).
    let ty = unsafe { pyo3::ffi::Py_TYPE(obj.as_ptr()) };
    if ty == TENSOR_TYPE.load(core::sync::atomic::Ordering::Acquire) {
        // SAFETY: exactly the `Tensor` type (the type object is never NULL for a live object,
        // so a NULL static never matches).
        return Ok(unsafe { obj.cast_unchecked::<Tensor>() });
    }
    ours_checked(obj)
}

/// `obj` as a `Tensor` when it is one: `Tensor` cannot be subclassed, so its exact type decides
/// (one load and one comparison; PyO3's checked cast walks the MRO of every other type, about
/// 30 instructions for a `torch.Tensor`, issue 26). Before module initialisation stored the type,
/// PyO3's checked cast answers.
#[inline(always)]
pub fn as_tensor<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, Tensor>> {
    let want = TENSOR_TYPE.load(core::sync::atomic::Ordering::Acquire);
    if want.is_null() {
        return obj.cast::<Tensor>().ok();
    }
    // SAFETY: a live object (GIL held by the caller).
    if unsafe { pyo3::ffi::Py_TYPE(obj.as_ptr()) } == want {
        // SAFETY: exactly the `Tensor` type.
        Some(unsafe { obj.cast_unchecked::<Tensor>() })
    } else {
        None
    }
}

#[inline(never)]
fn ours_checked<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, Tensor>> {
    obj.cast::<Tensor>().map_err(|_| {
        PyTypeError::new_err(format!(
            "dlpack_helpers' exchange API converts dlpack_helpers.Tensor objects only, not {}",
            crate::args::describe(obj)
        ))
    })
}

/// Make the stream `current_work_stream` names (CUDA's legacy default stream) wait for a
/// producer stream recorded at the Tensor's import, so that a no-sync consumer launching there
/// sees the data ready (peer case 53). Nothing for any other Tensor.
fn order_on_default(t: &Tensor) -> PyResult<()> {
    let ready = t.ready();
    if ready.kind != ffi::STREAM_HANDLE {
        return Ok(());
    }
    let device = t.managed()?.dl_tensor.device;
    let mut legacy = ffi::dlpack_helpers_stream {
        kind: 0,
        handle: null_mut(),
    };
    // SAFETY: plain values and a live out pointer.
    let st = unsafe { ffi::dlpack_stream_decode(device, false, 0, 0, &mut legacy) };
    if st != ffi::OK || legacy.kind != ffi::STREAM_LEGACY_DEFAULT {
        return Ok(()); // no nameable stream: current_work_stream refuses this device
    }
    // SAFETY: the recorded stream of the tensor's device and the decoded legacy stream.
    check(unsafe { ffi::dlpack_stream_wait(device, ready.handle, &legacy) })
}

/// `managed_tensor_from_py_object_no_sync`: a new view of the Tensor (the caller owns it).
unsafe extern "C" fn from_py_object(
    obj: *mut c_void,
    out: *mut *mut DLManagedTensorVersioned,
) -> c_int {
    guarded_attached(|py| {
        not_null(obj, "py_object")?;
        not_null(out, "out")?;
        // SAFETY: DLPack 1.3: a borrowed PyObject* (checked non-NULL), GIL held.
        let obj = unsafe { Bound::from_borrowed_ptr(py, obj.cast()) };
        let t = ours(&obj)?.get();
        // Peer case 53: a recorded producer stream is waited for on the default stream first.
        order_on_default(t)?;
        // `__dlpack__(max_version=(1, 3))`'s in-place view (DLPack: a view, never IS_COPIED)
        // without a capsule: the Tensor is validated once, each view is a copy of its DLTensor.
        let mt = t.managed()?;
        t.validate_once(&mt)?;
        let owner = t.owner(&mt)?;
        let mut view = null_mut();
        // SAFETY: `mt` validated and owned by this Tensor; owner alive; the caller's view.
        check(unsafe {
            ffi::dlpack_tensor_new_view_validated(
                &mt.dl_tensor,
                // Re-exporting what was imported: an unassigned device type passes through (the
                // opt-in bit is not stored), as in `Tensor.__dlpack__`.
                (mt.flags & !FLAG_IS_COPIED) | ffi::CREATE_ALLOW_UNASSIGNED_DEVICE,
                owner.cast(),
                &mut view,
            )
        })?;
        // SAFETY: the caller's out pointer.
        unsafe { *out = view };
        Ok(())
    })
}

/// `managed_tensor_to_py_object_no_sync`: wrap (steal) a managed tensor as a new Tensor. The
/// tensor is accepted by the rule of every other import (the C library's, through a versioned
/// capsule and `dlpack_capsule_import`): its major version must be 1 and its flags only bits its
/// declared version defines (a 1.0 tensor's bit 2 would otherwise be re-exported as 1.3's
/// "padded sub-byte"). On failure the tensor is released once and the exception is set.
unsafe extern "C" fn to_py_object(
    tensor: *mut DLManagedTensorVersioned,
    out: *mut *mut c_void,
) -> c_int {
    guarded(|py| {
        if out.is_null() {
            if !tensor.is_null() {
                // SAFETY: handed over by the caller; released once, as on every failure.
                unsafe { ffi::dlpack_tensor_delete(tensor) };
            }
            return Err(PyValueError::new_err(
                "out_py_object is NULL (the tensor was released)",
            ));
        }
        let mut cap = null_mut();
        // SAFETY: the caller hands over `tensor` (DLPack 1.3); on OK the capsule owns it.
        if let Err(e) = check(unsafe { ffi::dlpack_capsule_new(tensor, &mut cap) }) {
            if !tensor.is_null() {
                // SAFETY: still ours on failure (dlpack_capsule_new's contract): released once.
                unsafe { ffi::dlpack_tensor_delete(tensor) };
            }
            return Err(e);
        }
        // SAFETY: a new reference on OK.
        let cap = unsafe { Bound::from_owned_ptr(py, cap.cast()) };
        let (mut mt, mut how) = (null_mut(), 0u32);
        // SAFETY: a fresh "dltensor_versioned" capsule we own; on failure the import released
        // the tensor (and an unconsumed capsule releases nothing twice).
        check(unsafe { ffi::dlpack_capsule_import(cap.as_ptr().cast(), 0, &mut mt, &mut how) })?;
        match Py::new(py, Tensor::new(mt, how)) {
            Ok(t) => {
                // SAFETY: the caller's out pointer; a new reference.
                unsafe { *out = t.into_ptr().cast() };
                Ok(())
            }
            Err(e) => Err(e), // Tensor::new's value was dropped: its Drop released the tensor
        }
    })
}

/// `dltensor_from_py_object_no_sync`: the Tensor's DLTensor, borrowed (valid while the object
/// lives and is not released).
unsafe extern "C" fn dltensor_from_py_object(obj: *mut c_void, out: *mut DLTensor) -> c_int {
    guarded(|py| {
        not_null(obj, "py_object")?;
        not_null(out, "out")?;
        // SAFETY: DLPack 1.3: a borrowed PyObject* (checked non-NULL), GIL held.
        let obj = unsafe { Bound::from_borrowed_ptr(py, obj.cast()) };
        let t = ours(&obj)?;
        let dl = t.get().managed()?.dl_tensor;
        // SAFETY: the caller's out pointer.
        unsafe { *out = dl };
        Ok(())
    })
}

/// `current_work_stream` (peer case 53): the stream the data this table hands out is ordered
/// on, per device family. `kDLCPU` (no streams): NULL. CUDA (`kDLCUDA`, `kDLCUDAHost`,
/// `kDLCUDAManaged`): `CU_STREAM_LEGACY` (0x1), the legacy default stream: tensors imported
/// through `__dlpack__` without a stream were ordered there by their producer, and
/// `managed_tensor_from_py_object_no_sync` makes it wait for a producer stream recorded at a
/// no-sync import before handing the tensor out. Every other device type (ROCm, whose default
/// stream has no non-NULL handle, oneAPI, ...): this package cannot name a stream, so -1 with
/// `BufferError` (never NULL, which a consumer would read as "the default stream").
unsafe extern "C" fn current_work_stream(
    device_type: DLDeviceType,
    device_id: i32,
    out: *mut *mut c_void,
) -> c_int {
    guarded(|_py| {
        let device = crate::abi::DLDevice {
            device_type,
            device_id,
        };
        let mut s = ffi::dlpack_helpers_stream {
            kind: 0,
            handle: null_mut(),
        };
        // `None` decoded for the device: NONE for kDLCPU, LEGACY_DEFAULT (0x1) for CUDA.
        // SAFETY: plain values and a live out pointer.
        let st = unsafe { ffi::dlpack_stream_decode(device, false, 0, 0, &mut s) };
        let answer = match (st, s.kind) {
            (ffi::OK, ffi::STREAM_NONE) => null_mut(),
            (ffi::OK, ffi::STREAM_LEGACY_DEFAULT) => s.handle,
            _ => {
                return Err(PyBufferError::new_err(format!(
                    "dlpack_helpers.Tensor cannot name the stream its data is ordered on for \
                     device ({}, {}): import it with __dlpack__(stream=...) instead",
                    device_type.0, device_id
                )))
            }
        };
        if out.is_null() {
            return Err(PyValueError::new_err("out_current_stream is NULL"));
        }
        // SAFETY: the caller's out pointer.
        unsafe { *out = answer };
        Ok(())
    })
}

unsafe extern "C" fn free_buffer(ctx: *mut c_void) {
    // SAFETY: made by Box::into_raw in `allocator`, released once by the tensor's deleter.
    drop(unsafe { Box::from_raw(ctx.cast::<Vec<u128>>()) });
}

/// `managed_tensor_allocator`: a compact row-major tensor like `prototype` (shape, dtype) in
/// host memory (16-byte aligned); only `kDLCPU` prototypes are served.
unsafe extern "C" fn allocator(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut c_void,
    set_error: DLPackSetErrorFn,
) -> c_int {
    // Nothing unwinds into the C caller: a panic is reported through `set_error`.
    let run = std::panic::AssertUnwindSafe(|| {
        // SAFETY: this function's own arguments, forwarded unchanged.
        unsafe { allocate(prototype, out, error_ctx, set_error) }
    });
    std::panic::catch_unwind(run).unwrap_or_else(|p| {
        let what = panic_message(p.as_ref());
        report(
            error_ctx,
            set_error,
            c"RuntimeError",
            format!("a Rust panic: {what}"),
        )
    })
}

/// Calls `set_error(error_ctx, kind, msg)` when given; returns -1.
fn report(
    error_ctx: *mut c_void,
    set_error: DLPackSetErrorFn,
    kind: &core::ffi::CStr,
    msg: String,
) -> c_int {
    if let Some(f) = set_error {
        let m = std::ffi::CString::new(msg).unwrap_or_default();
        // SAFETY: the caller's callback with its context.
        unsafe { f(error_ctx, kind.as_ptr(), m.as_ptr()) };
    }
    -1
}

/// The allocator's body (see `allocator`).
unsafe fn allocate(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut c_void,
    set_error: DLPackSetErrorFn,
) -> c_int {
    let fail = |kind: &core::ffi::CStr, msg: String| report(error_ctx, set_error, kind, msg);
    if prototype.is_null() || out.is_null() {
        return fail(c"ValueError", "prototype or out is NULL".into());
    }
    // SAFETY: a valid prototype (DLPack 1.3).
    let p = unsafe { &*prototype };
    if p.device.device_type != DLDeviceType(1) {
        return fail(
            c"BufferError",
            format!(
                "dlpack_helpers allocates kDLCPU tensors only, not device type {}",
                p.device.device_type.0
            ),
        );
    }
    // The shape is read only once `ndim` is in the library's bound and `shape` is not NULL
    // (a NULL shape or an `ndim` of 2**30 crashed the process here).
    if !(0..=ffi::MAX_NDIM).contains(&p.ndim) {
        return fail(
            c"ValueError",
            format!(
                "prototype->ndim is {}; it must be in 0..={} (this library's bound)",
                p.ndim,
                ffi::MAX_NDIM
            ),
        );
    }
    if p.ndim > 0 && p.shape.is_null() {
        return fail(
            c"ValueError",
            format!("prototype->shape is NULL but prototype->ndim is {}", p.ndim),
        );
    }
    let n = p.ndim as usize;
    let shape = if n == 0 {
        &[][..]
    } else {
        // SAFETY: non-NULL, `ndim` elements (DLPack: the prototype's shape has ndim entries).
        unsafe { core::slice::from_raw_parts(p.shape, n) }
    };
    // Sizes checked, never wrapped: an element count or byte size past isize::MAX, or memory
    // the system will not give, is MemoryError (the allocation is fallible, never an abort).
    let bits = p.dtype.bits as u128 * p.dtype.lanes as u128;
    let count = shape
        .iter()
        .try_fold(1u128, |acc, &e| acc.checked_mul(e.max(0) as u128));
    let bytes = count
        .and_then(|c| c.checked_mul(bits))
        .map(|b| b.div_ceil(8))
        .filter(|&b| b <= isize::MAX as u128);
    let Some(bytes) = bytes else {
        return fail(c"MemoryError", "the tensor is too large".into());
    };
    let words = (bytes as usize).div_ceil(16).max(1);
    let mut v: Vec<u128> = Vec::new();
    if v.try_reserve_exact(words).is_err() {
        return fail(
            c"MemoryError",
            format!("cannot allocate {bytes} bytes for the tensor"),
        );
    }
    v.resize(words, 0);
    let buf: Box<Vec<u128>> = Box::new(v);
    let data = buf.as_ptr() as *mut c_void;
    let ctx = Box::into_raw(buf).cast::<c_void>();
    let mut mt = null_mut();
    // SAFETY: our buffer and the prototype's shape (copied); release frees the buffer once.
    let s = unsafe {
        ffi::dlpack_tensor_create(
            data,
            p.device,
            p.ndim,
            p.shape,
            core::ptr::null(),
            p.dtype,
            0,
            0,
            Some(free_buffer),
            ctx,
            &mut mt,
        )
    };
    if s != ffi::OK {
        // SAFETY: on failure the release callback was not called.
        unsafe { free_buffer(ctx) };
        let msg = unsafe { core::ffi::CStr::from_ptr(ffi::dlpack_last_error_message()) }
            .to_string_lossy()
            .into_owned();
        return fail(c"ValueError", msg);
    }
    // SAFETY: the caller's out pointer.
    unsafe { *out = mt };
    0
}
