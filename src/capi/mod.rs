//! The C API: the only place with `extern "C"` and raw pointers.
//!
//! Every export's body is one call of a function from [`boundary`], which catches panics and
//! turns `core` errors into a status and a thread-local message ([`error`]).
#![allow(non_camel_case_types)]
// C names: dlpack_helpers_status, ...
// The exports are `unsafe` because they take raw pointers from C; each doc comment states, for C
// readers, which pointers must be valid and for how long (what a `# Safety` section would say).
#![allow(clippy::missing_safety_doc)]

pub mod boundary;
pub mod convert;
pub mod device;
pub mod error;
pub mod flags;
pub mod info;
pub mod layout;
pub mod names;
pub mod python;
pub mod stream;
pub mod tensor;
pub mod validate;
pub mod version;
