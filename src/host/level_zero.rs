//! oneAPI unified shared memory through the Level Zero loader (`libze_loader.so.1`), opened at
//! run time, never linked.
//!
//! Only pointer classification uses it: `zeMemGetAllocProperties` tells host, device and shared
//! USM allocations apart. Every query needs the `ze_context_handle_t` the memory was allocated
//! in, which only the application knows (a SYCL application obtains it with
//! `sycl::get_native<sycl::backend::ext_oneapi_level_zero>(queue.get_context())`; dpctl with
//! `SyclContext.addressof_ref()` and `DPCTLContext_...`): it is passed per call or registered
//! with `dlpack_level_zero_context_set`. Stream waits on oneAPI queues go through an
//! application-registered backend (`dlpack_stream_backend_register_ex`).

use super::dl::{Lib, LoadError, Runtime, State};
use crate::rules::{Error, pointer};
use core::ffi::{CStr, c_uint, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

type ZeResult = c_uint;
type Handle = *mut c_void;

const ZE_RESULT_SUCCESS: ZeResult = 0;
/// `ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES`.
const STYPE_MEMORY_ALLOCATION_PROPERTIES: c_uint = 0x17;

/// `ze_memory_allocation_properties_t`.
#[repr(C)]
struct AllocProperties {
    stype: c_uint,
    p_next: *mut c_void,
    memory_type: c_uint,
    id: u64,
    page_size: u64,
}

pub(crate) struct LevelZero {
    lib: Lib,
    mem_get_alloc_properties:
        unsafe extern "C" fn(Handle, *const c_void, *mut AllocProperties, *mut Handle) -> ZeResult,
    /// `zeDeviceGetRootDevice` (Level Zero 1.7+), where the loader has it: the root device of a
    /// sub-device (a tile), whose SYCL ordinal a sub-device's memory carries.
    device_get_root_device: Option<unsafe extern "C" fn(Handle, *mut Handle) -> ZeResult>,
}

// SAFETY: Level Zero entry points are thread-safe for distinct output storage; the struct holds
// function pointers only.
unsafe impl Send for LevelZero {}
// SAFETY: as for Send: shared use only calls the thread-safe entry points, each with its own
// output storage.
unsafe impl Sync for LevelZero {}

/// The environment override of the loader's path, and the names tried without it.
pub(crate) const ENV: &str = "DLPACK_HELPERS_LEVEL_ZERO_LIBRARY";
pub(crate) const NAMES: &[&CStr] = &[c"libze_loader.so.1", c"libze_loader.so"];

/// Whether this library's own `dlopen` brought the loader into the process (it was not loaded
/// before). Set once, never cleared: libraries are never closed.
static LOADED_BY_US: AtomicBool = AtomicBool::new(false);

/// Whether USM memory may exist in this process although no context was given to ask about it:
/// an override names a loader, or the loader is loaded in the process by someone other than this
/// library (resident now, and not brought in by this library's own load: a loader that was
/// absent when this library first looked and that the application loaded since counts). Without
/// that, no Level Zero context can exist, so no USM allocation either. (A loader that the
/// application loads only after this library loaded it is not seen, since the process then
/// holds one loader either way: a oneAPI application registers its context with
/// `dlpack_level_zero_context_set`.) No allocation when no override is set; residency is asked
/// again only after the process loaded or unloaded a library (`dl::Residency`).
pub(crate) fn may_own_memory_without_context() -> bool {
    if std::env::var_os(ENV).is_some_and(|v| !v.is_empty()) {
        return true;
    }
    ZE.resident() && !LOADED_BY_US.load(Ordering::Acquire)
}

/// Loaded on first use and kept, except "absent": a loader the application loads later is
/// found (see `dl::Runtime`).
static ZE: Runtime<LevelZero> = Runtime::new("the Level Zero loader", NAMES, load);

/// What the loader can do now (no allocation: the pointer queries use it).
pub(crate) fn state() -> State<LevelZero> {
    ZE.state()
}

/// Whether the loader loaded and initialized (`CAP_LEVEL_ZERO`, `CAP_POINTER_LEVEL_ZERO`).
pub(crate) fn available() -> bool {
    ZE.available()
}

fn load() -> Result<LevelZero, LoadError> {
    let before = super::dl::resident(NAMES);
    let lib = super::dl::open(ENV, NAMES, "the Level Zero loader (libze_loader.so.1)")?;
    if !before {
        LOADED_BY_US.store(true, Ordering::Release);
    }
    let init: unsafe extern "C" fn(c_uint) -> ZeResult = lib.sym(c"zeInit")?;
    let ze = LevelZero {
        mem_get_alloc_properties: lib.sym(c"zeMemGetAllocProperties")?,
        device_get_root_device: lib.sym_opt(c"zeDeviceGetRootDevice"),
        lib,
    };
    // SAFETY: documented signature; 0 = all driver types. Calling zeInit again in a process
    // whose SYCL runtime already did is allowed.
    let r = unsafe { init(0) };
    if r != ZE_RESULT_SUCCESS {
        return Err(LoadError::Failed(Error::BackendUnavailable(format!(
            "the Level Zero loader {} loaded, but zeInit failed with ze_result_t 0x{r:x}",
            ze.lib.path
        ))));
    }
    Ok(ze)
}

impl LevelZero {
    /// Classify the memory at `ptr` in `context` with one `zeMemGetAllocProperties` call (any
    /// address inside an allocation answers like its base). `Ok(None)`: not a USM allocation of
    /// that context (`ZE_MEMORY_TYPE_UNKNOWN`). `devices` is the device list registered for
    /// `context` (`devices[i]`: the `ze_device_handle_t` of SYCL ordinal `i`), or empty: the
    /// claim's device id is the index of the allocation's device in it, or of its root device
    /// (`zeDeviceGetRootDevice`, one more call, only for a handle the list does not name);
    /// otherwise the id is not established (`Claim::id_known` false), never -1.
    pub(crate) fn pointer_claim(
        &self,
        context: usize,
        ptr: usize,
        devices: &[usize],
    ) -> Result<Option<pointer::Claim>, Error> {
        let mut props = AllocProperties {
            stype: STYPE_MEMORY_ALLOCATION_PROPERTIES,
            p_next: core::ptr::null_mut(),
            memory_type: 0,
            id: 0,
            page_size: 0,
        };
        let mut device: Handle = core::ptr::null_mut();
        // SAFETY: documented signature; `props` is a live, typed struct; the context is the
        // caller's (its contract: a live `ze_context_handle_t`).
        let r = unsafe {
            (self.mem_get_alloc_properties)(
                context as Handle,
                ptr as *const c_void,
                &mut props,
                &mut device,
            )
        };
        if r != ZE_RESULT_SUCCESS {
            return Err(Error::DeviceError(format!(
                "zeMemGetAllocProperties failed for pointer 0x{ptr:x} in context 0x{context:x}: \
                 ze_result_t 0x{r:x}"
            )));
        }
        let handle = device as usize;
        let ordinal = if devices.is_empty() || props.memory_type == 1 {
            None
        } else {
            pointer::ordinal_in(devices, handle).or_else(|| {
                let root = self.root_device(handle)?;
                pointer::ordinal_in(devices, root)
            })
        };
        pointer::level_zero_claim(props.memory_type, handle, ordinal).map_err(|t| {
            Error::DeviceError(format!(
                "zeMemGetAllocProperties returned memory type {t} for pointer 0x{ptr:x}, which \
                 has no DLPack meaning"
            ))
        })
    }

    /// The root device of `device` (`zeDeviceGetRootDevice`), `None` when the loader lacks the
    /// call, it fails, or `device` is itself a root device (the answer is NULL then).
    fn root_device(&self, device: usize) -> Option<usize> {
        let f = self.device_get_root_device?;
        if device == 0 {
            return None;
        }
        let mut root: Handle = core::ptr::null_mut();
        // SAFETY: documented signature; `device` is the handle the loader just returned for a
        // live allocation; `root` is a live out-pointer.
        let r = unsafe { f(device as Handle, &mut root) };
        (r == ZE_RESULT_SUCCESS && !root.is_null() && root as usize != device)
            .then_some(root as usize)
    }
}
