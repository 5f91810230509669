/* A test double of the Level Zero loader (libze_loader.so.1) for the pointer tests: zeInit and
 * zeMemGetAllocProperties, with call counters and errors on demand (fake_count, fake_fail,
 * fake_reset_counts, fake_last, from recorder.h).
 *
 * fake_ze_register(context, base, size, type, device) declares a USM allocation
 * [base, base + size) of ze_memory_type_t `type` (1 host, 2 device, 3 shared) made in
 * `context`. zeMemGetAllocProperties checks what the real loader checks that matters here: a
 * non-NULL context, properties and device out-pointer, the structure type
 * ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES (0x17), and answers ZE_MEMORY_TYPE_UNKNOWN for
 * memory that is not an allocation of that context. FAKE_ZE_INIT_ERROR=<code> makes zeInit
 * fail.
 *
 * fake_ze_set_root(sub, root) makes `sub` a sub-device of `root` for zeDeviceGetRootDevice
 * (Level Zero 1.7), which answers NULL for any other handle (a root device); its calls are
 * counted like the others. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned ze_result_t;
#define ZE_RESULT_ERROR_INVALID_ARGUMENT 0x78000004u
#define ZE_RESULT_ERROR_INVALID_NULL_HANDLE 0x78000005u
#define ZE_RESULT_ERROR_INVALID_NULL_POINTER 0x78000006u

typedef struct {
  unsigned stype;
  void *pNext;
  unsigned type;
  uint64_t id;
  uint64_t pageSize;
} ze_memory_allocation_properties_t;

#define NFN 4
static const char *names[NFN] = {"zeInit", "zeMemGetAllocProperties", "zeDeviceGetRootDevice", 0};
#include "recorder.h"

struct allocation { void *ctx; uintptr_t base; size_t size; unsigned type; void *device; };
static struct allocation allocations[32];
static int nallocations;
void fake_ze_register(void *ctx, const void *base, size_t size, unsigned type, void *device) {
  pthread_mutex_lock(&lock);
  allocations[nallocations++] = (struct allocation){ctx, (uintptr_t)base, size, type, device};
  pthread_mutex_unlock(&lock);
}

struct root { void *sub; void *root; };
static struct root roots[8];
static int nroots;
void fake_ze_set_root(void *sub, void *root) {
  pthread_mutex_lock(&lock);
  roots[nroots++] = (struct root){sub, root};
  pthread_mutex_unlock(&lock);
}

ze_result_t zeDeviceGetRootDevice(void *device, void **root) {
  int f = enter("zeDeviceGetRootDevice", device, 0);
  if (f) return (ze_result_t)f;
  if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!root) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *root = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nroots; ++i)
    if (roots[i].sub == device) *root = roots[i].root;
  pthread_mutex_unlock(&lock);
  return 0;
}

ze_result_t zeInit(unsigned flags) {
  int f = enter("zeInit", 0, 0);
  const char *e = getenv("FAKE_ZE_INIT_ERROR");
  if (e) return (ze_result_t)strtoul(e, 0, 0);
  if (f) return (ze_result_t)f;
  return flags ? ZE_RESULT_ERROR_INVALID_ARGUMENT : 0;
}

ze_result_t zeMemGetAllocProperties(void *ctx, const void *p,
                                    ze_memory_allocation_properties_t *props, void **device) {
  int f = enter("zeMemGetAllocProperties", ctx, (void *)p);
  if (f) return (ze_result_t)f;
  if (!ctx) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!props || !p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (props->stype != 0x17) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  uintptr_t x = (uintptr_t)p;
  props->type = 0;
  props->id = 0;
  props->pageSize = 0;
  if (device) *device = 0;
  pthread_mutex_lock(&lock);
  int n = nallocations;
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < n; ++i) {
    const struct allocation *a = &allocations[i];
    if (a->ctx == ctx && x >= a->base && x - a->base < a->size) {
      props->type = a->type;
      props->id = (uint64_t)i + 1;
      props->pageSize = 4096;
      if (device) *device = a->type == 1 ? 0 : a->device;
      return 0;
    }
  }
  return 0; /* ZE_MEMORY_TYPE_UNKNOWN */
}
