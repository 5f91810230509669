//! The fast path of the Python package: two builtin functions (`PyCFunction` objects) made at
//! run time from functions of this library, so that `dlpack_helpers.import_tensor` reaches Rust
//! through a plain vectorcall instead of a `ctypes` foreign call.
//!
//! Why: one `ctypes` call costs about 0.6 µs on the reference machine (argument conversion and
//! `ffi_prep_cif` on every call), about as much as `numpy.from_dlpack` as a whole, and an
//! import through `ctypes` needed two (import, then delete). A builtin call costs tens of ns.
//! No C extension is compiled: the builtins are made with `PyCFunction_NewEx` from
//! `PyMethodDef`s in this library, which the interpreter already loaded through `ctypes`.
//!
//! The imported tensor lives in a private capsule named `"dlpack_helpers.owned_tensor"` whose
//! destructor calls the tensor's deleter, so releasing it is dropping the last reference: no
//! second foreign call, and no `__del__` on the Python side.

use super::capsule;
use super::import::{self as imp, dlpack_helpers_import_request};
use super::runtime::{self, Api, METH_FASTCALL, METH_O, PyMethodDef, PyObject};
use crate::abi::DLManagedTensorVersioned;
use crate::capi::boundary::{self, out_ptr};
use crate::capi::error::{dlpack_helpers_status, fail};
use crate::capi::tensor::dlpack_tensor_delete;
use crate::rules::Error;
use core::ffi::{CStr, c_void};

/// The name of the capsule that owns a tensor imported by the fast path. Not a DLPack name: such
/// a capsule is never handed to a DLPack consumer.
pub const OWNED_CAPSULE: &CStr = c"dlpack_helpers.owned_tensor";

struct Defs([PyMethodDef; 2]);
// SAFETY: read-only after construction; CPython only reads a PyMethodDef.
unsafe impl Sync for Defs {}

static DEFS: Defs = Defs([
    PyMethodDef {
        ml_name: c"import_owned".as_ptr(),
        ml_meth: import_owned as *const c_void,
        ml_flags: METH_FASTCALL,
        ml_doc: c"import_owned(obj, request_address=None) -> owner capsule, or an int status on failure (dlpack_last_error_message() has the detail)".as_ptr(),
    },
    PyMethodDef {
        ml_name: c"owned_info".as_ptr(),
        ml_meth: owned_info as *const c_void,
        ml_flags: METH_O,
        ml_doc: c"owned_info(capsule) -> (DLManagedTensorVersioned address, DLPACK_HELPERS_IMPORTED_* bits), or an int status".as_ptr(),
    },
]);

/// An int status for Python (the error path: thread-local message set by `fail`).
fn status_object(api: &'static Api, e: Error) -> *mut PyObject {
    let s = fail(e);
    // SAFETY: GIL held (builtins run with it).
    unsafe { (api.PyLong_FromLong)(s.into()) }
}

unsafe extern "C" fn owned_destructor(cap: *mut PyObject) {
    boundary::value((), || {
        let Some(api) = runtime::get() else { return };
        let (mut t, mut v, mut tb) = (
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        );
        // SAFETY: GIL held (capsule destruction); preserve a pending exception around the
        // producer's deleter, which may run Python code.
        unsafe {
            (api.PyErr_Fetch)(&mut t, &mut v, &mut tb);
            let p = (api.PyCapsule_GetPointer)(cap, OWNED_CAPSULE.as_ptr());
            if p.is_null() {
                (api.PyErr_WriteUnraisable)(core::ptr::null_mut());
            } else {
                dlpack_tensor_delete(p.cast());
            }
            (api.PyErr_Restore)(t, v, tb);
        }
    })
}

fn import_any(
    api: &'static Api,
    obj: *mut PyObject,
    req: &dlpack_helpers_import_request,
) -> Result<(*mut DLManagedTensorVersioned, u32), Error> {
    // SAFETY: GIL held, `obj` a live object.
    if unsafe { api.is_capsule(obj) } {
        if req.flags & !imp::IMPORT_FLAGS != 0 {
            return Err(Error::invalid(format!(
                "request->flags has unknown bits 0x{:x}",
                req.flags
            )));
        }
        // A capsule has no type-level exchange API: that bit does not apply here.
        return capsule::import_capsule(
            api,
            obj,
            req.flags & !imp::DLPACK_HELPERS_IMPORT_EXCHANGE_API,
        );
    }
    imp::import(api, obj, req)
}

/// `import_owned(obj, request_address=None)`: as `dlpack_object_import` (or
/// `dlpack_capsule_consume` when `obj` is a capsule), returning the owner capsule.
unsafe extern "C" fn import_owned(
    _module: *mut PyObject,
    args: *const *mut PyObject,
    nargs: isize,
) -> *mut PyObject {
    boundary::value(core::ptr::null_mut(), || {
        let Some(api) = runtime::get() else {
            return core::ptr::null_mut();
        };
        if !(1..=2).contains(&nargs) {
            return status_object(
                api,
                Error::invalid(format!("import_owned takes 1 or 2 arguments, got {nargs}")),
            );
        }
        // SAFETY: CPython passes `nargs` live borrowed arguments.
        let obj = unsafe { *args };
        let req = if nargs == 2 {
            // SAFETY: as above.
            let a = unsafe { *args.add(1) };
            // SAFETY: GIL held.
            let p = unsafe { (api.PyLong_AsVoidPtr)(a) };
            if p.is_null() {
                // SAFETY: GIL held.
                unsafe { (api.PyErr_Clear)() };
                return status_object(api, Error::NullPointer("request_address"));
            }
            // SAFETY: the package passes the address of a live dlpack_helpers_import_request.
            unsafe { *p.cast::<dlpack_helpers_import_request>() }
        } else {
            dlpack_helpers_import_request::default()
        };
        let (t, how) = match import_any(api, obj, &req) {
            Ok(r) => r,
            // A Python exception left set (KEEP_PYTHON_ERROR in the request, or one that does
            // not derive from Exception): a builtin propagates it by returning NULL.
            Err(Error::PythonErrorSet(_)) => return core::ptr::null_mut(),
            Err(e) => return status_object(api, e),
        };
        // SAFETY: GIL held; the capsule owns `t` from here (its destructor deletes it).
        unsafe {
            let cap = (api.PyCapsule_New)(t.cast(), OWNED_CAPSULE.as_ptr(), Some(owned_destructor));
            if cap.is_null() {
                dlpack_tensor_delete(t);
                return match api.failure(false) {
                    // Never cleared: propagate it (a builtin returns NULL with it set).
                    Error::PythonErrorSet(_) => core::ptr::null_mut(),
                    e => status_object(api, e),
                };
            }
            if how != 0 {
                (api.PyCapsule_SetContext)(cap, how as usize as *mut c_void);
            }
            cap
        }
    })
}

/// `owned_info(capsule)`: the tensor's address and the `DLPACK_HELPERS_IMPORTED_*` bits.
unsafe extern "C" fn owned_info(_module: *mut PyObject, cap: *mut PyObject) -> *mut PyObject {
    boundary::value(core::ptr::null_mut(), || {
        let Some(api) = runtime::get() else {
            return core::ptr::null_mut();
        };
        // SAFETY: GIL held; GetPointer checks the type and the name.
        unsafe {
            let p = (api.PyCapsule_GetPointer)(cap, OWNED_CAPSULE.as_ptr());
            if p.is_null() {
                (api.PyErr_Clear)();
                return status_object(
                    api,
                    Error::NotACapsule(
                        "owned_info needs a dlpack_helpers.owned_tensor capsule".into(),
                    ),
                );
            }
            let how = (api.PyCapsule_GetContext)(cap) as usize;
            let t = (api.PyTuple_New)(2);
            if t.is_null() {
                return core::ptr::null_mut();
            }
            for (i, o) in [
                (api.PyLong_FromVoidPtr)(p),
                (api.PyLong_FromUnsignedLong)(how as libc::c_ulong),
            ]
            .into_iter()
            .enumerate()
            {
                if o.is_null() || (api.PyTuple_SetItem)(t, i as isize, o) != 0 {
                    (api.Py_DecRef)(t);
                    return core::ptr::null_mut();
                }
            }
            t
        }
    })
}

/// Make the fast-path builtins of the Python package: a new tuple `(import_owned, owned_info)`
/// of builtin function objects (`PyObject *`), implemented by this library.
///
/// - `import_owned(obj, request_address=None)`: imports `obj` as `dlpack_object_import` does
///   (or consumes it as `dlpack_capsule_import` when it is a DLPack capsule, with the request's
///   `flags`), with the request at `request_address` (an `int`, the address of a
///   `dlpack_helpers_import_request`) or the defaults. Returns a capsule named
///   `"dlpack_helpers.owned_tensor"` that owns the tensor: its destructor calls the tensor's
///   deleter exactly once, when the capsule dies. On failure it returns the `int` status
///   instead (no Python exception is set) and `dlpack_last_error_message()` has the detail,
///   except when the failure is a Python exception left set
///   (`DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET`: `KEEP_PYTHON_ERROR` in the request, or an
///   exception that does not derive from `Exception`): then it raises that exception.
/// - `owned_info(capsule)`: `(address of the DLManagedTensorVersioned, DLPACK_HELPERS_IMPORTED_*
///   bits)`, or an `int` status for any other object. The address is valid while the capsule
///   lives.
///
/// Both run with the GIL, as builtins do. `out_functions`: receives a new reference.
///
/// Returns OK; `_NULL_POINTER`; `_PYTHON_UNAVAILABLE`; `_PRODUCER_ERROR` (Python could not
/// allocate; the error is cleared). The caller holds the GIL.
///
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `out_functions` is NULL
/// @retval DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE when the process has no Python interpreter
/// @retval DLPACK_HELPERS_STATUS_PRODUCER_ERROR when Python cannot allocate (the error is cleared)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_python_fastpath_new(
    out_functions: *mut *mut c_void,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_functions, "out_functions")?;
        let api = runtime::require("dlpack_python_fastpath_new")?;
        // SAFETY: GIL held, an exception is set.
        let err = || unsafe { api.failure(false) };
        // SAFETY: GIL held; DEFS is static (CPython keeps the pointer).
        unsafe {
            let t = runtime::Owned::new(api, (api.PyTuple_New)(2)).ok_or_else(err)?;
            for (i, def) in DEFS.0.iter().enumerate() {
                let f = (api.PyCFunction_NewEx)(
                    (def as *const PyMethodDef).cast_mut(),
                    core::ptr::null_mut(),
                    core::ptr::null_mut(),
                );
                if f.is_null() || (api.PyTuple_SetItem)(t.as_ptr(), i as isize, f) != 0 {
                    return Err(err());
                }
            }
            out.write(t.into_raw());
        }
        Ok(())
    })
}
