//! Heap allocations of the tensor helpers, counted by a global allocator: none on validation,
//! layout and name paths that succeed, exactly one per wrap or creation.
//!
//! One test function only, so that no other test thread allocates while it counts.

use dlpack_helpers::abi::*;
use dlpack_helpers::capi::convert::*;
use dlpack_helpers::capi::layout::*;
use dlpack_helpers::capi::names::*;
use dlpack_helpers::capi::validate::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to System unchanged; counting has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: forwards the caller's GlobalAlloc contract (non-zero-size layout) to System
        // unchanged.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwards the caller's contract (`p` came from `alloc` with layout `l`) to System
        // unchanged.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCS.load(Ordering::SeqCst);
    let r = f();
    (r, ALLOCS.load(Ordering::SeqCst) - before)
}

static RELEASED: AtomicUsize = AtomicUsize::new(0);
unsafe extern "C" fn release(_ctx: *mut c_void) {
    RELEASED.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn no_allocation_on_queries_and_one_per_wrap_or_creation() {
    let mut data = [0f32; 120];
    let mut shape = [2i64, 3, 4, 5];
    let mut strides = [60i64, 20, 5, 1];
    let t = DLManagedTensorVersioned {
        version: DLPackVersion::new(1, 3),
        manager_ctx: std::ptr::null_mut(),
        deleter: None,
        flags: 0,
        dl_tensor: DLTensor {
            data: data.as_mut_ptr().cast(),
            device: DLDevice {
                device_type: DLDeviceType::kDLCPU,
                device_id: 0,
            },
            ndim: 4,
            dtype: DLDataType {
                code: 2,
                bits: 32,
                lanes: 1,
            },
            shape: shape.as_mut_ptr(),
            strides: strides.as_mut_ptr(),
            byte_offset: 0,
        },
    };
    let opts = dlpack_helpers_validate_options {
        struct_size: size_of::<dlpack_helpers_validate_options>(),
        flags: DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS
            | DLPACK_HELPERS_VALIDATE_REQUIRE_COMPACT,
        ..Default::default()
    };
    let mut out = dlpack_helpers_layout::default();
    // Warm up thread-locals and lazy statics outside the counted regions.
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    // `t` (shape/strides arrays included) outlives the call.
    unsafe { dlpack_tensor_validate(&t, &opts, &mut out) };

    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    // `t` (shape/strides arrays included) outlives the call.
    let (s, n) = allocations(|| unsafe { dlpack_tensor_validate(&t, &opts, std::ptr::null_mut()) });
    assert_eq!((s, n), (0, 0), "validation, fast path");
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    // `t` (shape/strides arrays included) outlives the call.
    let (s, n) = allocations(|| unsafe { dlpack_tensor_validate(&t, &opts, &mut out) });
    assert_eq!((s, n), (0, 0), "validation, full path with layout");
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    // `t` (shape/strides arrays included) outlives the call.
    let (s, n) = allocations(|| unsafe { dlpack_tensor_layout(&t, &mut out) });
    assert_eq!((s, n), (0, 0), "layout");
    let mut cs = [0i64; 4];
    let (s, n) =
        // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain
        // values. `t` (shape/strides arrays included) outlives the call.
        allocations(|| unsafe { dlpack_compact_strides(4, shape.as_ptr(), true, cs.as_mut_ptr()) });
    assert_eq!((s, n), (0, 0), "compact strides");
    let mut buf = [0 as std::ffi::c_char; DLPACK_HELPERS_NAME_MAX];
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    // `t` (shape/strides arrays included) outlives the call.
    let (s, n) = allocations(|| unsafe {
        dlpack_dtype_format(
            t.dl_tensor.dtype,
            buf.as_mut_ptr(),
            buf.len(),
            std::ptr::null_mut(),
        )
    });
    assert_eq!((s, n), (0, 0), "dtype name");
    let mut addr = std::ptr::null_mut();
    // SAFETY: the pointer arguments are NULL or point to live locals; the rest are plain values.
    // `t` (shape/strides arrays included) outlives the call.
    let (s, n) = allocations(|| unsafe { dlpack_dltensor_data_address(&t.dl_tensor, &mut addr) });
    assert_eq!((s, n), (0, 0), "data address");

    let mut created = std::ptr::null_mut();
    // SAFETY: `data` and `shape` outlive the tensor (released below); NULL strides means compact;
    // `release` runs once on the `RELEASED` counter.
    let (s, n) = allocations(|| unsafe {
        dlpack_tensor_create(
            data.as_mut_ptr().cast(),
            t.dl_tensor.device,
            4,
            shape.as_ptr(),
            std::ptr::null(),
            t.dl_tensor.dtype,
            0,
            0,
            Some(release),
            std::ptr::null_mut(),
            &mut created,
        )
    });
    assert_eq!((s, n), (0, 1), "creation");
    let mut legacy = std::ptr::null_mut();
    // SAFETY: `created` is the live tensor made above; the wrapper takes it over and `legacy` is a
    // live local.
    let (s, n) = allocations(|| unsafe {
        dlpack_versioned_to_legacy(created, 0, std::ptr::null_mut(), &mut legacy)
    });
    assert_eq!((s, n), (0, 1), "versioned to legacy");
    let mut back = std::ptr::null_mut();
    // SAFETY: `legacy` is the live wrapper made above, taken over here; `back` is a live local.
    let (s, n) = allocations(|| unsafe { dlpack_legacy_to_versioned(legacy, 0, &mut back) });
    assert_eq!((s, n), (0, 1), "legacy to versioned");
    let ((), n) =
        // SAFETY: `back` is the live tensor made above, released exactly once, here.
        allocations(|| unsafe { dlpack_helpers::capi::tensor::dlpack_tensor_delete(back) });
    assert_eq!(n, 0, "release");
    assert_eq!(
        RELEASED.load(Ordering::SeqCst),
        1,
        "the chain released the buffer exactly once"
    );
}
