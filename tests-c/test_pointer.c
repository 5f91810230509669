/* Pointer classification and oneAPI queue-object streams from C (issue 12 item 3, issue 13,
 * peer case 51). The driver overrides name missing files, so no backend can classify a pointer:
 * the answer is unknown, never kDLCPU. The fake-driver runs are in tests/pointer_fake.rs. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "dlpack_helpers.h"

static DLDevice dev(int32_t t, int32_t id) {
  DLDevice d;
  d.device_type = (DLDeviceType)t;
  d.device_id = id;
  return d;
}

TEST(unknown_is_never_cpu) {
  static char buf[64];
  DLDevice d = dev(-7, -7);
  CHECK_STATUS(dlpack_pointer_get_device(buf, &d), DLPACK_HELPERS_STATUS_DEVICE_UNKNOWN);
  CHECK_EQ_INT((int32_t)d.device_type, -7);
  CHECK(strstr(dlpack_last_error_message(), "not assumed to be kDLCPU") != NULL);
  dlpack_helpers_pointer_info info;
  memset(&info, 0xff, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(dlpack_pointer_classify(buf, NULL, &info), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(info.struct_size, sizeof info);
  CHECK_EQ_INT(info.memory_class, DLPACK_HELPERS_MEMORY_UNKNOWN);
  CHECK_EQ_INT(info.host_access, DLPACK_HELPERS_HOST_ACCESS_UNKNOWN);
  CHECK_EQ_INT(info.backends_asked, 0);
  CHECK_EQ_INT(info.backends_unreachable, DLPACK_HELPERS_BACKEND_CUDA | DLPACK_HELPERS_BACKEND_HIP |
                                              DLPACK_HELPERS_BACKEND_LEVEL_ZERO);
  CHECK_STATUS(dlpack_pointer_classify(NULL, NULL, &info), DLPACK_HELPERS_STATUS_NULL_POINTER);
  dlpack_helpers_info li;
  memset(&li, 0, sizeof li);
  li.struct_size = sizeof li;
  CHECK_STATUS(dlpack_get_info(&li), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(li.capabilities & (DLPACK_HELPERS_CAP_POINTER_CUDA | DLPACK_HELPERS_CAP_POINTER_ROCM |
                                  DLPACK_HELPERS_CAP_POINTER_LEVEL_ZERO | DLPACK_HELPERS_CAP_LEVEL_ZERO),
               0);
}

TEST(host_access_per_tensor) {
  static float data[4];
  int64_t shape[1] = {4};
  DLManagedTensorVersioned t;
  memset(&t, 0, sizeof t);
  t.version.major = 1;
  t.version.minor = 3;
  t.dl_tensor.data = data;
  t.dl_tensor.ndim = 1;
  t.dl_tensor.shape = shape;
  t.dl_tensor.dtype.code = kDLFloat;
  t.dl_tensor.dtype.bits = 32;
  t.dl_tensor.dtype.lanes = 1;
  const int32_t types[5] = {kDLCPU, kDLCUDA, kDLROCMHost, kDLOneAPI, kDLExtDev};
  const dlpack_helpers_host_access want[5] = {
      DLPACK_HELPERS_HOST_ACCESS_ALWAYS, DLPACK_HELPERS_HOST_ACCESS_NEVER, DLPACK_HELPERS_HOST_ACCESS_ALWAYS,
      DLPACK_HELPERS_HOST_ACCESS_UNKNOWN, DLPACK_HELPERS_HOST_ACCESS_UNKNOWN};
  for (int i = 0; i < 5; ++i) {
    t.dl_tensor.device = dev(types[i], 0);
    dlpack_helpers_host_access a = -1;
    CHECK_STATUS(dlpack_tensor_host_access(&t, (void *)0x77, &a), DLPACK_HELPERS_STATUS_OK);
    CHECK_EQ_INT(a, want[i]);
    a = -1;
    CHECK_STATUS(dlpack_dltensor_host_access(&t.dl_tensor, NULL, &a), DLPACK_HELPERS_STATUS_OK);
    CHECK_EQ_INT(a, want[i]);
  }
  /* Validation resolving host access: unknown memory is not host-accessible. */
  t.dl_tensor.device = dev(kDLOneAPI, 0);
  int64_t strides[1] = {1};
  t.dl_tensor.strides = strides;
  dlpack_helpers_validate_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.flags = DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE | DLPACK_HELPERS_VALIDATE_RESOLVE_HOST_ACCESS;
  CHECK_STATUS(dlpack_tensor_validate(&t, &o, NULL), DLPACK_HELPERS_STATUS_NOT_CPU_ACCESSIBLE);
  CHECK(strstr(dlpack_last_error_message(), "unknown kind") != NULL);
  t.dl_tensor.device = dev(kDLCPU, 0);
  CHECK_STATUS(dlpack_tensor_validate(&t, &o, NULL), DLPACK_HELPERS_STATUS_OK);
}

static int waits;
static int32_t last_kind;
static void *last_handle;
static int32_t on_wait(void *ctx, int32_t id, void *p, void *c) {
  (void)ctx, (void)id, (void)p, (void)c;
  return 0;
}
static int32_t on_sync(void *ctx, int32_t id, void *s) {
  (void)ctx, (void)id, (void)s;
  return 0;
}
static int32_t on_wait_handle(void *ctx, int32_t id, void *producer, dlpack_helpers_stream_kind kind,
                              void *consumer) {
  (void)ctx, (void)id, (void)producer;
  ++waits;
  last_kind = kind;
  last_handle = consumer;
  return 0;
}

/* Peer case 51: a SYCL queue as the consumer's stream, through the export request to a
 * registered backend's wait. */
TEST(case_51_queue_object_stream) {
  DLDevice one = dev(kDLOneAPI, 1);
  dlpack_helpers_stream s;
  CHECK_STATUS(dlpack_stream_decode_handle(one, DLPACK_HELPERS_STREAM_SYCL_QUEUE, (void *)0x5A0000, &s),
               DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_SYCL_QUEUE);
  CHECK_STATUS(dlpack_stream_decode_handle(dev(kDLCUDA, 0), DLPACK_HELPERS_STREAM_SYCL_QUEUE, (void *)0x5A0000, &s),
               DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE);
  CHECK_STATUS(dlpack_stream_decode_handle(one, DLPACK_HELPERS_STREAM_HANDLE, (void *)0x5A0000, &s),
               DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(dlpack_stream_decode_handle(one, DLPACK_HELPERS_STREAM_ZE_COMMAND_LIST, (void *)0x5B0000, &s),
               DLPACK_HELPERS_STATUS_OK);
  bool has = true;
  int64_t v = 0;
  CHECK_STATUS(dlpack_stream_encode_decoded(one, &s, &has, &v), DLPACK_HELPERS_STATUS_INVALID_STREAM);
  CHECK_STATUS(dlpack_stream_decode_handle(one, DLPACK_HELPERS_STREAM_SYCL_QUEUE, (void *)0x5A0000, &s),
               DLPACK_HELPERS_STATUS_OK);
  dlpack_helpers_export_request req;
  memset(&req, 0, sizeof req);
  req.has_max_version = true;
  req.max_version.major = 1;
  req.max_version.minor = 3;
  dlpack_helpers_export_plan plan;
  CHECK_STATUS(dlpack_export_request_resolve_with_stream(&req, &s, one, req.max_version, 0, &plan),
               DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(plan.sync, DLPACK_HELPERS_SYNC_STREAM_WAIT);
  CHECK_EQ_INT(plan.stream.kind, DLPACK_HELPERS_STREAM_SYCL_QUEUE);
  CHECK(plan.stream.handle == (void *)0x5A0000);
  /* A handle while the data goes to the CPU: the array API says stream must be None. */
  req.has_dl_device = true;
  req.dl_device = dev(kDLCPU, 0);
  CHECK_STATUS(dlpack_export_request_resolve_with_stream(&req, &s, one, req.max_version, 0, &plan),
               DLPACK_HELPERS_STATUS_INVALID_STREAM);
  req.has_dl_device = false;
  CHECK_STATUS(dlpack_stream_wait(one, (void *)0x100, &plan.stream), DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE);
  dlpack_helpers_stream_backend_ex b;
  memset(&b, 0, sizeof b);
  b.struct_size = sizeof b;
  b.wait = on_wait;
  b.synchronize = on_sync;
  b.wait_handle = on_wait_handle;
  CHECK_STATUS(dlpack_stream_backend_register_ex(kDLOneAPI, &b), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_stream_wait(one, (void *)0x100, &plan.stream), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(waits, 1);
  CHECK_EQ_INT(last_kind, DLPACK_HELPERS_STREAM_SYCL_QUEUE);
  CHECK(last_handle == (void *)0x5A0000);
  /* The same queue for a CUDA device is a type error, not a wait. */
  CHECK_STATUS(dlpack_stream_wait(dev(kDLCUDA, 0), (void *)0x100, &plan.stream),
               DLPACK_HELPERS_STATUS_INVALID_STREAM_TYPE);
  CHECK_EQ_INT(waits, 1);
}

int main(void) {
  setenv("DLPACK_HELPERS_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  setenv("DLPACK_HELPERS_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
  setenv("DLPACK_HELPERS_LEVEL_ZERO_LIBRARY", "/nonexistent/libze_loader.so.1", 1);
  RUN(unknown_is_never_cpu);
  RUN(host_access_per_tensor);
  RUN(case_51_queue_object_stream);
  return CHECK_REPORT();
}
