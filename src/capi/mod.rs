//! The C API: the only place with `extern "C"` and raw pointers.
//!
//! Every export's body is one call of a function from [`boundary`], which catches panics and
//! turns `core` errors into a status and a thread-local message ([`error`]).
#![allow(non_camel_case_types)] // C names: dlpack_helpers_status, ...

pub mod boundary;
pub mod device;
pub mod error;
pub mod info;
pub mod python;
pub mod stream;
pub mod tensor;
pub mod version;
