/* C-level benchmarks of the hot helpers through the shared library (the path users take: a
 * PLT call into libdlpack_helpers.so with real DLPack structs), each paired with the same logic
 * written inline here: the physical limit of a library call. Output, one line per helper:
 *   name  lib_ns  inline_ns  ratio
 * Run by scripts/bench (timings and callgrind instruction counts); `--quick` for a smoke run.
 * A benchmark, not a test: nothing here asserts time. */
#include "bench.h"
#include "dlpack_helpers.h"
#include "baseline.h"

static int64_t shape4[4] = {2, 3, 4, 5}, strides4[4] = {60, 20, 5, 1};
static long deleted;
static void count_deleter(DLManagedTensorVersioned *t) { (void)t; ++deleted; }

static DLManagedTensorVersioned make_tensor(void) {
  DLManagedTensorVersioned t;
  memset(&t, 0, sizeof t);
  t.version.major = 1;
  t.version.minor = 3;
  t.deleter = count_deleter;
  t.dl_tensor.device.device_type = kDLCPU;
  t.dl_tensor.ndim = 4;
  t.dl_tensor.dtype.code = kDLFloat;
  t.dl_tensor.dtype.bits = 32;
  t.dl_tensor.dtype.lanes = 1;
  t.dl_tensor.shape = shape4;
  t.dl_tensor.strides = strides4;
  return t;
}

static inline DLDevice dev(int32_t type, int32_t id) {
  DLDevice d;
  d.device_type = type;
  d.device_id = id;
  return d;
}
static inline DLPackVersion ver(uint32_t major, uint32_t minor) {
  DLPackVersion v;
  v.major = major;
  v.minor = minor;
  return v;
}

/* Inputs vary with the iteration so that nothing is loop-invariant. */
static const int32_t dev_types[8] = {kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, kDLCPU, kDLCUDAManaged, kDLOneAPI, kDLROCMHost};

DEF(is_cpu_accessible, ,
    { DLDevice d = dev(dev_types[i & 7], 0); KEEP(dlpack_is_cpu_accessible(d)); },
    { DLDevice d = dev(dev_types[i & 7], 0); KEEP(in_cpu_accessible(d)); },
    { DLDevice d = dev(dev_types[i & 7], 0); KEEP(bl_cpu_accessible(d)); })
DEF(get_device, DLManagedTensorVersioned t = make_tensor(); DLDevice out = dev(0, 0),
    { t.dl_tensor.device.device_id = (int32_t)(i & 3); KEEP(dlpack_get_device(&t, &out)); KEEP(out.device_id); },
    { t.dl_tensor.device.device_id = (int32_t)(i & 3); KEEP(in_get_device(&t, &out)); KEEP(out.device_id); },
    { t.dl_tensor.device.device_id = (int32_t)(i & 3); KEEP(bl_get_device(&t, &out)); KEEP(out.device_id); })
DEF(version_check, int32_t c = 0,
    { DLPackVersion v = ver(1, (uint32_t)(i & 7)); KEEP(dlpack_version_check(v, &c)); KEEP(c); },
    { DLPackVersion v = ver(1, (uint32_t)(i & 7)); KEEP(in_version_check(v, &c)); KEEP(c); },
    { DLPackVersion v = ver(1, (uint32_t)(i & 7)); KEEP(bl_version_check(v, &c)); KEEP(c); })
DEF(tensor_check_version, DLManagedTensorVersioned t = make_tensor(); int32_t c = 0,
    { t.version.minor = (uint32_t)(i & 7); KEEP(dlpack_tensor_check_version(&t, &c)); KEEP(c); },
    { t.version.minor = (uint32_t)(i & 7); KEEP(in_tensor_check_version(&t, &c)); KEEP(c); },
    { t.version.minor = (uint32_t)(i & 7); KEEP(bl_tensor_check_version(&t, &c)); KEEP(c); })
DEF(version_negotiate, dlpack_helpers_version_choice ch; DLPackVersion p = ver(1, 3),
    { DLPackVersion m = ver(1, (uint32_t)(i & 7)); KEEP(dlpack_version_negotiate(p, 1, &m, &ch)); KEEP(ch.kind); },
    { DLPackVersion m = ver(1, (uint32_t)(i & 7)); KEEP(in_negotiate(p, 1, &m, &ch)); KEEP(ch.kind); },
    { DLPackVersion m = ver(1, (uint32_t)(i & 7)); KEEP(bl_negotiate(p, 1, &m, &ch)); KEEP(ch.kind); })
DEF(tensor_delete, DLManagedTensorVersioned t = make_tensor(),
    { dlpack_tensor_delete(&t); KEEP(deleted); },
    { in_delete(&t); KEEP(deleted); },
    { bl_delete(&t); KEEP(deleted); })
DEF(stream_decode, dlpack_helpers_stream st; DLDevice d = dev(kDLCUDA, 0),
    { KEEP(dlpack_stream_decode(d, true, (int64_t)(i & 7) + 1, 0, &st)); KEEP(st.handle); },
    { KEEP(in_stream_decode(d, true, (int64_t)(i & 7) + 1, 0, &st)); KEEP(st.handle); },
    { KEEP(bl_stream_decode(d, true, (int64_t)(i & 7) + 1, 0, &st)); KEEP(st.handle); })
DEF(export_request_resolve,
    dlpack_helpers_export_request rq; memset(&rq, 0, sizeof rq); rq.has_max_version = true;
    rq.max_version.major = 1; rq.max_version.minor = 3; rq.has_stream = true;
    dlpack_helpers_export_plan plan; memset(&plan, 0, sizeof plan); DLDevice d = dev(kDLCUDA, 0); DLPackVersion p = ver(1, 3),
    { rq.stream = (int64_t)(i & 7) + 1; KEEP(dlpack_export_request_resolve(&rq, d, p, 1, &plan)); KEEP(plan.sync); },
    { rq.stream = (int64_t)(i & 7) + 1; KEEP(in_resolve(&rq, d, p, 1, &plan)); KEEP(plan.sync); },
    { rq.stream = (int64_t)(i & 7) + 1; KEEP(bl_resolve(&rq, d, p, 1, &plan)); KEEP(plan.sync); })

/* Validation, layout and wrap/unwrap. Tensors: float32, C-contiguous, extents 2
 * (ndim 64: every other extent is 1, so that the element count, 2^32, fits), byte_offset
 * varying with the iteration (0..28, element-aligned) so nothing is loop-invariant. */
static float data[64];
static int64_t shapes[65][64], cstrides[65][64];
static long ldeleted;
static void count_ldeleter(DLManagedTensor *t) { (void)t; ++ldeleted; }

static DLManagedTensorVersioned make_nd(int nd) {
  int64_t *sh = shapes[nd], *st = cstrides[nd], acc = 1;
  for (int i = nd - 1; i >= 0; --i) {
    sh[i] = (nd <= 32 || i % 2 == 0) ? 2 : 1;
    st[i] = acc;
    acc *= sh[i];
  }
  DLManagedTensorVersioned t = make_tensor();
  t.dl_tensor.data = data;
  t.dl_tensor.ndim = nd;
  t.dl_tensor.shape = sh;
  t.dl_tensor.strides = st;
  return t;
}
static dlpack_helpers_validate_options c_contiguous(void) {
  dlpack_helpers_validate_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.flags = DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS;
  return o;
}
/* dlpack_tensor_validate(t, {REQUIRE_C_CONTIGUOUS}, NULL) for an ndim-N tensor. */
#define DEF_VALIDATE(N)                                                                         \
  DEF(tensor_validate_##N##d, DLManagedTensorVersioned t = make_nd(N);                          \
      dlpack_helpers_validate_options o = c_contiguous(); (void)o,                              \
      { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(dlpack_tensor_validate(&t, &o, NULL)); }, \
      { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(in_validate_c(&t)); },             \
      { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(bl_validate_c(&t)); })
DEF_VALIDATE(1)
DEF_VALIDATE(2)
DEF_VALIDATE(4)
DEF_VALIDATE(8)
DEF_VALIDATE(16)
DEF_VALIDATE(32)
DEF_VALIDATE(64)
/* dlpack_tensor_layout of the same tensors (the ndim scaling of layout). */
#define DEF_LAYOUT(N)                                                                           \
  DEF(tensor_layout_##N##d, DLManagedTensorVersioned t = make_nd(N); dlpack_helpers_layout l,  \
      { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(dlpack_tensor_layout(&t, &l)); KEEP(l.nbytes); }, \
      { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(in_tensor_layout(&t, &l)); KEEP(l.nbytes); },     \
      { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(bl_tensor_layout(&t, &l)); KEEP(l.nbytes); })
DEF_LAYOUT(1)
DEF_LAYOUT(2)
DEF_LAYOUT(8)
DEF_LAYOUT(16)
DEF_LAYOUT(32)
DEF_LAYOUT(64)
DEF(tensor_layout, DLManagedTensorVersioned t = make_nd(4); dlpack_helpers_layout l,
    { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(dlpack_tensor_layout(&t, &l)); KEEP(l.nbytes); },
    { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(in_tensor_layout(&t, &l)); KEEP(l.nbytes); },
    { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(bl_tensor_layout(&t, &l)); KEEP(l.nbytes); })
/* Wrap a 4-d legacy tensor, then release the wrapper (which releases the original once). */
#define LEGACY_SETUP                                                    \
  DLManagedTensorVersioned v = make_nd(4); DLManagedTensor lg;          \
  memset(&lg, 0, sizeof lg); lg.dl_tensor = v.dl_tensor; lg.deleter = count_ldeleter; \
  DLManagedTensorVersioned *w = NULL
DEF(legacy_to_versioned, LEGACY_SETUP,
    { lg.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(dlpack_legacy_to_versioned(&lg, 0, &w)); w->deleter(w); KEEP(ldeleted); },
    { lg.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(in_legacy_to_versioned(&lg, 0, &w)); w->deleter(w); KEEP(ldeleted); },
    { lg.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(bl_legacy_to_versioned(&lg, 0, &w)); w->deleter(w); KEEP(ldeleted); })
DEF(versioned_to_legacy, DLManagedTensorVersioned t = make_nd(4); DLManagedTensor *w = NULL; uint64_t dropped,
    { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(dlpack_versioned_to_legacy(&t, 0, &dropped, &w)); w->deleter(w); KEEP(deleted); },
    { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(in_versioned_to_legacy(&t, 0, &dropped, &w)); w->deleter(w); KEEP(deleted); },
    { t.dl_tensor.byte_offset = (uint64_t)(i & 7) * 4; KEEP(bl_versioned_to_legacy(&t, 0, &dropped, &w)); w->deleter(w); KEEP(deleted); })

/* Names, compact strides and creation (issue 15). Inputs cycle through 8 values. */
static const DLDataType dtypes8[8] = {{kDLFloat, 32, 1}, {kDLInt, 64, 1}, {kDLBfloat, 16, 1}, {kDLFloat8_e4m3fn, 8, 1},
                                      {kDLUInt, 8, 1},   {kDLFloat, 16, 4}, {kDLComplex, 64, 1}, {kDLBool, 8, 1}};
static const char *const dtype_names8[8] = {"float32", "int64", "bfloat16", "float8_e4m3fn",
                                            "uint8",   "float16x4", "complex64", "bool"};
static const char *const device_names8[8] = {"cpu:0", "cuda:1", "cuda_host", "rocm:3",
                                             "cuda_managed:0", "oneapi:2", "cpu", "cuda:12"};
static long released;
static void count_release(void *ctx) { (void)ctx; ++released; }
DEF(dtype_format, char buf[32]; size_t len = 0,
    { KEEP(dlpack_dtype_format(dtypes8[i & 7], buf, sizeof buf, &len)); KEEP(len); },
    { KEEP(in_dtype_format(dtypes8[i & 7], buf, sizeof buf, &len)); KEEP(len); },
    { KEEP(bl_dtype_format(dtypes8[i & 7], buf, sizeof buf, &len)); KEEP(len); })
DEF(dtype_parse, DLDataType dt = dtypes8[0],
    { KEEP(dlpack_dtype_parse(dtype_names8[i & 7], &dt)); KEEP(dt.bits); },
    { KEEP(in_dtype_parse(dtype_names8[i & 7], &dt)); KEEP(dt.bits); },
    { KEEP(bl_dtype_parse(dtype_names8[i & 7], &dt)); KEEP(dt.bits); })
DEF(device_format, char buf[32]; size_t len = 0,
    { KEEP(dlpack_device_format(dev(dev_types[i & 7], (int32_t)(i & 15)), buf, sizeof buf, &len)); KEEP(len); },
    { KEEP(in_device_format(dev(dev_types[i & 7], (int32_t)(i & 15)), buf, sizeof buf, &len)); KEEP(len); },
    { KEEP(bl_device_format(dev(dev_types[i & 7], (int32_t)(i & 15)), buf, sizeof buf, &len)); KEEP(len); })
DEF(device_parse, DLDevice d = dev(0, 0),
    { KEEP(dlpack_device_parse(device_names8[i & 7], &d)); KEEP(d.device_id); },
    { KEEP(in_device_parse(device_names8[i & 7], &d)); KEEP(d.device_id); },
    { KEEP(bl_device_parse(device_names8[i & 7], &d)); KEEP(d.device_id); })
DEF(compact_strides, int64_t st[4]; memset(st, 0, sizeof st),
    { KEEP(dlpack_compact_strides(4, shape4, (i & 1) != 0, st)); KEEP(st[0]); },
    { KEEP(in_compact_strides(4, shape4, (i & 1) != 0, st)); KEEP(st[0]); },
    { KEEP(bl_compact_strides(4, shape4, (i & 1) != 0, st)); KEEP(st[0]); })
/* Create a 4-d float32 tensor over `data` (strides given), then release it through its deleter. */
#define CREATE_ARGS data, dev(kDLCPU, 0), 4, shape4, strides4, dtypes8[0], (uint64_t)(i & 7) * 4, 0, count_release, NULL, &w
DEF(tensor_create, DLManagedTensorVersioned *w = NULL,
    { KEEP(dlpack_tensor_create(CREATE_ARGS)); w->deleter(w); KEEP(released); },
    { KEEP(in_tensor_create(CREATE_ARGS)); w->deleter(w); KEEP(released); },
    { KEEP(bl_tensor_create(CREATE_ARGS)); w->deleter(w); KEEP(released); })

/* Capsules with the stub Python (stub_python.c): make a "dltensor_versioned" capsule owning a
 * tensor, or consume one (check, rename to "used_dltensor_versioned", check the version); the
 * loop frees the capsule without its destructor, the same for every variant. */
DEF(capsule_new, DLManagedTensorVersioned t = make_tensor(); void *cap = NULL,
    { t.dl_tensor.byte_offset = (uint64_t)(i & 7); KEEP(dlpack_capsule_new(&t, &cap)); stub_capsule_free(cap); },
    { t.dl_tensor.byte_offset = (uint64_t)(i & 7); KEEP(in_capsule_new(&t, &cap)); stub_capsule_free(cap); },
    { t.dl_tensor.byte_offset = (uint64_t)(i & 7); KEEP(bl_capsule_new(&t, &cap)); stub_capsule_free(cap); })
#define FRESH_CAPSULE PyCapsule_New(&t, "dltensor_versioned", NULL)
DEF(capsule_consume, DLManagedTensorVersioned t = make_tensor(); DLManagedTensorVersioned *o = NULL; void *cap,
    { cap = FRESH_CAPSULE; KEEP(dlpack_capsule_consume(cap, &o)); KEEP(o); stub_capsule_free(cap); },
    { cap = FRESH_CAPSULE; KEEP(in_capsule_consume(cap, &o)); KEEP(o); stub_capsule_free(cap); },
    { cap = FRESH_CAPSULE; KEEP(bl_capsule_consume(cap, &o)); KEEP(o); stub_capsule_free(cap); })

int main(int argc, char **argv) {
  bench_args(argc, argv);
  printf("# name lib_ns inline_ns clib_ns (n=%ld, repeats=%d)\n", bench_n, bench_r);
  RUN(is_cpu_accessible);
  RUN(get_device);
  RUN(version_check);
  RUN(tensor_check_version);
  RUN(version_negotiate);
  RUN(tensor_delete);
  RUN(stream_decode);
  RUN(export_request_resolve);
  RUN(tensor_validate_1d);
  RUN(tensor_validate_4d);
  RUN(tensor_validate_8d);
  RUN(tensor_layout);
  RUN(legacy_to_versioned);
  RUN(versioned_to_legacy);
  RUN(tensor_create);
  RUN(compact_strides);
  RUN(dtype_format);
  RUN(dtype_parse);
  RUN(device_format);
  RUN(device_parse);
  {
    /* The stub must satisfy the library's Python resolution, or the two rows below would time
     * PYTHON_UNAVAILABLE instead of the capsule paths: refuse to report them then. */
    DLManagedTensorVersioned t = make_tensor();
    void *cap = NULL;
    dlpack_helpers_status s = dlpack_capsule_new(&t, &cap);
    if (s != DLPACK_HELPERS_STATUS_OK) {
      fprintf(stderr, "bench_core: dlpack_capsule_new with the stub Python returned %s: %s\n",
              dlpack_status_string(s), dlpack_last_error_message());
      return 1;
    }
    stub_capsule_free(cap);
  }
  RUN(capsule_new);
  RUN(capsule_consume);
  RUN(tensor_validate_2d);
  RUN(tensor_validate_16d);
  RUN(tensor_validate_32d);
  RUN(tensor_validate_64d);
  RUN(tensor_layout_1d);
  RUN(tensor_layout_2d);
  RUN(tensor_layout_8d);
  RUN(tensor_layout_16d);
  RUN(tensor_layout_32d);
  RUN(tensor_layout_64d);
  return 0;
}
