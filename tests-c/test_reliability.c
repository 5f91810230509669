/* Reliability from C: misbehaving deleters and backend callbacks, and 8 threads
 * hammering the thread-local last error, deleters, version checks, stream decoding, a registered
 * backend and the CUDA backend's initialization and event pool, and releases tied to a stream
 * (with the fake drivers).
 *
 * Runs standalone (scripts/test.d/20-c.sh). scripts/test.d/86-concurrency.sh runs it again with
 * the fake CUDA driver (DLPACK_HELPERS_CUDA_LIBRARY=.../fake_cuda.so), under ThreadSanitizer, and
 * under valgrind. DLPACK_HELPERS_STRESS_ITERS sets the iterations per thread (default 20000).
 * No check depends on timing: every thread does a fixed amount of work. */
#define _POSIX_C_SOURCE 200112L
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dlpack_helpers.h"

#define NTHREADS 8
#define BACKEND_TYPE 77 /* a device type no runtime owns: served by our registered backend */

static DLDevice dev(int32_t t, int32_t id) {
  DLDevice d;
  d.device_type = (DLDeviceType)t;
  d.device_id = id;
  return d;
}

/* ---- tensors whose deleter counts, and aborts on a second call (a real double free) -------- */

static atomic_long created, released;

typedef struct {
  DLManagedTensorVersioned t;
  atomic_int deleted;
  int64_t shape[1];
} counted_tensor;

static void counting_deleter(DLManagedTensorVersioned *t) {
  counted_tensor *c = (counted_tensor *)t;
  if (atomic_fetch_add(&c->deleted, 1) != 0) {
    fprintf(stderr, "deleter called twice on %p\n", (void *)t);
    abort();
  }
  atomic_fetch_add(&released, 1);
  free(c);
}

static DLManagedTensorVersioned *new_tensor(uint32_t major, uint32_t minor) {
  counted_tensor *c = calloc(1, sizeof *c);
  if (!c) abort();
  c->t.version.major = major;
  c->t.version.minor = minor;
  c->t.deleter = counting_deleter;
  c->t.dl_tensor.device = dev(kDLCPU, 0);
  c->t.dl_tensor.ndim = 1;
  c->shape[0] = 4;
  c->t.dl_tensor.shape = c->shape;
  atomic_fetch_add(&created, 1);
  return &c->t;
}

typedef struct {
  DLManagedTensor t;
  int64_t shape[1];
} legacy_tensor;

static void legacy_deleter(DLManagedTensor *t) {
  atomic_fetch_add(&released, 1);
  free(t);
}

static DLManagedTensor *new_legacy(void) {
  legacy_tensor *l = calloc(1, sizeof *l);
  if (!l) abort();
  l->t.deleter = legacy_deleter;
  l->t.dl_tensor.device = dev(kDLCUDAHost, 0);
  atomic_fetch_add(&created, 1);
  return &l->t;
}

/* A deleter that calls back into the library and fails there (re-entrancy). */
static void reentrant_deleter(DLManagedTensorVersioned *t) {
  DLDevice d;
  (void)dlpack_get_device(NULL, &d); /* sets this thread's last error inside the deleter */
  (void)dlpack_last_error_message();
  counting_deleter(t);
}

TEST(case_5_6_misbehaving_deleters) {
  atomic_store(&created, 0);
  atomic_store(&released, 0);
  /* NULL deleter: "nothing to free", on every releasing path. */
  DLManagedTensorVersioned bare;
  memset(&bare, 0, sizeof bare);
  bare.version.major = 2;
  dlpack_tensor_delete(&bare);
  CHECK_STATUS(dlpack_tensor_check_version_or_delete(&bare, NULL), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  DLManagedTensor bare_legacy;
  memset(&bare_legacy, 0, sizeof bare_legacy);
  dlpack_legacy_tensor_delete(&bare_legacy);
  dlpack_tensor_delete(NULL);
  dlpack_legacy_tensor_delete(NULL);

  /* Each releasing path calls the deleter exactly once (a second call would abort). */
  dlpack_tensor_delete(new_tensor(1, 3));
  CHECK_STATUS(dlpack_tensor_check_version_or_delete(new_tensor(2, 0), NULL), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK_STATUS(dlpack_tensor_check_version_or_delete(new_tensor(0, 9), NULL), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  DLManagedTensorVersioned *ok = new_tensor(1, 0);
  dlpack_helpers_version_compat compat = -1;
  CHECK_STATUS(dlpack_tensor_check_version_or_delete(ok, &compat), DLPACK_HELPERS_STATUS_OK);
  CHECK_EQ_INT(atomic_load(&released), 3); /* still ours on OK */
  CHECK_EQ_INT(compat, DLPACK_HELPERS_VERSION_OLDER_MINOR);
  dlpack_tensor_delete(ok);
  dlpack_legacy_tensor_delete(new_legacy());
  CHECK_EQ_INT(atomic_load(&released), atomic_load(&created));

  /* A deleter that fails a library call of its own: the caller still sees its own status and
   * message (the message is written after the deleter returns). */
  DLManagedTensorVersioned *r = new_tensor(3, 1);
  r->deleter = reentrant_deleter;
  CHECK_STATUS(dlpack_tensor_check_version_or_delete(r, NULL), DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
  CHECK(strstr(dlpack_last_error_message(), "version") != NULL);
  CHECK(strstr(dlpack_last_error_message(), "out_device") == NULL);
  CHECK_EQ_INT(atomic_load(&released), atomic_load(&created));
}

/* ---- a registered backend whose callbacks count, and fail on demand ------------------------- */

static atomic_long backend_waits, backend_syncs;

static int32_t backend_wait(void *ctx, int32_t device_id, void *producer, void *consumer) {
  (void)ctx;
  (void)producer;
  atomic_fetch_add(&backend_waits, 1);
  /* Fail with a recognizable code for the consumer handle 0xBAD0 + device id. */
  return (uintptr_t)consumer == 0xBAD0u + (uintptr_t)device_id ? 4242 : 0;
}

static int32_t backend_sync(void *ctx, int32_t device_id, void *stream) {
  (void)ctx;
  (void)device_id;
  atomic_fetch_add(&backend_syncs, 1);
  return stream == (void *)0xBAD1 ? -7 : 0;
}

TEST(misbehaving_backend_callbacks) {
  dlpack_helpers_stream_backend b;
  memset(&b, 0, sizeof b);
  /* NULL functions are refused before anything is registered. */
  CHECK_STATUS(dlpack_stream_backend_register((DLDeviceType)BACKEND_TYPE, &b), DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK(strstr(dlpack_last_error_message(), "backend->wait") != NULL);
  b.wait = backend_wait;
  CHECK_STATUS(dlpack_stream_backend_register((DLDeviceType)BACKEND_TYPE, &b), DLPACK_HELPERS_STATUS_NULL_POINTER);
  CHECK(strstr(dlpack_last_error_message(), "backend->synchronize") != NULL);
  CHECK_STATUS(dlpack_stream_backend_register((DLDeviceType)BACKEND_TYPE, NULL), DLPACK_HELPERS_STATUS_NULL_POINTER);
  b.synchronize = backend_sync;
  CHECK_STATUS(dlpack_stream_backend_register((DLDeviceType)BACKEND_TYPE, &b), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_stream_backend_register((DLDeviceType)BACKEND_TYPE, &b), DLPACK_HELPERS_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(dlpack_stream_backend_check((DLDeviceType)BACKEND_TYPE), DLPACK_HELPERS_STATUS_OK);

  /* A callback that reports an error: DEVICE_ERROR with its value in the message. */
  dlpack_helpers_stream consumer = {DLPACK_HELPERS_STREAM_HANDLE, (void *)0xBAD0};
  CHECK_STATUS(dlpack_stream_wait(dev(BACKEND_TYPE, 0), (void *)0x10, &consumer), DLPACK_HELPERS_STATUS_DEVICE_ERROR);
  CHECK(strstr(dlpack_last_error_message(), "4242") != NULL);
  CHECK_STATUS(dlpack_stream_synchronize(dev(BACKEND_TYPE, 0), (void *)0xBAD1), DLPACK_HELPERS_STATUS_DEVICE_ERROR);
  CHECK(strstr(dlpack_last_error_message(), "-7") != NULL);
  consumer.handle = (void *)0x20;
  CHECK_STATUS(dlpack_stream_wait(dev(BACKEND_TYPE, 0), (void *)0x10, &consumer), DLPACK_HELPERS_STATUS_OK);
  CHECK_STATUS(dlpack_stream_synchronize(dev(BACKEND_TYPE, 0), (void *)0x10), DLPACK_HELPERS_STATUS_OK);
}

/* ---- 8 threads ------------------------------------------------------------------------------- */

static long iters;
static int fake_cuda; /* the fake driver is loaded: CUDA waits are safe to make */
static int fake_hip;  /* the fake HIP runtime is loaded: ROCm waits are safe to make */
static pthread_barrier_t start;
static atomic_long cuda_waits, hip_waits, failures;

#define TCHECK(cond)                                                                    \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      if (atomic_fetch_add(&failures, 1) < 10)                                          \
        fprintf(stderr, "thread %d, iteration %ld: %s failed (%s)\n", id, i, #cond,    \
                dlpack_last_error_message());                                           \
    }                                                                                   \
  } while (0)

static void *hammer(void *arg) {
  int id = (int)(intptr_t)arg;
  long i = -1;
  pthread_barrier_wait(&start);
  /* All threads initialize the CUDA backend at once: one answer for everyone. */
  dlpack_helpers_status first = dlpack_stream_backend_check(kDLCUDA);
  TCHECK(first == DLPACK_HELPERS_STATUS_OK || first == DLPACK_HELPERS_STATUS_BACKEND_UNAVAILABLE);
  TCHECK(first == (fake_cuda ? DLPACK_HELPERS_STATUS_OK : first));
  dlpack_helpers_status first_hip = dlpack_stream_backend_check(kDLROCM);
  TCHECK(first_hip == (fake_hip ? DLPACK_HELPERS_STATUS_OK : first_hip));
  char want[64];
  for (i = 0; i < iters; ++i) {
    /* The last error message is per thread: each thread sees its own failure. */
    int64_t bad = -1000 - (int64_t)id * 100000000 - i;
    dlpack_helpers_stream s;
    TCHECK(dlpack_stream_decode(dev(kDLCUDA, id), true, bad, 0, &s) == DLPACK_HELPERS_STATUS_INVALID_STREAM);
    snprintf(want, sizeof want, "stream=%lld ", (long long)bad);
    TCHECK(strstr(dlpack_last_error_message(), want) != NULL);
    TCHECK(dlpack_stream_decode(dev(kDLCUDA, id), true, 2, 0, &s) == DLPACK_HELPERS_STATUS_OK);
    TCHECK(strstr(dlpack_last_error_message(), want) != NULL); /* success leaves it alone */

    /* Deleters: accept or refuse-and-release, exactly once each. */
    DLManagedTensorVersioned *t = new_tensor(i % 3 == 0 ? 2 : 1, (uint32_t)(i % 5));
    dlpack_helpers_status st = dlpack_tensor_check_version_or_delete(t, NULL);
    if (st == DLPACK_HELPERS_STATUS_OK) {
      DLDevice d;
      TCHECK(dlpack_get_device(t, &d) == DLPACK_HELPERS_STATUS_OK && d.device_type == kDLCPU);
      dlpack_tensor_delete(t);
    } else {
      TCHECK(st == DLPACK_HELPERS_STATUS_UNSUPPORTED_VERSION);
    }
    if (i % 4 == 0) dlpack_legacy_tensor_delete(new_legacy());

    /* Version negotiation (pure). */
    DLPackVersion pv = {1, 3}, mv = {1, (uint32_t)(i % 7)};
    dlpack_helpers_version_choice c;
    TCHECK(dlpack_version_negotiate(pv, 0, &mv, &c) == DLPACK_HELPERS_STATUS_OK && c.kind == DLPACK_HELPERS_EXPORT_VERSIONED);

    /* The registered backend, from every thread. */
    dlpack_helpers_stream consumer = {DLPACK_HELPERS_STREAM_HANDLE, (void *)(uintptr_t)(0x1000 + id)};
    TCHECK(dlpack_stream_wait(dev(BACKEND_TYPE, id), (void *)0x10, &consumer) == DLPACK_HELPERS_STATUS_OK);

    /* The CUDA backend's event pool, through the fake driver: the fake fails any event that
     * another thread records between this thread's record and wait. */
    if (fake_cuda) {
      dlpack_helpers_stream cs = {DLPACK_HELPERS_STREAM_HANDLE, (void *)(uintptr_t)(0x200 + id)};
      TCHECK(dlpack_stream_wait(dev(kDLCUDA, id % 2), (void *)(uintptr_t)(0x100 + id), &cs) == DLPACK_HELPERS_STATUS_OK);
      atomic_fetch_add(&cuda_waits, 1);
      if (i % 16 == 0) TCHECK(dlpack_stream_synchronize(dev(kDLCUDA, id % 2), (void *)0x300) == DLPACK_HELPERS_STATUS_OK);
    }
    /* The same through the HIP backend (per-device event pool, current device restored). */
    if (fake_hip) {
      dlpack_helpers_stream hs = {DLPACK_HELPERS_STREAM_HANDLE, (void *)(uintptr_t)(0x400 + id)};
      TCHECK(dlpack_stream_wait(dev(kDLROCM, id % 2), (void *)(uintptr_t)(0x500 + id), &hs) == DLPACK_HELPERS_STATUS_OK);
      atomic_fetch_add(&hip_waits, 1);
    }
  }
  return NULL;
}

typedef long (*count_fn)(const char *);

TEST(eight_threads) {
  const char *env = getenv("DLPACK_HELPERS_STRESS_ITERS");
  iters = env ? atol(env) : 20000;
  const char *lib = getenv("DLPACK_HELPERS_CUDA_LIBRARY");
  fake_cuda = lib != NULL && strstr(lib, "fake_cuda") != NULL;
  const char *hip = getenv("DLPACK_HELPERS_HIP_LIBRARY");
  fake_hip = hip != NULL && strstr(hip, "fake_hip") != NULL;
  atomic_store(&created, 0);
  atomic_store(&released, 0);
  long waits_before = atomic_load(&backend_waits);
  pthread_barrier_init(&start, NULL, NTHREADS);
  pthread_t th[NTHREADS];
  for (int k = 0; k < NTHREADS; ++k) CHECK_EQ_INT(pthread_create(&th[k], NULL, hammer, (void *)(intptr_t)k), 0);
  for (int k = 0; k < NTHREADS; ++k) pthread_join(th[k], NULL);
  pthread_barrier_destroy(&start);
  CHECK_EQ_INT(atomic_load(&failures), 0);
  /* No lost and no doubled release (a double one would have aborted). */
  CHECK_EQ_INT(atomic_load(&released), atomic_load(&created));
  CHECK_EQ_INT(atomic_load(&backend_waits) - waits_before, NTHREADS * iters);
  printf("   %d threads x %ld iterations: %ld tensors released once each, %ld backend waits, %ld CUDA waits%s, "
         "%ld HIP waits%s\n",
         NTHREADS, iters, atomic_load(&created), atomic_load(&backend_waits) - waits_before,
         atomic_load(&cuda_waits), fake_cuda ? " (fake driver)" : " (no CUDA driver: not exercised)",
         atomic_load(&hip_waits), fake_hip ? " (fake runtime)" : " (no HIP runtime: not exercised)");
  if (fake_hip) {
    void *h = dlopen(hip, RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
    count_fn count = h ? (count_fn)(uintptr_t)dlsym(h, "fake_count") : NULL;
    CHECK(count != NULL);
    if (count) {
      /* Loaded without holding a lock while hipInit runs (issue 12), and once (issue 24: racing
       * first users wait for the one initialisation; HIP does not promise concurrent hipInit). */
      CHECK_EQ_INT(count("hipInit"), 1);
      CHECK_EQ_INT(count("hipEventRecord"), atomic_load(&hip_waits));
      CHECK_EQ_INT(count("hipStreamWaitEvent"), atomic_load(&hip_waits));
      CHECK(count("hipEventCreateWithFlags") <= 2 * NTHREADS);
      printf("   fake HIP: hipInit x1, %ld events created for %ld waits\n", count("hipEventCreateWithFlags"),
             atomic_load(&hip_waits));
    }
    if (h) dlclose(h);
  }
  if (fake_cuda) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
    if (!h) return;
    count_fn count = (count_fn)(uintptr_t)dlsym(h, "fake_count");
    CHECK(count != NULL);
    if (!count) return;
    /* No lock held while cuInit runs (issue 12), and one cuInit (issue 24: racing first users
     * wait for the one initialisation; the driver API does not promise concurrent cuInit). */
    CHECK_EQ_INT(count("cuInit"), 1);
    CHECK_EQ_INT(count("cuEventRecord"), atomic_load(&cuda_waits)); /* one record per wait */
    CHECK_EQ_INT(count("cuStreamWaitEvent"), atomic_load(&cuda_waits));
    CHECK(count("cuEventCreate") <= 2 * NTHREADS);        /* pooled, not one per call */
    printf("   fake CUDA: cuInit x1, %ld events created for %ld waits\n", count("cuEventCreate"),
           atomic_load(&cuda_waits));
    dlclose(h);
  }
}

/* ---- re-entrancy from every callback, 8 threads, under a watchdog (issue 12) ----------------- */

/* A deleter that re-enters the library with work that itself runs deleters and conversions. */
static void deep_reentrant_deleter(DLManagedTensorVersioned *t) {
  static float one_element;
  DLManagedTensor *l = new_legacy();
  l->dl_tensor.data = &one_element; /* a valid 0-d float32 tensor, so the wrap succeeds */
  l->dl_tensor.dtype.code = kDLFloat;
  l->dl_tensor.dtype.bits = 32;
  l->dl_tensor.dtype.lanes = 1;
  DLManagedTensorVersioned *w = NULL;
  if (dlpack_legacy_tensor_wrap(l, 0, DLPACK_HELPERS_IMPORT_LEGACY_WRITABLE, &w) == DLPACK_HELPERS_STATUS_OK)
    dlpack_tensor_delete(w); /* runs the legacy deleter, nested */
  else
    dlpack_legacy_tensor_delete(l);
  dlpack_helpers_info info;
  info.struct_size = sizeof info;
  (void)dlpack_get_info(&info); /* probes the CUDA/HIP backends: their loaders run here */
  counting_deleter(t);
}

/* Backend callbacks that re-enter: registration (its lock must not be held while we run), info
 * (backend probes) and the other backend entry points. */
static int32_t reentrant_wait(void *ctx, int32_t device_id, void *producer, void *consumer) {
  (void)ctx;
  (void)producer;
  (void)consumer;
  dlpack_helpers_stream_backend again;
  memset(&again, 0, sizeof again);
  again.wait = reentrant_wait;
  again.synchronize = backend_sync;
  /* Already registered: refused, but it must return (no lock of ours is held while we run). */
  if (dlpack_stream_backend_register((DLDeviceType)(BACKEND_TYPE + 1), &again) != DLPACK_HELPERS_STATUS_INVALID_ARGUMENT)
    return 1;
  if (dlpack_stream_backend_check((DLDeviceType)(BACKEND_TYPE + 1)) != DLPACK_HELPERS_STATUS_OK) return 2;
  if (dlpack_stream_synchronize(dev(BACKEND_TYPE + 1, device_id), (void *)0x10) != DLPACK_HELPERS_STATUS_OK) return 3;
  return 0;
}

static atomic_long reentry_progress; /* iterations of reenter() done, for the watchdog */
static void *reenter(void *arg) {
  int id = (int)(intptr_t)arg;
  long i = -1;
  pthread_barrier_wait(&start);
  for (i = 0; i < 2000; ++i) {
    DLManagedTensorVersioned *t = new_tensor(i % 2 ? 1 : 2, 3);
    t->deleter = deep_reentrant_deleter;
    dlpack_helpers_status st = dlpack_tensor_check_version_or_delete(t, NULL);
    if (st == DLPACK_HELPERS_STATUS_OK) dlpack_tensor_delete(t);
    dlpack_helpers_stream consumer = {DLPACK_HELPERS_STREAM_HANDLE, (void *)(uintptr_t)(0x100 + id)};
    TCHECK(dlpack_stream_wait(dev(BACKEND_TYPE + 1, id), (void *)0x10, &consumer) == DLPACK_HELPERS_STATUS_OK);
    atomic_fetch_add(&reentry_progress, 1);
  }
  return NULL;
}

/* The watchdog fails the run on a hang, never on slowness: every WATCHDOG_S seconds it looks at
 * the iterations done so far and fires only if none was done since its last look. A deadlock
 * makes no progress at all; a slow machine (valgrind, a loaded CI runner) makes some. A fixed
 * deadline for the whole test would fail without a fault on a machine slow enough. */
#define WATCHDOG_S 60
static atomic_long watchdog_seen = -1;
static void watchdog_fired(int sig) {
  (void)sig;
  long now = atomic_load(&reentry_progress); /* lock-free: async-signal-safe */
  if (now != atomic_load(&watchdog_seen)) {
    atomic_store(&watchdog_seen, now);
    alarm(WATCHDOG_S);
    return;
  }
  static const char msg[] = "test_reliability: watchdog: no re-entrant call returned for a whole period: a hang (a lock held while foreign code runs?)\n";
  ssize_t r = write(2, msg, sizeof msg - 1);
  (void)r;
  _exit(3);
}

TEST(reentrancy_from_every_callback_under_a_watchdog) {
  atomic_store(&reentry_progress, 0);
  atomic_store(&watchdog_seen, -1);
  signal(SIGALRM, watchdog_fired);
  alarm(WATCHDOG_S); /* a hang fails the run instead of hanging CI */
  dlpack_helpers_stream_backend b;
  memset(&b, 0, sizeof b);
  b.wait = reentrant_wait;
  b.synchronize = backend_sync;
  CHECK_STATUS(dlpack_stream_backend_register((DLDeviceType)(BACKEND_TYPE + 1), &b), DLPACK_HELPERS_STATUS_OK);
  atomic_store(&created, 0);
  atomic_store(&released, 0);
  atomic_store(&failures, 0);
  pthread_barrier_init(&start, NULL, NTHREADS);
  pthread_t th[NTHREADS];
  for (int k = 0; k < NTHREADS; ++k) CHECK_EQ_INT(pthread_create(&th[k], NULL, reenter, (void *)(intptr_t)k), 0);
  for (int k = 0; k < NTHREADS; ++k) pthread_join(th[k], NULL);
  pthread_barrier_destroy(&start);
  alarm(0);
  CHECK_EQ_INT(atomic_load(&failures), 0);
  CHECK_EQ_INT(atomic_load(&released), atomic_load(&created));
}

/* Pointer queries while another thread loads and unloads a library: every load changes the
 * dynamic loader's object list, so each query walks it again to see whether a GPU runtime
 * appeared (issue 12: "absent" is never kept); answers stay right and nothing fails or races
 * in the test program (also under ThreadSanitizer). DLPACK_HELPERS_CHURN_LIBRARY names the
 * library to load (any small one not otherwise loaded); without it the test does nothing. */
static const char *churn_path;
static atomic_int churn_done;
static void *churn(void *arg) {
  int id = (int)(intptr_t)arg;
  pthread_barrier_wait(&start);
  for (long i = 0; i < iters; ++i) {
    void *h = dlopen(churn_path, RTLD_NOW | RTLD_LOCAL);
    TCHECK(h != NULL);
    if (h) dlclose(h);
  }
  atomic_store(&churn_done, 1);
  return NULL;
}
static void *classify_loop(void *arg) {
  int id = (int)(intptr_t)arg;
  long i = -1;
  char local[64];
  pthread_barrier_wait(&start);
  for (i = 0; !atomic_load(&churn_done) || i < 100; ++i) {
    dlpack_helpers_pointer_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    TCHECK(dlpack_pointer_classify(local, NULL, &info) == DLPACK_HELPERS_STATUS_OK);
    /* Whatever the backends present, never a device class for a stack address. */
    TCHECK(info.memory_class != DLPACK_HELPERS_MEMORY_DEVICE);
  }
  return NULL;
}

TEST(pointer_queries_while_libraries_load) {
  churn_path = getenv("DLPACK_HELPERS_CHURN_LIBRARY");
  if (!churn_path) return;
  const char *env = getenv("DLPACK_HELPERS_STRESS_ITERS");
  iters = env ? atol(env) / 10 : 2000;
  if (iters < 100) iters = 100;
  atomic_store(&churn_done, 0);
  pthread_barrier_init(&start, NULL, NTHREADS);
  pthread_t th[NTHREADS];
  CHECK_EQ_INT(pthread_create(&th[0], NULL, churn, (void *)(intptr_t)0), 0);
  for (int k = 1; k < NTHREADS; ++k)
    CHECK_EQ_INT(pthread_create(&th[k], NULL, classify_loop, (void *)(intptr_t)k), 0);
  for (int k = 0; k < NTHREADS; ++k) pthread_join(th[k], NULL);
  pthread_barrier_destroy(&start);
  CHECK_EQ_INT(atomic_load(&failures), 0);
  printf("   1 thread x %ld dlopen/dlclose beside %d threads classifying pointers: no failure\n", iters,
         NTHREADS - 1);
}

/* ---- releases tied to a stream, from 8 threads (peer case 52) ---------------------------------
 * Every thread queues deferred releases (dlpack_tensor_delete_after_stream) on made-up streams of
 * the fake drivers, interleaved with stream waits that share the same event pools: the fakes fail
 * an event recorded again while another use holds it, so an event given back to the pool before
 * its completion was seen would show as a failure. Every deleter then runs exactly once (a
 * second call aborts), on the library's completion thread. Needs the fake CUDA driver. */
static void *release_hammer(void *arg) {
  int id = (int)(intptr_t)arg;
  long i = -1;
  pthread_barrier_wait(&start);
  for (i = 0; i < iters; ++i) {
    DLManagedTensorVersioned *t = new_tensor(1, 3);
    int rocm = fake_hip && i % 2;
    DLDevice d = dev(rocm ? kDLROCM : kDLCUDA, id % 2);
    TCHECK(dlpack_tensor_delete_after_stream(t, d, (void *)(uintptr_t)(0x700 + id)) == DLPACK_HELPERS_STATUS_OK);
    dlpack_helpers_stream cs = {DLPACK_HELPERS_STREAM_HANDLE, (void *)(uintptr_t)(0x800 + id)};
    TCHECK(dlpack_stream_wait(d, (void *)(uintptr_t)(0x900 + id), &cs) == DLPACK_HELPERS_STATUS_OK);
  }
  return NULL;
}

TEST(case_52_deferred_releases_from_eight_threads) {
  const char *lib = getenv("DLPACK_HELPERS_CUDA_LIBRARY");
  if (!(lib != NULL && strstr(lib, "fake_cuda") != NULL)) {
    printf("   (no fake CUDA driver: not exercised)\n");
    return;
  }
  const char *hip = getenv("DLPACK_HELPERS_HIP_LIBRARY");
  fake_hip = hip != NULL && strstr(hip, "fake_hip") != NULL;
  const char *env = getenv("DLPACK_HELPERS_STRESS_ITERS");
  iters = (env ? atol(env) : 20000) / 10;
  atomic_store(&created, 0);
  atomic_store(&released, 0);
  pthread_barrier_init(&start, NULL, NTHREADS);
  pthread_t th[NTHREADS];
  for (int k = 0; k < NTHREADS; ++k) CHECK_EQ_INT(pthread_create(&th[k], NULL, release_hammer, (void *)(intptr_t)k), 0);
  for (int k = 0; k < NTHREADS; ++k) pthread_join(th[k], NULL);
  pthread_barrier_destroy(&start);
  CHECK_EQ_INT(atomic_load(&failures), 0);
  /* The completion thread runs the rest: wait for it (a condition, with a guard that fails the
   * test instead of hanging; the fakes complete these events at once). */
  for (long spins = 0; atomic_load(&released) < atomic_load(&created); ++spins) {
    if (spins > 60L * 1000 * 1000) break;
    sched_yield();
  }
  CHECK_EQ_INT(atomic_load(&released), atomic_load(&created));
  printf("   %d threads x %ld deferred releases beside stream waits: %ld released once each\n", NTHREADS, iters,
         atomic_load(&released));
}

int main(void) {
  RUN(reentrancy_from_every_callback_under_a_watchdog);
  RUN(case_5_6_misbehaving_deleters);
  RUN(misbehaving_backend_callbacks);
  RUN(eight_threads);
  RUN(pointer_queries_while_libraries_load);
  RUN(case_52_deferred_releases_from_eight_threads);
  return CHECK_REPORT();
}
