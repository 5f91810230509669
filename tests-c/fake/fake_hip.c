/* A test double of the HIP runtime (libamdhip64.so) for the stream tests: the entry points
 * dlpack-helpers looks up, with call counters, a per-thread current device, events tied to the
 * device they were created on, and errors on demand. Control: fake_count, fake_fail,
 * fake_reset_counts, fake_last (as in fake_cuda.c). FAKE_HIP_INIT_ERROR makes hipInit fail. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
typedef void *hipStream_t;
typedef struct fake_event *hipEvent_t;

#define NFN 12
static const char *names[NFN] = {"hipInit", "hipGetDevice", "hipSetDevice",
                                 "hipEventCreateWithFlags", "hipEventRecord",
                                 "hipStreamWaitEvent", "hipStreamSynchronize", 0};
#include "recorder.h"

#define NDEV 2
static _Thread_local int current_device;
struct fake_event { int device; int in_flight; pthread_t recorder; };

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
  pthread_mutex_unlock(&lock);
  return busy ? 400 : 0;
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
