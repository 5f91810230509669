//! Importing any object that implements `__dlpack__`, and `__dlpack_device__`.

use super::capsule::{self, Taken};
use super::exchange;
use super::runtime::{self, Api, ExcClass, Owned, PyObject};
use crate::abi::{DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion};
use crate::capi::boundary::{self, out_ptr};
use crate::capi::error::dlpack_helpers_status;
use crate::rules::Error;
use crate::rules::python::{self as rules, Keywords};
use core::ffi::{CStr, c_long, c_void};

use crate::capi::stream::{
    DLPACK_HELPERS_COPY_ALWAYS, DLPACK_HELPERS_COPY_IF_NEEDED, DLPACK_HELPERS_COPY_NEVER,
    dlpack_helpers_copy_mode,
};

/// Request flag: try the type's C exchange API (`__dlpack_c_exchange_api__`, DLPack 1.3, or
/// `__c_dlpack_exchange_api__`, 1.2) first, when the request passes no `stream`, `dl_device` or
/// `copy`. That path does **no stream synchronisation** (the producer's `…NoSync` export): a
/// consumer of device memory must launch on the producer's current stream
/// (`current_work_stream`). Without a usable table the call falls back to `__dlpack__`.
pub const DLPACK_HELPERS_IMPORT_EXCHANGE_API: u32 = 0x1;

/// Out bit of `dlpack_object_import`: the producer returned a legacy `"dltensor"` capsule, which
/// was wrapped (version 1.0, flags 0).
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

fn set(api: &'static Api, d: &Owned, key: &CStr, value: *mut PyObject) -> Result<(), Error> {
    let Some(v) = Owned::new(api, value) else {
        return Err(pyerr(api));
    };
    // SAFETY: GIL held; SetItemString does not steal.
    if unsafe { (api.PyDict_SetItemString)(d.as_ptr(), key.as_ptr(), v.as_ptr()) } != 0 {
        return Err(pyerr(api));
    }
    Ok(())
}

fn pyerr(api: &'static Api) -> Error {
    // SAFETY: GIL held, an exception is set.
    let (class, msg) = unsafe { api.take_error() };
    runtime::producer_error(class, msg)
}

fn pair(api: &'static Api, a: i64, b: i64) -> Result<Owned, Error> {
    // SAFETY: GIL held.
    unsafe {
        let t = Owned::new(api, (api.PyTuple_New)(2)).ok_or_else(|| pyerr(api))?;
        for (i, x) in [a, b].into_iter().enumerate() {
            let v = (api.PyLong_FromLong)(x as c_long);
            if v.is_null() || (api.PyTuple_SetItem)(t.as_ptr(), i as isize, v) != 0 {
                return Err(pyerr(api));
            }
        }
        Ok(t)
    }
}

fn call_dlpack(
    api: &'static Api,
    method: &Owned,
    req: &dlpack_helpers_import_request,
    max: DLPackVersion,
    kw: Keywords,
) -> Result<Owned, (ExcClass, String)> {
    // SAFETY: GIL held (every caller).
    if let (Some(vc), Some(names)) = (api.PyObject_Vectorcall, unsafe { api.names() }) {
        return call_dlpack_vectorcall(api, vc, names, method, req, max, kw);
    }
    let build = || -> Result<Owned, Error> {
        // SAFETY: GIL held.
        let d = Owned::new(api, unsafe { (api.PyDict_New)() }).ok_or_else(|| pyerr(api))?;
        if kw.max_version {
            let t = pair(api, max.major.into(), max.minor.into())?;
            set(api, &d, c"max_version", t.into_raw())?;
        }
        if kw.stream {
            // SAFETY: GIL held; a new reference for `set` to release.
            unsafe { (api.Py_IncRef)(req.stream) };
            set(api, &d, c"stream", req.stream)?;
        }
        if kw.dl_device {
            let t = pair(
                api,
                req.dl_device.device_type.0.into(),
                req.dl_device.device_id.into(),
            )?;
            set(api, &d, c"dl_device", t.into_raw())?;
        }
        if kw.copy {
            // SAFETY: GIL held.
            set(api, &d, c"copy", unsafe {
                (api.PyBool_FromLong)((req.copy == DLPACK_HELPERS_COPY_ALWAYS) as c_long)
            })?;
        }
        Ok(d)
    };
    let kwargs = build().map_err(|e| (ExcClass::Other, e.to_string()))?;
    // SAFETY: GIL held.
    unsafe {
        let args = Owned::new(api, (api.PyTuple_New)(0)).ok_or_else(|| api.take_error())?;
        Owned::new(
            api,
            (api.PyObject_Call)(method.as_ptr(), args.as_ptr(), kwargs.as_ptr()),
        )
        .ok_or_else(|| api.take_error())
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
    names: &'static runtime::Names,
    method: &Owned,
    req: &dlpack_helpers_import_request,
    max: DLPackVersion,
    kw: Keywords,
) -> Result<Owned, (ExcClass, String)> {
    let only_max = kw.max_version && !kw.stream && !kw.dl_device && !kw.copy;
    if only_max && max == DLPackVersion::CURRENT {
        let args = [names.current_version];
        // SAFETY: GIL held; `args` holds one borrowed value for the one keyword name.
        return Owned::new(api, unsafe {
            vc(method.as_ptr(), args.as_ptr(), 0, names.kw_max_version)
        })
        .ok_or_else(|| unsafe { api.take_error() });
    }
    // General case: up to four keyword values, owned here, and a kwnames tuple made per call.
    let err = |e: Error| (ExcClass::Other, e.to_string());
    let mut vals: [Option<Owned>; 4] = [None, None, None, None];
    let mut keys: [*mut PyObject; 4] = [core::ptr::null_mut(); 4];
    let mut n = 0;
    if kw.max_version {
        vals[n] = Some(pair(api, max.major.into(), max.minor.into()).map_err(err)?);
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
            req.dl_device.device_type.0.into(),
            req.dl_device.device_id.into(),
        )
        .map_err(err)?;
        vals[n] = Some(t);
        keys[n] = names.dl_device;
        n += 1;
    }
    if kw.copy {
        // SAFETY: GIL held.
        let b =
            unsafe { (api.PyBool_FromLong)((req.copy == DLPACK_HELPERS_COPY_ALWAYS) as c_long) };
        vals[n] = Some(Owned::new(api, b).ok_or_else(|| err(pyerr(api)))?);
        keys[n] = names.copy;
        n += 1;
    }
    // SAFETY: GIL held.
    let kwnames = Owned::new(api, unsafe { (api.PyTuple_New)(n as isize) })
        .ok_or_else(|| unsafe { api.take_error() })?;
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
    .ok_or_else(|| unsafe { api.take_error() })
}

fn get_method(api: &'static Api, obj: *mut PyObject, name: &CStr) -> Result<Owned, Error> {
    // SAFETY: GIL held. The interned name (cached) saves decoding `name` on every call.
    let attr = unsafe {
        match api.names() {
            Some(n) if name == c"__dlpack__" => (api.PyObject_GetAttr)(obj, n.dlpack),
            _ => (api.PyObject_GetAttrString)(obj, name.as_ptr()),
        }
    };
    match Owned::new(api, attr) {
        Some(m) => Ok(m),
        None => {
            // SAFETY: GIL held, an exception is set.
            let (class, msg) = unsafe { api.take_error() };
            if class == ExcClass::Attribute {
                Err(Error::NoDlpackMethod(format!(
                    "the object has no {} method, so it does not implement DLPack (array API: \
                     AttributeError; {msg})",
                    name.to_string_lossy()
                )))
            } else {
                Err(runtime::producer_error(class, msg))
            }
        }
    }
}

pub(crate) fn import(
    api: &'static Api,
    obj: *mut PyObject,
    req: &dlpack_helpers_import_request,
) -> Result<(*mut DLManagedTensorVersioned, u32), Error> {
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
    if req.flags & !DLPACK_HELPERS_IMPORT_EXCHANGE_API != 0 {
        return Err(Error::invalid(format!(
            "request->flags has unknown bits 0x{:x}",
            req.flags
        )));
    }
    if req.flags & DLPACK_HELPERS_IMPORT_EXCHANGE_API != 0
        && req.stream.is_null()
        && !req.has_dl_device
        && !copy_given
    {
        if let Ok(table) = exchange::find(api, obj) {
            return exchange::import_no_sync(api, table, obj)
                .map(|t| (t, DLPACK_HELPERS_IMPORTED_EXCHANGE_API));
        }
    }
    let method = get_method(api, obj, c"__dlpack__")?;
    let mut kw = rules::first_attempt(!req.stream.is_null(), req.has_dl_device, copy_given);
    let mut how = 0;
    let result = loop {
        match call_dlpack(api, &method, req, max, kw) {
            Ok(r) => break r,
            Err((ExcClass::Type, msg)) => {
                kw = rules::retry_after_type_error(kw, &msg)?;
                how |= DLPACK_HELPERS_IMPORTED_AFTER_RETRY;
            }
            Err((class, msg)) => return Err(runtime::producer_error(class, msg)),
        }
    };
    let taken = capsule::take(api, result.as_ptr()).map_err(|e| match e {
        Error::NotACapsule(_) | Error::CapsuleName(_) | Error::CapsuleConsumed(_) => {
            Error::BadProducerResult(format!("__dlpack__ returned an unusable value: {e}"))
        }
        e => e,
    })?;
    let t = match taken {
        Taken::Versioned(t) => capsule::accept_versioned(t)?,
        Taken::Legacy(l) => {
            how |= DLPACK_HELPERS_IMPORTED_LEGACY;
            capsule::wrap_legacy(l)
        }
    };
    Ok((t, how))
}

/// Import any Python object implementing DLPack: the C counterpart of `from_dlpack`'s first half.
///
/// Calls `obj.__dlpack__(max_version=…, stream=…, dl_device=…, copy=…)`, passing `max_version`
/// always (peer case 18) and the other keywords only when `request` sets them; on `TypeError`
/// (an older producer) retries without `max_version`, but only when neither `dl_device` nor
/// `copy` was requested (peer case 21; other exceptions, such as `NotImplementedError`, are
/// never retried). Consumes the returned capsule (rename first: peer case 1), checks the version
/// it got (a major other than 1 is released and refused: peer case 20), and wraps a legacy
/// tensor as versioned (version 1.0, flags 0).
///
/// - `obj`: any Python object (`PyObject *`), borrowed.
/// - `request`: may be NULL for the defaults (max_version 1.3, nothing else passed).
/// - `out_tensor`: receives the tensor; the caller owns it and calls `dlpack_tensor_delete`
///   exactly once when done (peer case 7).
/// - `out_how`: may be NULL; receives `DLPACK_HELPERS_IMPORTED_*` bits.
///
/// Returns OK; `_NO_DLPACK_METHOD` (no `__dlpack__`: `AttributeError`); `_PRODUCER_BUFFER_ERROR`
/// (the producer raised `BufferError`: kept as `BufferError`); `_PRODUCER_TYPE_ERROR` (a
/// `TypeError` with no retry left); `_PRODUCER_ERROR` (any other exception; the message starts
/// with its type); `_BAD_PRODUCER_RESULT` (no DLPack capsule returned); `_UNSUPPORTED_VERSION`;
/// `_INVALID_ARGUMENT` (bad `copy` or `flags`); `_NULL_POINTER`; `_PYTHON_UNAVAILABLE`. Python
/// exceptions are cleared: the status and `dlpack_last_error_message()` carry them. The caller
/// holds the GIL.
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
        let api = runtime::require("dlpack_object_import")?;
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

fn as_i64(api: &'static Api, item: &Owned) -> Option<i64> {
    // SAFETY: GIL held.
    unsafe {
        let v = (api.PyLong_AsLongLong)(item.as_ptr());
        if v == -1 && !(api.PyErr_Occurred)().is_null() {
            (api.PyErr_Clear)();
            // A plain Enum member: use its value.
            let value = Owned::new(
                api,
                (api.PyObject_GetAttrString)(item.as_ptr(), c"value".as_ptr()),
            );
            let Some(value) = value else {
                (api.PyErr_Clear)();
                return None;
            };
            let v = (api.PyLong_AsLongLong)(value.as_ptr());
            if v == -1 && !(api.PyErr_Occurred)().is_null() {
                (api.PyErr_Clear)();
                return None;
            }
            return Some(v);
        }
        Some(v)
    }
}

/// Call `obj.__dlpack_device__()` and decode the `(device_type, device_id)` pair.
///
/// - `obj`: any Python object (`PyObject *`), borrowed.
/// - `out_device`: receives the pair; device types unknown to this library are passed through.
///
/// Returns OK; `_NO_DLPACK_METHOD` (`AttributeError`); `_PRODUCER_BUFFER_ERROR`,
/// `_PRODUCER_TYPE_ERROR`, `_PRODUCER_ERROR` (the method raised); `_BAD_PRODUCER_RESULT` (not a
/// pair of integers, or out of `int32` range); `_NULL_POINTER`; `_PYTHON_UNAVAILABLE`. The caller
/// holds the GIL; no Python exception is left set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_object_get_device(
    obj: *mut c_void,
    out_device: *mut DLDevice,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_device, "out_device")?;
        if obj.is_null() {
            return Err(Error::NullPointer("obj"));
        }
        let api = runtime::require("dlpack_object_get_device")?;
        let m = get_method(api, obj, c"__dlpack_device__")?;
        // SAFETY: GIL held.
        let r = unsafe {
            let args = Owned::new(api, (api.PyTuple_New)(0)).ok_or_else(|| pyerr(api))?;
            Owned::new(
                api,
                (api.PyObject_Call)(m.as_ptr(), args.as_ptr(), core::ptr::null_mut()),
            )
            .ok_or_else(|| pyerr(api))?
        };
        let bad = || {
            Error::BadProducerResult("__dlpack_device__ did not return a (device_type, device_id) pair of int32 integers".into())
        };
        // SAFETY: GIL held.
        let n = unsafe { (api.PySequence_Size)(r.as_ptr()) };
        if n != 2 {
            // SAFETY: GIL held.
            unsafe { (api.PyErr_Clear)() };
            return Err(bad());
        }
        let mut vals = [0i64; 2];
        for (i, slot) in vals.iter_mut().enumerate() {
            // SAFETY: GIL held.
            let item = Owned::new(api, unsafe {
                (api.PySequence_GetItem)(r.as_ptr(), i as isize)
            });
            let Some(item) = item else {
                // SAFETY: GIL held.
                unsafe { (api.PyErr_Clear)() };
                return Err(bad());
            };
            *slot = as_i64(api, &item).ok_or_else(bad)?;
        }
        let dt = i32::try_from(vals[0]).map_err(|_| bad())?;
        let id = i32::try_from(vals[1]).map_err(|_| bad())?;
        // SAFETY: non-NULL caller storage.
        unsafe {
            out.write(DLDevice {
                device_type: DLDeviceType(dt),
                device_id: id,
            })
        };
        Ok(())
    })
}
