/* The C ABI for other languages' FFIs (issue 35): the caller-owned error object of the
 * *_with_error variants, and dlpack_tensor_alloc (a producer with no callback). */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */
#include "dlpack_helpers.h"
#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static const DLDataType F32 = {kDLFloat, 32, 1};
static const DLDevice CPU = {kDLCPU, 0};

/* An error object whose every byte past struct_size holds `fill`, to see what a call wrote. */
static dlpack_helpers_error fresh_error(unsigned char fill) {
  dlpack_helpers_error e;
  memset(&e, fill, sizeof e);
  e.struct_size = sizeof e;
  return e;
}

static int untouched(const dlpack_helpers_error *e, unsigned char fill) {
  const unsigned char *p = (const unsigned char *)e;
  for (size_t i = sizeof e->struct_size; i < sizeof *e; ++i)
    if (p[i] != fill) return 0;
  return e->struct_size == sizeof *e;
}

/* The object holds exactly what the failing call left on this thread. */
static void check_filled(const dlpack_helpers_error *e, dlpack_helpers_status want) {
  const char *last = dlpack_last_error_message();
  CHECK_EQ_INT(e->status, want);
  CHECK_EQ_INT(e->struct_size, sizeof *e);
  CHECK_EQ_INT(e->reserved, 0);
  CHECK(e->message[0] != '\0');
  CHECK_EQ_INT(e->message_length, strlen(last));
  CHECK(strcmp(e->message, last) == 0);
}

TEST(layout_is_fixed_for_ffi_mirrors) {
  CHECK_EQ_INT(DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY, 512);
  CHECK_EQ_INT(offsetof(dlpack_helpers_error, struct_size), 0);
  CHECK_EQ_INT(offsetof(dlpack_helpers_error, status), sizeof(size_t));
  CHECK_EQ_INT(offsetof(dlpack_helpers_error, reserved), sizeof(size_t) + 4);
  CHECK_EQ_INT(offsetof(dlpack_helpers_error, message_length), sizeof(size_t) + 8);
  CHECK_EQ_INT(offsetof(dlpack_helpers_error, message), 2 * sizeof(size_t) + 8);
  CHECK_EQ_INT(sizeof(dlpack_helpers_error), 2 * sizeof(size_t) + 8 + 512);
}

TEST(failure_fills_the_object_success_leaves_it_untouched) {
  dlpack_helpers_error e = fresh_error(0x5A);
  DLDataType dt;
  CHECK_STATUS(dlpack_dtype_parse_with_error("float32", &dt, &e), DLPACK_HELPERS_STATUS_OK);
  CHECK(untouched(&e, 0x5A));
  CHECK_EQ_INT(dt.bits, 32);
  CHECK_STATUS(dlpack_dtype_parse_with_error("float33", &dt, &e),
               DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
  check_filled(&e, DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
  CHECK(strstr(e.message, "float33") != NULL);
  /* A later success leaves the earlier failure's contents in place. */
  DLDevice d;
  CHECK_STATUS(dlpack_device_parse_with_error("cuda:1", &d, &e), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(e.status, DLPACK_HELPERS_STATUS_UNKNOWN_NAME);
  CHECK(strstr(e.message, "float33") != NULL);
  CHECK_STATUS(dlpack_device_parse_with_error(NULL, &d, &e), DLPACK_HELPERS_STATUS_NULL_POINTER);
  check_filled(&e, DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK(strstr(e.message, "name") != NULL);
}

TEST(the_object_keeps_its_calls_message_after_later_failures) {
  dlpack_helpers_error first = fresh_error(0), second = fresh_error(0);
  DLPackVersion v20 = {2, 0}, v13 = {1, 3};
  dlpack_helpers_version_compat c;
  CHECK_STATUS(dlpack_version_check_with_error(v20, &c, &first),
               DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  char copy[DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY];
  memcpy(copy, first.message, sizeof copy);
  /* A second failure on this thread replaces the thread's message, not the first object. */
  CHECK_STATUS(dlpack_version_negotiate_with_error(v13, 0, &v20, NULL, &second),
               DLPACK_HELPERS_STATUS_NULL_POINTER);
  check_filled(&second, DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK(strcmp(dlpack_last_error_message(), first.message) != 0);
  CHECK(memcmp(copy, first.message, sizeof copy) == 0);
  CHECK_EQ_INT(first.status, DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
}

TEST(null_error_object_is_the_base_function) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.ndim = -1;
  t.device = CPU;
  t.dtype = F32;
  CHECK_STATUS(dlpack_dltensor_validate_with_error(&t, (DLPackVersion){1, 3}, 0, NULL, NULL, NULL),
               DLPACK_HELPERS_STATUS_INVALID_NDIM);
  const char *with = dlpack_last_error_message();
  char kept[512];
  snprintf(kept, sizeof kept, "%s", with);
  CHECK_STATUS(dlpack_dltensor_validate(&t, (DLPackVersion){1, 3}, 0, NULL, NULL),
               DLPACK_HELPERS_STATUS_INVALID_NDIM);
  CHECK(strcmp(kept, dlpack_last_error_message()) == 0);
}

static int deletes = 0;
static void count_delete(DLManagedTensorVersioned *t) {
  (void)t;
  ++deletes;
}

TEST(too_small_object_is_refused_before_anything_is_done) {
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = 2; /* a major this library cannot read: or_delete would release it */
  m.deleter = count_delete;
  dlpack_helpers_error e = fresh_error(0x33);
  e.struct_size = offsetof(dlpack_helpers_error, message);
  CHECK_STATUS(dlpack_tensor_check_version_or_delete_with_error(&m, NULL, &e),
               DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  CHECK_EQ_INT(deletes, 0);
  CHECK(strstr(dlpack_last_error_message(), "struct_size") != NULL);
  CHECK_EQ_INT(e.struct_size, offsetof(dlpack_helpers_error, message));
  CHECK_EQ_INT(e.status, 0x33333333);
  /* With a whole object: released, and the status and message are in the object. */
  e = fresh_error(0x33);
  CHECK_STATUS(dlpack_tensor_check_version_or_delete_with_error(&m, NULL, &e),
               DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_EQ_INT(deletes, 1);
  check_filled(&e, DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  /* The non-deleting check leaves the tensor to the caller. */
  e = fresh_error(0);
  CHECK_STATUS(dlpack_tensor_check_version_with_error(&m, NULL, &e),
               DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_EQ_INT(deletes, 1);
  check_filled(&e, DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
}

/* Each thread fails with its own argument name into its own object, between barriers so the
 * failures interleave; every object must hold its own call's message. */
#define THREADS 4
#define ROUNDS 2000
static pthread_barrier_t barrier;
static int wrong = 0;
static pthread_mutex_t wrong_lock = PTHREAD_MUTEX_INITIALIZER;

static void *fail_many(void *arg) {
  long id = (long)arg;
  char name[32];
  snprintf(name, sizeof name, "nosuchdtype%ld", id);
  for (int r = 0; r < ROUNDS; ++r) {
    dlpack_helpers_error e = fresh_error(0);
    DLDataType dt;
    if (r % 100 == 0) pthread_barrier_wait(&barrier);
    dlpack_helpers_status s = dlpack_dtype_parse_with_error(name, &dt, &e);
    if (s != DLPACK_HELPERS_STATUS_UNKNOWN_NAME || e.status != s ||
        strstr(e.message, name) == NULL) {
      pthread_mutex_lock(&wrong_lock);
      ++wrong;
      pthread_mutex_unlock(&wrong_lock);
    }
  }
  return NULL;
}

TEST(concurrent_failures_each_get_their_own_message) {
  pthread_t th[THREADS];
  pthread_barrier_init(&barrier, NULL, THREADS);
  for (long i = 0; i < THREADS; ++i) pthread_create(&th[i], NULL, fail_many, (void *)i);
  for (int i = 0; i < THREADS; ++i) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&barrier);
  CHECK_EQ_INT(wrong, 0);
}

TEST(validate_and_convert_variants_fill_the_object) {
  int64_t shape[2] = {2, 3};
  DLManagedTensorVersioned *t = NULL;
  dlpack_helpers_error e = fresh_error(0);
  /* create: NULL data for a non-empty CPU tensor */
  CHECK_STATUS(dlpack_tensor_create_with_error(NULL, CPU, 2, shape, NULL, F32, 0, 0, NULL, NULL,
                                               &t, &e),
               DLPACK_HELPERS_STATUS_NULL_DATA);
  check_filled(&e, DLPACK_HELPERS_STATUS_NULL_DATA);
  CHECK(t == NULL);
  CHECK_STATUS(dlpack_tensor_alloc_with_error(CPU, 2, shape, NULL, F32, 0, &t, &e),
               DLPACK_HELPERS_STATUS_OK);
  /* validate: a requirement the tensor does not meet */
  dlpack_helpers_validate_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.flags = DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE;
  o.dtype = (DLDataType){kDLInt, 32, 1};
  e = fresh_error(0);
  CHECK_STATUS(dlpack_tensor_validate_with_error(t, &o, NULL, &e),
               DLPACK_HELPERS_STATUS_DTYPE_MISMATCH);
  check_filled(&e, DLPACK_HELPERS_STATUS_DTYPE_MISMATCH);
  /* versioned -> legacy: unknown option bits */
  DLManagedTensor *legacy = NULL;
  e = fresh_error(0);
  CHECK_STATUS(dlpack_versioned_to_legacy_with_error(t, 0x80, NULL, &legacy, &e),
               DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  check_filled(&e, DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(dlpack_versioned_to_legacy_with_error(t, 0, NULL, &legacy, &e),
               DLPACK_HELPERS_STATUS_OK);
  e = fresh_error(0);
  legacy->dl_tensor.dtype.lanes = 0; /* now invalid: both validators refuse it */
  CHECK_STATUS(dlpack_legacy_tensor_validate_with_error(legacy, NULL, NULL, &e),
               DLPACK_HELPERS_STATUS_INVALID_DTYPE);
  check_filled(&e, DLPACK_HELPERS_STATUS_INVALID_DTYPE);
  DLManagedTensorVersioned *back = NULL;
  e = fresh_error(0);
  CHECK_STATUS(dlpack_legacy_to_versioned_with_error(legacy, 0, &back, &e),
               DLPACK_HELPERS_STATUS_INVALID_DTYPE);
  check_filled(&e, DLPACK_HELPERS_STATUS_INVALID_DTYPE);
  legacy->dl_tensor.dtype.lanes = 1;
  dlpack_legacy_tensor_delete(legacy); /* releases t through the wrapper */
}

/* ---- dlpack_tensor_alloc ---------------------------------------------------------------- */

TEST(alloc_gives_a_zeroed_aligned_compact_tensor_freed_by_its_deleter) {
  int64_t shape[2] = {2, 3};
  DLManagedTensorVersioned *t = NULL;
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 2, shape, NULL, F32, 0, &t), DLPACK_HELPERS_STATUS_OK);
  CHECK(t != NULL);
  CHECK_EQ_INT(t->version.major, 1);
  CHECK_EQ_INT(t->version.minor, 3);
  CHECK(t->deleter != NULL);
  CHECK(t->manager_ctx == NULL);
  CHECK_EQ_INT(t->flags, 0);
  CHECK(t->dl_tensor.data != NULL);
  CHECK_EQ_INT((uintptr_t)t->dl_tensor.data % DLPACK_HELPERS_ALLOC_ALIGNMENT, 0);
  CHECK_EQ_INT(t->dl_tensor.device.device_type, kDLCPU);
  CHECK_EQ_INT(t->dl_tensor.ndim, 2);
  CHECK(t->dl_tensor.shape != shape);
  CHECK_EQ_INT(t->dl_tensor.shape[0], 2);
  CHECK_EQ_INT(t->dl_tensor.shape[1], 3);
  CHECK(t->dl_tensor.strides != NULL);
  CHECK_EQ_INT(t->dl_tensor.strides[0], 3);
  CHECK_EQ_INT(t->dl_tensor.strides[1], 1);
  CHECK_EQ_INT(t->dl_tensor.byte_offset, 0);
  float *f = (float *)t->dl_tensor.data;
  for (int i = 0; i < 6; ++i) CHECK(f[i] == 0.0f);
  for (int i = 0; i < 6; ++i) f[i] = (float)i; /* the caller fills the buffer */
  dlpack_helpers_layout l;
  CHECK_STATUS(dlpack_tensor_validate(t, NULL, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(l.nbytes, 24);
  CHECK(l.properties & DLPACK_HELPERS_LAYOUT_C_CONTIGUOUS);
  /* The buffer covers the whole tensor: [1][2] at 1*3+2. */
  CHECK(f[1 * t->dl_tensor.strides[0] + 2 * t->dl_tensor.strides[1]] == 5.0f);
  dlpack_tensor_delete(t); /* frees buffer and metadata (the sanitizer part checks for leaks) */
}

TEST(alloc_honours_strides_including_negative_ones) {
  int64_t shape[2] = {2, 3}, fstrides[2] = {1, 2}, neg[1] = {-2}, shape1[1] = {4};
  DLManagedTensorVersioned *t = NULL;
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 2, shape, fstrides, F32, 0, &t), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(t->dl_tensor.strides[0], 1);
  CHECK_EQ_INT(t->dl_tensor.strides[1], 2);
  dlpack_helpers_layout l;
  CHECK_STATUS(dlpack_tensor_validate(t, NULL, &l), DLPACK_HELPERS_STATUS_OK);
  CHECK(l.properties & DLPACK_HELPERS_LAYOUT_F_CONTIGUOUS);
  dlpack_tensor_delete(t);
  /* Stride -2 over 4 elements: element 0 is 6 elements above the lowest one. */
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 1, shape1, neg, F32, 0, &t), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(t->dl_tensor.byte_offset, 24);
  CHECK_EQ_INT(t->dl_tensor.strides[0], -2);
  bool fits = false;
  CHECK_STATUS(dlpack_dltensor_fits_allocation(&t->dl_tensor, 0, t->dl_tensor.data, 28, &fits),
               DLPACK_HELPERS_STATUS_OK);
  CHECK(fits);
  CHECK_STATUS(dlpack_dltensor_fits_allocation(&t->dl_tensor, 0, t->dl_tensor.data, 27, &fits),
               DLPACK_HELPERS_STATUS_OK);
  CHECK(!fits);
  dlpack_tensor_delete(t);
}

TEST(alloc_empty_and_0d_tensors) {
  int64_t shape[2] = {0, 5};
  DLManagedTensorVersioned *t = NULL;
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 2, shape, NULL, F32, 0, &t), DLPACK_HELPERS_STATUS_OK);
  CHECK(t->dl_tensor.data != NULL);
  CHECK_EQ_INT((uintptr_t)t->dl_tensor.data % 64, 0);
  CHECK_STATUS(dlpack_tensor_validate(t, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
  dlpack_tensor_delete(t);
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 0, NULL, NULL, F32, DLPACK_FLAG_BITMASK_READ_ONLY, &t),
               DLPACK_HELPERS_STATUS_OK);
  CHECK(t->dl_tensor.shape == NULL);
  CHECK(t->dl_tensor.strides == NULL);
  CHECK_EQ_INT(t->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  CHECK(*(float *)t->dl_tensor.data == 0.0f);
  CHECK_STATUS(dlpack_tensor_validate(t, NULL, NULL), DLPACK_HELPERS_STATUS_OK);
  dlpack_tensor_delete(t);
}

TEST(alloc_refuses_bad_input_with_a_clear_status) {
  int64_t shape[2] = {2, 3}, neg[2] = {2, -3}, huge[2] = {INT64_C(1) << 40, INT64_C(1) << 30};
  DLManagedTensorVersioned *t = NULL;
  DLDevice cuda = {kDLCUDA, 0}, cpu1 = {kDLCPU, 1};
  dlpack_helpers_error e = fresh_error(0);
  CHECK_STATUS(dlpack_tensor_alloc_with_error(cuda, 2, shape, NULL, F32, 0, &t, &e),
               DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE);
  check_filled(&e, DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE);
  CHECK(strstr(e.message, "kDLCPU") != NULL);
  CHECK_STATUS(dlpack_tensor_alloc(cpu1, 2, shape, NULL, F32, 0, &t),
               DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE);
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 2, NULL, NULL, F32, 0, &t),
               DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 2, shape, NULL, F32, 0, NULL),
               DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 2, shape, NULL, F32, 1u << 5, &t),
               DLPACK_HELPERS_STATUS_INVALID_FLAGS);
  CHECK_STATUS(dlpack_tensor_alloc(CPU, -1, shape, NULL, F32, 0, &t),
               DLPACK_HELPERS_STATUS_INVALID_NDIM);
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 2, neg, NULL, F32, 0, &t),
               DLPACK_HELPERS_STATUS_INVALID_SHAPE);
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 2, shape, NULL, (DLDataType){kDLFloat, 32, 0}, 0, &t),
               DLPACK_HELPERS_STATUS_INVALID_DTYPE);
  /* 2^70 elements: the count overflows int64_t, never a wrapped (small) allocation. */
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 2, huge, NULL, F32, 0, &t),
               DLPACK_HELPERS_STATUS_OVERFLOW);
  /* 2^61 float32 elements: the count fits, the 2^63 bytes do not. */
  int64_t bytes_overflow[1] = {INT64_C(1) << 61};
  CHECK_STATUS(dlpack_tensor_alloc(CPU, 1, bytes_overflow, NULL, F32, 0, &t),
               DLPACK_HELPERS_STATUS_OVERFLOW);
  CHECK(t == NULL);
}

int main(void) {
  RUN(layout_is_fixed_for_ffi_mirrors);
  RUN(failure_fills_the_object_success_leaves_it_untouched);
  RUN(the_object_keeps_its_calls_message_after_later_failures);
  RUN(null_error_object_is_the_base_function);
  RUN(too_small_object_is_refused_before_anything_is_done);
  RUN(concurrent_failures_each_get_their_own_message);
  RUN(validate_and_convert_variants_fill_the_object);
  RUN(alloc_gives_a_zeroed_aligned_compact_tensor_freed_by_its_deleter);
  RUN(alloc_honours_strides_including_negative_ones);
  RUN(alloc_empty_and_0d_tensors);
  RUN(alloc_refuses_bad_input_with_a_clear_status);
  return CHECK_REPORT();
}
