/* The FFI examples' reference: the steps every examples/ffi/<language>/ program does, in C.
 * Its output is what scripts/test.d/68-ffi.sh compares each language's output with.
 * Build: cc -I sdk/include steps.c -L sdk/lib -ldlpack_helpers -Wl,-rpath,sdk/lib */
#include <dlpack_helpers.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the producer hands the tensor as release context: its own buffer and a counter. */
struct producer { float *buf; int count; int released; };

static void on_release(void *ctx) {
  struct producer *p = ctx;
  printf("    release callback: buffer of %d floats\n", p->count);
  free(p->buf);
  p->released++;
}

static const char *yes(bool b) { return b ? "true" : "false"; }

/* (g) the error path under threads: each thread refuses its own dtype (int64 with k+1 lanes), so
 * a message that belongs to another thread's call is seen. With the per-call error object the
 * message travels with the status; the two-call path (status, then the thread-local
 * dlpack_last_error_message()) is right in C, whose threads never move, and wrong where green
 * threads move between OS threads (Go, Java virtual threads, async runtimes). */
enum { THREADS = 8, CALLS = 20000 };
static DLManagedTensorVersioned *stress_tensor;
static char expected[THREADS][DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY];
struct worker { int k; bool two_call; long wrong; };

static dlpack_helpers_validate_options refuse_options(int k) {
  dlpack_helpers_validate_options o = {.struct_size = sizeof o,
      .flags = DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE, .dtype = {kDLInt, 64, (uint16_t)(k + 1)}};
  return o;
}

static void *work(void *arg) {
  struct worker *w = arg;
  dlpack_helpers_validate_options o = refuse_options(w->k);
  dlpack_helpers_error err = {.struct_size = sizeof err};
  for (int i = 0; i < CALLS; i++) {
    const char *msg;
    if (w->two_call) {
      if (dlpack_tensor_validate(stress_tensor, &o, NULL) == DLPACK_HELPERS_STATUS_OK) return NULL;
      msg = dlpack_last_error_message();
    } else {
      if (dlpack_tensor_validate_with_error(stress_tensor, &o, NULL, &err) == DLPACK_HELPERS_STATUS_OK) return NULL;
      msg = err.message;
    }
    if (strcmp(msg, expected[w->k]) != 0) w->wrong++;
  }
  return NULL;
}

static long stress(bool two_call) {
  pthread_t th[THREADS];
  struct worker w[THREADS];
  long wrong = 0;
  for (int k = 0; k < THREADS; k++) {
    w[k] = (struct worker){.k = k, .two_call = two_call};
    pthread_create(&th[k], NULL, work, &w[k]);
  }
  for (int k = 0; k < THREADS; k++) { pthread_join(th[k], NULL); wrong += w[k].wrong; }
  return wrong;
}

int main(void) {
  /* (a) what the library is */
  dlpack_helpers_info info = {.struct_size = sizeof info};
  if (dlpack_get_info(&info) != DLPACK_HELPERS_STATUS_OK) return 1;
  printf("(a) library %s, DLPack ABI major %u, DLPack %u.%u, caps 0x%llx, legacy %s, spec %u, "
         "profiles 0x%x, filled %zu bytes\n",
         info.version, info.dlpack_abi_major, info.dlpack_version.major, info.dlpack_version.minor,
         (unsigned long long)info.capabilities, yes(info.accepts_legacy), info.spec_version,
         info.profiles, info.struct_size);

  /* (b) a producer: a 2x3 float32 tensor over our own buffer, released through a callback */
  struct producer prod = {.buf = malloc(6 * sizeof(float)), .count = 6};
  for (int i = 0; i < 6; i++) prod.buf[i] = (float)i;
  int64_t shape[2] = {2, 3};
  DLDevice cpu = {kDLCPU, 0};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLManagedTensorVersioned *t = NULL;
  if (dlpack_tensor_create(prod.buf, cpu, 2, shape, NULL, f32, 0, 0, on_release, &prod, &t)) {
    printf("create failed: %s\n", dlpack_last_error_message());
    return 1;
  }
  printf("(b) created a 2x3 float32 tensor\n");

  /* (c) a consumer: version, validation, element [1][2] through the strides, queries, names */
  dlpack_helpers_version_compat compat = -1;
  if (dlpack_tensor_check_version_or_delete(t, &compat)) return 1;
  dlpack_helpers_validate_options opt = {.struct_size = sizeof opt,
      .flags = DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE | DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE,
      .dtype = f32};
  dlpack_helpers_layout layout;
  if (dlpack_tensor_validate(t, &opt, &layout)) return 1;
  const DLTensor *dl = &t->dl_tensor;
  const float *el = (const float *)((const char *)dl->data + dl->byte_offset) +
                    1 * dl->strides[0] + 2 * dl->strides[1];
  dlpack_helpers_host_access access = -1;
  if (dlpack_tensor_host_access(t, NULL, &access)) return 1;
  DLDevice dev;
  if (dlpack_get_device(t, &dev)) return 1;
  char dev_name[DLPACK_HELPERS_NAME_MAX], dtype_name[DLPACK_HELPERS_NAME_MAX];
  if (dlpack_device_format(dev, dev_name, sizeof dev_name, NULL)) return 1;
  if (dlpack_dtype_format(dl->dtype, dtype_name, sizeof dtype_name, NULL)) return 1;
  printf("(c) version compat %d, valid (numel %lld, %lld bytes), t[1][2] = %g, host access %d, "
         "cpu accessible %s, device %s (type %d id %d), dtype %s\n",
         compat, (long long)layout.numel, (long long)layout.nbytes, (double)*el, access,
         yes(dlpack_is_cpu_accessible(dev)), dev_name, (int)dev.device_type, dev.device_id,
         dtype_name);

  /* (e) a refused validation: the status, its name and the message */
  opt.dtype = (DLDataType){kDLInt, 64, 1};
  dlpack_helpers_status st = dlpack_tensor_validate(t, &opt, NULL);
  printf("(e) validate as int64: status %d %s: %s\n", st, dlpack_status_string(st),
         dlpack_last_error_message());

  /* (d) one delete: the deleter frees the struct and calls our release once */
  dlpack_tensor_delete(t);
  printf("(d) deleted; release callback ran %d time(s)\n", prod.released);
  if (prod.released != 1) return 1;

  /* (f) a producer with no callback: the library allocates the buffer (zeroed, aligned) and its
   * own deleter frees it; the program fills it through the strides and hands the tensor on. */
  DLManagedTensorVersioned *a = NULL;
  dlpack_helpers_error err = {.struct_size = sizeof err};
  if (dlpack_tensor_alloc_with_error(cpu, 2, shape, NULL, f32, 0, &a, &err)) {
    printf("alloc failed: %s\n", err.message);
    return 1;
  }
  DLTensor *ad = &a->dl_tensor;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      ((float *)((char *)ad->data + ad->byte_offset))[i * ad->strides[0] + j * ad->strides[1]] =
          (float)(10 * (3 * i + j));
  opt.dtype = f32;
  if (dlpack_tensor_validate_with_error(a, &opt, &layout, &err)) return 1;
  el = (const float *)((const char *)ad->data + ad->byte_offset) + 1 * ad->strides[0] + 2 * ad->strides[1];
  printf("(f) allocated and filled a 2x3 float32 tensor with no callback: valid (numel %lld, %lld "
         "bytes), t[1][2] = %g, data aligned to %d: %s\n", (long long)layout.numel,
         (long long)layout.nbytes, (double)*el, DLPACK_HELPERS_ALLOC_ALIGNMENT,
         yes((uintptr_t)ad->data % DLPACK_HELPERS_ALLOC_ALIGNMENT == 0));
  DLDevice gpu = {kDLCUDA, 0};
  DLManagedTensorVersioned *refused = NULL;
  st = dlpack_tensor_alloc_with_error(gpu, 2, shape, NULL, f32, 0, &refused, &err);
  printf("(f) alloc on cuda:0: status %d %s (error object: status %d): %s\n", st,
         dlpack_status_string(st), err.status, err.message);

  /* (g) the error path from 8 threads, on the allocated tensor */
  stress_tensor = a;
  for (int k = 0; k < THREADS; k++) {
    dlpack_helpers_validate_options o = refuse_options(k);
    if (dlpack_tensor_validate_with_error(a, &o, NULL, &err) == DLPACK_HELPERS_STATUS_OK) return 1;
    memcpy(expected[k], err.message, sizeof expected[k]);
  }
  long wrong = stress(false);
  printf("(g) error object: %d threads, %d failing calls, %ld wrong messages\n", THREADS,
         THREADS * CALLS, wrong);
  printf("[figure] two-call thread-local path: %ld wrong messages of %d\n", stress(true),
         THREADS * CALLS);
  dlpack_tensor_delete(a);
  printf("(h) deleted the allocated tensor\n");
  return wrong == 0 ? 0 : 1;
}
