//! Safe Rust logic on borrowed views: no raw pointers, no `extern "C"`.
//!
//! Every rule of the DLPack specification that the C API enforces is decided here, so the
//! `capi` layer only checks pointers, calls into this module and maps errors to statuses.

pub mod device;
pub mod dtype;
pub mod error;
pub mod flags;
pub mod info;
pub mod layout;
pub mod names;
pub mod pointer;
pub mod python;
pub mod stream;
pub mod validate;
pub mod version;

pub use error::{Error, Fault, Refusal};
