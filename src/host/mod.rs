//! What the library finds in the host process at run time: device runtimes and CPython, opened
//! with `dlopen`/`dlsym` (never linked), and memory read without faulting.
//!
//! - [`dl`]: `dlopen`/`dlsym`, residency of a runtime (is it loaded in this process?), the
//!   one-time loader [`dl::Runtime`] and the event pool;
//! - [`cuda`]: the CUDA driver API (`libcuda.so.1`): contexts, events, stream waits, pointer
//!   attributes;
//! - [`hip`]: the HIP runtime (`libamdhip64.so`): the same for ROCm;
//! - [`level_zero`]: the Level Zero loader (`libze_loader.so.1`): USM pointer classes;
//! - [`cpython`]: the CPython C API, resolved from the process with `dlsym` (never linked);
//! - [`probe`]: reading bytes at a foreign integer address without faulting;
//! - [`release`]: releases that wait for a stream (a completion thread polling pooled events).
//!
//! Raw pointers and foreign function pointers live here, but no export: only `capi` calls into
//! this layer, and this layer imports only `rules` and `abi`.

pub(crate) mod cpython;
pub(crate) mod cuda;
pub(crate) mod dl;
pub(crate) mod hip;
pub(crate) mod level_zero;
pub(crate) mod probe;
pub(crate) mod release;
