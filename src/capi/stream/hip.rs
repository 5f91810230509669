//! ROCm through the HIP runtime (`libamdhip64.so`), opened at run time.
//!
//! HIP keeps a current device per thread. A call for `kDLROCM` device N makes N current for
//! the call when another device is current, and restores the previous device afterwards;
//! `kDLROCMHost` memory (device id 0) uses whatever device is current.

use super::dl::{EventPool, Lib};
use crate::abi::{DLDevice, DLDeviceType};
use crate::rules::Error;
use core::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

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
    get_error_name: Option<unsafe extern "C" fn(HipError) -> *const c_char>,
    events: EventPool,
}

// SAFETY: the HIP runtime is thread-safe; the struct holds function pointers and plain data.
unsafe impl Send for Hip {}
// SAFETY: as for Send: shared use only calls the thread-safe runtime or the Mutex-guarded pool.
unsafe impl Sync for Hip {}

static HIP: OnceLock<Result<Hip, Error>> = OnceLock::new();

/// Whether the backend loaded, without cloning the cached error (no allocation: `dlpack_get_info`
/// is a query path).
pub(crate) fn available() -> bool {
    super::dl::init_outside(&HIP, load).is_some_and(Result::is_ok)
}

/// The loaded runtime, loading it on first use (thread-safe; lock-free once loaded).
pub(crate) fn get() -> Result<&'static Hip, Error> {
    match super::dl::init_outside(&HIP, load) {
        Some(r) => r.as_ref().map_err(Clone::clone),
        None => Err(Error::BackendUnavailable(
            "the HIP runtime was used from inside its own initialisation (a re-entrant call from the \
             library's constructor or init function); refused instead of deadlocking"
                .to_owned(),
        )),
    }
}

fn load() -> Result<Hip, Error> {
    let lib = super::dl::open(
        "DLPACK_HELPERS_HIP_LIBRARY",
        &[
            "libamdhip64.so",
            "libamdhip64.so.6",
            "libamdhip64.so.7",
            "libamdhip64.so.5",
        ],
        "the HIP runtime (libamdhip64.so)",
    )?;
    let init: unsafe extern "C" fn(c_uint) -> HipError = lib.sym(c"hipInit")?;
    let hip = Hip {
        get_device: lib.sym(c"hipGetDevice")?,
        set_device: lib.sym(c"hipSetDevice")?,
        event_create: lib.sym(c"hipEventCreateWithFlags")?,
        event_record: lib.sym(c"hipEventRecord")?,
        stream_wait_event: lib.sym(c"hipStreamWaitEvent")?,
        stream_synchronize: lib.sym(c"hipStreamSynchronize")?,
        get_error_name: lib.sym_opt(c"hipGetErrorName"),
        events: EventPool::new(),
        lib,
    };
    // SAFETY: documented signature; flags must be 0.
    let r = unsafe { init(0) };
    if r != HIP_SUCCESS {
        return Err(Error::BackendUnavailable(format!(
            "the HIP runtime {} loaded, but hipInit failed: {}",
            hip.lib.path,
            hip.error_name(r)
        )));
    }
    Ok(hip)
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

    /// Block the host until all work queued on `stream` is complete.
    pub(crate) fn synchronize(&self, device: DLDevice, stream: usize) -> Result<(), Error> {
        let _entered = self.enter(device)?;
        // SAFETY: caller's stream.
        let r = unsafe { (self.stream_synchronize)(stream as Handle) };
        self.check("hipStreamSynchronize", r, device)
    }
}
