//! Through the C ABI: decode and encode are inverses for every device class, the plan's
//! `flags` follow the export kind, and every documented status and out-value of the stream
//! exports holds on each branch.

mod common;

use common::*;
use dlpack_helpers::abi::{DLDevice, DLDeviceType, DLPACK_FLAG_BITMASK_IS_COPIED, DLPackVersion};
use dlpack_helpers::capi::error::*;
use dlpack_helpers::capi::stream::*;
use dlpack_helpers::capi::version::{
    DLPACK_HELPERS_EXPORT_LEGACY, DLPACK_HELPERS_EXPORT_VERSIONED,
    DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY,
};
use std::ffi::c_void;

/// CPU, the CUDA family, the ROCm family, oneAPI, Vulkan and two types this library does not
/// know.
const CLASSES: [i32; 10] = [1, 2, 3, 13, 10, 11, 14, 7, 999, -4];

fn decode(d: DLDevice, v: Option<i64>, flags: u32) -> Result<dlpack_helpers_stream, i32> {
    let mut s = dlpack_helpers_stream {
        kind: -7,
        handle: std::ptr::null_mut(),
    };
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    let st = unsafe { dlpack_stream_decode(d, v.is_some(), v.unwrap_or(12345), flags, &mut s) };
    if st == DLPACK_HELPERS_STATUS_OK {
        Ok(s)
    } else {
        assert_eq!(s.kind, -7, "out_stream written on failure");
        Err(st)
    }
}

fn encode_decoded(d: DLDevice, s: &dlpack_helpers_stream) -> Result<Option<i64>, i32> {
    let (mut has, mut v) = (true, 4242i64);
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    let st = unsafe { dlpack_stream_encode_decoded(d, s, &mut has, &mut v) };
    if st == DLPACK_HELPERS_STATUS_OK {
        Ok(has.then_some(v))
    } else {
        assert!(has && v == 4242, "out-values written on failure");
        Err(st)
    }
}

fn encode(d: DLDevice, native: usize) -> Result<Option<i64>, i32> {
    let (mut has, mut v) = (true, 4242i64);
    // SAFETY: the native stream is an opaque value (never dereferenced); `has` and `v` are live
    // locals.
    let st = unsafe {
        dlpack_stream_encode(
            d,
            std::ptr::without_provenance_mut(native),
            &mut has,
            &mut v,
        )
    };
    if st == DLPACK_HELPERS_STATUS_OK {
        Ok(has.then_some(v))
    } else {
        assert!(has && v == 4242, "out-values written on failure");
        Err(st)
    }
}

fn values() -> Vec<i64> {
    let mut v: Vec<i64> = (-64..=64).collect();
    for k in 0..63 {
        v.extend([(1i64 << k) - 1, 1i64 << k, (1i64 << k) + 1, -(1i64 << k)]);
    }
    v.extend([i64::MAX, i64::MIN]);
    v
}

/// For every device class and value: decode refuses it, or encode_decoded gives it back; a
/// HANDLE is never NULL and NULL is exactly NO_SYNC, NONE or DEFAULT.
#[test]
fn decode_then_encode_decoded_returns_the_input() {
    for t in CLASSES {
        let d = dev(DLDeviceType(t), 0);
        let mut accepted = 0;
        for v in values() {
            match decode(d, Some(v), 0) {
                Err(st) => assert_eq!(st, DLPACK_HELPERS_STATUS_INVALID_STREAM, "{t} {v}"),
                Ok(s) => {
                    accepted += 1;
                    assert_eq!(encode_decoded(d, &s), Ok(Some(v)), "device {t} value {v}");
                    let null_kinds = [
                        DLPACK_HELPERS_STREAM_NO_SYNC,
                        DLPACK_HELPERS_STREAM_NONE,
                        DLPACK_HELPERS_STREAM_DEFAULT,
                    ];
                    assert_eq!(s.handle.is_null(), null_kinds.contains(&s.kind), "{t} {v}");
                }
            }
        }
        assert_eq!(
            accepted == 0,
            t == 1,
            "device {t}: only kDLCPU refuses every integer"
        );
    }
}

/// Issue: oneAPI and unknown types used to decode 0 as a HANDLE with a NULL handle, which
/// encoded back as "no stream". 0 is now refused; None is the default queue.
#[test]
fn zero_on_device_types_without_a_standard_encoding() {
    for t in [14, 7, 999, -4] {
        let d = dev(DLDeviceType(t), 0);
        assert_eq!(
            decode(d, Some(0), 0).map(|s| s.kind),
            Err(DLPACK_HELPERS_STATUS_INVALID_STREAM)
        );
        assert!(last_error().contains("stream=0"), "{}", last_error());
        let s = decode(d, None, 0).unwrap();
        assert_eq!(s.kind, DLPACK_HELPERS_STREAM_DEFAULT);
        assert!(s.handle.is_null());
        assert_eq!(encode_decoded(d, &s), Ok(None));
        assert_eq!(encode(d, 0), Ok(None));
        assert_eq!(encode(d, 0x5000), Ok(Some(0x5000)));
        assert_eq!(decode(d, Some(1), 0).unwrap().handle as usize, 1);
    }
}

/// encode_decoded refuses streams decode never yields, with the documented statuses.
#[test]
fn encode_decoded_refuses_what_decode_never_yields() {
    let s = |kind, h: usize| dlpack_helpers_stream {
        kind,
        handle: std::ptr::without_provenance_mut(h),
    };
    let cuda = dev(DLDeviceType::kDLCUDA, 0);
    let rocm = dev(DLDeviceType::kDLROCM, 0);
    let one_api = dev(DLDeviceType::kDLOneAPI, 0);
    let cpu = dev(DLDeviceType::kDLCPU, 0);
    let invalid = Err(DLPACK_HELPERS_STATUS_INVALID_STREAM);
    for (d, st) in [
        (cuda, s(DLPACK_HELPERS_STREAM_HANDLE, 0)),
        (cuda, s(DLPACK_HELPERS_STREAM_HANDLE, 1)),
        (cuda, s(DLPACK_HELPERS_STREAM_LEGACY_DEFAULT, 0)),
        (cuda, s(DLPACK_HELPERS_STREAM_DEFAULT, 0)),
        (cuda, s(DLPACK_HELPERS_STREAM_NO_SYNC, 5)),
        (rocm, s(DLPACK_HELPERS_STREAM_HANDLE, 2)),
        (rocm, s(DLPACK_HELPERS_STREAM_LEGACY_DEFAULT, 1)),
        (rocm, s(DLPACK_HELPERS_STREAM_DEFAULT, 8)),
        (one_api, s(DLPACK_HELPERS_STREAM_HANDLE, 0)),
        (one_api, s(DLPACK_HELPERS_STREAM_HANDLE, usize::MAX)),
        (one_api, s(DLPACK_HELPERS_STREAM_NONE, 0)),
        (cpu, s(DLPACK_HELPERS_STREAM_HANDLE, 3)),
        (cpu, s(DLPACK_HELPERS_STREAM_DEFAULT, 0)),
    ] {
        assert_eq!(encode_decoded(d, &st), invalid, "{d:?} {st:?}");
        assert!(
            last_error().contains("no protocol value"),
            "{}",
            last_error()
        );
    }
    assert_eq!(
        encode_decoded(cuda, &s(77, 0)),
        Err(DLPACK_HELPERS_STATUS_INVALID_ARGUMENT)
    );
    assert!(last_error().contains("stream->kind"), "{}", last_error());
    let ok = s(DLPACK_HELPERS_STREAM_NO_SYNC, 0);
    let (mut has, mut v) = (false, 0i64);
    for st in [
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_encode_decoded(cuda, std::ptr::null(), &mut has, &mut v) },
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_encode_decoded(cuda, &ok, std::ptr::null_mut(), &mut v) },
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values.
        unsafe { dlpack_stream_encode_decoded(cuda, &ok, &mut has, std::ptr::null_mut()) },
    ] {
        assert_eq!(st, DLPACK_HELPERS_STATUS_NULL_POINTER);
    }
    // CPU: NONE and the lenient mode's NO_SYNC both encode as no stream.
    assert_eq!(
        encode_decoded(cpu, &s(DLPACK_HELPERS_STREAM_NONE, 0)),
        Ok(None)
    );
    let lenient = decode(cpu, Some(-1), DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM).unwrap();
    assert_eq!(encode_decoded(cpu, &lenient), Ok(None));
}

/// dlpack_stream_encode of a native handle decodes back to the stream it names.
#[test]
fn encode_native_then_decode() {
    for t in CLASSES {
        let d = dev(DLDeviceType(t), 0);
        for native in [
            0usize,
            1,
            2,
            3,
            0x7f00_0000_1000,
            i64::MAX as usize,
            usize::MAX,
        ] {
            let Ok(v) = encode(d, native) else { continue };
            let s = decode(d, v, 0).unwrap();
            let cuda_family = matches!(t, 2 | 3 | 13);
            let want = if native == 0 && cuda_family {
                1 // CUDA: NULL is the legacy default stream, CU_STREAM_LEGACY
            } else {
                native
            };
            assert_eq!(s.handle as usize, want, "device {t} native {native:#x}");
        }
    }
    let rocm = dev(DLDeviceType::kDLROCM, 0);
    for native in [1usize, 2] {
        assert_eq!(
            encode(rocm, native),
            Err(DLPACK_HELPERS_STATUS_INVALID_STREAM)
        );
    }
    assert_eq!(
        encode(dev(DLDeviceType::kDLCUDA, 0), usize::MAX),
        Err(DLPACK_HELPERS_STATUS_INVALID_STREAM)
    );
}

fn resolve(
    src: DLDevice,
    max_version: Option<DLPackVersion>,
    dl_device: Option<DLDevice>,
    copy: i32,
) -> Result<dlpack_helpers_export_plan, i32> {
    let r = dlpack_helpers_export_request {
        has_max_version: max_version.is_some(),
        max_version: max_version.unwrap_or(DLPackVersion::new(0, 0)),
        has_stream: false,
        stream: 0,
        has_dl_device: dl_device.is_some(),
        dl_device: dl_device.unwrap_or(src),
        copy,
    };
    let mut p = std::mem::MaybeUninit::<dlpack_helpers_export_plan>::zeroed();
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    let st = unsafe {
        dlpack_export_request_resolve(
            &r,
            src,
            DLPackVersion::new(1, 3),
            DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY,
            p.as_mut_ptr(),
        )
    };
    if st == DLPACK_HELPERS_STATUS_OK {
        // SAFETY: the status is OK, so the library wrote the whole plan (and it started zeroed).
        Ok(unsafe { p.assume_init() })
    } else {
        Err(st)
    }
}

/// Both export kinds × every copy mode × same-device and CPU targets: `flags` is IS_COPIED
/// exactly for a versioned copy and 0 for every legacy plan, while `copy` says whether to copy.
#[test]
fn plan_flags_follow_the_export_kind() {
    let cpu = dev(DLDeviceType::kDLCPU, 0);
    let gpu = dev(DLDeviceType::kDLCUDA, 0);
    for (mv, kind) in [
        (None, DLPACK_HELPERS_EXPORT_LEGACY),
        (
            Some(DLPackVersion::new(1, 0)),
            DLPACK_HELPERS_EXPORT_VERSIONED,
        ),
    ] {
        for copy in [
            DLPACK_HELPERS_COPY_IF_NEEDED,
            DLPACK_HELPERS_COPY_ALWAYS,
            DLPACK_HELPERS_COPY_NEVER,
        ] {
            for (src, dl) in [(cpu, None), (gpu, None), (gpu, Some(cpu))] {
                let got = resolve(src, mv, dl, copy);
                let copies = copy == DLPACK_HELPERS_COPY_ALWAYS || dl.is_some();
                if dl.is_some() && copy == DLPACK_HELPERS_COPY_NEVER {
                    assert_eq!(
                        got.map(|p| p.copy),
                        Err(DLPACK_HELPERS_STATUS_COPY_FORBIDDEN)
                    );
                    continue;
                }
                let p = got.unwrap();
                assert_eq!(p.kind, kind);
                assert_eq!(p.copy, copies, "{mv:?} {copy} {src:?} {dl:?}");
                let want = if copies && kind == DLPACK_HELPERS_EXPORT_VERSIONED {
                    DLPACK_FLAG_BITMASK_IS_COPIED
                } else {
                    0
                };
                assert_eq!(p.flags, want, "{mv:?} {copy} {src:?} {dl:?}");
                if kind == DLPACK_HELPERS_EXPORT_LEGACY {
                    assert_eq!(p.version, DLPackVersion::new(0, 0));
                }
            }
        }
    }
}

/// The header says any dl_device other than the tensor's own or (kDLCPU, 0) is
/// UNSUPPORTED_DEVICE: that includes (kDLCPU, 1) for a CPU tensor.
#[test]
fn cpu_device_id_one_is_unsupported_for_a_cpu_tensor_too() {
    let cpu1 = dev(DLDeviceType::kDLCPU, 1);
    for src in [dev(DLDeviceType::kDLCPU, 0), dev(DLDeviceType::kDLCUDA, 0)] {
        assert_eq!(
            resolve(src, None, Some(cpu1), DLPACK_HELPERS_COPY_IF_NEEDED).map(|p| p.copy),
            Err(DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE)
        );
    }
}

/// kDLCPU has no stream backend and none can be registered: the check says so instead of
/// suggesting registration.
#[test]
fn cpu_backend_check_says_cpu_has_no_streams() {
    assert_eq!(
        // SAFETY: plain-value arguments only: no pointer is read.
        unsafe { dlpack_stream_backend_check(DLDeviceType::kDLCPU) },
        DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE
    );
    let msg = last_error();
    assert!(msg.contains("kDLCPU has no streams"), "{msg}");
    assert!(!msg.contains("register others"), "{msg}");
    assert_eq!(
        // SAFETY: CPU has no streams: the NULL stream is never used; `none` is a live local.
        unsafe { dlpack_stream_synchronize(dev(DLDeviceType::kDLCPU, 0), std::ptr::null_mut()) },
        DLPACK_HELPERS_STATUS_OK
    );
    let none = decode(dev(DLDeviceType::kDLCPU, 0), None, 0).unwrap();
    assert_eq!(
        // SAFETY: CPU has no streams: the NULL stream is never used; `none` is a live local.
        unsafe {
            dlpack_stream_wait(
                dev(DLDeviceType::kDLCPU, 0),
                std::ptr::null_mut::<c_void>(),
                &none,
            )
        },
        DLPACK_HELPERS_STATUS_OK
    );
}
