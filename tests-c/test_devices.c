/* Issue 22 from C (peer cases 54 and 55), against the shared and the static library: a CPU-only
 * process gets (kDLCPU, 0) for host memory; no negative device id is accepted, created or
 * returned; producer helpers make tensors only on device types DLPack 1.3 assigns unless the
 * caller opts in; BUFFER_TOO_SMALL says the length needed. No driver override is set: where this
 * machine has a device runtime installed, the CPU-only check says so and is skipped. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "dlpack_helpers.h"

static DLDevice dev(int32_t t, int32_t id) {
  DLDevice d;
  d.device_type = (DLDeviceType)t;
  d.device_id = id;
  return d;
}

TEST(case_55_cpu_only_process_gets_host_memory) {
  char *heap = malloc(4096);
  CHECK(heap != NULL);
  dlpack_helpers_pointer_info info;
  memset(&info, 0xff, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(dlpack_pointer_classify(heap, NULL, &info), DLPACK_HELPERS_STATUS_OK);
  if (info.backends_asked != 0 || info.backends_unreachable != 0) {
    printf("SKIP: a device runtime is installed here (asked 0x%x, unreachable 0x%x)\n",
           (unsigned)info.backends_asked, (unsigned)info.backends_unreachable);
    free(heap);
    return;
  }
  CHECK_EQ_INT(info.memory_class, DLPACK_HELPERS_MEMORY_HOST);
  CHECK_EQ_INT(info.host_access, DLPACK_HELPERS_HOST_ACCESS_ALWAYS);
  CHECK_EQ_INT((int32_t)info.device.device_type, kDLCPU);
  CHECK_EQ_INT(info.device.device_id, 0);
  CHECK_EQ_INT((int)info.device_id_known, 1);
  DLDevice d = dev(-7, -7);
  CHECK_STATUS(dlpack_pointer_get_device(heap + 100, &d), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT((int32_t)d.device_type, kDLCPU);
  CHECK_EQ_INT(d.device_id, 0);
  free(heap);
}

static dlpack_helpers_status create(DLDevice d, uint64_t flags) {
  static float data[4];
  const int64_t shape[1] = {4};
  DLManagedTensorVersioned *t = NULL;
  DLDataType f32;
  f32.code = kDLFloat;
  f32.bits = 32;
  f32.lanes = 1;
  dlpack_helpers_status s = dlpack_tensor_create(data, d, 1, shape, NULL, f32, 0, flags, NULL, NULL, &t);
  if (s == DLPACK_HELPERS_STATUS_OK) {
    CHECK((t->flags & DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE) == 0);
    dlpack_tensor_delete(t);
  } else {
    CHECK(t == NULL);
  }
  return s;
}

TEST(case_54_no_negative_device_id) {
  const DLDevice bad[3] = {dev(kDLOneAPI, -1), dev(kDLCUDA, -1), dev(kDLCPU, INT32_MIN)};
  for (int i = 0; i < 3; ++i) {
    CHECK_STATUS(create(bad[i], 0), DLPACK_HELPERS_STATUS_INVALID_DEVICE);
    CHECK_STATUS(create(bad[i], DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE),
                 DLPACK_HELPERS_STATUS_INVALID_DEVICE);
    CHECK_STATUS(dlpack_device_check(bad[i], DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE),
                 DLPACK_HELPERS_STATUS_INVALID_DEVICE);
    char name[DLPACK_HELPERS_NAME_MAX];
    CHECK_STATUS(dlpack_device_format(bad[i], name, sizeof name, NULL), DLPACK_HELPERS_STATUS_INVALID_DEVICE);
    dlpack_helpers_export_request r;
    memset(&r, 0, sizeof r);
    dlpack_helpers_export_plan plan;
    DLPackVersion v;
    v.major = 1;
    v.minor = 3;
    r.has_max_version = true;
    r.max_version = v;
    CHECK_STATUS(dlpack_export_request_resolve(&r, bad[i], v, 0, &plan), DLPACK_HELPERS_STATUS_INVALID_DEVICE);
  }
  CHECK(strcmp(dlpack_status_python_exception(DLPACK_HELPERS_STATUS_INVALID_DEVICE), "ValueError") == 0);
  CHECK(strcmp(dlpack_status_string(DLPACK_HELPERS_STATUS_DEVICE_ID_UNKNOWN), "DEVICE_ID_UNKNOWN") == 0);
}

TEST(case_55_producers_refuse_unassigned_device_types) {
  const int32_t types[6] = {0, 5, 19, 20, 99, -3};
  for (int i = 0; i < 6; ++i) {
    CHECK_STATUS(create(dev(types[i], 0), 0), DLPACK_HELPERS_STATUS_INVALID_DEVICE);
    CHECK_STATUS(create(dev(types[i], 0), DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE), DLPACK_HELPERS_STATUS_OK);
    CHECK_STATUS(dlpack_device_check(dev(types[i], 0), 0), DLPACK_HELPERS_STATUS_INVALID_DEVICE);
    CHECK_STATUS(dlpack_device_check(dev(types[i], 0), DLPACK_HELPERS_DEVICE_ALLOW_UNASSIGNED_TYPE),
                 DLPACK_HELPERS_STATUS_OK);
  }
  for (int32_t t = 1; t <= 18; ++t) {
    if (t == 5 || t == 6) continue;
    CHECK_STATUS(create(dev(t, 3), 0), DLPACK_HELPERS_STATUS_OK);
  }
}

TEST(buffer_too_small_says_the_length_needed) {
  char small[4];
  size_t len = 0;
  CHECK_STATUS(dlpack_device_format(dev(kDLCUDAManaged, 12), small, sizeof small, &len),
               DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL);
  CHECK_EQ_INT((int)len, (int)strlen("cuda_managed:12"));
  char *buf = malloc(len + 1);
  CHECK(buf != NULL);
  CHECK_STATUS(dlpack_device_format(dev(kDLCUDAManaged, 12), buf, len + 1, &len), DLPACK_HELPERS_STATUS_OK);
  CHECK(strcmp(buf, "cuda_managed:12") == 0);
  free(buf);
}

int main(void) {
  unsetenv("DLPACK_HELPERS_CUDA_LIBRARY");
  unsetenv("DLPACK_HELPERS_HIP_LIBRARY");
  unsetenv("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY");
  RUN(case_55_cpu_only_process_gets_host_memory);
  RUN(case_54_no_negative_device_id);
  RUN(case_55_producers_refuse_unassigned_device_types);
  RUN(buffer_too_small_says_the_length_needed);
  return CHECK_REPORT();
}
