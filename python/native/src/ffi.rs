//! The C library's exports this module calls, and mirrors of the library's own `#[repr(C)]`
//! structs they take. The DLPack structs come from the library's one source (`abi.rs`, shared
//! with `#[path]`); the `dlpack_helpers_*` structs below are hand-written mirrors of the
//! header's, with their LP64 sizes asserted at compile time; `mirror_layouts` reports every
//! field offset and size, and `tests-py/test_prototypes.py` compares them with a C compiler's
//! over the header.
#![allow(non_camel_case_types, dead_code)]

use crate::abi::{
    DLDataType, DLDevice, DLManagedTensorVersioned, DLPackExchangeAPI, DLPackVersion, DLTensor,
};
use core::ffi::{c_char, c_void};

pub type status = i32;
pub const OK: status = 0;
pub const STATUS_PYTHON_ERROR_SET: status = 71;

pub const EXPORT_LEGACY: i32 = 0;
pub const EXPORT_VERSIONED: i32 = 1;
pub const PRODUCER_EXPORTS_LEGACY: u32 = 0x1;
pub const COPY_IF_NEEDED: i32 = 0;
pub const COPY_ALWAYS: i32 = 1;
pub const COPY_NEVER: i32 = 2;
pub const IMPORT_EXCHANGE_API: u32 = 0x1;
pub const IMPORT_KEEP_PYTHON_ERROR: u32 = 0x2;
/// `DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE` (issue 25: `import_tensor(legacy_writable=True)`).
pub const IMPORT_LEGACY_WRITABLE: u32 = 0x4;
/// `DLPACK_HELPERS_READ_ONLY_ORIGIN_*` (issue 25).
pub const READ_ONLY_ORIGIN_NONE: i32 = 0;
pub const READ_ONLY_ORIGIN_LEGACY: i32 = 2;
pub const IMPORTED_LEGACY: u32 = 0x1;
pub const IMPORTED_AFTER_RETRY: u32 = 0x2;
pub const IMPORTED_EXCHANGE_API: u32 = 0x4;
pub const NAME_MAX: usize = 32;
/// `DLPACK_HELPERS_MAX_NDIM`: the library's bound on `ndim`.
pub const MAX_NDIM: i32 = 1024;
/// `DLPACK_HELPERS_STREAM_*` kinds and `DLPACK_HELPERS_SYNC_*` values this package reads.
pub const STREAM_NO_SYNC: i32 = 0;
pub const STREAM_NONE: i32 = 1;
pub const STREAM_LEGACY_DEFAULT: i32 = 2;
pub const STREAM_HANDLE: i32 = 5;
pub const SYNC_STREAM_WAIT: i32 = 1;
pub const DEVICE_ALLOW_UNASSIGNED_TYPE: u32 = 0x1;
pub const CREATE_ALLOW_UNASSIGNED_DEVICE: u64 = 1 << 63;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct dlpack_helpers_import_request {
    pub max_version: DLPackVersion,
    pub stream: *mut c_void,
    pub has_dl_device: bool,
    pub dl_device: DLDevice,
    pub copy: i32,
    pub flags: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct dlpack_helpers_export_request {
    pub has_max_version: bool,
    pub max_version: DLPackVersion,
    pub has_stream: bool,
    pub stream: i64,
    pub has_dl_device: bool,
    pub dl_device: DLDevice,
    pub copy: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct dlpack_helpers_stream {
    pub kind: i32,
    pub handle: *mut c_void,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct dlpack_helpers_export_plan {
    pub kind: i32,
    pub version: DLPackVersion,
    pub device: DLDevice,
    pub copy: bool,
    pub flags: u64,
    pub sync: i32,
    pub stream: dlpack_helpers_stream,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct dlpack_helpers_info {
    pub struct_size: usize,
    pub version: *const c_char,
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    pub dlpack_abi_major: u32,
    pub dlpack_version: DLPackVersion,
    pub capabilities: u64,
    pub accepts_legacy: bool,
    pub spec_version: u32,
    pub profiles: u32,
}

/// `dlpack_helpers_validate_options` (the header's; `struct_size` first).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct dlpack_helpers_validate_options {
    pub struct_size: usize,
    pub flags: u32,
    pub max_ndim: i32,
    pub data_alignment: u64,
    pub first_element_alignment: u64,
    pub dtype: DLDataType,
}

/// `DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES`.
pub const VALIDATE_LENIENT_NULL_STRIDES: u32 = 1;

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct dlpack_helpers_layout {
    pub numel: i64,
    pub nbytes: i64,
    pub storage_elements: i64,
    pub lowest_byte: i64,
    pub end_byte: i64,
    pub first_element_alignment: u64,
    pub properties: u32,
    pub element_bits: u32,
}
pub const LAYOUT_C_CONTIGUOUS: u32 = 1;

// LP64 sizes of the header's structs (the layout test compares them with C's sizeof).
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(core::mem::size_of::<dlpack_helpers_import_request>() == 40);
    assert!(core::mem::size_of::<dlpack_helpers_export_request>() == 40);
    assert!(core::mem::size_of::<dlpack_helpers_export_plan>() == 56);
    assert!(core::mem::size_of::<dlpack_helpers_info>() == 64);
    assert!(core::mem::size_of::<dlpack_helpers_layout>() == 56);
};

extern "C" {
    pub fn dlpack_last_error_message() -> *const c_char;
    pub fn dlpack_last_error_status() -> i32;
    pub fn dlpack_status_string(status: status) -> *const c_char;
    pub fn dlpack_status_python_exception(status: status) -> *const c_char;
    pub fn dlpack_get_info(out: *mut dlpack_helpers_info) -> status;
    pub fn dlpack_is_cpu_accessible(device: DLDevice) -> bool;
    pub fn dlpack_tensor_host_access(
        tensor: *const DLManagedTensorVersioned,
        ze_context: *mut c_void,
        out_access: *mut i32,
    ) -> status;
    pub fn dlpack_tensor_delete(tensor: *mut DLManagedTensorVersioned);
    pub fn dlpack_tensor_read_only_origin(
        tensor: *const DLManagedTensorVersioned,
        out_origin: *mut i32,
    ) -> status;
    pub fn dlpack_capsule_new(
        tensor: *mut DLManagedTensorVersioned,
        out: *mut *mut c_void,
    ) -> status;
    pub fn dlpack_capsule_consume(
        capsule: *mut c_void,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> status;
    pub fn dlpack_capsule_new_view(
        tensor: *const DLTensor,
        flags: u64,
        owner: *mut c_void,
        kind: i32,
        out: *mut *mut c_void,
    ) -> status;
    /// `dlpack_capsule_new_view` for a tensor already validated (issue 26).
    pub fn dlpack_capsule_new_view_validated(
        tensor: *const DLTensor,
        flags: u64,
        owner: *mut c_void,
        kind: i32,
        out: *mut *mut c_void,
    ) -> status;
    /// The same view as a managed tensor, no capsule (issue 26: the exchange table).
    pub fn dlpack_tensor_new_view_validated(
        tensor: *const DLTensor,
        flags: u64,
        owner: *mut c_void,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> status;
    pub fn dlpack_tensor_validate(
        tensor: *const DLManagedTensorVersioned,
        options: *const dlpack_helpers_validate_options,
        out_layout: *mut dlpack_helpers_layout,
    ) -> status;
    pub fn dlpack_object_import(
        obj: *mut c_void,
        request: *const dlpack_helpers_import_request,
        out: *mut *mut DLManagedTensorVersioned,
        out_how: *mut u32,
    ) -> status;
    pub fn dlpack_object_import_with_stream(
        obj: *mut c_void,
        request: *const dlpack_helpers_import_request,
        out: *mut *mut DLManagedTensorVersioned,
        out_how: *mut u32,
        out_stream: *mut dlpack_helpers_stream,
    ) -> status;
    pub fn dlpack_stream_decode(
        device: DLDevice,
        has_stream: bool,
        stream: i64,
        flags: u32,
        out: *mut dlpack_helpers_stream,
    ) -> status;
    pub fn dlpack_stream_wait(
        device: DLDevice,
        producer_stream: *mut c_void,
        consumer_stream: *const dlpack_helpers_stream,
    ) -> status;
    pub fn dlpack_stream_synchronize(device: DLDevice, stream: *mut c_void) -> status;
    pub fn dlpack_object_query_device(obj: *mut c_void, flags: u32, out: *mut DLDevice) -> status;
    pub fn dlpack_capsule_import(
        capsule: *mut c_void,
        flags: u32,
        out: *mut *mut DLManagedTensorVersioned,
        out_how: *mut u32,
    ) -> status;
    pub fn dlpack_exchange_api_find(obj: *mut c_void, out: *mut *const DLPackExchangeAPI)
        -> status;
    pub fn dlpack_export_request_resolve(
        request: *const dlpack_helpers_export_request,
        tensor_device: DLDevice,
        producer_version: DLPackVersion,
        producer_flags: u32,
        out_plan: *mut dlpack_helpers_export_plan,
    ) -> status;
    pub fn dlpack_export_request_resolve_with_stream(
        request: *const dlpack_helpers_export_request,
        stream: *const dlpack_helpers_stream,
        tensor_device: DLDevice,
        producer_version: DLPackVersion,
        producer_flags: u32,
        out_plan: *mut dlpack_helpers_export_plan,
    ) -> status;
    pub fn dlpack_python_stream_decode(
        obj: *mut c_void,
        device: DLDevice,
        flags: u32,
        out: *mut dlpack_helpers_stream,
    ) -> status;
    pub fn dlpack_tensor_layout(
        tensor: *const DLManagedTensorVersioned,
        out: *mut dlpack_helpers_layout,
    ) -> status;
    pub fn dlpack_compact_strides(
        ndim: i32,
        shape: *const i64,
        column_major: bool,
        out: *mut i64,
    ) -> status;
    pub fn dlpack_dltensor_dim_order(
        tensor: *const DLTensor,
        out_order: *mut i32,
        capacity: i32,
    ) -> status;
    pub fn dlpack_dtype_format(
        dtype: DLDataType,
        buf: *mut c_char,
        size: usize,
        out_len: *mut usize,
    ) -> status;
    pub fn dlpack_dtype_parse(name: *const c_char, out: *mut DLDataType) -> status;
    pub fn dlpack_device_format(
        device: DLDevice,
        buf: *mut c_char,
        size: usize,
        out_len: *mut usize,
    ) -> status;
    pub fn dlpack_device_parse(name: *const c_char, out: *mut DLDevice) -> status;
    pub fn dlpack_device_check(device: DLDevice, flags: u32) -> status;
}

extern "C" {
    pub fn dlpack_tensor_create(
        data: *mut c_void,
        device: DLDevice,
        ndim: i32,
        shape: *const i64,
        strides: *const i64,
        dtype: DLDataType,
        byte_offset: u64,
        flags: u64,
        release: Option<unsafe extern "C" fn(*mut c_void)>,
        release_ctx: *mut c_void,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> status;
}

/// `(struct, field, offset)` and `(struct, "sizeof", size)` of every hand-written mirror above,
/// for `tests-py/test_prototypes.py`, which compares them with a C compiler's `offsetof` and
/// `sizeof` over the header (the compile-time asserts above pin the sizes only).
pub fn mirror_layouts() -> Vec<(&'static str, &'static str, usize)> {
    use core::mem::{offset_of, size_of};
    macro_rules! layout {
        ($out:ident, $t:ident { $($f:ident),* $(,)? }) => {
            $out.push((stringify!($t), "sizeof", size_of::<$t>()));
            $($out.push((stringify!($t), stringify!($f), offset_of!($t, $f)));)*
        };
    }
    let mut v = Vec::new();
    layout!(
        v,
        dlpack_helpers_import_request {
            max_version,
            stream,
            has_dl_device,
            dl_device,
            copy,
            flags
        }
    );
    layout!(
        v,
        dlpack_helpers_export_request {
            has_max_version,
            max_version,
            has_stream,
            stream,
            has_dl_device,
            dl_device,
            copy
        }
    );
    layout!(v, dlpack_helpers_stream { kind, handle });
    layout!(
        v,
        dlpack_helpers_export_plan {
            kind,
            version,
            device,
            copy,
            flags,
            sync,
            stream
        }
    );
    layout!(
        v,
        dlpack_helpers_info {
            struct_size,
            version,
            major,
            minor,
            patch,
            dlpack_abi_major,
            dlpack_version,
            capabilities,
            accepts_legacy,
            spec_version,
            profiles
        }
    );
    layout!(
        v,
        dlpack_helpers_layout {
            numel,
            nbytes,
            storage_elements,
            lowest_byte,
            end_byte,
            first_element_alignment,
            properties,
            element_bits
        }
    );
    v
}
