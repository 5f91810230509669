/* A test double of the CUDA driver API (libcuda.so.1) for the stream tests: it implements the
 * handful of entry points dlpack-helpers looks up, counts every call, checks the rules the real
 * driver enforces that matter here (an event is recorded in its own context, a context is
 * current, events are created without timing), and fails on demand.
 *
 * Control (exported): fake_count(name), fake_fail(name, code) (0 clears), fake_reset_counts(),
 * fake_register_pointer(ptr, memory_type, managed, ordinal), fake_pointer_needs_context(on),
 * fake_last(name, &a, &b),
 * cuEventQuery answers from the stream emulation (below): an event recorded on an emulated stream
 * is complete once the work queued there before it ran (a stream held by cuStreamWaitValue32_v2
 * on a flag is a gate the tests open), on any other stream at once; a complete event is free to
 * be recorded again (as after cuStreamWaitEvent).
 * fake_set_stream_context(stream, ctx) (the stream belongs to that context, as a stream made by
 * cuStreamCreate inside it would: cuStreamGetCtx answers it, and cuEventRecord refuses an event
 * of another context on it, as the real driver does; any other stream belongs to the calling
 * thread's current context).
 * For scripts/gpu-check's simulated device run it also answers cuDeviceGetCount (NDEV devices),
 * cuDeviceGetName ("fake CUDA device N"), context creation, memory allocation and registration
 * (interior pointers answer like their base), and emulates streams made by cuStreamCreate and
 * the default streams (see "Stream emulation" below).
 * FAKE_CUDA_INIT_ERROR=<code> in the environment makes cuInit fail. */
#define _DEFAULT_SOURCE /* usleep */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef void *CUcontext;
typedef void *CUstream;
typedef struct fake_event *CUevent;

#define NFN 40
static const char *names[NFN] = {
    "cuInit", "cuCtxGetCurrent", "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuDeviceGet",
    "cuDevicePrimaryCtxRetain", "cuEventCreate", "cuEventRecord", "cuStreamWaitEvent",
    "cuStreamSynchronize", "cuPointerGetAttributes", "cuStreamGetCtx", "cuDeviceGetCount",
    "cuDeviceGetName", "cuCtxCreate_v2", "cuCtxDestroy_v2", "cuStreamCreate", "cuStreamDestroy_v2",
    "cuStreamQuery", "cuStreamWaitValue32_v2", "cuMemAlloc_v2", "cuMemFree_v2",
    "cuMemAllocHost_v2", "cuMemFreeHost", "cuMemHostRegister_v2", "cuMemHostUnregister",
    "cuMemAllocManaged", "cuMemsetD32Async", "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoH_v2",
    "cuEventQuery", 0};
#include "recorder.h"

#define NDEV 2
static char primary_ctx[NDEV]; /* the address of primary_ctx[i] is device i's context */
FAKE_TLS CUcontext ctx_stack[8];
FAKE_TLS int ctx_depth;
static int initialized;

struct estream;
struct fake_event {
  CUcontext ctx;
  pthread_t recorder; /* the thread between its record and its wait, or 0 */
  int in_flight;
  struct estream *stream; /* emulation: the stream it was last recorded on, and how much */
  long target;            /* work was queued there then */
};
/* Stream emulation hooks (defined below). */
static struct estream *emulated(CUstream s);
static void emu_record(struct fake_event *e, struct estream *s);
static void emu_wait_event(struct estream *s, struct fake_event *e);
static void emu_drain(struct estream *s);

/* Known memory: a registered pointer (size 0: that address only) or a range [p, p + size). */
struct pointer_info { const void *p; size_t size; unsigned memory_type; int managed, ordinal; };
#define NPOINTERS 256
static struct pointer_info pointers[NPOINTERS];
static void add_pointer(const void *p, size_t size, unsigned memory_type, int managed, int ordinal) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < NPOINTERS; ++i)
    if (!pointers[i].p) {
      pointers[i] = (struct pointer_info){p, size, memory_type, managed, ordinal};
      break;
    }
  pthread_mutex_unlock(&lock);
}
static int remove_pointer(const void *p) {
  int found = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < NPOINTERS; ++i)
    if (pointers[i].p == p) {
      pointers[i].p = 0;
      found = 1;
    }
  pthread_mutex_unlock(&lock);
  return found;
}
void fake_register_pointer(const void *p, unsigned memory_type, int managed, int ordinal) {
  add_pointer(p, 0, memory_type, managed, ordinal);
}

struct stream_context { CUstream s; CUcontext ctx; };
static struct stream_context stream_contexts[16];
static int nstream_contexts;
void fake_set_stream_context(CUstream s, CUcontext ctx) {
  pthread_mutex_lock(&lock);
  int i = 0;
  while (i < nstream_contexts && stream_contexts[i].s != s) ++i;
  if (i < 16) {
    stream_contexts[i] = (struct stream_context){s, ctx};
    if (i == nstream_contexts) ++nstream_contexts;
  }
  pthread_mutex_unlock(&lock);
}
/* The context a registered stream belongs to, or NULL (then: the current context's). */
static CUcontext registered_context(CUstream s) {
  CUcontext c = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nstream_contexts; ++i)
    if (stream_contexts[i].s == s) c = stream_contexts[i].ctx;
  pthread_mutex_unlock(&lock);
  return c;
}

CUresult cuGetErrorName(CUresult r, const char **s) {
  switch (r) {
    case 1: *s = "CUDA_ERROR_INVALID_VALUE"; return 0;
    case 3: *s = "CUDA_ERROR_NOT_INITIALIZED"; return 0;
    case 100: *s = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 101: *s = "CUDA_ERROR_INVALID_DEVICE"; return 0;
    case 201: *s = "CUDA_ERROR_INVALID_CONTEXT"; return 0;
    case 400: *s = "CUDA_ERROR_INVALID_HANDLE"; return 0;
    case 700: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return 0;
    default: return 1;
  }
}

CUresult cuInit(unsigned flags) {
  int f = enter("cuInit", 0, 0);
  const char *e = getenv("FAKE_CUDA_INIT_ERROR");
  if (e) return atoi(e);
  if (f) return f;
  if (flags != 0) return 1;
  initialized = 1;
  return 0;
}
CUresult cuCtxGetCurrent(CUcontext *c) {
  int f = enter("cuCtxGetCurrent", 0, 0);
  if (f) return f;
  if (!initialized) return 3;
  *c = ctx_depth ? ctx_stack[ctx_depth - 1] : 0;
  return 0;
}
CUresult cuCtxPushCurrent_v2(CUcontext c) {
  int f = enter("cuCtxPushCurrent_v2", c, 0);
  if (f) return f;
  if (!c || ctx_depth == 8) return 201;
  ctx_stack[ctx_depth++] = c;
  return 0;
}
CUresult cuCtxPopCurrent_v2(CUcontext *c) {
  int f = enter("cuCtxPopCurrent_v2", 0, 0);
  if (f) return f;
  if (!ctx_depth) return 201;
  *c = ctx_stack[--ctx_depth];
  return 0;
}
CUresult cuDeviceGet(int *dev, int ordinal) {
  int f = enter("cuDeviceGet", 0, 0);
  if (f) return f;
  if (ordinal < 0 || ordinal >= NDEV) return 101;
  *dev = ordinal;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, int dev) {
  int f = enter("cuDevicePrimaryCtxRetain", 0, 0);
  if (f) return f;
  if (dev < 0 || dev >= NDEV) return 101;
  *c = &primary_ctx[dev];
  return 0;
}
static CUcontext current(void) { return ctx_depth ? ctx_stack[ctx_depth - 1] : 0; }
CUresult cuDeviceGetCount(int *n) {
  int f = enter("cuDeviceGetCount", 0, 0);
  if (f) return f;
  if (!initialized) return 3;
  *n = NDEV;
  return 0;
}
CUresult cuDeviceGetName(char *name, int len, int dev) {
  int f = enter("cuDeviceGetName", 0, 0);
  if (f) return f;
  if (!initialized) return 3;
  if (dev < 0 || dev >= NDEV || len < 20) return 1;
  strcpy(name, "fake CUDA device 0");
  name[17] = (char)('0' + dev);
  return 0;
}
/* The context a stream belongs to: a registered stream's own, else (the special handles 0, 0x1,
 * 0x2 and any stream made in the current context) the current context; none current: 201. */
CUresult cuStreamGetCtx(CUstream s, CUcontext *c) {
  int f = enter("cuStreamGetCtx", s, 0);
  if (f) return f;
  CUcontext r = registered_context(s);
  if (!r) r = current();
  if (!r) return 201;
  *c = r;
  return 0;
}
CUresult cuEventCreate(CUevent *e, unsigned flags) {
  int f = enter("cuEventCreate", 0, 0);
  if (f) return f;
  if (!current()) return 201;
  if (flags != 0x2) return 1; /* this library must ask for CU_EVENT_DISABLE_TIMING */
  struct fake_event *ev = calloc(1, sizeof *ev);
  ev->ctx = current();
  *e = ev;
  return 0;
}
CUresult cuEventRecord(CUevent e, CUstream s) {
  int f = enter("cuEventRecord", e, s);
  if (f) return f;
  if (!current()) return 201;
  if (e->ctx != current()) return 400; /* the event belongs to another context */
  CUcontext sc = registered_context(s);
  if (sc && sc != e->ctx) return 400; /* event and stream of different contexts */
  pthread_mutex_lock(&lock);
  int busy = e->in_flight;
  e->in_flight = 1;
  e->recorder = pthread_self();
  pthread_mutex_unlock(&lock);
  if (busy) return 400; /* another thread is between record and wait on this event */
  emu_record(e, emulated(s));
  return 0;
}
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  int f = enter("cuStreamWaitEvent", s, e);
  if (flags != 0) return 1;
  pthread_mutex_lock(&lock);
  int mine = e->in_flight && pthread_equal(e->recorder, pthread_self());
  e->in_flight = 0;
  pthread_mutex_unlock(&lock);
  if (f) return f;
  if (!mine) return 400;
  emu_wait_event(emulated(s), e);
  return 0;
}
CUresult cuStreamSynchronize(CUstream s) {
  int f = enter("cuStreamSynchronize", s, 0);
  if (f) return f;
  struct estream *st = emulated(s);
  if (st) {
    emu_drain(st);
    return 0;
  }
  return current() ? 0 : 201;
}
/* As the real driver documents it: every attribute is looked up in one call; memory the driver
 * does not know is not an error: each attribute gets its zero value and the call succeeds. */
static int pointer_needs_context;
/* fake_pointer_needs_context(1): cuPointerGetAttributes answers CUDA_ERROR_INVALID_CONTEXT on a
 * thread with no current context (the documented error of a driver that wants one). */
void fake_pointer_needs_context(int on) { __atomic_store_n(&pointer_needs_context, on, __ATOMIC_SEQ_CST); }
CUresult cuPointerGetAttributes(unsigned n, const int *attributes, void **data,
                                unsigned long long ptr) {
  int f = enter("cuPointerGetAttributes", (void *)(uintptr_t)ptr, 0);
  if (f) return f;
  if (__atomic_load_n(&pointer_needs_context, __ATOMIC_SEQ_CST) && !current()) return 201;
  if (!attributes || !data) return 1; /* CUDA_ERROR_INVALID_VALUE */
  const struct pointer_info *hit = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < NPOINTERS && !hit; ++i) {
    uintptr_t base = (uintptr_t)pointers[i].p;
    if (base && ptr >= base && ptr <= base + (pointers[i].size ? pointers[i].size - 1 : 0))
      hit = &pointers[i];
  }
  struct pointer_info found = hit ? *hit : (struct pointer_info){0};
  pthread_mutex_unlock(&lock);
  for (unsigned i = 0; i < n; ++i) {
    if (!data[i]) return 1;
    switch (attributes[i]) {
      case 2: *(unsigned *)data[i] = hit ? found.memory_type : 0; break; /* MEMORY_TYPE */
      case 8: *(unsigned *)data[i] = hit ? (unsigned)found.managed : 0; break; /* IS_MANAGED */
      case 9: *(int *)data[i] = hit ? found.ordinal : 0; break; /* DEVICE_ORDINAL */
      default: return 1; /* an attribute this double does not model */
    }
  }
  return 0;
}

/* ---- Stream emulation, for scripts/gpu-check's simulated device run ---------------------------
 * Streams made by cuStreamCreate and, once one exists, the default streams (NULL and 0x1: the
 * legacy stream; 0x2: the per-thread stream, one for all threads here) are emulated: each is a
 * FIFO of operations (a 32-bit memset, a copy, a wait for a 32-bit value, a wait for an event)
 * that a worker thread runs in order, as the GPU would; "device memory" is host memory. An event
 * recorded on an emulated stream stands for the work queued there so far; a stream waiting on it
 * runs nothing after the wait until that work is done (cuStreamWaitEvent's rule). Streams are
 * all non-blocking: no implicit ordering with the legacy stream. Other stream handles (the
 * tests' made-up values) are not emulated and behave as before. */
typedef unsigned long long CUdeviceptr;
enum { OP_MEMSET32, OP_COPY, OP_WAIT_VALUE, OP_WAIT_EVENT };
struct op {
  int kind;
  void *dst;
  const void *src;
  size_t n;
  uint32_t value;
  struct estream *stream;
  long target;
  struct op *next;
};
struct estream {
  CUcontext ctx;
  long queued, done;
  struct op *head, *tail;
  int live;
};
#define NSTREAMS 64
static struct estream streams[NSTREAMS]; /* [0]: legacy, [1]: per-thread, then created ones */
static int emulating;
static pthread_mutex_t emu_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t emu_once = PTHREAD_ONCE_INIT;

static struct estream *emulated(CUstream s) {
  if (!__atomic_load_n(&emulating, __ATOMIC_ACQUIRE)) return 0;
  uintptr_t h = (uintptr_t)s;
  if (h == 0 || h == 1) return &streams[0];
  if (h == 2) return &streams[1];
  if (h >= (uintptr_t)&streams[2] && h < (uintptr_t)&streams[NSTREAMS] &&
      (h - (uintptr_t)&streams[0]) % sizeof streams[0] == 0 && ((struct estream *)s)->live)
    return (struct estream *)s;
  return 0;
}
static int ready(const struct op *o) {
  switch (o->kind) {
    case OP_WAIT_VALUE: return (int32_t)(__atomic_load_n((uint32_t *)o->dst, __ATOMIC_ACQUIRE) - o->value) >= 0;
    case OP_WAIT_EVENT: return !o->stream || o->stream->done >= o->target;
    default: return 1;
  }
}
static void run(const struct op *o) {
  if (o->kind == OP_MEMSET32)
    for (size_t i = 0; i < o->n; ++i) __atomic_store_n((uint32_t *)o->dst + i, o->value, __ATOMIC_RELEASE);
  else if (o->kind == OP_COPY)
    memcpy(o->dst, o->src, o->n);
}
static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    int progress = 0;
    pthread_mutex_lock(&emu_lock);
    for (int i = 0; i < NSTREAMS; ++i) {
      struct estream *st = &streams[i];
      while (st->head && ready(st->head)) {
        struct op *o = st->head;
        run(o);
        st->head = o->next;
        if (!st->head) st->tail = 0;
        ++st->done;
        free(o);
        progress = 1;
      }
    }
    pthread_mutex_unlock(&emu_lock);
    if (!progress) usleep(50);
  }
  return 0;
}
static void start_worker(void) {
  pthread_t t;
  streams[0].live = streams[1].live = 1;
  __atomic_store_n(&emulating, 1, __ATOMIC_RELEASE);
  pthread_create(&t, 0, worker, 0);
  pthread_detach(t);
}
static void enqueue(struct estream *st, struct op o) {
  struct op *n = malloc(sizeof *n);
  *n = o;
  n->next = 0;
  pthread_mutex_lock(&emu_lock);
  if (st->tail) st->tail->next = n; else st->head = n;
  st->tail = n;
  ++st->queued;
  pthread_mutex_unlock(&emu_lock);
}
static void emu_record(struct fake_event *e, struct estream *s) {
  pthread_mutex_lock(&emu_lock);
  e->stream = s;
  e->target = s ? s->queued : 0;
  pthread_mutex_unlock(&emu_lock);
}
static void emu_wait_event(struct estream *s, struct fake_event *e) {
  if (!s) return;
  pthread_mutex_lock(&emu_lock);
  struct op o = {OP_WAIT_EVENT, 0, 0, 0, 0, e->stream, e->target, 0};
  pthread_mutex_unlock(&emu_lock);
  enqueue(s, o);
}
static int idle(struct estream *s) {
  pthread_mutex_lock(&emu_lock);
  int r = s->done == s->queued;
  pthread_mutex_unlock(&emu_lock);
  return r;
}
static void emu_drain(struct estream *s) {
  while (!idle(s)) usleep(50);
}

CUresult cuEventQuery(CUevent e) {
  int f = enter("cuEventQuery", e, 0);
  if (f) return f;
  if (!current()) return 201;
  if (e->ctx != current()) return 400; /* queried outside the event's context */
  pthread_mutex_lock(&emu_lock);
  int done = !e->stream || e->stream->done >= e->target;
  pthread_mutex_unlock(&emu_lock);
  if (!done) return 600; /* CUDA_ERROR_NOT_READY */
  pthread_mutex_lock(&lock);
  e->in_flight = 0;
  pthread_mutex_unlock(&lock);
  return 0;
}
CUresult cuCtxCreate_v2(CUcontext *c, unsigned flags, int dev) {
  int f = enter("cuCtxCreate_v2", 0, 0);
  if (f) return f;
  if (!initialized) return 3;
  if (dev < 0 || dev >= NDEV || flags != 0 || ctx_depth == 8) return 1;
  *c = malloc(1); /* a distinct address; never freed, so never reused as another context */
  ctx_stack[ctx_depth++] = *c;
  return 0;
}
CUresult cuCtxDestroy_v2(CUcontext c) {
  int f = enter("cuCtxDestroy_v2", c, 0);
  if (f) return f;
  if (ctx_depth && ctx_stack[ctx_depth - 1] == c) --ctx_depth;
  return 0;
}
CUresult cuStreamCreate(CUstream *s, unsigned flags) {
  int f = enter("cuStreamCreate", 0, 0);
  if (f) return f;
  if (!current()) return 201;
  if (flags > 1) return 1;
  pthread_once(&emu_once, start_worker);
  pthread_mutex_lock(&emu_lock);
  struct estream *st = 0;
  for (int i = 2; i < NSTREAMS && !st; ++i)
    if (!streams[i].live && !streams[i].head) st = &streams[i];
  if (st) *st = (struct estream){current(), 0, 0, 0, 0, 1};
  pthread_mutex_unlock(&emu_lock);
  if (!st) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  fake_set_stream_context(st, current());
  *s = st;
  return 0;
}
CUresult cuStreamDestroy_v2(CUstream s) {
  int f = enter("cuStreamDestroy_v2", s, 0);
  if (f) return f;
  struct estream *st = emulated(s);
  if (!st || st == &streams[0] || st == &streams[1]) return 400;
  emu_drain(st);
  st->live = 0;
  return 0;
}
CUresult cuStreamQuery(CUstream s) {
  int f = enter("cuStreamQuery", s, 0);
  if (f) return f;
  struct estream *st = emulated(s);
  return !st || idle(st) ? 0 : 600; /* CUDA_ERROR_NOT_READY */
}
CUresult cuStreamWaitValue32_v2(CUstream s, CUdeviceptr addr, uint32_t value, unsigned flags) {
  int f = enter("cuStreamWaitValue32_v2", s, 0);
  if (f) return f;
  struct estream *st = emulated(s);
  if (!st || flags != 0) return 1; /* only CU_STREAM_WAIT_VALUE_GEQ */
  enqueue(st, (struct op){OP_WAIT_VALUE, (void *)(uintptr_t)addr, 0, 0, value, 0, 0, 0});
  return 0;
}
static CUresult allocate(const char *name, void **p, size_t n, unsigned type, int managed) {
  int f = enter(name, 0, 0);
  if (f) return f;
  if (!current()) return 201;
  if (!n) return 1;
  *p = calloc(1, n);
  if (!*p) return 2;
  add_pointer(*p, n, type, managed, 0);
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  void *q;
  CUresult r = allocate("cuMemAlloc_v2", &q, n, 2, 0);
  if (!r) *p = (uintptr_t)q;
  return r;
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags) {
  void *q;
  if (flags != 1 && flags != 2) return 1;
  CUresult r = allocate("cuMemAllocManaged", &q, n, 2, 1);
  if (!r) *p = (uintptr_t)q;
  return r;
}
CUresult cuMemAllocHost_v2(void **p, size_t n) { return allocate("cuMemAllocHost_v2", p, n, 1, 0); }
CUresult cuMemFree_v2(CUdeviceptr p) {
  int f = enter("cuMemFree_v2", 0, 0);
  if (f) return f;
  if (!remove_pointer((void *)(uintptr_t)p)) return 1;
  free((void *)(uintptr_t)p);
  return 0;
}
CUresult cuMemFreeHost(void *p) {
  int f = enter("cuMemFreeHost", p, 0);
  if (f) return f;
  if (!remove_pointer(p)) return 1;
  free(p);
  return 0;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) {
  int f = enter("cuMemHostRegister_v2", p, 0);
  if (f) return f;
  if (!p || !n || flags > 0xf) return 1;
  add_pointer(p, n, 1, 0, 0);
  return 0;
}
CUresult cuMemHostUnregister(void *p) {
  int f = enter("cuMemHostUnregister", p, 0);
  if (f) return f;
  return remove_pointer(p) ? 0 : 713; /* CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED */
}
CUresult cuMemsetD32Async(CUdeviceptr p, unsigned value, size_t n, CUstream s) {
  int f = enter("cuMemsetD32Async", s, 0);
  if (f) return f;
  struct op o = {OP_MEMSET32, (void *)(uintptr_t)p, 0, n, value, 0, 0, 0};
  struct estream *st = emulated(s);
  if (st) enqueue(st, o); else run(&o);
  return 0;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  int f = enter("cuMemcpyDtoDAsync_v2", s, 0);
  if (f) return f;
  struct op o = {OP_COPY, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n, 0, 0, 0, 0};
  struct estream *st = emulated(s);
  if (st) enqueue(st, o); else run(&o);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  int f = enter("cuMemcpyDtoH_v2", dst, 0);
  if (f) return f;
  pthread_mutex_lock(&emu_lock);
  memcpy(dst, (const void *)(uintptr_t)src, n);
  pthread_mutex_unlock(&emu_lock);
  return 0;
}
