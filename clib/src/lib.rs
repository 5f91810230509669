//! The C library `libdlpack_helpers.so` / `libdlpack_helpers.a`: every `dlpack_*` export of the
//! `dlpack-helpers` crate (its `capi` part), linked into a shared library and an archive.
//!
//! This file only links the crate in: the exports are `#[unsafe(no_mangle)] extern "C"`
//! functions of `dlpack_helpers::capi`, which rustc exports from a `cdylib` and archives into a
//! `staticlib` whichever crate of the graph defines them. `build.rs` gives the shared library
//! its SONAME.
// The dependency is named after the crate (`dlpack_helpers`), which is also this library's own
// name (the file names above); `extern crate … as` keeps the two apart and links it in.
pub extern crate dlpack_helpers as helpers;
