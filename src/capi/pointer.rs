//! Pointer classification across the CUDA driver, the HIP runtime and the Level Zero loader
//! (all opened at run time, never linked), and the per-tensor host-access answer built on it.
//! The rules of the answers and of their combination are in `rules::pointer`.

use crate::abi::{DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLTensor};
use crate::capi::boundary::{self, nonnull, out_ptr};
use crate::capi::device::{
    DLPACK_HELPERS_HOST_ACCESS_ALWAYS, DLPACK_HELPERS_HOST_ACCESS_NEVER, dlpack_helpers_host_access,
};
use crate::capi::error::dlpack_helpers_status;
use crate::host::dl::State;
use crate::host::{cuda, hip, level_zero};
use crate::rules::device::{self, HostAccess};
use crate::rules::pointer::{self, Claim, MemoryClass, Reply, Verdict};
use crate::rules::{Error, info};
use core::ffi::c_void;
use core::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

/// Host access that could not be established: no backend could classify the tensor's memory
/// (returned only by the per-tensor calls, never by `dlpack_device_host_access`).
pub const DLPACK_HELPERS_HOST_ACCESS_UNKNOWN: dlpack_helpers_host_access = 3;

/// Memory class of `dlpack_helpers_pointer_info.memory_class`: one of the
/// `DLPACK_HELPERS_MEMORY_*` values.
pub type dlpack_helpers_memory_class = i32;
/// No backend could establish what the memory is (the answer is unknown, never guessed).
pub const DLPACK_HELPERS_MEMORY_UNKNOWN: dlpack_helpers_memory_class = 0;
/// Ordinary host memory, confirmed: every backend that could own the memory was asked and none
/// knows the pointer, or is absent from the process (no runtime at all in a CPU-only process:
/// memory of a runtime that is not loaded cannot exist), no backend that could own it was
/// unreachable, and Level Zero was not among those asked (it answers for one context's
/// allocations only, so its "not mine" cannot exclude USM memory of another context).
pub const DLPACK_HELPERS_MEMORY_HOST: dlpack_helpers_memory_class = 1;
/// Device memory (`kDLCUDA`, `kDLROCM`, Level Zero USM device): host code cannot dereference it.
pub const DLPACK_HELPERS_MEMORY_DEVICE: dlpack_helpers_memory_class = 2;
/// Page-locked host memory (`kDLCUDAHost`, `kDLROCMHost`) or Level Zero USM host memory.
pub const DLPACK_HELPERS_MEMORY_PINNED_HOST: dlpack_helpers_memory_class = 3;
/// Managed memory (`kDLCUDAManaged`, HIP managed) or Level Zero USM shared memory.
pub const DLPACK_HELPERS_MEMORY_MANAGED: dlpack_helpers_memory_class = 4;

/// Backend bit of `dlpack_helpers_pointer_info`: the CUDA driver.
pub const DLPACK_HELPERS_BACKEND_CUDA: u32 = 0x1;
/// Backend bit: the HIP runtime.
pub const DLPACK_HELPERS_BACKEND_HIP: u32 = 0x2;
/// Backend bit: the Level Zero loader.
pub const DLPACK_HELPERS_BACKEND_LEVEL_ZERO: u32 = 0x4;

const _: () = assert!(
    DLPACK_HELPERS_MEMORY_UNKNOWN == MemoryClass::Unknown.as_raw()
        && DLPACK_HELPERS_MEMORY_HOST == MemoryClass::Host.as_raw()
        && DLPACK_HELPERS_MEMORY_DEVICE == MemoryClass::Device.as_raw()
        && DLPACK_HELPERS_MEMORY_PINNED_HOST == MemoryClass::PinnedHost.as_raw()
        && DLPACK_HELPERS_MEMORY_MANAGED == MemoryClass::Managed.as_raw()
        && DLPACK_HELPERS_BACKEND_CUDA == pointer::BACKEND_CUDA
        && DLPACK_HELPERS_BACKEND_HIP == pointer::BACKEND_HIP
        && DLPACK_HELPERS_BACKEND_LEVEL_ZERO == pointer::BACKEND_LEVEL_ZERO
);

/// What `dlpack_pointer_classify` established about one address. Set `struct_size` to
/// `sizeof(dlpack_helpers_pointer_info)` before the call; the struct only grows at its end.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct dlpack_helpers_pointer_info {
    /// In: the size in bytes of the caller's struct (at least `sizeof(size_t)`). Out: the bytes
    /// filled, only whole fields (as `dlpack_helpers_info.struct_size`).
    pub struct_size: usize,
    /// One of the `DLPACK_HELPERS_MEMORY_*` values.
    pub memory_class: dlpack_helpers_memory_class,
    /// `DLPACK_HELPERS_HOST_ACCESS_ALWAYS` (host, pinned host, managed/shared),
    /// `_NEVER` (device) or `_UNKNOWN`.
    pub host_access: dlpack_helpers_host_access,
    /// The DLPack device of the memory: `(kDLCPU, 0)` for confirmed host memory;
    /// `(kDLCUDA, ordinal)`, `(kDLCUDAHost, 0)`, `(kDLCUDAManaged, 0)`; `(kDLROCM, device)` for
    /// HIP device and managed memory (DLPack has no ROCm managed type), `(kDLROCMHost, 0)`;
    /// `(kDLOneAPI, ordinal)` for Level Zero USM device and shared memory whose device (or its
    /// root device) is in the list registered with `dlpack_level_zero_context_set_devices` for
    /// the context asked in; `(kDLOneAPI, 0)` with `device_id_known` 0 otherwise (Level Zero
    /// names devices by handle, not by the SYCL ordinal DLPack uses; USM host memory has no
    /// device); `(0, 0)` when unknown. The id is never negative (peer case 54).
    pub device: DLDevice,
    /// The Level Zero `ze_device_handle_t` of USM device and shared memory (NULL for USM host
    /// memory and for the other backends).
    pub native_device: *mut c_void,
    /// `DLPACK_HELPERS_BACKEND_*` bits of the backends that answered.
    pub backends_asked: u32,
    /// `DLPACK_HELPERS_BACKEND_*` bits of the backends that could own the memory but could not
    /// be asked: library override naming a missing file, runtime present (from the start or
    /// loaded later by the application) but failing to initialize, or Level Zero loaded in the
    /// process (or named by its override) while no context was given.
    pub backends_unreachable: u32,
    /// The `DLPACK_HELPERS_BACKEND_*` bit of the backend that claimed the memory, 0 if none.
    pub answered_by: u32,
    /// 1 when `device.device_id` is established (every class but unknown, except Level Zero
    /// memory whose device the registered list does not name and USM host memory), else 0:
    /// `device.device_id` is then 0 and means nothing (`dlpack_pointer_get_device` answers
    /// `DLPACK_HELPERS_STATUS_DEVICE_ID_UNKNOWN`). Added after `answered_by` (issue 22), 8 bytes
    /// wide so that it starts at the end of the earlier 48-byte struct: a caller built before it
    /// passes a `struct_size` that does not reach it and is not written to.
    pub device_id_known: u64,
}

static LEVEL_ZERO_CONTEXT: AtomicUsize = AtomicUsize::new(0);

/// The registration: the context (`dlpack_level_zero_context_set`) and, when
/// `dlpack_level_zero_context_set_devices` gave one, its device list (for that context only).
struct Registered {
    context: usize,
    devices: Option<Vec<usize>>,
}

/// The registration, whole. A query takes a reference (an `Arc` clone, no allocation) and
/// releases the lock before any driver call: no lock is held while foreign code runs. A query
/// with no context of its own reads context and list from this one snapshot, so that it sees
/// the old or the new registration, never the new context with the old list (spec
/// STREAMS-LEVEL-ZERO-CONTEXT-SET-4; a conformance case caught the two being read apart).
/// `LEVEL_ZERO_CONTEXT` mirrors the context for the readers that need only it.
static LEVEL_ZERO_DEVICES: RwLock<Option<Arc<Registered>>> = RwLock::new(None);

/// The most devices `dlpack_level_zero_context_set_devices` takes.
pub const DLPACK_HELPERS_LEVEL_ZERO_MAX_DEVICES: usize = 4096;

fn registration() -> Option<Arc<Registered>> {
    let g = LEVEL_ZERO_DEVICES.read().unwrap_or_else(|e| e.into_inner());
    g.clone()
}

fn registered_devices(context: usize) -> Option<Arc<Registered>> {
    registration().filter(|r| r.context == context && r.devices.is_some())
}

fn set_registration(context: usize, devices: Option<Vec<usize>>) {
    let mut g = LEVEL_ZERO_DEVICES
        .write()
        .unwrap_or_else(|e| e.into_inner());
    *g = (context != 0).then(|| Arc::new(Registered { context, devices }));
    LEVEL_ZERO_CONTEXT.store(context, Ordering::Release);
}

/// Register the Level Zero context (`ze_context_handle_t`) that pointer queries use when the
/// caller passes none: `dlpack_pointer_get_device`, `dlpack_*_host_access` with a NULL
/// `ze_context`, and validation with `DLPACK_HELPERS_VALIDATE_RESOLVE_HOST_ACCESS`.
///
/// USM allocations belong to a context and `zeMemGetAllocProperties` answers only for its own
/// context's allocations. A SYCL application on the Level Zero backend obtains the handle with
/// `sycl::get_native<sycl::backend::ext_oneapi_level_zero>(queue.get_context())`. NULL clears
/// the registration. The handle is not retained: it must stay valid while registered. A device
/// list registered earlier (`dlpack_level_zero_context_set_devices`) is cleared: without one,
/// the DLPack device id of USM memory is not established (`DEVICE_ID_UNKNOWN`).
///
/// - `ze_context`: the `ze_context_handle_t`, or NULL to clear the registration.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`. Thread-safe.
///
/// @param[in] ze_context May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK always
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_level_zero_context_set(
    ze_context: *mut c_void,
) -> dlpack_helpers_status {
    boundary::status(|| {
        set_registration(ze_context as usize, None);
        Ok(())
    })
}

/// Register a Level Zero context, as `dlpack_level_zero_context_set`, together with the SYCL
/// ordinals of its devices, so that pointer queries can answer USM memory's DLPack device id
/// (`kDLOneAPI` ids are SYCL device ordinals, which Level Zero does not know: it names devices by
/// handle). `devices[i]` is the `ze_device_handle_t` of the device whose DLPack `device_id` is
/// `i` (a SYCL application: `sycl::get_native<sycl::backend::ext_oneapi_level_zero>(d)` for each
/// `d` of the list its ordinals index, in order; NULL for an ordinal that is not a Level Zero
/// device of this context). USM device and shared memory of `ze_context` then answer
/// `(kDLOneAPI, i)` for the `i` whose handle is the allocation's device, or its root device
/// (`zeDeviceGetRootDevice`) for memory of a sub-device. Memory whose device the list does not
/// name, and USM host memory (no device), keep an id that is not established: never -1
/// (peer case 54). The list is copied; the handles are not retained.
///
/// - `ze_context`: the `ze_context_handle_t`; NULL clears the registration (context and list).
/// - `devices`: `num_devices` handles (entries may be NULL); may be NULL when `num_devices` is 0.
/// - `num_devices`: at most `DLPACK_HELPERS_LEVEL_ZERO_MAX_DEVICES` (4096).
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_NULL_POINTER` (`devices` NULL with `num_devices > 0`)
/// or `_INVALID_ARGUMENT` (`num_devices` above the maximum); on failure the registration is
/// unchanged. Thread-safe: queries running meanwhile use the old or the new registration, each
/// whole (a list applies only to queries in its own context).
///
/// @param[in] ze_context May be NULL.
/// @param[in] devices May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `devices` is NULL and `num_devices` is not 0
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `num_devices` is above
///   `DLPACK_HELPERS_LEVEL_ZERO_MAX_DEVICES`
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_level_zero_context_set_devices(
    ze_context: *mut c_void,
    devices: *const *mut c_void,
    num_devices: usize,
) -> dlpack_helpers_status {
    boundary::status(|| {
        if num_devices > DLPACK_HELPERS_LEVEL_ZERO_MAX_DEVICES {
            return Err(Error::invalid(format!(
                "num_devices is {num_devices}, above DLPACK_HELPERS_LEVEL_ZERO_MAX_DEVICES \
                 ({DLPACK_HELPERS_LEVEL_ZERO_MAX_DEVICES})"
            )));
        }
        if devices.is_null() && num_devices != 0 {
            return Err(Error::NullPointer("devices"));
        }
        if ze_context.is_null() {
            set_registration(0, None);
            return Ok(());
        }
        let list = if num_devices == 0 {
            Vec::new()
        } else {
            // SAFETY: non-NULL, `num_devices` readable handles (caller contract).
            unsafe { core::slice::from_raw_parts(devices, num_devices) }
                .iter()
                .map(|&h| h as usize)
                .collect()
        };
        set_registration(ze_context as usize, Some(list));
        Ok(())
    })
}

fn context_or_registered(ze_context: *mut c_void) -> usize {
    if ze_context.is_null() {
        LEVEL_ZERO_CONTEXT.load(Ordering::Acquire)
    } else {
        ze_context as usize
    }
}

/// The reply of a backend that cannot be asked now: absent (no memory of it can exist: its
/// library is not in the process, checked again at each query, so a runtime the application
/// loads later is asked from then on) or unreachable (it failed for good, or was used from
/// inside its own loading). No allocation.
fn not_ready<T>(s: &State<T>) -> Reply {
    match s {
        State::Absent(_) => Reply::Absent,
        _ => Reply::Unreachable,
    }
}

fn cuda_reply(ptr: usize) -> Result<Reply, Error> {
    let c = match cuda::state() {
        State::Ready(c) => c,
        s => return Ok(not_ready(&s)),
    };
    let d = c.pointer_device(ptr)?;
    let class = match d.device_type {
        DLDeviceType::kDLCPU => return Ok(Reply::NotMine),
        DLDeviceType::kDLCUDAHost => MemoryClass::PinnedHost,
        DLDeviceType::kDLCUDAManaged => MemoryClass::Managed,
        _ => MemoryClass::Device,
    };
    // A negative ordinal from the driver is not an id: not established, never passed on.
    Ok(Reply::Mine(Claim {
        class,
        device: DLDevice {
            device_type: d.device_type,
            device_id: d.device_id.max(0),
        },
        native_device: 0,
        id_known: d.device_id >= 0,
    }))
}

fn hip_reply(ptr: usize) -> Result<Reply, Error> {
    let h = match hip::state() {
        State::Ready(h) => h,
        s => return Ok(not_ready(&s)),
    };
    if !h.can_classify() {
        return Ok(Reply::Unreachable);
    }
    Ok(match h.pointer_claim(ptr)? {
        Some(c) => Reply::Mine(c),
        None => Reply::NotMine,
    })
}

fn level_zero_reply(context: Option<usize>, ptr: usize) -> Result<Reply, Error> {
    // The caller's context with the list registered for it, or the registration's context and
    // list read together (one snapshot).
    let (context, registered) = match context {
        Some(c) => (c, registered_devices(c)),
        None => {
            let r = registration();
            (
                r.as_ref().map_or(0, |r| r.context),
                r.filter(|r| r.devices.is_some()),
            )
        }
    };
    if context == 0 {
        // Nothing to ask with: the loader is not even loaded for this. USM memory can exist only
        // where something in the process uses Level Zero.
        return Ok(if level_zero::may_own_memory_without_context() {
            Reply::Unreachable
        } else {
            Reply::Absent
        });
    }
    let z = match level_zero::state() {
        State::Ready(z) => z,
        s => return Ok(not_ready(&s)),
    };
    let devices = registered
        .as_deref()
        .and_then(|r| r.devices.as_deref())
        .unwrap_or(&[]);
    Ok(match z.pointer_claim(context, ptr, devices)? {
        Some(c) => Reply::Mine(c),
        // Not an allocation of this context: another context's USM memory is not excluded.
        None => Reply::NotInContext,
    })
}

/// Ask CUDA, then HIP, then Level Zero, stopping at the first that claims the pointer.
/// `context`: the caller's Level Zero context, or `None` for the registered one.
pub(crate) fn classify(ptr: usize, context: Option<usize>) -> Result<Verdict, Error> {
    let mut replies = [(pointer::BACKEND_CUDA, Reply::Absent); 3];
    replies[0].1 = cuda_reply(ptr)?;
    if !matches!(replies[0].1, Reply::Mine(_)) {
        replies[1] = (pointer::BACKEND_HIP, hip_reply(ptr)?);
        if !matches!(replies[1].1, Reply::Mine(_)) {
            replies[2] = (pointer::BACKEND_LEVEL_ZERO, level_zero_reply(context, ptr)?);
        }
    }
    Ok(pointer::verdict(&replies))
}

fn names(bits: u32) -> String {
    let all = [
        (pointer::BACKEND_CUDA, "CUDA (DLPACK_HELPERS_CUDA_LIBRARY)"),
        (pointer::BACKEND_HIP, "HIP (DLPACK_HELPERS_HIP_LIBRARY)"),
        (
            pointer::BACKEND_LEVEL_ZERO,
            "Level Zero (DLPACK_HELPERS_LEVEL_ZERO_LIBRARY; needs a context)",
        ),
    ];
    let v: Vec<&str> = all
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    if v.is_empty() {
        "none".to_owned()
    } else {
        v.join(", ")
    }
}

/// The `DeviceUnknown` error for a verdict that established nothing.
#[cold]
pub(crate) fn unknown(ptr: usize, v: &Verdict) -> Error {
    let context_only = if v.context_only & pointer::BACKEND_LEVEL_ZERO != 0 {
        "; Level Zero was asked in one context only and does not know the pointer there (another \
         context's USM memory cannot be excluded)"
    } else {
        ""
    };
    Error::DeviceUnknown(format!(
        "no backend could classify pointer 0x{ptr:x}, so its device is unknown (not assumed to \
         be kDLCPU): backends asked: {}; backends that could own it but could not be asked: \
         {}{context_only}",
        names(v.asked),
        names(v.unreachable)
    ))
}

/// The `DeviceIdUnknown` error: the memory is classified but its DLPack device id is not
/// established (Level Zero USM; never answered as -1).
#[cold]
pub(crate) fn id_unknown(ptr: usize, v: &Verdict) -> Error {
    if v.answered_by != pointer::BACKEND_LEVEL_ZERO {
        return Error::DeviceIdUnknown(format!(
            "pointer 0x{ptr:x} is on device type {} ({}), but the runtime answered a negative \
             device ordinal, which is not an id: it is never passed on (peer case 54)",
            v.device.device_type.0,
            names(v.answered_by)
        ));
    }
    let why = if v.class == MemoryClass::PinnedHost {
        "it is USM host memory, which belongs to no device"
    } else if registered_devices(registered_context()).is_some() {
        "its ze_device_handle_t (native device) is not in the device list registered for the \
         context (nor is its root device)"
    } else {
        "no device list is registered for the context (dlpack_level_zero_context_set_devices \
         maps ze_device_handle_t to SYCL ordinals)"
    };
    Error::DeviceIdUnknown(format!(
        "pointer 0x{ptr:x} is Level Zero USM memory on device type {} (native device 0x{:x}), \
         but its DLPack device id (the SYCL ordinal) is not established: {why}; it is never \
         answered as -1 (peer case 54). dlpack_pointer_classify gives the class and the handle",
        v.device.device_type.0, v.native_device
    ))
}

fn host_access_raw(class: MemoryClass) -> dlpack_helpers_host_access {
    match class.host_accessible() {
        Some(true) => DLPACK_HELPERS_HOST_ACCESS_ALWAYS,
        Some(false) => DLPACK_HELPERS_HOST_ACCESS_NEVER,
        None => DLPACK_HELPERS_HOST_ACCESS_UNKNOWN,
    }
}

/// Classify the memory at an address: which runtime owns it, what kind of memory it is, whether
/// host code may dereference it, and which backends were asked.
///
/// Backends are asked in this order, each at most once, stopping at the first that claims the
/// pointer: the CUDA driver (one `cuPointerGetAttributes` call), the HIP runtime (one
/// `hipPointerGetAttributes` call), the Level Zero loader (one `zeMemGetAllocProperties` call in
/// `ze_context`, or the context registered with `dlpack_level_zero_context_set` when
/// `ze_context` is NULL). A backend whose library is absent from the process (no override set,
/// not loadable, not loaded) is skipped: no memory of it can exist. Absence is never kept: each
/// query checks again whether the runtime is now loaded (`dlopen` with `RTLD_NOLOAD`, repeated
/// only after the process loaded or unloaded a library), so a runtime the application loads
/// after an earlier query (for example a bundled `libamdhip64.so.6` opened by full path) is
/// loaded once more and asked from then on. A runtime counts as loaded when an object of its
/// file family is (`libcuda`, `libamdhip64`, `libze_loader`, followed by `.` or `-`: also a
/// wheel's renamed copy such as `libamdhip64-1a2b3c4d.so.6`) or when one of its usual sonames
/// is; that loaded object is the one asked. A backend that could own the
/// memory but cannot be asked (its override names a missing file, it failed to initialize, also
/// when loaded late, or Level Zero is used in the process, or named by its override, but no
/// context was given) is reported in `backends_unreachable`, and then memory no asked
/// backend knows is `DLPACK_HELPERS_MEMORY_UNKNOWN`, never host memory. Level Zero answers only
/// for the allocations of the context it is asked in (`ZE_MEMORY_TYPE_UNKNOWN` also for
/// another context's USM memory), so once it has been asked, memory nobody claims is
/// `DLPACK_HELPERS_MEMORY_UNKNOWN` too (`backends_asked` includes Level Zero). With no backend
/// in the process at all (none loaded, none loadable, no override set) the memory is confirmed
/// host memory, `(kDLCPU, 0)` with `backends_asked` 0: the common case of a CPU-only producer
/// (issue 22, peer case 55; the earlier answer was unknown). Level Zero USM device and shared
/// memory get their SYCL ordinal from `dlpack_level_zero_context_set_devices`, else
/// `device_id_known` is 0 (never a -1 id; peer case 54). Any address inside an allocation
/// answers like its base; one past its end belongs to whatever follows.
///
/// - `ptr`: the address (non-NULL).
/// - `ze_context`: a `ze_context_handle_t`, or NULL for the registered one (if any).
/// - `out_info`: `struct_size` set by the caller; receives the answer.
///
/// Returns `DLPACK_HELPERS_STATUS_OK` (also when the class is unknown: see the fields),
/// `_NULL_POINTER` (`ptr` or `out_info`), `_INVALID_ARGUMENT` (`struct_size` below
/// `sizeof(size_t)`) or `_DEVICE_ERROR` (a driver call failed: the message names it). No
/// allocation on success; thread-safe; drivers are loaded on first use (peer cases 10, 12, 51).
///
/// @param[in] ze_context May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK also when the class is unknown (see the fields)
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `ptr` or `out_info` is NULL
/// @retval DLPACK_HELPERS_STATUS_INVALID_ARGUMENT when `out_info->struct_size` is below
///   `sizeof(size_t)`
/// @retval DLPACK_HELPERS_STATUS_DEVICE_ERROR when a driver call failed (the message names it)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_pointer_classify(
    ptr: *const c_void,
    ze_context: *mut c_void,
    out_info: *mut dlpack_helpers_pointer_info,
) -> dlpack_helpers_status {
    boundary::status(|| {
        let out = out_ptr(out_info, "out_info")?;
        if ptr.is_null() {
            return Err(Error::NullPointer("ptr"));
        }
        // SAFETY: non-NULL; `struct_size` is the first field in every version of the struct.
        let caller_size = unsafe { core::ptr::addr_of!((*out).struct_size).read() };
        if caller_size < size_of::<usize>() {
            return Err(Error::invalid(format!(
                "out_info->struct_size is {caller_size}, smaller than its own field (set it to \
                 sizeof(dlpack_helpers_pointer_info))"
            )));
        }
        let v = classify(
            ptr as usize,
            (!ze_context.is_null()).then_some(ze_context as usize),
        )?;
        let full = dlpack_helpers_pointer_info {
            struct_size: 0,
            memory_class: v.class.as_raw(),
            host_access: host_access_raw(v.class),
            device: v.device,
            native_device: v.native_device as *mut c_void,
            backends_asked: v.asked,
            backends_unreachable: v.unreachable,
            answered_by: v.answered_by,
            device_id_known: u64::from(v.id_known),
        };
        type I = dlpack_helpers_pointer_info;
        const ENDS: [usize; 9] = [
            offset_of!(I, struct_size) + size_of::<usize>(),
            offset_of!(I, memory_class) + 4,
            offset_of!(I, host_access) + 4,
            offset_of!(I, device) + size_of::<DLDevice>(),
            offset_of!(I, native_device) + size_of::<usize>(),
            offset_of!(I, backends_asked) + 4,
            offset_of!(I, backends_unreachable) + 4,
            offset_of!(I, answered_by) + 4,
            offset_of!(I, device_id_known) + 8,
        ];
        // SAFETY: `out` holds `caller_size` bytes (checked above to cover `struct_size`).
        unsafe { crate::capi::boundary::write_struct_sized(out, &full, &ENDS, caller_size) };
        Ok(())
    })
}

/// Host access of a tensor on `device` whose memory starts at `data`: the device table first,
/// a driver only when the table says "depends" and the device family has a pointer backend
/// (`kDLOneAPI`: Level Zero).
pub(crate) fn tensor_host_access(
    device: DLDevice,
    data: usize,
    ze_context: usize,
) -> Result<dlpack_helpers_host_access, Error> {
    match device::host_access(device.device_type) {
        HostAccess::Always => return Ok(DLPACK_HELPERS_HOST_ACCESS_ALWAYS),
        HostAccess::Never => return Ok(DLPACK_HELPERS_HOST_ACCESS_NEVER),
        HostAccess::Depends => {}
    }
    if device.device_type != DLDeviceType::kDLOneAPI || data == 0 || ze_context == 0 {
        return Ok(DLPACK_HELPERS_HOST_ACCESS_UNKNOWN);
    }
    let State::Ready(z) = level_zero::state() else {
        return Ok(DLPACK_HELPERS_HOST_ACCESS_UNKNOWN);
    };
    Ok(match z.pointer_claim(ze_context, data, &[])? {
        Some(c) => host_access_raw(c.class),
        None => DLPACK_HELPERS_HOST_ACCESS_UNKNOWN,
    })
}

/// Whether host code may dereference a tensor's memory, answered per tensor: always, never or
/// unknown. For a bare `DLTensor` (the other two calls take managed tensors).
///
/// The device table of `dlpack_device_host_access` answers first, with no driver call:
/// `kDLCPU`, `kDLCUDAHost`, `kDLROCMHost`, `kDLCUDAManaged` → `DLPACK_HELPERS_HOST_ACCESS_ALWAYS`;
/// `kDLCUDA`, `kDLROCM` and the other device-memory and handle types → `_NEVER`. Only where it
/// says "depends" is the memory asked about: `kDLOneAPI` through Level Zero
/// (`zeMemGetAllocProperties` on `tensor->data`, one call, in `ze_context` or the context
/// registered with `dlpack_level_zero_context_set`): USM host and shared → `_ALWAYS`, USM device
/// → `_NEVER`, not a USM allocation of that context → `_UNKNOWN`. `_UNKNOWN` also when no context
/// is known, the loader is not available, `data` is NULL (an empty tensor) or the device type
/// has no pointer backend (`kDLExtDev`, values DLPack 1.3 does not assign). Never `_DEPENDS`.
///
/// - `tensor`: borrowed; only `device` and `data` are read.
/// - `ze_context`: a `ze_context_handle_t` or NULL (registered context).
/// - `out_access`: receives one of `DLPACK_HELPERS_HOST_ACCESS_ALWAYS`, `_NEVER`, `_UNKNOWN`.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_NULL_POINTER` or `_DEVICE_ERROR` (the driver call
/// failed). Thread-safe; no allocation on success (peer case 51).
///
/// @param[in] ze_context May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_access` is NULL
/// @retval DLPACK_HELPERS_STATUS_DEVICE_ERROR when the driver call failed
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_dltensor_host_access(
    tensor: *const DLTensor,
    ze_context: *mut c_void,
    out_access: *mut dlpack_helpers_host_access,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: caller contract.
        let t = unsafe { nonnull(tensor, "tensor") }?;
        let out = out_ptr(out_access, "out_access")?;
        let a = tensor_host_access(t.device, t.data as usize, context_or_registered(ze_context))?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(a) };
        Ok(())
    })
}

/// `dlpack_dltensor_host_access` for a versioned managed tensor: its version is checked first
/// (a major other than 1 is `DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION` and nothing else is
/// read), then the same answers.
///
/// - `tensor`: borrowed; only `version`, `dl_tensor.device` and `dl_tensor.data` are read.
/// - `ze_context`: a `ze_context_handle_t`, or NULL for the registered one.
/// - `out_access`: receives the answer.
///
/// Returns `DLPACK_HELPERS_STATUS_OK`, `_UNSUPPORTED_VERSION`,
/// `_NULL_POINTER` or `_DEVICE_ERROR`.
///
/// @param[in] ze_context May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_access` is NULL
/// @retval DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION when the tensor's major version is not 1
/// @retval DLPACK_HELPERS_STATUS_DEVICE_ERROR when the driver call failed
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_tensor_host_access(
    tensor: *const DLManagedTensorVersioned,
    ze_context: *mut c_void,
    out_access: *mut dlpack_helpers_host_access,
) -> dlpack_helpers_status {
    boundary::status(|| {
        if tensor.is_null() {
            return Err(Error::NullPointer("tensor"));
        }
        let out = out_ptr(out_access, "out_access")?;
        // SAFETY: non-NULL managed tensor (caller contract).
        unsafe { crate::capi::tensor::checked_version(tensor, "tensor") }?;
        // SAFETY: version checked; caller contract.
        let t = unsafe { &(*tensor).dl_tensor };
        let a = tensor_host_access(t.device, t.data as usize, context_or_registered(ze_context))?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(a) };
        Ok(())
    })
}

/// `dlpack_dltensor_host_access` for a legacy `DLManagedTensor`: the same answers.
///
/// - `tensor`: borrowed; only `dl_tensor.device` and `dl_tensor.data` are read.
/// - `ze_context`: a `ze_context_handle_t`, or NULL for the registered one.
/// - `out_access`: receives the answer.
///
/// Returns
/// `DLPACK_HELPERS_STATUS_OK`, `_NULL_POINTER` or `_DEVICE_ERROR`.
///
/// @param[in] ze_context May be NULL.
/// @retval DLPACK_HELPERS_STATUS_OK on success
/// @retval DLPACK_HELPERS_STATUS_NULL_POINTER when `tensor` or `out_access` is NULL
/// @retval DLPACK_HELPERS_STATUS_DEVICE_ERROR when the driver call failed
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlpack_legacy_tensor_host_access(
    tensor: *const DLManagedTensor,
    ze_context: *mut c_void,
    out_access: *mut dlpack_helpers_host_access,
) -> dlpack_helpers_status {
    boundary::status(|| {
        // SAFETY: caller contract.
        let t = unsafe { nonnull(tensor, "tensor") }?;
        let out = out_ptr(out_access, "out_access")?;
        let d = &t.dl_tensor;
        let a = tensor_host_access(d.device, d.data as usize, context_or_registered(ze_context))?;
        // SAFETY: non-NULL caller storage.
        unsafe { out.write(a) };
        Ok(())
    })
}

/// `CAP_*` bits of the pointer backends and Level Zero (see `dlpack_get_info`).
pub(crate) fn capabilities() -> u64 {
    let mut caps = 0;
    if cuda::available() {
        caps |= info::CAP_POINTER_CUDA;
    }
    if hip::can_classify() {
        caps |= info::CAP_POINTER_ROCM;
    }
    if level_zero::available() {
        caps |= info::CAP_LEVEL_ZERO | info::CAP_POINTER_LEVEL_ZERO;
    }
    caps
}

/// Used by validation with `DLPACK_HELPERS_VALIDATE_RESOLVE_HOST_ACCESS`.
pub(crate) fn registered_context() -> usize {
    LEVEL_ZERO_CONTEXT.load(Ordering::Acquire)
}
