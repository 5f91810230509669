//! Run-time loading of device runtimes (`dlopen`/`dlsym`): nothing is linked, and a library
//! that is absent only makes its backend unavailable.

use crate::rules::Error;
use core::ffi::{CStr, c_void};
use std::ffi::CString;

/// An opened shared library. Never closed: function pointers taken from it stay valid for the
/// life of the process.
pub(crate) struct Lib {
    handle: *mut c_void,
    pub(crate) path: String,
}

// SAFETY: a dlopen handle may be used from any thread; `dlsym` is thread-safe.
unsafe impl Send for Lib {}
// SAFETY: shared use only calls dlsym on the handle (thread-safe) and reads `path`.
unsafe impl Sync for Lib {}

fn dlerror_string() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string owned by libc.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".to_owned()
    } else {
        // SAFETY: non-NULL, NUL-terminated.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// Open the library named by the environment variable `env`, or else the first of `defaults`
/// that opens. `what` names the runtime in messages.
pub(crate) fn open(env: &str, defaults: &[&str], what: &str) -> Result<Lib, Error> {
    let candidates: Vec<String> = match std::env::var(env) {
        Ok(p) if !p.is_empty() => vec![p],
        _ => defaults.iter().map(|s| (*s).to_owned()).collect(),
    };
    let mut reasons = Vec::new();
    for path in &candidates {
        let Ok(c) = CString::new(path.as_str()) else {
            reasons.push(format!("{path}: contains a NUL byte"));
            continue;
        };
        // SAFETY: a valid NUL-terminated path; RTLD_LOCAL keeps its symbols out of the global
        // namespace.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            reasons.push(dlerror_string());
        } else {
            return Ok(Lib {
                handle,
                path: path.clone(),
            });
        }
    }
    Err(Error::BackendUnavailable(format!(
        "{what} is not available: {} (set {env} to the library's path to override)",
        reasons.join("; ")
    )))
}

impl Lib {
    /// Look up a function. `T` must be the `unsafe extern "C" fn` type documented for `name`.
    pub(crate) fn sym<T: Copy>(&self, name: &CStr) -> Result<T, Error> {
        assert_eq!(size_of::<T>(), size_of::<*mut c_void>());
        // SAFETY: valid handle and NUL-terminated name.
        let p = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        if p.is_null() {
            return Err(Error::BackendUnavailable(format!(
                "{} does not export {} (driver too old or not the expected library)",
                self.path,
                name.to_string_lossy()
            )));
        }
        // SAFETY: T is a function pointer type of the same size; the caller names its signature.
        Ok(unsafe { core::mem::transmute_copy::<*mut c_void, T>(&p) })
    }

    /// Like [`Lib::sym`], `None` when absent.
    pub(crate) fn sym_opt<T: Copy>(&self, name: &CStr) -> Option<T> {
        self.sym(name).ok()
    }
}

/// A pool of reusable device events per context (CUDA) or device (HIP). An event is taken for
/// one record+wait pair and given back afterwards, so no two threads use one event at a time.
pub(crate) struct EventPool {
    pools: std::sync::Mutex<Vec<(usize, Vec<usize>)>>,
}

impl EventPool {
    pub(crate) const fn new() -> Self {
        EventPool {
            pools: std::sync::Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn take(&self, key: usize) -> Option<usize> {
        let mut g = self.pools.lock().unwrap_or_else(|e| e.into_inner());
        g.iter_mut()
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v.pop())
    }

    pub(crate) fn give(&self, key: usize, event: usize) {
        let mut g = self.pools.lock().unwrap_or_else(|e| e.into_inner());
        match g.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(event),
            None => g.push((key, vec![event])),
        }
    }
}
