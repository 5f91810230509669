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

/// Whether a runtime that failed to load counts as absent from this process (no memory of it
/// can exist) rather than unreachable: no override names its library in `env`, and none of its
/// `defaults` is already loaded in the process (`RTLD_NOLOAD`; a runtime that opened but failed
/// to initialize stays loaded, since libraries are never closed).
pub(crate) fn absent(env: &str, defaults: &[&str]) -> bool {
    if std::env::var_os(env).is_some_and(|v| !v.is_empty()) {
        return false;
    }
    !defaults.iter().any(|name| {
        let Ok(c) = CString::new(*name) else {
            return false;
        };
        // SAFETY: a valid NUL-terminated name; RTLD_NOLOAD loads nothing.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if h.is_null() {
            false
        } else {
            // SAFETY: balances the reference RTLD_NOLOAD took.
            unsafe { libc::dlclose(h) };
            true
        }
    })
}

/// Whether one of `names` is loaded in the process now (`dlopen` with `RTLD_NOLOAD`: nothing is
/// loaded, no constructor runs, no allocation).
pub(crate) fn resident(names: &[&CStr]) -> bool {
    names.iter().any(|name| {
        // SAFETY: a valid NUL-terminated name; RTLD_NOLOAD loads nothing.
        let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if h.is_null() {
            false
        } else {
            // SAFETY: balances the reference RTLD_NOLOAD took.
            unsafe { libc::dlclose(h) };
            true
        }
    })
}

std::thread_local! {
    /// Cells this thread is initialising in [`init_outside`] (by address), to refuse re-entry.
    static INITIALISING: core::cell::RefCell<Vec<usize>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// Initialise a process-wide cell without holding any lock while `init` runs (issue 12: no lock
/// of this library is held while foreign code runs: `dlopen` runs library constructors,
/// `cuInit`/`hipInit`/`cuDevicePrimaryCtxRetain` run the driver, which may call back into this
/// library). `OnceLock::get_or_init` would hold the cell's lock across `init`, so a re-entrant
/// call deadlocks. Here two racing threads may both run `init`; the first value stored wins and
/// the other is dropped (libraries are never closed, and a duplicate primary-context retain
/// is never released anyway). A call re-entering from inside `init` on the same thread gets
/// `None` (the caller reports "re-entered while loading") instead of a deadlock or an endless
/// recursion.
pub(crate) fn init_outside<T>(
    cell: &std::sync::OnceLock<T>,
    init: impl FnOnce() -> T,
) -> Option<&T> {
    if let Some(v) = cell.get() {
        return Some(v);
    }
    let key = cell as *const _ as usize;
    let entered = INITIALISING
        .try_with(|s| {
            let mut s = s.borrow_mut();
            if s.contains(&key) {
                false
            } else {
                s.push(key);
                true
            }
        })
        .unwrap_or(false);
    if !entered {
        return None;
    }
    struct Leave(usize);
    impl Drop for Leave {
        fn drop(&mut self) {
            let _ = INITIALISING.try_with(|s| s.borrow_mut().retain(|k| *k != self.0));
        }
    }
    let _leave = Leave(key);
    let v = init();
    // The first stored value wins; a racer's is dropped here, outside any lock of ours.
    let _ = cell.set(v);
    cell.get()
}

#[cfg(test)]
mod tests {
    use super::init_outside;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Issue 12: an initializer that re-enters the same cell gets `None` (no deadlock, no
    /// endless recursion), and the outer initialisation still stores its value.
    #[test]
    fn reentrant_initialisation_is_refused_not_deadlocked() {
        static CELL: OnceLock<u32> = OnceLock::new();
        let inner = init_outside(&CELL, || {
            assert!(
                init_outside(&CELL, || 2).is_none(),
                "re-entry must be refused"
            );
            1
        });
        assert_eq!(inner, Some(&1));
        assert_eq!(init_outside(&CELL, || 3), Some(&1));
    }

    /// 8 racing threads: every one gets the one stored value; no lock is held while `init` runs
    /// (an `init` that waits for all threads to be inside it at once would hang under a lock).
    #[test]
    fn eight_threads_share_one_value_and_run_init_concurrently() {
        static CELL: OnceLock<usize> = OnceLock::new();
        static INSIDE: AtomicUsize = AtomicUsize::new(0);
        let barrier = std::sync::Barrier::new(8);
        let got: Vec<usize> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|i| {
                    let b = &barrier;
                    s.spawn(move || {
                        *init_outside(&CELL, || {
                            INSIDE.fetch_add(1, Ordering::SeqCst);
                            b.wait(); // all 8 inside `init` at once: impossible under a lock
                            i
                        })
                        .unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(INSIDE.load(Ordering::SeqCst), 8);
        assert!(got.iter().all(|&v| v == got[0]));
    }
}
