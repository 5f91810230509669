//! Using dlpack-helpers from Rust without `unsafe`: the seven steps an extension author takes,
//! through the crate's safe API (`dlpack_helpers::{Managed, TensorRef, Error, …}`).
//!
//! 1. describe a strided view over a `Vec<f32>` (a producer: the tensor owns the `Vec`);
//! 2. validate it against the caller's requirements;
//! 3. compute its layout;
//! 4. name its dtype and device;
//! 5. negotiate `max_version` the way `__dlpack__(max_version=…)` does;
//! 6. decode a CUDA `stream=` integer;
//! 7. create a managed tensor whose deleter drops a Rust buffer exactly once, and release it.
//!
//! `#![forbid(unsafe_code)]` below makes the compiler prove that none of it needs `unsafe`.
//! `scripts/test.d/60-packaging.sh` runs it twice: as this crate's example, and as the binary of
//! `tests/rust-dependent/`, a separate crate depending on this one by path (which also shows
//! that a dependent crate builds no `libdlpack_helpers.so`/`.a`).
//!
//! Run: `cargo run --release --example rust_consumer` (it exits non-zero if a step misbehaves).
#![forbid(unsafe_code)]

use dlpack_helpers::rules::device::HostAccess;
use dlpack_helpers::rules::layout::{BROADCAST, C_CONTIGUOUS, COMPACT};
use dlpack_helpers::rules::stream::{DecodeOptions, Kind};
use dlpack_helpers::rules::validate::{REQUIRE_C_CONTIGUOUS, REQUIRE_DTYPE, Requirements};
use dlpack_helpers::rules::version::{Export, Exporter};
use dlpack_helpers::status::{
    DLPACK_HELPERS_STATUS_INVALID_STREAM, DLPACK_HELPERS_STATUS_NO_COMMON_VERSION,
    DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS,
};
use dlpack_helpers::{
    DLDataType, DLDevice, DLPackVersion, Error, Managed, decode_stream, host_access, negotiate,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A Rust buffer that counts its drops: the tensor's deleter must drop it exactly once.
struct Buffer {
    values: Vec<f32>,
    drops: Arc<AtomicUsize>,
}

impl AsMut<[f32]> for Buffer {
    fn as_mut(&mut self) -> &mut [f32] {
        &mut self.values
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn main() -> Result<(), Error> {
    let lib = dlpack_helpers::info();
    println!(
        "dlpack-helpers {} reads DLPack {}.{}",
        lib.version, lib.dlpack_version.major, lib.dlpack_version.minor
    );

    // 1. A strided view over a Vec<f32>: the 2 x 3 transpose of a 3 x 2 row-major matrix
    //    (strides in elements). The tensor owns the Vec; nothing is copied.
    let drops = Arc::new(AtomicUsize::new(0));
    let buffer = Buffer {
        values: (1..=6).map(|i| i as f32).collect(), // [[1, 2], [3, 4], [5, 6]]
        drops: Arc::clone(&drops),
    };
    let t = Managed::from_owner_mut(buffer, &[2, 3], Some(&[1, 2]))?;
    let view = t.view();

    // 2. Validate: float32 is required and passes; C-contiguity is required and refused.
    let f32_only = Requirements {
        flags: REQUIRE_DTYPE,
        dtype: DLDataType::F32,
        ..Requirements::default()
    };
    view.validate(&f32_only)?;
    let contiguous = Requirements {
        flags: REQUIRE_C_CONTIGUOUS,
        ..Requirements::default()
    };
    let refused = view.validate(&contiguous).unwrap_err();
    assert_eq!(refused.status(), DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS);
    println!("validate: float32 ok; C-contiguous refused: {refused}");

    // 3. Layout: 6 elements, 24 bytes, compact (F-order) but not C-contiguous, no broadcast.
    let layout = view.layout()?;
    assert_eq!((layout.numel, layout.nbytes), (6, 24));
    assert!(layout.has(COMPACT) && !layout.has(C_CONTIGUOUS) && !layout.has(BROADCAST));
    println!(
        "layout: {} elements, {} bytes, bytes {}..{}",
        layout.numel, layout.nbytes, layout.lowest_byte, layout.end_byte
    );

    // 4. Names: Display on DLDataType and DLDevice.
    assert_eq!(view.dtype().to_string(), "float32");
    assert_eq!(view.device().to_string(), "cpu:0");
    assert_eq!(host_access(view.device()), HostAccess::Always);
    assert_eq!(host_access(DLDevice::cuda(0)), HostAccess::Never);
    println!("names: {} on {}", view.dtype(), view.device());

    // 5. Negotiate max_version: a 1.3 producer without the legacy struct.
    let producer = Exporter {
        version: DLPackVersion::CURRENT,
        exports_legacy: false,
        no_max_version_keyword: false,
    };
    let got = negotiate(producer, Some(DLPackVersion::new(1, 0)))?;
    assert_eq!(got, Export::Versioned(DLPackVersion::CURRENT));
    let none = negotiate(producer, None).unwrap_err(); // max_version=None: BufferError
    assert_eq!(none.status(), DLPACK_HELPERS_STATUS_NO_COMMON_VERSION);
    assert_eq!(none.python_exception(), "BufferError");
    println!(
        "negotiate: max_version=(1, 0) -> {got:?}; None -> {}",
        none.status_name()
    );

    // 6. Decode CUDA stream integers: 1 is the legacy default stream, 0 is refused.
    let s = decode_stream(DLDevice::cuda(0), Some(1), DecodeOptions::default())?;
    assert_eq!(s.kind, Kind::LegacyDefault);
    let zero = decode_stream(DLDevice::cuda(0), Some(0), DecodeOptions::default()).unwrap_err();
    assert_eq!(zero.status(), DLPACK_HELPERS_STATUS_INVALID_STREAM);
    println!("stream: 1 -> {:?}; 0 -> {}", s.kind, zero.status_name());

    // Reading elements: a slice needs C-contiguity (the transpose is refused), a copy in
    // row-major order works for any strides.
    assert!(t.as_slice::<f32>().is_err());
    assert_eq!(t.to_vec::<f32>()?, [1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    let plain = Managed::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?;
    assert_eq!(plain.as_slice::<f32>()?.iter().sum::<f32>(), 6.0);

    // 7. Release: dropping the owner runs the deleter, which drops the Buffer exactly once.
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(t);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    println!("release: the Rust buffer was dropped once");
    println!("rust_consumer: ok");
    Ok(())
}
