/* Prints the DLPack ABI as seen by the compiler: sizes, alignments, offsets, enum values and
 * macros, one "name value" per line. Compiled against our header alone (tests/abi.rs compares it
 * with the Rust mirrors) and against the official header (scripts/test.d/25-abi-oracle.sh compares
 * the two outputs). ABI_HEADER names the header to include. */
#include <stddef.h>
#include <stdio.h>
#include ABI_HEADER

#define SIZE(T) printf("sizeof(" #T ") %zu\nalignof(" #T ") %zu\n", sizeof(T), _Alignof(T))
#define OFF(T, f) printf("offsetof(" #T "." #f ") %zu\n", offsetof(T, f))
#define VAL(x) printf(#x " %lld\n", (long long)(x))

int main(void) {
  SIZE(DLPackVersion);
  OFF(DLPackVersion, major);
  OFF(DLPackVersion, minor);
  SIZE(DLDeviceType);
  SIZE(DLDevice);
  OFF(DLDevice, device_type);
  OFF(DLDevice, device_id);
  SIZE(DLDataType);
  OFF(DLDataType, code);
  OFF(DLDataType, bits);
  OFF(DLDataType, lanes);
  SIZE(DLTensor);
  OFF(DLTensor, data);
  OFF(DLTensor, device);
  OFF(DLTensor, ndim);
  OFF(DLTensor, dtype);
  OFF(DLTensor, shape);
  OFF(DLTensor, strides);
  OFF(DLTensor, byte_offset);
  SIZE(DLManagedTensor);
  OFF(DLManagedTensor, dl_tensor);
  OFF(DLManagedTensor, manager_ctx);
  OFF(DLManagedTensor, deleter);
  SIZE(struct DLManagedTensorVersioned);
  OFF(struct DLManagedTensorVersioned, version);
  OFF(struct DLManagedTensorVersioned, manager_ctx);
  OFF(struct DLManagedTensorVersioned, deleter);
  OFF(struct DLManagedTensorVersioned, flags);
  OFF(struct DLManagedTensorVersioned, dl_tensor);
#if DLPACK_MINOR_VERSION >= 2
  SIZE(DLPackExchangeAPIHeader);
  OFF(DLPackExchangeAPIHeader, version);
  OFF(DLPackExchangeAPIHeader, prev_api);
  SIZE(DLPackExchangeAPI);
  OFF(DLPackExchangeAPI, header);
  OFF(DLPackExchangeAPI, managed_tensor_allocator);
  OFF(DLPackExchangeAPI, managed_tensor_from_py_object_no_sync);
  OFF(DLPackExchangeAPI, managed_tensor_to_py_object_no_sync);
  OFF(DLPackExchangeAPI, dltensor_from_py_object_no_sync);
  OFF(DLPackExchangeAPI, current_work_stream);
#endif
  VAL(DLPACK_MAJOR_VERSION);
  VAL(DLPACK_MINOR_VERSION);
  VAL(DLPACK_FLAG_BITMASK_READ_ONLY);
  VAL(DLPACK_FLAG_BITMASK_IS_COPIED);
  VAL(DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
  VAL(kDLCPU);
  VAL(kDLCUDA);
  VAL(kDLCUDAHost);
  VAL(kDLOpenCL);
  VAL(kDLVulkan);
  VAL(kDLMetal);
  VAL(kDLVPI);
  VAL(kDLROCM);
  VAL(kDLROCMHost);
  VAL(kDLExtDev);
  VAL(kDLCUDAManaged);
  VAL(kDLOneAPI);
  VAL(kDLWebGPU);
  VAL(kDLHexagon);
  VAL(kDLMAIA);
  VAL(kDLTrn);
  VAL(kDLInt);
  VAL(kDLUInt);
  VAL(kDLFloat);
  VAL(kDLOpaqueHandle);
  VAL(kDLBfloat);
  VAL(kDLComplex);
  VAL(kDLBool);
  VAL(kDLFloat8_e3m4);
  VAL(kDLFloat8_e4m3);
  VAL(kDLFloat8_e4m3b11fnuz);
  VAL(kDLFloat8_e4m3fn);
  VAL(kDLFloat8_e4m3fnuz);
  VAL(kDLFloat8_e5m2);
  VAL(kDLFloat8_e5m2fnuz);
  VAL(kDLFloat8_e8m0fnu);
  VAL(kDLFloat6_e2m3fn);
  VAL(kDLFloat6_e3m2fn);
  VAL(kDLFloat4_e2m1fn);
  return 0;
}
