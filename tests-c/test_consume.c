/* C tests of what every consumer calls (docs/consume.md): deleters, device queries, CPU
 * accessibility, info, versions, negotiation, error model. Run against the shared and the static
 * library by scripts/test c. */
#include "dlpack_helpers.h"
#include "check.h"

#include <stdint.h>

/* ---- A tracked producer: counts deleter calls, frees and poisons the struct (case 6). ---- */
static int deleter_calls = 0;
static int live_tensors = 0;

static void versioned_deleter(DLManagedTensorVersioned *self) {
  ++deleter_calls;
  --live_tensors;
  memset(self, 0xAB, sizeof *self); /* poison: any later read would see garbage */
  free(self);
}

static void legacy_deleter(DLManagedTensor *self) {
  ++deleter_calls;
  --live_tensors;
  memset(self, 0xAB, sizeof *self);
  free(self);
}

static int64_t shape_2x3[2] = {2, 3};
static int64_t strides_2x3[2] = {3, 1};
static float data_2x3[6] = {0, 1, 2, 3, 4, 5};

static DLManagedTensorVersioned *make_versioned(uint32_t major, uint32_t minor, int with_deleter) {
  DLManagedTensorVersioned *t = calloc(1, sizeof *t);
  t->version.major = major;
  t->version.minor = minor;
  t->deleter = with_deleter ? versioned_deleter : NULL;
  t->dl_tensor.data = data_2x3;
  t->dl_tensor.device.device_type = kDLCPU;
  t->dl_tensor.device.device_id = 0;
  t->dl_tensor.ndim = 2;
  t->dl_tensor.dtype.code = kDLFloat;
  t->dl_tensor.dtype.bits = 32;
  t->dl_tensor.dtype.lanes = 1;
  t->dl_tensor.shape = shape_2x3;
  t->dl_tensor.strides = strides_2x3;
  ++live_tensors;
  return t;
}

static DLManagedTensor *make_legacy(int with_deleter) {
  DLManagedTensor *t = calloc(1, sizeof *t);
  t->deleter = with_deleter ? legacy_deleter : NULL;
  t->dl_tensor.data = data_2x3;
  t->dl_tensor.device.device_type = kDLCUDAHost;
  t->dl_tensor.device.device_id = 0;
  t->dl_tensor.ndim = 2;
  t->dl_tensor.dtype.code = kDLFloat;
  t->dl_tensor.dtype.bits = 32;
  t->dl_tensor.dtype.lanes = 1;
  t->dl_tensor.shape = shape_2x3;
  t->dl_tensor.strides = strides_2x3;
  ++live_tensors;
  return t;
}

/* A versioned tensor of a future major: only the frozen prefix is meaningful; what follows may
 * be anything, so the test fills the rest with bytes that would make any read obvious. */
typedef struct {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(DLManagedTensorVersioned *self);
  uint64_t flags;
  unsigned char future_layout[64];
} future_tensor;

static int future_deleter_calls = 0;
static void future_deleter(DLManagedTensorVersioned *self) {
  ++future_deleter_calls;
  free(self);
}

static DLManagedTensorVersioned *make_future(uint32_t major) {
  future_tensor *t = malloc(sizeof *t);
  memset(t, 0xCD, sizeof *t);
  t->version.major = major;
  t->version.minor = 0;
  t->manager_ctx = NULL;
  t->deleter = future_deleter;
  return (DLManagedTensorVersioned *)t;
}

/* ---- Deleters ---------------------------------------------------------------------------- */

TEST(case_6_deleter_called_once_and_struct_not_touched_after) {
  deleter_calls = 0;
  DLManagedTensorVersioned *v = make_versioned(1, 3, 1);
  dlpack_tensor_delete(v); /* frees and poisons v; a read after it would be caught by valgrind/ASan */
  CHECK_EQ_INT(deleter_calls, 1);
  DLManagedTensor *l = make_legacy(1);
  dlpack_legacy_tensor_delete(l);
  CHECK_EQ_INT(deleter_calls, 2);
  CHECK_EQ_INT(live_tensors, 0);
}

TEST(case_5_null_deleter_and_null_tensor) {
  deleter_calls = 0;
  /* NULL deleter: a successful no-op, nothing else touched. */
  DLManagedTensorVersioned *v = make_versioned(1, 3, 0);
  DLManagedTensorVersioned before = *v;
  dlpack_tensor_delete(v);
  CHECK(memcmp(&before, v, sizeof before) == 0);
  CHECK_EQ_INT(deleter_calls, 0);
  free(v);
  --live_tensors;
  DLManagedTensor *l = make_legacy(0);
  dlpack_legacy_tensor_delete(l);
  CHECK_EQ_INT(deleter_calls, 0);
  free(l);
  --live_tensors;
  /* NULL tensor: nothing happens, no crash. */
  dlpack_tensor_delete(NULL);
  dlpack_legacy_tensor_delete(NULL);
  /* Queries on NULL tensors: NULL_POINTER, out-parameter unchanged. */
  DLDevice dev = {(DLDeviceType)77, 77};
  CHECK_STATUS(dlpack_get_device(NULL, &dev), DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK(strstr(dlpack_last_error_message(), "tensor") != NULL);
  CHECK_STATUS(dlpack_legacy_get_device(NULL, &dev), DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK_EQ_INT(dev.device_type, 77);
  CHECK_EQ_INT(dev.device_id, 77);
  CHECK_EQ_INT(live_tensors, 0);
}

TEST(delete_works_on_any_major_reading_only_the_deleter) {
  future_deleter_calls = 0;
  dlpack_tensor_delete(make_future(2));
  dlpack_tensor_delete(make_future(0));
  dlpack_tensor_delete(make_future(UINT32_MAX));
  CHECK_EQ_INT(future_deleter_calls, 3);
}

/* ---- Device and CPU accessibility ------------------------------------------------------ */

static DLDevice dev_of(int32_t type) {
  DLDevice d;
  d.device_type = (DLDeviceType)type;
  d.device_id = 0;
  return d;
}

TEST(case_11_every_device_value_gets_one_documented_answer) {
  int32_t values[] = {-1, 999, INT32_MIN, INT32_MAX};
  for (int32_t v = 0; v <= 20; ++v) {
    dlpack_helpers_host_access a = dlpack_device_host_access(dev_of(v));
    CHECK(a == DLPACK_HELPERS_HOST_ACCESS_NEVER || a == DLPACK_HELPERS_HOST_ACCESS_ALWAYS ||
          a == DLPACK_HELPERS_HOST_ACCESS_DEPENDS);
    CHECK_EQ_INT(dlpack_is_cpu_accessible(dev_of(v)), a == DLPACK_HELPERS_HOST_ACCESS_ALWAYS);
  }
  CHECK_EQ_INT(dlpack_device_host_access(dev_of(kDLCUDAHost)), DLPACK_HELPERS_HOST_ACCESS_ALWAYS);
  CHECK(dlpack_is_cpu_accessible(dev_of(3)));
  /* The documented "unknown" answer is DEPENDS, exactly. */
  int32_t unknown[] = {12, 14, 0, 5, 6, 19, 20, 999, -1, -7, INT32_MIN, INT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    CHECK_EQ_INT(dlpack_device_host_access(dev_of(unknown[i])), DLPACK_HELPERS_HOST_ACCESS_DEPENDS);
    CHECK(!dlpack_is_cpu_accessible(dev_of(unknown[i])));
  }
  for (size_t i = 0; i < sizeof values / sizeof values[0]; ++i)
    CHECK(!dlpack_is_cpu_accessible(dev_of(values[i])));
}

TEST(case_16_host_memory_table) {
  int32_t yes[] = {1, 3, 11, 13};
  int32_t no[] = {2, 4, 7, 8, 9, 10, 15, 16, 17, 18};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(dlpack_is_cpu_accessible(dev_of(yes[i])));
    CHECK_EQ_INT(dlpack_device_host_access(dev_of(yes[i])), DLPACK_HELPERS_HOST_ACCESS_ALWAYS);
  }
  for (size_t i = 0; i < sizeof no / sizeof no[0]; ++i) {
    CHECK(!dlpack_is_cpu_accessible(dev_of(no[i])));
    CHECK_EQ_INT(dlpack_device_host_access(dev_of(no[i])), DLPACK_HELPERS_HOST_ACCESS_NEVER);
  }
  CHECK_EQ_INT(dlpack_device_host_access(dev_of(12)), DLPACK_HELPERS_HOST_ACCESS_DEPENDS);
  CHECK_EQ_INT(dlpack_device_host_access(dev_of(14)), DLPACK_HELPERS_HOST_ACCESS_DEPENDS);
  /* The device id never changes the answer. */
  DLDevice pinned = {kDLCUDAHost, 5};
  CHECK(dlpack_is_cpu_accessible(pinned));
}

TEST(case_15_cuda_managed_is_known_and_cpu_accessible) {
  CHECK(dlpack_is_cpu_accessible(dev_of(kDLCUDAManaged)));
  CHECK_EQ_INT(dlpack_device_host_access(dev_of(13)), DLPACK_HELPERS_HOST_ACCESS_ALWAYS);
  /* get_device passes (13, 0) through unchanged: it does not claim an ordinal. */
  DLManagedTensorVersioned *t = make_versioned(1, 3, 1);
  t->dl_tensor.device.device_type = kDLCUDAManaged;
  DLDevice d;
  CHECK_STATUS(dlpack_get_device(t, &d), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(d.device_type, 13);
  CHECK_EQ_INT(d.device_id, 0);
  dlpack_tensor_delete(t);
}

TEST(get_device_versions) {
  DLDevice d = {(DLDeviceType)77, 77};
  DLManagedTensorVersioned *t = make_versioned(1, 0, 1);
  t->dl_tensor.device.device_type = kDLCUDA;
  t->dl_tensor.device.device_id = 3;
  CHECK_STATUS(dlpack_get_device(t, &d), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(d.device_type, kDLCUDA);
  CHECK_EQ_INT(d.device_id, 3);
  CHECK_STATUS(dlpack_get_device(t, NULL), DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK(strstr(dlpack_last_error_message(), "out_device") != NULL);
  dlpack_tensor_delete(t);
  /* A newer minor is read; unknown device types pass through. */
  t = make_versioned(1, 9, 1);
  t->dl_tensor.device.device_type = (DLDeviceType)999;
  CHECK_STATUS(dlpack_get_device(t, &d), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(d.device_type, 999);
  dlpack_tensor_delete(t);
  /* Other majors: refused, nothing past the version read, out unchanged. */
  uint32_t majors[] = {0, 2, UINT32_MAX};
  for (size_t i = 0; i < 3; ++i) {
    DLManagedTensorVersioned *f = make_future(majors[i]);
    d.device_type = (DLDeviceType)77;
    CHECK_STATUS(dlpack_get_device(f, &d), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
    CHECK(strstr(dlpack_last_error_message(), "major") != NULL);
    CHECK_EQ_INT(d.device_type, 77);
    dlpack_tensor_delete(f);
  }
  DLManagedTensor *l = make_legacy(1);
  CHECK_STATUS(dlpack_legacy_get_device(l, &d), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(d.device_type, kDLCUDAHost);
  CHECK_STATUS(dlpack_legacy_get_device(l, NULL), DLPACK_HELPERS_STATUS_NULL_POINTER);
  dlpack_legacy_tensor_delete(l);
}

/* ---- Versions ----------------------------------------------------------------------------- */

TEST(version_check_and_reject_and_release) {
  dlpack_helpers_version_compat c = -1;
  DLPackVersion v13 = {1, 3}, v10 = {1, 0}, v15 = {1, 5}, v08 = {0, 8}, v20 = {2, 0};
  CHECK_STATUS(dlpack_version_check(v13, &c), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(c, DLPACK_HELPERS_VERSION_EXACT);
  CHECK_STATUS(dlpack_version_check(v10, &c), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(c, DLPACK_HELPERS_VERSION_OLDER_MINOR);
  CHECK_STATUS(dlpack_version_check(v15, &c), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(c, DLPACK_HELPERS_VERSION_NEWER_MINOR);
  c = -1;
  CHECK_STATUS(dlpack_version_check(v08, &c), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_STATUS(dlpack_version_check(v20, &c), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_EQ_INT(c, -1);
  CHECK_STATUS(dlpack_version_check(v13, NULL), DLPACK_HELPERS_STATUS_OK);

  /* check_version on tensors: the caller keeps ownership either way. */
  DLManagedTensorVersioned *t = make_versioned(1, 2, 1);
  CHECK_STATUS(dlpack_tensor_check_version(t, &c), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(c, DLPACK_HELPERS_VERSION_OLDER_MINOR);
  CHECK_STATUS(dlpack_tensor_check_version_or_delete(t, &c), DLPACK_HELPERS_STATUS_OK);
  dlpack_tensor_delete(t);
  CHECK_STATUS(dlpack_tensor_check_version(NULL, &c), DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK_STATUS(dlpack_tensor_check_version_or_delete(NULL, &c), DLPACK_HELPERS_STATUS_NULL_POINTER);

  future_deleter_calls = 0;
  DLManagedTensorVersioned *f = make_future(2);
  CHECK_STATUS(dlpack_tensor_check_version(f, &c), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_EQ_INT(future_deleter_calls, 0);
  /* Reject and release in one step: the deleter runs exactly once. */
  CHECK_STATUS(dlpack_tensor_check_version_or_delete(f, &c), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_EQ_INT(future_deleter_calls, 1);
  f = make_future(0);
  CHECK_STATUS(dlpack_tensor_check_version_or_delete(f, NULL), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_EQ_INT(future_deleter_calls, 2);
}

static dlpack_helpers_status nego(uint32_t pmaj, uint32_t pmin, uint32_t flags, const DLPackVersion *max,
                                  dlpack_helpers_version_choice *out) {
  DLPackVersion p = {pmaj, pmin};
  return dlpack_version_negotiate(p, flags, max, out);
}

#define EXPECT_VERSIONED(st, ch, maj, min)                          \
  do {                                                              \
    CHECK_EQ_INT(st, DLPACK_HELPERS_STATUS_OK);                     \
    CHECK_EQ_INT((ch).kind, DLPACK_HELPERS_EXPORT_VERSIONED);       \
    CHECK_EQ_INT((ch).version.major, maj);                          \
    CHECK_EQ_INT((ch).version.minor, min);                          \
  } while (0)

TEST(case_20_max_version_honoured) {
  dlpack_helpers_version_choice ch;
  const uint32_t L = DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY;
  DLPackVersion m10 = {1, 0}, m15 = {1, 5}, m08 = {0, 8}, m20 = {2, 0};
  CHECK_STATUS(nego(1, 3, L, NULL, &ch), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(ch.kind, DLPACK_HELPERS_EXPORT_LEGACY);
  EXPECT_VERSIONED(nego(1, 3, L, &m10, &ch), ch, 1, 3);
  EXPECT_VERSIONED(nego(1, 3, L, &m15, &ch), ch, 1, 3);
  CHECK_STATUS(nego(1, 3, L, &m08, &ch), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(ch.kind, DLPACK_HELPERS_EXPORT_LEGACY);
  EXPECT_VERSIONED(nego(1, 3, L, &m20, &ch), ch, 1, 3);
  /* Without the legacy path: None and (0, 8) are the BufferError kind. */
  CHECK_STATUS(nego(1, 3, 0, NULL, &ch), DLPACK_HELPERS_STATUS_NO_COMMON_VERSION);
  CHECK(strcmp(dlpack_status_python_exception(DLPACK_HELPERS_STATUS_NO_COMMON_VERSION), "BufferError") == 0);
  CHECK_STATUS(nego(1, 3, 0, &m08, &ch), DLPACK_HELPERS_STATUS_NO_COMMON_VERSION);
}

TEST(case_18_consumer_asks_with_max_version) {
  dlpack_helpers_version_choice ch;
  const uint32_t L = DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY;
  DLPackVersion m1x = {1, 1};
  /* negotiate((1,x), producer={legacy, 1.y}) -> versioned (1.y): the only struct with READ_ONLY. */
  EXPECT_VERSIONED(nego(1, 2, L, &m1x, &ch), ch, 1, 2);
  /* negotiate(None, producer={legacy, 1.y}) -> legacy. */
  CHECK_STATUS(nego(1, 2, L, NULL, &ch), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(ch.kind, DLPACK_HELPERS_EXPORT_LEGACY);
  /* negotiate(None, producer={1.y only}) -> BufferError kind. */
  CHECK_STATUS(nego(1, 2, 0, NULL, &ch), DLPACK_HELPERS_STATUS_NO_COMMON_VERSION);
}

TEST(case_21_keyword_not_understood_is_distinct_from_version_unsupported) {
  dlpack_helpers_version_choice ch = {77, {77, 77}};
  DLPackVersion m13 = {1, 3};
  const uint32_t old = DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY | DLPACK_HELPERS_PRODUCER_NO_MAX_VERSION_KEYWORD;
  CHECK_STATUS(nego(0, 8, old, &m13, &ch), DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD);
  CHECK(strcmp(dlpack_status_python_exception(DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD), "TypeError") == 0);
  CHECK(DLPACK_HELPERS_STATUS_KEYWORD_NOT_UNDERSTOOD != DLPACK_HELPERS_STATUS_NO_COMMON_VERSION);
  CHECK_EQ_INT(ch.kind, 77); /* not written on failure */
  /* The retry without the keyword succeeds with the legacy struct. */
  CHECK_STATUS(nego(0, 8, old, NULL, &ch), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(ch.kind, DLPACK_HELPERS_EXPORT_LEGACY);
}

TEST(negotiate_bad_input) {
  dlpack_helpers_version_choice ch;
  DLPackVersion m13 = {1, 3};
  CHECK_STATUS(nego(1, 3, 0, &m13, NULL), DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK_STATUS(nego(1, 3, 0x80, &m13, &ch), DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(dlpack_last_error_message(), "producer_flags") != NULL);
  /* A producer of major 2 and a consumer that only reads 1.x: no common struct. */
  CHECK_STATUS(nego(2, 0, DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY, &m13, &ch), DLPACK_HELPERS_STATUS_NO_COMMON_VERSION);
}

/* ---- Info and error model ----------------------------------------------------------------- */

TEST(info_fills_what_fits) {
  dlpack_helpers_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(dlpack_get_info(&info), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(info.struct_size, sizeof info);
  CHECK_EQ_INT(info.major, DLPACK_HELPERS_VERSION_MAJOR);
  CHECK_EQ_INT(info.minor, DLPACK_HELPERS_VERSION_MINOR);
  CHECK_EQ_INT(info.patch, DLPACK_HELPERS_VERSION_PATCH);
  CHECK(strcmp(info.version, DLPACK_HELPERS_VERSION_STRING) == 0);
  CHECK_EQ_INT(info.dlpack_version.major, 1);
  CHECK_EQ_INT(info.dlpack_version.minor, 3);
  CHECK_EQ_INT(info.dlpack_abi_major, DLPACK_HELPERS_DLPACK_MAJOR_VERSION);
  CHECK(info.accepts_legacy);
  /* Run-time discovery of the specification: version 2026.12 and the four profiles. */
  CHECK_EQ_INT(info.spec_version, DLPACK_HELPERS_SPEC_VERSION);
  CHECK_EQ_INT(DLPACK_HELPERS_SPEC_VERSION, 202612);
  CHECK_EQ_INT(info.profiles, DLPACK_HELPERS_PROFILE_CORE | DLPACK_HELPERS_PROFILE_STREAMS |
                                  DLPACK_HELPERS_PROFILE_PYTHON | DLPACK_HELPERS_PROFILE_EXCHANGE);
  CHECK_EQ_INT(DLPACK_HELPERS_PROFILE_CORE | DLPACK_HELPERS_PROFILE_STREAMS | DLPACK_HELPERS_PROFILE_PYTHON |
                   DLPACK_HELPERS_PROFILE_EXCHANGE, 0xF);
  CHECK_EQ_INT(DLPACK_HELPERS_VERSION_NUMBER,
               DLPACK_HELPERS_VERSION_MAJOR * 10000 + DLPACK_HELPERS_VERSION_MINOR * 100 + DLPACK_HELPERS_VERSION_PATCH);

  /* An older, smaller caller struct: only whole fields that fit are written. */
  unsigned char buf[sizeof(dlpack_helpers_info) + 16];
  memset(buf, 0xEE, sizeof buf);
  dlpack_helpers_info *small = (dlpack_helpers_info *)(void *)buf;
  small->struct_size = offsetof(dlpack_helpers_info, minor) + 2; /* cuts `minor` in half */
  CHECK_STATUS(dlpack_get_info(small), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(small->struct_size, offsetof(dlpack_helpers_info, minor));
  CHECK_EQ_INT(small->major, DLPACK_HELPERS_VERSION_MAJOR);
  CHECK(buf[offsetof(dlpack_helpers_info, minor)] == 0xEE);
  CHECK(buf[sizeof(dlpack_helpers_info)] == 0xEE);

  /* A caller compiled before spec_version and profiles were appended (its struct ends with
   * accepts_legacy): the library writes no byte past that struct's end. */
  memset(buf, 0xEE, sizeof buf);
  small->struct_size = offsetof(dlpack_helpers_info, accepts_legacy) + 1;
  CHECK_STATUS(dlpack_get_info(small), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(small->struct_size, offsetof(dlpack_helpers_info, accepts_legacy) + 1);
  CHECK(small->accepts_legacy);
  CHECK(buf[offsetof(dlpack_helpers_info, accepts_legacy) + 1] == 0xEE);
  CHECK(buf[offsetof(dlpack_helpers_info, profiles)] == 0xEE);
  /* Up to spec_version, not profiles. */
  memset(buf, 0xEE, sizeof buf);
  small->struct_size = offsetof(dlpack_helpers_info, profiles);
  CHECK_STATUS(dlpack_get_info(small), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(small->struct_size, offsetof(dlpack_helpers_info, profiles));
  CHECK_EQ_INT(small->spec_version, DLPACK_HELPERS_SPEC_VERSION);
  CHECK(buf[offsetof(dlpack_helpers_info, profiles)] == 0xEE);

  /* A bigger (newer) caller struct: the library fills its own size and says so. */
  memset(buf, 0xEE, sizeof buf);
  small->struct_size = sizeof buf;
  CHECK_STATUS(dlpack_get_info(small), DLPACK_HELPERS_STATUS_OK);
  CHECK(small->struct_size <= sizeof(dlpack_helpers_info));
  CHECK(buf[sizeof(dlpack_helpers_info)] == 0xEE);

  CHECK_STATUS(dlpack_get_info(NULL), DLPACK_HELPERS_STATUS_NULL_POINTER);
  info.struct_size = 3;
  info.major = 777;
  CHECK_STATUS(dlpack_get_info(&info), DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(dlpack_last_error_message(), "struct_size") != NULL);
  CHECK_EQ_INT(info.major, 777);
}

TEST(status_names_and_messages) {
  CHECK(strcmp(dlpack_status_string(DLPACK_HELPERS_STATUS_OK), "OK") == 0);
  CHECK(strcmp(dlpack_status_string(DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION), "UNSUPPORTED_VERSION") == 0);
  CHECK(strcmp(dlpack_status_string(-5), "UNKNOWN_STATUS") == 0);
  CHECK(strcmp(dlpack_status_string(INT32_MAX), "UNKNOWN_STATUS") == 0);
  CHECK(strcmp(dlpack_status_python_exception(DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION), "BufferError") == 0);
  CHECK(strcmp(dlpack_status_python_exception(12345), "RuntimeError") == 0);
  /* A successful call leaves the last message unchanged. */
  DLPackVersion bad = {2, 0};
  CHECK_STATUS(dlpack_version_check(bad, NULL), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  const char *m = dlpack_last_error_message();
  CHECK(strstr(m, "2.0") != NULL);
  DLPackVersion good = {1, 3};
  CHECK_STATUS(dlpack_version_check(good, NULL), DLPACK_HELPERS_STATUS_OK);
  CHECK(strcmp(dlpack_last_error_message(), m) == 0);
}

/* Issue 34 item 6: the status that goes with the last message, so a binding attaches the
 * message only to the status it belongs to. */
TEST(last_error_status_goes_with_the_message) {
  DLDataType dt;
  DLPackVersion v = {2, 0};
  CHECK_STATUS(dlpack_dtype_parse("float31", &dt), DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
  CHECK_EQ_INT(dlpack_last_error_status(), DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
  CHECK_STATUS(dlpack_dtype_parse("float32", &dt), DLPACK_HELPERS_STATUS_OK);
  (void)dlpack_is_cpu_accessible(dt.code == kDLFloat ? (DLDevice){kDLCPU, 0} : (DLDevice){kDLCUDA, 0});
  CHECK_EQ_INT(dlpack_last_error_status(), DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
  CHECK_STATUS(dlpack_version_check(v, NULL), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_EQ_INT(dlpack_last_error_status(), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_EQ_INT(dlpack_last_error_status(), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
}

int main(void) {
  RUN(case_6_deleter_called_once_and_struct_not_touched_after);
  RUN(case_5_null_deleter_and_null_tensor);
  RUN(delete_works_on_any_major_reading_only_the_deleter);
  RUN(case_11_every_device_value_gets_one_documented_answer);
  RUN(case_16_host_memory_table);
  RUN(case_15_cuda_managed_is_known_and_cpu_accessible);
  RUN(get_device_versions);
  RUN(version_check_and_reject_and_release);
  RUN(case_20_max_version_honoured);
  RUN(case_18_consumer_asks_with_max_version);
  RUN(case_21_keyword_not_understood_is_distinct_from_version_unsupported);
  RUN(negotiate_bad_input);
  RUN(info_fills_what_fits);
  RUN(status_names_and_messages);
  RUN(last_error_status_goes_with_the_message);
  return CHECK_REPORT();
}
