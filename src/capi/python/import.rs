//! Importing any object that implements `__dlpack__`, and `__dlpack_device__`.

use super::capsule;
use super::exchange;
use crate::abi::{DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion};
use crate::capi::boundary::{self, out_ptr};
use crate::capi::convert::DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE;
use crate::capi::error::dlpack_helpers_status;
use crate::host::cpython::{self, Api, ExcClass, Owned, PyObject};
use crate::rules::Error;
use crate::rules::python::{self as rules, Keywords};
use crate::rules::stream::{Kind, Stream};
use core::ffi::{CStr, c_long, c_void};

use crate::capi::stream::{
    DLPACK_HELPERS_COPY_ALWAYS, DLPACK_HELPERS_COPY_IF_NEEDED, DLPACK_HELPERS_COPY_NEVER,
    dlpack_helpers_copy_mode,
};

/// Request flag: try the type's C exchange API (`__dlpack_c_exchange_api__`, DLPack 1.3, or
/// `__c_dlpack_exchange_api__`, 1.2) first, when the request passes no `stream`, `dl_device` or
/// `copy` and its `max_version` is 1.0 or newer (the table exports the versioned struct; a
/// `max_version` below 1.0 asks for the legacy one, which only `__dlpack__` gives). That path
/// does **no stream synchronisation** (the producer's `…NoSync` export): a consumer of device
/// memory must launch on the producer's current stream (`current_work_stream`). Without a
/// usable table the call falls back to `__dlpack__` (among them a DLPack 1.2 integer that
/// cannot be a readable table's address: see `dlpack_exchange_api_find`).
///
/// Rule (issue 25: nothing lost, nothing invented): the table stands in for `__dlpack__` only
/// where its answer is the one `__dlpack__` would give. An object whose own `__dict__` holds
/// `__dlpack__` gets that called (it is what `obj.__dlpack__` finds), as does a PyTorch or
/// PaddlePaddle tensor whose `__dict__` holds a name their `__dlpack__` reads (`t.is_conj = f`,
/// or PyTorch's `__torch_function__`). A table that fails (an ordinary exception, cleared, or
/// a tensor this library refuses) is answered by `__dlpack__` (the producer's own answer).
/// A subclass that overrides
/// `__dlpack__` below the table's class gets its override called (read from the classes' real
/// dictionaries and MRO, which a metaclass cannot answer for). PyTorch's and PaddlePaddle's
/// tables (published by a class of the package `torch` / `paddle`) skip what their
/// `__dlpack__` checks first, so for them: a tensor that requires grad (PyTorch:
/// `requires_grad` not False; PaddlePaddle: `stop_gradient` not True; read on every import,
/// for every dtype, BEFORE the table exports) is imported by calling `__dlpack__`, which raises
/// the producer's own `BufferError` (`_PRODUCER_BUFFER_ERROR`; the table would have handed over
/// a writable tensor); a PyTorch complex tensor (the conjugate bit, which the table would
/// export as unconjugated memory: wrong values) has its export released and `__dlpack__`
/// called; a sparse tensor (PyTorch's mkldnn, meta, quantized: the table fails) gets
/// `__dlpack__`'s `BufferError`; a subclass defining `__torch_function__` below `torch.Tensor` (other
/// than PyTorch's own `_disabled_torch_function_impl`, by identity) never uses PyTorch's table,
/// nor a subclass
/// defining an attribute the producer's `__dlpack__` reads (PyTorch: `requires_grad`,
/// `is_conj`, `layout`, `device`; PaddlePaddle: `is_sparse`, `stop_gradient`, `place`,
/// `get_tensor`; both: `__getattribute__`) below the table's class. No Python code runs after
/// the table exported (a read that may run it, say through a PyTorch `TorchFunctionMode`,
/// comes first: code that resized the tensor after the export freed the memory it points
/// at). Cost: a look at the object's instance dictionary slot for every table; PyTorch and
/// PaddlePaddle tensors one attribute read per import; other producers nothing more. Not
/// covered (docs/python.md): a PyTorch `TorchFunctionMode` active in the thread, which `Tensor.__dlpack__` dispatches through (it
/// sees the import's `requires_grad` read); a CUDA tensor on a device other than PyTorch's
/// current one, which `__dlpack__` refuses; a class changed after its first import (the
/// per-type answers are cached).
pub const DLPACK_HELPERS_IMPORT_EXCHANGE_API: u32 = 0x1;
/// Request flag (also a `flags` bit of `dlpack_object_query_device` and `dlpack_capsule_import`):
/// when a Python exception causes the failure (the producer's `__dlpack__` or
/// `__dlpack_device__` raised, or a Python C-API call failed), leave that exception set (the
/// same object, with its type and traceback) and return `DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET`,
/// so a C extension can propagate it by returning NULL. The `TypeError` that triggers the
/// keyword-less retry (see `dlpack_object_import`) is still consumed when the retry applies.
/// Without this flag exceptions deriving from `Exception` are cleared and become a status and
/// a message (for ctypes callers); exceptions that do not derive from `Exception`
/// (`KeyboardInterrupt`, `SystemExit`, ...) are never cleared in either mode.
pub const DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR: u32 = 0x2;
/// Every `DLPACK_HELPERS_IMPORT_*` request flag this version knows.
pub(crate) const IMPORT_FLAGS: u32 = DLPACK_HELPERS_IMPORT_EXCHANGE_API
    | DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR
    | DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE;

/// Out bit of `dlpack_object_import` and `dlpack_capsule_import`: the producer handed over a
/// legacy `"dltensor"` capsule, which was converted as `dlpack_legacy_tensor_wrap` does:
/// version 1.3, strides filled in, `READ_ONLY` unless `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE`
/// was passed (the legacy struct cannot say whether the memory may be written).
pub const DLPACK_HELPERS_IMPORTED_LEGACY: u32 = 0x1;
/// Out bit: the producer raised `TypeError` for `max_version` and the keyword-less retry
/// succeeded (a producer older than the array API 2023.12).
pub const DLPACK_HELPERS_IMPORTED_AFTER_RETRY: u32 = 0x2;
/// Out bit: the tensor came from the type's C exchange API, not from `__dlpack__`.
pub const DLPACK_HELPERS_IMPORTED_EXCHANGE_API: u32 = 0x4;

/// What a consumer asks of `__dlpack__` (array API 2023.12 keywords). Zero-initialise it, then
/// set what you need: all zeros means max_version = this library's (1.3), and no stream,
/// dl_device or copy passed.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dlpack_helpers_import_request {
    /// The consumer's `max_version`; {0, 0} means this library's newest (1.3). A tensor of any
    /// other major than 1 is refused after the call (and released).
    pub max_version: DLPackVersion,
    /// The `stream=` value: a Python object (`PyObject *`, borrowed; usually an `int` in the
    /// array API's encoding), or NULL to pass nothing (None).
    pub stream: *mut c_void,
    /// Whether `dl_device` is passed.
    pub has_dl_device: bool,
    /// The `dl_device=` value, a `(device_type, device_id)` pair, when `has_dl_device`.
    pub dl_device: DLDevice,
    /// `DLPACK_HELPERS_COPY_IF_NEEDED` (None, not passed), `_NEVER` (False) or `_ALWAYS` (True).
    pub copy: dlpack_helpers_copy_mode,
    /// `DLPACK_HELPERS_IMPORT_*` bits.
    pub flags: u32,
}

impl Default for dlpack_helpers_import_request {
    fn default() -> Self {
        dlpack_helpers_import_request {
            max_version: DLPackVersion::new(0, 0),
            stream: core::ptr::null_mut(),
            has_dl_device: false,
            dl_device: DLDevice::default(),
            copy: DLPACK_HELPERS_COPY_IF_NEEDED,
            flags: 0,
        }
    }
}

fn set(
    api: &'static Api,
    keep: bool,
    d: &Owned,
    key: &CStr,
    value: *mut PyObject,
) -> Result<(), Error> {
    let Some(v) = Owned::new(api, value) else {
        return Err(pyerr(api, keep));
    };
    // SAFETY: GIL held; SetItemString does not steal.
    if unsafe { (api.PyDict_SetItemString)(d.as_ptr(), key.as_ptr(), v.as_ptr()) } != 0 {
        return Err(pyerr(api, keep));
    }
    Ok(())
}

/// A failed Python C-API call of ours (building arguments): never a retry signal.
fn pyerr(api: &'static Api, keep: bool) -> Error {
    // SAFETY: GIL held, an exception is set.
    match unsafe { api.catch(keep, |_| false) } {
        Ok((_, msg)) => Error::ProducerError(msg),
        Err(e) => e,
    }
}

fn pair(api: &'static Api, keep: bool, a: i64, b: i64) -> Result<Owned, Error> {
    // SAFETY: GIL held.
    unsafe {
        let t = Owned::new(api, (api.PyTuple_New)(2)).ok_or_else(|| pyerr(api, keep))?;
        for (i, x) in [a, b].into_iter().enumerate() {
            let v = (api.PyLong_FromLong)(x as c_long);
            if v.is_null() || (api.PyTuple_SetItem)(t.as_ptr(), i as isize, v) != 0 {
                return Err(pyerr(api, keep));
            }
        }
        Ok(t)
    }
}

/// The error of a failed `__dlpack__` call: a `TypeError` that the retry rule will consume is
/// always cleared (`ProducerTypeError`); anything else follows `keep` (see `Api::catch`).
fn call_failed(api: &'static Api, keep: bool, kw: Keywords) -> Error {
    let retry = rules::retry_after_type_error(kw, "").is_ok();
    // SAFETY: GIL held, the call set an exception.
    match unsafe { api.catch(keep, |c| c == ExcClass::Type && retry) } {
        Ok((class, msg)) => cpython::producer_error(class, msg),
        Err(e) => e,
    }
}

/// One call of `__dlpack__`: the request, the `max_version` to pass, which keywords, and whether
/// a Python exception stays set.
#[derive(Clone, Copy)]
struct Attempt<'a> {
    req: &'a dlpack_helpers_import_request,
    max: DLPackVersion,
    kw: Keywords,
    keep: bool,
}

fn call_dlpack(api: &'static Api, method: &Owned, a: Attempt<'_>) -> Result<Owned, Error> {
    let Attempt { req, max, kw, keep } = a;
    // SAFETY: GIL held (every caller).
    if let (Some(vc), Some(names)) = (api.PyObject_Vectorcall, unsafe { api.names() }) {
        return call_dlpack_vectorcall(api, vc, names, method, a);
    }
    let build = || -> Result<Owned, Error> {
        // SAFETY: GIL held.
        let d = Owned::new(api, unsafe { (api.PyDict_New)() }).ok_or_else(|| pyerr(api, keep))?;
        if kw.max_version {
            let t = pair(api, keep, max.major.into(), max.minor.into())?;
            set(api, keep, &d, c"max_version", t.into_raw())?;
        }
        if kw.stream {
            // SAFETY: GIL held; a new reference for `set` to release.
            unsafe { (api.Py_IncRef)(req.stream) };
            set(api, keep, &d, c"stream", req.stream)?;
        }
        if kw.dl_device {
            let t = pair(
                api,
                keep,
                req.dl_device.device_type.0.into(),
                req.dl_device.device_id.into(),
            )?;
            set(api, keep, &d, c"dl_device", t.into_raw())?;
        }
        if kw.copy {
            // SAFETY: GIL held.
            set(api, keep, &d, c"copy", unsafe {
                (api.PyBool_FromLong)((req.copy == DLPACK_HELPERS_COPY_ALWAYS) as c_long)
            })?;
        }
        Ok(d)
    };
    let kwargs = build()?;
    // SAFETY: GIL held.
    unsafe {
        let args = Owned::new(api, (api.PyTuple_New)(0)).ok_or_else(|| pyerr(api, keep))?;
        Owned::new(
            api,
            (api.PyObject_Call)(method.as_ptr(), args.as_ptr(), kwargs.as_ptr()),
        )
        .ok_or_else(|| call_failed(api, keep, kw))
    }
}

type Vectorcall = unsafe extern "C" fn(
    *mut PyObject,
    *const *mut PyObject,
    usize,
    *mut PyObject,
) -> *mut PyObject;

/// The fast form of `call_dlpack`: `PyObject_Vectorcall` with keyword names from the cache of
/// interned strings; no dict, no empty tuple, no string decoding. For the default request
/// (`max_version=(1, 3)` only) the kwnames and the value are both cached tuples.
fn call_dlpack_vectorcall(
    api: &'static Api,
    vc: Vectorcall,
    names: &'static cpython::Names,
    method: &Owned,
    a: Attempt<'_>,
) -> Result<Owned, Error> {
    let Attempt { req, max, kw, keep } = a;
    let only_max = kw.max_version && !kw.stream && !kw.dl_device && !kw.copy;
    if only_max && max == DLPackVersion::CURRENT {
        let args = [names.current_version];
        // SAFETY: GIL held; `args` holds one borrowed value for the one keyword name.
        return Owned::new(api, unsafe {
            vc(method.as_ptr(), args.as_ptr(), 0, names.kw_max_version)
        })
        .ok_or_else(|| call_failed(api, keep, kw));
    }
    // General case: up to four keyword values, owned here, and a kwnames tuple made per call.
    let mut vals: [Option<Owned>; 4] = [None, None, None, None];
    let mut keys: [*mut PyObject; 4] = [core::ptr::null_mut(); 4];
    let mut n = 0;
    if kw.max_version {
        vals[n] = Some(pair(api, keep, max.major.into(), max.minor.into())?);
        keys[n] = names.max_version;
        n += 1;
    }
    if kw.stream {
        // SAFETY: GIL held; a new reference owned by `vals`.
        unsafe { (api.Py_IncRef)(req.stream) };
        vals[n] = Owned::new(api, req.stream);
        keys[n] = names.stream;
        n += 1;
    }
    if kw.dl_device {
        let t = pair(
            api,
            keep,
            req.dl_device.device_type.0.into(),
            req.dl_device.device_id.into(),
        )?;
        vals[n] = Some(t);
        keys[n] = names.dl_device;
        n += 1;
    }
    if kw.copy {
        // SAFETY: GIL held.
        let b =
            unsafe { (api.PyBool_FromLong)((req.copy == DLPACK_HELPERS_COPY_ALWAYS) as c_long) };
        vals[n] = Some(Owned::new(api, b).ok_or_else(|| pyerr(api, keep))?);
        keys[n] = names.copy;
        n += 1;
    }
    // SAFETY: GIL held.
    let kwnames = Owned::new(api, unsafe { (api.PyTuple_New)(n as isize) })
        .ok_or_else(|| pyerr(api, keep))?;
    let mut args = [core::ptr::null_mut(); 4];
    for i in 0..n {
        args[i] = vals[i]
            .as_ref()
            .map_or(core::ptr::null_mut(), |v| v.as_ptr());
        // SAFETY: GIL held; SetItem steals the new reference taken here.
        unsafe {
            (api.Py_IncRef)(keys[i]);
            (api.PyTuple_SetItem)(kwnames.as_ptr(), i as isize, keys[i]);
        }
    }
    // SAFETY: GIL held; `args` holds `n` borrowed values, one per name in `kwnames`.
    Owned::new(api, unsafe {
        vc(method.as_ptr(), args.as_ptr(), 0, kwnames.as_ptr())
    })
    .ok_or_else(|| call_failed(api, keep, kw))
}

/// The common first call, `obj.__dlpack__(max_version=(1, 3))`, made with
/// `PyObject_VectorcallMethod` (no bound method object, interned name, cached kwnames and value).
/// None when this Python lacks it or the cached names (the caller then takes the general path).
///
/// One ambiguity is resolved so that the answer is the general path's: an `AttributeError`
/// may come from the lookup (no `__dlpack__`: `NoDlpackMethod`) or from inside the producer's
/// `__dlpack__` (a producer error). On that failure only, the exception is put aside and the
/// attribute is looked up once more: present means the producer raised it (restored and
/// reported as the producer's); absent means the lookup's (restored, `NoDlpackMethod`).
fn call_dlpack_method(
    api: &'static Api,
    obj: *mut PyObject,
    keep: bool,
    kw: Keywords,
) -> Option<Result<Owned, Error>> {
    let vcm = api.PyObject_VectorcallMethod?;
    // SAFETY: GIL held (caller).
    let names = unsafe { api.names() }?;
    let args = [obj, names.current_version];
    // SAFETY: GIL held; `args` holds `self` and one borrowed value for the one keyword name
    // (nargsf 1 without PY_VECTORCALL_ARGUMENTS_OFFSET: the callee may not write args[-1]).
    let r = unsafe { vcm(names.dlpack, args.as_ptr(), 1, names.kw_max_version) };
    if let Some(r) = Owned::new(api, r) {
        return Some(Ok(r));
    }
    // SAFETY: GIL held; the call failed, so an exception is set.
    unsafe {
        if (api.PyErr_GivenExceptionMatches)((api.PyErr_Occurred)(), *api.PyExc_AttributeError) != 0
        {
            let (mut t, mut v, mut tb) = (
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
            );
            (api.PyErr_Fetch)(&mut t, &mut v, &mut tb);
            let m = (api.PyObject_GetAttr)(obj, names.dlpack);
            let present = !m.is_null();
            if present {
                (api.Py_DecRef)(m);
            } else {
                (api.PyErr_Clear)();
            }
            // The original exception, unchanged (`PyErr_Restore` steals the references).
            (api.PyErr_Restore)(t, v, tb);
            if !present {
                return Some(Err(missing_method(api, c"__dlpack__", keep)));
            }
        }
    }
    Some(Err(call_failed(api, keep, kw)))
}

/// The error of a failed lookup of `name` (an exception is set).
fn missing_method(api: &'static Api, name: &CStr, keep: bool) -> Error {
    // SAFETY: GIL held, an exception is set.
    match unsafe { api.catch(keep, |_| false) } {
        Ok((ExcClass::Attribute, msg)) => Error::NoDlpackMethod(format!(
            "the object has no {} method, so it does not implement DLPack (array API: \
             AttributeError; {msg})",
            name.to_string_lossy()
        )),
        Ok((class, msg)) => cpython::producer_error(class, msg),
        Err(e) => e,
    }
}

/// `getattr(obj, name)`. `AttributeError` is the array API's "does not implement DLPack"
/// (`NoDlpackMethod` in message mode; with `keep` the `AttributeError` itself stays set, as
/// NumPy's `from_dlpack` raises it).
fn get_method(
    api: &'static Api,
    obj: *mut PyObject,
    name: &CStr,
    keep: bool,
) -> Result<Owned, Error> {
    // SAFETY: GIL held. The interned name (cached) saves decoding `name` on every call.
    let attr = unsafe {
        match api.names() {
            Some(n) if name == c"__dlpack__" => (api.PyObject_GetAttr)(obj, n.dlpack),
            _ => (api.PyObject_GetAttrString)(obj, name.as_ptr()),
        }
    };
    Owned::new(api, attr).ok_or_else(|| missing_method(api, name, keep))
}

pub(crate) fn import(
    api: &'static Api,
    obj: *mut PyObject,
    req: &dlpack_helpers_import_request,
) -> Result<(*mut DLManagedTensorVersioned, u32), Error> {
    import_ordered(api, obj, req, false).map(|(t, how, _)| (t, how))
}

/// The stream a tensor imported through `__dlpack__` is ordered on: the request's `stream`
/// decoded for the tensor's device (`None` → CUDA's legacy default stream, ROCm's NULL stream,
/// `kDLCPU`'s "none"; -1 → no sync). A value this library's rules refuse is "no sync": no
/// ordering it can name.
fn ordered_by_request(
    api: &'static Api,
    req: &dlpack_helpers_import_request,
    t: *mut DLManagedTensorVersioned,
) -> Stream {
    // SAFETY: an accepted major-1 tensor.
    let device = unsafe { (*t).dl_tensor.device };
    if req.stream.is_null() {
        // `None`: the device's default, decided by the device type alone (no Python object).
        return match crate::rules::stream::decode(device, None, Default::default()) {
            Ok(s) => s,
            Err(_) => Stream::new(Kind::NoSync, 0),
        };
    }
    match super::stream::decode_object(api, req.stream.cast(), device, Default::default()) {
        Ok(s) => Stream::new(
            Kind::from_raw(s.kind).unwrap_or(Kind::NoSync),
            s.handle as usize,
        ),
        Err(_) => Stream::new(Kind::NoSync, 0),
    }
}

/// The import through a type's C exchange table (`DLPACK_HELPERS_IMPORT_EXCHANGE_API`), or
/// `Ok(None)` when `__dlpack__` must answer instead:
/// - an object whose own `__dict__` holds `__dlpack__`, or a name the guarded producer's
///   `__dlpack__` reads (`exchange::instance_overrides`: that is what it calls);
/// - a guarded table (`rules::TableGuard`: PyTorch's, PaddlePaddle's; issue 25): when the
///   tensor has a property the producer's `__dlpack__` refuses (`exchange::table_refuses`,
///   read before the export: requires grad); when its export may carry PyTorch's conjugate
///   bit (`rules::table_export_kept`: complex; the export is released);
/// - any table that fails (an ordinary exception, cleared, or a tensor this library refuses):
///   `__dlpack__` gives the producer's own answer (PyTorch's `BufferError` for a sparse tensor,
///   where its table raises `RuntimeError`);
/// - a device tensor whose table cannot name the stream it is ordered on (peer case 53).
///
/// `Err` only for an exception that stays set.
#[inline(always)]
fn via_table(
    api: &'static Api,
    found: &exchange::Found,
    obj: *mut PyObject,
    want_stream: bool,
) -> Result<Option<(*mut DLManagedTensorVersioned, u32, Stream)>, Error> {
    let (table, guard) = (found.table, found.guard);
    // SAFETY: GIL held; `obj` live (caller).
    if unsafe { exchange::instance_overrides(api, obj, found) }? {
        return Ok(None);
    }
    let guarded = guard != rules::TableGuard::None;
    // Everything that may run Python code comes before the export (`exchange::table_refuses`):
    // nothing runs between the export and the caller's use of the tensor.
    if guarded && exchange::table_refuses(api, obj, guard)? {
        return Ok(None);
    }
    // Those reads may have run Python code (a property, a `TorchFunctionMode`, a key's `__eq__`)
    // that changed the object's class (`x.__class__ = B`): the table and the per-type answers
    // were found for the type before (new-user run), so the export is made only for that type.
    if guarded || found.instance_dict {
        // SAFETY: GIL held; borrowed (`obj` keeps its type alive).
        let now = unsafe { api.type_of(obj) };
        if now as usize != found.ty {
            return Ok(None);
        }
    }
    // A table's failure is cleared (`keep` false) and answered by `__dlpack__`, whose answer is
    // the producer's own (a guarded table's `RuntimeError` for a sparse tensor where
    // `__dlpack__` raises `BufferError`; a class that publishes another type's table, whose
    // export refuses the object, while its `__dlpack__` works: new-user run). Only an
    // exception that stays set (not deriving from `Exception`) is the answer.
    let t = match exchange::import_no_sync(api, table, obj, false) {
        Ok(t) => t,
        Err(e) if !matches!(e, Error::PythonErrorSet(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    // SAFETY: an accepted major-1 tensor.
    let code = crate::abi::DLDataTypeCode(unsafe { (*t).dl_tensor.dtype.code });
    if !rules::table_export_kept(guard, code) {
        // SAFETY: ours since `import_no_sync`; released once, not touched again.
        unsafe { crate::capi::tensor::dlpack_tensor_delete(t) };
        return Ok(None);
    }
    if !want_stream {
        return Ok(Some((
            t,
            DLPACK_HELPERS_IMPORTED_EXCHANGE_API,
            Stream::new(Kind::NoSync, 0),
        )));
    }
    // SAFETY: an accepted major-1 tensor.
    let device = unsafe { (*t).dl_tensor.device };
    if crate::rules::stream::family(device.device_type) == crate::rules::stream::Family::Cpu {
        // No streams: nothing to ask the producer.
        return Ok(Some((
            t,
            DLPACK_HELPERS_IMPORTED_EXCHANGE_API,
            Stream::new(Kind::None, 0),
        )));
    }
    // Peer case 53: a no-sync export is ordered on the producer's current work stream; record
    // it. An answer that names nothing (NULL off kDLCPU, -1 with an ordinary exception, a NULL
    // function) releases the tensor and falls back to `__dlpack__`, which orders the data on
    // the requested stream.
    // SAFETY: a major-1 table; GIL held.
    match unsafe { exchange::work_stream(table, device, false, false) } {
        Ok(s) => Ok(Some((t, DLPACK_HELPERS_IMPORTED_EXCHANGE_API, s))),
        Err(e) => {
            // SAFETY: ours since `import_no_sync`; released once, not touched again.
            unsafe { crate::capi::tensor::dlpack_tensor_delete(t) };
            if matches!(e, Error::PythonErrorSet(_)) {
                Err(e)
            } else {
                Ok(None)
            }
        }
    }
}

/// The answer checked against the request (issue 34, peer case 58): a tensor on another device
/// than `dl_device` asked for (a producer that ignores the keyword) is `UNSUPPORTED_DEVICE`, a
/// tensor flagged `IS_COPIED` under `copy` never is `COPY_FORBIDDEN`; the tensor is released
/// once, here. The consumer would otherwise read device memory as the device it asked for.
#[cold]
fn answered_as_asked(
    t: *mut DLManagedTensorVersioned,
    req: &dlpack_helpers_import_request,
) -> Result<(), Error> {
    // SAFETY: an accepted major-1 tensor we own.
    let (device, flags) = unsafe { ((*t).dl_tensor.device, (*t).flags) };
    let refusal = if req.has_dl_device && device != req.dl_device {
        Some(Error::UnsupportedDevice(format!(
            "the producer was asked for dl_device ({}, {}) and answered a tensor on ({}, {}) \
             (it ignored the request; peer case 58)",
            req.dl_device.device_type.0,
            req.dl_device.device_id,
            device.device_type.0,
            device.device_id
        )))
    } else if req.copy == DLPACK_HELPERS_COPY_NEVER
        && flags & crate::abi::DLPACK_FLAG_BITMASK_IS_COPIED != 0
    {
        Some(Error::CopyForbidden(
            "the producer was asked for copy=False (DLPACK_HELPERS_COPY_NEVER) and answered a \
             tensor flagged DLPACK_FLAG_BITMASK_IS_COPIED"
                .to_owned(),
        ))
    } else {
        None
    };
    match refusal {
        Some(e) => {
            // SAFETY: ours since the accept; released once, not touched again.
            unsafe { crate::capi::tensor::dlpack_tensor_delete(t) };
            Err(e)
        }
        None => Ok(()),
    }
}

/// `import`, and with `want_stream` the stream the data is ordered on (see
/// `dlpack_object_import_with_stream`); without it the stream is not computed (`NoSync`).
pub(crate) fn import_ordered(
    api: &'static Api,
    obj: *mut PyObject,
    req: &dlpack_helpers_import_request,
    want_stream: bool,
) -> Result<(*mut DLManagedTensorVersioned, u32, Stream), Error> {
    let max = if req.max_version == DLPackVersion::new(0, 0) {
        DLPackVersion::CURRENT
    } else {
        req.max_version
    };
    let copy_given = req.copy != DLPACK_HELPERS_COPY_IF_NEEDED;
    if ![
        DLPACK_HELPERS_COPY_IF_NEEDED,
        DLPACK_HELPERS_COPY_NEVER,
        DLPACK_HELPERS_COPY_ALWAYS,
    ]
    .contains(&req.copy)
    {
        return Err(Error::invalid(format!(
            "request->copy is {}, not a DLPACK_HELPERS_COPY_* value",
            req.copy
        )));
    }
    if req.flags & !IMPORT_FLAGS != 0 {
        return Err(Error::invalid(format!(
            "request->flags has unknown bits 0x{:x}",
            req.flags
        )));
    }
    if req.has_dl_device {
        // A negative id is no device: never passed on to the producer (peer case 54).
        crate::rules::device::check_id(req.dl_device, "request->dl_device")?;
    }
    let keep = req.flags & DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR != 0;
    // The table exports a versioned (major 1) tensor: a request whose `max_version` is below
    // 1.0 asks for the legacy struct, which only `__dlpack__` gives (issue 26, new-user run).
    if req.flags & DLPACK_HELPERS_IMPORT_EXCHANGE_API != 0
        && max.major >= 1
        && req.stream.is_null()
        && !req.has_dl_device
        && !copy_given
    {
        // Only the import function of the table is needed here (see `exchange::find_import`);
        // any other answer falls back to `__dlpack__`, except an exception that must stay set.
        if let Some(found) = exchange::find_import(api, obj)? {
            if let Some(done) = via_table(api, &found, obj, want_stream)? {
                return Ok(done);
            }
        }
    }
    let mut kw = rules::first_attempt(!req.stream.is_null(), req.has_dl_device, copy_given);
    let mut how = 0;
    // The common call (max_version 1.3 alone) first, without a bound method.
    let only_max = kw.max_version && !kw.stream && !kw.dl_device && !kw.copy;
    let first = if only_max && max == DLPackVersion::CURRENT {
        call_dlpack_method(api, obj, keep, kw)
    } else {
        None
    };
    let first = match first {
        Some(Ok(r)) => Some(r),
        Some(Err(Error::ProducerTypeError(msg))) => {
            kw = rules::retry_after_type_error(kw, &msg)?;
            how |= DLPACK_HELPERS_IMPORTED_AFTER_RETRY;
            None
        }
        Some(Err(e)) => return Err(e),
        None => None,
    };
    let result = if let Some(r) = first {
        r
    } else {
        let method = get_method(api, obj, c"__dlpack__", keep)?;
        loop {
            match call_dlpack(api, &method, Attempt { req, max, kw, keep }) {
                Ok(r) => break r,
                Err(Error::ProducerTypeError(msg)) => {
                    kw = rules::retry_after_type_error(kw, &msg)?;
                    how |= DLPACK_HELPERS_IMPORTED_AFTER_RETRY;
                }
                Err(e) => return Err(e),
            }
        }
    };
    let taken = capsule::take(api, result.as_ptr(), keep).map_err(|e| match e {
        Error::NotACapsule(_) | Error::CapsuleName(_) => {
            Error::BadProducerResult(format!("__dlpack__ returned an unusable value: {e}"))
        }
        Error::CapsuleConsumed(m) => Error::CapsuleConsumed(format!(
            "__dlpack__ returned a capsule that was already consumed: {m}"
        )),
        e => e,
    })?;
    let (t, legacy) = capsule::accept(taken, req.flags)?;
    if req.has_dl_device || req.copy == DLPACK_HELPERS_COPY_NEVER {
        answered_as_asked(t, req)?;
    }
    if legacy {
        how |= DLPACK_HELPERS_IMPORTED_LEGACY;
    }
    let s = if want_stream {
        ordered_by_request(api, req, t)
    } else {
        Stream::new(Kind::NoSync, 0)
    };
    Ok((t, how, s))
}

/// Import any Python object implementing DLPack: the C counterpart of `from_dlpack`'s first half.
///
/// Calls `obj.__dlpack__(max_version=…, stream=…, dl_device=…, copy=…)`, passing `max_version`
/// always (peer case 18) and the other keywords only when `request` sets them; on `TypeError`
/// (an older producer) retries without `max_version`, but only when neither `dl_device` nor
/// `copy` was requested (peer case 21; other exceptions, such as `NotImplementedError`, are
/// never retried). Consumes the returned capsule (rename first: peer case 1), checks the version
/// it got (a major other than 1 is released and refused: peer case 20) and the flags of a
/// versioned tensor (bits its declared version does not define are released and refused,
/// `INVALID_FLAGS`), validates a versioned tensor by `dlpack_tensor_validate`'s rules with
/// `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES` (issue 34: one that fails is released and
/// refused with its status; a view this library made is not checked again), and converts a legacy
/// tensor as `dlpack_legacy_tensor_wrap` does: validated, version 1.3, strides filled in, and
/// marked `DLPACK_FLAG_BITMASK_READ_ONLY` unless the request has
/// `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE` (the legacy struct cannot say read-only: peer case
/// 50); `out_how` then has `DLPACK_HELPERS_IMPORTED_LEGACY`. A legacy tensor that fails
/// validation (for example `OVERFLOW`: its implied strides do not fit, peer case 49) is released
/// through its deleter and refused.
///
/// The answer is checked against the request (issue 34, peer case 58): a tensor on another
/// device than `request->dl_device`, or flagged `IS_COPIED` under `DLPACK_HELPERS_COPY_NEVER`,
/// is released and refused (`UNSUPPORTED_DEVICE`, `COPY_FORBIDDEN`). `__dlpack_device__` is
/// not asked: the tensor's own `device` is what its memory is, and what the caller gets.
///
/// - `obj`: any Python object (`PyObject *`), borrowed.
/// - `request`: may be NULL for the defaults (max_version 1.3, nothing else passed, flags 0).
/// - `out_tensor`: receives the tensor; the caller owns it and calls `dlpack_tensor_delete`
///   exactly once when done (peer case 7).
/// - `out_how`: may be NULL; receives `DLPACK_HELPERS_IMPORTED_*` bits.
///
/// Returns OK; `_NO_DLPACK_METHOD` (no `__dlpack__`: `AttributeError`); `_PRODUCER_BUFFER_ERROR`
/// (the producer raised `BufferError`: kept as `BufferError`); `_PRODUCER_TYPE_ERROR` (a
/// `TypeError` with no retry left); `_PRODUCER_ERROR` (any other exception; the message starts
/// with its type); `_BAD_PRODUCER_RESULT` (no DLPack capsule returned); `_CAPSULE_CONSUMED`
/// (the producer returned an already consumed `"used_…"` capsule); `_UNSUPPORTED_VERSION`;
/// `_INVALID_FLAGS` (a versioned tensor, from `__dlpack__` or the C exchange API, whose flags
/// have bits its declared version does not define, as `dlpack_tensor_validate` refuses them;
/// released through its deleter); the
/// validation statuses of `dlpack_tensor_validate` (`dlpack_legacy_tensor_validate` for a
/// legacy tensor);
/// `_OUT_OF_MEMORY`; `_INVALID_ARGUMENT` (bad `copy` or unknown `flags` bits);
/// `_NULL_POINTER`; `_PYTHON_UNAVAILABLE`; `_PYTHON_ERROR_SET`.
///
/// Python exceptions: in the default (message) mode an exception deriving from `Exception` is
/// cleared and the status and `dlpack_last_error_message()` carry it. With
/// `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR` every failure caused by a Python exception (the
/// producer's, including the `AttributeError` of a missing `__dlpack__`, or a failed Python
/// C-API call) leaves that exception set, unchanged, and returns `_PYTHON_ERROR_SET`; the
/// `TypeError` consumed by the retry rule is the one exception still cleared. In both modes an
/// exception that does not derive from `Exception` (`KeyboardInterrupt`, `SystemExit`, ...) is
/// never caught: it stays set and the status is `_PYTHON_ERROR_SET`. The caller holds the GIL.
///
/// @param[in] request May be NULL.
/// @param[out] out_how May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `obj` or `out_tensor` is NULL
/// @retval DLPACK_HELPERS_STATUS_NO_DLPACK_METHOD when `obj` has no `__dlpack__` (`AttributeError`)
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR when the producer raised `BufferError`
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_TYPE_ERROR when the producer raised `TypeError` and no
///   retry applies
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when the producer raised another exception (the
///   message starts with its type)
/// @retval DLPACK_HELPERS_STATUS_BAD_PRODUCER_RESULT when `__dlpack__` returned no DLPack capsule
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor received has a major other
///   than 1 (it was released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when the versioned tensor received has flag bits
///   its declared version does not define (it was released)
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE when `request` has `dl_device` and the
///   producer answered a tensor on another device (it was released; peer case 58)
/// @retval DLPACK_HELPERS_STATUS_COPY_FORBIDDEN when `request->copy` is
///   `DLPACK_HELPERS_COPY_NEVER` and the producer answered a tensor flagged `IS_COPIED` (it was
///   released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `request` has a bad `copy` or `flags`
/// @retval DLPACK_HELPERS_STATUS_CAPSULE_CONSUMED when the producer returned an already consumed
///   `used_` capsule
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative or above
///   `DLPACK_HELPERS_MAX_NDIM` (the tensor is released)
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0` (the tensor is
///   released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative (the tensor is
///   released)
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space (the tensor is
///   released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code (the tensor is released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the tensor's `device.device_id` is negative,
///   or `request->has_dl_device` and `request->dl_device.device_id` is negative (the producer
///   is then not called)
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device (the tensor is released)
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when a legacy tensor's wrapper cannot be allocated
///   (the tensor is released)
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET when a Python exception is left set: with
///   `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`, or one not deriving from `Exception`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_object_import(
    obj: *mut c_void,
    request: *const dlpack_helpers_import_request,
    out_tensor: *mut *mut DLManagedTensorVersioned,
    out_how: *mut u32,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        if obj.is_null() {
            return Err(Error::NullPointer("obj"));
        }
        let api = cpython::require("dlpack_object_import")?;
        // SAFETY: a non-NULL request is a live struct (caller contract).
        let req = unsafe { request.as_ref() }.copied().unwrap_or_default();
        let (t, how) = import(api, obj, &req)?;
        // SAFETY: non-NULL caller storage; `out_how` optional.
        unsafe {
            out.write(t);
            if !out_how.is_null() {
                out_how.write(how);
            }
        }
        Ok(())
    })
}

/// `dlpack_object_import`, and the stream the imported data is ordered on: what a consumer
/// must wait for (or launch on) before using device memory, and what a re-exporting producer
/// must order later exports on (peer case 53: tvm-ffi PR #690 and #466).
///
/// - `obj`, `request`, `out_tensor`, `out_how`: as for `dlpack_object_import`.
/// - `out_stream`: receives the stream (written only on OK):
///   - through the type's C exchange API (`DLPACK_HELPERS_IMPORT_EXCHANGE_API`: the producer's
///     no-sync export): for a `kDLCPU` tensor kind `DLPACK_HELPERS_STREAM_NONE`; for any other
///     device the producer's current work stream, asked from the same table's
///     `current_work_stream` for the tensor's device right after the import and decoded as by
///     `dlpack_exchange_api_current_work_stream` (`_HANDLE`, or CUDA's `_LEGACY_DEFAULT` /
///     `_PER_THREAD_DEFAULT` for 0x1 / 0x2). When the table cannot name it (it answers NULL off
///     `kDLCPU`, or -1 with an exception deriving from `Exception`, which is cleared, or its
///     function is NULL), the tensor is released and the object is imported through
///     `__dlpack__` instead (no tensor is ever returned with an ordering nobody knows); a
///     non-`Exception` exception stays set (`_PYTHON_ERROR_SET`, the tensor released);
///   - through `__dlpack__`: the producer ordered the data on the stream the request passed, so
///     that stream decoded for the tensor's device as by `dlpack_python_stream_decode` (no
///     `stream`: CUDA's legacy default stream, ROCm's NULL stream `_DEFAULT`, `kDLCPU`'s
///     `_NONE`; `stream=-1`: `_NO_SYNC`, no ordering at all; a value this library's rules
///     refuse also `_NO_SYNC`).
///
/// `dlpack_object_import` stays as it was: it never asks the table for a stream.
/// Statuses, GIL, ownership and Python exceptions as for `dlpack_object_import`.
///
/// @param[in] request May be NULL.
/// @param[out] out_how May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `obj`, `out_tensor` or `out_stream` is NULL
/// @retval DLPACK_HELPERS_STATUS_NO_DLPACK_METHOD when `obj` has no `__dlpack__` (`AttributeError`)
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR when the producer raised `BufferError`
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_TYPE_ERROR when the producer raised `TypeError` and no
///   retry applies
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when the producer raised another exception (the
///   message starts with its type)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when `request->has_dl_device` and
///   `request->dl_device.device_id` is negative (the producer is not called)
/// @retval DLPACK_HELPERS_STATUS_BAD_PRODUCER_RESULT when `__dlpack__` returned no DLPack capsule
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor received has a major other
///   than 1 (it was released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_FLAGS when the versioned tensor received has flag bits
///   its declared version does not define (it was released)
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE when `request` has `dl_device` and the
///   producer answered a tensor on another device (it was released; peer case 58)
/// @retval DLPACK_HELPERS_STATUS_COPY_FORBIDDEN when `request->copy` is
///   `DLPACK_HELPERS_COPY_NEVER` and the producer answered a tensor flagged `IS_COPIED` (it was
///   released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `request` has a bad `copy` or `flags`
/// @retval DLPACK_HELPERS_STATUS_CAPSULE_CONSUMED when the producer returned an already consumed
///   `used_` capsule
/// @retval DLPACK_HELPERS_STATUS_INVALID_NDIM when `ndim` is negative, above
///   `DLPACK_HELPERS_MAX_NDIM` or above `options->max_ndim` (the tensor is released)
/// @retval DLPACK_HELPERS_STATUS_NULL_SHAPE when `shape` is NULL and `ndim != 0` (the tensor is
///   released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_SHAPE when an extent is negative (the tensor is
///   released)
/// @retval DLPACK_HELPERS_STATUS_OVERFLOW when the element count, byte size, byte range or
///   `byte_offset` does not fit in `int64_t` or the address space (the tensor is
///   released)
/// @retval DLPACK_HELPERS_STATUS_INVALID_DTYPE when the dtype code is unknown, `lanes` is 0 or
///   `bits` is not allowed for the code (the tensor is released)
/// @retval DLPACK_HELPERS_STATUS_NULL_DATA when `data` is NULL for a tensor with elements on a
///   pointer-addressed device (the tensor is released)
/// @retval DLPACK_HELPERS_STATUS_OUT_OF_MEMORY when a legacy tensor's wrapper cannot be allocated
///   (the tensor is released)
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET when a Python exception is left set: with
///   `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`, or one not deriving from `Exception`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_object_import_with_stream(
    obj: *mut c_void,
    request: *const dlpack_helpers_import_request,
    out_tensor: *mut *mut DLManagedTensorVersioned,
    out_how: *mut u32,
    out_stream: *mut crate::capi::stream::dlpack_helpers_stream,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_tensor, "out_tensor")?;
        let out_s = out_ptr(out_stream, "out_stream")?;
        if obj.is_null() {
            return Err(Error::NullPointer("obj"));
        }
        let api = cpython::require("dlpack_object_import_with_stream")?;
        // SAFETY: a non-NULL request is a live struct (caller contract).
        let req = unsafe { request.as_ref() }.copied().unwrap_or_default();
        let (t, how, s) = import_ordered(api, obj, &req, true)?;
        // SAFETY: non-NULL caller storage; `out_how` optional.
        unsafe {
            out.write(t);
            out_s.write(crate::capi::stream::dlpack_helpers_stream {
                kind: s.kind.as_raw(),
                handle: s.handle as *mut c_void,
            });
            if !out_how.is_null() {
                out_how.write(how);
            }
        }
        Ok(())
    })
}

/// An `int` (or a plain `Enum` member's `.value`) as `i64`: `Ok(None)` when it is not one (the
/// ordinary exception cleared); an exception that must stay set (`keep`, or not an
/// `Exception`) is `Err(PythonErrorSet)`.
fn as_i64(api: &'static Api, item: &Owned, keep: bool) -> Result<Option<i64>, Error> {
    // SAFETY: GIL held.
    unsafe {
        // `True` is an `int` to Python, but no device number (`stream=True` is refused the
        // same way).
        if api.is_bool(item.as_ptr()) {
            return Ok(None);
        }
        let v = (api.PyLong_AsLongLong)(item.as_ptr());
        if v == -1 && !(api.PyErr_Occurred)().is_null() {
            // Not an int: the TypeError/OverflowError is part of this check, but a
            // non-Exception is never swallowed.
            api.catch(false, |_| true)?;
            // A plain Enum member: use its value.
            let value = Owned::new(
                api,
                (api.PyObject_GetAttrString)(item.as_ptr(), c"value".as_ptr()),
            );
            let Some(value) = value else {
                api.catch(keep, |c| c == ExcClass::Attribute)?;
                return Ok(None);
            };
            let v = (api.PyLong_AsLongLong)(value.as_ptr());
            if v == -1 && !(api.PyErr_Occurred)().is_null() {
                api.catch(false, |_| true)?;
                return Ok(None);
            }
            return Ok(Some(v));
        }
        Ok(Some(v))
    }
}

/// Call `obj.__dlpack_device__()` and decode the `(device_type, device_id)` pair.
///
/// - `obj`: any Python object (`PyObject *`), borrowed.
/// - `out_device`: receives the pair; device types unknown to this library are passed through.
///   A device id of `None` is read as 0 for `kDLCPU` (PaddlePaddle 3.3 answers `(kDLCPU,
///   None)`; a CPU has one device) and is `_BAD_PRODUCER_RESULT` for every other device type
///   (issue 25).
///   A negative `device_id` is refused (`_INVALID_DEVICE`, `ValueError`; peer case 54).
///
/// Returns OK; `_NO_DLPACK_METHOD` (`AttributeError`); `_PRODUCER_BUFFER_ERROR`,
/// `_PRODUCER_TYPE_ERROR`, `_PRODUCER_ERROR` (the method raised); `_BAD_PRODUCER_RESULT` (not a
/// pair of integers, or out of `int32` range); `_NULL_POINTER`; `_PYTHON_UNAVAILABLE`;
/// `_PYTHON_ERROR_SET` (an exception not deriving from `Exception`, left set). The caller
/// holds the GIL. It is `dlpack_object_query_device(obj, 0, out_device)`.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `obj` or `out_device` is NULL
/// @retval DLPACK_HELPERS_STATUS_NO_DLPACK_METHOD when `obj` has no `__dlpack_device__`
///   (`AttributeError`)
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR when the method raised `BufferError`
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_TYPE_ERROR when the method raised `TypeError`
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when the method raised another exception
/// @retval DLPACK_HELPERS_STATUS_BAD_PRODUCER_RESULT when the result is not a pair of integers in
///   `int32` range
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the pair's `device_id` is negative (peer case
///   54: an index-less device is not -1)
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET when a Python exception that does not derive from
///   `Exception` was raised: it is left set
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_object_get_device(
    obj: *mut c_void,
    out_device: *mut DLDevice,
) -> dlpack_helpers_status {
    boundary::status(|| query_device("dlpack_object_get_device", obj, 0, out_device))
}

/// `dlpack_object_get_device` with request flags: `flags` may have
/// `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR` (any other bit is `_INVALID_ARGUMENT`). With it,
/// a failure caused by a Python exception (`__dlpack_device__` missing or raising, or its
/// result raising while it is read as a pair) leaves that exception set, unchanged, and returns
/// `DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET`; a result that is readable but not a pair of
/// `int32` integers is still `_BAD_PRODUCER_RESULT` (no exception involved). Statuses, GIL and
/// outputs otherwise as `dlpack_object_get_device`.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `obj` or `out_device` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `flags` has bits other than
///   `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`
/// @retval DLPACK_HELPERS_STATUS_NO_DLPACK_METHOD when `obj` has no `__dlpack_device__`
///   (`AttributeError`)
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR when the method raised `BufferError`
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_TYPE_ERROR when the method raised `TypeError`
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when the method raised another exception
/// @retval DLPACK_HELPERS_STATUS_BAD_PRODUCER_RESULT when the result is not a pair of integers in
///   `int32` range
/// @retval DLPACK_HELPERS_STATUS_INVALID_DEVICE when the pair's `device_id` is negative (peer case
///   54: an index-less device is not -1)
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET when a Python exception is left set: with
///   `DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR`, or one not deriving from `Exception`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_object_query_device(
    obj: *mut c_void,
    flags: u32,
    out_device: *mut DLDevice,
) -> dlpack_helpers_status {
    boundary::status(|| query_device("dlpack_object_query_device", obj, flags, out_device))
}

fn query_device(
    function: &'static str,
    obj: *mut c_void,
    flags: u32,
    out_device: *mut DLDevice,
) -> Result<(), Error> {
    let out = out_ptr(out_device, "out_device")?;
    if obj.is_null() {
        return Err(Error::NullPointer("obj"));
    }
    if flags & !DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR != 0 {
        return Err(Error::invalid(format!(
            "flags has bits 0x{flags:x}; only DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR applies"
        )));
    }
    let keep = flags & DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR != 0;
    let api = cpython::require(function)?;
    let m = get_method(api, obj, c"__dlpack_device__", keep)?;
    // SAFETY: GIL held.
    let r = unsafe {
        let args = Owned::new(api, (api.PyTuple_New)(0)).ok_or_else(|| pyerr(api, keep))?;
        Owned::new(
            api,
            (api.PyObject_Call)(m.as_ptr(), args.as_ptr(), core::ptr::null_mut()),
        )
        .ok_or_else(|| api.failure(keep))?
    };
    let bad = || {
        Error::BadProducerResult(
            "__dlpack_device__ did not return a (device_type, device_id) pair of int32 integers"
                .into(),
        )
    };
    // A Python exception raised while the result is read: with `keep` it stays set; else an
    // ordinary one is cleared and the result is "bad"; a non-Exception always stays set.
    let read_failed = || -> Error {
        // SAFETY: GIL held, an exception is set.
        match unsafe { api.catch(keep, |_| false) } {
            Ok(_) => bad(),
            Err(e) => e,
        }
    };
    // Not a sequence (None, a number): named as such without asking `len()`, whose `TypeError`
    // ("object of type 'NoneType' has no len()") says nothing about the method (issue 34).
    // SAFETY: GIL held, `r` live.
    if unsafe { (api.PySequence_Check)(r.as_ptr()) } == 0 {
        return Err(Error::BadProducerResult(format!(
            "__dlpack_device__ returned {}, not a (device_type, device_id) pair of int32 integers",
            super::stream::describe(api, r.as_ptr())
        )));
    }
    // SAFETY: GIL held.
    let n = unsafe { (api.PySequence_Size)(r.as_ptr()) };
    if n < 0 {
        // A sequence whose `__len__` raised: the producer's own exception, kept with `keep`
        // (spec PY-OBJECT-QUERY-DEVICE), else cleared into the message.
        return Err(read_failed());
    }
    if n != 2 {
        return Err(bad());
    }
    let mut vals = [0i64; 2];
    let mut id_is_none = false;
    for (i, slot) in vals.iter_mut().enumerate() {
        // SAFETY: GIL held.
        let item = Owned::new(api, unsafe {
            (api.PySequence_GetItem)(r.as_ptr(), i as isize)
        });
        let Some(item) = item else {
            return Err(read_failed());
        };
        if i == 1 && item.as_ptr() == api._Py_NoneStruct {
            id_is_none = true; // decided below, once the device type is known
            continue;
        }
        *slot = as_i64(api, &item, keep)?.ok_or_else(bad)?;
    }
    let dt = i32::try_from(vals[0]).map_err(|_| bad())?;
    let id = if id_is_none {
        rules::none_device_id(DLDeviceType(dt)).ok_or_else(|| {
            Error::BadProducerResult(format!(
                "__dlpack_device__ returned ({dt}, None): a device id of None is read as 0 only \
                 for kDLCPU (1), which has one device; for any other device type it names no \
                 device"
            ))
        })?
    } else {
        i32::try_from(vals[1]).map_err(|_| bad())?
    };
    let d = DLDevice {
        device_type: DLDeviceType(dt),
        device_id: id,
    };
    // Issue 22 (peer case 54): a negative id is never returned; unknown types pass through.
    crate::rules::device::check_id(d, "__dlpack_device__()")?;
    // SAFETY: non-NULL caller storage.
    unsafe { out.write(d) };
    Ok(())
}
