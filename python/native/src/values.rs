//! `DType` and `Device`: small immutable value types naming a `DLDataType` / `DLDevice` with the
//! library's names (`dlpack_dtype_format`/`_parse`, `dlpack_device_format`/`_parse`). They compare
//! equal to the tuples the package used to return, hash like them and unpack like them.

use crate::abi::{DLDataType, DLDevice, DLDeviceType};
use crate::args;
use crate::errors::check;
use crate::ffi;
use core::ffi::c_char;
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use std::ffi::CString;

fn format_with(f: impl FnOnce(*mut c_char, usize, *mut usize) -> ffi::status) -> Option<String> {
    let mut buf = [0 as c_char; ffi::NAME_MAX];
    let mut len = 0usize;
    if f(buf.as_mut_ptr(), buf.len(), &mut len) != ffi::OK {
        return None;
    }
    let bytes: Vec<u8> = buf[..len].iter().map(|&c| c as u8).collect();
    String::from_utf8(bytes).ok()
}

fn c_name(name: &str, what: &str) -> PyResult<CString> {
    CString::new(name).map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!("{what} contains a NUL character"))
    })
}

/// A DLPack data type (`DLDataType`): ``code``, ``bits`` (per lane) and ``lanes``.
///
/// ``str(dtype)`` is the library's name (``"float32"``, ``"bfloat16"``, ``"float8_e4m3fn"``,
/// ``"complex64"`` with the bits of the whole complex number, ``"float32x4"`` for 4 lanes);
/// ``DType("float32")`` parses one (``ValueError`` for an unknown name). ``DType((2, 32, 1))``
/// takes the ``(code, bits, lanes)`` triple, checked by the C library's rule
/// (``dlpack_dtype_format``): a triple it refuses (unknown code, ``lanes == 0``, bits the code
/// does not allow, such as ``(2, 7, 1)``) raises ``ValueError`` naming ``INVALID_DTYPE``. A DType equals the same triple, its name and
/// another DType of the same value, hashes as the triple, and unpacks as one
/// (``code, bits, lanes = dtype``). :meth:`to_numpy` gives the NumPy dtype where one exists.
#[pyclass(frozen, module = "dlpack_helpers", name = "DType", sequence)]
pub struct DType {
    pub raw: DLDataType,
}

#[pymethods]
impl DType {
    #[new]
    fn py_new(spec: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(d) = spec.cast::<DType>() {
            return Ok(DType { raw: d.get().raw });
        }
        if let Ok(s) = spec.cast::<PyString>() {
            let name = s.to_str()?;
            let c = c_name(name, "the dtype name")?;
            let mut out = DLDataType::default();
            // SAFETY: NUL-terminated name, valid out pointer.
            check(unsafe { ffi::dlpack_dtype_parse(c.as_ptr(), &mut out) })?;
            return Ok(DType { raw: out });
        }
        if let Ok(t) = spec.cast::<PyTuple>() {
            if t.len() == 3 {
                let code = args::ranged(&t.get_item(0)?, "dtype code", 0, u8::MAX as i64)?;
                let bits = args::ranged(&t.get_item(1)?, "dtype bits", 0, u8::MAX as i64)?;
                let lanes = args::ranged(&t.get_item(2)?, "dtype lanes", 0, u16::MAX as i64)?;
                let raw = DLDataType {
                    code: code as u8,
                    bits: bits as u8,
                    lanes: lanes as u16,
                };
                // The C library's dtype rule, asked rather than restated (issue 22): a triple
                // `dlpack_dtype_format` refuses (unknown code, lanes 0, bits the code does not
                // allow) is no DType. ValueError, as for the ranges above, with the library's
                // message and status name.
                let mut buf = [0 as c_char; ffi::NAME_MAX];
                // SAFETY: our buffer and its size; NULL length.
                let st = unsafe {
                    ffi::dlpack_dtype_format(raw, buf.as_mut_ptr(), buf.len(), core::ptr::null_mut())
                };
                if st != ffi::OK {
                    let e = crate::errors::status_error_for(st, "DType()");
                    return Err(pyo3::exceptions::PyValueError::new_err(
                        Python::attach(|py| e.value(py).to_string()),
                    ));
                }
                return Ok(DType { raw });
            }
        }
        Err(PyTypeError::new_err(format!(
            "DType() takes a dtype name such as 'float32', a (code, bits, lanes) tuple of integers or a DType, not {}",
            args::describe(spec)
        )))
    }

    /// ``DLDataTypeCode`` (0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool, ...).
    #[getter]
    fn code(&self) -> u8 {
        self.raw.code
    }

    /// Bits of one lane (for complex: of the whole complex number).
    #[getter]
    fn bits(&self) -> u8 {
        self.raw.bits
    }

    /// Number of lanes (1 for scalars, more for vector types).
    #[getter]
    fn lanes(&self) -> u16 {
        self.raw.lanes
    }

    /// Pickles as ``DType((code, bits, lanes))`` (issue 34: a DType crosses
    /// ``multiprocessing``).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, pyo3::types::PyType>, ((u8, u8, u16),))> {
        let d = slf.get().raw;
        Ok((slf.get_type(), ((d.code, d.bits, d.lanes),)))
    }

    /// The library's name (``dlpack_dtype_format``), or None for a dtype that does not validate.
    #[getter]
    fn name(&self) -> Option<String> {
        let d = self.raw;
        // SAFETY: the closure passes our buffer and its size.
        format_with(|b, n, l| unsafe { ffi::dlpack_dtype_format(d, b, n, l) })
    }

    pub fn __str__(&self) -> String {
        self.name().unwrap_or_else(|| self.tuple_text())
    }

    fn __repr__(&self) -> String {
        match self.name() {
            Some(n) => format!("dlpack_helpers.DType('{n}')"),
            None => format!("dlpack_helpers.DType({})", self.tuple_text()),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        if let Ok(d) = other.cast::<DType>() {
            return Ok(pyo3::types::PyBool::new(py, d.get().raw == self.raw)
                .to_owned()
                .into_any()
                .unbind());
        }
        if let Ok(s) = other.cast::<PyString>() {
            let same = self.name().as_deref() == Some(s.to_str()?);
            return Ok(pyo3::types::PyBool::new(py, same)
                .to_owned()
                .into_any()
                .unbind());
        }
        if other.cast::<PyTuple>().is_ok() {
            return self.as_tuple(py)?.eq(other).map(|b| {
                pyo3::types::PyBool::new(py, b)
                    .to_owned()
                    .into_any()
                    .unbind()
            });
        }
        Ok(py.NotImplemented())
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.as_tuple(py)?.hash()
    }

    fn __len__(&self) -> usize {
        3
    }

    fn __getitem__(&self, index: isize) -> PyResult<i64> {
        let v = [
            self.raw.code as i64,
            self.raw.bits as i64,
            self.raw.lanes as i64,
        ];
        let i = if index < 0 { index + 3 } else { index };
        if (0..3).contains(&i) {
            Ok(v[i as usize])
        } else {
            Err(PyIndexError::new_err("DType index out of range"))
        }
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.as_tuple(py)?.try_iter().map(|i| i.into_any())
    }

    /// The equal NumPy dtype (``numpy.dtype``): bool, int8..int64, uint8..uint64,
    /// float16/32/64, complex64/128, one lane. ``TypeError`` for a dtype NumPy has no
    /// built-in type for (bfloat16, float8 kinds, sub-byte, vectors).
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let d = self.raw;
        let kind = match d.code {
            0 => Some('i'),
            1 => Some('u'),
            2 if matches!(d.bits, 16 | 32 | 64) => Some('f'),
            5 if matches!(d.bits, 64 | 128) => Some('c'),
            6 if d.bits == 8 => Some('b'),
            _ => None,
        };
        let ok = kind.is_some()
            && d.lanes == 1
            && d.bits.is_multiple_of(8)
            && matches!(d.bits, 8 | 16 | 32 | 64 | 128);
        if !ok {
            return Err(PyTypeError::new_err(format!(
                "NumPy has no built-in dtype for {}",
                self.__str__()
            )));
        }
        let spec = if kind == Some('b') {
            "?".to_string()
        } else {
            format!("{}{}", kind.unwrap(), d.bits / 8)
        };
        py.import("numpy")?.getattr("dtype")?.call1((spec,))
    }
}

impl DType {
    fn tuple_text(&self) -> String {
        format!("({}, {}, {})", self.raw.code, self.raw.bits, self.raw.lanes)
    }
    fn as_tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            [
                self.raw.code as i64,
                self.raw.bits as i64,
                self.raw.lanes as i64,
            ],
        )
    }
}

/// A DLPack device (``DLDevice``): ``device_type`` (``DLDeviceType``: 1 CPU, 2 CUDA, ...) and
/// ``device_id``.
///
/// ``str(device)`` is the library's name, always with the id (``"cpu:0"``, ``"cuda:1"``,
/// ``"cuda_host:0"``); ``Device("cuda:1")`` parses one (``"cuda"`` means id 0; ``ValueError``
/// for an unknown name); ``Device((2, 1))`` takes the pair, checked by the C library's device
/// rule (``dlpack_device_check``): a negative ``device_id`` raises ``ValueError``
/// (``INVALID_DEVICE``: an index-less device is not -1, peer case 54), while device types DLPack
/// does not assign pass through, as in every consumer helper (``name`` is then None). A Device
/// equals the same
/// ``(device_type, device_id)`` tuple (what ``__dlpack_device__`` returns), its name and
/// another Device of the same value, hashes as the tuple and unpacks as one.
#[pyclass(frozen, module = "dlpack_helpers", name = "Device", sequence)]
pub struct Device {
    pub raw: DLDevice,
}

#[pymethods]
impl Device {
    #[new]
    pub fn py_new(spec: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(s) = spec.cast::<PyString>() {
            let c = c_name(s.to_str()?, "the device name")?;
            let mut out = DLDevice::default();
            // SAFETY: NUL-terminated name, valid out pointer.
            check(unsafe { ffi::dlpack_device_parse(c.as_ptr(), &mut out) })?;
            return Ok(Device { raw: out });
        }
        Ok(Device {
            raw: args::device(spec, "Device()")?,
        })
    }

    /// Pickles as ``Device((device_type, device_id))`` (issue 34: a Device crosses
    /// ``multiprocessing``).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, pyo3::types::PyType>, ((i32, i32),))> {
        let d = slf.get().raw;
        Ok((slf.get_type(), ((d.device_type.0, d.device_id),)))
    }

    /// ``DLDeviceType`` as an int (1 CPU, 2 CUDA, 3 CUDA host, 10 ROCm, ...).
    #[getter]
    fn device_type(&self) -> i32 {
        self.raw.device_type.0
    }

    /// The device ordinal.
    #[getter]
    fn device_id(&self) -> i32 {
        self.raw.device_id
    }

    /// The library's name (``dlpack_device_format``), or None for a device type DLPack 1.3
    /// does not assign.
    #[getter]
    fn name(&self) -> Option<String> {
        let d = self.raw;
        // SAFETY: the closure passes our buffer and its size.
        format_with(|b, n, l| unsafe { ffi::dlpack_device_format(d, b, n, l) })
    }

    pub fn __str__(&self) -> String {
        self.name()
            .unwrap_or_else(|| format!("({}, {})", self.raw.device_type.0, self.raw.device_id))
    }

    fn __repr__(&self) -> String {
        match self.name() {
            Some(n) => format!("dlpack_helpers.Device('{n}')"),
            None => format!(
                "dlpack_helpers.Device(({}, {}))",
                self.raw.device_type.0, self.raw.device_id
            ),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let b = |v: bool| {
            pyo3::types::PyBool::new(py, v)
                .to_owned()
                .into_any()
                .unbind()
        };
        if let Ok(d) = other.cast::<Device>() {
            return Ok(b(d.get().raw == self.raw));
        }
        if let Ok(s) = other.cast::<PyString>() {
            return Ok(b(self.name().as_deref() == Some(s.to_str()?)));
        }
        if other.cast::<PyTuple>().is_ok() {
            return Ok(b(self.as_tuple(py)?.eq(other)?));
        }
        Ok(py.NotImplemented())
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.as_tuple(py)?.hash()
    }

    fn __len__(&self) -> usize {
        2
    }

    fn __getitem__(&self, index: isize) -> PyResult<i32> {
        match index {
            0 | -2 => Ok(self.raw.device_type.0),
            1 | -1 => Ok(self.raw.device_id),
            _ => Err(PyIndexError::new_err("Device index out of range")),
        }
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.as_tuple(py)?.try_iter().map(|i| i.into_any())
    }
}

impl Device {
    pub fn as_tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, [self.raw.device_type.0, self.raw.device_id])
    }
    pub fn new(device_type: DLDeviceType, device_id: i32) -> Self {
        Device {
            raw: DLDevice {
                device_type,
                device_id,
            },
        }
    }
}
