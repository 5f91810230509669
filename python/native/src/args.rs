//! Argument checks shared by every public function (array API conventions: `TypeError` for a
//! wrong type or shape, `ValueError` for an integer outside the C field's range; nothing is
//! truncated silently). Messages name the argument.

use crate::abi::{DLDevice, DLDeviceType, DLPackVersion};
use crate::ffi;
use crate::values::Device;
use core::ptr::null_mut;
use core::sync::atomic::{AtomicPtr, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyTuple};
use std::sync::OnceLock;

/// `type(x).__name__`, or a tuple's length, for messages.
pub fn describe(x: &Bound<'_, PyAny>) -> String {
    if let Ok(t) = x.cast::<PyTuple>() {
        return format!("a tuple of length {}", t.len());
    }
    x.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// An integer (not a bool; anything with `__index__`) in `lo..=hi`.
pub fn ranged(x: &Bound<'_, PyAny>, what: &str, lo: i64, hi: i64) -> PyResult<i64> {
    ranged_part(x, what, "", lo, hi)
}

/// `ranged` for one part of an argument (`max_version` + `major`): the name is formatted only
/// on failure, so a valid call allocates nothing.
pub fn ranged_part(x: &Bound<'_, PyAny>, arg: &str, part: &str, lo: i64, hi: i64) -> PyResult<i64> {
    if x.is_exact_instance_of::<PyInt>() {
        if let Ok(v) = x.extract::<i64>() {
            if (lo..=hi).contains(&v) {
                return Ok(v);
            }
        }
    }
    let what = if part.is_empty() {
        arg.to_string()
    } else {
        format!("{arg} {part}")
    };
    let what = what.as_str();
    let n = if x.is_exact_instance_of::<PyInt>() {
        x.clone()
    } else if x.is_instance_of::<PyBool>() || !x.get_type().hasattr("__index__")? {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an integer, not {}",
            describe(x)
        )));
    } else {
        let r = x.call_method0("__index__");
        match r {
            Ok(n) => n,
            Err(e) => {
                let err =
                    PyTypeError::new_err(format!("{what} must be an integer, not {}", describe(x)));
                err.set_cause(x.py(), Some(e));
                return Err(err);
            }
        }
    };
    match n.extract::<i64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => {
            let ctype = match (lo, hi) {
                (0, 255) => " (uint8_t)",
                (0, 65535) => " (uint16_t)",
                (0, 4294967295) => " (uint32_t)",
                (-2147483648, 2147483647) => " (int32_t)",
                (i64::MIN, i64::MAX) => " (int64_t)",
                _ => "",
            };
            Err(PyValueError::new_err(format!(
                "{what} is {n}, outside {lo}..={hi}{ctype}"
            )))
        }
    }
}

fn pair<'py>(
    x: &Bound<'py, PyAny>,
    what: &str,
    form: &str,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    match x.cast::<PyTuple>() {
        Ok(t) if t.len() == 2 => Ok((t.get_item(0)?, t.get_item(1)?)),
        _ => Err(PyTypeError::new_err(format!(
            "{what} must be a tuple {form}, not {}",
            describe(x)
        ))),
    }
}

/// `max_version`: a `(major, minor)` tuple of integers in 0..=2**32-1.
pub fn version(x: &Bound<'_, PyAny>, what: &str) -> PyResult<DLPackVersion> {
    // A version tuple seen before (`max_version=(1, 3)` is a constant of the caller's code, the
    // same object on every call): found by identity, no item read.
    let p = x.as_ptr();
    for (slot, v) in SEEN.iter().zip(&SEEN_VERSION) {
        if slot.load(Relaxed) == p {
            return Ok(*v.get().expect("set before its slot"));
        }
    }
    let v = version_uncached(x, what)?;
    remember(x, v);
    Ok(v)
}

/// The version read from `x` if it is a version tuple seen before (found by identity, no
/// item read), else `None`.
#[inline(always)]
pub fn seen_version(x: *mut pyo3::ffi::PyObject) -> Option<DLPackVersion> {
    for (slot, v) in SEEN.iter().zip(&SEEN_VERSION) {
        let p = slot.load(Acquire);
        if p == x {
            return v.get().copied();
        }
        if p.is_null() {
            return None;
        }
    }
    None
}

/// Version tuples already read, each kept alive by a strong reference held for the process (so
/// its address is never reused by another object) with the version read from it: a tuple is
/// immutable, and only exact tuples of exact ints are kept, whose values cannot change either.
/// Filled first come, first served; the GIL orders the writes.
static SEEN: [AtomicPtr<pyo3::ffi::PyObject>; 4] = [const { AtomicPtr::new(null_mut()) }; 4];
static SEEN_VERSION: [OnceLock<DLPackVersion>; 4] = [const { OnceLock::new() }; 4];

fn remember(x: &Bound<'_, PyAny>, v: DLPackVersion) {
    let Ok(t) = x.cast_exact::<PyTuple>() else {
        return;
    };
    let exact_ints = t.iter_borrowed().all(|i| i.is_exact_instance_of::<PyInt>());
    if t.len() != 2 || !exact_ints {
        return;
    }
    for (slot, sv) in SEEN.iter().zip(&SEEN_VERSION) {
        if slot.load(Relaxed).is_null() {
            if sv.set(v).is_ok() {
                // The version is published before the pointer that finds it.
                slot.store(x.clone().into_ptr(), Release);
            }
            return;
        }
    }
}

fn version_uncached(x: &Bound<'_, PyAny>, what: &str) -> PyResult<DLPackVersion> {
    // The common call, `(1, 3)`: an exact tuple of two exact ints that fit, read with borrowed
    // items; anything else (and every error message) takes the general path below.
    if let Ok(t) = x.cast_exact::<PyTuple>() {
        if t.len() == 2 {
            let (a, b) = (t.get_borrowed_item(0)?, t.get_borrowed_item(1)?);
            if a.is_exact_instance_of::<PyInt>() && b.is_exact_instance_of::<PyInt>() {
                // SAFETY: exact ints, GIL held. -1 may be an error (or the value): either way
                // it is out of range, so the general path decides (and clears nothing here
                // that it would not raise again).
                let (ma, mi) = unsafe {
                    (
                        pyo3::ffi::PyLong_AsLongLong(a.as_ptr()),
                        pyo3::ffi::PyLong_AsLongLong(b.as_ptr()),
                    )
                };
                if (0..=u32::MAX as i64).contains(&ma) && (0..=u32::MAX as i64).contains(&mi) {
                    return Ok(DLPackVersion {
                        major: ma as u32,
                        minor: mi as u32,
                    });
                }
                // SAFETY: GIL held; an OverflowError of a huge int is re-raised below as ours.
                unsafe { pyo3::ffi::PyErr_Clear() };
            }
        }
    }
    let (a, b) = pair(x, what, "(major, minor)")?;
    let major = ranged_part(&a, what, "major", 0, u32::MAX as i64)?;
    let minor = ranged_part(&b, what, "minor", 0, u32::MAX as i64)?;
    Ok(DLPackVersion {
        major: major as u32,
        minor: minor as u32,
    })
}

/// `dl_device`: a `(device_type, device_id)` tuple of int32 integers (IntEnum members too), or
/// a `Device`.
pub fn device(x: &Bound<'_, PyAny>, what: &str) -> PyResult<DLDevice> {
    if let Ok(d) = x.cast::<Device>() {
        return Ok(d.get().raw);
    }
    let (a, b) = pair(x, what, "(device_type, device_id)")?;
    let t = ranged_part(&a, what, "device_type", i32::MIN as i64, i32::MAX as i64)?;
    let i = ranged_part(&b, what, "device_id", i32::MIN as i64, i32::MAX as i64)?;
    checked_device(
        DLDevice {
            device_type: DLDeviceType(t as i32),
            device_id: i as i32,
        },
        what,
    )
}

/// The C library's device rule for a device the caller names (`dlpack_device_check`, the one
/// rule: issue 22): a negative `device_id` is `ValueError` (`INVALID_DEVICE`, peer case 54);
/// device types DLPack does not assign pass through, as in every consumer helper.
pub fn checked_device(d: DLDevice, what: &str) -> PyResult<DLDevice> {
    // SAFETY: plain values.
    let s = unsafe { ffi::dlpack_device_check(d, ffi::DEVICE_ALLOW_UNASSIGNED_TYPE) };
    if s == ffi::OK {
        Ok(d)
    } else {
        Err(crate::errors::status_error_for(s, what))
    }
}

/// `copy`: None, True or False (a NumPy bool too), as the array API's `__dlpack__`.
pub fn copy(x: Option<&Bound<'_, PyAny>>) -> PyResult<i32> {
    let Some(x) = x else {
        return Ok(ffi::COPY_IF_NEEDED);
    };
    if x.is_none() {
        return Ok(ffi::COPY_IF_NEEDED);
    }
    let ty = x.get_type();
    let is_bool = x.is_instance_of::<PyBool>() || matches!(ty.name()?.to_str()?, "bool_" | "bool");
    if !is_bool {
        return Err(PyTypeError::new_err(format!(
            "copy must be None, True or False, not {}",
            describe(x)
        )));
    }
    Ok(if x.is_truthy()? {
        ffi::COPY_ALWAYS
    } else {
        ffi::COPY_NEVER
    })
}

/// Whether `x` is an integer for the array API (an int, a bool, or anything with `__index__`).
pub fn is_integer_like(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(x.is_instance_of::<PyInt>() || x.get_type().hasattr("__index__")?)
}

/// `stream` of `__dlpack__`: an integer in int64 range (None is handled by the caller).
pub fn stream(x: &Bound<'_, PyAny>) -> PyResult<i64> {
    ranged(x, "stream", i64::MIN, i64::MAX)
}

pub fn given<'a, 'py>(x: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    x.filter(|v| !v.is_none())
}
