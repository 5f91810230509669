/* A test double of the HIP runtime (libamdhip64.so) for the stream tests: the entry points
 * dlpack-helpers looks up, with call counters, a per-thread current device, events tied to the
 * device they were created on, and errors on demand. Control: fake_count, fake_fail,
 * fake_reset_counts, fake_last (as in fake_cuda.c). FAKE_HIP_INIT_ERROR makes hipInit fail.
 *
 * Pointer attributes: fake_hip_register(base, size, type, device, is_managed) declares an
 * allocation [base, base + size) with a ROCm 6 hipMemoryType; hipPointerGetAttributes answers
 * for any address inside it (like the real runtime) and hipErrorInvalidValue for any other
 * address. FAKE_HIP_UNREGISTERED_SUCCESS=1 makes unknown memory answer hipSuccess with
 * hipMemoryTypeUnregistered instead (as some ROCm 6 releases do). hipRuntimeGetVersion reports
 * 6.0 (60032830).
 *
 * Gates, for the deferred-release tests: fake_hip_gate(stream, closed) closes or opens a
 * stream. An event recorded on a stream while its gate is closed stands for work that has not
 * run: hipEventQuery answers hipErrorNotReady (600) for it until the gate opens; any other event
 * is complete. A complete event is free to be recorded again. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
typedef void *hipStream_t;
typedef struct fake_event *hipEvent_t;

#define NFN 12
static const char *names[NFN] = {"hipInit", "hipGetDevice", "hipSetDevice",
                                 "hipEventCreateWithFlags", "hipEventRecord",
                                 "hipStreamWaitEvent", "hipStreamSynchronize",
                                 "hipPointerGetAttributes", "hipRuntimeGetVersion",
                                 "hipEventQuery", 0};
#include "recorder.h"

#define NDEV 2
FAKE_TLS int current_device;
struct fake_event { int device; int in_flight; pthread_t recorder; int gate; long opened; };
struct gate { hipStream_t s; int closed; long opened; };
#define NGATES 16
static struct gate gates[NGATES];
/* The gate of `s` (made on first use), under `lock`. */
static struct gate *gate_of(hipStream_t s) {
  for (int i = 0; i < NGATES; ++i)
    if (gates[i].s == s) return &gates[i];
  for (int i = 0; i < NGATES; ++i)
    if (!gates[i].s) {
      gates[i].s = s;
      return &gates[i];
    }
  return 0;
}
void fake_hip_gate(hipStream_t s, int closed) {
  pthread_mutex_lock(&lock);
  struct gate *g = gate_of(s);
  if (g) {
    if (g->closed && !closed) ++g->opened;
    g->closed = closed;
  }
  pthread_mutex_unlock(&lock);
}

const char *hipGetErrorName(hipError_t e) {
  switch (e) {
    case 1: return "hipErrorInvalidValue";
    case 101: return "hipErrorInvalidDevice";
    case 400: return "hipErrorInvalidHandle";
    default: return "hipErrorUnknown";
  }
}
hipError_t hipInit(unsigned flags) {
  int f = enter("hipInit", 0, 0);
  const char *e = getenv("FAKE_HIP_INIT_ERROR");
  if (e) return atoi(e);
  return f ? f : (flags ? 1 : 0);
}
hipError_t hipGetDevice(int *d) {
  int f = enter("hipGetDevice", 0, 0);
  if (f) return f;
  *d = current_device;
  return 0;
}
hipError_t hipSetDevice(int d) {
  int f = enter("hipSetDevice", 0, 0);
  if (f) return f;
  if (d < 0 || d >= NDEV) return 101;
  current_device = d;
  return 0;
}
hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags) {
  int f = enter("hipEventCreateWithFlags", 0, 0);
  if (f) return f;
  if (flags != 0x2) return 1;
  struct fake_event *ev = calloc(1, sizeof *ev);
  ev->device = current_device;
  *e = ev;
  return 0;
}
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) {
  int f = enter("hipEventRecord", e, s);
  if (f) return f;
  if (e->device != current_device) return 400;
  pthread_mutex_lock(&lock);
  int busy = e->in_flight;
  e->in_flight = 1;
  e->recorder = pthread_self();
  if (!busy) {
    struct gate *g = gate_of(s);
    e->gate = g && g->closed ? (int)(g - gates) + 1 : 0;
    e->opened = g ? g->opened : 0;
  }
  pthread_mutex_unlock(&lock);
  return busy ? 400 : 0;
}
hipError_t hipEventQuery(hipEvent_t e) {
  int f = enter("hipEventQuery", e, 0);
  if (f) return f;
  pthread_mutex_lock(&lock);
  int done = !e->gate || gates[e->gate - 1].opened > e->opened;
  if (done) e->in_flight = 0;
  pthread_mutex_unlock(&lock);
  return done ? 0 : 600; /* hipErrorNotReady */
}
hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags) {
  int f = enter("hipStreamWaitEvent", s, e);
  pthread_mutex_lock(&lock);
  int mine = e->in_flight && pthread_equal(e->recorder, pthread_self());
  e->in_flight = 0;
  pthread_mutex_unlock(&lock);
  if (f) return f;
  return (mine && flags == 0) ? 0 : 400;
}
hipError_t hipStreamSynchronize(hipStream_t s) {
  int f = enter("hipStreamSynchronize", s, 0);
  return f;
}

typedef struct {
  int type; /* hipMemoryType */
  int device;
  void *devicePointer;
  void *hostPointer;
  int isManaged;
  unsigned allocationFlags;
} hipPointerAttribute_t;

struct allocation { uintptr_t base; size_t size; int type, device, managed; };
static struct allocation allocations[32];
static int nallocations;
void fake_hip_register(const void *base, size_t size, int type, int device, int managed) {
  pthread_mutex_lock(&lock);
  allocations[nallocations++] = (struct allocation){(uintptr_t)base, size, type, device, managed};
  pthread_mutex_unlock(&lock);
}
hipError_t hipRuntimeGetVersion(int *v) {
  int f = enter("hipRuntimeGetVersion", 0, 0);
  if (f) return f;
  *v = 60032830;
  return 0;
}
hipError_t hipPointerGetAttributes(hipPointerAttribute_t *a, const void *p) {
  int f = enter("hipPointerGetAttributes", (void *)p, 0);
  if (f) return f;
  if (!a) return 1;
  uintptr_t x = (uintptr_t)p;
  pthread_mutex_lock(&lock);
  int n = nallocations;
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < n; ++i) {
    const struct allocation *al = &allocations[i];
    if (x >= al->base && x - al->base < al->size) {
      memset(a, 0, sizeof *a);
      a->type = al->type;
      a->device = al->device;
      a->isManaged = al->managed;
      a->devicePointer = (void *)p;
      a->hostPointer = (al->type == 2) ? 0 : (void *)p;
      return 0;
    }
  }
  if (getenv("FAKE_HIP_UNREGISTERED_SUCCESS")) {
    memset(a, 0, sizeof *a);
    a->device = -1;
    return 0;
  }
  return 1; /* hipErrorInvalidValue */
}
