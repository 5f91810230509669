/* A test double of the CUDA driver API (libcuda.so.1) for the stream tests: it implements the
 * handful of entry points dlpack-helpers looks up, counts every call, checks the rules the real
 * driver enforces that matter here (an event is recorded in its own context, a context is
 * current, events are created without timing), and fails on demand.
 *
 * Control (exported): fake_count(name), fake_fail(name, code) (0 clears), fake_reset_counts(),
 * fake_register_pointer(ptr, memory_type, managed, ordinal), fake_last(name, &a, &b),
 * fake_set_stream_context(stream, ctx) (the stream belongs to that context, as a stream made by
 * cuStreamCreate inside it would: cuStreamGetCtx answers it, and cuEventRecord refuses an event
 * of another context on it, as the real driver does; any other stream belongs to the calling
 * thread's current context).
 * It also answers cuDeviceGetCount (NDEV devices) and cuDeviceGetName ("fake CUDA device N"), so
 * that scripts/gpu-check can run its simulated device run against it.
 * FAKE_CUDA_INIT_ERROR=<code> in the environment makes cuInit fail. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef void *CUcontext;
typedef void *CUstream;
typedef struct fake_event *CUevent;

#define NFN 16
static const char *names[NFN] = {"cuInit", "cuCtxGetCurrent", "cuCtxPushCurrent_v2",
                                 "cuCtxPopCurrent_v2", "cuDeviceGet", "cuDevicePrimaryCtxRetain",
                                 "cuEventCreate", "cuEventRecord", "cuStreamWaitEvent",
                                 "cuStreamSynchronize", "cuPointerGetAttribute", "cuStreamGetCtx",
                                 "cuDeviceGetCount", "cuDeviceGetName", 0};
#include "recorder.h"

#define NDEV 2
static char primary_ctx[NDEV]; /* the address of primary_ctx[i] is device i's context */
static _Thread_local CUcontext ctx_stack[8];
static _Thread_local int ctx_depth;
static int initialized;

struct fake_event {
  CUcontext ctx;
  pthread_t recorder; /* the thread between its record and its wait, or 0 */
  int in_flight;
};

struct pointer_info { const void *p; unsigned memory_type; int managed, ordinal; };
static struct pointer_info pointers[16];
static int npointers;
void fake_register_pointer(const void *p, unsigned memory_type, int managed, int ordinal) {
  pthread_mutex_lock(&lock);
  pointers[npointers++] = (struct pointer_info){p, memory_type, managed, ordinal};
  pthread_mutex_unlock(&lock);
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
  return busy ? 400 : 0; /* another thread is between record and wait on this event */
}
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  int f = enter("cuStreamWaitEvent", s, e);
  if (flags != 0) return 1;
  pthread_mutex_lock(&lock);
  int mine = e->in_flight && pthread_equal(e->recorder, pthread_self());
  e->in_flight = 0;
  pthread_mutex_unlock(&lock);
  if (f) return f;
  return mine ? 0 : 400;
}
CUresult cuStreamSynchronize(CUstream s) {
  int f = enter("cuStreamSynchronize", s, 0);
  if (f) return f;
  return current() ? 0 : 201;
}
CUresult cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr) {
  int f = enter("cuPointerGetAttribute", (void *)(uintptr_t)ptr, 0);
  if (f) return f;
  for (int i = 0; i < npointers; ++i) {
    if ((uintptr_t)pointers[i].p != ptr) continue;
    switch (attribute) {
      case 2: *(unsigned *)data = pointers[i].memory_type; return 0;
      case 8: *(unsigned *)data = (unsigned)pointers[i].managed; return 0;
      case 9: *(int *)data = pointers[i].ordinal; return 0;
      default: return 1;
    }
  }
  return 1; /* CUDA_ERROR_INVALID_VALUE: memory the driver does not know */
}
