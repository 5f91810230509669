//! `#[repr(C)]` mirrors of the DLPack v1.3 ABI.
//!
//! Written for this project from the layout tables of the specification; the names are DLPack's
//! own so that Rust code reads like the C header. The C header `dlpack_helpers.h` carries the
//! matching C definitions (see `cbindgen.toml`), and `tests/abi.rs` compares both with each other
//! and, through `scripts/test`, with the official header fetched at test time.
//!
//! Device types and dtype codes are integer newtypes with named constants, never Rust `enum`s:
//! a newer producer may send values we do not know, and such a value in a Rust `enum` would be
//! undefined behaviour.
//!
//! cbindgen:ignore
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

use core::ffi::{c_char, c_int, c_void};
use core::mem::{align_of, offset_of, size_of};

/// DLPack major version this library understands (`DLPACK_MAJOR_VERSION`).
pub const DLPACK_MAJOR_VERSION: u32 = 1;
/// Newest DLPack minor version this library understands (`DLPACK_MINOR_VERSION`).
pub const DLPACK_MINOR_VERSION: u32 = 3;

/// `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write through the tensor (DLPack 1.0).
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`: the producer made a copy owned by the consumer (DLPack 1.0).
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
/// `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`: sub-byte elements are padded, not packed (1.1).
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;

/// `DLPackVersion` (DLPack 1.0+): size 8, align 4.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

impl DLPackVersion {
    /// The newest version this library understands: 1.3.
    pub const CURRENT: DLPackVersion = DLPackVersion {
        major: DLPACK_MAJOR_VERSION,
        minor: DLPACK_MINOR_VERSION,
    };
    pub const fn new(major: u32, minor: u32) -> Self {
        DLPackVersion { major, minor }
    }
}

/// `DLDeviceType`: a 32-bit signed integer in C (an `enum : int32_t` in C++).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DLDeviceType(pub i32);

impl DLDeviceType {
    pub const kDLCPU: Self = Self(1);
    pub const kDLCUDA: Self = Self(2);
    pub const kDLCUDAHost: Self = Self(3);
    pub const kDLOpenCL: Self = Self(4);
    pub const kDLVulkan: Self = Self(7);
    pub const kDLMetal: Self = Self(8);
    pub const kDLVPI: Self = Self(9);
    pub const kDLROCM: Self = Self(10);
    pub const kDLROCMHost: Self = Self(11);
    pub const kDLExtDev: Self = Self(12);
    pub const kDLCUDAManaged: Self = Self(13);
    pub const kDLOneAPI: Self = Self(14);
    pub const kDLWebGPU: Self = Self(15);
    pub const kDLHexagon: Self = Self(16);
    pub const kDLMAIA: Self = Self(17);
    pub const kDLTrn: Self = Self(18);
    /// Assigned on DLPack's main branch after 1.3 (not in the 1.3 header).
    pub const kDLTPU: Self = Self(19);
    /// Assigned on DLPack's main branch after 1.3 (not in the 1.3 header).
    pub const kDLTPUHost: Self = Self(20);
}

/// `DLDataTypeCode`: stored in `DLDataType::code` (a `u8`).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DLDataTypeCode(pub u8);

impl DLDataTypeCode {
    pub const kDLInt: Self = Self(0);
    pub const kDLUInt: Self = Self(1);
    pub const kDLFloat: Self = Self(2);
    pub const kDLOpaqueHandle: Self = Self(3);
    pub const kDLBfloat: Self = Self(4);
    pub const kDLComplex: Self = Self(5);
    pub const kDLBool: Self = Self(6);
    pub const kDLFloat8_e3m4: Self = Self(7);
    pub const kDLFloat8_e4m3: Self = Self(8);
    pub const kDLFloat8_e4m3b11fnuz: Self = Self(9);
    pub const kDLFloat8_e4m3fn: Self = Self(10);
    pub const kDLFloat8_e4m3fnuz: Self = Self(11);
    pub const kDLFloat8_e5m2: Self = Self(12);
    pub const kDLFloat8_e5m2fnuz: Self = Self(13);
    pub const kDLFloat8_e8m0fnu: Self = Self(14);
    pub const kDLFloat6_e2m3fn: Self = Self(15);
    pub const kDLFloat6_e3m2fn: Self = Self(16);
    pub const kDLFloat4_e2m1fn: Self = Self(17);
    /// Assigned on DLPack's main branch after 1.3 (not in the 1.3 header).
    pub const kDLBcomplex: Self = Self(18);
}

/// `DLDevice`: size 8, align 4.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: i32,
}

/// `DLDataType`: size 4, align 2.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

impl DLDevice {
    /// The host: `(kDLCPU, 0)`.
    pub const CPU: DLDevice = DLDevice {
        device_type: DLDeviceType::kDLCPU,
        device_id: 0,
    };
    /// A device of `device_type` with ordinal `device_id`.
    pub const fn new(device_type: DLDeviceType, device_id: i32) -> Self {
        DLDevice {
            device_type,
            device_id,
        }
    }
    /// CUDA device `id`: `(kDLCUDA, id)`.
    pub const fn cuda(id: i32) -> Self {
        DLDevice::new(DLDeviceType::kDLCUDA, id)
    }
    /// ROCm device `id`: `(kDLROCM, id)`.
    pub const fn rocm(id: i32) -> Self {
        DLDevice::new(DLDeviceType::kDLROCM, id)
    }
}

impl DLDataType {
    /// A dtype of `code` (a `DLDataTypeCode`), `bits` per lane and `lanes` lanes.
    pub const fn new(code: DLDataTypeCode, bits: u8, lanes: u16) -> Self {
        DLDataType {
            code: code.0,
            bits,
            lanes,
        }
    }
    /// `bool` (kDLBool, 8 bits).
    pub const BOOL: Self = Self::new(DLDataTypeCode::kDLBool, 8, 1);
    /// `int8`.
    pub const I8: Self = Self::new(DLDataTypeCode::kDLInt, 8, 1);
    /// `int16`.
    pub const I16: Self = Self::new(DLDataTypeCode::kDLInt, 16, 1);
    /// `int32`.
    pub const I32: Self = Self::new(DLDataTypeCode::kDLInt, 32, 1);
    /// `int64`.
    pub const I64: Self = Self::new(DLDataTypeCode::kDLInt, 64, 1);
    /// `uint8`.
    pub const U8: Self = Self::new(DLDataTypeCode::kDLUInt, 8, 1);
    /// `uint16`.
    pub const U16: Self = Self::new(DLDataTypeCode::kDLUInt, 16, 1);
    /// `uint32`.
    pub const U32: Self = Self::new(DLDataTypeCode::kDLUInt, 32, 1);
    /// `uint64`.
    pub const U64: Self = Self::new(DLDataTypeCode::kDLUInt, 64, 1);
    /// `float16`.
    pub const F16: Self = Self::new(DLDataTypeCode::kDLFloat, 16, 1);
    /// `float32`.
    pub const F32: Self = Self::new(DLDataTypeCode::kDLFloat, 32, 1);
    /// `float64`.
    pub const F64: Self = Self::new(DLDataTypeCode::kDLFloat, 64, 1);
    /// `bfloat16`.
    pub const BF16: Self = Self::new(DLDataTypeCode::kDLBfloat, 16, 1);
    /// `complex64` (two `float32`).
    pub const C64: Self = Self::new(DLDataTypeCode::kDLComplex, 64, 1);
    /// `complex128` (two `float64`).
    pub const C128: Self = Self::new(DLDataTypeCode::kDLComplex, 128, 1);
}

/// `DLTensor`: size 48 on LP64. `strides` are in elements, `byte_offset` in bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// `DLManagedTensor` (legacy, "deprecated after DLPack 0.8"): size 64 on LP64.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

/// `DLManagedTensorVersioned` (DLPack 1.0+): size 80 on LP64. Everything up to and including
/// `flags` keeps its offset in every future major version.
#[repr(C)]
#[derive(Debug)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}

/// `SetError` callback passed to a `DLPackManagedTensorAllocator`.
pub type DLPackSetErrorFn = Option<
    unsafe extern "C" fn(error_ctx: *mut c_void, kind: *const c_char, message: *const c_char),
>;

/// `DLPackManagedTensorAllocator` (DLPack 1.2+): 0 on success, -1 on failure.
pub type DLPackManagedTensorAllocator = Option<
    unsafe extern "C" fn(
        prototype: *mut DLTensor,
        out: *mut *mut DLManagedTensorVersioned,
        error_ctx: *mut c_void,
        set_error: DLPackSetErrorFn,
    ) -> c_int,
>;

/// `DLPackManagedTensorFromPyObjectNoSync` (DLPack 1.2+).
pub type DLPackManagedTensorFromPyObjectNoSync = Option<
    unsafe extern "C" fn(py_object: *mut c_void, out: *mut *mut DLManagedTensorVersioned) -> c_int,
>;

/// `DLPackManagedTensorToPyObjectNoSync` (DLPack 1.2+); steals `tensor`.
pub type DLPackManagedTensorToPyObjectNoSync = Option<
    unsafe extern "C" fn(
        tensor: *mut DLManagedTensorVersioned,
        out_py_object: *mut *mut c_void,
    ) -> c_int,
>;

/// `DLPackDLTensorFromPyObjectNoSync` (DLPack 1.2+); may be NULL in a table.
pub type DLPackDLTensorFromPyObjectNoSync =
    Option<unsafe extern "C" fn(py_object: *mut c_void, out: *mut DLTensor) -> c_int>;

/// `DLPackCurrentWorkStream` (DLPack 1.2+).
pub type DLPackCurrentWorkStream = Option<
    unsafe extern "C" fn(
        device_type: DLDeviceType,
        device_id: i32,
        out_current_stream: *mut *mut c_void,
    ) -> c_int,
>;

/// `DLPackExchangeAPIHeader` (DLPack 1.2+): size 16 on LP64.
#[repr(C)]
#[derive(Debug)]
pub struct DLPackExchangeAPIHeader {
    pub version: DLPackVersion,
    pub prev_api: *mut DLPackExchangeAPIHeader,
}

/// `DLPackExchangeAPI` (DLPack 1.2+): size 56 on LP64.
#[repr(C)]
#[derive(Debug)]
pub struct DLPackExchangeAPI {
    pub header: DLPackExchangeAPIHeader,
    pub managed_tensor_allocator: DLPackManagedTensorAllocator,
    pub managed_tensor_from_py_object_no_sync: DLPackManagedTensorFromPyObjectNoSync,
    pub managed_tensor_to_py_object_no_sync: DLPackManagedTensorToPyObjectNoSync,
    pub dltensor_from_py_object_no_sync: DLPackDLTensorFromPyObjectNoSync,
    pub current_work_stream: DLPackCurrentWorkStream,
}

const PTR: usize = size_of::<*mut c_void>();

// Layout assertions (DLPack spec §3). Pointer-sized fields scale with the target; the formulas
// below reduce to the LP64 numbers of the spec (48, 64, 80, 16, 56) on 64-bit targets.
const _: () = {
    assert!(size_of::<DLPackVersion>() == 8 && align_of::<DLPackVersion>() == 4);
    assert!(offset_of!(DLPackVersion, minor) == 4);
    assert!(size_of::<DLDeviceType>() == 4);
    assert!(size_of::<DLDataTypeCode>() == 1);
    assert!(size_of::<DLDevice>() == 8 && align_of::<DLDevice>() == 4);
    assert!(offset_of!(DLDevice, device_id) == 4);
    assert!(size_of::<DLDataType>() == 4 && align_of::<DLDataType>() == 2);
    assert!(offset_of!(DLDataType, bits) == 1 && offset_of!(DLDataType, lanes) == 2);
    assert!(offset_of!(DLTensor, data) == 0);
    assert!(offset_of!(DLTensor, device) == PTR);
    assert!(offset_of!(DLTensor, ndim) == PTR + 8);
    assert!(offset_of!(DLTensor, dtype) == PTR + 12);
    assert!(offset_of!(DLTensor, shape) == PTR + 16);
    assert!(offset_of!(DLTensor, strides) == 2 * PTR + 16);
    assert!(offset_of!(DLTensor, byte_offset) == 3 * PTR + 16);
    assert!(offset_of!(DLManagedTensor, dl_tensor) == 0);
    assert!(offset_of!(DLManagedTensor, manager_ctx) == size_of::<DLTensor>());
    assert!(offset_of!(DLManagedTensor, deleter) == size_of::<DLTensor>() + PTR);
    assert!(offset_of!(DLManagedTensorVersioned, version) == 0);
    assert!(offset_of!(DLManagedTensorVersioned, manager_ctx) == 8);
    assert!(offset_of!(DLManagedTensorVersioned, deleter) == 8 + PTR);
    assert!(offset_of!(DLManagedTensorVersioned, flags) == 8 + 2 * PTR);
    assert!(size_of::<Option<unsafe extern "C" fn()>>() == PTR);
    assert!(offset_of!(DLPackExchangeAPIHeader, prev_api) == 8);
    assert!(size_of::<DLPackExchangeAPIHeader>() == 8 + PTR);
    assert!(offset_of!(DLPackExchangeAPI, managed_tensor_allocator) == 8 + PTR);
    assert!(size_of::<DLPackExchangeAPI>() == 8 + 6 * PTR);
};

#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(size_of::<DLTensor>() == 48 && align_of::<DLTensor>() == 8);
    assert!(size_of::<DLManagedTensor>() == 64);
    assert!(size_of::<DLManagedTensorVersioned>() == 80);
    assert!(offset_of!(DLManagedTensorVersioned, dl_tensor) == 32);
    assert!(size_of::<DLPackExchangeAPI>() == 56);
};
