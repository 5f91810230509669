//! ROCm through the HIP runtime (`libamdhip64.so`), opened at run time.
//!
//! HIP keeps a current device per thread. A call for `kDLROCM` device N makes N current for
//! the call when another device is current, and restores the previous device afterwards;
//! `kDLROCMHost` memory (device id 0) uses whatever device is current.

use super::dl::{EventPool, Lib, LoadError, Runtime, State};
use crate::abi::{DLDevice, DLDeviceType};
use crate::rules::{Error, pointer};
use core::ffi::{CStr, c_char, c_int, c_uint, c_void};

type HipError = c_int;
type Handle = *mut c_void;

const HIP_SUCCESS: HipError = 0;
/// `hipEventDisableTiming`.
const HIP_EVENT_DISABLE_TIMING: c_uint = 0x2;

pub(crate) struct Hip {
    lib: Lib,
    get_device: unsafe extern "C" fn(*mut c_int) -> HipError,
    set_device: unsafe extern "C" fn(c_int) -> HipError,
    event_create: unsafe extern "C" fn(*mut Handle, c_uint) -> HipError,
    event_record: unsafe extern "C" fn(Handle, Handle) -> HipError,
    stream_wait_event: unsafe extern "C" fn(Handle, Handle, c_uint) -> HipError,
    stream_synchronize: unsafe extern "C" fn(Handle) -> HipError,
    /// `hipEventQuery`: polled by the deferred release (`host::release`).
    event_query: Option<unsafe extern "C" fn(Handle) -> HipError>,
    get_error_name: Option<unsafe extern "C" fn(HipError) -> *const c_char>,
    /// `hipPointerGetAttributes` (pointer classification; absent from very old runtimes).
    pointer_get_attributes:
        Option<unsafe extern "C" fn(*mut PointerAttributes, *const c_void) -> HipError>,
    /// `hipRuntimeGetVersion`'s answer, read once at load: it selects the `hipMemoryType`
    /// encoding (ROCm 6 renumbered it). `None` when the call is absent or fails: pointers are
    /// then not classified (never decoded with a guessed encoding).
    runtime_version: Option<i32>,
    events: EventPool,
}

/// `hipPointerAttribute_t` (the same layout in ROCm 5 and 6; ROCm 5 names the first field
/// `memoryType` in a union with `type`).
#[repr(C)]
pub(crate) struct PointerAttributes {
    memory_type: c_uint,
    device: c_int,
    device_pointer: *mut c_void,
    host_pointer: *mut c_void,
    is_managed: c_int,
    allocation_flags: c_uint,
}

/// `hipErrorInvalidValue`: what ROCm 5 (and some 6.x releases) answer for memory HIP does not
/// know.
const HIP_ERROR_INVALID_VALUE: HipError = 1;
/// `hipErrorNotReady`: `hipEventQuery`'s "the work before the event is not done yet".
const HIP_ERROR_NOT_READY: HipError = 600;

// SAFETY: the HIP runtime is thread-safe; the struct holds function pointers and plain data.
unsafe impl Send for Hip {}
// SAFETY: as for Send: shared use only calls the thread-safe runtime or the Mutex-guarded pool.
unsafe impl Sync for Hip {}

/// The environment override of the runtime's path, and the names tried without it.
pub(crate) const ENV: &str = "DLPACK_HELPERS_HIP_LIBRARY";
pub(crate) const NAMES: &[&CStr] = &[
    c"libamdhip64.so",
    c"libamdhip64.so.6",
    c"libamdhip64.so.7",
    c"libamdhip64.so.5",
];

/// Loaded on first use and kept, except "absent": a runtime the application loads later (a
/// bundled `libamdhip64.so.6` opened by full path) is found (see `dl::Runtime`).
static HIP: Runtime<Hip> = Runtime::new("the HIP runtime", NAMES, load);

/// What the runtime can do now (no allocation: the pointer queries use it).
pub(crate) fn state() -> State<Hip> {
    HIP.state()
}

/// Whether the backend loaded, without cloning the cached error (no allocation: `dlpack_get_info`
/// is a query path).
pub(crate) fn available() -> bool {
    HIP.available()
}

/// The loaded runtime, loading it on first use (thread-safe; lock-free once loaded).
pub(crate) fn get() -> Result<&'static Hip, Error> {
    HIP.get()
}

fn load() -> Result<Hip, LoadError> {
    let lib = super::dl::open(ENV, NAMES, "the HIP runtime (libamdhip64.so)")?;
    let init: unsafe extern "C" fn(c_uint) -> HipError = lib.sym(c"hipInit")?;
    let mut hip = Hip {
        get_device: lib.sym(c"hipGetDevice")?,
        set_device: lib.sym(c"hipSetDevice")?,
        event_create: lib.sym(c"hipEventCreateWithFlags")?,
        event_record: lib.sym(c"hipEventRecord")?,
        stream_wait_event: lib.sym(c"hipStreamWaitEvent")?,
        stream_synchronize: lib.sym(c"hipStreamSynchronize")?,
        event_query: lib.sym_opt(c"hipEventQuery"),
        get_error_name: lib.sym_opt(c"hipGetErrorName"),
        pointer_get_attributes: lib.sym_opt(c"hipPointerGetAttributes"),
        runtime_version: None,
        events: EventPool::new(),
        lib,
    };
    // SAFETY: documented signature; flags must be 0.
    let r = unsafe { init(0) };
    if r != HIP_SUCCESS {
        return Err(LoadError::Failed(Error::BackendUnavailable(format!(
            "the HIP runtime {} loaded, but hipInit failed: {}",
            hip.lib.path,
            hip.error_name(r)
        ))));
    }
    let get_version: Option<unsafe extern "C" fn(*mut c_int) -> HipError> =
        hip.lib.sym_opt(c"hipRuntimeGetVersion");
    if let Some(f) = get_version {
        let mut v: c_int = 0;
        // SAFETY: documented signature, valid out-pointer.
        if unsafe { f(&mut v) } == HIP_SUCCESS {
            hip.runtime_version = Some(v);
        }
    }
    Ok(hip)
}

impl Hip {
    /// Whether this runtime can classify pointers (`CAP_POINTER_ROCM`).
    pub(crate) fn can_classify(&self) -> bool {
        self.pointer_get_attributes.is_some() && self.runtime_version.is_some()
    }
}

/// Whether the runtime is loaded and can classify pointers (`CAP_POINTER_ROCM`; no allocation).
pub(crate) fn can_classify() -> bool {
    matches!(state(), State::Ready(h) if h.can_classify())
}

/// Restores the device that was current before [`Hip::enter`].
struct Entered<'a> {
    hip: &'a Hip,
    device: i32,
    restore: Option<i32>,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        if let Some(prev) = self.restore {
            // SAFETY: documented signature.
            unsafe { (self.hip.set_device)(prev) };
        }
    }
}

impl Hip {
    fn error_name(&self, r: HipError) -> String {
        if let Some(f) = self.get_error_name {
            // SAFETY: documented signature; returns a static string or NULL.
            let s = unsafe { f(r) };
            if !s.is_null() {
                // SAFETY: NUL-terminated static string.
                let name = unsafe { core::ffi::CStr::from_ptr(s) }.to_string_lossy();
                return format!("{name} ({r})");
            }
        }
        format!("hipError_t {r}")
    }

    fn check(&self, call: &str, r: HipError, device: DLDevice) -> Result<(), Error> {
        if r == HIP_SUCCESS {
            return Ok(());
        }
        Err(Error::DeviceError(format!(
            "{call} failed for device ({}, {}): {}",
            device.device_type.0,
            device.device_id,
            self.error_name(r)
        )))
    }

    fn enter(&self, device: DLDevice) -> Result<Entered<'_>, Error> {
        let mut cur: c_int = 0;
        self.check(
            "hipGetDevice",
            // SAFETY: the runtime's documented signature; `cur` is a live local out-pointer.
            unsafe { (self.get_device)(&mut cur) },
            device,
        )?;
        if device.device_type != DLDeviceType::kDLROCM || device.device_id == cur {
            return Ok(Entered {
                hip: self,
                device: cur,
                restore: None,
            });
        }
        self.check(
            "hipSetDevice",
            // SAFETY: the documented signature; it takes a plain integer (a bad ordinal is an
            // error the runtime returns, checked here).
            unsafe { (self.set_device)(device.device_id) },
            device,
        )?;
        Ok(Entered {
            hip: self,
            device: device.device_id,
            restore: Some(cur),
        })
    }

    /// Make `consumer` wait for all work queued so far on `producer`, without blocking the host.
    pub(crate) fn wait(
        &self,
        device: DLDevice,
        producer: usize,
        consumer: usize,
    ) -> Result<(), Error> {
        let entered = self.enter(device)?;
        let key = entered.device as usize;
        let event = match self.events.take(key) {
            Some(e) => e,
            None => {
                let mut e: Handle = core::ptr::null_mut();
                // SAFETY: valid out-pointer; documented flag.
                let r = unsafe { (self.event_create)(&mut e, HIP_EVENT_DISABLE_TIMING) };
                self.check("hipEventCreateWithFlags", r, device)?;
                e as usize
            }
        };
        // SAFETY: an event of the current device; streams are the caller's live streams.
        let r = unsafe { (self.event_record)(event as Handle, producer as Handle) };
        let result = self
            .check("hipEventRecord (producer stream)", r, device)
            .and_then(|()| {
                // SAFETY: as above.
                let r = unsafe { (self.stream_wait_event)(consumer as Handle, event as Handle, 0) };
                self.check("hipStreamWaitEvent (consumer stream)", r, device)
            });
        self.events.give(key, event);
        result
    }

    /// Classify the memory at `ptr` with one `hipPointerGetAttributes` call (any address inside
    /// an allocation answers like its base). `Ok(None)`: HIP does not know the memory.
    pub(crate) fn pointer_claim(&self, ptr: usize) -> Result<Option<pointer::Claim>, Error> {
        let (Some(f), Some(version)) = (self.pointer_get_attributes, self.runtime_version) else {
            return Err(Error::BackendUnavailable(format!(
                "the HIP runtime {} lacks hipPointerGetAttributes or hipRuntimeGetVersion, so \
                 its pointers cannot be classified",
                self.lib.path
            )));
        };
        let mut a = PointerAttributes {
            memory_type: 0,
            device: 0,
            device_pointer: core::ptr::null_mut(),
            host_pointer: core::ptr::null_mut(),
            is_managed: 0,
            allocation_flags: 0,
        };
        // SAFETY: documented signature; `a` is a live `hipPointerAttribute_t`.
        let r = unsafe { f(&mut a, ptr as *const c_void) };
        if r == HIP_ERROR_INVALID_VALUE {
            return Ok(None);
        }
        if r != HIP_SUCCESS {
            return Err(Error::DeviceError(format!(
                "hipPointerGetAttributes failed for pointer 0x{ptr:x}: {}",
                self.error_name(r)
            )));
        }
        pointer::hip_claim(version, a.memory_type, a.device, a.is_managed != 0).map_err(|t| {
            Error::DeviceError(format!(
                "hipPointerGetAttributes returned memory type {t} for pointer 0x{ptr:x} (HIP \
                 runtime version {version}), which has no DLPack meaning"
            ))
        })
    }

    /// Record a pooled event on `stream` (the device chosen as for [`Hip::wait`]) standing for
    /// the work queued there so far. Returns `(device, event)`; see [`Hip::event_done`] and
    /// [`Hip::recycle`]. Never blocks the host.
    pub(crate) fn record(&self, device: DLDevice, stream: usize) -> Result<(usize, usize), Error> {
        if self.event_query.is_none() {
            return Err(Error::BackendUnavailable(format!(
                "the HIP runtime {} does not export hipEventQuery, so a release cannot wait for a \
                 stream",
                self.lib.path
            )));
        }
        let entered = self.enter(device)?;
        let key = entered.device as usize;
        let event = match self.events.take(key) {
            Some(e) => e,
            None => {
                let mut e: Handle = core::ptr::null_mut();
                // SAFETY: valid out-pointer; documented flag.
                let r = unsafe { (self.event_create)(&mut e, HIP_EVENT_DISABLE_TIMING) };
                self.check("hipEventCreateWithFlags", r, device)?;
                e as usize
            }
        };
        // SAFETY: an event of the current device; the stream is the caller's live stream.
        let r = unsafe { (self.event_record)(event as Handle, stream as Handle) };
        if let Err(e) = self.check("hipEventRecord (release stream)", r, device) {
            self.events.give(key, event);
            return Err(e);
        }
        Ok((key, event))
    }

    /// Whether the work before an event from [`Hip::record`] is done (`hipEventQuery`; never
    /// blocks).
    pub(crate) fn event_done(&self, _key: usize, event: usize) -> Result<bool, Error> {
        let query = self.event_query.ok_or_else(|| {
            Error::BackendUnavailable("the HIP runtime does not export hipEventQuery".into())
        })?;
        // SAFETY: a live event of this library's pool.
        match unsafe { query(event as Handle) } {
            HIP_SUCCESS => Ok(true),
            HIP_ERROR_NOT_READY => Ok(false),
            r => Err(Error::DeviceError(format!(
                "hipEventQuery (release event) failed: {}",
                self.error_name(r)
            ))),
        }
    }

    /// Give a completed event from [`Hip::record`] back to its device's pool.
    pub(crate) fn recycle(&self, key: usize, event: usize) {
        self.events.give(key, event);
    }

    /// Block the host until all work queued on `stream` is complete.
    pub(crate) fn synchronize(&self, device: DLDevice, stream: usize) -> Result<(), Error> {
        let _entered = self.enter(device)?;
        // SAFETY: caller's stream.
        let r = unsafe { (self.stream_synchronize)(stream as Handle) };
        self.check("hipStreamSynchronize", r, device)
    }
}
