//! `dlpack_helpers._native`: the Python face of the dlpack-helpers C library.
//!
//! Glue only: every rule (version negotiation, the `__dlpack__` retry, capsule renaming, export
//! plans, names) is the C library's, called through its exports; this module converts Python
//! arguments, owns imported tensors and raises the array API's exceptions. It links the shared
//! `libdlpack_helpers.so` installed next to it (`lib/`), so a C extension using the library in
//! the same process shares its process-wide state (stream backends, event pools, the per-type
//! exchange-API cache).

#[allow(
    dead_code,
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    clippy::all
)]
#[path = "../../../src/abi.rs"]
mod abi;
mod args;
mod errors;
mod exchange;
mod fastcall;
mod ffi;
mod tensor;
mod values;

use abi::{DLDevice, DLManagedTensorVersioned, DLPackVersion};
use core::ffi::CStr;
use core::ptr::null_mut;
use errors::check;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};
use tensor::Tensor;
use values::{DType, Device};

fn get_info() -> PyResult<ffi::dlpack_helpers_info> {
    let mut i = core::mem::MaybeUninit::<ffi::dlpack_helpers_info>::zeroed();
    // SAFETY: a zeroed struct with struct_size set; the library fills what fits.
    unsafe {
        (*i.as_mut_ptr()).struct_size = core::mem::size_of::<ffi::dlpack_helpers_info>();
        check(ffi::dlpack_get_info(i.as_mut_ptr()))?;
        Ok(i.assume_init())
    }
}

/// `__dlpack_info__()`: the DLPack version, ABI major and library version (C `dlpack_get_info`).
pub fn dlpack_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let i = get_info()?;
    let d = PyDict::new(py);
    d.set_item(
        "dlpack_version",
        (i.dlpack_version.major, i.dlpack_version.minor),
    )?;
    d.set_item("dlpack_abi_major", i.dlpack_abi_major)?;
    // SAFETY: static NUL-terminated string.
    d.set_item(
        "version",
        unsafe { CStr::from_ptr(i.version) }.to_str().unwrap_or("?"),
    )?;
    Ok(d)
}

/// What the loaded library is and supports (C ``dlpack_get_info``): a dict with ``version``
/// (str), ``major``/``minor``/``patch`` (int), ``dlpack_version`` (``(major, minor)``),
/// ``dlpack_abi_major``, ``capabilities`` (``DLPACK_HELPERS_CAP_*`` bits), ``python`` and
/// ``accepts_legacy`` (bool), ``spec_version`` (int, ``YYYYMM``: 202612 for spec 2026.12) and
/// ``profiles`` (``DLPACK_HELPERS_PROFILE_*`` bits of the spec profiles implemented).
/// ``DLPackHelpersError`` only if the library fails internally.
#[pyfunction]
fn info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let i = get_info()?;
    let d = dlpack_info(py)?;
    d.set_item("major", i.major)?;
    d.set_item("minor", i.minor)?;
    d.set_item("patch", i.patch)?;
    d.set_item("capabilities", i.capabilities)?;
    d.set_item("python", i.capabilities & 0x4 != 0)?;
    d.set_item("accepts_legacy", i.accepts_legacy)?;
    d.set_item("spec_version", i.spec_version)?;
    d.set_item("profiles", i.profiles)?;
    Ok(d)
}

/// The module-level ``__dlpack_info__()``: ``{"dlpack_version": (1, 3), "dlpack_abi_major": 1,
/// "version": "<library version>"}`` from C ``dlpack_get_info``.
#[pyfunction]
#[pyo3(name = "__dlpack_info__")]
fn module_dlpack_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    dlpack_info(py)
}

/// ``obj.__dlpack_device__()`` decoded by the library (C ``dlpack_object_get_device``) as a
/// :class:`Device`, equal to the ``(device_type, device_id)`` tuple.
///
/// ``AttributeError`` when ``obj`` has no ``__dlpack_device__``; what the method raised (as
/// ``BufferError``/``TypeError``/``DLPackHelpersError`` with its message) when it fails;
/// ``TypeError`` when it returns anything but a pair of int32 integers.
#[pyfunction]
fn device(obj: &Bound<'_, PyAny>) -> PyResult<Device> {
    Ok(Device {
        raw: object_device(obj)?,
    })
}

fn object_device(obj: &Bound<'_, PyAny>) -> PyResult<DLDevice> {
    let mut d = DLDevice::default();
    // SAFETY: borrowed object, GIL held, valid out pointer.
    check(unsafe {
        ffi::dlpack_object_query_device(obj.as_ptr().cast(), ffi::IMPORT_KEEP_PYTHON_ERROR, &mut d)
    })?;
    Ok(d)
}

/// Whether host code may read the memory of a DLPack object, a :class:`Device`, a device name
/// (``"cpu:0"``, ``"cuda_host"``, as :class:`Device` parses it) or a
/// ``(device_type, device_id)`` tuple (C ``dlpack_is_cpu_accessible``).
///
/// A tuple must be two integers (``TypeError`` otherwise), each in the int32 range
/// (``ValueError``); a name the library does not know is ``ValueError``; any other object is
/// asked for ``__dlpack_device__()``.
#[pyfunction]
fn is_cpu_accessible(obj_or_device: &Bound<'_, PyAny>) -> PyResult<bool> {
    let d = if obj_or_device.cast::<pyo3::types::PyString>().is_ok() {
        // Issue 34: a name was asked for `__dlpack_device__` (AttributeError).
        Device::py_new(obj_or_device)?.raw
    } else if obj_or_device.cast::<PyTuple>().is_ok() || obj_or_device.cast::<Device>().is_ok() {
        args::device(obj_or_device, "device")?
    } else {
        object_device(obj_or_device)?
    };
    // SAFETY: plain query.
    Ok(unsafe { ffi::dlpack_is_cpu_accessible(d) })
}

/// Import any object implementing ``__dlpack__`` (or a raw DLPack capsule) as a :class:`Tensor`.
///
/// - ``max_version``: a ``(major, minor)`` tuple of ints in 0..2**32-1; default this library's
///   newest (1.3). Always passed to ``__dlpack__`` (peer case 18).
/// - ``stream``: an int (the array API's stream encoding for the producer's device), or for a
///   oneAPI producer its queue object (anything exposing ``addressof_ref()``, as dpctl's
///   ``SyclQueue``), passed to ``__dlpack__`` unchanged; ``dl_device``: a ``(device_type, device_id)`` tuple or :class:`Device`;
///   ``copy``: None, True or False. Passed only when given.
/// - ``use_exchange_api``: when the producer's type publishes a C exchange API
///   (``__dlpack_c_exchange_api__``, DLPack 1.3) and no ``stream``, ``dl_device`` or ``copy``
///   is given, take the tensor from it (no ``__dlpack__`` call, no stream synchronisation: for
///   device memory the data is ordered on the producer's current stream, which is asked from
///   the table's ``current_work_stream`` and kept: later ``__dlpack__(stream=s)`` exports make
///   ``s`` wait for it; a table that cannot name it is not used, ``__dlpack__`` is). Default
///   True.
///   It never replaces a ``__dlpack__`` that the object's class defines below the class that
///   publishes the table (a subclass that overrides ``__dlpack__`` gets its override called),
///   and it stands in only where its answer is the one ``__dlpack__`` would give. PyTorch's
///   and PaddlePaddle's tables skip what their ``Tensor.__dlpack__`` checks first, so a tensor
///   that requires grad (PaddlePaddle: ``stop_gradient=False``) or has PyTorch's conjugate
///   bit, a tensor the table cannot export (sparse; PyTorch's mkldnn, meta, quantized), or a
///   ``torch.Tensor`` subclass with its own ``__torch_function__`` is imported through
///   ``__dlpack__``: the producer's own ``BufferError`` is raised (never a writable grad
///   tensor or unconjugated values). Ordinary tensors keep the table (:attr:`Tensor.source`
///   ``"exchange_api"``).
/// - ``legacy_writable``: the C option ``DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE`` ("I know this
///   producer's memory is writable"). A producer that hands over the legacy struct cannot say
///   whether its memory may be written, so by default such a tensor is read-only
///   (:attr:`Tensor.readonly_origin` ``"assumed"``). With ``True`` it is imported writable and
///   every consumer of its re-exports may write into the producer's memory: pass it only when
///   you know that is allowed (for example memory your own code allocated). Risk: writing into
///   memory the producer shares or treats as immutable (a JAX array, a cached constant)
///   corrupts it silently. Versioned tensors keep their own flags whatever this says.
///
/// A producer that raises ``TypeError`` for ``max_version`` is retried without it (unless
/// ``dl_device`` or ``copy`` was given; peer case 21). A raw capsule (``"dltensor"`` or
/// ``"dltensor_versioned"``) is consumed (renamed ``used_…``); it takes no other argument.
///
/// Raises ``TypeError``/``ValueError`` for a malformed argument (the message names it) before the
/// producer is called; ``AttributeError`` for an object without ``__dlpack__``; ``BufferError``
/// when the producer cannot export or the version is unusable; ``TypeError`` for a result that is
/// not a DLPack capsule.
#[pyfunction]
#[pyo3(signature = (obj, *, max_version=None, stream=None, dl_device=None, copy=None, use_exchange_api=true, legacy_writable=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn import_tensor(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    max_version: Option<&Bound<'_, PyAny>>,
    stream: Option<&Bound<'_, PyAny>>,
    dl_device: Option<&Bound<'_, PyAny>>,
    copy: Option<&Bound<'_, PyAny>>,
    use_exchange_api: bool,
    legacy_writable: bool,
) -> PyResult<Py<Tensor>> {
    let max_version = args::given(max_version);
    let stream = args::given(stream);
    let dl_device = args::given(dl_device);
    let mut req = ffi::dlpack_helpers_import_request {
        max_version: DLPackVersion { major: 0, minor: 0 },
        stream: null_mut(),
        has_dl_device: false,
        dl_device: DLDevice::default(),
        copy: args::copy(copy)?,
        // Producer exceptions propagate unchanged; legacy tensors become read-only unless the
        // caller asserts DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE (the legacy struct cannot say).
        flags: ffi::IMPORT_KEEP_PYTHON_ERROR
            | if use_exchange_api {
                ffi::IMPORT_EXCHANGE_API
            } else {
                0
            }
            | if legacy_writable {
                ffi::IMPORT_LEGACY_WRITABLE
            } else {
                0
            },
    };
    if let Some(v) = max_version {
        req.max_version = args::version(v, "max_version")?;
        if req.max_version.major == 0 && req.max_version.minor == 0 {
            return Err(PyValueError::new_err(
                "max_version (0, 0) is not a DLPack version (the C request reserves it for \
                 'this library's newest'; omit max_version for that)",
            ));
        }
    }
    if let Some(s) = stream {
        // An integer is checked here (int64); a oneAPI queue object (dpctl's `SyclQueue`:
        // `addressof_ref()`) is passed to the producer unchanged, as the C request and
        // `Tensor.__dlpack__` take it (peer case 57; issue 34: it was "stream must be an
        // integer"); anything else is TypeError before the producer is called.
        if args::is_integer_like(s)? || !s.hasattr("addressof_ref")? {
            args::stream(s)?;
        }
        req.stream = s.as_ptr().cast();
    }
    if let Some(d) = dl_device {
        req.has_dl_device = true;
        req.dl_device = args::device(d, "dl_device")?;
    }
    let mut mt: *mut DLManagedTensorVersioned = null_mut();
    let mut how = 0u32;
    // A raw capsule says nothing about streams: no ordering known.
    let mut ready = ffi::dlpack_helpers_stream {
        kind: ffi::STREAM_NO_SYNC,
        handle: null_mut(),
    };
    if let Ok(cap) = obj.cast::<PyCapsule>() {
        if max_version.is_some()
            || stream.is_some()
            || dl_device.is_some()
            || req.copy != ffi::COPY_IF_NEEDED
        {
            return Err(PyTypeError::new_err(
                "import_tensor got a DLPack capsule (already exported) together with max_version, \
                 stream, dl_device or copy, which only apply to __dlpack__; pass the producer instead",
            ));
        }
        // SAFETY: borrowed capsule, valid out pointers, GIL held. A legacy capsule is converted
        // read-only and reported in `how`.
        check(unsafe {
            ffi::dlpack_capsule_import(
                cap.as_ptr().cast(),
                req.flags & (ffi::IMPORT_KEEP_PYTHON_ERROR | ffi::IMPORT_LEGACY_WRITABLE),
                &mut mt,
                &mut how,
            )
        })?;
    } else {
        // SAFETY: borrowed object, request and out pointers valid for the call, GIL held. The
        // stream the data is ordered on is kept for later exports (peer case 53).
        check(unsafe {
            ffi::dlpack_object_import_with_stream(
                obj.as_ptr().cast(),
                &req,
                &mut mt,
                &mut how,
                &mut ready,
            )
        })?;
    }
    let t = Tensor::with_stream(mt, how, ready);
    inherit_from_source(obj, &t)?;
    Py::new(py, t)
}

/// `import_tensor(obj)` with every default: the call `fastcall::import_vectorcall` serves
/// directly (issue 26). The same request and the same answer as [`import_tensor`] with its
/// defaults, without its argument handling; a capsule takes [`import_tensor`]'s own path.
pub(crate) fn import_default(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Py<Tensor>> {
    // SAFETY: a live object (GIL held); exactly a capsule, as `cast::<PyCapsule>` asks, without
    // the reference its failure holds (issue 34, callgrind).
    if unsafe { pyo3::ffi::PyCapsule_CheckExact(obj.as_ptr()) } != 0 {
        return import_tensor(py, obj, None, None, None, None, true, false);
    }
    let req = ffi::dlpack_helpers_import_request {
        max_version: DLPackVersion { major: 0, minor: 0 },
        stream: null_mut(),
        has_dl_device: false,
        dl_device: DLDevice::default(),
        copy: ffi::COPY_IF_NEEDED,
        flags: ffi::IMPORT_KEEP_PYTHON_ERROR | ffi::IMPORT_EXCHANGE_API,
    };
    let mut mt: *mut DLManagedTensorVersioned = null_mut();
    let mut how = 0u32;
    let mut ready = ffi::dlpack_helpers_stream {
        kind: ffi::STREAM_NO_SYNC,
        handle: null_mut(),
    };
    // SAFETY: borrowed object, request and out pointers valid for the call, GIL held.
    check(unsafe {
        ffi::dlpack_object_import_with_stream(obj.as_ptr().cast(), &req, &mut mt, &mut how, &mut ready)
    })?;
    let t = Tensor::with_stream(mt, how, ready);
    inherit_from_source(obj, &t)?;
    Py::new(py, t)
}

/// A Tensor of a Tensor: the versioned hop between them states READ_ONLY, but if the source's
/// was assumed (it came through the legacy struct), so is this one's (issue 25). Only for a
/// view of the same memory (a copy is the consumer's own), which also shares the source's view
/// owner (`Tensor::share_root`: a re-import chain stays one level deep, issue 34). Inlined:
/// for any other object it is one type compare on every import.
#[inline(always)]
fn inherit_from_source(obj: &Bound<'_, PyAny>, t: &Tensor) -> PyResult<()> {
    if let Some(src) = exchange::as_tensor(obj) {
        let src = src.get();
        if t.managed()?.dl_tensor.data == src.managed()?.dl_tensor.data {
            if src.read_only_origin().ok() == Some(ffi::READ_ONLY_ORIGIN_LEGACY) {
                t.inherit_assumed_read_only();
            }
            t.share_root(src)?;
        }
    }
    Ok(())
}

/// The address of ``dlpack_get_info`` in the library this module is linked against (for the
/// test that a C extension, ctypes and this module share one library).
#[pyfunction]
fn _library_symbol_address() -> usize {
    ffi::dlpack_get_info as *const () as usize
}

#[repr(C)]
struct DlInfo {
    dli_fname: *const core::ffi::c_char,
    dli_fbase: *mut core::ffi::c_void,
    dli_sname: *const core::ffi::c_char,
    dli_saddr: *mut core::ffi::c_void,
}

extern "C" {
    fn dladdr(addr: *const core::ffi::c_void, info: *mut DlInfo) -> core::ffi::c_int;
}

/// The file of the C library this module is linked against, as the dynamic loader resolved it
/// (``dladdr`` of ``dlpack_get_info``), or None. ``dlpack_helpers._lib`` loads exactly this file,
/// so ctypes, this module and C extensions share one loaded library.
#[pyfunction]
fn _library_path() -> Option<String> {
    let mut info = core::mem::MaybeUninit::<DlInfo>::zeroed();
    // SAFETY: dladdr on the address of a function of the linked library; valid out pointer.
    let ok = unsafe {
        dladdr(
            ffi::dlpack_get_info as *const () as *const core::ffi::c_void,
            info.as_mut_ptr(),
        )
    };
    // SAFETY: filled when ok != 0.
    let info = unsafe { info.assume_init() };
    if ok == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: NUL-terminated path owned by the loader.
    Some(
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Raise the exception of a failing library ``status`` (an int): for callers of the ctypes
/// table (``dlpack_helpers.lib``) who want the package's exceptions. The message is this
/// thread's ``dlpack_last_error_message()`` only when the last failing call on this thread
/// returned that status (``dlpack_last_error_status()``); otherwise it belonged to an unrelated
/// earlier failure, and the exception says that no message goes with the status (issue 34).
#[pyfunction]
fn raise_status(status: i32) -> PyResult<()> {
    if status == ffi::OK {
        return Ok(());
    }
    Err(errors::reported_status_error(status))
}

/// Internal, for the layout test: `[(struct, field or "sizeof", bytes)]` of the module's
/// hand-written mirrors of the header's structs.
#[pyfunction]
fn _ffi_mirror_layouts() -> Vec<(&'static str, &'static str, usize)> {
    ffi::mirror_layouts()
}

// `gil_used = false`: every piece of shared state in this module and the C library is correct
// with the GIL off (docs/python.md "Free-threaded CPython", issue 36), so importing it on a
// free-threaded CPython keeps the GIL off. Nothing changes on a GIL-enabled CPython.
#[pymodule(gil_used = false)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Tensor>()?;
    exchange::remember_type(py);
    fastcall::install(py)?;
    m.add_class::<DType>()?;
    m.add_class::<Device>()?;
    m.add(
        "DLPackHelpersError",
        py.get_type::<errors::DLPackHelpersError>(),
    )?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(module_dlpack_info, m)?)?;
    m.add_function(wrap_pyfunction!(device, m)?)?;
    m.add_function(wrap_pyfunction!(is_cpu_accessible, m)?)?;
    m.add_function(wrap_pyfunction!(import_tensor, m)?)?;
    fastcall::install_import(m)?;
    m.add_function(wrap_pyfunction!(_library_symbol_address, m)?)?;
    m.add_function(wrap_pyfunction!(raise_status, m)?)?;
    m.add_function(wrap_pyfunction!(_library_path, m)?)?;
    m.add_function(wrap_pyfunction!(_ffi_mirror_layouts, m)?)?;
    Ok(())
}
