//! CUDA through the driver API (`libcuda.so.1`), opened at run time.
//!
//! Only documented driver entry points and constants are used. Contexts: a tensor on
//! `kDLCUDA` device N is served in the primary context of N (the one PyTorch, CuPy, JAX and the
//! CUDA runtime use); when the calling thread's current context already is that context it is
//! used as is, otherwise the primary context is pushed for the call and popped afterwards.
//! Pinned (`kDLCUDAHost`) and managed (`kDLCUDAManaged`) memory, whose device id is always 0,
//! say nothing about the device the work runs on: they use the context of the producer's stream
//! (`cuStreamGetCtx`), which may be another device's; for the special handles (NULL, 0x1, 0x2,
//! which name a stream of whichever context is current) the current context when there is one,
//! else the primary context of device 0. Primary contexts are retained once per device and kept
//! for the life of the process.

use super::dl::{EventPool, Lib, LoadError, Runtime, State};
use crate::abi::{DLDevice, DLDeviceType};
use crate::rules::Error;
use core::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

type CUresult = c_int;
type Handle = *mut c_void;

const CUDA_SUCCESS: CUresult = 0;
const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
/// `CUDA_ERROR_NOT_READY`: `cuEventQuery`'s "the work before the event is not done yet".
const CUDA_ERROR_NOT_READY: CUresult = 600;
/// `CU_EVENT_DISABLE_TIMING`: events used only for ordering are cheaper without timing.
const CU_EVENT_DISABLE_TIMING: c_uint = 0x2;
/// `CU_POINTER_ATTRIBUTE_MEMORY_TYPE`, `_IS_MANAGED`, `_DEVICE_ORDINAL`.
const ATTR_MEMORY_TYPE: c_int = 2;
const ATTR_IS_MANAGED: c_int = 8;
const ATTR_DEVICE_ORDINAL: c_int = 9;
/// `CU_MEMORYTYPE_HOST`, `CU_MEMORYTYPE_DEVICE`.
const MEMORYTYPE_HOST: c_uint = 1;
const MEMORYTYPE_DEVICE: c_uint = 2;

/// Devices whose primary context is cached (ordinals 0..MAX_DEVICES).
const MAX_DEVICES: usize = 64;

pub(crate) struct Cuda {
    lib: Lib,
    ctx_get_current: unsafe extern "C" fn(*mut Handle) -> CUresult,
    ctx_push: unsafe extern "C" fn(Handle) -> CUresult,
    ctx_pop: unsafe extern "C" fn(*mut Handle) -> CUresult,
    device_get: unsafe extern "C" fn(*mut c_int, c_int) -> CUresult,
    primary_retain: unsafe extern "C" fn(*mut Handle, c_int) -> CUresult,
    event_create: unsafe extern "C" fn(*mut Handle, c_uint) -> CUresult,
    event_record: unsafe extern "C" fn(Handle, Handle) -> CUresult,
    stream_wait_event: unsafe extern "C" fn(Handle, Handle, c_uint) -> CUresult,
    stream_synchronize: unsafe extern "C" fn(Handle) -> CUresult,
    /// `cuEventQuery`: polled by the deferred release (`host::release`); every driver has it,
    /// but a driver without it only loses that one use.
    event_query: Option<unsafe extern "C" fn(Handle) -> CUresult>,
    /// `cuStreamGetCtx` (CUDA 9.2 and newer); without it the stream's context is not asked.
    stream_get_ctx: Option<unsafe extern "C" fn(Handle, *mut Handle) -> CUresult>,
    /// `cuPointerGetAttributes` (CUDA 7.0 and newer): the three attributes a classification needs
    /// in one call.
    pointer_get_attributes:
        unsafe extern "C" fn(c_uint, *const c_int, *const *mut c_void, u64) -> CUresult,
    get_error_name: Option<unsafe extern "C" fn(CUresult, *mut *const c_char) -> CUresult>,
    /// Retained primary contexts by ordinal (only successes are kept).
    primary: [OnceLock<usize>; MAX_DEVICES],
    events: EventPool,
}

// SAFETY: the driver API is thread-safe; the struct holds function pointers and plain data.
unsafe impl Send for Cuda {}
// SAFETY: as for Send: shared use only calls the thread-safe driver API or reads the OnceLock-
// and Mutex-guarded fields.
unsafe impl Sync for Cuda {}

/// The environment override of the driver's path, and the names tried without it.
pub(crate) const ENV: &str = "DLPACK_HELPERS_CUDA_LIBRARY";
pub(crate) const NAMES: &[&CStr] = &[c"libcuda.so.1", c"libcuda.so"];

/// Loaded on first use and kept, except "absent": a driver the application loads later is
/// found (see `dl::Runtime`).
static CUDA: Runtime<Cuda> = Runtime::new("the CUDA driver", NAMES, load);

/// What the driver can do now (no allocation: the pointer queries use it).
pub(crate) fn state() -> State<Cuda> {
    CUDA.state()
}

/// Whether the backend loaded, without cloning the cached error (no allocation: `dlpack_get_info`
/// is a query path).
pub(crate) fn available() -> bool {
    CUDA.available()
}

/// The loaded driver, loading it on first use (thread-safe; lock-free once loaded).
pub(crate) fn get() -> Result<&'static Cuda, Error> {
    CUDA.get()
}

fn load() -> Result<Cuda, LoadError> {
    let lib = super::dl::open(ENV, NAMES, "the CUDA driver (libcuda.so.1)")?;
    let init: unsafe extern "C" fn(c_uint) -> CUresult = lib.sym(c"cuInit")?;
    let cuda = Cuda {
        ctx_get_current: lib.sym(c"cuCtxGetCurrent")?,
        ctx_push: lib.sym(c"cuCtxPushCurrent_v2")?,
        ctx_pop: lib.sym(c"cuCtxPopCurrent_v2")?,
        device_get: lib.sym(c"cuDeviceGet")?,
        primary_retain: lib.sym(c"cuDevicePrimaryCtxRetain")?,
        event_create: lib.sym(c"cuEventCreate")?,
        event_record: lib.sym(c"cuEventRecord")?,
        stream_wait_event: lib.sym(c"cuStreamWaitEvent")?,
        stream_synchronize: lib.sym(c"cuStreamSynchronize")?,
        event_query: lib.sym_opt(c"cuEventQuery"),
        stream_get_ctx: lib.sym_opt(c"cuStreamGetCtx"),
        pointer_get_attributes: lib.sym(c"cuPointerGetAttributes")?,
        get_error_name: lib.sym_opt(c"cuGetErrorName"),
        primary: [const { OnceLock::new() }; MAX_DEVICES],
        events: EventPool::new(),
        lib,
    };
    // SAFETY: documented signature; flags must be 0.
    let r = unsafe { init(0) };
    if r != CUDA_SUCCESS {
        return Err(LoadError::Failed(Error::BackendUnavailable(format!(
            "the CUDA driver {} loaded, but cuInit failed: {}",
            cuda.lib.path,
            cuda.error_name(r)
        ))));
    }
    Ok(cuda)
}

/// Pops a context pushed by [`Cuda::enter`].
struct Entered<'a> {
    cuda: &'a Cuda,
    ctx: usize,
    pushed: bool,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        if self.pushed {
            let mut out: Handle = core::ptr::null_mut();
            // SAFETY: pops the context this guard pushed on this thread.
            unsafe { (self.cuda.ctx_pop)(&mut out) };
        }
    }
}

impl Cuda {
    fn error_name(&self, r: CUresult) -> String {
        if let Some(f) = self.get_error_name {
            let mut s: *const c_char = core::ptr::null();
            // SAFETY: documented signature; on success `s` is a static string.
            if unsafe { f(r, &mut s) } == CUDA_SUCCESS && !s.is_null() {
                // SAFETY: NUL-terminated static string from the driver.
                let name = unsafe { core::ffi::CStr::from_ptr(s) }.to_string_lossy();
                return format!("{name} ({r})");
            }
        }
        format!("CUresult {r}")
    }

    #[cold]
    fn fail(&self, call: &str, r: CUresult, device: DLDevice) -> Error {
        Error::DeviceError(format!(
            "{call} failed for device ({}, {}): {}",
            device.device_type.0,
            device.device_id,
            self.error_name(r)
        ))
    }

    fn check(&self, call: &str, r: CUresult, device: DLDevice) -> Result<(), Error> {
        if r == CUDA_SUCCESS {
            Ok(())
        } else {
            Err(self.fail(call, r, device))
        }
    }

    /// The retained primary context of a device ordinal.
    fn primary(&self, ordinal: i32, device: DLDevice) -> Result<usize, Error> {
        let slot = usize::try_from(ordinal)
            .ok()
            .and_then(|i| self.primary.get(i))
            .ok_or_else(|| {
                Error::DeviceError(format!(
                    "device ({}, {}): CUDA device ordinal {ordinal} is outside 0..{MAX_DEVICES}",
                    device.device_type.0, device.device_id
                ))
            })?;
        // No lock held while the driver runs (see `dl::init_outside`); only a retained context
        // is kept: a failure (out of memory, a device in exclusive-process mode) is this call's,
        // and the next one asks the driver again.
        super::dl::try_init_outside(slot, || {
            let mut dev: c_int = 0;
            self.check(
                "cuDeviceGet",
                // SAFETY: the driver's documented signature; `dev` is a live local out-pointer.
                unsafe { (self.device_get)(&mut dev, ordinal) },
                device,
            )?;
            let mut ctx: Handle = core::ptr::null_mut();
            self.check(
                "cuDevicePrimaryCtxRetain",
                // SAFETY: the documented signature; `ctx` is a live local out-pointer and `dev` a
                // device handle the driver returned just above.
                unsafe { (self.primary_retain)(&mut ctx, dev) },
                device,
            )?;
            Ok(ctx as usize)
        })
        .ok_or_else(|| {
            Error::DeviceError(format!(
                "device ({}, {}): the primary context was requested from inside its own \
                 creation (a re-entrant driver call)",
                device.device_type.0, device.device_id
            ))
        })?
        .copied()
    }

    /// Make the right context current for `device`, whose work runs on the producer's `stream`
    /// (see the module docs).
    fn enter(&self, device: DLDevice, stream: usize) -> Result<Entered<'_>, Error> {
        let mut cur: Handle = core::ptr::null_mut();
        self.check(
            "cuCtxGetCurrent",
            // SAFETY: the documented signature; `cur` is a live local out-pointer.
            unsafe { (self.ctx_get_current)(&mut cur) },
            device,
        )?;
        let want = if device.device_type == DLDeviceType::kDLCUDA {
            self.primary(device.device_id, device)?
        } else if let (Some(get_ctx), false) = (self.stream_get_ctx, stream <= 2) {
            let mut ctx: Handle = core::ptr::null_mut();
            self.check(
                "cuStreamGetCtx (producer stream)",
                // SAFETY: `stream` is a live stream of the caller's (the documented contract; the
                // special values 0..=2 were excluded above); `ctx` is a live local out-pointer.
                unsafe { get_ctx(stream as Handle, &mut ctx) },
                device,
            )?;
            ctx as usize
        } else if !cur.is_null() {
            cur as usize
        } else {
            self.primary(0, device)?
        };
        if want == cur as usize {
            return Ok(Entered {
                cuda: self,
                ctx: want,
                pushed: false,
            });
        }
        self.check(
            "cuCtxPushCurrent",
            // SAFETY: `want` is a context the driver gave us: the current one, or a primary
            // context retained by `primary` (and never released while the process runs).
            unsafe { (self.ctx_push)(want as Handle) },
            device,
        )?;
        Ok(Entered {
            cuda: self,
            ctx: want,
            pushed: true,
        })
    }

    /// Make `consumer` wait for all work queued so far on `producer`, without blocking the host:
    /// one `cuEventRecord` and one `cuStreamWaitEvent` with a pooled event.
    pub(crate) fn wait(
        &self,
        device: DLDevice,
        producer: usize,
        consumer: usize,
    ) -> Result<(), Error> {
        let entered = self.enter(device, producer)?;
        let event = match self.events.take(entered.ctx) {
            Some(e) => e,
            None => {
                let mut e: Handle = core::ptr::null_mut();
                // SAFETY: valid out-pointer; documented flag.
                let r = unsafe { (self.event_create)(&mut e, CU_EVENT_DISABLE_TIMING) };
                self.check("cuEventCreate", r, device)?;
                e as usize
            }
        };
        // SAFETY: an event of the current context; stream handles come from the caller, whose
        // contract is that they are live streams of this device (or the special values).
        let r = unsafe { (self.event_record)(event as Handle, producer as Handle) };
        let result = self
            .check("cuEventRecord (producer stream)", r, device)
            .and_then(|()| {
                // SAFETY: as above.
                let r = unsafe { (self.stream_wait_event)(consumer as Handle, event as Handle, 0) };
                self.check("cuStreamWaitEvent (consumer stream)", r, device)
            });
        // The wait captured the event's state: the event may be recorded again at once.
        self.events.give(entered.ctx, event);
        result
    }

    /// Record a pooled event on `stream` (the context chosen as for [`Cuda::wait`]) that stands
    /// for the work queued there so far, for [`Cuda::event_done`] to poll. Returns `(context,
    /// event)`; the event goes back to the pool with [`Cuda::recycle`] once it completed. Never
    /// blocks the host.
    pub(crate) fn record(&self, device: DLDevice, stream: usize) -> Result<(usize, usize), Error> {
        if self.event_query.is_none() {
            return Err(Error::BackendUnavailable(format!(
                "the CUDA driver {} does not export cuEventQuery, so a release cannot wait for a \
                 stream",
                self.lib.path
            )));
        }
        let entered = self.enter(device, stream)?;
        let event = match self.events.take(entered.ctx) {
            Some(e) => e,
            None => {
                let mut e: Handle = core::ptr::null_mut();
                // SAFETY: valid out-pointer; documented flag.
                let r = unsafe { (self.event_create)(&mut e, CU_EVENT_DISABLE_TIMING) };
                self.check("cuEventCreate", r, device)?;
                e as usize
            }
        };
        // SAFETY: an event of the current context; the stream is the caller's live stream of
        // this device (or a special value).
        let r = unsafe { (self.event_record)(event as Handle, stream as Handle) };
        if let Err(e) = self.check("cuEventRecord (release stream)", r, device) {
            self.events.give(entered.ctx, event);
            return Err(e);
        }
        Ok((entered.ctx, event))
    }

    /// Whether the work before an event from [`Cuda::record`] is done (`cuEventQuery`, inside
    /// the event's context; never blocks). An error is the driver's (the context is unusable).
    pub(crate) fn event_done(&self, ctx: usize, event: usize) -> Result<bool, Error> {
        let query = self.event_query.ok_or_else(|| {
            Error::BackendUnavailable("the CUDA driver does not export cuEventQuery".into())
        })?;
        // SAFETY: `ctx` is the context the event was created in (kept alive: primary contexts
        // are never released, and a stream's context outlives the work queued on it).
        let pushed = unsafe { (self.ctx_push)(ctx as Handle) };
        if pushed != CUDA_SUCCESS {
            return Err(Error::DeviceError(format!(
                "cuCtxPushCurrent (release event's context) failed: {}",
                self.error_name(pushed)
            )));
        }
        // SAFETY: a live event of this library's pool.
        let r = unsafe { query(event as Handle) };
        let mut out: Handle = core::ptr::null_mut();
        // SAFETY: pops the context pushed just above on this thread.
        unsafe { (self.ctx_pop)(&mut out) };
        match r {
            CUDA_SUCCESS => Ok(true),
            CUDA_ERROR_NOT_READY => Ok(false),
            r => Err(Error::DeviceError(format!(
                "cuEventQuery (release event) failed: {}",
                self.error_name(r)
            ))),
        }
    }

    /// Give a completed event from [`Cuda::record`] back to its context's pool.
    pub(crate) fn recycle(&self, ctx: usize, event: usize) {
        self.events.give(ctx, event);
    }

    /// Block the host until all work queued on `stream` is complete.
    pub(crate) fn synchronize(&self, device: DLDevice, stream: usize) -> Result<(), Error> {
        let _entered = self.enter(device, stream)?;
        // SAFETY: caller's stream of this device.
        let r = unsafe { (self.stream_synchronize)(stream as Handle) };
        self.check("cuStreamSynchronize", r, device)
    }

    /// `(memory type, is managed, device ordinal)` of `ptr` in one `cuPointerGetAttributes`
    /// call. Memory the driver does not know answers success with every attribute zero
    /// (documented: unlike `cuPointerGetAttribute`, no `CUDA_ERROR_INVALID_VALUE`).
    fn pointer_attributes(&self, ptr: u64) -> Result<(c_uint, bool, c_int), CUresult> {
        let mut memory_type: c_uint = 0;
        // `IS_MANAGED` is documented as a boolean written into an `unsigned int`; a zeroed 8-byte
        // slot reads right whichever width the driver writes.
        let mut managed: u64 = 0;
        let mut ordinal: c_int = 0;
        let attrs: [c_int; 3] = [ATTR_MEMORY_TYPE, ATTR_IS_MANAGED, ATTR_DEVICE_ORDINAL];
        let data: [*mut c_void; 3] = [
            (&raw mut memory_type).cast(),
            (&raw mut managed).cast(),
            (&raw mut ordinal).cast(),
        ];
        // SAFETY: three attributes, each with a slot at least as large as its documented type.
        let r = unsafe { (self.pointer_get_attributes)(3, attrs.as_ptr(), data.as_ptr(), ptr) };
        if r == CUDA_SUCCESS {
            Ok((memory_type, managed != 0, ordinal))
        } else {
            Err(r)
        }
    }

    /// The DLPack device of the memory at `ptr`: managed → (kDLCUDAManaged, 0), pinned or
    /// registered host memory → (kDLCUDAHost, 0), device memory → (kDLCUDA, ordinal), memory
    /// the driver does not know → (kDLCPU, 0). One driver call (two when the thread has no
    /// current context and the driver asks for one: then again inside device 0's primary
    /// context). An error of the call is an error, never "not CUDA's".
    pub(crate) fn pointer_device(&self, ptr: usize) -> Result<DLDevice, Error> {
        let cpu = DLDevice {
            device_type: DLDeviceType::kDLCPU,
            device_id: 0,
        };
        let p = ptr as u64;
        let attrs = match self.pointer_attributes(p) {
            Err(CUDA_ERROR_INVALID_CONTEXT) => {
                let _entered = self.enter(
                    DLDevice {
                        device_type: DLDeviceType::kDLCUDA,
                        device_id: 0,
                    },
                    0,
                )?;
                self.pointer_attributes(p)
            }
            r => r,
        }
        .map_err(|r| {
            Error::DeviceError(format!(
                "cuPointerGetAttributes failed for pointer 0x{ptr:x}: {}",
                self.error_name(r)
            ))
        })?;
        let d = |t: DLDeviceType, id: i32| DLDevice {
            device_type: t,
            device_id: id,
        };
        match attrs {
            (_, true, _) => Ok(d(DLDeviceType::kDLCUDAManaged, 0)),
            (0, false, _) => Ok(cpu),
            (MEMORYTYPE_HOST, false, _) => Ok(d(DLDeviceType::kDLCUDAHost, 0)),
            (MEMORYTYPE_DEVICE, false, ordinal) => Ok(d(DLDeviceType::kDLCUDA, ordinal)),
            (other, ..) => Err(Error::DeviceError(format!(
                "cuPointerGetAttributes returned memory type {other}, which has no DLPack device \
                 type"
            ))),
        }
    }
}
