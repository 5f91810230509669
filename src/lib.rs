//! dlpack-helpers: the runtime half of DLPack, as one C ABI and a safe Rust API.
//!
//! From Rust, start with [`Managed`] (an owned DLPack tensor that releases exactly once on
//! drop: adopt one a producer handed over, or make one from a `Vec`), [`TensorRef`] (its
//! validated view: shape, strides, dtype, device, layout, slices) and [`Error`] (the status code
//! and message every fallible function returns). The `pyo3` feature adds
//! `Managed::from_pyobject` and `Managed::into_capsule` for extension modules.
//!
//! ```
//! use dlpack_helpers::{DLDataType, DLDevice, Managed};
//!
//! // A producer: a Vec<f32> as a 2 x 3 tensor; the Vec is dropped when the tensor is released.
//! let t = Managed::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
//! let v = t.view();
//! assert_eq!((v.shape(), v.dtype(), v.device()), (&[2, 3][..], DLDataType::F32, DLDevice::CPU));
//! assert_eq!(format!("{} on {}", v.dtype(), v.device()), "float32 on cpu:0");
//! assert_eq!(t.as_slice::<f32>()?.iter().sum::<f32>(), 21.0);
//! // A consumer elsewhere takes the raw pointer and adopts it: checked, released once on drop.
//! let raw = t.into_raw();
//! let back = unsafe { Managed::from_raw(raw) }?; // the one step C hands over a raw pointer
//! assert_eq!(back.as_slice::<f32>()?[5], 6.0);
//! # Ok::<(), dlpack_helpers::Error>(())
//! ```
//!
//! The C library (`libdlpack_helpers.so` / `.a`, declared in `include/dlpack_helpers.h`) is
//! built from the same code by the `clib/` workspace member; a crate depending on this one
//! builds only the Rust library. See `ARCHITECTURE.md` for the layers:
//! [`safe`] → [`capi`] → `host` → [`rules`] → [`abi`].
#![deny(unsafe_op_in_unsafe_fn)]

/// The DLPack 1.3 structs (`#[repr(C)]` mirrors), device types, dtype codes and constants.
///
/// cbindgen:ignore
pub mod abi;
pub mod capi;
/// cbindgen:ignore
pub(crate) mod host;
/// The DLPack rules as pure functions on borrowed values (validation, layout, versions,
/// streams, names), with the crate's internal error type.
///
/// cbindgen:ignore
pub mod rules;
/// The safe Rust API (re-exported at the crate root): owners, views, errors, helpers.
///
/// cbindgen:ignore
pub mod safe;

pub use abi::{DLDataType, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned};
pub use abi::{DLDataTypeCode, DLPackVersion, DLTensor};
pub use safe::*;

/// The Rust example of README.md, run as a doctest (`cargo test`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The status codes (`DLPACK_HELPERS_STATUS_*`) that [`Error::status`] returns.
pub mod status {
    pub use crate::capi::error::*;
}
