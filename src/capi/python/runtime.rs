//! The Python C API, resolved at run time with `dlsym(RTLD_DEFAULT, …)` from the host process.
//!
//! The library never links libpython: in a Python process (the interpreter executable or an
//! embedding program that loaded libpython globally) the symbols resolve; anywhere else every
//! Python entry point returns `DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE`. Only stable-ABI
//! functions are used (and `PyGILState_Check`, exported by every CPython since 3.4), so one
//! build serves every CPython 3.x. A successful resolution is cached
//! for the process; a failed one is retried on the next call (Python may be loaded later).

use crate::core::Error;
use core::ffi::{CStr, c_char, c_int, c_long, c_longlong, c_void};
use std::ffi::CString;
use std::sync::OnceLock;

/// An opaque `PyObject`.
pub type PyObject = c_void;
/// `PyCapsule_Destructor`.
pub type Destructor = Option<unsafe extern "C" fn(*mut PyObject)>;

macro_rules! python_api {
    ($( $name:ident : $ty:ty ),* $(,)?) => {
        /// The resolved Python C API functions and data symbols.
        #[allow(non_snake_case)]
        pub struct Api { $( pub $name: $ty, )* }

        impl Api {
            fn resolve() -> Option<Api> {
                Some(Api { $( $name: {
                    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name; a non-NULL
                    // result is the address of the CPython symbol of that name, whose type is
                    // the one declared by the stable ABI.
                    let p = unsafe {
                        libc::dlsym(libc::RTLD_DEFAULT, concat!(stringify!($name), "\0").as_ptr().cast())
                    };
                    if p.is_null() { return None; }
                    // SAFETY: see above; `$ty` is a pointer-sized fn pointer or data pointer.
                    unsafe { core::mem::transmute_copy::<*mut c_void, $ty>(&p) }
                }, )* })
            }
        }
    };
}

python_api! {
    Py_IsInitialized: unsafe extern "C" fn() -> c_int,
    PyGILState_Ensure: unsafe extern "C" fn() -> c_int,
    PyGILState_Release: unsafe extern "C" fn(c_int),
    PyGILState_Check: unsafe extern "C" fn() -> c_int,
    PyGILState_GetThisThreadState: unsafe extern "C" fn() -> *mut c_void,
    Py_IncRef: unsafe extern "C" fn(*mut PyObject),
    Py_DecRef: unsafe extern "C" fn(*mut PyObject),
    PyCapsule_New: unsafe extern "C" fn(*mut c_void, *const c_char, Destructor) -> *mut PyObject,
    PyCapsule_GetPointer: unsafe extern "C" fn(*mut PyObject, *const c_char) -> *mut c_void,
    PyCapsule_GetName: unsafe extern "C" fn(*mut PyObject) -> *const c_char,
    PyCapsule_SetName: unsafe extern "C" fn(*mut PyObject, *const c_char) -> c_int,
    PyCapsule_Type: *mut PyObject,
    PyObject_Type: unsafe extern "C" fn(*mut PyObject) -> *mut PyObject,
    PyObject_GetAttrString: unsafe extern "C" fn(*mut PyObject, *const c_char) -> *mut PyObject,
    PyObject_Call: unsafe extern "C" fn(*mut PyObject, *mut PyObject, *mut PyObject) -> *mut PyObject,
    PyObject_Str: unsafe extern "C" fn(*mut PyObject) -> *mut PyObject,
    PyUnicode_AsUTF8: unsafe extern "C" fn(*mut PyObject) -> *const c_char,
    PyTuple_New: unsafe extern "C" fn(isize) -> *mut PyObject,
    PyTuple_SetItem: unsafe extern "C" fn(*mut PyObject, isize, *mut PyObject) -> c_int,
    PyDict_New: unsafe extern "C" fn() -> *mut PyObject,
    PyDict_SetItemString: unsafe extern "C" fn(*mut PyObject, *const c_char, *mut PyObject) -> c_int,
    PySequence_Size: unsafe extern "C" fn(*mut PyObject) -> isize,
    PySequence_GetItem: unsafe extern "C" fn(*mut PyObject, isize) -> *mut PyObject,
    PyLong_FromLong: unsafe extern "C" fn(c_long) -> *mut PyObject,
    PyLong_AsLongLong: unsafe extern "C" fn(*mut PyObject) -> c_longlong,
    PyLong_AsVoidPtr: unsafe extern "C" fn(*mut PyObject) -> *mut c_void,
    PyBool_FromLong: unsafe extern "C" fn(c_long) -> *mut PyObject,
    PyErr_Occurred: unsafe extern "C" fn() -> *mut PyObject,
    PyErr_Fetch: unsafe extern "C" fn(*mut *mut PyObject, *mut *mut PyObject, *mut *mut PyObject),
    PyErr_Restore: unsafe extern "C" fn(*mut PyObject, *mut PyObject, *mut PyObject),
    PyErr_NormalizeException: unsafe extern "C" fn(*mut *mut PyObject, *mut *mut PyObject, *mut *mut PyObject),
    PyErr_GivenExceptionMatches: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> c_int,
    PyErr_Clear: unsafe extern "C" fn(),
    PyErr_SetString: unsafe extern "C" fn(*mut PyObject, *const c_char),
    PyErr_WriteUnraisable: unsafe extern "C" fn(*mut PyObject),
    PyExc_BufferError: *mut *mut PyObject,
    PyExc_TypeError: *mut *mut PyObject,
    PyExc_AttributeError: *mut *mut PyObject,
    PyExc_ValueError: *mut *mut PyObject,
}

// SAFETY: the struct holds addresses of process-global CPython symbols; calling them still
// requires the GIL, which every caller documents.
unsafe impl Send for Api {}
unsafe impl Sync for Api {}

static API: OnceLock<Api> = OnceLock::new();

/// The Python C API if this process has a Python interpreter.
pub fn get() -> Option<&'static Api> {
    if let Some(api) = API.get() {
        return Some(api);
    }
    let api = Api::resolve()?;
    Some(API.get_or_init(|| api))
}

/// The Python C API, or `PythonUnavailable` naming the entry point.
pub fn require(what: &'static str) -> Result<&'static Api, Error> {
    get().ok_or(Error::PythonUnavailable(what))
}

/// Whether the Python C API resolves in this process (`CAP_PYTHON`).
pub fn available() -> bool {
    get().is_some()
}

/// The class of a Python exception, as the array API distinguishes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExcClass {
    Buffer,
    Type,
    Attribute,
    Other,
}

/// A strong reference, released on drop (GIL held by the caller for the whole lifetime).
pub struct Owned {
    api: &'static Api,
    ptr: *mut PyObject,
}

impl Owned {
    /// Take a new reference returned by the C API; NULL means a Python exception is set.
    pub fn new(api: &'static Api, ptr: *mut PyObject) -> Option<Owned> {
        if ptr.is_null() {
            None
        } else {
            Some(Owned { api, ptr })
        }
    }
    pub fn as_ptr(&self) -> *mut PyObject {
        self.ptr
    }
    /// Give the reference away (for functions that steal it).
    pub fn into_raw(self) -> *mut PyObject {
        let p = self.ptr;
        core::mem::forget(self);
        p
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: we hold one strong reference and the GIL.
        unsafe { (self.api.Py_DecRef)(self.ptr) }
    }
}

impl Api {
    /// Take the pending Python exception (clearing it) as its class and `"Type: message"`.
    ///
    /// # Safety
    /// GIL held.
    pub unsafe fn take_error(&'static self) -> (ExcClass, String) {
        let (mut t, mut v, mut tb) = (
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        );
        // SAFETY: GIL held; out-pointers are local.
        unsafe {
            (self.PyErr_Fetch)(&mut t, &mut v, &mut tb);
            if t.is_null() {
                return (
                    ExcClass::Other,
                    "unknown error (no Python exception was set)".to_owned(),
                );
            }
            (self.PyErr_NormalizeException)(&mut t, &mut v, &mut tb);
            let class = if (self.PyErr_GivenExceptionMatches)(t, *self.PyExc_BufferError) != 0 {
                ExcClass::Buffer
            } else if (self.PyErr_GivenExceptionMatches)(t, *self.PyExc_TypeError) != 0 {
                ExcClass::Type
            } else if (self.PyErr_GivenExceptionMatches)(t, *self.PyExc_AttributeError) != 0 {
                ExcClass::Attribute
            } else {
                ExcClass::Other
            };
            let name = self
                .str_attr(t, c"__name__")
                .unwrap_or_else(|| "Exception".to_owned());
            let msg = if v.is_null() { None } else { self.str_of(v) }.unwrap_or_default();
            (self.Py_DecRef)(t);
            if !v.is_null() {
                (self.Py_DecRef)(v);
            }
            if !tb.is_null() {
                (self.Py_DecRef)(tb);
            }
            (
                class,
                if msg.is_empty() {
                    name
                } else {
                    format!("{name}: {msg}")
                },
            )
        }
    }

    /// `str(obj)`, or None (with the error cleared).
    ///
    /// # Safety
    /// GIL held, `obj` a live object.
    pub unsafe fn str_of(&'static self, obj: *mut PyObject) -> Option<String> {
        // SAFETY: GIL held.
        unsafe {
            let Some(s) = Owned::new(self, (self.PyObject_Str)(obj)) else {
                (self.PyErr_Clear)();
                return None;
            };
            let p = (self.PyUnicode_AsUTF8)(s.as_ptr());
            if p.is_null() {
                (self.PyErr_Clear)();
                return None;
            }
            Some(CStr::from_ptr(p).to_string_lossy().into_owned())
        }
    }

    /// `str(getattr(obj, name))`, or None (with the error cleared).
    ///
    /// # Safety
    /// GIL held, `obj` a live object.
    pub unsafe fn str_attr(&'static self, obj: *mut PyObject, name: &CStr) -> Option<String> {
        // SAFETY: GIL held.
        unsafe {
            let Some(a) = Owned::new(self, (self.PyObject_GetAttrString)(obj, name.as_ptr()))
            else {
                (self.PyErr_Clear)();
                return None;
            };
            self.str_of(a.as_ptr())
        }
    }

    /// Whether `obj` is exactly a `PyCapsule`.
    ///
    /// # Safety
    /// GIL held, `obj` a live object.
    pub unsafe fn is_capsule(&'static self, obj: *mut PyObject) -> bool {
        // SAFETY: GIL held; PyObject_Type returns a new reference and never fails.
        unsafe {
            match Owned::new(self, (self.PyObject_Type)(obj)) {
                Some(t) => t.as_ptr() == self.PyCapsule_Type,
                None => {
                    (self.PyErr_Clear)();
                    false
                }
            }
        }
    }

    /// Report `message` as an unraisable exception about `obj` (never raises).
    ///
    /// # Safety
    /// GIL held.
    pub unsafe fn write_unraisable(&'static self, obj: *mut PyObject, message: &str) {
        let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // SAFETY: GIL held.
        unsafe {
            (self.PyErr_SetString)(*self.PyExc_ValueError, c.as_ptr());
            (self.PyErr_WriteUnraisable)(obj);
        }
    }
}

/// Map a producer's exception to our error, keeping the array API's classes.
pub fn producer_error(class: ExcClass, message: String) -> Error {
    match class {
        ExcClass::Buffer => Error::ProducerBufferError(message),
        ExcClass::Type => Error::ProducerTypeError(message),
        ExcClass::Attribute | ExcClass::Other => Error::ProducerError(message),
    }
}
