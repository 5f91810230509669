//! The Python embedding: C entry points that take Python objects as `void *`. The Python C API
//! itself is found at run time in `host::cpython` (never linked).
//!
//! - [`capsule`]: the standard producer capsule destructor, making and consuming capsules;
//! - [`import`]: `__dlpack__` / `__dlpack_device__` on any object, with version negotiation;
//! - [`exchange`]: the C exchange API found on an object's type (DLPack 1.2/1.3);
//! - [`stream`]: a Python `stream` argument (`None`, `int`, oneAPI queue object) decoded.
//!
//! Rules: DLPack Python specification (capsule names, ownership by renaming), array API
//! `__dlpack__` (keywords, `TypeError` retry, `BufferError`), DLPack 1.3 `DLPackExchangeAPI`.

pub mod capsule;
pub mod exchange;
pub mod import;
pub mod stream;
