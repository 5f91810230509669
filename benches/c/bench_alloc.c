/* Heap allocations per call of every C query and validation path of libdlpack_helpers.so
 * (expected: zero), counted by malloc_count.c linked into this program (it interposes malloc
 * for the shared library too). Prints: name allocations_per_call. A benchmark, not a test. */
#include <stdio.h>
#include <string.h>
#include "dlpack_helpers.h"

unsigned long malloc_count_get(void);

static int64_t shape4[4] = {2, 3, 4, 5}, strides4[4] = {60, 20, 5, 1};
static void nop_deleter(DLManagedTensorVersioned *t) { (void)t; }

#define N 10000
#define COUNT(name, body)                                                   \
  do {                                                                      \
    unsigned long before = malloc_count_get();                              \
    for (int i = 0; i < N; ++i) { body; }                                   \
    printf("%-28s %.3f\n", name, (double)(malloc_count_get() - before) / N); \
  } while (0)

int main(void) {
  DLManagedTensorVersioned t;
  memset(&t, 0, sizeof t);
  t.version.major = 1;
  t.version.minor = 3;
  t.deleter = nop_deleter;
  t.dl_tensor.device.device_type = kDLCPU;
  t.dl_tensor.ndim = 4;
  t.dl_tensor.shape = shape4;
  t.dl_tensor.strides = strides4;
  DLDevice d = {kDLCUDA, 0}, out;
  int32_t c;
  DLPackVersion v = {1, 3};
  dlpack_helpers_version_choice ch;
  dlpack_helpers_stream st;
  dlpack_helpers_export_plan plan;
  dlpack_helpers_export_request rq;
  memset(&rq, 0, sizeof rq);
  rq.has_max_version = true;
  rq.max_version = v;
  rq.has_stream = true;
  rq.stream = 7;
  struct dlpack_helpers_info info;
  info.struct_size = sizeof info;
  /* warm up (one-time initialisation is not per call) */
  dlpack_get_info(&info);
  COUNT("is_cpu_accessible", (void)dlpack_is_cpu_accessible(d));
  COUNT("device_host_access", (void)dlpack_device_host_access(d));
  COUNT("get_device", (void)dlpack_get_device(&t, &out));
  COUNT("version_check", (void)dlpack_version_check(v, &c));
  COUNT("tensor_check_version", (void)dlpack_tensor_check_version(&t, &c));
  COUNT("version_negotiate", (void)dlpack_version_negotiate(v, 1, &v, &ch));
  COUNT("tensor_delete", dlpack_tensor_delete(&t));
  COUNT("stream_decode", (void)dlpack_stream_decode(d, true, 7, 0, &st));
  COUNT("export_request_resolve", (void)dlpack_export_request_resolve(&rq, d, v, 1, &plan));
  COUNT("get_info", (void)dlpack_get_info(&info));
  COUNT("status_string", (void)dlpack_status_string(10));
  /* VALIDATION_HOOK: validation/layout (zero) and wrap (one) of issue 3 go here. */
  return 0;
}
