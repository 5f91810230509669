/* The baselines of bench_core.c: the rules of each helper as a C programmer writes them.
 * bench_core.c uses them twice: inlined into its loop (the physical limit of the logic), and
 * through the PLT from libbench_baseline.so (baseline.c; the physical limit of a *library
 * call* doing that logic). */
#ifndef BASELINE_H
#define BASELINE_H
#include <stdint.h>
#include "dlpack_helpers.h"
static inline bool in_cpu_accessible(DLDevice d) {
  return d.device_type == 1 || d.device_type == 3 || d.device_type == 11 || d.device_type == 13;
}
static inline int in_get_device(const DLManagedTensorVersioned *t, DLDevice *out) {
  if (!t || !out) return 1;
  *out = t->dl_tensor.device;
  return 0;
}
static inline int in_version_check(DLPackVersion v, int32_t *out) {
  if (!out) return 1;
  if (v.major != 1) return 10;
  *out = v.minor == 3 ? 0 : v.minor < 3 ? 1 : 2;
  return 0;
}
static inline int in_tensor_check_version(const DLManagedTensorVersioned *t, int32_t *out) {
  if (!t) return 1;
  return in_version_check(t->version, out);
}
static inline int in_negotiate(DLPackVersion p, uint32_t flags, const DLPackVersion *max,
                               dlpack_helpers_version_choice *out) {
  if (!out) return 1;
  if (!max) {
    if (!(flags & 1)) return 11;
    out->kind = 0;
    out->version = p;
    return 0;
  }
  if (max->major > p.major || (max->major == p.major && max->minor >= p.minor) || max->major == p.major) {
    out->kind = 1;
    out->version = p;
    return 0;
  }
  if (max->major == 0 && (flags & 1)) {
    out->kind = 0;
    out->version = p;
    return 0;
  }
  return 11;
}
static inline void in_delete(DLManagedTensorVersioned *t) {
  if (t && t->deleter) t->deleter(t);
}
static inline int in_stream_decode(DLDevice d, bool has, int64_t v, dlpack_helpers_stream *out) {
  if (!out) return 1;
  int cuda = d.device_type == kDLCUDA || d.device_type == kDLCUDAManaged;
  if (!has) {
    out->kind = cuda ? 2 : 4;
    out->handle = cuda ? (void *)1 : 0;
    return 0;
  }
  if (v == -1) { out->kind = 0; out->handle = 0; return 0; }
  if (v < -1 || (cuda && v == 0)) return 40;
  if (cuda && v == 1) { out->kind = 2; out->handle = (void *)1; return 0; }
  if (cuda && v == 2) { out->kind = 3; out->handle = (void *)2; return 0; }
  out->kind = 5;
  out->handle = (void *)(uintptr_t)v;
  return 0;
}
static inline int in_resolve(const dlpack_helpers_export_request *rq, DLDevice dev, DLPackVersion p,
                             dlpack_helpers_export_plan *out) {
  if (!rq || !out) return 1;
  dlpack_helpers_version_choice c;
  int s = in_negotiate(p, 1, rq->has_max_version ? &rq->max_version : NULL, &c);
  if (s) return s;
  DLDevice target = rq->has_dl_device ? rq->dl_device : dev;
  if (!(target.device_type == dev.device_type && target.device_id == dev.device_id)) return 42;
  dlpack_helpers_stream st;
  s = in_stream_decode(target, rq->has_stream, rq->stream, &st);
  if (s) return s;
  out->kind = c.kind;
  out->version = c.version;
  out->device = dev;
  out->copy = rq->copy == 2;
  out->flags = out->copy ? 2 : 0;
  out->sync = st.kind >= 2 ? 1 : 0;
  out->stream = st;
  return 0;
}


/* Exported from libbench_baseline.so (baseline.c). */
bool bl_cpu_accessible(DLDevice d);
int bl_get_device(const DLManagedTensorVersioned *t, DLDevice *out);
int bl_version_check(DLPackVersion v, int32_t *out);
int bl_tensor_check_version(const DLManagedTensorVersioned *t, int32_t *out);
int bl_negotiate(DLPackVersion p, uint32_t flags, const DLPackVersion *max, dlpack_helpers_version_choice *out);
void bl_delete(DLManagedTensorVersioned *t);
int bl_stream_decode(DLDevice d, bool has, int64_t v, dlpack_helpers_stream *out);
int bl_resolve(const dlpack_helpers_export_request *rq, DLDevice dev, DLPackVersion p, dlpack_helpers_export_plan *out);
#endif
