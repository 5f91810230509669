/* Validation, layout, names, flags and ownership conversions through the C ABI, on hand-made
 * edge-case tensors. Each peer case of reference/peer-cases.md is a test named case_<N>_... */
#include "dlpack_helpers.h"
#include "check.h"

#include <stdalign.h>
#include <stdint.h>
#include <string.h>

static const DLDataType F32 = {kDLFloat, 32, 1};
static const DLDataType F16 = {kDLFloat, 16, 1};
static const DLDataType I32 = {kDLInt, 32, 1};
static const DLDevice CPU = {kDLCPU, 0};

static alignas(256) unsigned char buffer[4096];

static DLTensor tensor(void *data, DLDataType dt, int32_t ndim, int64_t *shape, int64_t *strides,
                       uint64_t byte_offset) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device = CPU;
  t.ndim = ndim;
  t.dtype = dt;
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = byte_offset;
  return t;
}

static dlpack_helpers_validate_options opts(uint32_t flags) {
  dlpack_helpers_validate_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.flags = flags;
  return o;
}

static const DLPackVersion V13 = {1, 3};
static const DLPackVersion V11 = {1, 1};
static const DLPackVersion LEGACY = {0, 0};

static dlpack_helpers_layout layout_of(DLTensor *t) {
  dlpack_helpers_layout l;
  memset(&l, 0xAB, sizeof l);
  CHECK_STATUS(dlpack_dltensor_layout(t, 0, &l), DLPACK_HELPERS_STATUS_OK);
  return l;
}

#define HAS(l, bit) (((l).properties & DLPACK_HELPERS_LAYOUT_##bit) != 0)

/* A versioned tensor whose shape/strides pointers hold garbage: must never be read. */
TEST(case_29_null_strides) {
  int64_t shape[2] = {3, 4};
  DLTensor t = tensor(buffer, F32, 2, shape, NULL, 0);
  dlpack_helpers_layout l;
  /* Legacy and 1.1: NULL strides mean compact row-major. */
  CHECK_STATUS(dlpack_dltensor_validate(&t, LEGACY, 0, NULL, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(l.numel, 12);
  CHECK_EQ_INT(l.nbytes, 48);
  CHECK(HAS(l, C_CONTIGUOUS) && HAS(l, STRIDES_IMPLIED));
  CHECK_STATUS(dlpack_dltensor_validate(&t, V11, 0, NULL, &l), DLPACK_HELPERS_STATUS_OK);
  int64_t strides[2] = {0, 0};
  CHECK_STATUS(dlpack_compact_strides(2, shape, false, strides), DLPACK_HELPERS_STATUS_OK);
  CHECK(strides[0] == 4 && strides[1] == 1);
  /* 1.3: a violation by default, with a message naming the rule; lenient mode reads row-major. */
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, 0, NULL, &l), DLPACK_HELPERS_STATUS_NULL_STRIDES);
  CHECK(strstr(dlpack_last_error_message(), "DLPack 1.2") != NULL);
  CHECK(strcmp(dlpack_status_string(DLPACK_HELPERS_STATUS_NULL_STRIDES), "NULL_STRIDES") == 0);
  dlpack_helpers_validate_options o = opts(DLPACK_HELPERS_VALIDATE_LENIENT_NULL_STRIDES);
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, 0, &o, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(l.numel, 12);
  /* ndim 0 with NULL shape and strides: valid at 1.3, one element. */
  DLTensor s = tensor(buffer, F32, 0, NULL, NULL, 0);
  CHECK_STATUS(dlpack_dltensor_validate(&s, V13, 0, NULL, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(l.numel, 1);
  /* Same through a managed versioned tensor. */
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = 1;
  m.version.minor = 3;
  m.dl_tensor = t;
  CHECK_STATUS(dlpack_tensor_validate(&m, NULL, NULL), DLPACK_HELPERS_STATUS_NULL_STRIDES);
  m.version.minor = 1;
  CHECK_STATUS(dlpack_tensor_validate(&m, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
}

TEST(case_30_size_one_dims_with_normalised_stride) {
  int64_t s1[2] = {1, 77}, st1[2] = {1, 1};
  DLTensor t = tensor(buffer, I32, 2, s1, st1, 0);
  CHECK(HAS(layout_of(&t), C_CONTIGUOUS));
  dlpack_helpers_validate_options o = opts(DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS);
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, 0, &o, NULL), DLPACK_HELPERS_STATUS_OK);
  int64_t s2[4] = {1, 1, 768, 768}, st2[4] = {1, 1, 768, 1};
  DLTensor u = tensor(NULL, I32, 4, s2, st2, 0);
  CHECK(HAS(layout_of(&u), C_CONTIGUOUS));
  int64_t s3[2] = {2, 77};
  DLTensor w = tensor(buffer, I32, 2, s3, st1, 0);
  CHECK(!HAS(layout_of(&w), C_CONTIGUOUS));
  CHECK_STATUS(dlpack_dltensor_validate(&w, V13, 0, &o, NULL), DLPACK_HELPERS_STATUS_NOT_CONTIGUOUS);
}

TEST(case_32_stride_zero_on_size_one_dims) {
  int64_t s1[1] = {1}, st1[1] = {0};
  DLTensor t = tensor(buffer, F32, 1, s1, st1, 0);
  dlpack_helpers_layout l = layout_of(&t);
  CHECK(HAS(l, C_CONTIGUOUS) && HAS(l, F_CONTIGUOUS) && !HAS(l, BROADCAST));
  CHECK_EQ_INT(l.storage_elements, 1);
  int64_t s2[5] = {1, 3, 1, 4, 1}, st2[5] = {0, 4, 0, 1, 0};
  DLTensor u = tensor(buffer, F32, 5, s2, st2, 0);
  l = layout_of(&u);
  CHECK(HAS(l, C_CONTIGUOUS) && !HAS(l, F_CONTIGUOUS) && !HAS(l, BROADCAST));
}

TEST(case_33_empty_tensors_are_contiguous) {
  int64_t shape[4] = {1, 8, 0, 128};
  int64_t strides[3][4] = {{0, 0, 0, 0}, {4096, 512, 128, 1}, {1, 1, 1, 1}};
  for (int i = 0; i < 3; ++i) {
    DLTensor t = tensor(NULL, F32, 4, shape, strides[i], 0);
    dlpack_helpers_layout l = layout_of(&t);
    CHECK(HAS(l, C_CONTIGUOUS) && HAS(l, F_CONTIGUOUS) && HAS(l, EMPTY));
    CHECK_EQ_INT(l.nbytes, 0);
    CHECK_EQ_INT(l.end_byte - l.lowest_byte, 0);
  }
  int64_t s0[1] = {0}, st0[1] = {0};
  DLTensor z = tensor(NULL, F32, 1, s0, st0, 0);
  CHECK(HAS(layout_of(&z), C_CONTIGUOUS));
}

TEST(case_34_empty_tensor_with_null_data) {
  int64_t shape[2] = {0, 3}, strides[2] = {3, 1};
  dlpack_helpers_validate_options strict = opts(DLPACK_HELPERS_VALIDATE_REQUIRE_ELEMENT_ALIGNED);
  strict.data_alignment = 256;
  DLTensor t = tensor(NULL, I32, 2, shape, strides, 0);
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, 0, &strict, NULL), DLPACK_HELPERS_STATUS_OK);
  t.data = buffer + 1;
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, 0, &strict, NULL), DLPACK_HELPERS_STATUS_OK);
  int64_t full[2] = {2, 3};
  DLTensor u = tensor(NULL, I32, 2, full, strides, 0);
  CHECK_STATUS(dlpack_dltensor_validate(&u, V13, 0, NULL, NULL), DLPACK_HELPERS_STATUS_NULL_DATA);
  CHECK(strstr(dlpack_last_error_message(), "tensor.data is NULL") != NULL);
  DLTensor s = tensor(NULL, I32, 0, NULL, NULL, 0);
  CHECK_STATUS(dlpack_dltensor_validate(&s, V13, 0, NULL, NULL), DLPACK_HELPERS_STATUS_NULL_DATA);
}

TEST(case_36_non_unit_and_zero_strides) {
  int64_t s5[1] = {5}, st2[1] = {2};
  DLTensor t = tensor(buffer, F32, 1, s5, st2, 0);
  CHECK(!HAS(layout_of(&t), C_CONTIGUOUS));
  int64_t s10[1] = {10}, st0[1] = {0};
  DLTensor b = tensor(buffer, F32, 1, s10, st0, 0);
  dlpack_helpers_layout l = layout_of(&b);
  CHECK(!HAS(l, C_CONTIGUOUS) && !HAS(l, F_CONTIGUOUS) && HAS(l, BROADCAST));
  CHECK_EQ_INT(l.storage_elements, 1);
  CHECK_EQ_INT(l.end_byte, 4);
  dlpack_helpers_validate_options o = opts(DLPACK_HELPERS_VALIDATE_REJECT_BROADCAST);
  CHECK_STATUS(dlpack_dltensor_validate(&b, V13, 0, &o, NULL), DLPACK_HELPERS_STATUS_UNSUPPORTED_STRIDES);
  int64_t s24[2] = {2, 4}, st23[2] = {2, 3};
  DLTensor f = tensor(buffer, F32, 2, s24, st23, 0);
  l = layout_of(&f);
  CHECK(!HAS(l, C_CONTIGUOUS) && !HAS(l, F_CONTIGUOUS));
}

TEST(case_38_byte_offset_honoured) {
  int64_t shape[1] = {8}, strides[1] = {1};
  DLTensor t = tensor(buffer, F32, 1, shape, strides, 32);
  void *addr = NULL;
  CHECK_STATUS(dlpack_dltensor_data_address(&t, &addr), DLPACK_HELPERS_STATUS_OK);
  CHECK(addr == (void *)(buffer + 32));
  /* Round trip: a created tensor keeps data and byte_offset, so the address is preserved. */
  DLManagedTensorVersioned *m = NULL;
  CHECK_STATUS(dlpack_tensor_create(buffer, CPU, 1, shape, strides, F32, 32, 0, NULL, NULL, &m),
               DLPACK_HELPERS_STATUS_OK);
  void *addr2 = NULL;
  CHECK_STATUS(dlpack_dltensor_data_address(&m->dl_tensor, &addr2), DLPACK_HELPERS_STATUS_OK);
  CHECK(addr2 == addr);
  dlpack_tensor_delete(m);
}

TEST(case_39_byte_offset_pointer_vs_handle) {
  float *f = (float *)(void *)buffer;
  for (int i = 0; i < 20; ++i) f[i] = (float)i;
  int64_t shape[2] = {3, 5}, strides[2] = {5, 1};
  DLTensor t = tensor(buffer, F32, 2, shape, strides, 20);
  void *addr = NULL;
  CHECK_STATUS(dlpack_dltensor_data_address(&t, &addr), DLPACK_HELPERS_STATUS_OK);
  CHECK(*(float *)addr == 5.0f);
  int32_t handles[4] = {kDLOpenCL, kDLVulkan, kDLMetal, 999};
  for (int i = 0; i < 4; ++i) {
    t.device.device_type = (DLDeviceType)handles[i];
    void *d = NULL;
    uint64_t off = 0;
    CHECK_STATUS(dlpack_dltensor_data_location(&t, &d, &off), DLPACK_HELPERS_STATUS_OK);
    CHECK(d == (void *)buffer && off == 20);
    CHECK_STATUS(dlpack_dltensor_data_address(&t, &addr), DLPACK_HELPERS_STATUS_OPAQUE_HANDLE);
  }
  int32_t pointers[7] = {kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, kDLROCMHost, kDLCUDAManaged, kDLOneAPI};
  for (int i = 0; i < 7; ++i) {
    t.device.device_type = (DLDeviceType)pointers[i];
    void *d = NULL;
    uint64_t off = 99;
    CHECK(dlpack_device_is_pointer_addressed(t.device));
    CHECK_STATUS(dlpack_dltensor_data_location(&t, &d, &off), DLPACK_HELPERS_STATUS_OK);
    CHECK(d == (void *)(buffer + 20) && off == 0);
  }
}

TEST(case_40_nonzero_byte_offset_and_alignment) {
  int64_t shape[1] = {4}, strides[1] = {1};
  DLTensor h = tensor(buffer, F16, 1, shape, strides, 8);
  dlpack_helpers_layout l;
  CHECK_STATUS(dlpack_dltensor_validate(&h, V13, 0, NULL, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(l.first_element_alignment, 8);
  DLTensor f = tensor(buffer, F32, 1, shape, strides, 3);
  CHECK_STATUS(dlpack_dltensor_validate(&f, V13, 0, NULL, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(l.first_element_alignment, 1);
  dlpack_helpers_validate_options strict = opts(DLPACK_HELPERS_VALIDATE_REQUIRE_ELEMENT_ALIGNED);
  CHECK_STATUS(dlpack_dltensor_validate(&f, V13, 0, &strict, NULL), DLPACK_HELPERS_STATUS_MISALIGNED);
  CHECK_STATUS(dlpack_dltensor_validate(&h, V13, 0, &strict, NULL), DLPACK_HELPERS_STATUS_OK);
  /* Opaque handle: the alignment of byte_offset only. */
  DLTensor o = tensor((void *)(uintptr_t)0x1235, F32, 1, shape, strides, 64);
  o.device.device_type = kDLOpenCL;
  CHECK_EQ_INT(layout_of(&o).first_element_alignment, 64);
}

TEST(case_42_256_byte_alignment_not_assumed) {
  int64_t shape[1] = {4}, strides[1] = {1};
  dlpack_helpers_validate_options strict256 = opts(0);
  strict256.data_alignment = 256;
  dlpack_helpers_layout l;
  DLTensor a = tensor(buffer + 4, F32, 1, shape, strides, 0);
  CHECK_STATUS(dlpack_dltensor_validate(&a, V13, 0, NULL, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(l.first_element_alignment, 4);
  CHECK_STATUS(dlpack_dltensor_validate(&a, V13, 0, &strict256, NULL), DLPACK_HELPERS_STATUS_MISALIGNED);
  DLTensor b = tensor(buffer, F32, 1, shape, strides, 4);
  CHECK_STATUS(dlpack_dltensor_validate(&b, V13, 0, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_dltensor_validate(&b, V13, 0, &strict256, NULL), DLPACK_HELPERS_STATUS_OK);
}

TEST(case_43_bool) {
  char name[DLPACK_HELPERS_NAME_MAX];
  DLDataType b8 = {kDLBool, 8, 1}, u8 = {kDLUInt, 8, 1}, b1 = {kDLBool, 1, 1};
  CHECK_STATUS(dlpack_dtype_format(b8, name, sizeof name, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK(strcmp(name, "bool") == 0);
  CHECK_STATUS(dlpack_dtype_format(u8, name, sizeof name, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK(strcmp(name, "uint8") == 0);
  int64_t shape[1] = {8}, strides[1] = {1};
  DLTensor t = tensor(buffer, b8, 1, shape, strides, 0);
  CHECK_EQ_INT(layout_of(&t).nbytes, 8);
  /* Documented policy: kDLBool with bits != 8 is refused, legacy, versioned, padded or not. */
  t.dtype = b1;
  CHECK_STATUS(dlpack_dltensor_validate(&t, LEGACY, 0, NULL, NULL), DLPACK_HELPERS_STATUS_INVALID_DTYPE);
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, 0, NULL, NULL), DLPACK_HELPERS_STATUS_INVALID_DTYPE);
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, NULL, NULL),
               DLPACK_HELPERS_STATUS_INVALID_DTYPE);
}

TEST(case_45_bfloat16) {
  char name[DLPACK_HELPERS_NAME_MAX];
  DLDataType d;
  CHECK_STATUS(dlpack_dtype_parse("bfloat16", &d), DLPACK_HELPERS_STATUS_OK);
  CHECK(d.code == kDLBfloat && d.bits == 16 && d.lanes == 1);
  int64_t shape[1] = {3}, strides[1] = {1};
  DLTensor t = tensor(buffer, d, 1, shape, strides, 0);
  CHECK_EQ_INT(layout_of(&t).nbytes, 6);
  DLDataType bad = {kDLBfloat, 32, 1};
  t.dtype = bad;
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, 0, NULL, NULL), DLPACK_HELPERS_STATUS_INVALID_DTYPE);
  CHECK_STATUS(dlpack_dtype_format(F16, name, sizeof name, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK(strcmp(name, "float16") == 0);
  /* Documented policy: vectors accepted, itemsize bits*lanes/8; refusable by option. */
  DLDataType v2 = {kDLBfloat, 16, 2};
  t.dtype = v2;
  CHECK_EQ_INT(layout_of(&t).nbytes, 12);
  dlpack_helpers_validate_options o = opts(DLPACK_HELPERS_VALIDATE_REJECT_VECTOR);
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, 0, &o, NULL), DLPACK_HELPERS_STATUS_DTYPE_MISMATCH);
}

TEST(case_46_read_only_flag) {
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = 1;
  m.version.minor = 3;
  int64_t shape[1] = {2}, strides[1] = {1};
  m.dl_tensor = tensor(buffer, F32, 1, shape, strides, 0);
  struct {
    uint64_t flags;
    dlpack_helpers_writability want;
  } rows[4] = {{0, DLPACK_HELPERS_WRITABILITY_WRITABLE},
               {DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_HELPERS_WRITABILITY_READ_ONLY},
               {DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_HELPERS_WRITABILITY_WRITABLE},
               {DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED,
                DLPACK_HELPERS_WRITABILITY_READ_ONLY}};
  dlpack_helpers_validate_options w = opts(DLPACK_HELPERS_VALIDATE_REQUIRE_WRITABLE);
  for (int i = 0; i < 4; ++i) {
    m.flags = rows[i].flags;
    dlpack_helpers_writability got = -1;
    uint64_t f = 0;
    CHECK_STATUS(dlpack_tensor_writability(&m, &got), DLPACK_HELPERS_STATUS_OK);
    CHECK_EQ_INT(got, rows[i].want);
    CHECK_STATUS(dlpack_tensor_get_flags(&m, &f), DLPACK_HELPERS_STATUS_OK);
    CHECK_EQ_INT((f & DLPACK_FLAG_BITMASK_IS_COPIED) != 0, (rows[i].flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0);
    CHECK_STATUS(dlpack_tensor_validate(&m, &w, NULL),
                 rows[i].want == DLPACK_HELPERS_WRITABILITY_WRITABLE ? DLPACK_HELPERS_STATUS_OK
                                                                     : DLPACK_HELPERS_STATUS_READ_ONLY);
  }
  DLManagedTensor legacy;
  memset(&legacy, 0, sizeof legacy);
  legacy.dl_tensor = m.dl_tensor;
  dlpack_helpers_writability got = -1;
  CHECK_STATUS(dlpack_legacy_tensor_writability(&legacy, &got), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(got, DLPACK_HELPERS_WRITABILITY_UNKNOWN);
  CHECK_STATUS(dlpack_legacy_tensor_validate(&legacy, &w, NULL), DLPACK_HELPERS_STATUS_READ_ONLY);
  w.flags |= DLPACK_HELPERS_VALIDATE_LEGACY_WRITABLE;
  CHECK_STATUS(dlpack_legacy_tensor_validate(&legacy, &w, NULL), DLPACK_HELPERS_STATUS_OK);
  /* set/clear */
  m.flags = 0;
  CHECK_STATUS(dlpack_tensor_set_flags(&m, DLPACK_FLAG_BITMASK_READ_ONLY, 0), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(m.flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  CHECK_STATUS(dlpack_tensor_set_flags(&m, 0, DLPACK_FLAG_BITMASK_READ_ONLY), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(m.flags, 0);
  CHECK_STATUS(dlpack_tensor_set_flags(&m, 0x100, 0), DLPACK_HELPERS_STATUS_INVALID_FLAGS);
}

TEST(case_10_pinned_host_name) {
  DLDevice d;
  char name[DLPACK_HELPERS_NAME_MAX];
  size_t len = 0;
  CHECK_STATUS(dlpack_device_parse("cuda_host", &d), DLPACK_HELPERS_STATUS_OK);
  CHECK(d.device_type == kDLCUDAHost && d.device_id == 0);
  CHECK(dlpack_is_cpu_accessible(d));
  CHECK_STATUS(dlpack_device_format(d, name, sizeof name, &len), DLPACK_HELPERS_STATUS_OK);
  CHECK(strcmp(name, "cuda_host:0") == 0 && len == 11);
}

TEST(names_and_buffers) {
  DLDevice d;
  char name[DLPACK_HELPERS_NAME_MAX];
  CHECK_STATUS(dlpack_device_parse("cuda:1", &d), DLPACK_HELPERS_STATUS_OK);
  CHECK(d.device_type == kDLCUDA && d.device_id == 1);
  CHECK_STATUS(dlpack_device_parse("gpu", &d), DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
  DLDataType v = {kDLFloat8_e4m3fn, 8, 4};
  CHECK_STATUS(dlpack_dtype_format(v, name, sizeof name, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK(strcmp(name, "float8_e4m3fnx4") == 0);
  memset(name, 'z', sizeof name);
  CHECK_STATUS(dlpack_dtype_format(F32, name, 7, NULL), DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL);
  CHECK(name[0] == 'z');
  CHECK_STATUS(dlpack_dtype_format(F32, name, 8, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK(strcmp(name, "float32") == 0);
  DLDevice unknown = {(DLDeviceType)999, 0};
  CHECK_STATUS(dlpack_device_format(unknown, name, sizeof name, NULL), DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
  /* Every device name carries its id, opaque-handle devices included (as documented). */
  const struct {
    DLDeviceType type;
    const char *want;
  } ids[3] = {{kDLOpenCL, "opencl:0"}, {kDLVulkan, "vulkan:0"}, {kDLMetal, "metal:2"}};
  for (int i = 0; i < 3; ++i) {
    DLDevice dev = {ids[i].type, i == 2 ? 2 : 0};
    CHECK_STATUS(dlpack_device_format(dev, name, sizeof name, NULL), DLPACK_HELPERS_STATUS_OK);
    CHECK(strcmp(name, ids[i].want) == 0);
  }
  CHECK_STATUS(dlpack_dtype_parse(NULL, &v), DLPACK_HELPERS_STATUS_NULL_POINTER);
  /* Parsing is exact: one lane is written "float32", so "float32x1" is no name; x2 is. */
  DLDataType p = {0, 0, 0};
  CHECK_STATUS(dlpack_dtype_parse("float32x1", &p), DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
  CHECK(p.code == 0 && p.bits == 0 && p.lanes == 0);
  CHECK_STATUS(dlpack_dtype_parse("float32x2", &p), DLPACK_HELPERS_STATUS_OK);
  CHECK(p.code == kDLFloat && p.bits == 32 && p.lanes == 2);
  CHECK_STATUS(dlpack_dtype_format(p, name, sizeof name, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK(strcmp(name, "float32x2") == 0);
}

TEST(garbage_fields_are_rejected_before_arrays_are_read) {
  /* shape/strides point at one element but ndim claims more: must be refused by the bound. */
  int64_t one = 1;
  DLTensor t = tensor(buffer, F32, DLPACK_HELPERS_MAX_NDIM + 1, &one, &one, 0);
  dlpack_helpers_layout l;
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, 0, NULL, &l), DLPACK_HELPERS_STATUS_INVALID_NDIM);
  t.ndim = -3;
  CHECK_STATUS(dlpack_dltensor_layout(&t, 0, &l), DLPACK_HELPERS_STATUS_INVALID_NDIM);
  t.ndim = 2;
  dlpack_helpers_validate_options o = opts(0);
  o.max_ndim = 1;
  CHECK_STATUS(dlpack_dltensor_validate(&t, V13, 0, &o, &l), DLPACK_HELPERS_STATUS_INVALID_NDIM);
  int64_t shape[2] = {INT64_MAX, 2}, strides[2] = {1, 1};
  DLTensor big = tensor(buffer, F32, 2, shape, strides, 0);
  CHECK_STATUS(dlpack_dltensor_validate(&big, V13, 0, NULL, NULL), DLPACK_HELPERS_STATUS_OVERFLOW);
  shape[0] = -1;
  CHECK_STATUS(dlpack_dltensor_validate(&big, V13, 0, NULL, NULL), DLPACK_HELPERS_STATUS_INVALID_SHAPE);
  DLTensor ns = tensor(buffer, F32, 2, NULL, strides, 0);
  CHECK_STATUS(dlpack_dltensor_validate(&ns, V13, 0, NULL, NULL), DLPACK_HELPERS_STATUS_NULL_SHAPE);
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = 2; /* only the version may be read */
  m.dl_tensor.ndim = 5;
  CHECK_STATUS(dlpack_tensor_validate(&m, NULL, NULL), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  /* Options honour struct_size: a short struct leaves the later fields at their defaults. */
  int64_t s1[1] = {4}, st1[1] = {1};
  DLTensor a = tensor(buffer + 4, F32, 1, s1, st1, 0);
  dlpack_helpers_validate_options shortopt = opts(0);
  shortopt.data_alignment = 256;
  shortopt.struct_size = offsetof(dlpack_helpers_validate_options, data_alignment);
  CHECK_STATUS(dlpack_dltensor_validate(&a, V13, 0, &shortopt, NULL), DLPACK_HELPERS_STATUS_OK);
  shortopt.struct_size = 1;
  CHECK_STATUS(dlpack_dltensor_validate(&a, V13, 0, &shortopt, NULL), DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(dlpack_dltensor_validate(NULL, V13, 0, NULL, NULL), DLPACK_HELPERS_STATUS_NULL_POINTER);
}

/* ---- ownership ---- */

static int released = 0;
static void count_release(void *ctx) { ++*(int *)ctx; }

static int legacy_deleted = 0;
static void legacy_deleter(DLManagedTensor *self) {
  (void)self;
  ++legacy_deleted;
}
static int versioned_deleted = 0;
static void versioned_deleter(DLManagedTensorVersioned *self) {
  (void)self;
  ++versioned_deleted;
}

TEST(create_owned_tensor) {
  int64_t shape[2] = {3, 4};
  DLManagedTensorVersioned *m = NULL;
  released = 0;
  CHECK_STATUS(dlpack_tensor_create(buffer, CPU, 2, shape, NULL, F32, 0, DLPACK_FLAG_BITMASK_READ_ONLY,
                                    count_release, &released, &m),
               DLPACK_HELPERS_STATUS_OK);
  CHECK(m != NULL && m->version.major == 1 && m->version.minor == 3);
  CHECK(m->dl_tensor.shape != shape && m->dl_tensor.shape[0] == 3 && m->dl_tensor.shape[1] == 4);
  CHECK(m->dl_tensor.strides != NULL && m->dl_tensor.strides[0] == 4 && m->dl_tensor.strides[1] == 1);
  CHECK(m->manager_ctx == &released && m->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  CHECK_STATUS(dlpack_tensor_validate(m, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
  shape[0] = 99; /* copied: the tensor does not see it */
  CHECK_EQ_INT(m->dl_tensor.shape[0], 3);
  CHECK_EQ_INT(released, 0);
  dlpack_tensor_delete(m);
  CHECK_EQ_INT(released, 1);
  /* Invalid descriptions fail without calling release. */
  shape[0] = 3;
  m = NULL;
  CHECK_STATUS(dlpack_tensor_create(NULL, CPU, 2, shape, NULL, F32, 0, 0, count_release, &released, &m),
               DLPACK_HELPERS_STATUS_NULL_DATA);
  CHECK(m == NULL && released == 1);
  CHECK_STATUS(dlpack_tensor_create(buffer, CPU, 2, shape, NULL, F32, 0, 0x40, NULL, NULL, &m),
               DLPACK_HELPERS_STATUS_INVALID_FLAGS);
  /* 0-d and empty tensors. */
  CHECK_STATUS(dlpack_tensor_create(buffer, CPU, 0, NULL, NULL, F32, 0, 0, NULL, NULL, &m),
               DLPACK_HELPERS_STATUS_OK);
  CHECK(m->dl_tensor.shape == NULL && m->dl_tensor.strides == NULL);
  dlpack_tensor_delete(m);
  int64_t empty[2] = {0, 5};
  CHECK_STATUS(dlpack_tensor_create(NULL, CPU, 2, empty, NULL, F32, 0, 0, NULL, NULL, &m),
               DLPACK_HELPERS_STATUS_OK);
  dlpack_tensor_delete(m);
}

TEST(legacy_to_versioned_releases_once) {
  int64_t shape[2] = {2, 3};
  DLManagedTensor legacy;
  memset(&legacy, 0, sizeof legacy);
  legacy.dl_tensor = tensor(buffer, F32, 2, shape, NULL, 8);
  legacy.deleter = legacy_deleter;
  legacy_deleted = 0;
  DLManagedTensorVersioned *v = NULL;
  CHECK_STATUS(dlpack_legacy_to_versioned(&legacy, DLPACK_FLAG_BITMASK_READ_ONLY, &v), DLPACK_HELPERS_STATUS_OK);
  CHECK(v->dl_tensor.data == (void *)buffer && v->dl_tensor.byte_offset == 8);
  CHECK(v->dl_tensor.strides != NULL && v->dl_tensor.strides[0] == 3 && v->dl_tensor.strides[1] == 1);
  CHECK(v->flags == DLPACK_FLAG_BITMASK_READ_ONLY && v->manager_ctx == (void *)&legacy);
  CHECK_STATUS(dlpack_tensor_validate(v, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(legacy_deleted, 0);
  dlpack_tensor_delete(v);
  CHECK_EQ_INT(legacy_deleted, 1);
  /* Failure leaves ownership with the caller: nothing is called. */
  legacy.dl_tensor.data = NULL;
  CHECK_STATUS(dlpack_legacy_to_versioned(&legacy, 0, &v), DLPACK_HELPERS_STATUS_NULL_DATA);
  CHECK_EQ_INT(legacy_deleted, 1);
}

/* Peer case 49: strides implied by NULL strides are exact or OVERFLOW on every path that fills
 * them in (compact strides, the legacy wraps, create); never clamped or wrapped. Dimension 0's
 * implied stride is shape[1] * shape[2]: 2^63 - 1, 2^63, 2^64. */
TEST(case_49_implied_strides_never_clamp) {
  static const DLDataType I8 = {kDLInt, 8, 1};
  const int64_t P62 = INT64_C(1) << 62;
  struct {
    int64_t shape[3];
    int fits;
  } rows[] = {{{1, INT64_MAX, 1}, 1}, {{0, INT64_MAX, 1}, 1}, {{2, P62, 2}, 0},
              {{0, P62, 2}, 0},       {{0, P62, 4}, 0},       {{4, P62, 4}, 0}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
    int64_t *shape = rows[i].shape;
    int64_t out[3] = {0, 0, 0};
    dlpack_helpers_status want = rows[i].fits ? DLPACK_HELPERS_STATUS_OK : DLPACK_HELPERS_STATUS_OVERFLOW;
    CHECK_STATUS(dlpack_compact_strides(3, shape, false, out), want);
    if (rows[i].fits) CHECK(out[0] == shape[1] * shape[2] && out[1] == shape[2] && out[2] == 1);
    DLManagedTensor legacy;
    memset(&legacy, 0, sizeof legacy);
    legacy.dl_tensor = tensor(buffer, I8, 3, shape, NULL, 0);
    legacy.deleter = legacy_deleter;
    legacy_deleted = 0;
    DLManagedTensorVersioned *v = NULL;
    CHECK_STATUS(dlpack_legacy_to_versioned(&legacy, 0, &v), want);
    if (v) {
      CHECK(v->dl_tensor.strides[0] == shape[1] * shape[2]);
      dlpack_tensor_delete(v);
      v = NULL;
    }
    CHECK_STATUS(dlpack_legacy_tensor_wrap(&legacy, 0, DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, &v), want);
    if (v) dlpack_tensor_delete(v);
    CHECK_EQ_INT(legacy_deleted, rows[i].fits ? 2 : 0); /* failures leave it with the caller */
    DLManagedTensorVersioned *c = NULL;
    CHECK_STATUS(dlpack_tensor_create(buffer, CPU, 3, shape, NULL, I8, 0, 0, NULL, NULL, &c), want);
    if (c) dlpack_tensor_delete(c);
  }
}

/* Peer case 50: a legacy struct cannot say read-only; every conversion of it is read-only unless
 * the caller asserts writability, and a read-only tensor never becomes legacy silently. */
TEST(case_50_legacy_writability_is_never_invented) {
  int64_t shape[2] = {2, 3};
  DLManagedTensor legacy;
  memset(&legacy, 0, sizeof legacy);
  legacy.dl_tensor = tensor(buffer, F32, 2, shape, NULL, 0);
  legacy.deleter = legacy_deleter;
  legacy_deleted = 0;
  dlpack_helpers_writability w = -1;
  CHECK_STATUS(dlpack_legacy_tensor_writability(&legacy, &w), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(w, DLPACK_HELPERS_WRITABILITY_UNKNOWN);
  dlpack_helpers_validate_options req = opts(DLPACK_HELPERS_VALIDATE_REQUIRE_WRITABLE);
  CHECK_STATUS(dlpack_legacy_tensor_validate(&legacy, &req, NULL), DLPACK_HELPERS_STATUS_READ_ONLY);
  DLManagedTensorVersioned *v = NULL;
  CHECK_STATUS(dlpack_legacy_to_versioned(&legacy, DLPACK_FLAG_BITMASK_IS_COPIED, &v), DLPACK_HELPERS_STATUS_OK);
  CHECK(v->flags == (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED));
  CHECK_STATUS(dlpack_tensor_writability(v, &w), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(w, DLPACK_HELPERS_WRITABILITY_READ_ONLY);
  CHECK_STATUS(dlpack_tensor_validate(v, &req, NULL), DLPACK_HELPERS_STATUS_READ_ONLY);
  /* Issue 25: this READ_ONLY was assumed (the legacy producer stated nothing), and the library
   * says so; back to legacy it goes as it came, stating exactly what the producer stated. */
  dlpack_helpers_read_only_origin origin = -1;
  CHECK_STATUS(dlpack_tensor_read_only_origin(v, &origin), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(origin, DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY);
  DLManagedTensor *l = NULL;
  CHECK_STATUS(dlpack_versioned_to_legacy(v, 0, NULL, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK(l->dl_tensor.data == (void *)buffer && l->manager_ctx == (void *)v);
  dlpack_legacy_tensor_delete(l); /* releases v, then the original legacy tensor, once */
  CHECK_EQ_INT(legacy_deleted, 1);
  /* A READ_ONLY the caller states in `flags` is stated: never dropped without the opt-in. */
  CHECK_STATUS(dlpack_legacy_to_versioned(&legacy, DLPACK_FLAG_BITMASK_READ_ONLY, &v), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_tensor_read_only_origin(v, &origin), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(origin, DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED);
  CHECK_STATUS(dlpack_versioned_to_legacy(v, 0, NULL, &l), DLPACK_HELPERS_STATUS_READ_ONLY);
  CHECK(strcmp(dlpack_status_python_exception(DLPACK_HELPERS_STATUS_READ_ONLY), "BufferError") == 0);
  /* Cleared by the caller: NONE; set again: LEGACY only where the wrapper assumed it. */
  CHECK_STATUS(dlpack_tensor_set_flags(v, 0, DLPACK_FLAG_BITMASK_READ_ONLY), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_tensor_read_only_origin(v, &origin), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(origin, DLPACK_HELPERS_READ_ONLY_ORIGIN_NONE);
  dlpack_tensor_delete(v);
  CHECK_EQ_INT(legacy_deleted, 2);
  CHECK_STATUS(dlpack_legacy_to_versioned(&legacy, 0, &v), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_tensor_set_flags(v, 0, DLPACK_FLAG_BITMASK_READ_ONLY), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_tensor_set_flags(v, DLPACK_FLAG_BITMASK_READ_ONLY, 0), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_tensor_read_only_origin(v, &origin), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(origin, DLPACK_HELPERS_READ_ONLY_ORIGIN_LEGACY);
  dlpack_tensor_delete(v);
  CHECK_EQ_INT(legacy_deleted, 3);
  /* The explicit assertion: exactly the caller's flags. */
  CHECK_STATUS(dlpack_legacy_tensor_wrap(&legacy, 0, DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, &v),
               DLPACK_HELPERS_STATUS_OK);
  CHECK(v->flags == 0);
  CHECK_STATUS(dlpack_tensor_writability(v, &w), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(w, DLPACK_HELPERS_WRITABILITY_WRITABLE);
  CHECK_STATUS(dlpack_tensor_validate(v, &req, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_versioned_to_legacy(v, 0, NULL, &l), DLPACK_HELPERS_STATUS_OK);
  dlpack_legacy_tensor_delete(l);
  CHECK_EQ_INT(legacy_deleted, 4);
  v = NULL;
  CHECK_STATUS(dlpack_legacy_tensor_wrap(&legacy, 0, 0x80, &v), DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  CHECK(v == NULL && legacy_deleted == 4);
  /* The new status is named and mapped. */
  CHECK(strcmp(dlpack_status_string(DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET), "PYTHON_ERROR_SET") == 0);
  CHECK(strcmp(dlpack_status_python_exception(DLPACK_HELPERS_STATUS_PYTHON_ERROR_SET), "RuntimeError") == 0);
}

/* Issue 12 item 5: every element inside [base, base + size)? */
TEST(fits_allocation_negative_strides_empty_0d_overflow) {
  bool fits = false;
  int64_t shape[1] = {12}, strides[1] = {-1};
  DLTensor t = tensor(buffer, F32, 1, shape, strides, 11 * 4); /* reversed view of 12 floats */
  CHECK_STATUS(dlpack_dltensor_fits_allocation(&t, 0, buffer, 48, &fits), DLPACK_HELPERS_STATUS_OK);
  CHECK(fits);
  CHECK_STATUS(dlpack_dltensor_fits_allocation(&t, 0, buffer + 4, 44, &fits), DLPACK_HELPERS_STATUS_OK);
  CHECK(!fits); /* element 11 of the view lies below base */
  t.byte_offset = 10 * 4;
  CHECK_STATUS(dlpack_dltensor_fits_allocation(&t, 0, buffer, 48, &fits), DLPACK_HELPERS_STATUS_OK);
  CHECK(!fits);
  int64_t empty_shape[2] = {0, 3};
  DLTensor e = tensor(NULL, F32, 2, empty_shape, NULL, 0);
  CHECK_STATUS(dlpack_dltensor_fits_allocation(&e, 0, buffer, 0, &fits), DLPACK_HELPERS_STATUS_OK);
  CHECK(fits);
  DLTensor z = tensor(buffer, F32, 0, NULL, NULL, 0);
  CHECK_STATUS(dlpack_dltensor_fits_allocation(&z, 0, buffer, 4, &fits), DLPACK_HELPERS_STATUS_OK);
  CHECK(fits);
  CHECK_STATUS(dlpack_dltensor_fits_allocation(&z, 0, buffer, 3, &fits), DLPACK_HELPERS_STATUS_OK);
  CHECK(!fits);
  CHECK_STATUS(dlpack_dltensor_fits_allocation(&z, 0, (void *)UINTPTR_MAX, 2, &fits),
               DLPACK_HELPERS_STATUS_OVERFLOW);
  int64_t huge[2] = {INT64_C(1) << 62, 4};
  DLTensor h = tensor(buffer, F32, 2, huge, NULL, 0);
  CHECK_STATUS(dlpack_dltensor_fits_allocation(&h, 0, buffer, UINT64_MAX / 2, &fits),
               DLPACK_HELPERS_STATUS_OVERFLOW);
}

TEST(versioned_to_legacy_reports_flags) {
  int64_t shape[1] = {4}, strides[1] = {1};
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = 1;
  m.version.minor = 3;
  m.deleter = versioned_deleter;
  m.dl_tensor = tensor(buffer, F32, 1, shape, strides, 0);
  versioned_deleted = 0;
  DLManagedTensor *l = NULL;
  uint64_t dropped = 77;
  m.flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
  /* A producer's own tensor: its READ_ONLY is stated (issue 25), whatever it looks like. */
  dlpack_helpers_read_only_origin origin = -1;
  CHECK_STATUS(dlpack_tensor_read_only_origin(&m, &origin), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(origin, DLPACK_HELPERS_READ_ONLY_ORIGIN_STATED);
  CHECK_STATUS(dlpack_versioned_to_legacy(&m, 0, &dropped, &l), DLPACK_HELPERS_STATUS_READ_ONLY);
  CHECK(l == NULL && dropped == 77 && versioned_deleted == 0);
  CHECK_STATUS(dlpack_versioned_to_legacy(&m, DLPACK_HELPERS_TO_LEGACY_ALLOW_READ_ONLY, &dropped, &l),
               DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(dropped, DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED);
  CHECK(l->dl_tensor.shape[0] == 4 && l->manager_ctx == (void *)&m);
  CHECK_STATUS(dlpack_legacy_tensor_validate(l, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
  dlpack_legacy_tensor_delete(l);
  CHECK_EQ_INT(versioned_deleted, 1);
  /* Padded sub-byte data cannot be carried by the legacy struct. */
  DLDataType fp4 = {kDLFloat4_e2m1fn, 4, 1};
  m.dl_tensor.dtype = fp4;
  m.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  CHECK_STATUS(dlpack_versioned_to_legacy(&m, 0, NULL, &l), DLPACK_HELPERS_STATUS_INVALID_FLAGS);
  m.version.major = 2;
  CHECK_STATUS(dlpack_versioned_to_legacy(&m, 0, NULL, &l), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_EQ_INT(versioned_deleted, 1);
}

TEST(sub_byte_extents) {
  DLDataType fp4 = {kDLFloat4_e2m1fn, 4, 1};
  int64_t shape[1] = {3};
  DLTensor t = tensor(buffer, fp4, 1, shape, NULL, 0);
  dlpack_helpers_layout l;
  CHECK_STATUS(dlpack_dltensor_layout(&t, 0, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK(l.nbytes == 2 && HAS(l, PACKED_SUB_BYTE) && l.element_bits == 4);
  CHECK_STATUS(dlpack_dltensor_layout(&t, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK(l.nbytes == 3 && !HAS(l, PACKED_SUB_BYTE) && l.element_bits == 8);
  DLDataType fp6bad = {kDLFloat6_e2m3fn, 8, 1};
  t.dtype = fp6bad;
  CHECK_STATUS(dlpack_dltensor_layout(&t, 0, &l), DLPACK_HELPERS_STATUS_INVALID_DTYPE);
}

/* IS_SUBBYTE_TYPE_PADDED came with DLPack 1.1: a 1.0 producer may not set it (validation rule 3). */
TEST(padded_flag_needs_version_1_1) {
  DLDataType fp4 = {kDLFloat4_e2m1fn, 4, 1};
  int64_t shape[1] = {2}, strides[1] = {1};
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = 1;
  m.version.minor = 0;
  m.dl_tensor = tensor(buffer, fp4, 1, shape, strides, 0);
  m.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  const DLPackVersion v10 = {1, 0};
  CHECK_STATUS(dlpack_tensor_validate(&m, NULL, NULL), DLPACK_HELPERS_STATUS_INVALID_FLAGS);
  CHECK_STATUS(dlpack_dltensor_validate(&m.dl_tensor, v10, m.flags, NULL, NULL),
               DLPACK_HELPERS_STATUS_INVALID_FLAGS);
  CHECK_STATUS(dlpack_dltensor_validate(&m.dl_tensor, V11, m.flags, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
  /* The same on a byte-sized dtype (the validator's fast path). */
  m.dl_tensor.dtype = F32;
  CHECK_STATUS(dlpack_tensor_validate(&m, NULL, NULL), DLPACK_HELPERS_STATUS_INVALID_FLAGS);
  dlpack_helpers_validate_options c = opts(DLPACK_HELPERS_VALIDATE_REQUIRE_C_CONTIGUOUS);
  CHECK_STATUS(dlpack_tensor_validate(&m, &c, NULL), DLPACK_HELPERS_STATUS_INVALID_FLAGS);
  m.dl_tensor.dtype = fp4;
  /* 1.0's own bits stay valid. */
  m.flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
  CHECK_STATUS(dlpack_tensor_validate(&m, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
  /* Setting the bit on a 1.0 tensor is refused and leaves the flags as they were. */
  CHECK_STATUS(dlpack_tensor_set_flags(&m, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, 0),
               DLPACK_HELPERS_STATUS_INVALID_FLAGS);
  CHECK_EQ_INT(m.flags, DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED);
  m.flags = 0;
  m.version.minor = 1;
  CHECK_STATUS(dlpack_tensor_validate(&m, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_tensor_set_flags(&m, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, 0), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_tensor_validate(&m, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
}

/* Only the strides must fit: the slowest extent enters none; messages name the argument. */
TEST(compact_strides_only_strides_must_fit) {
  int64_t big_first[3] = {INT64_MAX, 2, 3}, big_last[3] = {3, 2, INT64_MAX};
  int64_t st[3] = {0, 0, 0};
  CHECK_STATUS(dlpack_compact_strides(3, big_first, false, st), DLPACK_HELPERS_STATUS_OK);
  CHECK(st[0] == 6 && st[1] == 3 && st[2] == 1);
  CHECK_STATUS(dlpack_compact_strides(3, big_last, true, st), DLPACK_HELPERS_STATUS_OK);
  CHECK(st[0] == 1 && st[1] == 3 && st[2] == 6);
  st[0] = st[1] = st[2] = -7;
  CHECK_STATUS(dlpack_compact_strides(3, big_last, false, st), DLPACK_HELPERS_STATUS_OVERFLOW);
  CHECK(strstr(dlpack_last_error_message(), "shape[0]") != NULL);
  CHECK(strstr(dlpack_last_error_message(), "tensor") == NULL);
  CHECK(st[0] == -7 && st[1] == -7 && st[2] == -7);
  CHECK_STATUS(dlpack_compact_strides(3, big_first, true, st), DLPACK_HELPERS_STATUS_OVERFLOW);
  int64_t neg[2] = {-1, 4};
  CHECK_STATUS(dlpack_compact_strides(2, neg, false, st), DLPACK_HELPERS_STATUS_INVALID_SHAPE);
  CHECK(strstr(dlpack_last_error_message(), "shape[0]") != NULL);
  CHECK(strstr(dlpack_last_error_message(), "tensor") == NULL);
}

/* Peer case 59 (cutlass#3031): the dimension order by stride, innermost first, with a fixed
 * rule for extent-1 dimensions (last, higher index first) and equal |stride| (higher index first). */
static int order_is(DLTensor *t, const int32_t *want) {
  int32_t got[8];
  for (int i = 0; i < 8; ++i) got[i] = -1;
  if (dlpack_dltensor_dim_order(t, got, 8) != DLPACK_HELPERS_STATUS_OK) return 0;
  for (int i = 0; i < t->ndim; ++i)
    if (got[i] != want[i]) return 0;
  return got[t->ndim] == -1;
}

TEST(case_59_dim_order_by_stride) {
  int64_t shape[3] = {2, 3, 4}, c[3] = {12, 4, 1}, f[3] = {1, 2, 6};
  DLTensor t = tensor(buffer, F32, 3, shape, c, 0);
  const int32_t rev[3] = {2, 1, 0}, fwd[3] = {0, 1, 2};
  CHECK(order_is(&t, rev));
  t.strides = f;
  CHECK(order_is(&t, fwd));
  t.strides = NULL;
  CHECK(order_is(&t, rev));
  /* An extent-1 dimension with stride 1 (the cutlass#3031 ambiguity), in every position. */
  int64_t s0[3] = {1, 3, 4}, st0[3] = {1, 4, 1};
  int64_t s1[3] = {3, 1, 4}, st1[3] = {4, 1, 1};
  int64_t s2[3] = {3, 4, 1}, st2[3] = {4, 1, 1};
  const int32_t w0[3] = {2, 1, 0}, w1[3] = {2, 0, 1}, w2[3] = {1, 0, 2};
  DLTensor a = tensor(buffer, F32, 3, s0, st0, 0), b = tensor(buffer, F32, 3, s1, st1, 0),
           d = tensor(buffer, F32, 3, s2, st2, 0);
  CHECK(order_is(&a, w0) && order_is(&b, w1) && order_is(&d, w2));
  /* Column-major with an extent-1 dimension; broadcast; negative strides. */
  int64_t fs[3] = {3, 1, 4}, fst[3] = {1, 1, 3};
  const int32_t wf[3] = {0, 2, 1};
  DLTensor e = tensor(buffer, F32, 3, fs, fst, 0);
  CHECK(order_is(&e, wf));
  int64_t bs[2] = {4, 3}, bst[2] = {0, 1}, nst[2] = {-1, 4};
  const int32_t wb[2] = {0, 1};
  DLTensor g = tensor(buffer, F32, 2, bs, bst, 0), h = tensor(buffer, F32, 2, bs, nst, 0);
  CHECK(order_is(&g, wb) && order_is(&h, wb));
  /* 0-d: OK, nothing written, out may be NULL. */
  DLTensor z = tensor(buffer, F32, 0, NULL, NULL, 0);
  CHECK_STATUS(dlpack_dltensor_dim_order(&z, NULL, 0), DLPACK_HELPERS_STATUS_OK);
  /* Refusals write nothing. */
  int32_t out[3] = {-1, -1, -1};
  CHECK_STATUS(dlpack_dltensor_dim_order(NULL, out, 3), DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK_STATUS(dlpack_dltensor_dim_order(&t, NULL, 3), DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK_STATUS(dlpack_dltensor_dim_order(&t, out, 2), DLPACK_HELPERS_STATUS_BUFFER_TOO_SMALL);
  CHECK(strstr(dlpack_last_error_message(), "capacity is 2") != NULL);
  int64_t neg[3] = {2, -1, 4};
  DLTensor n = tensor(buffer, F32, 3, neg, c, 0);
  CHECK_STATUS(dlpack_dltensor_dim_order(&n, out, 3), DLPACK_HELPERS_STATUS_INVALID_SHAPE);
  n.shape = NULL;
  CHECK_STATUS(dlpack_dltensor_dim_order(&n, out, 3), DLPACK_HELPERS_STATUS_NULL_SHAPE);
  n.ndim = -1;
  CHECK_STATUS(dlpack_dltensor_dim_order(&n, out, 3), DLPACK_HELPERS_STATUS_INVALID_NDIM);
  CHECK(out[0] == -1 && out[1] == -1 && out[2] == -1);
}

int main(void) {
  RUN(case_10_pinned_host_name);
  RUN(case_29_null_strides);
  RUN(case_30_size_one_dims_with_normalised_stride);
  RUN(case_32_stride_zero_on_size_one_dims);
  RUN(case_33_empty_tensors_are_contiguous);
  RUN(case_34_empty_tensor_with_null_data);
  RUN(case_36_non_unit_and_zero_strides);
  RUN(case_38_byte_offset_honoured);
  RUN(case_39_byte_offset_pointer_vs_handle);
  RUN(case_40_nonzero_byte_offset_and_alignment);
  RUN(case_42_256_byte_alignment_not_assumed);
  RUN(case_43_bool);
  RUN(case_45_bfloat16);
  RUN(case_46_read_only_flag);
  RUN(case_59_dim_order_by_stride);
  RUN(names_and_buffers);
  RUN(garbage_fields_are_rejected_before_arrays_are_read);
  RUN(create_owned_tensor);
  RUN(legacy_to_versioned_releases_once);
  RUN(versioned_to_legacy_reports_flags);
  RUN(sub_byte_extents);
  RUN(padded_flag_needs_version_1_1);
  RUN(compact_strides_only_strides_must_fit);
  RUN(case_49_implied_strides_never_clamp);
  RUN(case_50_legacy_writability_is_never_invented);
  RUN(fits_allocation_negative_strides_empty_0d_overflow);
  return CHECK_REPORT();
}
