//! The Python C API, resolved at run time with `dlsym(RTLD_DEFAULT, …)` from the host process.
//!
//! The library never links libpython: in a Python process (the interpreter executable or an
//! embedding program that loaded libpython globally) the symbols resolve; anywhere else every
//! Python entry point returns `DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE`. Only stable-ABI
//! functions are used (and `PyGILState_Check`, exported by every CPython since 3.4), so one
//! build serves every CPython 3.x. A successful resolution is cached
//! for the process; a failed one is retried on the next call (Python may be loaded later).

use crate::rules::Error;
use core::ffi::{CStr, c_char, c_int, c_long, c_longlong, c_void};
use std::ffi::CString;
use std::sync::OnceLock;

/// An opaque `PyObject`.
pub type PyObject = c_void;
/// `PyCapsule_Destructor`.
pub type Destructor = Option<unsafe extern "C" fn(*mut PyObject)>;

macro_rules! python_api {
    ($( $name:ident : $ty:ty ),* $(,)? ; optional: $( $oname:ident : $oty:ty ),* $(,)?) => {
        /// The resolved Python C API functions and data symbols. The `optional` ones are absent
        /// from some CPython versions (`None` there): callers fall back to the required ones.
        #[allow(non_snake_case)]
        pub struct Api { $( pub $name: $ty, )* $( pub $oname: Option<$oty>, )* }

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
                }, )* $( $oname: {
                    // SAFETY: as for the required symbols above.
                    let p = unsafe {
                        libc::dlsym(libc::RTLD_DEFAULT, concat!(stringify!($oname), "\0").as_ptr().cast())
                    };
                    if p.is_null() { None } else {
                        // SAFETY: a pointer-sized fn pointer of the declared type.
                        Some(unsafe { core::mem::transmute_copy::<*mut c_void, $oty>(&p) })
                    }
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
    PyUnicode_AsUTF8AndSize: unsafe extern "C" fn(*mut PyObject, *mut isize) -> *const c_char,
    PyTuple_New: unsafe extern "C" fn(isize) -> *mut PyObject,
    PyTuple_SetItem: unsafe extern "C" fn(*mut PyObject, isize, *mut PyObject) -> c_int,
    PyDict_New: unsafe extern "C" fn() -> *mut PyObject,
    PyDict_SetItemString: unsafe extern "C" fn(*mut PyObject, *const c_char, *mut PyObject) -> c_int,
    PySequence_Check: unsafe extern "C" fn(*mut PyObject) -> c_int,
    PySequence_Size: unsafe extern "C" fn(*mut PyObject) -> isize,
    PySequence_GetItem: unsafe extern "C" fn(*mut PyObject, isize) -> *mut PyObject,
    PyLong_FromLong: unsafe extern "C" fn(c_long) -> *mut PyObject,
    PyLong_AsLongLong: unsafe extern "C" fn(*mut PyObject) -> c_longlong,
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
    PyExc_Exception: *mut *mut PyObject,
    PyLong_AsUnsignedLongLong: unsafe extern "C" fn(*mut PyObject) -> u64,
    PyObject_GetAttr: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> *mut PyObject,
    PyUnicode_InternFromString: unsafe extern "C" fn(*const c_char) -> *mut PyObject,
    Py_AtExit: unsafe extern "C" fn(unsafe extern "C" fn()) -> c_int,
    PyInterpreterState_Get: unsafe extern "C" fn() -> *mut c_void,
    PyObject_IsInstance: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> c_int,
    PyNumber_Index: unsafe extern "C" fn(*mut PyObject) -> *mut PyObject,
    // Issue 25: which class of a type's MRO defines `__dlpack__` / the exchange table (never
    // fails: an error is cleared and reads as "no").
    PyMapping_HasKeyString: unsafe extern "C" fn(*mut PyObject, *const c_char) -> c_int,
    PyLong_Type: *mut PyObject,
    PyBool_Type: *mut PyObject,
    _Py_NoneStruct: *mut PyObject;
    optional:
    // An exported function since CPython 3.9 (a macro before); without it calls use PyObject_Call.
    PyObject_Vectorcall: unsafe extern "C" fn(*mut PyObject, *const *mut PyObject, usize, *mut PyObject) -> *mut PyObject,
    // An exported function since CPython 3.9: calls `obj.name(...)` without making a bound
    // method object; without it the method is looked up with PyObject_GetAttr.
    PyObject_VectorcallMethod: unsafe extern "C" fn(*mut PyObject, *const *mut PyObject, usize, *mut PyObject) -> *mut PyObject,
    // Not in the limited API, exported by every CPython 3.x: the cache of names is used only in
    // the main interpreter (objects must not cross interpreters).
    PyInterpreterState_Main: unsafe extern "C" fn() -> *mut c_void,
    // The calling thread's current (attached) thread state or NULL, without a fatal error for
    // NULL: `PyThreadState_GetUnchecked` (public since 3.13) or its earlier private name
    // `_PyThreadState_UncheckedGet` (3.5 to 3.12). `Api::holds_own_gil_state` compares it
    // with the thread's own GIL state; without either, deleters take the GIL state as before.
    PyThreadState_GetUnchecked: unsafe extern "C" fn() -> *mut c_void,
    _PyThreadState_UncheckedGet: unsafe extern "C" fn() -> *mut c_void,
    // Python's own allocator (pymalloc for small blocks; the GIL must be held), for the blocks
    // of exported views (issue 26: NumPy allocates its views' blocks the same way). Exported by
    // every CPython 3.x; without it (a host that only stubs the capsule API) views use the
    // library's allocator. Both or neither are used (`Api::pymem`).
    PyMem_Malloc: unsafe extern "C" fn(usize) -> *mut c_void,
    PyMem_Free: unsafe extern "C" fn(*mut c_void),
    // Issue 26: the per-import read of a guarded tensor's `requires_grad`/`stop_gradient`
    // straight through the getset descriptor that the attribute lookup would call
    // (`exchange::guard_attr`). `_PyType_Lookup` (exported by every CPython 3.x, not in the
    // limited API) is the type-side lookup of `PyObject_GenericGetAttr` itself (the type's real
    // MRO and dictionaries, its method cache); `PyType_GetSlot` on a static type answers NULL
    // before 3.10. Without any of them the generic `PyObject_GetAttr` is used.
    PyGetSetDescr_Type: *mut PyObject,
    PyType_GetSlot: unsafe extern "C" fn(*mut PyObject, c_int) -> *mut c_void,
    PyObject_GenericGetAttr: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> *mut PyObject,
    _PyType_Lookup: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> *mut PyObject,
    // Issue 26 (new-user run): a `__dlpack__` in the instance's own `__dict__` is what
    // `obj.__dlpack__` calls, so a type's exchange table must not stand in for it
    // (`exchange::instance_has_dlpack`). `_PyObject_GetDictPtr` (exported by every CPython 3.x,
    // not in the limited API) gives the instance dictionary's slot without making a dictionary
    // (3.11/3.12 build one only from attributes the instance already holds); without these
    // two the table is not used (`__dlpack__` answers).
    _PyObject_GetDictPtr: unsafe extern "C" fn(*mut PyObject) -> *mut *mut PyObject,
    PyDict_GetItemWithError: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> *mut PyObject,
    // The real `__mro__`, `__dict__` and `__module__` of a class (`type`'s own getset
    // descriptors, found with `_PyType_Lookup(&PyType_Type, name)`), which a metaclass's
    // `__getattribute__` or properties cannot answer for (`exchange::check_publisher`).
    PyType_Type: *mut PyObject,
    PyMapping_GetItemString: unsafe extern "C" fn(*mut PyObject, *const c_char) -> *mut PyObject,
    // `torch._C` from `sys.modules` (no import): PyTorch's `_disabled_torch_function_impl` is
    // recognised by identity (`exchange::torch_function_disabled`). Stable ABI since 3.7.
    PyImport_GetModule: unsafe extern "C" fn(*mut PyObject) -> *mut PyObject,
    // Free-threaded CPython (issue 36). `_Py_MergeZeroLocalRefcount` is exported only by a
    // build configured with `--disable-gil` (its inline `Py_DECREF` calls it): its presence is
    // how the library tells that build apart (`Api::free_threaded`); it is never called. The
    // library reads no reference count itself (every change goes through `Py_IncRef`/
    // `Py_DecRef`); of the header it reads only `ob_type` (`Api::type_of`), at the offset of
    // the build's layout (after `ob_tid`, `ob_ref_local` and `ob_ref_shared` there), checked
    // against three static objects before it is used (`OB_TYPE_OFFSET`).
    _Py_MergeZeroLocalRefcount: unsafe extern "C" fn(*mut PyObject),
    // 3.13 on: the per-object lock that CPython's own code takes where the GIL used to order
    // things (a no-op with the GIL). Taken, in a free-threaded build only, around the read of an
    // instance's `__dict__` slot and the new reference to it (`exchange::instance_overrides`).
    PyCriticalSection_Begin: unsafe extern "C" fn(*mut [usize; 2], *mut PyObject),
    PyCriticalSection_End: unsafe extern "C" fn(*mut [usize; 2]),
    // 3.13 on: `_PyType_Lookup` with a new reference (the borrowed answer of `_PyType_Lookup`
    // may be freed by another thread's change of the class in a free-threaded build).
    _PyType_LookupRef: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> *mut PyObject,
    // Stable ABI: the instance check `getset_get` makes before the getter it calls, made by
    // `exchange::guard_attr` when it calls that getter itself (issue 34).
    PyType_IsSubtype: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> c_int,
}

// SAFETY: the struct holds addresses of process-global CPython symbols; calling them still
// requires the GIL, which every caller documents.
unsafe impl Send for Api {}
// SAFETY: as for Send: the struct is immutable after initialization (a OnceLock).
unsafe impl Sync for Api {}

static API: OnceLock<Api> = OnceLock::new();

/// The Python C API if this process has a Python interpreter. Once resolved, a load and a
/// test inlined into every Python entry point (it was an out-of-line call of about 20
/// instructions on each); the resolution itself stays out of line.
#[inline(always)]
pub fn get() -> Option<&'static Api> {
    match API.get() {
        Some(api) => Some(api),
        None => resolve(),
    }
}

#[cold]
#[inline(never)]
fn resolve() -> Option<&'static Api> {
    let api = Api::resolve()?;
    let api = API.get_or_init(|| api);
    OB_TYPE_OFFSET.store(ob_type_offset(api), core::sync::atomic::Ordering::Release);
    Some(api)
}

/// The byte offset of `ob_type` in this interpreter's object header, or 0 where it was not
/// established: `type(obj)` is then asked of `PyObject_Type` (issue 34, callgrind: the call
/// and the release of its new reference cost about 12 instructions, three times per exchange
/// table import). Set once the API is resolved, from the build's kind (8 in a default build,
/// after `ob_refcnt`; 24 in a free-threaded one, after `ob_tid`, the flag bytes,
/// `ob_ref_local` and `ob_ref_shared`) and only when that offset reads `type` itself in the
/// headers of three static objects CPython exports (`bool`, `type` and the capsule type, whose
/// type is `type`): any other layout (a `Py_TRACE_REFS` build of 3.11/3.12, a future header)
/// keeps the function.
static OB_TYPE_OFFSET: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

fn ob_type_offset(api: &Api) -> usize {
    let Some(type_type) = api.PyType_Type else {
        return 0;
    };
    let off = if api.free_threaded() { 24 } else { 8 };
    // SAFETY: three statically allocated type objects of the interpreter (exported data
    // symbols, never freed), each larger than any object header; a pointer-sized, aligned read
    // inside it.
    let reads_type = |o: *mut PyObject| unsafe {
        (o as *const u8).add(off).cast::<*mut PyObject>().read() == type_type
    };
    if !type_type.is_null()
        && reads_type(api.PyBool_Type)
        && reads_type(type_type)
        && reads_type(api.PyCapsule_Type)
    {
        off
    } else {
        0
    }
}

/// The Python C API, or `PythonUnavailable` naming the entry point.
pub fn require(what: &'static str) -> Result<&'static Api, Error> {
    // Built only on failure: an eagerly built error is dropped on every success (out-of-line
    // drop glue, about 8 instructions per call).
    match get() {
        Some(api) => Ok(api),
        None => Err(Error::PythonUnavailable(what)),
    }
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
    /// Whether the host is a free-threaded CPython (built with `--disable-gil`; the GIL may be
    /// off): told by a symbol only that build exports (see `_Py_MergeZeroLocalRefcount`).
    #[inline]
    pub fn free_threaded(&self) -> bool {
        self._Py_MergeZeroLocalRefcount.is_some()
    }

    /// `PyMem_Malloc` and `PyMem_Free` when the host exports both (every CPython does): the
    /// allocator of exported view blocks. One answer for the life of the process (the table is
    /// resolved once), so a block is always freed by the allocator that made it.
    #[inline]
    pub fn pymem(
        &self,
    ) -> Option<(
        unsafe extern "C" fn(usize) -> *mut c_void,
        unsafe extern "C" fn(*mut c_void),
    )> {
        Some((self.PyMem_Malloc?, self.PyMem_Free?))
    }

    /// Whether the calling thread holds the GIL with its own `PyGILState` thread state as the
    /// current one: exactly the case where `PyGILState_Ensure` would change nothing (it would
    /// find that state current and only count a nesting level). Any other case (no thread
    /// state, another thread's or another interpreter's state current, the GIL released, the
    /// thread-state query missing) answers `false`, and the caller takes the GIL state as
    /// usual. Unlike `PyGILState_Check`, which answers 1 unconditionally once a subinterpreter
    /// exists (CPython disables its check then), a `true` here is never wrong. Valid on any
    /// thread, with or without the GIL; about 30 instructions where `PyGILState_Ensure` and
    /// `PyGILState_Release` cost about 80 (issue 26).
    ///
    /// # Safety
    /// Python is initialised (`Py_IsInitialized` answered non-zero).
    #[inline]
    pub unsafe fn holds_own_gil_state(&self) -> bool {
        let Some(current) = self
            .PyThreadState_GetUnchecked
            .or(self._PyThreadState_UncheckedGet)
        else {
            return false;
        };
        // SAFETY: both are plain queries of the calling thread's state, valid without the GIL.
        unsafe {
            let own = (self.PyGILState_GetThisThreadState)();
            !own.is_null() && own == current()
        }
    }

    /// Take the pending Python exception (clearing it) as its class and `"Type: message"`, for
    /// the message-only paths; an exception that does not derive from `Exception` is left set
    /// and becomes `Err(PythonErrorSet)` (see [`Api::catch`]).
    ///
    /// # Safety
    /// GIL held.
    pub unsafe fn take_error(&'static self) -> Result<(ExcClass, String), Error> {
        // SAFETY: GIL held (caller contract).
        unsafe { self.catch(false, |_| true) }
    }

    /// Decide the fate of the pending Python exception that made a call fail.
    ///
    /// - An exception that does not derive from `Exception` (`KeyboardInterrupt`, `SystemExit`,
    ///   `GeneratorExit`, a custom `BaseException` subclass) is never caught: it is left set,
    ///   unchanged, and the answer is `Err(PythonErrorSet)`.
    /// - Else, when `keep` and `clear_anyway(class)` is false, it is left set the same way (the
    ///   `KEEP_PYTHON_ERROR` mode: the same object, type and traceback reach the caller).
    /// - Else it is cleared and returned as its class and `"Type: message"` (message mode).
    ///
    /// `clear_anyway` lets a caller consume an exception that is part of the protocol (the
    /// `TypeError` that triggers the keyword-less retry). No exception pending: `Ok((Other, …))`.
    ///
    /// # Safety
    /// GIL held.
    pub unsafe fn catch(
        &'static self,
        keep: bool,
        clear_anyway: impl FnOnce(ExcClass) -> bool,
    ) -> Result<(ExcClass, String), Error> {
        let (mut t, mut v, mut tb) = (
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        );
        // SAFETY: GIL held; out-pointers are local. The references fetched are either restored
        // (`PyErr_Restore` steals them) or released.
        unsafe {
            (self.PyErr_Fetch)(&mut t, &mut v, &mut tb);
            if t.is_null() {
                return Ok((
                    ExcClass::Other,
                    "unknown error (no Python exception was set)".to_owned(),
                ));
            }
            (self.PyErr_NormalizeException)(&mut t, &mut v, &mut tb);
            let class = self.class_of(t);
            let ordinary = (self.PyErr_GivenExceptionMatches)(t, *self.PyExc_Exception) != 0;
            let text = self.describe(t, v);
            if !ordinary || (keep && !clear_anyway(class)) {
                (self.PyErr_Restore)(t, v, tb);
                let why = if ordinary {
                    "the caller asked for it with DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR"
                } else {
                    "it does not derive from Exception, so this library never catches it"
                };
                return Err(Error::PythonErrorSet(format!(
                    "a Python exception is set and was left for the caller ({why}): {text}"
                )));
            }
            (self.Py_DecRef)(t);
            for p in [v, tb] {
                if !p.is_null() {
                    (self.Py_DecRef)(p);
                }
            }
            Ok((class, text))
        }
    }

    /// The array API class of an exception type.
    ///
    /// # Safety
    /// GIL held, `t` a live exception type.
    unsafe fn class_of(&'static self, t: *mut PyObject) -> ExcClass {
        // SAFETY: GIL held.
        unsafe {
            if (self.PyErr_GivenExceptionMatches)(t, *self.PyExc_BufferError) != 0 {
                ExcClass::Buffer
            } else if (self.PyErr_GivenExceptionMatches)(t, *self.PyExc_TypeError) != 0 {
                ExcClass::Type
            } else if (self.PyErr_GivenExceptionMatches)(t, *self.PyExc_AttributeError) != 0 {
                ExcClass::Attribute
            } else {
                ExcClass::Other
            }
        }
    }

    /// `"Type: message"` of a fetched, normalized exception (errors while formatting are
    /// cleared; the exception itself is not pending while this runs).
    ///
    /// # Safety
    /// GIL held, `t` a live type, `v` NULL or a live value.
    unsafe fn describe(&'static self, t: *mut PyObject, v: *mut PyObject) -> String {
        // SAFETY: GIL held.
        unsafe {
            let name = self
                .str_attr(t, c"__name__")
                .unwrap_or_else(|| "Exception".to_owned());
            let msg = if v.is_null() { None } else { self.str_of(v) }.unwrap_or_default();
            if msg.is_empty() {
                name
            } else {
                format!("{name}: {msg}")
            }
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
            // With its length: a text with an embedded NUL is kept whole (the last-error message
            // escapes it; spec CORE-LAST-ERROR-MESSAGE-7), never cut at the NUL.
            let mut n: isize = 0;
            let p = (self.PyUnicode_AsUTF8AndSize)(s.as_ptr(), &mut n);
            if p.is_null() || n < 0 {
                (self.PyErr_Clear)();
                return None;
            }
            let bytes = core::slice::from_raw_parts(p.cast::<u8>(), n as usize);
            Some(String::from_utf8_lossy(bytes).into_owned())
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

    /// `type(obj)`, borrowed (`obj` keeps it alive while it lives): `Py_TYPE`'s read where the
    /// header's layout was established ([`OB_TYPE_OFFSET`]; a relaxed atomic load, as
    /// free-threaded CPython's own `Py_TYPE` reads it), else `PyObject_Type` with its new
    /// reference released at once. NULL only from a `PyObject_Type` that failed (never, for a
    /// live object).
    ///
    /// # Safety
    /// GIL held (or an attached thread), `obj` a live object.
    #[inline(always)]
    pub unsafe fn type_of(&'static self, obj: *mut PyObject) -> *mut PyObject {
        let off = OB_TYPE_OFFSET.load(core::sync::atomic::Ordering::Relaxed);
        if off != 0 {
            // SAFETY: a live object's header, whose `ob_type` is at `off` (checked at
            // resolution); pointer-aligned.
            return unsafe {
                (*(obj as *const u8)
                    .add(off)
                    .cast::<core::sync::atomic::AtomicPtr<PyObject>>())
                .load(core::sync::atomic::Ordering::Relaxed)
            };
        }
        // SAFETY: GIL held; a new reference, released at once (`obj` keeps its type alive).
        unsafe {
            let ty = (self.PyObject_Type)(obj);
            if !ty.is_null() {
                (self.Py_DecRef)(ty);
            }
            ty
        }
    }

    /// The size of this interpreter's object header (`PyObject_HEAD`: `ob_type` is its last
    /// field), where [`OB_TYPE_OFFSET`] established it.
    pub fn header_size(&self) -> Option<usize> {
        match OB_TYPE_OFFSET.load(core::sync::atomic::Ordering::Relaxed) {
            0 => None,
            off => Some(off + core::mem::size_of::<*mut PyObject>()),
        }
    }

    /// Whether `obj`'s type is exactly `ty` (no subclass; no Python code runs, nothing raised).
    ///
    /// # Safety
    /// GIL held, `obj` a live object.
    unsafe fn has_type(&'static self, obj: *mut PyObject, ty: *mut PyObject) -> bool {
        // SAFETY: GIL held; `type_of` borrows (and never fails for a live object).
        unsafe {
            let t = self.type_of(obj);
            if t.is_null() {
                (self.PyErr_Clear)();
            }
            !t.is_null() && t == ty
        }
    }

    /// Whether `obj` is exactly a `PyCapsule`.
    ///
    /// # Safety
    /// GIL held, `obj` a live object.
    pub unsafe fn is_capsule(&'static self, obj: *mut PyObject) -> bool {
        // SAFETY: caller contract.
        unsafe { self.has_type(obj, self.PyCapsule_Type) }
    }

    /// Whether `obj` is a `bool` (which cannot be subclassed): an `int` to Python, but never a
    /// device number, stream or address to DLPack.
    ///
    /// # Safety
    /// GIL held, `obj` a live object.
    pub unsafe fn is_bool(&'static self, obj: *mut PyObject) -> bool {
        // SAFETY: caller contract.
        unsafe { self.has_type(obj, self.PyBool_Type) }
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

impl Api {
    /// The error of a failed Python call: the pending exception cleared and mapped to a
    /// `PRODUCER_*` error (message mode), or left set as `PythonErrorSet` (`keep`, or not an
    /// `Exception`). See [`Api::catch`].
    ///
    /// # Safety
    /// GIL held.
    pub unsafe fn failure(&'static self, keep: bool) -> Error {
        // SAFETY: GIL held (caller contract).
        match unsafe { self.catch(keep, |_| false) } {
            Ok((class, msg)) => producer_error(class, msg),
            Err(e) => e,
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

/// Interned Python strings and constant tuples used on every import, made once per process
/// (in the main interpreter) instead of once per call. `PyDict_SetItemString` and
/// `PyObject_GetAttrString` decode and intern their name on each call; measured with callgrind
/// that was about a third of the instructions of `dlpack_object_import` (docs/performance.md).
pub struct Names {
    interp: *mut c_void,
    pub dlpack: *mut PyObject,
    pub max_version: *mut PyObject,
    pub stream: *mut PyObject,
    pub dl_device: *mut PyObject,
    pub copy: *mut PyObject,
    /// `("max_version",)`: the kwnames of the common call.
    pub kw_max_version: *mut PyObject,
    /// `(1, 3)`: this library's `max_version`.
    pub current_version: *mut PyObject,
    /// `"requires_grad"`, `"stop_gradient"`, `True` and `False`: the per-import
    /// check of a PyTorch or PaddlePaddle tensor before its exchange table stands in for
    /// `__dlpack__` (issue 25, `rules::TableGuard`).
    pub requires_grad: *mut PyObject,
    pub stop_gradient: *mut PyObject,
    pub py_true: *mut PyObject,
    pub py_false: *mut PyObject,
}

static NAMES: core::sync::atomic::AtomicPtr<Names> =
    core::sync::atomic::AtomicPtr::new(core::ptr::null_mut());

/// Called by `Py_FinalizeEx` after finalisation: the cached objects died with the interpreter;
/// forget them (never touch them) so that a re-initialised interpreter makes new ones.
unsafe extern "C" fn forget_names() {
    NAMES.store(core::ptr::null_mut(), core::sync::atomic::Ordering::Release);
}

impl Api {
    /// The cached names, or None where caching is not safe (not the main interpreter, no
    /// `PyInterpreterState_Main`, `Py_AtExit` full, or a Python allocation failed); callers
    /// then make the objects per call.
    ///
    /// Inlined: the published case is one call and two loads (issue 26: out of line, with the
    /// first call's code in the same frame, it cost about 25 instructions per call).
    ///
    /// # Safety
    /// GIL held.
    #[inline(always)]
    pub unsafe fn names(&'static self) -> Option<&'static Names> {
        use core::sync::atomic::Ordering;
        // SAFETY: GIL held (caller contract).
        let interp = unsafe { (self.PyInterpreterState_Get)() };
        let n = NAMES.load(Ordering::Acquire);
        if !n.is_null() {
            // SAFETY: a published Names is never freed (leaked on purpose, see forget_names).
            let n = unsafe { &*n };
            return (n.interp == interp).then_some(n);
        }
        // SAFETY: GIL held (caller contract).
        unsafe { self.make_names(interp) }
    }

    /// The first call of [`Api::names`]: make and publish the names (main interpreter only).
    ///
    /// # Safety
    /// GIL held.
    #[cold]
    #[inline(never)]
    unsafe fn make_names(&'static self, interp: *mut c_void) -> Option<&'static Names> {
        use core::sync::atomic::Ordering;
        let main = self.PyInterpreterState_Main?;
        // SAFETY: GIL held.
        if unsafe { main() } != interp {
            return None;
        }
        // SAFETY: GIL held; every object made here is kept for the life of the interpreter.
        unsafe {
            let s = |c: &CStr| (self.PyUnicode_InternFromString)(c.as_ptr());
            let names = Names {
                interp,
                dlpack: s(c"__dlpack__"),
                max_version: s(c"max_version"),
                stream: s(c"stream"),
                dl_device: s(c"dl_device"),
                copy: s(c"copy"),
                kw_max_version: (self.PyTuple_New)(1),
                current_version: (self.PyTuple_New)(2),
                requires_grad: s(c"requires_grad"),
                stop_gradient: s(c"stop_gradient"),
                py_true: (self.PyBool_FromLong)(1),
                py_false: (self.PyBool_FromLong)(0),
            };
            let objs = [
                names.dlpack,
                names.max_version,
                names.stream,
                names.dl_device,
                names.copy,
                names.kw_max_version,
                names.current_version,
                names.requires_grad,
                names.stop_gradient,
                names.py_true,
                names.py_false,
            ];
            let cleanup = |objs: &[*mut PyObject]| {
                for &o in objs {
                    if !o.is_null() {
                        (self.Py_DecRef)(o);
                    }
                }
                (self.PyErr_Clear)();
            };
            if objs.iter().any(|o| o.is_null()) {
                cleanup(&objs);
                return None;
            }
            (self.Py_IncRef)(names.max_version);
            (self.PyTuple_SetItem)(names.kw_max_version, 0, names.max_version);
            let v = crate::abi::DLPackVersion::CURRENT;
            for (i, x) in [v.major, v.minor].into_iter().enumerate() {
                let o = (self.PyLong_FromLong)(x as c_long);
                if o.is_null() || (self.PyTuple_SetItem)(names.current_version, i as isize, o) != 0
                {
                    cleanup(&objs);
                    return None;
                }
            }
            if (self.Py_AtExit)(forget_names) != 0 {
                cleanup(&objs);
                return None;
            }
            let p = Box::into_raw(Box::new(names));
            // Free-threaded CPython (issue 36): two threads may make names at once; the first
            // published wins, the other releases its own objects (one set for the process).
            match NAMES.compare_exchange(
                core::ptr::null_mut(),
                p,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => Some(&*p),
                Err(first) => {
                    drop(Box::from_raw(p));
                    cleanup(&objs);
                    (&*first).interp.eq(&interp).then_some(&*first)
                }
            }
        }
    }
}
