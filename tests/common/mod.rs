//! Shared by the stream tests: builds a fake device runtime (tests-c/fake/*.c) as a shared
//! library, points dlpack-helpers at it through its environment override, and gives access to
//! the fake's call counters.
#![allow(dead_code)]

use dlpack_helpers::abi::{DLDevice, DLDeviceType};
use dlpack_helpers::capi::error::dlpack_last_error_message;
use dlpack_helpers::capi::info::{dlpack_get_info, dlpack_helpers_info};
use dlpack_helpers::capi::pointer::{dlpack_helpers_pointer_info, dlpack_pointer_classify};
use std::ffi::{CStr, CString, c_char, c_int, c_long, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Compile `tests-c/fake/<name>.c` into a shared library (once per test binary).
pub fn build_fake(name: &str) -> PathBuf {
    let out =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}.so", std::process::id()));
    compile_fake(name, &out, None);
    out
}

/// Compile `tests-c/fake/<name>.c` with the SONAME of a real runtime (`libamdhip64.so.6`,
/// `libcuda.so.1`, `libze_loader.so.1`) into a directory of its own, which is on no search path:
/// a runtime that an application bundles and opens by full path. Nothing is loaded here.
pub fn build_fake_as(name: &str, soname: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bundled-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(soname);
    compile_fake(name, &out, Some(soname));
    out
}

fn compile_fake(name: &str, out: &Path, soname: Option<&str>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("tests-c/fake").join(format!("{name}.c"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let status = Command::new(&cc)
        .args([
            "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
        ])
        .args(soname.map(|n| format!("-Wl,-soname,{n}")))
        .arg("-o")
        .arg(out)
        .arg(&src)
        .arg("-lpthread")
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler '{cc}': {e}"));
    assert!(status.success(), "building {} failed", src.display());
}

/// Whether a library of this name is loaded in the process now (`RTLD_NOLOAD`).
pub fn is_loaded(name: &CStr) -> bool {
    // SAFETY: a NUL-terminated name; RTLD_NOLOAD loads nothing.
    let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if !h.is_null() {
        // SAFETY: balances the reference RTLD_NOLOAD took.
        unsafe { libc::dlclose(h) };
    }
    !h.is_null()
}

/// The fake's control functions, from the same (already loaded or loaded now) library.
pub struct Fake {
    handle: *mut c_void,
}
// SAFETY: a dlopen handle may be used from any thread (dlsym is thread-safe).
unsafe impl Send for Fake {}
// SAFETY: shared use only calls dlsym on the handle, which is never closed.
unsafe impl Sync for Fake {}

impl Fake {
    pub fn open(path: &Path) -> Fake {
        let c = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a live NUL-terminated path.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!handle.is_null(), "dlopen of the fake failed");
        Fake { handle }
    }
    pub fn sym<T: Copy>(&self, name: &CStr) -> T {
        // SAFETY: `handle` is a live dlopen handle (never closed) and `name` is NUL-terminated.
        let p = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        assert!(!p.is_null(), "{name:?} missing in the fake");
        // SAFETY: callers name a fake symbol and give its exact function-pointer type as `T` (a
        // pointer-sized Copy value, checked non-NULL above).
        unsafe { std::mem::transmute_copy(&p) }
    }
    #[allow(
        clippy::useless_conversion,
        reason = "c_long is i64 on LP64 Linux but i32 on other targets: i64::from widens \
                  losslessly on both, where `as` would hide a truncation if the type changed"
    )]
    pub fn count(&self, name: &str) -> i64 {
        let f: unsafe extern "C" fn(*const c_char) -> c_long = self.sym(c"fake_count");
        let n = CString::new(name).unwrap();
        // SAFETY: the fake's C signature; the name is a live NUL-terminated CString and the out-
        // pointers are live locals.
        let v = unsafe { f(n.as_ptr()) };
        assert!(v >= 0, "the fake does not count {name}");
        i64::from(v)
    }
    pub fn fail(&self, name: &str, code: c_int) {
        let f: unsafe extern "C" fn(*const c_char, c_int) = self.sym(c"fake_fail");
        let n = CString::new(name).unwrap();
        // SAFETY: the fake's C signature; the name is a live NUL-terminated CString and the out-
        // pointers are live locals.
        unsafe { f(n.as_ptr(), code) }
    }
    pub fn reset(&self) {
        let f: unsafe extern "C" fn() = self.sym(c"fake_reset_counts");
        // SAFETY: the fake's C signature, no arguments.
        unsafe { f() }
    }
    /// The two handle arguments of the last call of `name`.
    pub fn last(&self, name: &str) -> (usize, usize) {
        let f: unsafe extern "C" fn(*const c_char, *mut *mut c_void, *mut *mut c_void) =
            self.sym(c"fake_last");
        let n = CString::new(name).unwrap();
        let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: the fake's C signature; the name is a live NUL-terminated CString and the out-
        // pointers are live locals.
        unsafe { f(n.as_ptr(), &mut a, &mut b) };
        (a as usize, b as usize)
    }
}

/// `dlpack_pointer_classify` of `p` in Level Zero context `ctx` (0: none), asserting OK.
pub fn classify_at(p: usize, ctx: usize) -> dlpack_helpers_pointer_info {
    // SAFETY: a C struct of integers and nullable pointers: all bits zero is a valid value.
    let mut i: dlpack_helpers_pointer_info = unsafe { std::mem::zeroed() };
    i.struct_size = std::mem::size_of::<dlpack_helpers_pointer_info>();
    // SAFETY: the pointer and context are opaque addresses the library only hands to the
    // drivers (never dereferenced); the out-pointer is a live local.
    let s = unsafe { dlpack_pointer_classify(p as *const c_void, ctx as *mut c_void, &mut i) };
    assert_eq!(s, 0, "{}", last_error());
    i
}

/// `dlpack_get_info`'s capability bits.
pub fn info_capabilities() -> u64 {
    // SAFETY: a C struct of integers, bools and nullable pointers: all bits zero is valid.
    let mut info: dlpack_helpers_info = unsafe { std::mem::zeroed() };
    info.struct_size = std::mem::size_of::<dlpack_helpers_info>();
    // SAFETY: a live local out-pointer.
    assert_eq!(unsafe { dlpack_get_info(&mut info) }, 0, "{}", last_error());
    info.capabilities
}

/// A stand-in for a device allocation: the fakes only compare addresses, so a leaked host
/// buffer serves.
pub fn region(size: usize) -> usize {
    Box::leak(vec![0u8; size].into_boxed_slice()).as_ptr() as usize
}

pub fn dev(t: DLDeviceType, id: i32) -> DLDevice {
    DLDevice {
        device_type: t,
        device_id: id,
    }
}

pub fn last_error() -> String {
    // SAFETY: dlpack_last_error_message returns a NUL-terminated thread-local string, valid until
    // the next failing call on this thread; it is copied at once.
    unsafe { CStr::from_ptr(dlpack_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// The stream paths serve `device` now: `dlpack_stream_backend_check` of its type is OK and
/// one `dlpack_stream_wait` with made-up handles (the fakes only record them) succeeds.
pub fn assert_stream_paths_serve(device: DLDevice) {
    use dlpack_helpers::capi::error::DLPACK_HELPERS_STATUS_OK;
    use dlpack_helpers::capi::stream::{
        DLPACK_HELPERS_STREAM_HANDLE, dlpack_helpers_stream, dlpack_stream_backend_check,
        dlpack_stream_wait,
    };
    assert_eq!(
        // SAFETY: plain-value argument.
        unsafe { dlpack_stream_backend_check(device.device_type) },
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
    let consumer = dlpack_helpers_stream {
        kind: DLPACK_HELPERS_STREAM_HANDLE,
        handle: 0x200 as *mut c_void,
    };
    assert_eq!(
        // SAFETY: stream handles are opaque values the fake only records; live locals.
        unsafe { dlpack_stream_wait(device, 0x100 as *mut c_void, &consumer) },
        DLPACK_HELPERS_STATUS_OK,
        "{}",
        last_error()
    );
}

/// Count the heap allocations of the calling thread (other test threads do not disturb it):
/// installs a global allocator that forwards to `System` and defines
/// `fn thread_allocations(f: impl FnOnce()) -> usize`, the allocations `f` made. Invoke once, at
/// the top level of a test binary.
#[macro_export]
macro_rules! count_thread_allocations {
    () => {
        struct Counting;
        thread_local! {
            static THREAD_ALLOCS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        }
        // SAFETY: every call is forwarded to System unchanged; counting has no effect on memory.
        unsafe impl std::alloc::GlobalAlloc for Counting {
            unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
                let _ = THREAD_ALLOCS.try_with(|c| c.set(c.get() + 1));
                // SAFETY: forwards the caller's GlobalAlloc contract (non-zero-size layout) to
                // System unchanged.
                unsafe { std::alloc::System.alloc(l) }
            }
            unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
                // SAFETY: forwards the caller's contract (`p` came from `alloc` with layout `l`)
                // to System unchanged.
                unsafe { std::alloc::System.dealloc(p, l) }
            }
        }
        #[global_allocator]
        static GLOBAL: Counting = Counting;

        fn thread_allocations(f: impl FnOnce()) -> usize {
            let before = THREAD_ALLOCS.with(|c| c.get());
            f();
            THREAD_ALLOCS.with(|c| c.get()) - before
        }
    };
}

/// A managed tensor whose deleter counts its calls (and remembers the thread), for the deferred
/// release tests: `Released::new()` gives a heap tensor the deleter frees; `wait_for(n)` blocks
/// until the deleter ran `n` times in all (a condition variable, with a guard that fails the
/// test instead of hanging if it never happens).
pub mod released {
    use dlpack_helpers::abi::{DLManagedTensorVersioned, DLPackVersion};
    use std::sync::{Condvar, Mutex};

    pub struct Counter {
        pub runs: usize,
        pub threads: Vec<std::thread::ThreadId>,
    }
    static COUNT: Mutex<Counter> = Mutex::new(Counter {
        runs: 0,
        threads: Vec::new(),
    });
    static CHANGED: Condvar = Condvar::new();

    unsafe extern "C" fn deleter(t: *mut DLManagedTensorVersioned) {
        // SAFETY: made by Box::into_raw in `new`, freed once here.
        drop(unsafe { Box::from_raw(t) });
        if std::env::var_os("DLPACK_RELEASE_CHILD").is_some() {
            println!("deleter ran");
        }
        let mut c = COUNT.lock().unwrap_or_else(|e| e.into_inner());
        c.runs += 1;
        c.threads.push(std::thread::current().id());
        CHANGED.notify_all();
    }

    /// A fresh versioned tensor (DLPack 1.3) with the counting deleter.
    pub fn new() -> *mut DLManagedTensorVersioned {
        // SAFETY: a C struct of integers, nullable pointers and an Option of a function
        // pointer: all bits zero is a valid value.
        let mut t: DLManagedTensorVersioned = unsafe { std::mem::zeroed() };
        t.version = DLPackVersion { major: 1, minor: 3 };
        t.deleter = Some(deleter);
        Box::into_raw(Box::new(t))
    }

    /// How many times the deleter ran so far.
    pub fn runs() -> usize {
        COUNT.lock().unwrap_or_else(|e| e.into_inner()).runs
    }

    /// The threads the deleter ran on, in order.
    pub fn threads() -> Vec<std::thread::ThreadId> {
        COUNT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .threads
            .clone()
    }

    /// Block until the deleter ran `n` times in all.
    pub fn wait_for(n: usize) {
        let guard = std::time::Duration::from_secs(120);
        let c = COUNT.lock().unwrap_or_else(|e| e.into_inner());
        let (c, timeout) = CHANGED
            .wait_timeout_while(c, guard, |c| c.runs < n)
            .unwrap_or_else(|e| e.into_inner());
        assert!(
            !timeout.timed_out(),
            "the deleter ran {} times, never {n}",
            c.runs
        );
    }
}

/// Block until `cond()` holds (polling with `yield_now`), with a guard that fails the test
/// instead of hanging: for waiting on another thread's progress, never for a duration.
pub fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(120),
            "never happened: {what}"
        );
        std::thread::yield_now();
    }
}
