//! Run-time loading of device runtimes (`dlopen`/`dlsym`): nothing is linked, and a library
//! that is absent only makes its backend unavailable, until the application loads it
//! ([`Runtime`]: "absent" is never kept for the process).

use crate::rules::Error;
use core::ffi::{CStr, c_void};
use std::ffi::CString;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Why a runtime cannot be used now.
#[derive(Clone, Debug)]
pub(crate) enum LoadError {
    /// Its library is not in the process and no override names one: no memory of it can exist
    /// now. Never final: [`Runtime::state`] checks at each later use whether the application has
    /// loaded the runtime since (a bundled `libamdhip64.so.6` opened by full path, say).
    Absent(Error),
    /// Final for the process: the override names a file that does not open, or the library
    /// opened and then failed (an entry point is missing, or its init call failed). A runtime
    /// that failed this way may own memory this library cannot ask about.
    Failed(Error),
}

impl From<Error> for LoadError {
    fn from(e: Error) -> Self {
        LoadError::Failed(e)
    }
}

/// Open the library named by the environment variable `env`, or else one of `defaults`: the
/// first that is already loaded in the process (its memory is the memory that exists; opening
/// another copy found on the search path would ask a runtime that knows none of it), else the
/// first that opens. `what` names the runtime in messages. Without an override, a failure is
/// [`LoadError::Absent`]: none of the names is in the process or loadable.
pub(crate) fn open(env: &str, defaults: &[&CStr], what: &str) -> Result<Lib, LoadError> {
    use std::os::unix::ffi::OsStrExt;
    let overridden = std::env::var_os(env).filter(|v| !v.is_empty());
    let candidates: Vec<(String, Option<CString>)> = match &overridden {
        Some(p) => vec![(
            p.to_string_lossy().into_owned(),
            CString::new(p.as_bytes()).ok(),
        )],
        None => {
            let (mut first, rest): (Vec<&CStr>, Vec<&CStr>) = defaults
                .iter()
                .copied()
                .partition(|n| resident_by_name(&[*n]));
            first.extend(rest);
            let mut v: Vec<(String, Option<CString>)> = first
                .into_iter()
                .map(|n| (n.to_string_lossy().into_owned(), Some(n.to_owned())))
                .collect();
            // None of the names is loaded, but a file of the runtime's family is (a bundled,
            // renamed copy such as auditwheel's `libamdhip64-1a2b3c4d.so.6`): that object, by
            // its path, before the search path's copies.
            if !resident_by_name(defaults) {
                if let Some(path) = loaded_path_with_stem(stem_of(defaults)) {
                    v.insert(0, (path.to_string_lossy().into_owned(), Some(path)));
                }
            }
            v
        }
    };
    let mut reasons = Vec::new();
    for (path, c) in candidates {
        let Some(c) = c else {
            reasons.push(format!("{path}: contains a NUL byte"));
            continue;
        };
        // SAFETY: a valid NUL-terminated path; RTLD_LOCAL keeps its symbols out of the global
        // namespace.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            reasons.push(dlerror_string());
        } else {
            return Ok(Lib { handle, path });
        }
    }
    let e = Error::BackendUnavailable(if overridden.is_some() {
        format!(
            "{what} is not available: {} (the file {env} names)",
            reasons.join("; ")
        )
    } else {
        format!(
            "{what} is not available: {} (set {env} to the library's path to override)",
            reasons.join("; ")
        )
    });
    Err(if overridden.is_some() {
        LoadError::Failed(e)
    } else {
        LoadError::Absent(e)
    })
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

/// The family stem of a runtime's library names: `names[0]` up to its `.so` (`libcuda`,
/// `libamdhip64`, `libze_loader`).
fn stem_of<'a>(names: &[&'a CStr]) -> &'a [u8] {
    let n: &'a [u8] = names.first().map_or(&[][..], |n| n.to_bytes());
    let end = n.windows(3).position(|w| w == b".so").unwrap_or(n.len());
    &n[..end]
}

/// Whether the file name (last path component) of `path` is `stem` followed by `.` or `-`:
/// `libamdhip64.so.6`, `libamdhip64-1a2b3c4d.so.6` (a wheel's renamed bundle), not
/// `libamdhip64_extra.so` nor `libcudart.so` for `libcuda`.
fn has_stem(path: &[u8], stem: &[u8]) -> bool {
    let file = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    !stem.is_empty()
        && file.len() > stem.len()
        && file.starts_with(stem)
        && matches!(file[stem.len()], b'.' | b'-')
}

/// Walk the loaded objects (`dl_iterate_phdr`) for one whose file name has `stem`; with
/// `want_path`, copy its path (the only allocation, for [`open`]).
fn scan_loaded(stem: &[u8], want_path: bool) -> (bool, Option<CString>) {
    struct Scan<'a> {
        stem: &'a [u8],
        want_path: bool,
        found: bool,
        path: Option<CString>,
        /// The name being looked at, copied (see `each`).
        buf: [u8; 4096],
    }
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> libc::c_int {
        // The loader runs this callback under its own lock (`dl_load_write_lock`), the lock it
        // also holds while it adds an object and its name to the list, so the name is safe to
        // read. A sanitizer cannot see that lock: ThreadSanitizer resets the name's bytes for
        // the callback but not its terminating NUL, so libc's `strlen` on it (intercepted) was
        // reported as a race with the `dlopen` of another thread that had just allocated the
        // name (seen once in the concurrency part of the test command). The name is copied with
        // plain volatile byte reads into a local buffer instead (this library is not
        // instrumented, so neither this test nor an application's TSan run sees a false report).
        // SAFETY: `data` is the `Scan` of `scan_loaded`, live for the whole walk on this thread;
        // `info` is the C library's live entry, whose `dlpi_name` is NULL or NUL-terminated.
        let (scan, name) = unsafe { (&mut *data.cast::<Scan<'_>>(), (*info).dlpi_name) };
        if name.is_null() {
            return 0;
        }
        let buf = &mut scan.buf;
        let mut len = 0;
        loop {
            if len == buf.len() {
                return 0; // longer than any path this library looks for
            }
            // SAFETY: `name` is NUL-terminated and `len` has not passed its NUL yet.
            let b = unsafe { core::ptr::read_volatile(name.add(len).cast::<u8>()) };
            if b == 0 {
                break;
            }
            buf[len] = b;
            len += 1;
        }
        let name = &scan.buf[..len];
        if !has_stem(name, scan.stem) {
            return 0;
        }
        let path = if scan.want_path {
            CString::new(name.to_vec()).ok()
        } else {
            None
        };
        scan.found = true;
        scan.path = path;
        1
    }
    let mut scan = Scan {
        stem,
        want_path,
        found: false,
        path: None,
        buf: [0; 4096],
    };
    // SAFETY: `each` has the documented callback signature and writes only through `data`,
    // which points to the live local `scan`; the walk runs on this thread before returning.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut scan).cast()) };
    (scan.found, scan.path)
}

/// The path of a loaded object of the family `stem` (see [`has_stem`]), if any.
fn loaded_path_with_stem(stem: &[u8]) -> Option<CString> {
    scan_loaded(stem, true).1
}

/// Whether the runtime named by `names` is loaded in the process now: an object whose file
/// name is of the family of `names[0]` (`libamdhip64.so.6`, or a bundled renamed copy such as
/// `libamdhip64-1a2b3c4d.so.6`: one walk of the loaded objects), or else one of `names` by
/// `dlopen` with `RTLD_NOLOAD` (it matches a soname, whatever the file is called). Nothing is
/// loaded, no constructor runs, no Rust allocation; glibc searches the library path for a name
/// that is not loaded, a few failed `open` calls per name: see [`Residency`].
pub(crate) fn resident(names: &[&CStr]) -> bool {
    scan_loaded(stem_of(names), false).0 || resident_by_name(names)
}

/// Whether one of `names` is loaded, by `dlopen` with `RTLD_NOLOAD` only (a soname or file name
/// match: what `dlopen` of that name would give without loading anything new).
fn resident_by_name(names: &[&CStr]) -> bool {
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

/// How many times the process has loaded or unloaded a shared object (`dlpi_adds + dlpi_subs`
/// of `dl_iterate_phdr`, kept by glibc and musl): equal counts mean the same set of loaded
/// objects, since both only grow. `None` where the C library does not report them.
fn load_generation() -> Option<u64> {
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        size: usize,
        data: *mut c_void,
    ) -> libc::c_int {
        let end =
            core::mem::offset_of!(libc::dl_phdr_info, dlpi_subs) + size_of::<libc::c_ulonglong>();
        if !info.is_null() && size >= end {
            // SAFETY: the C library passes a live `dl_phdr_info` of `size` bytes, which covers
            // both counters (checked above); `data` is the `Option<u64>` of `load_generation`.
            unsafe {
                let i = &*info;
                *data.cast::<Option<u64>>() = Some(i.dlpi_adds.wrapping_add(i.dlpi_subs));
            }
        }
        1 // the counters are the same in every entry: stop after the first
    }
    let mut g: Option<u64> = None;
    // SAFETY: `first` has the documented callback signature and writes only through `data`,
    // which points to the live local `g`; `dl_iterate_phdr` runs it on this thread before
    // returning.
    unsafe { libc::dl_iterate_phdr(Some(first), (&raw mut g).cast()) };
    g
}

/// [`resident`] of one list of names, remembered together with the load generation it was
/// seen at: asked again only when the process has loaded or unloaded a shared object since.
/// A failed `RTLD_NOLOAD` lookup searches the library path (about 15 µs per name on Linux),
/// far more than a pointer query that relies on the answer may cost; the generation costs one
/// `dl_iterate_phdr` step (tens of nanoseconds). Lock-free, no allocation.
pub(crate) struct Residency {
    /// 0: never asked; else `(generation + 1) << 1 | resident`.
    seen: AtomicU64,
}

impl Residency {
    pub(crate) const fn new() -> Self {
        Residency {
            seen: AtomicU64::new(0),
        }
    }

    /// Whether one of `names` is loaded in the process now.
    pub(crate) fn resident(&self, names: &[&CStr]) -> bool {
        // Read before asking: a load that lands after this read changes the generation, so an
        // answer stored under it is never reused past that load.
        let key = load_generation().map(|g| g.wrapping_add(1).wrapping_shl(1));
        if let Some(k) = key {
            let seen = self.seen.load(Ordering::Relaxed);
            if seen & !1 == k {
                return seen & 1 == 1;
            }
        }
        let now = resident(names);
        if let Some(k) = key {
            // Relaxed: the value carries everything it means; a racer storing an older key only
            // costs one more lookup.
            self.seen.store(k | u64::from(now), Ordering::Relaxed);
        }
        now
    }
}

/// What a [`Runtime`] can do now.
pub(crate) enum State<T: 'static> {
    /// Loaded and initialized.
    Ready(&'static T),
    /// Not in the process now ([`LoadError::Absent`]): no memory of it can exist.
    Absent(&'static Error),
    /// Present or named by its override, but unusable for good ([`LoadError::Failed`]).
    Failed(&'static Error),
    /// Asked from inside its own loading on this thread (a constructor or init function that
    /// calls back into this library): unusable for this call.
    Reentered,
}

/// A device runtime opened at run time: loaded on first use and kept for the process, except
/// that "absent" is never kept. The first load's result is final when it loaded or failed for
/// good; when it found the runtime absent, each later use checks whether one of `names` is now
/// resident (the application loaded it since: [`Residency`], no allocation) and then loads it
/// once more, into a second cell whose result is final (an absence found there, by a runtime
/// unloaded in between, counts as failed: never as absent). Lock-free once loaded: the loaded
/// path is one `OnceLock` read, as before. No lock is held while `dlopen` and the init call run
/// ([`init_outside`]).
pub(crate) struct Runtime<T: 'static> {
    first: OnceLock<Result<T, LoadError>>,
    late: OnceLock<Result<T, LoadError>>,
    residency: Residency,
    names: &'static [&'static CStr],
    load: fn() -> Result<T, LoadError>,
    /// The runtime in messages, for example "the HIP runtime".
    what: &'static str,
}

impl<T: Sync + Send + 'static> Runtime<T> {
    pub(crate) const fn new(
        what: &'static str,
        names: &'static [&'static CStr],
        load: fn() -> Result<T, LoadError>,
    ) -> Self {
        Runtime {
            first: OnceLock::new(),
            late: OnceLock::new(),
            residency: Residency::new(),
            names,
            load,
            what,
        }
    }

    fn state_of(r: Option<&'static Result<T, LoadError>>) -> Option<State<T>> {
        Some(match r? {
            Ok(t) => State::Ready(t),
            Err(LoadError::Failed(e)) => State::Failed(e),
            Err(LoadError::Absent(e)) => State::Absent(e),
        })
    }

    /// The runtime's state now, loading it on first use (thread-safe; no allocation unless a
    /// load runs).
    pub(crate) fn state(&'static self) -> State<T> {
        let absent = match Self::state_of(init_outside(&self.first, self.load)) {
            Some(State::Absent(e)) => e,
            Some(s) => return s,
            None => return State::Reentered,
        };
        if self.late.get().is_none() && !self.residency.resident(self.names) {
            return State::Absent(absent);
        }
        let load = self.load;
        let late = init_outside(&self.late, || {
            load().map_err(|e| match e {
                LoadError::Absent(e) => LoadError::Failed(e),
                failed => failed,
            })
        });
        Self::state_of(late).unwrap_or(State::Reentered)
    }

    /// Whether it loaded and initialized (now, or at a later load), without cloning an error.
    pub(crate) fn available(&'static self) -> bool {
        matches!(self.state(), State::Ready(_))
    }

    /// The loaded runtime, or why it cannot be used (the error is cloned: not for query paths).
    pub(crate) fn get(&'static self) -> Result<&'static T, Error> {
        match self.state() {
            State::Ready(t) => Ok(t),
            State::Absent(e) | State::Failed(e) => Err(e.clone()),
            State::Reentered => Err(Error::BackendUnavailable(format!(
                "{} was used from inside its own initialisation (a re-entrant call from the \
                 library's constructor or init function); refused instead of deadlocking",
                self.what
            ))),
        }
    }

    /// Whether one of its names is loaded in the process now (see [`Residency`]).
    pub(crate) fn resident(&'static self) -> bool {
        self.residency.resident(self.names)
    }
}

std::thread_local! {
    /// Cells this thread is initialising in [`init_outside`] (by address), to refuse re-entry.
    static INITIALISING: core::cell::RefCell<Vec<usize>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// Cells some thread is initialising now (by address), and the wake-up for the threads that wait
/// for one of them. The lock is held only to look at or change the list, never while `init`
/// runs.
static IN_PROGRESS: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
static FINISHED: std::sync::Condvar = std::sync::Condvar::new();

fn in_progress() -> std::sync::MutexGuard<'static, Vec<usize>> {
    // Never poisoned in practice (no code that can panic runs under it); recover anyway.
    IN_PROGRESS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Initialise a process-wide cell once, without holding any lock while `init` runs (issue 12:
/// no lock of this library is held while foreign code runs: `dlopen` runs library
/// constructors, `cuInit`/`hipInit`/`zeInit`/`cuDevicePrimaryCtxRetain` run the driver, which
/// may call back into this library). `OnceLock::get_or_init` would hold the cell's lock across
/// `init`, so a re-entrant call would deadlock.
///
/// Single-shot (issue 24): one thread runs `init`; threads that arrive meanwhile wait for its
/// result (they hold no lock while waiting: the first one marks the cell "in progress" and
/// releases the list's lock before `init` runs). The runtimes' own documentation does not
/// promise that their init entry points may run concurrently: the CUDA Driver API reference
/// (section "Initialization", `cuInit`) says only that it must be called before any other
/// driver function, HIP's reference says nothing about `hipInit` and threads, and concurrent
/// implicit HIP initialization has crashed (ROCm/hip issue 3063); so the library never makes
/// two init calls at once. A call re-entering from inside `init` on the same thread gets `None`
/// (the caller reports "re-entered while loading") instead of a deadlock or an endless
/// recursion.
///
/// What waiting costs: a thread that `init` itself waits for (a thread the driver starts and
/// joins during `cuInit`, or a thread holding the dynamic loader's lock, inside a library
/// constructor, while `init` needs it for a `dlopen`) and that makes its own first call of
/// the same runtime would wait for `init` in turn. Making a first GPU query from a library
/// constructor while another thread makes its first one is therefore not supported.
pub(crate) fn init_outside<T>(
    cell: &std::sync::OnceLock<T>,
    init: impl FnOnce() -> T,
) -> Option<&T> {
    match try_init_outside(cell, || Ok::<T, core::convert::Infallible>(init())) {
        Some(Ok(v)) => Some(v),
        Some(Err(never)) => match never {},
        None => None,
    }
}

/// [`init_outside`] for an initialisation that may fail for now (a driver call that a later
/// attempt may pass: out of memory, a device busy in exclusive mode): only a success is stored;
/// an error is returned to the caller that ran `init`, and the next use (a thread that waited
/// included) tries again, one thread at a time.
pub(crate) fn try_init_outside<T, E>(
    cell: &std::sync::OnceLock<T>,
    init: impl FnOnce() -> Result<T, E>,
) -> Option<Result<&T, E>> {
    if let Some(v) = cell.get() {
        return Some(Ok(v));
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
    // Wait while another thread initialises this cell; then either its value is there, or
    // (it failed for now, or panicked) this thread takes its turn.
    {
        let mut busy = in_progress();
        loop {
            if let Some(v) = cell.get() {
                return Some(Ok(v));
            }
            if !busy.contains(&key) {
                busy.push(key);
                break;
            }
            busy = FINISHED.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
    }
    /// Clears the "in progress" mark and wakes the waiters, also when `init` fails or panics.
    struct Finish(usize);
    impl Drop for Finish {
        fn drop(&mut self) {
            in_progress().retain(|k| *k != self.0);
            FINISHED.notify_all();
        }
    }
    let finish = Finish(key);
    let v = match init() {
        Ok(v) => v,
        Err(e) => return Some(Err(e)),
    };
    // The only initialiser of this cell: the store cannot lose a race, and the waiters find
    // the value before they can start an `init` of their own.
    let _ = cell.set(v);
    drop(finish);
    cell.get().map(Ok)
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

    /// 16 racing threads: one runs `init`, every one gets its value, and no lock is held while
    /// `init` runs (it starts a thread that takes the same cell's list lock path through another
    /// cell and finishes: impossible if `init` held a lock that thread needs).
    #[test]
    fn sixteen_threads_share_one_value_and_init_runs_once() {
        static CELL: OnceLock<usize> = OnceLock::new();
        static OTHER: OnceLock<usize> = OnceLock::new();
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        let barrier = std::sync::Barrier::new(16);
        let got: Vec<usize> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..16)
                .map(|i| {
                    let b = &barrier;
                    s.spawn(move || {
                        b.wait();
                        *init_outside(&CELL, || {
                            CALLS.fetch_add(1, Ordering::SeqCst);
                            // Another thread initialises another cell while this `init` runs.
                            std::thread::spawn(|| *init_outside(&OTHER, || 7).unwrap())
                                .join()
                                .unwrap();
                            i
                        })
                        .unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(CALLS.load(Ordering::SeqCst), 1, "init ran more than once");
        assert!(got.iter().all(|&v| v == got[0]));
        assert_eq!(OTHER.get(), Some(&7));
    }

    /// A failed initialisation is not stored: the threads that waited for it try again, one at
    /// a time, and the first success is kept.
    #[test]
    fn a_failure_lets_the_next_thread_try_one_at_a_time() {
        static CELL: OnceLock<usize> = OnceLock::new();
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        static INSIDE: AtomicUsize = AtomicUsize::new(0);
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for _ in 0..8 {
                let b = &barrier;
                s.spawn(move || {
                    b.wait();
                    let r = super::try_init_outside(&CELL, || {
                        assert_eq!(
                            INSIDE.fetch_add(1, Ordering::SeqCst),
                            0,
                            "two inits at once"
                        );
                        let n = CALLS.fetch_add(1, Ordering::SeqCst);
                        INSIDE.fetch_sub(1, Ordering::SeqCst);
                        if n < 3 { Err(n) } else { Ok(n) }
                    });
                    match r.unwrap() {
                        Ok(v) => assert_eq!(*v, 3),
                        Err(n) => assert!(n < 3),
                    }
                });
            }
        });
        assert_eq!(CELL.get(), Some(&3));
        assert_eq!(CALLS.load(Ordering::SeqCst), 4);
    }
}
