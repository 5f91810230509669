/* Heap allocations per call of every C query and validation path of libdlpack_helpers.so
 * (expected: zero), counted by malloc_count.c linked into this program (it interposes malloc
 * for the shared library too). Prints: name allocations_per_call. A benchmark, not a test. */
#include <stdio.h>
#include <string.h>
#include "dlpack_helpers.h"

unsigned long malloc_count_get(void);

static int64_t shape4[4] = {2, 3, 4, 5}, strides4[4] = {60, 20, 5, 1};
static void nop_deleter(DLManagedTensorVersioned *t) { (void)t; }
static void nop_ldeleter(DLManagedTensor *t) { (void)t; }
static float data[120];

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
  /* Validation, layout, names, flags (zero), wrap and creation (one per call: the wrapper's
   * or the new tensor's block; releasing it is not counted by malloc_count). */
  t.dl_tensor.data = data;
  t.dl_tensor.dtype.code = kDLFloat;
  t.dl_tensor.dtype.bits = 32;
  t.dl_tensor.dtype.lanes = 1;
  dlpack_helpers_validate_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.flags = DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS;
  dlpack_helpers_layout l;
  DLManagedTensor lg;
  memset(&lg, 0, sizeof lg);
  lg.dl_tensor = t.dl_tensor;
  lg.deleter = nop_ldeleter;
  int64_t cs[4];
  uint64_t fl;
  dlpack_helpers_writability wr;
  char name[DLPACK_HELPERS_NAME_MAX];
  size_t len;
  DLDataType dt;
  DLDevice dv;
  DLManagedTensorVersioned *wv;
  DLManagedTensor *wl;
  COUNT("tensor_validate", (void)dlpack_tensor_validate(&t, &o, NULL));
  COUNT("tensor_validate+layout", (void)dlpack_tensor_validate(&t, NULL, &l));
  COUNT("legacy_tensor_validate", (void)dlpack_legacy_tensor_validate(&lg, &o, &l));
  COUNT("dltensor_validate", (void)dlpack_dltensor_validate(&t.dl_tensor, v, 0, &o, &l));
  COUNT("tensor_layout", (void)dlpack_tensor_layout(&t, &l));
  COUNT("dltensor_layout", (void)dlpack_dltensor_layout(&t.dl_tensor, 0, &l));
  COUNT("compact_strides", (void)dlpack_compact_strides(4, shape4, false, cs));
  COUNT("tensor_get_flags", (void)dlpack_tensor_get_flags(&t, &fl));
  COUNT("tensor_writability", (void)dlpack_tensor_writability(&t, &wr));
  COUNT("dtype_format", (void)dlpack_dtype_format(t.dl_tensor.dtype, name, sizeof name, &len));
  COUNT("dtype_parse", (void)dlpack_dtype_parse("bfloat16", &dt));
  COUNT("device_format", (void)dlpack_device_format(d, name, sizeof name, &len));
  COUNT("device_parse", (void)dlpack_device_parse("cuda:1", &dv));
  COUNT("legacy_to_versioned", if (dlpack_legacy_to_versioned(&lg, 0, &wv) == 0) wv->deleter(wv));
  COUNT("versioned_to_legacy", if (dlpack_versioned_to_legacy(&t, 0, NULL, &wl) == 0) wl->deleter(wl));
  COUNT("tensor_create", if (dlpack_tensor_create(data, t.dl_tensor.device, 4, shape4, NULL, t.dl_tensor.dtype, 0, 0, NULL, NULL, &wv) == 0) wv->deleter(wv));
  return 0;
}
