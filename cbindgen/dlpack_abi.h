/*
 * cbindgen/dlpack_abi.h: the DLPack ABI block of include/dlpack_helpers.h, kept as C so that an
 * editor and a compiler can check it. tests/header.rs copies everything after the line
 * "BEGIN DLPACK ABI BLOCK" into the generated header, after its standard includes and version
 * macros; the lines before it (this comment and the includes) are for checking the fragment
 * alone (tests/header.rs compiles it as C11 with -Wall -Wextra -Wpedantic -Werror).
 * The official header is the oracle for these definitions: scripts/test abi-oracle.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* BEGIN DLPACK ABI BLOCK */
/* ---- DLPack ABI ---------------------------------------------------------------------------
 * When an official dlpack/dlpack.h (1.0 or newer) was included first, its definitions are used.
 * Otherwise the DLPack 1.3 definitions below are provided under the official include guard, so
 * that an official header included afterwards adds nothing. A 0.x header is refused: it lacks
 * DLPackVersion and DLManagedTensorVersioned.
 */
#if defined(DLPACK_DLPACK_H_) && !defined(DLPACK_MAJOR_VERSION)
#error "dlpack_helpers.h needs DLPack 1.0 or newer, but an official dlpack/dlpack.h of version 0.x was included first"
#endif
#if defined(DLPACK_DLPACK_H_) && DLPACK_MAJOR_VERSION != 1
#error "dlpack_helpers.h reads DLPack major version 1, but a dlpack/dlpack.h of another major version was included first"
#endif

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

/** Set when the DLPack definitions come from dlpack_helpers.h, not from an official header. */
#define DLPACK_HELPERS_PROVIDES_DLPACK_ABI 1

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 3

#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif

#ifdef _WIN32
#ifdef DLPACK_EXPORTS
#define DLPACK_DLL __declspec(dllexport)
#else
#define DLPACK_DLL __declspec(dllimport)
#endif
#else
#define DLPACK_DLL
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** A DLPack version: the major changes with the layout of DLManagedTensorVersioned, the minor
 *  with additions only. */
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/** Device type of a tensor's memory (a 32-bit signed integer; not a bitmask). */
#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
  kDLTrn = 18,
} DLDeviceType;

/** Where a tensor's memory lives: a device type and the producer's device index. */
typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

/** Values of DLDataType.code. */
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U,
} DLDataTypeCode;

/** Element type: code (a DLDataTypeCode), bits per lane, lanes (1 for scalars). */
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/** A tensor view. strides are in elements, byte_offset in bytes; strides must be non-NULL when
 *  ndim != 0 from DLPack 1.2 on (NULL meant compact row-major before). */
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

/** Legacy managed tensor (no version, no flags). deleter may be NULL. */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/** Versioned managed tensor (DLPack 1.0+). Every field up to and including flags keeps its
 *  offset in future major versions, so deleter can always be called. */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

/* C exchange API (DLPack 1.2+): every function returns 0 on success, -1 on failure. */
typedef int (*DLPackManagedTensorAllocator)(
    DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
    void (*SetError)(void* error_ctx, const char* kind, const char* message));
typedef int (*DLPackManagedTensorFromPyObjectNoSync)(void* py_object, DLManagedTensorVersioned** out);
typedef int (*DLPackDLTensorFromPyObjectNoSync)(void* py_object, DLTensor* out);
typedef int (*DLPackCurrentWorkStream)(DLDeviceType device_type, int32_t device_id,
                                       void** out_current_stream);
typedef int (*DLPackManagedTensorToPyObjectNoSync)(DLManagedTensorVersioned* tensor,
                                                   void** out_py_object);

typedef struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  struct DLPackExchangeAPIHeader* prev_api;
} DLPackExchangeAPIHeader;

typedef struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  DLPackManagedTensorAllocator managed_tensor_allocator;
  DLPackManagedTensorFromPyObjectNoSync managed_tensor_from_py_object_no_sync;
  DLPackManagedTensorToPyObjectNoSync managed_tensor_to_py_object_no_sync;
  DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;
  DLPackCurrentWorkStream current_work_stream;
} DLPackExchangeAPI;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* DLPACK_DLPACK_H_ */

/* Declared for prototypes below in case an official 1.0 or 1.1 header (which lacks the typedef
 * and the exchange API) was included first. */
struct DLManagedTensorVersioned;
struct DLPackExchangeAPI;
/* ---- end of the DLPack ABI ---------------------------------------------------------------- */
