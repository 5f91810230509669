//! Fuzz targets for dlpack-helpers. Each module's `run` takes arbitrary bytes, calls the C API
//! (the exported `extern "C"` functions, through the rlib) and checks the documented contract:
//! no PANIC status (a caught panic is a bug), only documented statuses, a message on every
//! failure, out-parameters untouched on failure, and each function's documented decisions.
//! A violated check panics, which libFuzzer reports as a crash with the input that caused it.
//!
//! Targets: `version` (negotiation, version checks), `stream` (stream decode/encode and
//! `__dlpack__` request resolution), `capsule` (capsule-name classification and the TypeError retry
//! rule), `ownership` (the managed-tensor ownership state
//! machine: every deleter runs exactly once over any sequence of calls), `tensor` (validation,
//! layout, names), `device` (device tables, host access, pointer queries) and `backend`
//! (stream backend registration, waits and synchronizations through registered backends).
//!
//! Speed (issue 24: 10^5 executions per second and more on one core): a stateless target
//! (`version`, `stream`, `device`, `backend`) checks one case per input, so that an execution
//! is one case and libFuzzer's feedback belongs to it; `scripts/fuzz` caps each target's input
//! length near what one case reads. The common checks allocate nothing on the success path.

use dlpack_helpers::capi::error::*;
use std::ffi::CStr;

pub mod backend;
pub mod capsule;
pub mod device;
pub mod ownership;
pub mod stream;
pub mod tensor;
pub mod version;

/// A cursor over the fuzzer's bytes; reads past the end give zeros.
pub struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input(data)
    }
    pub fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let n = N.min(self.0.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        out
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn u8(&mut self) -> u8 {
        self.bytes::<1>()[0]
    }
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.bytes())
    }
    pub fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.bytes())
    }
    pub fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.bytes())
    }
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.bytes())
    }
    /// A small value most of the time (where the interesting boundaries are), else any.
    pub fn small_i64(&mut self) -> i64 {
        let sel = self.u8();
        if sel < 192 {
            (sel % 8) as i64 - 3
        } else {
            self.i64()
        }
    }
    /// Flag bits: usually a combination of the low bits, sometimes anything.
    pub fn flags(&mut self) -> u32 {
        let sel = self.u8();
        if sel < 224 {
            (sel & 0x7) as u32
        } else {
            self.u32()
        }
    }
    /// A device: usually a known or nearby device type, sometimes any integer.
    pub fn device(&mut self) -> dlpack_helpers::abi::DLDevice {
        let sel = self.u8();
        let device_type = if sel < 224 {
            (sel % 24) as i32 - 1
        } else {
            self.i32()
        };
        let id = self.u8();
        let device_id = if id < 240 {
            (id % 4) as i32
        } else {
            self.i32()
        };
        dlpack_helpers::abi::DLDevice {
            device_type: dlpack_helpers::abi::DLDeviceType(device_type),
            device_id,
        }
    }
    /// A version: usually near 1.3, sometimes any pair.
    pub fn version(&mut self) -> dlpack_helpers::abi::DLPackVersion {
        let sel = self.u8();
        if sel < 224 {
            dlpack_helpers::abi::DLPackVersion::new((sel % 4) as u32, ((sel / 4) % 7) as u32)
        } else {
            dlpack_helpers::abi::DLPackVersion::new(self.u32(), self.u32())
        }
    }
}

/// The calling thread's last error message.
pub fn last_error() -> String {
    // SAFETY: never NULL, NUL-terminated, valid until the next failing call on this thread.
    unsafe { CStr::from_ptr(dlpack_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// The common contract of every fallible call: not a panic, a documented status, a message.
pub fn check_status(
    what: &str,
    status: dlpack_helpers_status,
    documented: &[dlpack_helpers_status],
) {
    assert_ne!(
        status,
        DLPACK_HELPERS_STATUS_PANIC,
        "{what}: a panic was caught inside the library: {}",
        last_error()
    );
    assert!(
        status == DLPACK_HELPERS_STATUS_OK || documented.contains(&status),
        "{what}: undocumented status {status} ({})",
        last_error()
    );
    if status != DLPACK_HELPERS_STATUS_OK {
        // SAFETY: never NULL, NUL-terminated; its first byte is read, nothing is copied.
        let first = unsafe { *dlpack_last_error_message() };
        assert!(first != 0, "{what}: status {status} without a message");
        // SAFETY: static string.
        let name = unsafe { CStr::from_ptr(dlpack_status_string(status)) };
        assert_ne!(
            name.to_bytes(),
            b"UNKNOWN_STATUS",
            "{what}: status {status} has no name"
        );
    }
}

/// Storage for an out-parameter, filled with the byte 0xA5 (padding included) so that any
/// write by the library can be seen. Boxed: a move of the value would not keep padding bytes.
pub struct Out<T>(Box<std::mem::MaybeUninit<T>>);

impl<T> Out<T> {
    pub fn new() -> Self {
        let mut v = Box::new(std::mem::MaybeUninit::<T>::uninit());
        // SAFETY: writing bytes into our own storage.
        unsafe {
            v.as_mut_ptr()
                .cast::<u8>()
                .write_bytes(0xA5, size_of::<T>())
        };
        Out(v)
    }
    pub fn ptr(&mut self) -> *mut T {
        self.0.as_mut_ptr()
    }
    /// Whether no byte was written.
    pub fn untouched(&self) -> bool {
        // SAFETY: all bytes were initialized by `new`.
        let b = unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<u8>(), size_of::<T>()) };
        b.iter().all(|&x| x == 0xA5)
    }
    /// The value, after a call that returned OK (and so wrote it).
    pub fn get(self) -> T {
        // SAFETY: the library wrote a whole, valid `T` on OK.
        unsafe { self.0.assume_init_read() }
    }
}

impl<T> Default for Out<T> {
    fn default() -> Self {
        Self::new()
    }
}
