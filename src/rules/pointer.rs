//! Pointer classification: what the device runtimes' answers about one address mean, and how
//! the answers of several runtimes combine into one verdict that never guesses.
//!
//! | runtime | call | its answer | class | DLPack device |
//! |---|---|---|---|---|
//! | CUDA | `cuPointerGetAttributes` | managed | managed | `(kDLCUDAManaged, 0)` |
//! | CUDA | | host (pinned / registered) | pinned host | `(kDLCUDAHost, 0)` |
//! | CUDA | | device | device | `(kDLCUDA, ordinal)` |
//! | HIP | `hipPointerGetAttributes` | managed (`isManaged`, `hipMemoryTypeManaged`, `Unified`) | managed | `(kDLROCM, device)` |
//! | HIP | | host (pinned / registered) | pinned host | `(kDLROCMHost, 0)` |
//! | HIP | | device, array | device | `(kDLROCM, device)` |
//! | Level Zero | `zeMemGetAllocProperties` | `ZE_MEMORY_TYPE_SHARED` | managed | `(kDLOneAPI, ordinal)` |
//! | Level Zero | | `ZE_MEMORY_TYPE_DEVICE` | device | `(kDLOneAPI, ordinal)` |
//! | Level Zero | | `ZE_MEMORY_TYPE_HOST` | pinned host | `(kDLOneAPI, ?)`: id not established |
//!
//! DLPack has no ROCm managed device type: HIP managed memory is reported on its device
//! (`kDLROCM`) with the class "managed" saying that the host may dereference it. Level Zero
//! names a device by handle, not by the SYCL ordinal DLPack uses: the ordinal is the handle's
//! index in the device list the application registered with the context (or its root device's,
//! for a sub-device). Where that list does not name the handle, or for USM host memory (no
//! device), the id is *not established*: [`Claim::id_known`] is false and the device id is 0,
//! never -1 (issue 22, peer case 54; the C layer answers `DEVICE_ID_UNKNOWN`).
//!
//! Combination ([`verdict`]): the first runtime that claims the pointer answers. When none
//! claims it, the pointer is confirmed ordinary host memory when no runtime that could own it
//! was unreachable (its library named by an override but missing, or present but failing to
//! initialize, or Level Zero in use without a context) and no runtime was asked within one
//! context only (Level Zero: `zeMemGetAllocProperties` answers `ZE_MEMORY_TYPE_UNKNOWN` for
//! another context's allocation too, so its "not mine" cannot exclude USM memory). That includes
//! a process where no runtime is resident at all ([`Reply::Absent`] from each): memory of a
//! runtime that is not in the process cannot exist in it, so a CPU-only process gets
//! `(kDLCPU, 0)` (issue 22, peer case 55). Anything else is "unknown": never `kDLCPU` by default
//! (issue 12: a device is never guessed).

use crate::abi::{DLDevice, DLDeviceType};

/// Backend bit: the CUDA driver (`libcuda.so.1`).
pub const BACKEND_CUDA: u32 = 1 << 0;
/// Backend bit: the HIP runtime (`libamdhip64.so`).
pub const BACKEND_HIP: u32 = 1 << 1;
/// Backend bit: the Level Zero loader (`libze_loader.so.1`).
pub const BACKEND_LEVEL_ZERO: u32 = 1 << 2;

/// What kind of memory an address is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryClass {
    /// No runtime could establish it.
    Unknown,
    /// Ordinary host memory: every runtime that could own it was asked and none knows it.
    Host,
    /// Device memory: host code cannot dereference it.
    Device,
    /// Page-locked (pinned / registered) host memory, or Level Zero USM host memory.
    PinnedHost,
    /// Managed memory (CUDA/HIP) or Level Zero USM shared memory: host-addressable.
    Managed,
}

impl MemoryClass {
    /// The C value (`DLPACK_HELPERS_MEMORY_*`).
    pub const fn as_raw(self) -> i32 {
        match self {
            MemoryClass::Unknown => 0,
            MemoryClass::Host => 1,
            MemoryClass::Device => 2,
            MemoryClass::PinnedHost => 3,
            MemoryClass::Managed => 4,
        }
    }

    /// Host access of memory of this class: `Some(true)` may dereference, `Some(false)` may not,
    /// `None` unknown.
    pub const fn host_accessible(self) -> Option<bool> {
        match self {
            MemoryClass::Unknown => None,
            MemoryClass::Device => Some(false),
            MemoryClass::Host | MemoryClass::PinnedHost | MemoryClass::Managed => Some(true),
        }
    }
}

/// One runtime's claim on a pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    pub class: MemoryClass,
    pub device: DLDevice,
    /// The runtime's own device handle where it names devices by handle (Level Zero), else 0.
    pub native_device: usize,
    /// Whether `device.device_id` is established (false: Level Zero memory whose device the
    /// registered list does not name, or USM host memory; the id is then 0, never -1).
    pub id_known: bool,
}

/// What asking one runtime gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Its library is not present and nothing says it should be: no memory of it can exist.
    /// Only ever true of the moment of the query: the caller checks again at each query, since
    /// the application may load the runtime later.
    Absent,
    /// It should have been asked but could not be (override names a missing file, the runtime
    /// failed to initialize, or it needs a context that was not given).
    Unreachable,
    /// Asked; it does not know the pointer.
    NotMine,
    /// Asked within one context; it does not know the pointer there, but memory of another
    /// context of the same runtime cannot be excluded (Level Zero answers only for the
    /// allocations of the context it is given). Counts as asked; never confirms host memory.
    NotInContext,
    /// Asked; it owns the pointer.
    Mine(Claim),
}

/// The combined answer for one pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub class: MemoryClass,
    /// Meaningful unless `class` is [`MemoryClass::Unknown`] (then `(0, 0)`).
    pub device: DLDevice,
    pub native_device: usize,
    /// Whether `device.device_id` is established ([`Claim::id_known`]; true for host memory).
    pub id_known: bool,
    /// `BACKEND_*` bits of the runtimes that answered (claimed or not).
    pub asked: u32,
    /// `BACKEND_*` bits of the runtimes that should have been asked but could not be.
    pub unreachable: u32,
    /// The `BACKEND_*` bit of the runtime that claimed the pointer, 0 if none.
    pub answered_by: u32,
    /// `BACKEND_*` bits of the runtimes asked within one context only ([`Reply::NotInContext`]):
    /// their "not mine" does not exclude their memory.
    pub context_only: u32,
}

/// Combine the replies, in the order the runtimes were asked (see the module docs).
pub fn verdict(replies: &[(u32, Reply)]) -> Verdict {
    let mut v = Verdict {
        class: MemoryClass::Unknown,
        device: DLDevice {
            device_type: DLDeviceType(0),
            device_id: 0,
        },
        native_device: 0,
        id_known: false,
        asked: 0,
        unreachable: 0,
        answered_by: 0,
        context_only: 0,
    };
    for &(bit, reply) in replies {
        match reply {
            Reply::Absent => {}
            Reply::Unreachable => v.unreachable |= bit,
            Reply::NotMine => v.asked |= bit,
            Reply::NotInContext => {
                v.asked |= bit;
                v.context_only |= bit;
            }
            Reply::Mine(c) => {
                v.asked |= bit;
                v.answered_by = bit;
                v.class = c.class;
                v.device = c.device;
                v.native_device = c.native_device;
                v.id_known = c.id_known;
                return v;
            }
        }
    }
    // Nothing unreachable and nothing asked within one context only: every runtime that could
    // own the memory was asked and said no, or is absent from the process (none at all in a
    // CPU-only process, issue 22), so the memory is host memory.
    if v.unreachable == 0 && v.context_only == 0 {
        v.class = MemoryClass::Host;
        v.id_known = true;
        v.device = DLDevice {
            device_type: DLDeviceType::kDLCPU,
            device_id: 0,
        };
    }
    v
}

/// HIP `hipMemoryType` encodings: ROCm 6 renumbered the enum to match CUDA's.
///
/// ROCm 6 and newer (`hipRuntimeGetVersion` >= 60000000): Unregistered 0, Host 1, Device 2,
/// Managed 3, Array 10, Unified 11. ROCm 5: Host 0, Device 1, Array 2, Unified 3 (managed only
/// through `isManaged`).
pub fn hip_claim(
    runtime_version: i32,
    memory_type: u32,
    device: i32,
    is_managed: bool,
) -> Result<Option<Claim>, u32> {
    #[derive(PartialEq)]
    enum T {
        Unregistered,
        Host,
        Device,
        Managed,
    }
    let t = if runtime_version >= 60_000_000 {
        match memory_type {
            0 => T::Unregistered,
            1 => T::Host,
            2 | 10 => T::Device,
            3 | 11 => T::Managed,
            other => return Err(other),
        }
    } else {
        match memory_type {
            0 => T::Host,
            1 | 2 => T::Device,
            3 => T::Managed,
            other => return Err(other),
        }
    };
    let t = if is_managed && t != T::Unregistered {
        T::Managed
    } else {
        t
    };
    let on = |device_type: DLDeviceType, device_id: i32, class| {
        Some(Claim {
            class,
            // A negative device from the runtime is not an ordinal: not established, never
            // passed on (issue 22).
            device: DLDevice {
                device_type,
                device_id: device_id.max(0),
            },
            native_device: 0,
            id_known: device_id >= 0,
        })
    };
    Ok(match t {
        T::Unregistered => None,
        T::Host => on(DLDeviceType::kDLROCMHost, 0, MemoryClass::PinnedHost),
        T::Device => on(DLDeviceType::kDLROCM, device, MemoryClass::Device),
        T::Managed => on(DLDeviceType::kDLROCM, device, MemoryClass::Managed),
    })
}

/// Level Zero `ze_memory_type_t`: UNKNOWN 0 (not a USM allocation of the context), HOST 1,
/// DEVICE 2, SHARED 3. Any other value is returned as the error. `ordinal` is the SYCL ordinal
/// of `native_device` where the caller established it (its index in the registered device
/// list); USM host memory has no device, so its id is never established.
pub fn level_zero_claim(
    memory_type: u32,
    native_device: usize,
    ordinal: Option<u32>,
) -> Result<Option<Claim>, u32> {
    let class = match memory_type {
        0 => return Ok(None),
        1 => MemoryClass::PinnedHost,
        2 => MemoryClass::Device,
        3 => MemoryClass::Managed,
        other => return Err(other),
    };
    let ordinal = match class {
        MemoryClass::PinnedHost => None,
        _ => ordinal.and_then(|o| i32::try_from(o).ok()),
    };
    Ok(Some(Claim {
        class,
        device: DLDevice {
            device_type: DLDeviceType::kDLOneAPI,
            device_id: ordinal.unwrap_or(0),
        },
        native_device,
        id_known: ordinal.is_some(),
    }))
}

/// The index of `handle` in a registered device list (`list[i]` is the handle of ordinal `i`;
/// 0 entries hold a place). `None` for the NULL handle or one the list does not name.
pub fn ordinal_in(list: &[usize], handle: usize) -> Option<u32> {
    if handle == 0 {
        return None;
    }
    list.iter()
        .position(|&h| h == handle)
        .and_then(|i| u32::try_from(i).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(class: MemoryClass, t: i32, id: i32) -> Claim {
        Claim {
            class,
            device: DLDevice {
                device_type: DLDeviceType(t),
                device_id: id,
            },
            native_device: 0,
            id_known: true,
        }
    }

    #[test]
    fn verdict_never_guesses_host() {
        use Reply::*;
        // No runtime in the process at all (issue 22, peer case 55): host memory, nothing asked.
        let v = verdict(&[
            (BACKEND_CUDA, Absent),
            (BACKEND_HIP, Absent),
            (BACKEND_LEVEL_ZERO, Absent),
        ]);
        assert_eq!(
            (v.class, v.asked, v.unreachable, v.id_known),
            (MemoryClass::Host, 0, 0, true)
        );
        assert_eq!(
            (v.device.device_type, v.device.device_id),
            (DLDeviceType::kDLCPU, 0)
        );
        // ... but one unreachable runtime, even with nothing asked: unknown.
        let v = verdict(&[(BACKEND_CUDA, Unreachable), (BACKEND_HIP, Absent)]);
        assert_eq!(
            (v.class, v.asked, v.unreachable),
            (MemoryClass::Unknown, 0, BACKEND_CUDA)
        );
        // One asked, one unreachable: unknown, both reported.
        let v = verdict(&[(BACKEND_CUDA, NotMine), (BACKEND_HIP, Unreachable)]);
        assert_eq!(
            (v.class, v.asked, v.unreachable),
            (MemoryClass::Unknown, BACKEND_CUDA, BACKEND_HIP)
        );
        // Asked and absent only: confirmed host.
        let v = verdict(&[(BACKEND_CUDA, NotMine), (BACKEND_HIP, Absent)]);
        assert_eq!(v.class, MemoryClass::Host);
        assert_eq!(v.device.device_type, DLDeviceType::kDLCPU);
        // Asked within one context only (Level Zero): its "not mine" cannot exclude another
        // context's memory, so unknown, with the runtime counted as asked.
        let v = verdict(&[
            (BACKEND_CUDA, NotMine),
            (BACKEND_HIP, Absent),
            (BACKEND_LEVEL_ZERO, NotInContext),
        ]);
        assert_eq!(
            (v.class, v.asked, v.unreachable, v.context_only),
            (
                MemoryClass::Unknown,
                BACKEND_CUDA | BACKEND_LEVEL_ZERO,
                0,
                BACKEND_LEVEL_ZERO
            )
        );
        assert_eq!(v.device.device_type, DLDeviceType(0));
        // ... but a claim by a runtime asked before it still answers.
        let c = claim(MemoryClass::PinnedHost, 3, 0);
        let v = verdict(&[(BACKEND_CUDA, Mine(c)), (BACKEND_LEVEL_ZERO, NotInContext)]);
        assert_eq!(
            (v.class, v.answered_by),
            (MemoryClass::PinnedHost, BACKEND_CUDA)
        );
        // A claim wins even after an unreachable runtime.
        let c = claim(MemoryClass::Device, 10, 1);
        let v = verdict(&[(BACKEND_CUDA, Unreachable), (BACKEND_HIP, Mine(c))]);
        assert_eq!(
            (v.class, v.answered_by, v.device),
            (MemoryClass::Device, BACKEND_HIP, c.device)
        );
    }

    #[test]
    fn hip_both_encodings() {
        let v6 = 60_032_830;
        let v5 = 50_422_804;
        let c =
            |v, t, m| hip_claim(v, t, 1, m).map(|o| o.map(|c| (c.class, c.device.device_type.0)));
        assert_eq!(c(v6, 0, false), Ok(None));
        assert_eq!(c(v6, 1, false), Ok(Some((MemoryClass::PinnedHost, 11))));
        assert_eq!(c(v6, 2, false), Ok(Some((MemoryClass::Device, 10))));
        assert_eq!(c(v6, 3, false), Ok(Some((MemoryClass::Managed, 10))));
        assert_eq!(c(v6, 2, true), Ok(Some((MemoryClass::Managed, 10))));
        assert_eq!(c(v6, 0, true), Ok(None));
        assert_eq!(c(v6, 10, false), Ok(Some((MemoryClass::Device, 10))));
        assert_eq!(c(v6, 11, false), Ok(Some((MemoryClass::Managed, 10))));
        assert_eq!(c(v6, 4, false), Err(4));
        assert_eq!(c(v5, 0, false), Ok(Some((MemoryClass::PinnedHost, 11))));
        assert_eq!(c(v5, 1, false), Ok(Some((MemoryClass::Device, 10))));
        assert_eq!(c(v5, 1, true), Ok(Some((MemoryClass::Managed, 10))));
        assert_eq!(c(v5, 3, false), Ok(Some((MemoryClass::Managed, 10))));
        assert_eq!(c(v5, 10, false), Err(10));
    }

    #[test]
    fn level_zero_types() {
        assert_eq!(level_zero_claim(0, 5, None), Ok(None));
        let k = |t| level_zero_claim(t, 5, None).unwrap().unwrap().class;
        assert_eq!(k(1), MemoryClass::PinnedHost);
        assert_eq!(k(2), MemoryClass::Device);
        assert_eq!(k(3), MemoryClass::Managed);
        assert_eq!(level_zero_claim(4, 5, None), Err(4));
        assert_eq!(
            level_zero_claim(1, 5, None).unwrap().unwrap().native_device,
            5
        );
        // Peer case 54: the id is the ordinal where established, else 0 and not known; never -1.
        for t in 1..=3 {
            for o in [None, Some(0), Some(2), Some(u32::MAX)] {
                let c = level_zero_claim(t, 5, o).unwrap().unwrap();
                assert!(c.device.device_id >= 0);
                let want = if t == 1 {
                    None
                } else {
                    o.filter(|&o| o <= i32::MAX as u32)
                };
                assert_eq!(c.id_known, want.is_some(), "{t} {o:?}");
                assert_eq!(c.device.device_id, want.unwrap_or(0) as i32);
            }
        }
        assert_eq!(ordinal_in(&[0, 7, 9], 9), Some(2));
        assert_eq!(ordinal_in(&[0, 7, 9], 0), None);
        assert_eq!(ordinal_in(&[7], 8), None);
        assert_eq!(MemoryClass::Device.host_accessible(), Some(false));
        assert_eq!(MemoryClass::Unknown.host_accessible(), None);
    }
}
