/* The baselines of bench_core.c: the rules of each helper as a C programmer writes them.
 * bench_core.c uses them twice: inlined into its loop (the physical limit of the logic), and
 * through the PLT from libbench_baseline.so (baseline.c; the physical limit of a *library
 * call* doing that logic). */
#ifndef BASELINE_H
#define BASELINE_H
#include <stdint.h>
#include "dlpack_helpers.h"
#include "stub_python.h"
static inline bool in_cpu_accessible(DLDevice d) {
  return d.device_type == 1 || d.device_type == 3 || d.device_type == 11 || d.device_type == 13;
}
static inline int in_get_device(const DLManagedTensorVersioned *t, DLDevice *out) {
  if (!out || !t) return 1;
  if (t->version.major != 1) return 10; /* nothing past `version` is read on another major */
  if (t->dl_tensor.device.device_id < 0) return 47; /* no negative id is returned (issue 22) */
  *out = t->dl_tensor.device;
  return 0;
}
static inline int in_version_check(DLPackVersion v, int32_t *out) {
  if (v.major != 1) return 10;
  if (out) *out = v.minor == 3 ? 0 : v.minor < 3 ? 1 : 2;
  return 0;
}
static inline int in_tensor_check_version(const DLManagedTensorVersioned *t, int32_t *out) {
  if (!t) return 1;
  return in_version_check(t->version, out);
}
/* The array API's producer logic (dlpack_version_negotiate after its argument checks):
 * bit 0 of `flags` = the producer exports legacy, bit 1 = its __dlpack__ has no max_version. */
static inline int in_negotiate_rules(DLPackVersion p, uint32_t flags, const DLPackVersion *max,
                                     dlpack_helpers_version_choice *out) {
  if (!max) {
    if (!(flags & 1) && p.major != 0) return 11;
  } else if (flags & 2) {
    return 12;
  } else if (p.major != 0 && max->major >= p.major) { /* max >= p, or the same major */
    out->kind = 1;
    out->version = p;
    return 0;
  } else if (p.major != 0 && !(max->major == 0 && (flags & 1))) {
    return 11;
  }
  out->kind = 0; /* legacy */
  out->version.major = 0;
  out->version.minor = 0;
  return 0;
}
static inline int in_negotiate(DLPackVersion p, uint32_t flags, const DLPackVersion *max,
                               dlpack_helpers_version_choice *out) {
  if (!out) return 1;
  if (flags & ~(uint32_t)3) return 2;
  return in_negotiate_rules(p, flags, max, out);
}
static inline void in_delete(DLManagedTensorVersioned *t) {
  if (t && t->deleter) t->deleter(t);
}
/* The stream table of dlpack_stream_decode (docs/streams.md) after its argument checks;
 * `lenient`: DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM. */
static inline int in_stream_rules(DLDevice d, bool has, int64_t v, int lenient, dlpack_helpers_stream *out) {
  int32_t t = d.device_type;
  int cpu = t == kDLCPU, cuda = t == kDLCUDA || t == kDLCUDAHost || t == kDLCUDAManaged,
      rocm = t == kDLROCM || t == kDLROCMHost;
  int kind;
  uintptr_t h = 0;
  if (!has) {
    kind = cpu ? DLPACK_HELPERS_STREAM_NONE : cuda ? DLPACK_HELPERS_STREAM_LEGACY_DEFAULT : DLPACK_HELPERS_STREAM_DEFAULT;
    h = cuda ? 1 : 0;
  } else if (cpu) {
    if (!lenient) return 40;
    kind = DLPACK_HELPERS_STREAM_NO_SYNC;
  } else if (v == -1) {
    kind = DLPACK_HELPERS_STREAM_NO_SYNC;
  } else if (v < -1) {
    return 40;
  } else if (cuda && v <= 2) {
    if (v == 0) return 40;
    kind = v == 1 ? DLPACK_HELPERS_STREAM_LEGACY_DEFAULT : DLPACK_HELPERS_STREAM_PER_THREAD_DEFAULT;
    h = (uintptr_t)v;
  } else if (rocm && v <= 2) {
    if (v != 0) return 40;
    kind = DLPACK_HELPERS_STREAM_DEFAULT;
  } else if (v == 0 && !cuda && !rocm) {
    return 40;
  } else {
    kind = DLPACK_HELPERS_STREAM_HANDLE;
    h = (uintptr_t)v;
  }
  out->kind = kind;
  out->handle = (void *)h;
  return 0;
}
static inline int in_stream_decode(DLDevice d, bool has, int64_t v, uint32_t flags, dlpack_helpers_stream *out) {
  if (!out) return 1;
  if (flags & ~(uint32_t)DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM) return 2;
  return in_stream_rules(d, has, v, (flags & DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM) != 0, out);
}
static inline int in_resolve(const dlpack_helpers_export_request *rq, DLDevice dev, DLPackVersion p,
                             uint32_t flags, dlpack_helpers_export_plan *out) {
  if (!rq || !out) return 1;
  if (flags & ~(uint32_t)7) return 2;
  if (rq->copy != DLPACK_HELPERS_COPY_IF_NEEDED && rq->copy != DLPACK_HELPERS_COPY_ALWAYS &&
      rq->copy != DLPACK_HELPERS_COPY_NEVER)
    return 2;
  dlpack_helpers_version_choice c;
  int s = in_negotiate_rules(p, flags & 3, rq->has_max_version ? &rq->max_version : NULL, &c);
  if (s) return s;
  DLDevice target = rq->has_dl_device ? rq->dl_device : dev;
  if (dev.device_id < 0 || target.device_id < 0) return 47; /* issue 22 */
  dlpack_helpers_stream st;
  int copy, sync;
  if (target.device_type == dev.device_type && target.device_id == dev.device_id) {
    s = in_stream_rules(target, rq->has_stream, rq->stream, (flags & 4) != 0, &st);
    if (s) return s;
    copy = rq->copy == DLPACK_HELPERS_COPY_ALWAYS;
    sync = st.kind >= DLPACK_HELPERS_STREAM_LEGACY_DEFAULT ? DLPACK_HELPERS_SYNC_STREAM_WAIT : DLPACK_HELPERS_SYNC_NONE;
  } else {
    if (target.device_type != kDLCPU || target.device_id != 0) return 42;
    if (rq->has_stream) return 40;
    if (rq->copy == DLPACK_HELPERS_COPY_ALWAYS) copy = 1;
    else if (in_cpu_accessible(dev)) copy = 0;
    else if (rq->copy == DLPACK_HELPERS_COPY_IF_NEEDED) copy = 1;
    else return 41;
    st.kind = DLPACK_HELPERS_STREAM_NONE;
    st.handle = 0;
    sync = DLPACK_HELPERS_SYNC_HOST;
  }
  out->kind = c.kind;
  out->version = c.version;
  out->device = target;
  out->copy = copy;
  out->flags = copy && c.kind == DLPACK_HELPERS_EXPORT_VERSIONED ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
  out->sync = sync;
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
int bl_stream_decode(DLDevice d, bool has, int64_t v, uint32_t flags, dlpack_helpers_stream *out);
int bl_resolve(const dlpack_helpers_export_request *rq, DLDevice dev, DLPackVersion p, uint32_t flags, dlpack_helpers_export_plan *out);
/* ---- Validation, layout and wrap/unwrap the rules of docs/validation.md as a C
 * programmer writes them, for the tensors the benchmarks pass (and every other input). ---- */
#include <stdlib.h>
#include <string.h>

/* 1: bits allowed for the code, 0: not allowed, -1: unknown code (DLPack 1.3 codes 0-17). */
static inline int in_bits_allowed(uint8_t code, uint8_t bits) {
  switch (code) {
    case 0: case 1: return bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128;
    case 2: return bits == 16 || bits == 32 || bits == 64 || bits == 128;
    case 3: return bits != 0 && bits % 8 == 0;
    case 4: return bits == 16;
    case 5: return bits == 32 || bits == 64 || bits == 128;
    case 6: case 7: case 8: case 9: case 10: case 11: case 12: case 13: case 14: return bits == 8;
    case 15: case 16: return bits == 6;
    case 17: return bits == 4;
    default: return -1;
  }
}
static inline int in_pointer_addressed(int32_t t) {
  return t == 1 || t == 2 || t == 3 || t == 10 || t == 11 || t == 13 || t == 14;
}

/* The layout of a tensor whose version and flags were checked (the loop of
 * dlpack_tensor_layout / the validators): extents, count and reach with overflow checks,
 * contiguity, broadcast, negative strides, byte range. Returns a status. */
static inline int in_layout_of(const DLTensor *t, int padded, int full, dlpack_helpers_layout *out) {
  if (t->ndim < 0 || t->ndim > 1024) return 20;
  if (t->ndim && !t->shape) return 21;
  int in_ok = in_bits_allowed(t->dtype.code, t->dtype.bits);
  if (in_ok <= 0 || t->dtype.lanes == 0) return 26;
  uint32_t ebits = (uint32_t)t->dtype.bits * t->dtype.lanes;
  int sub = ebits % 8 != 0, packed = sub && !padded;
  if (sub && padded) ebits = (ebits + 7) / 8 * 8;
  if (t->byte_offset > (uint64_t)INT64_MAX) return 24;
  int64_t off = (int64_t)t->byte_offset;
  uint32_t props = packed ? DLPACK_HELPERS_LAYOUT_PACKED_SUB_BYTE : 0;
  if (t->ndim && !t->strides) props |= DLPACK_HELPERS_LAYOUT_STRIDES_IMPLIED;
  int64_t n = 1, lo = 0, hi = 0;
  int c = 1, zero = 0, count_ovf = 0, reach_ovf = 0;
  for (int i = t->ndim - 1; i >= 0; --i) {
    int64_t e = t->shape[i];
    if (e <= 1) {
      if (e < 0) return 23;
      zero |= e == 0;
      continue;
    }
    int64_t s = t->strides ? t->strides[i] : n, r;
    c &= s == n;
    if (__builtin_mul_overflow(n, e, &n)) count_ovf = 1;
    if (__builtin_mul_overflow(e - 1, s, &r)) reach_ovf = 1;
    else if (r < 0) { props |= DLPACK_HELPERS_LAYOUT_NEGATIVE_STRIDES; if (__builtin_add_overflow(lo, r, &lo)) reach_ovf = 1; }
    else { if (r == 0) props |= DLPACK_HELPERS_LAYOUT_BROADCAST; if (__builtin_add_overflow(hi, r, &hi)) reach_ovf = 1; }
  }
  if (zero) {
    out->numel = out->nbytes = out->storage_elements = 0;
    out->lowest_byte = out->end_byte = off;
    out->properties = (props & ~(uint32_t)(DLPACK_HELPERS_LAYOUT_NEGATIVE_STRIDES | DLPACK_HELPERS_LAYOUT_BROADCAST)) |
                      DLPACK_HELPERS_LAYOUT_EMPTY | DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS | DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS |
                      DLPACK_HELPERS_LAYOUT_COMPACT;
    out->element_bits = ebits;
    return 0;
  }
  if (count_ovf || reach_ovf) return 24;
  if (c) props |= DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS | DLPACK_HELPERS_LAYOUT_COMPACT;
  if (full && t->strides) {
    int f = 1;
    int64_t expected = 1;
    for (int i = 0; i < t->ndim; ++i) {
      if (t->shape[i] == 1) continue;
      if (t->strides[i] != expected) { f = 0; break; }
      expected *= t->shape[i];
    }
    if (f) props |= DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS | DLPACK_HELPERS_LAYOUT_COMPACT;
    else if (!c && !(props & (DLPACK_HELPERS_LAYOUT_BROADCAST | DLPACK_HELPERS_LAYOUT_NEGATIVE_STRIDES))) {
      /* compact in some order: take the non-trivial dimensions by increasing stride */
      uint64_t used[16] = {0};
      int remaining = 0;
      for (int i = 0; i < t->ndim; ++i) remaining += t->shape[i] != 1;
      int64_t ex = 1;
      int ok = 1;
      while (ok && remaining > 0) {
        int found = -1;
        for (int i = 0; i < t->ndim; ++i)
          if (t->shape[i] != 1 && !(used[i / 64] & (1ULL << (i % 64))) && t->strides[i] == ex) { found = i; break; }
        if (found < 0) ok = 0;
        else { used[found / 64] |= 1ULL << (found % 64); ex *= t->shape[found]; --remaining; }
      }
      if (ok) props |= DLPACK_HELPERS_LAYOUT_COMPACT;
    }
  } else if (!t->strides) {
    int nontrivial = 0;
    for (int i = 0; i < t->ndim; ++i) nontrivial += t->shape[i] != 1;
    if (nontrivial <= 1) props |= DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS;
    hi = n - 1;
  }
  int64_t nbytes, lob, endb, storage;
  if (__builtin_sub_overflow(hi, lo, &storage) || __builtin_add_overflow(storage, 1, &storage)) return 24;
  if (ebits % 8 == 0) {
    int64_t size = ebits / 8, a, b;
    if (__builtin_mul_overflow(n, size, &nbytes) || __builtin_mul_overflow(lo, size, &a) ||
        __builtin_add_overflow(off, a, &lob) || __builtin_mul_overflow(hi + 1, size, &b) ||
        __builtin_add_overflow(off, b, &endb))
      return 24;
  } else {
    __int128 bb = ebits, nn = (__int128)n * bb + 7, l = off + (((__int128)lo * bb) >> 3),
             h = off + ((((__int128)hi + 1) * bb + 7) >> 3);
    nn >>= 3;
    if (nn > INT64_MAX || l < INT64_MIN || l > INT64_MAX || h > INT64_MAX) return 24;
    nbytes = (int64_t)nn; lob = (int64_t)l; endb = (int64_t)h;
  }
  out->numel = n;
  out->nbytes = nbytes;
  out->storage_elements = storage;
  out->lowest_byte = lob;
  out->end_byte = endb;
  out->properties = props;
  out->element_bits = ebits;
  return 0;
}

static inline uint64_t in_first_alignment(const DLTensor *t) {
  uint64_t a = in_pointer_addressed(t->device.device_type) ? (uint64_t)(uintptr_t)t->data + t->byte_offset : t->byte_offset;
  return a & (~a + 1);
}

/* Version and flags of a versioned tensor (rules 2-3). */
static inline int in_versioned_header(const DLManagedTensorVersioned *m) {
  if (m->version.major != 1) return 10;
  /* 1.0 defines READ_ONLY and IS_COPIED, 1.1 adds IS_SUBBYTE_TYPE_PADDED; minors after 1.3 may
   * carry bits this library does not know */
  uint64_t known = m->version.minor == 0 ? 3 : 7;
  if ((m->flags & ~known) && m->version.minor <= 3) return 28;
  return 0;
}

/* dlpack_tensor_layout */
static inline int in_tensor_layout(const DLManagedTensorVersioned *m, dlpack_helpers_layout *out) {
  if (!out || !m) return 1;
  int s = in_versioned_header(m);
  if (s) return s;
  s = in_layout_of(&m->dl_tensor, (m->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0, 1, out);
  if (s) return s;
  out->first_element_alignment = in_first_alignment(&m->dl_tensor);
  return 0;
}

/* Rules 4-9 for a tensor whose header passed: NULL strides (when required), the layout
 * checks, NULL data and the address range; `require_c`: REQUIRE_C_CONTIGUOUS. */
static inline int in_check_tensor(const DLTensor *t, int strides_required, int padded, int require_c,
                                  dlpack_helpers_layout *l) {
  if (t->ndim < 0 || t->ndim > 1024) return 20;
  if (t->ndim && !t->shape) return 21;
  if (t->ndim && !t->strides && strides_required) return 22;
  int s = in_layout_of(t, padded, 0, l);
  if (s) return s;
  if (t->device.device_id < 0) return 47; /* issue 22 */
  if (l->numel && in_pointer_addressed(t->device.device_type)) {
    if (!t->data) return 25;
    uintptr_t d = (uintptr_t)t->data, end;
    if ((l->lowest_byte < 0 && d < (uintptr_t)-l->lowest_byte) || __builtin_add_overflow(d, (uint64_t)l->end_byte, &end))
      return 24;
  }
  if (require_c && !(l->properties & DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS)) return 29;
  return 0;
}

/* dlpack_tensor_validate(m, {REQUIRE_C_CONTIGUOUS}, NULL) */
static inline int in_validate_c(const DLManagedTensorVersioned *m) {
  if (!m) return 1;
  int s = in_versioned_header(m);
  if (s) return s;
  dlpack_helpers_layout l;
  return in_check_tensor(&m->dl_tensor, m->version.minor >= 2, (m->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0, 1, &l);
}

/* The wrappers: one allocation holding the new struct, the original's address, shape and
 * strides; the deleter frees it and releases the original once. */
typedef struct { DLManagedTensorVersioned head; DLManagedTensor *src; } in_vwrap;
typedef struct { DLManagedTensor head; DLManagedTensorVersioned *src; } in_lwrap;
static void in_vwrap_deleter(DLManagedTensorVersioned *self) {
  DLManagedTensor *src = ((in_vwrap *)self)->src;
  free(self);
  if (src->deleter) src->deleter(src);
}
static void in_lwrap_deleter(DLManagedTensor *self) {
  DLManagedTensorVersioned *src = ((in_lwrap *)self)->src;
  free(self);
  if (src->deleter) src->deleter(src);
}
static inline void in_copy_dims(const DLTensor *t, int64_t *shape, int64_t *strides) {
  for (int i = 0; i < t->ndim; ++i) shape[i] = t->shape[i];
  if (t->strides) {
    for (int i = 0; i < t->ndim; ++i) strides[i] = t->strides[i];
  } else {
    int64_t acc = 1;
    for (int i = t->ndim - 1; i >= 0; --i) { strides[i] = acc; acc *= t->shape[i] > 1 ? t->shape[i] : 1; }
  }
}

/* dlpack_legacy_to_versioned */
static inline int in_legacy_to_versioned(DLManagedTensor *lg, uint64_t flags, DLManagedTensorVersioned **out) {
  if (!out || !lg) return 1;
  if (flags & ~(uint64_t)7) return 28;
  dlpack_helpers_layout l;
  int s = in_check_tensor(&lg->dl_tensor, 0, 0, 0, &l);
  if (s) return s;
  size_t nd = (size_t)lg->dl_tensor.ndim;
  in_vwrap *w = (in_vwrap *)malloc(sizeof *w + 2 * nd * sizeof(int64_t));
  if (!w) return 37;
  int64_t *dims = (int64_t *)(w + 1);
  in_copy_dims(&lg->dl_tensor, dims, dims + nd);
  w->head.version.major = 1;
  w->head.version.minor = 3;
  w->head.manager_ctx = lg;
  w->head.deleter = in_vwrap_deleter;
  w->head.flags = flags;
  w->head.dl_tensor = lg->dl_tensor;
  w->head.dl_tensor.shape = dims;
  w->head.dl_tensor.strides = dims + nd;
  w->src = lg;
  *out = &w->head;
  return 0;
}

/* dlpack_versioned_to_legacy */
static inline int in_versioned_to_legacy(DLManagedTensorVersioned *m, uint32_t options, uint64_t *dropped,
                                         DLManagedTensor **out) {
  if (!out || !m) return 1;
  if (options & ~(uint32_t)1) return 2;
  int s = in_versioned_header(m);
  if (s) return s;
  dlpack_helpers_layout l;
  int padded = (m->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
  s = in_check_tensor(&m->dl_tensor, 0, padded, 0, &l);
  if (s) return s;
  if ((m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) && !(options & 1)) return 32;
  if (padded && ((uint32_t)m->dl_tensor.dtype.bits * m->dl_tensor.dtype.lanes) % 8) return 28;
  size_t nd = (size_t)m->dl_tensor.ndim;
  in_lwrap *w = (in_lwrap *)malloc(sizeof *w + 2 * nd * sizeof(int64_t));
  if (!w) return 37;
  int64_t *dims = (int64_t *)(w + 1);
  in_copy_dims(&m->dl_tensor, dims, dims + nd);
  w->head.dl_tensor = m->dl_tensor;
  w->head.dl_tensor.shape = dims;
  w->head.dl_tensor.strides = dims + nd;
  w->head.manager_ctx = m;
  w->head.deleter = in_lwrap_deleter;
  w->src = m;
  if (dropped) *dropped = m->flags;
  *out = &w->head;
  return 0;
}

/* dlpack_compact_strides */
static inline int in_compact_strides(int32_t ndim, const int64_t *shape, bool column_major, int64_t *out) {
  if (ndim < 0 || ndim > 1024) return 20;
  if (ndim == 0) return 0;
  if (!out || !shape) return 1;
  int64_t tmp[1024]; /* written only on OK, as ours */
  int64_t acc = 1;
  for (int i = 0; i < ndim; ++i)
    if (shape[i] < 0) return 23;
  for (int k = 0; k < ndim; ++k) {
    int i = column_major ? k : ndim - 1 - k;
    tmp[i] = acc;
    if (k + 1 < ndim && __builtin_mul_overflow(acc, shape[i] > 1 ? shape[i] : 1, &acc)) return 24;
  }
  memcpy(out, tmp, (size_t)ndim * sizeof *out);
  return 0;
}

/* dlpack_tensor_create: validate the description (default options: full layout, NULL strides
 * read as row-major), then one block holding the struct, the release callback, shape and
 * strides; the deleter frees it and calls release(ctx) once. */
typedef struct { DLManagedTensorVersioned head; void (*release)(void *); } in_cwrap;
static void in_cwrap_deleter(DLManagedTensorVersioned *self) {
  void (*release)(void *) = ((in_cwrap *)self)->release;
  void *ctx = self->manager_ctx;
  free(self);
  if (release) release(ctx);
}
static inline int in_tensor_create(void *data, DLDevice device, int32_t ndim, const int64_t *shape,
                                   const int64_t *strides, DLDataType dtype, uint64_t byte_offset,
                                   uint64_t flags, void (*release)(void *), void *ctx,
                                   DLManagedTensorVersioned **out) {
  if (!out) return 1;
  if (!shape && ndim > 0) return 1;
  const uint64_t allow = flags >> 63; /* DLPACK_HELPERS_CREATE_ALLOW_UNASSIGNED_DEVICE */
  flags &= ~((uint64_t)1 << 63);
  if (flags & ~(uint64_t)7) return 28;
  if (device.device_id < 0) return 47; /* issue 22 */
  if (!allow && !((device.device_type >= 1 && device.device_type <= 4) ||
                  (device.device_type >= 7 && device.device_type <= 18)))
    return 47;
  DLTensor t;
  t.data = data;
  t.device = device;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = (int64_t *)shape;
  t.strides = (int64_t *)strides;
  t.byte_offset = byte_offset;
  dlpack_helpers_layout l;
  int padded = (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
  int s = in_layout_of(&t, padded, 1, &l);
  if (s) return s;
  if (l.numel && in_pointer_addressed(device.device_type)) {
    if (!data) return 25;
    uintptr_t d = (uintptr_t)data, end;
    if ((l.lowest_byte < 0 && d < (uintptr_t)-l.lowest_byte) || __builtin_add_overflow(d, (uint64_t)l.end_byte, &end))
      return 24;
  }
  size_t nd = (size_t)ndim;
  in_cwrap *w = (in_cwrap *)malloc(sizeof *w + 2 * nd * sizeof(int64_t));
  if (!w) return 37;
  int64_t *dims = (int64_t *)(w + 1);
  in_copy_dims(&t, dims, dims + nd);
  w->head.version.major = 1;
  w->head.version.minor = 3;
  w->head.manager_ctx = ctx;
  w->head.deleter = in_cwrap_deleter;
  w->head.flags = flags;
  w->head.dl_tensor = t;
  w->head.dl_tensor.shape = dims;
  w->head.dl_tensor.strides = nd ? dims + nd : NULL;
  w->release = release;
  *out = &w->head;
  return 0;
}

/* Names (docs of dlpack_dtype_format / dlpack_device_format): the same tables, by index. */
static const char *const in_fixed_names[18] = {
    [4] = "bfloat16", [6] = "bool", [7] = "float8_e3m4", [8] = "float8_e4m3", [9] = "float8_e4m3b11fnuz",
    [10] = "float8_e4m3fn", [11] = "float8_e4m3fnuz", [12] = "float8_e5m2", [13] = "float8_e5m2fnuz",
    [14] = "float8_e8m0fnu", [15] = "float6_e2m3fn", [16] = "float6_e3m2fn", [17] = "float4_e2m1fn"};
static const char *const in_family_names[6] = {"int", "uint", "float", "handle", NULL, "complex"};
static const char *const in_device_names[19] = {
    [1] = "cpu", [2] = "cuda", [3] = "cuda_host", [4] = "opencl", [7] = "vulkan", [8] = "metal",
    [9] = "vpi", [10] = "rocm", [11] = "rocm_host", [12] = "ext_dev", [13] = "cuda_managed",
    [14] = "oneapi", [15] = "webgpu", [16] = "hexagon", [17] = "maia", [18] = "trn"};
static inline size_t in_put_decimal(char *p, uint32_t v) {
  char t[10];
  size_t n = 0;
  do { t[n++] = (char)('0' + v % 10); v /= 10; } while (v);
  for (size_t i = 0; i < n; ++i) p[i] = t[n - 1 - i];
  return n;
}
static inline int in_put_name(const char *tmp, size_t n, char *buf, size_t size, size_t *out_len) {
  if (size < n + 1) {
    if (out_len) *out_len = n; /* the length needed (issue 22) */
    return 34;
  }
  memcpy(buf, tmp, n);
  buf[n] = 0;
  if (out_len) *out_len = n;
  return 0;
}
static inline int in_dtype_format(DLDataType dt, char *buf, size_t size, size_t *out_len) {
  if (!buf) return 1;
  if (in_bits_allowed(dt.code, dt.bits) <= 0 || dt.lanes == 0) return 26;
  char tmp[32];
  size_t n;
  const char *f = in_fixed_names[dt.code];
  if (f) {
    n = strlen(f);
    memcpy(tmp, f, n);
  } else {
    f = in_family_names[dt.code];
    n = strlen(f);
    memcpy(tmp, f, n);
    n += in_put_decimal(tmp + n, dt.bits);
  }
  if (dt.lanes > 1) {
    tmp[n++] = 'x';
    n += in_put_decimal(tmp + n, dt.lanes);
  }
  return in_put_name(tmp, n, buf, size, out_len);
}
static inline int in_device_format(DLDevice d, char *buf, size_t size, size_t *out_len) {
  if (!buf) return 1;
  if (d.device_id < 0) return 47; /* INVALID_DEVICE, checked first (issue 22) */
  if (d.device_type < 0 || d.device_type > 18 || !in_device_names[d.device_type]) return 35;
  char tmp[32];
  const char *f = in_device_names[d.device_type];
  size_t n = strlen(f);
  memcpy(tmp, f, n);
  tmp[n++] = ':';
  n += in_put_decimal(tmp + n, (uint32_t)d.device_id);
  return in_put_name(tmp, n, buf, size, out_len);
}
/* A decimal of 1-10 digits without a leading zero; -1 when it is not one (or > UINT32_MAX). */
static inline int64_t in_parse_decimal(const char *s, size_t n) {
  if (n == 0 || n > 10 || (n > 1 && s[0] == '0')) return -1;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v > (int64_t)UINT32_MAX ? -1 : v;
}
/* Non-UTF-8 input: ours checks it (CStr::to_str) and refuses it; a name is ASCII. */
static inline int in_ascii(const char *s, size_t *len) {
  size_t n = 0;
  for (; s[n]; ++n)
    if ((unsigned char)s[n] >= 0x80) return 0;
  *len = n;
  return 1;
}
static inline int in_parse_scalar(const char *s, size_t n, uint8_t *code, uint8_t *bits) {
  for (int c = 4; c < 18; ++c) {
    const char *f = in_fixed_names[c];
    if (f && strlen(f) == n && memcmp(f, s, n) == 0) {
      *code = (uint8_t)c;
      *bits = c == 4 ? 16 : c == 15 || c == 16 ? 6 : c == 17 ? 4 : 8;
      return 1;
    }
  }
  for (int c = 0; c < 6; ++c) {
    const char *f = in_family_names[c];
    size_t k = f ? strlen(f) : 0;
    if (f && n >= k && memcmp(f, s, k) == 0) {
      int64_t b = in_parse_decimal(s + k, n - k);
      if (b < 0 || b > 255) continue;
      *code = (uint8_t)c;
      *bits = (uint8_t)b;
      return 1;
    }
  }
  return 0;
}
static inline int in_dtype_parse(const char *s, DLDataType *out) {
  if (!out || !s) return 1;
  size_t n;
  if (!in_ascii(s, &n)) return 35;
  uint8_t code, bits;
  size_t base = n;
  int64_t lanes = 1;
  const char *x = NULL;
  for (size_t i = n; i-- > 0;)
    if (s[i] == 'x') { x = s + i; break; }
  if (x) {
    int64_t l = in_parse_decimal(x + 1, n - (size_t)(x + 1 - s));
    if (l >= 0 && in_parse_scalar(s, (size_t)(x - s), &code, &bits)) {
      base = (size_t)(x - s);
      lanes = l;
    }
  }
  if (!in_parse_scalar(s, base, &code, &bits)) return 35;
  if (lanes > 65535 || (lanes == 1 && base != n)) return 35;
  if (in_bits_allowed(code, bits) <= 0 || lanes == 0) return 35;
  out->code = code;
  out->bits = bits;
  out->lanes = (uint16_t)lanes;
  return 0;
}
static inline int in_device_parse(const char *s, DLDevice *out) {
  if (!out || !s) return 1;
  size_t n;
  if (!in_ascii(s, &n)) return 35;
  const char *colon = memchr(s, ':', n);
  size_t k = colon ? (size_t)(colon - s) : n;
  int64_t id = 0;
  if (colon) {
    id = in_parse_decimal(colon + 1, n - k - 1);
    if (id < 0 || id > INT32_MAX) return 35;
  }
  for (int t = 1; t < 19; ++t) {
    const char *f = in_device_names[t];
    if (f && strlen(f) == k && memcmp(f, s, k) == 0) {
      out->device_type = t;
      out->device_id = (int32_t)id;
      return 0;
    }
  }
  return 35;
}

/* Capsules (docs/python.md), against the stub Python of stub_python.c. */
static inline int in_capsule_new(DLManagedTensorVersioned *t, void **out) {
  if (!out || !t) return 1;
  void *c = PyCapsule_New(t, "dltensor_versioned", (void (*)(void *))dlpack_capsule_destructor);
  if (!c) return 67;
  *out = c;
  return 0;
}
typedef struct { DLManagedTensorVersioned head; DLManagedTensor *legacy; } in_capsule_wrap;
static void in_capsule_wrap_deleter(DLManagedTensorVersioned *self) {
  DLManagedTensor *l = ((in_capsule_wrap *)self)->legacy;
  free(self);
  if (l && l->deleter) l->deleter(l);
}
static inline int in_capsule_consume(void *cap, DLManagedTensorVersioned **out) {
  if (!out || !cap) return 1;
  void *type = PyObject_Type(cap);
  Py_DecRef(type);
  if (type != (void *)&PyCapsule_Type) return 61;
  const char *name = PyCapsule_GetName(cap);
  if (!name) {
    PyErr_Clear();
    name = "";
  }
  int legacy;
  if (strcmp(name, "dltensor") == 0) legacy = 1;
  else if (strcmp(name, "dltensor_versioned") == 0) legacy = 0;
  else if (strcmp(name, "used_dltensor") == 0 || strcmp(name, "used_dltensor_versioned") == 0) return 63;
  else return 62;
  void *p = PyCapsule_GetPointer(cap, legacy ? "dltensor" : "dltensor_versioned");
  if (!p) return 67;
  if (PyCapsule_SetName(cap, legacy ? "used_dltensor" : "used_dltensor_versioned")) return 67;
  if (legacy) {
    DLManagedTensor *l = (DLManagedTensor *)p;
    in_capsule_wrap *w = (in_capsule_wrap *)malloc(sizeof *w);
    if (!w) abort(); /* as a Rust Box: allocation failure aborts */
    memset(&w->head, 0, sizeof w->head);
    w->head.version.major = 1;
    w->head.manager_ctx = l;
    w->head.deleter = in_capsule_wrap_deleter;
    w->head.dl_tensor = l->dl_tensor;
    w->legacy = l;
    *out = &w->head;
    return 0;
  }
  DLManagedTensorVersioned *t = (DLManagedTensorVersioned *)p;
  if (t->version.major != 1) {
    if (t->deleter) t->deleter(t);
    return 10;
  }
  /* Only the flag bits the declared version defines (1.0: READ_ONLY, IS_COPIED; 1.1 to 1.3:
   * also IS_SUBBYTE_TYPE_PADDED; newer minors: not checked), as the library's import rule. */
  uint64_t known = t->version.minor == 0 ? 0x3 : 0x7;
  if (t->version.minor <= 3 && (t->flags & ~known)) {
    if (t->deleter) t->deleter(t);
    return 28; /* DLPACK_HELPERS_STATUS_INVALID_FLAGS */
  }
  *out = t;
  return 0;
}

/* Exported from libbench_baseline.so (baseline.c). */
int bl_validate_c(const DLManagedTensorVersioned *m);
int bl_tensor_layout(const DLManagedTensorVersioned *m, dlpack_helpers_layout *out);
int bl_legacy_to_versioned(DLManagedTensor *lg, uint64_t flags, DLManagedTensorVersioned **out);
int bl_versioned_to_legacy(DLManagedTensorVersioned *m, uint32_t options, uint64_t *dropped, DLManagedTensor **out);
int bl_compact_strides(int32_t ndim, const int64_t *shape, bool column_major, int64_t *out);
int bl_tensor_create(void *data, DLDevice device, int32_t ndim, const int64_t *shape, const int64_t *strides,
                     DLDataType dtype, uint64_t byte_offset, uint64_t flags, void (*release)(void *), void *ctx,
                     DLManagedTensorVersioned **out);
int bl_dtype_format(DLDataType dt, char *buf, size_t size, size_t *out_len);
int bl_dtype_parse(const char *s, DLDataType *out);
int bl_device_format(DLDevice d, char *buf, size_t size, size_t *out_len);
int bl_device_parse(const char *s, DLDevice *out);
int bl_capsule_new(DLManagedTensorVersioned *t, void **out);
int bl_capsule_consume(void *cap, DLManagedTensorVersioned **out);
#endif
