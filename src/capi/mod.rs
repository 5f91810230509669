//! The C API: the only place with `extern "C"` and raw pointers.
//!
//! Every export's body is one call of a function from [`boundary`], which catches panics and
//! turns `rules` errors into a status and a thread-local message ([`error`]).
#![allow(non_camel_case_types)]
// C names: dlpack_helpers_status, ...
// The exports are `unsafe` because they take raw pointers from C; each doc comment states, for C
// readers, which pointers must be valid and for how long (what a `# Safety` section would say).
#![allow(clippy::missing_safety_doc)]
// The doc comments end with Doxygen contract lines for the header (`@param[out] x May be NULL.`,
// `@retval ...`); rustdoc would read `[out]` as an intra-doc link.
#![allow(rustdoc::broken_intra_doc_links)]

// Module order is the header's order (cbindgen reads the modules as declared): errors first, then
// what every consumer calls (release, device, version, info), then validation and layout, names,
// conversions, streams, and the Python protocol last.
pub mod boundary;
pub mod error;

pub mod device;
pub mod info;
pub mod tensor;
pub mod version;

pub mod flags;
pub mod layout;
pub mod names;
pub mod validate;

pub mod convert;

pub mod pointer;
pub mod stream;

pub mod python;
