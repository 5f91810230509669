/* Stream exchange from C: decode/encode tables (peer cases 23, 25, 28), request resolution
 * (peer case 47), a registered backend, and "backend unavailable" without GPU libraries. */
#define _POSIX_C_SOURCE 200112L
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

/* Decode `value` (has = 0: None) and return the status; the kind and handle go to *out. */
static dlpack_helpers_status decode(int32_t t, int has, int64_t value, uint32_t flags,
                                    dlpack_helpers_stream *out) {
  out->kind = -1;
  out->handle = NULL;
  return dlpack_stream_decode(dev(t, 0), has != 0, value, flags, out);
}

TEST(case_23_cuda_stream_numbering) {
  dlpack_helpers_stream s;
  CHECK_STATUS(decode(kDLCUDA, 1, 0, 0, &s), DLPACK_HELPERS_STATUS_INVALID_STREAM);
  CHECK(strstr(dlpack_last_error_message(), "stream=0") != NULL);
  CHECK_EQ_INT(s.kind, -1); /* untouched on failure */
  CHECK_STATUS(decode(kDLCUDA, 1, 1, 0, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_LEGACY_DEFAULT);
  CHECK_EQ_INT((uintptr_t)s.handle, 1);
  CHECK_STATUS(decode(kDLCUDA, 1, 2, 0, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_PER_THREAD_DEFAULT);
  CHECK_EQ_INT((uintptr_t)s.handle, 2);
  CHECK_STATUS(decode(kDLCUDA, 1, -1, 0, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_NO_SYNC);
  CHECK_STATUS(decode(kDLCUDA, 0, 0, 0, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_LEGACY_DEFAULT);
  CHECK_STATUS(decode(kDLCUDA, 1, -2, 0, &s), DLPACK_HELPERS_STATUS_INVALID_STREAM);
  CHECK_STATUS(decode(kDLCUDA, 1, 0x7f0012340000LL, 0, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_HANDLE);
  CHECK_EQ_INT((uintptr_t)s.handle, 0x7f0012340000LL);
  /* A consumer on the legacy stream sends 1, never 0. */
  bool has = false;
  int64_t v = 99;
  CHECK_STATUS(dlpack_stream_encode(dev(kDLCUDA, 0), NULL, &has, &v), DLPACK_HELPERS_STATUS_OK);
  CHECK(has);
  CHECK_EQ_INT(v, 1);
}

TEST(case_25_rocm_table_and_below_minus_one) {
  dlpack_helpers_stream s;
  CHECK_STATUS(decode(kDLROCM, 0, 0, 0, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_DEFAULT);
  CHECK(s.handle == NULL);
  CHECK_STATUS(decode(kDLROCM, 1, 0, 0, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_DEFAULT);
  CHECK_STATUS(decode(kDLROCM, 1, 1, 0, &s), DLPACK_HELPERS_STATUS_INVALID_STREAM);
  CHECK_STATUS(decode(kDLROCM, 1, 2, 0, &s), DLPACK_HELPERS_STATUS_INVALID_STREAM);
  CHECK_STATUS(decode(kDLROCM, 1, 3, 0, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_HANDLE);
  CHECK_STATUS(decode(kDLROCM, 1, -1, 0, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_NO_SYNC);
  CHECK_STATUS(decode(kDLROCM, 1, -2, 0, &s), DLPACK_HELPERS_STATUS_INVALID_STREAM);
  CHECK_STATUS(decode(kDLCUDA, 1, -2, 0, &s), DLPACK_HELPERS_STATUS_INVALID_STREAM);
  CHECK_EQ_INT(dlpack_status_python_exception(DLPACK_HELPERS_STATUS_INVALID_STREAM)[0], 'V');
  bool has = false;
  int64_t v = 99;
  CHECK_STATUS(dlpack_stream_encode(dev(kDLROCM, 0), NULL, &has, &v), DLPACK_HELPERS_STATUS_OK);
  CHECK(has);
  CHECK_EQ_INT(v, 0);
}

TEST(case_28_cpu_only_none_unless_lenient) {
  dlpack_helpers_stream s;
  CHECK_STATUS(decode(kDLCPU, 0, 0, 0, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_NONE);
  CHECK_STATUS(decode(kDLCPU, 1, -1, 0, &s), DLPACK_HELPERS_STATUS_INVALID_STREAM);
  CHECK_STATUS(decode(kDLCPU, 1, 7, 0, &s), DLPACK_HELPERS_STATUS_INVALID_STREAM);
  CHECK_STATUS(decode(kDLCPU, 1, -1, DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM, &s),
               DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_NO_SYNC);
  CHECK_STATUS(decode(kDLCPU, 1, 7, DLPACK_HELPERS_PRODUCER_LENIENT_CPU_STREAM, &s),
               DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_NO_SYNC);
  CHECK_STATUS(decode(kDLCPU, 1, 7, 0x80, &s), DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(dlpack_stream_decode(dev(kDLCPU, 0), false, 0, 0, NULL),
               DLPACK_HELPERS_STATUS_NULL_POINTER);
}

static dlpack_helpers_status resolve(int32_t src, int32_t dl, int copy, int has_stream,
                                     dlpack_helpers_export_plan *plan) {
  dlpack_helpers_export_request r;
  memset(&r, 0, sizeof r);
  r.has_max_version = true;
  r.max_version.major = 1;
  r.max_version.minor = 3;
  r.has_dl_device = dl != 0;
  r.dl_device = dev(dl, 0);
  r.copy = copy;
  r.has_stream = has_stream != 0;
  r.stream = 1;
  DLPackVersion pv = {1, 3};
  return dlpack_export_request_resolve(&r, dev(src, 0), pv, DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY,
                                       plan);
}

TEST(case_47_copy_false_cross_device_is_buffer_error) {
  dlpack_helpers_export_plan p;
  CHECK_STATUS(resolve(kDLCUDA, kDLCPU, DLPACK_HELPERS_COPY_NEVER, 0, &p),
               DLPACK_HELPERS_STATUS_COPY_FORBIDDEN);
  CHECK(strcmp(dlpack_status_python_exception(DLPACK_HELPERS_STATUS_COPY_FORBIDDEN),
               "BufferError") == 0);
  CHECK_STATUS(resolve(kDLCUDA, kDLCPU, DLPACK_HELPERS_COPY_IF_NEEDED, 0, &p),
               DLPACK_HELPERS_STATUS_OK);
  CHECK(p.copy);
  CHECK_EQ_INT(p.flags, DLPACK_FLAG_BITMASK_IS_COPIED);
  CHECK_EQ_INT(p.sync, DLPACK_HELPERS_SYNC_HOST);
  CHECK_EQ_INT(p.device.device_type, kDLCPU);
  CHECK_EQ_INT(p.kind, DLPACK_HELPERS_EXPORT_VERSIONED);
  CHECK_STATUS(resolve(kDLCUDA, kDLCPU, DLPACK_HELPERS_COPY_ALWAYS, 0, &p), DLPACK_HELPERS_STATUS_OK);
  CHECK(p.copy);
  CHECK_STATUS(resolve(kDLCPU, kDLCPU, DLPACK_HELPERS_COPY_ALWAYS, 0, &p), DLPACK_HELPERS_STATUS_OK);
  CHECK(p.copy);
  CHECK_EQ_INT(p.flags, DLPACK_FLAG_BITMASK_IS_COPIED);
  /* Policy: pinned and managed memory are served in place as (kDLCPU, 0), host sync first. */
  CHECK_STATUS(resolve(kDLCUDAManaged, kDLCPU, DLPACK_HELPERS_COPY_NEVER, 0, &p),
               DLPACK_HELPERS_STATUS_OK);
  CHECK(!p.copy);
  CHECK_EQ_INT(p.flags, 0);
  CHECK_EQ_INT(p.sync, DLPACK_HELPERS_SYNC_HOST);
  CHECK_EQ_INT(p.device.device_type, kDLCPU);
  CHECK_STATUS(resolve(kDLCUDAHost, kDLCPU, DLPACK_HELPERS_COPY_NEVER, 0, &p),
               DLPACK_HELPERS_STATUS_OK);
  CHECK(!p.copy);
  /* A CPU request with a stream is refused. */
  CHECK_STATUS(resolve(kDLCUDA, kDLCPU, DLPACK_HELPERS_COPY_IF_NEEDED, 1, &p),
               DLPACK_HELPERS_STATUS_INVALID_STREAM);
  CHECK_STATUS(resolve(kDLCPU, kDLCUDA, DLPACK_HELPERS_COPY_IF_NEEDED, 0, &p),
               DLPACK_HELPERS_STATUS_UNSUPPORTED_DEVICE);
  CHECK_STATUS(resolve(kDLCPU, kDLCPU, 7, 0, &p), DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  /* Same device with stream 1: wait on the legacy default stream. */
  CHECK_STATUS(resolve(kDLCUDA, 0, DLPACK_HELPERS_COPY_IF_NEEDED, 1, &p), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(p.sync, DLPACK_HELPERS_SYNC_STREAM_WAIT);
  CHECK_EQ_INT(p.stream.kind, DLPACK_HELPERS_STREAM_LEGACY_DEFAULT);
  CHECK(!p.copy);
}

TEST(zero_request_is_dlpack_without_arguments) {
  dlpack_helpers_export_request r;
  memset(&r, 0, sizeof r);
  dlpack_helpers_export_plan p;
  DLPackVersion pv = {1, 3};
  CHECK_STATUS(dlpack_export_request_resolve(&r, dev(kDLCUDA, 1), pv,
                                             DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY, &p),
               DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(p.kind, DLPACK_HELPERS_EXPORT_LEGACY);
  CHECK_EQ_INT(p.device.device_id, 1);
  CHECK_EQ_INT(p.sync, DLPACK_HELPERS_SYNC_STREAM_WAIT);
  CHECK_EQ_INT(p.stream.kind, DLPACK_HELPERS_STREAM_LEGACY_DEFAULT);
  CHECK_STATUS(dlpack_export_request_resolve(&r, dev(kDLCUDA, 1), pv, 0, &p),
               DLPACK_HELPERS_STATUS_NO_COMMON_VERSION);
  CHECK_STATUS(dlpack_export_request_resolve(NULL, dev(kDLCUDA, 1), pv, 0, &p),
               DLPACK_HELPERS_STATUS_NULL_POINTER);
}

/* For every device class and the values 0, -1, 1, 2, 3, INT64_MAX and others: decode refuses
 * the value, or dlpack_stream_encode_decoded gives it back; a HANDLE is never NULL. */
TEST(decode_encode_round_trip_every_device_class) {
  static const int32_t classes[] = {kDLCPU,  kDLCUDA,   kDLCUDAHost, kDLCUDAManaged, kDLROCM,
                                    kDLROCMHost, kDLOneAPI, kDLVulkan, 999,            -4};
  static const int64_t values[] = {0,  -1, 1,          2,           3,          4,
                                   -2, 7,  0x7f001234, INT64_MAX,   INT64_MIN,  INT64_MAX - 1,
                                   255, 1 << 20};
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; ++i) {
    int accepted = 0;
    for (size_t j = 0; j < sizeof values / sizeof values[0]; ++j) {
      dlpack_helpers_stream s;
      dlpack_helpers_status st = decode(classes[i], 1, values[j], 0, &s);
      if (st != DLPACK_HELPERS_STATUS_OK) {
        CHECK_EQ_INT(st, DLPACK_HELPERS_STATUS_INVALID_STREAM);
        continue;
      }
      ++accepted;
      bool has = false;
      int64_t v = 99;
      CHECK_STATUS(dlpack_stream_encode_decoded(dev(classes[i], 0), &s, &has, &v),
                   DLPACK_HELPERS_STATUS_OK);
      CHECK(has);
      if (v != values[j])
        fprintf(stderr, "device %d value %lld came back as %lld\n", (int)classes[i],
                (long long)values[j], (long long)v);
      CHECK(v == values[j]);
      CHECK((s.handle == NULL) == (s.kind == DLPACK_HELPERS_STREAM_NO_SYNC ||
                                   s.kind == DLPACK_HELPERS_STREAM_DEFAULT ||
                                   s.kind == DLPACK_HELPERS_STREAM_NONE));
    }
    CHECK((accepted == 0) == (classes[i] == kDLCPU));
  }
}

/* oneAPI and unknown types: 0 is refused, None is the default queue and encodes as "no stream". */
TEST(zero_refused_where_the_encoding_is_not_standard) {
  static const int32_t others[] = {kDLOneAPI, 999};
  for (size_t i = 0; i < 2; ++i) {
    dlpack_helpers_stream s;
    CHECK_STATUS(decode(others[i], 1, 0, 0, &s), DLPACK_HELPERS_STATUS_INVALID_STREAM);
    CHECK_EQ_INT(s.kind, -1);
    CHECK_STATUS(decode(others[i], 0, 0, 0, &s), DLPACK_HELPERS_STATUS_OK);
    CHECK_EQ_INT(s.kind, DLPACK_HELPERS_STREAM_DEFAULT);
    CHECK(s.handle == NULL);
    bool has = true;
    int64_t v = 99;
    CHECK_STATUS(dlpack_stream_encode_decoded(dev(others[i], 0), &s, &has, &v),
                 DLPACK_HELPERS_STATUS_OK);
    CHECK(!has);
    CHECK_EQ_INT(v, 99);
    has = true;
    CHECK_STATUS(dlpack_stream_encode(dev(others[i], 0), NULL, &has, &v), DLPACK_HELPERS_STATUS_OK);
    CHECK(!has);
    /* A HANDLE with a NULL handle is not a decoded stream. */
    dlpack_helpers_stream bad = {DLPACK_HELPERS_STREAM_HANDLE, NULL};
    has = false;
    CHECK_STATUS(dlpack_stream_encode_decoded(dev(others[i], 0), &bad, &has, &v),
                 DLPACK_HELPERS_STATUS_INVALID_STREAM);
    CHECK(!has);
  }
}

/* Legacy and versioned plans under every copy mode: flags is IS_COPIED only for a versioned
 * copy; a legacy plan says copy = true but has flags 0 (DLManagedTensor has no flags). */
TEST(plan_flags_for_both_export_kinds_and_copy_modes) {
  static const int copies[] = {DLPACK_HELPERS_COPY_IF_NEEDED, DLPACK_HELPERS_COPY_ALWAYS,
                               DLPACK_HELPERS_COPY_NEVER};
  for (int versioned = 0; versioned < 2; ++versioned) {
    for (size_t i = 0; i < 3; ++i) {
      for (int cross = 0; cross < 2; ++cross) {
        dlpack_helpers_export_request r;
        memset(&r, 0, sizeof r);
        r.has_max_version = versioned != 0;
        r.max_version.major = 1;
        r.has_dl_device = cross != 0;
        r.dl_device = dev(kDLCPU, 0);
        r.copy = copies[i];
        dlpack_helpers_export_plan p;
        DLPackVersion pv = {1, 3};
        dlpack_helpers_status st = dlpack_export_request_resolve(
            &r, dev(kDLCUDA, 0), pv, DLPACK_HELPERS_PRODUCER_EXPORTS_LEGACY, &p);
        if (cross && copies[i] == DLPACK_HELPERS_COPY_NEVER) {
          CHECK_EQ_INT(st, DLPACK_HELPERS_STATUS_COPY_FORBIDDEN);
          continue;
        }
        CHECK_EQ_INT(st, DLPACK_HELPERS_STATUS_OK);
        bool copy = cross || copies[i] == DLPACK_HELPERS_COPY_ALWAYS;
        CHECK_EQ_INT(p.kind, versioned ? DLPACK_HELPERS_EXPORT_VERSIONED : DLPACK_HELPERS_EXPORT_LEGACY);
        CHECK_EQ_INT(p.copy, copy);
        CHECK_EQ_INT(p.flags, (versioned && copy) ? DLPACK_FLAG_BITMASK_IS_COPIED : 0);
      }
    }
  }
}

static int waits, syncs;
static int32_t my_wait(void *ctx, int32_t id, void *producer, void *consumer) {
  (void)ctx;
  (void)id;
  ++waits;
  return producer == consumer ? 5 : 0; /* never called for equal streams */
}
static int32_t my_sync(void *ctx, int32_t id, void *stream) {
  (void)ctx;
  (void)id;
  (void)stream;
  ++syncs;
  return 0;
}

TEST(registered_backend_and_unavailable_backends) {
  /* Vulkan has no built-in backend. */
  dlpack_helpers_stream s = {DLPACK_HELPERS_STREAM_HANDLE, (void *)0x40};
  CHECK_STATUS(dlpack_stream_wait(dev(kDLVulkan, 0), (void *)0x30, &s),
               DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE);
  dlpack_helpers_stream_backend b = {NULL, my_wait, my_sync};
  CHECK_STATUS(dlpack_stream_backend_register(kDLVulkan, &b), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_stream_wait(dev(kDLVulkan, 0), (void *)0x30, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_stream_wait(dev(kDLVulkan, 0), (void *)0x40, &s), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(waits, 1);
  CHECK_STATUS(dlpack_stream_synchronize(dev(kDLVulkan, 0), (void *)0x30), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(syncs, 1);
  /* The CUDA driver pointed at a missing file. */
  CHECK_STATUS(dlpack_stream_wait(dev(kDLCUDA, 0), (void *)0x30, &s),
               DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE);
  CHECK(strstr(dlpack_last_error_message(), "DLPACK_HELPERS_CUDA_LIBRARY") != NULL);
  dlpack_helpers_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_STATUS(dlpack_get_info(&info), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(info.capabilities & (DLPACK_HELPERS_CAP_CUDA | DLPACK_HELPERS_CAP_ROCM), 0);
}

int main(void) {
  /* Make the CUDA/HIP lookups fail deterministically, whatever this machine has installed. */
  setenv("DLPACK_HELPERS_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  setenv("DLPACK_HELPERS_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
  RUN(case_23_cuda_stream_numbering);
  RUN(case_25_rocm_table_and_below_minus_one);
  RUN(case_28_cpu_only_none_unless_lenient);
  RUN(case_47_copy_false_cross_device_is_buffer_error);
  RUN(zero_request_is_dlpack_without_arguments);
  RUN(decode_encode_round_trip_every_device_class);
  RUN(zero_refused_where_the_encoding_is_not_standard);
  RUN(plan_flags_for_both_export_kinds_and_copy_modes);
  RUN(registered_backend_and_unavailable_backends);
  return CHECK_REPORT();
}
