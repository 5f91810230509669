/* libbench_baseline.so: the baselines of baseline.h behind exported functions, so that
 * bench_core.c can call them through the PLT exactly as it calls libdlpack_helpers.so. */
#include "baseline.h"

bool bl_cpu_accessible(DLDevice d) { return in_cpu_accessible(d); }
int bl_get_device(const DLManagedTensorVersioned *t, DLDevice *out) { return in_get_device(t, out); }
int bl_version_check(DLPackVersion v, int32_t *out) { return in_version_check(v, out); }
int bl_tensor_check_version(const DLManagedTensorVersioned *t, int32_t *out) { return in_tensor_check_version(t, out); }
int bl_negotiate(DLPackVersion p, uint32_t flags, const DLPackVersion *max, dlpack_helpers_version_choice *out) {
  return in_negotiate(p, flags, max, out);
}
void bl_delete(DLManagedTensorVersioned *t) { in_delete(t); }
int bl_stream_decode(DLDevice d, bool has, int64_t v, uint32_t flags, dlpack_helpers_stream *out) {
  return in_stream_decode(d, has, v, flags, out);
}
int bl_resolve(const dlpack_helpers_export_request *rq, DLDevice dev, DLPackVersion p, uint32_t flags,
               dlpack_helpers_export_plan *out) {
  return in_resolve(rq, dev, p, flags, out);
}
int bl_validate_c(const DLManagedTensorVersioned *m) { return in_validate_c(m); }
int bl_tensor_layout(const DLManagedTensorVersioned *m, dlpack_helpers_layout *out) { return in_tensor_layout(m, out); }
int bl_legacy_to_versioned(DLManagedTensor *lg, uint64_t flags, DLManagedTensorVersioned **out) {
  return in_legacy_to_versioned(lg, flags, out);
}
int bl_versioned_to_legacy(DLManagedTensorVersioned *m, uint32_t options, uint64_t *dropped, DLManagedTensor **out) {
  return in_versioned_to_legacy(m, options, dropped, out);
}
int bl_compact_strides(int32_t ndim, const int64_t *shape, bool column_major, int64_t *out) {
  return in_compact_strides(ndim, shape, column_major, out);
}
int bl_tensor_create(void *data, DLDevice device, int32_t ndim, const int64_t *shape, const int64_t *strides,
                     DLDataType dtype, uint64_t byte_offset, uint64_t flags, void (*release)(void *), void *ctx,
                     DLManagedTensorVersioned **out) {
  return in_tensor_create(data, device, ndim, shape, strides, dtype, byte_offset, flags, release, ctx, out);
}
int bl_dtype_format(DLDataType dt, char *buf, size_t size, size_t *out_len) { return in_dtype_format(dt, buf, size, out_len); }
int bl_dtype_parse(const char *s, DLDataType *out) { return in_dtype_parse(s, out); }
int bl_device_format(DLDevice d, char *buf, size_t size, size_t *out_len) { return in_device_format(d, buf, size, out_len); }
int bl_device_parse(const char *s, DLDevice *out) { return in_device_parse(s, out); }
int bl_capsule_new(DLManagedTensorVersioned *t, void **out) { return in_capsule_new(t, out); }
int bl_capsule_consume(void *cap, DLManagedTensorVersioned **out) { return in_capsule_consume(cap, out); }
