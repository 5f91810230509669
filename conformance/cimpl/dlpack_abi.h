/* The ABI declarations of the specification's manifest (spec/abi.toml), as rendered by
 * conformance/harness/cheader.py, with its C11 _Static_assert lines turned into C99 array
 * typedefs (a negative size fails the build). Regenerate: see README.md. */
#ifndef DLPC_ABI_H
#define DLPC_ABI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint32_t DLDataTypeCode;
typedef uint32_t DLDeviceType;
typedef int32_t dlpack_helpers_copy_mode;
typedef int32_t dlpack_helpers_export_kind;
typedef int32_t dlpack_helpers_host_access;
typedef int32_t dlpack_helpers_memory_class;
typedef int32_t dlpack_helpers_read_only_origin;
typedef int32_t dlpack_helpers_status;
typedef int32_t dlpack_helpers_stream_kind;
typedef int32_t dlpack_helpers_sync;
typedef int32_t dlpack_helpers_version_compat;
typedef int32_t dlpack_helpers_writability;

typedef struct DLDataType DLDataType;
typedef struct DLDevice DLDevice;
typedef struct DLManagedTensor DLManagedTensor;
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;
typedef struct DLPackExchangeAPI DLPackExchangeAPI;
typedef struct DLPackExchangeAPIHeader DLPackExchangeAPIHeader;
typedef struct DLPackVersion DLPackVersion;
typedef struct DLTensor DLTensor;
typedef struct dlpack_helpers_error dlpack_helpers_error;
typedef struct dlpack_helpers_export_plan dlpack_helpers_export_plan;
typedef struct dlpack_helpers_export_request dlpack_helpers_export_request;
typedef struct dlpack_helpers_import_request dlpack_helpers_import_request;
typedef struct dlpack_helpers_info dlpack_helpers_info;
typedef struct dlpack_helpers_layout dlpack_helpers_layout;
typedef struct dlpack_helpers_pointer_info dlpack_helpers_pointer_info;
typedef struct dlpack_helpers_stream dlpack_helpers_stream;
typedef struct dlpack_helpers_stream_backend dlpack_helpers_stream_backend;
typedef struct dlpack_helpers_stream_backend_ex dlpack_helpers_stream_backend_ex;
typedef struct dlpack_helpers_validate_options dlpack_helpers_validate_options;
typedef struct dlpack_helpers_version_choice dlpack_helpers_version_choice;

typedef int(*DLPackCurrentWorkStream)(DLDeviceType, int32_t, void**);
typedef int(*DLPackDLTensorFromPyObjectNoSync)(void*, DLTensor*);
typedef int(*DLPackManagedTensorAllocator)(DLTensor*, DLManagedTensorVersioned**, void*, void(*)(void*, const char*, const char*));
typedef int(*DLPackManagedTensorFromPyObjectNoSync)(void*, DLManagedTensorVersioned**);
typedef int(*DLPackManagedTensorToPyObjectNoSync)(DLManagedTensorVersioned*, void**);
typedef int32_t(*dlpack_helpers_stream_wait_handle_fn)(void*, int32_t, void*, dlpack_helpers_stream_kind, void*);

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
typedef char dlpc_check_1[(sizeof(struct DLDataType) == 4) ? 1 : -1];
typedef char dlpc_check_2[(offsetof(struct DLDataType, code) == 0) ? 1 : -1];
typedef char dlpc_check_3[(offsetof(struct DLDataType, bits) == 1) ? 1 : -1];
typedef char dlpc_check_4[(offsetof(struct DLDataType, lanes) == 2) ? 1 : -1];
struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;
};
typedef char dlpc_check_5[(sizeof(struct DLDevice) == 8) ? 1 : -1];
typedef char dlpc_check_6[(offsetof(struct DLDevice, device_type) == 0) ? 1 : -1];
typedef char dlpc_check_7[(offsetof(struct DLDevice, device_id) == 4) ? 1 : -1];
struct DLTensor {
  void * data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t * shape;
  int64_t * strides;
  uint64_t byte_offset;
};
typedef char dlpc_check_8[(sizeof(struct DLTensor) == 48) ? 1 : -1];
typedef char dlpc_check_9[(offsetof(struct DLTensor, data) == 0) ? 1 : -1];
typedef char dlpc_check_10[(offsetof(struct DLTensor, device) == 8) ? 1 : -1];
typedef char dlpc_check_11[(offsetof(struct DLTensor, ndim) == 16) ? 1 : -1];
typedef char dlpc_check_12[(offsetof(struct DLTensor, dtype) == 20) ? 1 : -1];
typedef char dlpc_check_13[(offsetof(struct DLTensor, shape) == 24) ? 1 : -1];
typedef char dlpc_check_14[(offsetof(struct DLTensor, strides) == 32) ? 1 : -1];
typedef char dlpc_check_15[(offsetof(struct DLTensor, byte_offset) == 40) ? 1 : -1];
struct DLManagedTensor {
  DLTensor dl_tensor;
  void * manager_ctx;
  void(*deleter)(DLManagedTensor*);
};
typedef char dlpc_check_16[(sizeof(struct DLManagedTensor) == 64) ? 1 : -1];
typedef char dlpc_check_17[(offsetof(struct DLManagedTensor, dl_tensor) == 0) ? 1 : -1];
typedef char dlpc_check_18[(offsetof(struct DLManagedTensor, manager_ctx) == 48) ? 1 : -1];
typedef char dlpc_check_19[(offsetof(struct DLManagedTensor, deleter) == 56) ? 1 : -1];
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
typedef char dlpc_check_20[(sizeof(struct DLPackVersion) == 8) ? 1 : -1];
typedef char dlpc_check_21[(offsetof(struct DLPackVersion, major) == 0) ? 1 : -1];
typedef char dlpc_check_22[(offsetof(struct DLPackVersion, minor) == 4) ? 1 : -1];
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void * manager_ctx;
  void(*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};
typedef char dlpc_check_23[(sizeof(struct DLManagedTensorVersioned) == 80) ? 1 : -1];
typedef char dlpc_check_24[(offsetof(struct DLManagedTensorVersioned, version) == 0) ? 1 : -1];
typedef char dlpc_check_25[(offsetof(struct DLManagedTensorVersioned, manager_ctx) == 8) ? 1 : -1];
typedef char dlpc_check_26[(offsetof(struct DLManagedTensorVersioned, deleter) == 16) ? 1 : -1];
typedef char dlpc_check_27[(offsetof(struct DLManagedTensorVersioned, flags) == 24) ? 1 : -1];
typedef char dlpc_check_28[(offsetof(struct DLManagedTensorVersioned, dl_tensor) == 32) ? 1 : -1];
struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  DLPackExchangeAPIHeader * prev_api;
};
typedef char dlpc_check_29[(sizeof(struct DLPackExchangeAPIHeader) == 16) ? 1 : -1];
typedef char dlpc_check_30[(offsetof(struct DLPackExchangeAPIHeader, version) == 0) ? 1 : -1];
typedef char dlpc_check_31[(offsetof(struct DLPackExchangeAPIHeader, prev_api) == 8) ? 1 : -1];
struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  DLPackManagedTensorAllocator managed_tensor_allocator;
  DLPackManagedTensorFromPyObjectNoSync managed_tensor_from_py_object_no_sync;
  DLPackManagedTensorToPyObjectNoSync managed_tensor_to_py_object_no_sync;
  DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;
  DLPackCurrentWorkStream current_work_stream;
};
typedef char dlpc_check_32[(sizeof(struct DLPackExchangeAPI) == 56) ? 1 : -1];
typedef char dlpc_check_33[(offsetof(struct DLPackExchangeAPI, header) == 0) ? 1 : -1];
typedef char dlpc_check_34[(offsetof(struct DLPackExchangeAPI, managed_tensor_allocator) == 16) ? 1 : -1];
typedef char dlpc_check_35[(offsetof(struct DLPackExchangeAPI, managed_tensor_from_py_object_no_sync) == 24) ? 1 : -1];
typedef char dlpc_check_36[(offsetof(struct DLPackExchangeAPI, managed_tensor_to_py_object_no_sync) == 32) ? 1 : -1];
typedef char dlpc_check_37[(offsetof(struct DLPackExchangeAPI, dltensor_from_py_object_no_sync) == 40) ? 1 : -1];
typedef char dlpc_check_38[(offsetof(struct DLPackExchangeAPI, current_work_stream) == 48) ? 1 : -1];
struct dlpack_helpers_error {
  size_t struct_size;
  dlpack_helpers_status status;
  uint32_t reserved;
  size_t message_length;
  char message[512];
};
typedef char dlpc_check_39[(sizeof(struct dlpack_helpers_error) == 536) ? 1 : -1];
typedef char dlpc_check_40[(offsetof(struct dlpack_helpers_error, struct_size) == 0) ? 1 : -1];
typedef char dlpc_check_41[(offsetof(struct dlpack_helpers_error, status) == 8) ? 1 : -1];
typedef char dlpc_check_42[(offsetof(struct dlpack_helpers_error, reserved) == 12) ? 1 : -1];
typedef char dlpc_check_43[(offsetof(struct dlpack_helpers_error, message_length) == 16) ? 1 : -1];
typedef char dlpc_check_44[(offsetof(struct dlpack_helpers_error, message) == 24) ? 1 : -1];
struct dlpack_helpers_stream {
  dlpack_helpers_stream_kind kind;
  void * handle;
};
typedef char dlpc_check_45[(sizeof(struct dlpack_helpers_stream) == 16) ? 1 : -1];
typedef char dlpc_check_46[(offsetof(struct dlpack_helpers_stream, kind) == 0) ? 1 : -1];
typedef char dlpc_check_47[(offsetof(struct dlpack_helpers_stream, handle) == 8) ? 1 : -1];
struct dlpack_helpers_export_plan {
  int32_t kind;
  DLPackVersion version;
  DLDevice device;
  bool copy;
  uint64_t flags;
  dlpack_helpers_sync sync;
  dlpack_helpers_stream stream;
};
typedef char dlpc_check_48[(sizeof(struct dlpack_helpers_export_plan) == 56) ? 1 : -1];
typedef char dlpc_check_49[(offsetof(struct dlpack_helpers_export_plan, kind) == 0) ? 1 : -1];
typedef char dlpc_check_50[(offsetof(struct dlpack_helpers_export_plan, version) == 4) ? 1 : -1];
typedef char dlpc_check_51[(offsetof(struct dlpack_helpers_export_plan, device) == 12) ? 1 : -1];
typedef char dlpc_check_52[(offsetof(struct dlpack_helpers_export_plan, copy) == 20) ? 1 : -1];
typedef char dlpc_check_53[(offsetof(struct dlpack_helpers_export_plan, flags) == 24) ? 1 : -1];
typedef char dlpc_check_54[(offsetof(struct dlpack_helpers_export_plan, sync) == 32) ? 1 : -1];
typedef char dlpc_check_55[(offsetof(struct dlpack_helpers_export_plan, stream) == 40) ? 1 : -1];
struct dlpack_helpers_export_request {
  bool has_max_version;
  DLPackVersion max_version;
  bool has_stream;
  int64_t stream;
  bool has_dl_device;
  DLDevice dl_device;
  dlpack_helpers_copy_mode copy;
};
typedef char dlpc_check_56[(sizeof(struct dlpack_helpers_export_request) == 40) ? 1 : -1];
typedef char dlpc_check_57[(offsetof(struct dlpack_helpers_export_request, has_max_version) == 0) ? 1 : -1];
typedef char dlpc_check_58[(offsetof(struct dlpack_helpers_export_request, max_version) == 4) ? 1 : -1];
typedef char dlpc_check_59[(offsetof(struct dlpack_helpers_export_request, has_stream) == 12) ? 1 : -1];
typedef char dlpc_check_60[(offsetof(struct dlpack_helpers_export_request, stream) == 16) ? 1 : -1];
typedef char dlpc_check_61[(offsetof(struct dlpack_helpers_export_request, has_dl_device) == 24) ? 1 : -1];
typedef char dlpc_check_62[(offsetof(struct dlpack_helpers_export_request, dl_device) == 28) ? 1 : -1];
typedef char dlpc_check_63[(offsetof(struct dlpack_helpers_export_request, copy) == 36) ? 1 : -1];
struct dlpack_helpers_import_request {
  DLPackVersion max_version;
  void * stream;
  bool has_dl_device;
  DLDevice dl_device;
  dlpack_helpers_copy_mode copy;
  uint32_t flags;
};
typedef char dlpc_check_64[(sizeof(struct dlpack_helpers_import_request) == 40) ? 1 : -1];
typedef char dlpc_check_65[(offsetof(struct dlpack_helpers_import_request, max_version) == 0) ? 1 : -1];
typedef char dlpc_check_66[(offsetof(struct dlpack_helpers_import_request, stream) == 8) ? 1 : -1];
typedef char dlpc_check_67[(offsetof(struct dlpack_helpers_import_request, has_dl_device) == 16) ? 1 : -1];
typedef char dlpc_check_68[(offsetof(struct dlpack_helpers_import_request, dl_device) == 20) ? 1 : -1];
typedef char dlpc_check_69[(offsetof(struct dlpack_helpers_import_request, copy) == 28) ? 1 : -1];
typedef char dlpc_check_70[(offsetof(struct dlpack_helpers_import_request, flags) == 32) ? 1 : -1];
struct dlpack_helpers_info {
  size_t struct_size;
  const char * version;
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
  uint32_t dlpack_abi_major;
  DLPackVersion dlpack_version;
  uint64_t capabilities;
  bool accepts_legacy;
  uint32_t spec_version;
  uint32_t profiles;
};
typedef char dlpc_check_71[(sizeof(struct dlpack_helpers_info) == 64) ? 1 : -1];
typedef char dlpc_check_72[(offsetof(struct dlpack_helpers_info, struct_size) == 0) ? 1 : -1];
typedef char dlpc_check_73[(offsetof(struct dlpack_helpers_info, version) == 8) ? 1 : -1];
typedef char dlpc_check_74[(offsetof(struct dlpack_helpers_info, major) == 16) ? 1 : -1];
typedef char dlpc_check_75[(offsetof(struct dlpack_helpers_info, minor) == 20) ? 1 : -1];
typedef char dlpc_check_76[(offsetof(struct dlpack_helpers_info, patch) == 24) ? 1 : -1];
typedef char dlpc_check_77[(offsetof(struct dlpack_helpers_info, dlpack_abi_major) == 28) ? 1 : -1];
typedef char dlpc_check_78[(offsetof(struct dlpack_helpers_info, dlpack_version) == 32) ? 1 : -1];
typedef char dlpc_check_79[(offsetof(struct dlpack_helpers_info, capabilities) == 40) ? 1 : -1];
typedef char dlpc_check_80[(offsetof(struct dlpack_helpers_info, accepts_legacy) == 48) ? 1 : -1];
typedef char dlpc_check_81[(offsetof(struct dlpack_helpers_info, spec_version) == 52) ? 1 : -1];
typedef char dlpc_check_82[(offsetof(struct dlpack_helpers_info, profiles) == 56) ? 1 : -1];
struct dlpack_helpers_layout {
  int64_t numel;
  int64_t nbytes;
  int64_t storage_elements;
  int64_t lowest_byte;
  int64_t end_byte;
  uint64_t first_element_alignment;
  uint32_t properties;
  uint32_t element_bits;
};
typedef char dlpc_check_83[(sizeof(struct dlpack_helpers_layout) == 56) ? 1 : -1];
typedef char dlpc_check_84[(offsetof(struct dlpack_helpers_layout, numel) == 0) ? 1 : -1];
typedef char dlpc_check_85[(offsetof(struct dlpack_helpers_layout, nbytes) == 8) ? 1 : -1];
typedef char dlpc_check_86[(offsetof(struct dlpack_helpers_layout, storage_elements) == 16) ? 1 : -1];
typedef char dlpc_check_87[(offsetof(struct dlpack_helpers_layout, lowest_byte) == 24) ? 1 : -1];
typedef char dlpc_check_88[(offsetof(struct dlpack_helpers_layout, end_byte) == 32) ? 1 : -1];
typedef char dlpc_check_89[(offsetof(struct dlpack_helpers_layout, first_element_alignment) == 40) ? 1 : -1];
typedef char dlpc_check_90[(offsetof(struct dlpack_helpers_layout, properties) == 48) ? 1 : -1];
typedef char dlpc_check_91[(offsetof(struct dlpack_helpers_layout, element_bits) == 52) ? 1 : -1];
struct dlpack_helpers_pointer_info {
  size_t struct_size;
  dlpack_helpers_memory_class memory_class;
  dlpack_helpers_host_access host_access;
  DLDevice device;
  void * native_device;
  uint32_t backends_asked;
  uint32_t backends_unreachable;
  uint32_t answered_by;
  uint64_t device_id_known;
};
typedef char dlpc_check_92[(sizeof(struct dlpack_helpers_pointer_info) == 56) ? 1 : -1];
typedef char dlpc_check_93[(offsetof(struct dlpack_helpers_pointer_info, struct_size) == 0) ? 1 : -1];
typedef char dlpc_check_94[(offsetof(struct dlpack_helpers_pointer_info, memory_class) == 8) ? 1 : -1];
typedef char dlpc_check_95[(offsetof(struct dlpack_helpers_pointer_info, host_access) == 12) ? 1 : -1];
typedef char dlpc_check_96[(offsetof(struct dlpack_helpers_pointer_info, device) == 16) ? 1 : -1];
typedef char dlpc_check_97[(offsetof(struct dlpack_helpers_pointer_info, native_device) == 24) ? 1 : -1];
typedef char dlpc_check_98[(offsetof(struct dlpack_helpers_pointer_info, backends_asked) == 32) ? 1 : -1];
typedef char dlpc_check_99[(offsetof(struct dlpack_helpers_pointer_info, backends_unreachable) == 36) ? 1 : -1];
typedef char dlpc_check_100[(offsetof(struct dlpack_helpers_pointer_info, answered_by) == 40) ? 1 : -1];
typedef char dlpc_check_101[(offsetof(struct dlpack_helpers_pointer_info, device_id_known) == 48) ? 1 : -1];
struct dlpack_helpers_stream_backend {
  void * ctx;
  int32_t(*wait)(void*, int32_t, void*, void*);
  int32_t(*synchronize)(void*, int32_t, void*);
};
typedef char dlpc_check_102[(sizeof(struct dlpack_helpers_stream_backend) == 24) ? 1 : -1];
typedef char dlpc_check_103[(offsetof(struct dlpack_helpers_stream_backend, ctx) == 0) ? 1 : -1];
typedef char dlpc_check_104[(offsetof(struct dlpack_helpers_stream_backend, wait) == 8) ? 1 : -1];
typedef char dlpc_check_105[(offsetof(struct dlpack_helpers_stream_backend, synchronize) == 16) ? 1 : -1];
struct dlpack_helpers_stream_backend_ex {
  size_t struct_size;
  void * ctx;
  int32_t(*wait)(void*, int32_t, void*, void*);
  int32_t(*synchronize)(void*, int32_t, void*);
  dlpack_helpers_stream_wait_handle_fn wait_handle;
};
typedef char dlpc_check_106[(sizeof(struct dlpack_helpers_stream_backend_ex) == 40) ? 1 : -1];
typedef char dlpc_check_107[(offsetof(struct dlpack_helpers_stream_backend_ex, struct_size) == 0) ? 1 : -1];
typedef char dlpc_check_108[(offsetof(struct dlpack_helpers_stream_backend_ex, ctx) == 8) ? 1 : -1];
typedef char dlpc_check_109[(offsetof(struct dlpack_helpers_stream_backend_ex, wait) == 16) ? 1 : -1];
typedef char dlpc_check_110[(offsetof(struct dlpack_helpers_stream_backend_ex, synchronize) == 24) ? 1 : -1];
typedef char dlpc_check_111[(offsetof(struct dlpack_helpers_stream_backend_ex, wait_handle) == 32) ? 1 : -1];
struct dlpack_helpers_validate_options {
  size_t struct_size;
  uint32_t flags;
  int32_t max_ndim;
  uint64_t data_alignment;
  uint64_t first_element_alignment;
  DLDataType dtype;
};
typedef char dlpc_check_112[(sizeof(struct dlpack_helpers_validate_options) == 40) ? 1 : -1];
typedef char dlpc_check_113[(offsetof(struct dlpack_helpers_validate_options, struct_size) == 0) ? 1 : -1];
typedef char dlpc_check_114[(offsetof(struct dlpack_helpers_validate_options, flags) == 8) ? 1 : -1];
typedef char dlpc_check_115[(offsetof(struct dlpack_helpers_validate_options, max_ndim) == 12) ? 1 : -1];
typedef char dlpc_check_116[(offsetof(struct dlpack_helpers_validate_options, data_alignment) == 16) ? 1 : -1];
typedef char dlpc_check_117[(offsetof(struct dlpack_helpers_validate_options, first_element_alignment) == 24) ? 1 : -1];
typedef char dlpc_check_118[(offsetof(struct dlpack_helpers_validate_options, dtype) == 32) ? 1 : -1];
struct dlpack_helpers_version_choice {
  dlpack_helpers_export_kind kind;
  DLPackVersion version;
};
typedef char dlpc_check_119[(sizeof(struct dlpack_helpers_version_choice) == 12) ? 1 : -1];
typedef char dlpc_check_120[(offsetof(struct dlpack_helpers_version_choice, kind) == 0) ? 1 : -1];
typedef char dlpc_check_121[(offsetof(struct dlpack_helpers_version_choice, version) == 4) ? 1 : -1];

#define DLPACK_FLAG_BITMASK_IS_COPIED ((uint64_t)UINT64_C(2))
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED ((uint64_t)UINT64_C(4))
#define DLPACK_FLAG_BITMASK_READ_ONLY ((uint64_t)UINT64_C(1))
#define DLPACK_HELPERS_ALLOC_ALIGNMENT ((size_t)64u)
#define DLPACK_HELPERS_BACKEND_CUDA ((uint32_t)1)
#define DLPACK_HELPERS_BACKEND_HIP ((uint32_t)2)
#define DLPACK_HELPERS_BACKEND_LEVEL_ZERO ((uint32_t)4)
#define DLPACK_HELPERS_CAP_CUDA ((uint64_t)UINT64_C(1))
#define DLPACK_HELPERS_CAP_LEVEL_ZERO ((uint64_t)UINT64_C(8))
#define DLPACK_HELPERS_CAP_POINTER_CUDA ((uint64_t)UINT64_C(16))
#define DLPACK_HELPERS_CAP_POINTER_LEVEL_ZERO ((uint64_t)UINT64_C(64))
#define DLPACK_HELPERS_CAP_POINTER_ROCM ((uint64_t)UINT64_C(32))
#define DLPACK_HELPERS_CAP_PYTHON ((uint64_t)UINT64_C(4))
#define DLPACK_HELPERS_CAP_ROCM ((uint64_t)UINT64_C(2))
#define DLPACK_HELPERS_COPY_ALWAYS ((dlpack_helpers_copy_mode)1)
#define DLPACK_HELPERS_COPY_IF_NEEDED ((dlpack_helpers_copy_mode)0)
#define DLPACK_HELPERS_COPY_NEVER ((dlpack_helpers_copy_mode)2)
#define DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE ((uint64_t)UINT64_C(9223372036854775808))
#define DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE ((uint32_t)1)
#define DLPACK_HELPERS_DLPACK_MAJOR_VERSION ((uint32_t)1)
#define DLPACK_HELPERS_DLPACK_MINOR_VERSION ((uint32_t)3)
#define DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY ((size_t)512u)
#define DLPACK_HELPERS_EXPORT_LEGACY ((dlpack_helpers_export_kind)0)
#define DLPACK_HELPERS_EXPORT_VERSIONED ((dlpack_helpers_export_kind)1)
#define DLPACK_HELPERS_HOST_ACCESS_ALWAYS ((dlpack_helpers_host_access)1)
#define DLPACK_HELPERS_HOST_ACCESS_DEPENDS ((dlpack_helpers_host_access)2)
#define DLPACK_HELPERS_HOST_ACCESS_NEVER ((dlpack_helpers_host_access)0)
#define DLPACK_HELPERS_HOST_ACCESS_UNKNOWN ((dlpack_helpers_host_access)3)
#define DLPACK_HELPERS_IMPORTED_AFTER_RETRY ((uint32_t)2)
#define DLPACK_HELPERS_IMPORTED_EXCHANGE_API ((uint32_t)4)
#define DLPACK_HELPERS_IMPORTED_LEGACY ((uint32_t)1)
#define DLPACK_HELPERS_IMPORT_EXCHANGE_API ((uint32_t)1)
#define DLPACK_HELPERS_IMPORT_KEEP_PYTHON_ERROR ((uint32_t)2)
#define DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE ((uint32_t)4)
#define DLPACK_HELPERS_LAYOUT_BROADCAST ((uint32_t)8)
#define DLPACK_HELPERS_LAYOUT_COMPACT ((uint32_t)4)
#define DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS ((uint32_t)1)
#define DLPACK_HELPERS_LAYOUT_EMPTY ((uint32_t)64)
#define DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS ((uint32_t)2)
#define DLPACK_HELPERS_LAYOUT_NEGATIVE_STRIDES ((uint32_t)16)
#define DLPACK_HELPERS_LAYOUT_PACKED_SUB_BYTE ((uint32_t)128)
#define DLPACK_HELPERS_LAYOUT_STRIDES_IMPLIED ((uint32_t)32)
#define DLPACK_HELPERS_LEVEL_ZERO_MAX_DEVICES ((size_t)4096u)
#define DLPACK_HELPERS_MAX_NDIM ((int32_t)1024)
#define DLPACK_HELPERS_MEMORY_DEVICE ((dlpack_helpers_memory_class)2)
#define DLPACK_HELPERS_MEMORY_HOST ((dlpack_helpers_memory_class)1)
#define DLPACK_HELPERS_MEMORY_MANAGED ((dlpack_helpers_memory_class)4)
#define DLPACK_HELPERS_MEMORY_PINNED_HOST ((dlpack_helpers_memory_class)3)
#define DLPACK_HELPERS_MEMORY_UNKNOWN ((dlpack_helpers_memory_class)0)
#define DLPACK_HELPERS_NAME_MAX ((size_t)32u)
#define DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY ((uint32_t)1)
#define DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM ((uint32_t)4)
#define DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD ((uint32_t)2)
#define DLPACK_HELPERS_PROFILE_CORE ((uint32_t)1)
#define DLPACK_HELPERS_PROFILE_EXCHANGE ((uint32_t)8)
#define DLPACK_HELPERS_PROFILE_PYTHON ((uint32_t)4)
#define DLPACK_HELPERS_PROFILE_STREAMS ((uint32_t)2)
#define DLPACK_HELPERS_PROVIDES_DLPACK_ABI ((int)1)
#define DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY ((dlpack_helpers_read_only_origin)2)
#define DLPACK_HELPERS_READ_ONLY_ORIGIN_NONE ((dlpack_helpers_read_only_origin)0)
#define DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED ((dlpack_helpers_read_only_origin)1)
#define DLPACK_HELPERS_SPEC_VERSION ((uint32_t)202612)
#define DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE ((dlpack_helpers_status)43)
#define DLPACK_HELPERS_STATUS_BAD_PRODUCER_RESULT ((dlpack_helpers_status)68)
#define DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL ((dlpack_helpers_status)34)
#define DLPACK_HELPERS_STATUS_CAPSULE_CONSUMED ((dlpack_helpers_status)63)
#define DLPACK_HELPERS_STATUS_CAPSULE_NAME ((dlpack_helpers_status)62)
#define DLPACK_HELPERS_STATUS_COPIED_REJECTED ((dlpack_helpers_status)38)
#define DLPACK_HELPERS_STATUS_COPY_FORBIDDEN ((dlpack_helpers_status)41)
#define DLPACK_HELPERS_STATUS_DEVICE_ERROR ((dlpack_helpers_status)44)
#define DLPACK_HELPERS_STATUS_DEVICE_ID_UNKNOWN ((dlpack_helpers_status)49)
#define DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN ((dlpack_helpers_status)45)
#define DLPACK_HELPERS_STATUS_DTYPE_MISMATCH ((dlpack_helpers_status)27)
#define DLPACK_HELPERS_STATUS_EXCHANGE_API_INVALID ((dlpack_helpers_status)69)
#define DLPACK_HELPERS_STATUS_INVALID_ARGUMENT ((dlpack_helpers_status)2)
#define DLPACK_HELPERS_STATUS_INVALID_DEVICE ((dlpack_helpers_status)48)
#define DLPACK_HELPERS_STATUS_INVALID_DTYPE ((dlpack_helpers_status)26)
#define DLPACK_HELPERS_STATUS_INVALID_FLAGS ((dlpack_helpers_status)28)
#define DLPACK_HELPERS_STATUS_INVALID_NDIM ((dlpack_helpers_status)20)
#define DLPACK_HELPERS_STATUS_INVALID_SHAPE ((dlpack_helpers_status)23)
#define DLPACK_HELPERS_STATUS_INVALID_STREAM ((dlpack_helpers_status)40)
#define DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE ((dlpack_helpers_status)46)
#define DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD ((dlpack_helpers_status)12)
#define DLPACK_HELPERS_STATUS_MISALIGNED ((dlpack_helpers_status)31)
#define DLPACK_HELPERS_STATUS_NOT_A_CAPSULE ((dlpack_helpers_status)61)
#define DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS ((dlpack_helpers_status)29)
#define DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE ((dlpack_helpers_status)30)
#define DLPACK_HELPERS_STATUS_NO_COMMON_VERSION ((dlpack_helpers_status)11)
#define DLPACK_HELPERS_STATUS_NO_DLPACK_METHOD ((dlpack_helpers_status)64)
#define DLPACK_HELPERS_STATUS_NO_EXCHANGE_API ((dlpack_helpers_status)70)
#define DLPACK_HELPERS_STATUS_NULL_DATA ((dlpack_helpers_status)25)
#define DLPACK_HELPERS_STATUS_NULL_POINTER ((dlpack_helpers_status)1)
#define DLPACK_HELPERS_STATUS_NULL_SHAPE ((dlpack_helpers_status)21)
#define DLPACK_HELPERS_STATUS_NULL_STRIDES ((dlpack_helpers_status)22)
#define DLPACK_HELPERS_STATUS_NULL_WORK_STREAM ((dlpack_helpers_status)47)
#define DLPACK_HELPERS_STATUS_OK ((dlpack_helpers_status)0)
#define DLPACK_HELPERS_STATUS_OPAQUE_HANDLE ((dlpack_helpers_status)33)
#define DLPACK_HELPERS_STATUS_OUT_OF_MEMORY ((dlpack_helpers_status)37)
#define DLPACK_HELPERS_STATUS_OVERFLOW ((dlpack_helpers_status)24)
#define DLPACK_HELPERS_STATUS_PANIC ((dlpack_helpers_status)3)
#define DLPACK_HELPERS_STATUS_PRODUCER_BUFFER_ERROR ((dlpack_helpers_status)65)
#define DLPACK_HELPERS_STATUS_PRODUCER_ERROR ((dlpack_helpers_status)67)
#define DLPACK_HELPERS_STATUS_PRODUCER_TYPE_ERROR ((dlpack_helpers_status)66)
#define DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET ((dlpack_helpers_status)71)
#define DLPACK_HELPERS_STATUS_PYTHON_UNAVAILABLE ((dlpack_helpers_status)60)
#define DLPACK_HELPERS_STATUS_READ_ONLY ((dlpack_helpers_status)32)
#define DLPACK_HELPERS_STATUS_UNKNOWN_NAME ((dlpack_helpers_status)35)
#define DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE ((dlpack_helpers_status)42)
#define DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES ((dlpack_helpers_status)36)
#define DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION ((dlpack_helpers_status)10)
#define DLPACK_HELPERS_STREAM_DEFAULT ((dlpack_helpers_stream_kind)4)
#define DLPACK_HELPERS_STREAM_HANDLE ((dlpack_helpers_stream_kind)5)
#define DLPACK_HELPERS_STREAM_LEGACY_DEFAULT ((dlpack_helpers_stream_kind)2)
#define DLPACK_HELPERS_STREAM_NONE ((dlpack_helpers_stream_kind)1)
#define DLPACK_HELPERS_STREAM_NO_SYNC ((dlpack_helpers_stream_kind)0)
#define DLPACK_HELPERS_STREAM_PER_THREAD_DEFAULT ((dlpack_helpers_stream_kind)3)
#define DLPACK_HELPERS_STREAM_SYCL_QUEUE ((dlpack_helpers_stream_kind)6)
#define DLPACK_HELPERS_STREAM_ZE_COMMAND_LIST ((dlpack_helpers_stream_kind)8)
#define DLPACK_HELPERS_STREAM_ZE_COMMAND_QUEUE ((dlpack_helpers_stream_kind)7)
#define DLPACK_HELPERS_SYNC_HOST ((dlpack_helpers_sync)2)
#define DLPACK_HELPERS_SYNC_NONE ((dlpack_helpers_sync)0)
#define DLPACK_HELPERS_SYNC_STREAM_WAIT ((dlpack_helpers_sync)1)
#define DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY ((uint32_t)1)
#define DLPACK_HELPERS_VALIDATE_LEGACY_WRITABLE ((uint32_t)2048)
#define DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES ((uint32_t)1)
#define DLPACK_HELPERS_VALIDATE_REJECT_BROADCAST ((uint32_t)512)
#define DLPACK_HELPERS_VALIDATE_REJECT_COPIED ((uint32_t)4096)
#define DLPACK_HELPERS_VALIDATE_REJECT_NEGATIVE_STRIDES ((uint32_t)1024)
#define DLPACK_HELPERS_VALIDATE_REJECT_VECTOR ((uint32_t)128)
#define DLPACK_HELPERS_VALIDATE_REQUIRE_COMPACT ((uint32_t)8)
#define DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE ((uint32_t)16)
#define DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS ((uint32_t)2)
#define DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE ((uint32_t)64)
#define DLPACK_HELPERS_VALIDATE_REQUIRE_ELEMENT_ALIGNED ((uint32_t)256)
#define DLPACK_HELPERS_VALIDATE_REQUIRE_F_CONTIGUOUS ((uint32_t)4)
#define DLPACK_HELPERS_VALIDATE_REQUIRE_WRITABLE ((uint32_t)32)
#define DLPACK_HELPERS_VALIDATE_RESOLVE_HOST_ACCESS ((uint32_t)65536)
#define DLPACK_HELPERS_VERSION_EXACT ((dlpack_helpers_version_compat)0)
#define DLPACK_HELPERS_VERSION_NEWER_MINOR ((dlpack_helpers_version_compat)2)
#define DLPACK_HELPERS_VERSION_OLDER_MINOR ((dlpack_helpers_version_compat)1)
#define DLPACK_HELPERS_WORK_STREAM_NULL_IS_DEFAULT ((uint32_t)1)
#define DLPACK_HELPERS_WRITABILITY_READ_ONLY ((dlpack_helpers_writability)0)
#define DLPACK_HELPERS_WRITABILITY_UNKNOWN ((dlpack_helpers_writability)2)
#define DLPACK_HELPERS_WRITABILITY_WRITABLE ((dlpack_helpers_writability)1)
#define DLPACK_MAJOR_VERSION ((uint32_t)1)
#define DLPACK_MINOR_VERSION ((uint32_t)3)
#define kDLBfloat ((DLDataTypeCode)4)
#define kDLBool ((DLDataTypeCode)6)
#define kDLCPU ((DLDeviceType)1)
#define kDLCUDA ((DLDeviceType)2)
#define kDLCUDAHost ((DLDeviceType)3)
#define kDLCUDAManaged ((DLDeviceType)13)
#define kDLComplex ((DLDataTypeCode)5)
#define kDLExtDev ((DLDeviceType)12)
#define kDLFloat ((DLDataTypeCode)2)
#define kDLFloat4_e2m1fn ((DLDataTypeCode)17)
#define kDLFloat6_e2m3fn ((DLDataTypeCode)15)
#define kDLFloat6_e3m2fn ((DLDataTypeCode)16)
#define kDLFloat8_e3m4 ((DLDataTypeCode)7)
#define kDLFloat8_e4m3 ((DLDataTypeCode)8)
#define kDLFloat8_e4m3b11fnuz ((DLDataTypeCode)9)
#define kDLFloat8_e4m3fn ((DLDataTypeCode)10)
#define kDLFloat8_e4m3fnuz ((DLDataTypeCode)11)
#define kDLFloat8_e5m2 ((DLDataTypeCode)12)
#define kDLFloat8_e5m2fnuz ((DLDataTypeCode)13)
#define kDLFloat8_e8m0fnu ((DLDataTypeCode)14)
#define kDLHexagon ((DLDeviceType)16)
#define kDLInt ((DLDataTypeCode)0)
#define kDLMAIA ((DLDeviceType)17)
#define kDLMetal ((DLDeviceType)8)
#define kDLOneAPI ((DLDeviceType)14)
#define kDLOpaqueHandle ((DLDataTypeCode)3)
#define kDLOpenCL ((DLDeviceType)4)
#define kDLROCM ((DLDeviceType)10)
#define kDLROCMHost ((DLDeviceType)11)
#define kDLTrn ((DLDeviceType)18)
#define kDLUInt ((DLDataTypeCode)1)
#define kDLVPI ((DLDeviceType)9)
#define kDLVulkan ((DLDeviceType)7)
#define kDLWebGPU ((DLDeviceType)15)
#define DLPACK_HELPERS_CAPSULE_EXCHANGE_API "dlpack_exchange_api"
#define DLPACK_HELPERS_CAPSULE_LEGACY "dltensor"
#define DLPACK_HELPERS_CAPSULE_LEGACY_USED "used_dltensor"
#define DLPACK_HELPERS_CAPSULE_VERSIONED "dltensor_versioned"
#define DLPACK_HELPERS_CAPSULE_VERSIONED_USED "used_dltensor_versioned"

dlpack_helpers_status dlpack_capsule_consume(void *capsule, DLManagedTensorVersioned **out_tensor);
void dlpack_capsule_destructor(void *capsule);
dlpack_helpers_status dlpack_capsule_import(void *capsule, uint32_t flags, DLManagedTensorVersioned **out_tensor, uint32_t *out_how);
dlpack_helpers_status dlpack_capsule_new(DLManagedTensorVersioned *tensor, void **out_capsule);
dlpack_helpers_status dlpack_capsule_new_view(const DLTensor *tensor, uint64_t flags, void *owner, dlpack_helpers_export_kind kind, void **out_capsule);
dlpack_helpers_status dlpack_capsule_new_view_validated(const DLTensor *tensor, uint64_t flags, void *owner, dlpack_helpers_export_kind kind, void **out_capsule);
dlpack_helpers_status dlpack_compact_strides(int32_t ndim, const int64_t *shape, bool column_major, int64_t *out_strides);
dlpack_helpers_status dlpack_device_check(DLDevice device, uint32_t flags);
dlpack_helpers_status dlpack_device_format(DLDevice device, char *buf, size_t buf_size, size_t *out_len);
dlpack_helpers_host_access dlpack_device_host_access(DLDevice device);
bool dlpack_device_is_pointer_addressed(DLDevice device);
dlpack_helpers_status dlpack_device_parse(const char *name, DLDevice *out_device);
dlpack_helpers_status dlpack_device_parse_with_error(const char *name, DLDevice *out_device, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_dltensor_data_address(const DLTensor *tensor, void **out_address);
dlpack_helpers_status dlpack_dltensor_data_location(const DLTensor *tensor, void **out_data, uint64_t *out_byte_offset);
dlpack_helpers_status dlpack_dltensor_fits_allocation(const DLTensor *tensor, uint64_t flags, const void *base, uint64_t size_in_bytes, bool *out_fits);
dlpack_helpers_status dlpack_dltensor_host_access(const DLTensor *tensor, void *ze_context, dlpack_helpers_host_access *out_access);
dlpack_helpers_status dlpack_dltensor_layout(const DLTensor *tensor, uint64_t flags, dlpack_helpers_layout *out_layout);
dlpack_helpers_status dlpack_dltensor_validate(const DLTensor *tensor, DLPackVersion version, uint64_t flags, const dlpack_helpers_validate_options *options, dlpack_helpers_layout *out_layout);
dlpack_helpers_status dlpack_dltensor_validate_with_error(const DLTensor *tensor, DLPackVersion version, uint64_t flags, const dlpack_helpers_validate_options *options, dlpack_helpers_layout *out_layout, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_dtype_format(DLDataType dtype, char *buf, size_t buf_size, size_t *out_len);
dlpack_helpers_status dlpack_dtype_parse(const char *name, DLDataType *out_dtype);
dlpack_helpers_status dlpack_dtype_parse_with_error(const char *name, DLDataType *out_dtype, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_exchange_api_current_work_stream(const DLPackExchangeAPI *api, DLDevice device, uint32_t flags, dlpack_helpers_stream *out_stream);
dlpack_helpers_status dlpack_exchange_api_find(void *obj, const DLPackExchangeAPI **out_api);
dlpack_helpers_status dlpack_export_request_resolve(const dlpack_helpers_export_request *request, DLDevice tensor_device, DLPackVersion producer_version, uint32_t producer_flags, dlpack_helpers_export_plan *out_plan);
dlpack_helpers_status dlpack_export_request_resolve_with_stream(const dlpack_helpers_export_request *request, const dlpack_helpers_stream *stream, DLDevice tensor_device, DLPackVersion producer_version, uint32_t producer_flags, dlpack_helpers_export_plan *out_plan);
dlpack_helpers_status dlpack_get_device(const DLManagedTensorVersioned *tensor, DLDevice *out_device);
dlpack_helpers_status dlpack_get_info(dlpack_helpers_info *out_info);
bool dlpack_is_cpu_accessible(DLDevice device);
const char * dlpack_last_error_message(void);
dlpack_helpers_status dlpack_legacy_capsule_consume(void *capsule, DLManagedTensor **out_tensor);
dlpack_helpers_status dlpack_legacy_capsule_new(DLManagedTensor *tensor, void **out_capsule);
dlpack_helpers_status dlpack_legacy_get_device(const DLManagedTensor *tensor, DLDevice *out_device);
void dlpack_legacy_tensor_delete(DLManagedTensor *tensor);
dlpack_helpers_status dlpack_legacy_tensor_host_access(const DLManagedTensor *tensor, void *ze_context, dlpack_helpers_host_access *out_access);
dlpack_helpers_status dlpack_legacy_tensor_validate(const DLManagedTensor *tensor, const dlpack_helpers_validate_options *options, dlpack_helpers_layout *out_layout);
dlpack_helpers_status dlpack_legacy_tensor_validate_with_error(const DLManagedTensor *tensor, const dlpack_helpers_validate_options *options, dlpack_helpers_layout *out_layout, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_legacy_tensor_wrap(DLManagedTensor *legacy, uint64_t flags, uint32_t options, DLManagedTensorVersioned **out_tensor);
dlpack_helpers_status dlpack_legacy_tensor_writability(const DLManagedTensor *tensor, dlpack_helpers_writability *out_writability);
dlpack_helpers_status dlpack_legacy_to_versioned(DLManagedTensor *legacy, uint64_t flags, DLManagedTensorVersioned **out_tensor);
dlpack_helpers_status dlpack_legacy_to_versioned_with_error(DLManagedTensor *legacy, uint64_t flags, DLManagedTensorVersioned **out_tensor, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_level_zero_context_set(void *ze_context);
dlpack_helpers_status dlpack_level_zero_context_set_devices(void *ze_context, void *const *devices, size_t num_devices);
dlpack_helpers_status dlpack_object_get_device(void *obj, DLDevice *out_device);
dlpack_helpers_status dlpack_object_import(void *obj, const dlpack_helpers_import_request *request, DLManagedTensorVersioned **out_tensor, uint32_t *out_how);
dlpack_helpers_status dlpack_object_import_with_stream(void *obj, const dlpack_helpers_import_request *request, DLManagedTensorVersioned **out_tensor, uint32_t *out_how, dlpack_helpers_stream *out_stream);
dlpack_helpers_status dlpack_object_query_device(void *obj, uint32_t flags, DLDevice *out_device);
dlpack_helpers_status dlpack_pointer_classify(const void *ptr, void *ze_context, dlpack_helpers_pointer_info *out_info);
dlpack_helpers_status dlpack_pointer_get_device(const void *ptr, DLDevice *out_device);
dlpack_helpers_status dlpack_python_stream_decode(void *obj, DLDevice device, uint32_t flags, dlpack_helpers_stream *out_stream);
const char * dlpack_status_python_exception(dlpack_helpers_status status);
const char * dlpack_status_string(dlpack_helpers_status status);
dlpack_helpers_status dlpack_stream_backend_check(DLDeviceType device_type);
dlpack_helpers_status dlpack_stream_backend_register(DLDeviceType device_type, const dlpack_helpers_stream_backend *backend);
dlpack_helpers_status dlpack_stream_backend_register_ex(DLDeviceType device_type, const dlpack_helpers_stream_backend_ex *backend);
dlpack_helpers_status dlpack_stream_decode(DLDevice device, bool has_stream, int64_t stream, uint32_t flags, dlpack_helpers_stream *out_stream);
dlpack_helpers_status dlpack_stream_decode_handle(DLDevice device, dlpack_helpers_stream_kind kind, void *handle, dlpack_helpers_stream *out_stream);
dlpack_helpers_status dlpack_stream_encode(DLDevice device, void *native_stream, bool *out_has_stream, int64_t *out_stream);
dlpack_helpers_status dlpack_stream_encode_decoded(DLDevice device, const dlpack_helpers_stream *stream, bool *out_has_stream, int64_t *out_stream);
dlpack_helpers_status dlpack_stream_synchronize(DLDevice device, void *stream);
dlpack_helpers_status dlpack_stream_wait(DLDevice device, void *producer_stream, const dlpack_helpers_stream *consumer_stream);
dlpack_helpers_status dlpack_tensor_alloc(DLDevice device, int32_t ndim, const int64_t *shape, const int64_t *strides, DLDataType dtype, uint64_t flags, DLManagedTensorVersioned **out_tensor);
dlpack_helpers_status dlpack_tensor_alloc_with_error(DLDevice device, int32_t ndim, const int64_t *shape, const int64_t *strides, DLDataType dtype, uint64_t flags, DLManagedTensorVersioned **out_tensor, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_tensor_check_version(const DLManagedTensorVersioned *tensor, dlpack_helpers_version_compat *out_compat);
dlpack_helpers_status dlpack_tensor_check_version_or_delete(DLManagedTensorVersioned *tensor, dlpack_helpers_version_compat *out_compat);
dlpack_helpers_status dlpack_tensor_check_version_or_delete_with_error(DLManagedTensorVersioned *tensor, dlpack_helpers_version_compat *out_compat, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_tensor_check_version_with_error(const DLManagedTensorVersioned *tensor, dlpack_helpers_version_compat *out_compat, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_tensor_create(void *data, DLDevice device, int32_t ndim, const int64_t *shape, const int64_t *strides, DLDataType dtype, uint64_t byte_offset, uint64_t flags, void(*release)(void*), void *release_ctx, DLManagedTensorVersioned **out_tensor);
dlpack_helpers_status dlpack_tensor_create_with_error(void *data, DLDevice device, int32_t ndim, const int64_t *shape, const int64_t *strides, DLDataType dtype, uint64_t byte_offset, uint64_t flags, void(*release)(void*), void *release_ctx, DLManagedTensorVersioned **out_tensor, dlpack_helpers_error *err);
void dlpack_tensor_delete(DLManagedTensorVersioned *tensor);
dlpack_helpers_status dlpack_tensor_delete_after_stream(DLManagedTensorVersioned *tensor, DLDevice device, void *stream);
dlpack_helpers_status dlpack_tensor_get_flags(const DLManagedTensorVersioned *tensor, uint64_t *out_flags);
dlpack_helpers_status dlpack_tensor_host_access(const DLManagedTensorVersioned *tensor, void *ze_context, dlpack_helpers_host_access *out_access);
dlpack_helpers_status dlpack_tensor_layout(const DLManagedTensorVersioned *tensor, dlpack_helpers_layout *out_layout);
dlpack_helpers_status dlpack_tensor_new_view_validated(const DLTensor *tensor, uint64_t flags, void *owner, DLManagedTensorVersioned **out_tensor);
dlpack_helpers_status dlpack_tensor_read_only_origin(const DLManagedTensorVersioned *tensor, dlpack_helpers_read_only_origin *out_origin);
dlpack_helpers_status dlpack_tensor_set_flags(DLManagedTensorVersioned *tensor, uint64_t set, uint64_t clear);
dlpack_helpers_status dlpack_tensor_validate(const DLManagedTensorVersioned *tensor, const dlpack_helpers_validate_options *options, dlpack_helpers_layout *out_layout);
dlpack_helpers_status dlpack_tensor_validate_with_error(const DLManagedTensorVersioned *tensor, const dlpack_helpers_validate_options *options, dlpack_helpers_layout *out_layout, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_tensor_writability(const DLManagedTensorVersioned *tensor, dlpack_helpers_writability *out_writability);
dlpack_helpers_status dlpack_version_check(DLPackVersion version, dlpack_helpers_version_compat *out_compat);
dlpack_helpers_status dlpack_version_check_with_error(DLPackVersion version, dlpack_helpers_version_compat *out_compat, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_version_negotiate(DLPackVersion producer_version, uint32_t producer_flags, const DLPackVersion *max_version, dlpack_helpers_version_choice *out_choice);
dlpack_helpers_status dlpack_version_negotiate_with_error(DLPackVersion producer_version, uint32_t producer_flags, const DLPackVersion *max_version, dlpack_helpers_version_choice *out_choice, dlpack_helpers_error *err);
dlpack_helpers_status dlpack_versioned_to_legacy(DLManagedTensorVersioned *tensor, uint32_t options, uint64_t *out_dropped_flags, DLManagedTensor **out_tensor);
dlpack_helpers_status dlpack_versioned_to_legacy_with_error(DLManagedTensorVersioned *tensor, uint32_t options, uint64_t *out_dropped_flags, DLManagedTensor **out_tensor, dlpack_helpers_error *err);

#endif
