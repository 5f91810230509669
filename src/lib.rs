//! dlpack-helpers: the runtime half of DLPack, as one C ABI.
//!
//! The crate builds `libdlpack_helpers.so` / `libdlpack_helpers.a` with the C API declared in
//! `include/dlpack_helpers.h`, and an rlib whose safe Rust API lives in [`rules`] and whose ABI
//! mirrors live in [`abi`]. See `ARCHITECTURE.md` for the layers.
#![deny(unsafe_op_in_unsafe_fn)]

/// cbindgen:ignore
pub mod abi;
pub mod capi;
/// cbindgen:ignore
pub(crate) mod host;
/// cbindgen:ignore
pub mod rules;
