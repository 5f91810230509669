//! A vectorcall entry for `Tensor.__dlpack__` (issue 11, speed): the common calls
//! (`__dlpack__()`, `__dlpack__(max_version=(1, 3))`, any of the four keywords by their interned
//! names) are parsed here by pointer comparison of the keyword names and go straight to
//! [`Tensor::__dlpack__`]; every other call (positional arguments, a keyword name that is not
//! the interned string, an unknown keyword) is handed unchanged to the method PyO3 generated,
//! so its argument errors stay PyO3's. Argument *values* are checked by the same Rust code in
//! both cases (`args.rs`, then the library's rules): this is parsing only, not a second copy of
//! any rule. Panics are caught (the Python `PanicException`, as PyO3 raises).

use crate::tensor::Tensor;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

/// The method PyO3 generated (a method descriptor, strong reference kept for the process).
static GENERATED: AtomicPtr<ffi::PyObject> = AtomicPtr::new(null_mut());
/// Interned `stream`, `max_version`, `dl_device`, `copy` (kept for the process).
static NAMES: [AtomicPtr<ffi::PyObject>; 4] = [
    AtomicPtr::new(null_mut()),
    AtomicPtr::new(null_mut()),
    AtomicPtr::new(null_mut()),
    AtomicPtr::new(null_mut()),
];

/// The slow path: `callable` (a generated PyO3 entry) called with `slf` first when given, then
/// this call's arguments (`PyObject_Call`: the vectorcall C API is not in the 3.10 stable ABI;
/// this path only serves unusual calls).
unsafe fn call_with(
    py: Python<'_>,
    callable: *mut ffi::PyObject,
    slf: Option<*mut ffi::PyObject>,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<Py<PyAny>> {
    // SAFETY: the vectorcall protocol: `nargs` positional values, then one per keyword name.
    let at = |i: isize| unsafe { Bound::from_borrowed_ptr(py, *args.offset(i)) };
    let mut pos = Vec::with_capacity(nargs as usize + 1);
    if let Some(s) = slf {
        // SAFETY: a borrowed reference valid for the call.
        pos.push(unsafe { Bound::from_borrowed_ptr(py, s) });
    }
    pos.extend((0..nargs).map(at));
    let kw = PyDict::new(py);
    if !kwnames.is_null() {
        // SAFETY: a tuple of strings (vectorcall protocol), borrowed.
        let names = unsafe { Bound::from_borrowed_ptr(py, kwnames) };
        for (i, k) in names.try_iter()?.enumerate() {
            kw.set_item(k?, at(nargs + i as isize))?;
        }
    }
    // SAFETY: a strong reference kept for the process.
    let gen = unsafe { Bound::from_borrowed_ptr(py, callable) };
    Ok(gen.call(PyTuple::new(py, pos)?, Some(&kw))?.unbind())
}

/// The items and length of `kwnames`, read in place: `PyTuple_GetItem`/`PyTuple_Size` are
/// calls with type and bounds checks (about 11 instructions per name, issue 26) for a value the
/// vectorcall protocol guarantees to be an exact tuple. The layout read is `PyVarObject`
/// (limited API) followed by the item array, `PyTupleObject`'s layout in every CPython. The
/// header's size is the build's own: pyo3-ffi's `PyVarObject` carries the free-threaded header
/// (`ob_tid`, `ob_ref_local`, `ob_ref_shared`, ...) when built for a free-threaded CPython
/// (`Py_GIL_DISABLED`, the cp313t module), the classic one for abi3. A tuple never changes
/// size, so reading it unlocked is safe with the GIL off too.
///
/// # Safety
/// `kwnames` is a live exact tuple, GIL held.
#[inline(always)]
unsafe fn kwnames_items(kwnames: *mut ffi::PyObject) -> (*const *mut ffi::PyObject, usize) {
    // SAFETY: caller contract: a tuple is a `PyVarObject` whose items follow the header.
    unsafe {
        let n = (*kwnames.cast::<ffi::PyVarObject>()).ob_size.max(0) as usize;
        let items = kwnames
            .cast::<u8>()
            .add(core::mem::size_of::<ffi::PyVarObject>())
            .cast::<*mut ffi::PyObject>();
        (items, n)
    }
}

/// The most common calls, `__dlpack__(max_version=V)` with `V` a version tuple seen before (a
/// constant of the caller's code, found by identity: `args::seen_version`) and any of
/// `stream`, `dl_device` and `copy` passed as `None` (as `numpy.from_dlpack` calls it), each
/// name at most once: straight to [`Tensor::export_max_version`], which is what `__dlpack__`
/// runs for exactly these arguments. `None` for any other call (the general parsing below
/// then handles it, with its messages). Issue 26: this skips the general entry's keyword
/// table, `Bound` array and optional-argument checks.
///
/// # Safety
/// The vectorcall arguments of a call of the method descriptor made by [`install`] (so `slf`
/// is a `Tensor`: the descriptor checks `self`'s type before calling), GIL held.
#[inline(always)]
unsafe fn max_version_only(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    kwnames: *mut ffi::PyObject,
) -> Option<*mut ffi::PyObject> {
    // SAFETY: kwnames is an exact tuple of strings (vectorcall protocol), read in place
    // (`kwnames_items`); one value per name follows the (zero) positional ones.
    let v = unsafe {
        let (items, n) = kwnames_items(kwnames);
        let none = ffi::Py_None();
        let mut seen = 0u32;
        let mut v = None;
        for i in 0..n {
            let k = *items.add(i);
            let slot = NAMES.iter().position(|p| p.load(Relaxed) == k)?;
            if seen & (1 << slot) != 0 {
                return None; // a name twice: the general path's message
            }
            seen |= 1 << slot;
            let value = *args.add(i);
            if slot == 1 {
                v = Some(crate::args::seen_version(value)?);
            } else if value != none {
                return None;
            }
        }
        v?
    };
    let run = || {
        // SAFETY: called by CPython with the GIL held.
        let py = unsafe { Python::assume_attached() };
        // SAFETY: a borrowed reference valid for the call; the method descriptor made by
        // `install` (`PyDescr_NewMethod(Tensor, ...)`) admits only `Tensor` instances as self.
        let slf = unsafe { Bound::from_borrowed_ptr(py, slf) };
        let t = unsafe { slf.cast_unchecked::<Tensor>() };
        match t.get().export_max_version(py, v) {
            Ok(o) => o.into_ptr(),
            Err(e) => {
                crate::errors::raise_attached(e);
                null_mut()
            }
        }
    };
    Some(
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
            Ok(r) => r,
            Err(_) => {
                crate::errors::raise_attached(pyo3::panic::PanicException::new_err(
                    "a Rust panic in Tensor.__dlpack__",
                ));
                null_mut()
            }
        },
    )
}

unsafe extern "C" fn dlpack_vectorcall(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    if nargs == 0 && !kwnames.is_null() {
        // SAFETY: this call's vectorcall arguments (see the function).
        if let Some(r) = unsafe { max_version_only(slf, args, kwnames) } {
            return r;
        }
    }
    // SAFETY: this call's vectorcall arguments.
    unsafe { dlpack_general(slf, args, nargs, kwnames) }
}

/// Every call `max_version_only` does not serve: keyword names matched by pointer (else the
/// generated method), then [`Tensor::__dlpack__`]. Out of line, so that the fast path's frame
/// stays small (issue 26).
///
/// # Safety
/// As `dlpack_vectorcall`.
#[inline(never)]
unsafe fn dlpack_general(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    let run = || -> Option<*mut ffi::PyObject> {
        // SAFETY: called by CPython with the GIL held.
        let py = unsafe { Python::assume_attached() };
        if nargs != 0 {
            return None;
        }
        let mut vals: [*mut ffi::PyObject; 4] = [null_mut(); 4];
        if !kwnames.is_null() {
            // SAFETY: kwnames is a tuple of strings (vectorcall protocol).
            let n = unsafe { ffi::PyTuple_Size(kwnames) };
            for i in 0..n {
                // SAFETY: in range; borrowed item.
                let k = unsafe { ffi::PyTuple_GetItem(kwnames, i) };
                let slot = NAMES.iter().position(|p| p.load(Acquire) == k)?;
                if !vals[slot].is_null() {
                    return None; // duplicate: PyO3's message
                }
                // SAFETY: one value per name, after the positional ones (none here).
                vals[slot] = unsafe { *args.offset(i) };
            }
        }
        // SAFETY: borrowed references valid for the call.
        let slf = unsafe { Bound::from_borrowed_ptr(py, slf) };
        let Ok(t) = slf.cast::<Tensor>() else {
            return None;
        };
        let b: [Option<Bound<'_, PyAny>>; 4] = vals.map(|p| {
            // SAFETY: borrowed values of this call.
            (!p.is_null()).then(|| unsafe { Bound::from_borrowed_ptr(py, p) })
        });
        let r = t.get().__dlpack__(
            py,
            b[0].as_ref(),
            b[1].as_ref(),
            b[2].as_ref(),
            b[3].as_ref(),
        );
        Some(match r {
            Ok(o) => o.into_ptr(),
            Err(e) => {
                crate::errors::raise_attached(e);
                null_mut()
            }
        })
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(Some(r)) => r,
        // SAFETY: the arguments of this call, unchanged.
        Ok(None) => {
            // SAFETY: GIL held; the arguments of this call, unchanged.
            let py = unsafe { Python::assume_attached() };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
                call_with(py, GENERATED.load(Acquire), Some(slf), args, nargs, kwnames)
            }));
            match r {
                Ok(Ok(o)) => o.into_ptr(),
                Ok(Err(e)) => {
                    crate::errors::raise_attached(e);
                    null_mut()
                }
                Err(_) => {
                    crate::errors::raise_attached(pyo3::panic::PanicException::new_err(
                        "a Rust panic in Tensor.__dlpack__",
                    ));
                    null_mut()
                }
            }
        }
        Err(_) => {
            crate::errors::raise_attached(pyo3::panic::PanicException::new_err(
                "a Rust panic in Tensor.__dlpack__",
            ));
            null_mut()
        }
    }
}

/// The `import_tensor` PyO3 generated (a builtin function, strong reference kept for the
/// process), for every call but `import_tensor(obj)`.
static GENERATED_IMPORT: AtomicPtr<ffi::PyObject> = AtomicPtr::new(null_mut());

/// `dlpack_helpers.import_tensor` as a `METH_FASTCALL | METH_KEYWORDS` function (issue 26):
/// the most common call, one positional argument and no keyword, goes straight to the Rust
/// function with its defaults (what PyO3's generated entry calls for exactly that call); every
/// other call is handed unchanged to the generated function, so its argument errors stay
/// PyO3's. PyO3's entry for `import_tensor(x)` costs about 190 instructions (argument
/// extraction and its trampoline's bookkeeping) where this one costs about 20.
unsafe extern "C" fn import_vectorcall(
    _module: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: `kwnames` is NULL or an exact tuple (vectorcall protocol).
    let no_keywords = kwnames.is_null() || unsafe { kwnames_items(kwnames).1 } == 0;
    if nargs == 1 && no_keywords {
        let run = || {
            // SAFETY: called by CPython with the GIL held.
            let py = unsafe { Python::assume_attached() };
            // SAFETY: one positional argument (non-NULL), borrowed for the call: the caller's
            // reference keeps it alive, so none is taken (issue 34, callgrind).
            let obj = unsafe { pyo3::Borrowed::from_ptr(py, *args) };
            match crate::import_default(py, &obj) {
                Ok(t) => t.into_ptr(),
                Err(e) => {
                    crate::errors::raise_attached(e);
                    null_mut()
                }
            }
        };
        return match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
            Ok(r) => r,
            Err(_) => {
                crate::errors::raise_attached(pyo3::panic::PanicException::new_err(
                    "a Rust panic in import_tensor",
                ));
                null_mut()
            }
        };
    }
    // SAFETY: GIL held; the arguments of this call, unchanged.
    let py = unsafe { Python::assume_attached() };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
        call_with(
            py,
            GENERATED_IMPORT.load(Acquire),
            None,
            args,
            nargs,
            kwnames,
        )
    }));
    match r {
        Ok(Ok(o)) => o.into_ptr(),
        Ok(Err(e)) => {
            crate::errors::raise_attached(e);
            null_mut()
        }
        Err(_) => {
            crate::errors::raise_attached(pyo3::panic::PanicException::new_err(
                "a Rust panic in import_tensor",
            ));
            null_mut()
        }
    }
}

/// A docstring with PyO3's text signature in front, as CPython reads `__text_signature__` from
/// a builtin's `ml_doc`; leaked (a process-lifetime method definition keeps it).
fn doc_with_signature(name: &str, gen: &Bound<'_, PyAny>) -> PyResult<*const core::ffi::c_char> {
    let doc: String = gen.getattr("__doc__")?.extract().unwrap_or_default();
    let sig: Option<String> = gen.getattr("__text_signature__")?.extract().ok();
    let full = match sig {
        Some(s) => format!("{name}{s}\n--\n\n{doc}"),
        None => doc,
    };
    Ok(std::ffi::CString::new(full).unwrap_or_default().into_raw())
}

/// A process-lifetime `METH_FASTCALL | METH_KEYWORDS` method definition (never freed: the
/// function or descriptor made from it lives as long as the module).
fn fastcall_def(
    name: &'static core::ffi::CStr,
    meth: ffi::PyCFunctionFastWithKeywords,
    doc: *const core::ffi::c_char,
) -> &'static mut ffi::PyMethodDef {
    Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer {
            PyCFunctionFastWithKeywords: meth,
        },
        ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: doc,
    }))
}

/// Replace the module's `import_tensor` by the fast entry above, keeping the generated one for
/// the other calls and its docstring and text signature. Leaves the generated one in place if
/// any step fails.
pub fn install_import(m: &Bound<'_, pyo3::types::PyModule>) -> PyResult<()> {
    let py = m.py();
    let gen = m.getattr("import_tensor")?;
    let doc = doc_with_signature("import_tensor", &gen)?;
    let def = fastcall_def(c"import_tensor", import_vectorcall, doc);
    let name = m.name()?;
    // SAFETY: a process-lifetime method definition; `self` is the module (unused), the module
    // name sets `__module__`.
    let f = unsafe { ffi::PyCFunction_NewEx(def, m.as_ptr(), name.as_ptr()) };
    // SAFETY: a new reference or NULL with an exception set.
    let f = unsafe { Bound::from_owned_ptr_or_err(py, f) }?;
    GENERATED_IMPORT.store(gen.unbind().into_ptr(), Release);
    m.setattr("import_tensor", f)
}

/// Install the vectorcall entry as `Tensor.__dlpack__`, keeping the generated method for the
/// slow path and its docstring and text signature. Leaves the generated one in place if any
/// step fails.
pub fn install(py: Python<'_>) -> PyResult<()> {
    let ty = py.get_type::<Tensor>();
    let gen = ty.getattr("__dlpack__")?;
    for (i, n) in ["stream", "max_version", "dl_device", "copy"]
        .iter()
        .enumerate()
    {
        NAMES[i].store(PyString::intern(py, n).unbind().into_ptr(), Release);
    }
    let doc = doc_with_signature("__dlpack__", &gen)?;
    let def = fastcall_def(c"__dlpack__", dlpack_vectorcall, doc);
    // SAFETY: a live type object and a process-lifetime method definition.
    let descr = unsafe { ffi::PyDescr_NewMethod(ty.as_type_ptr(), def) };
    // SAFETY: a new reference or NULL with an exception set.
    let descr = unsafe { Bound::from_owned_ptr_or_err(py, descr) }?;
    GENERATED.store(gen.unbind().into_ptr(), Release);
    ty.setattr("__dlpack__", descr)
}
