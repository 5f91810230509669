/* A heap-allocation counter: LD_PRELOAD it (or link it first) and every malloc, calloc, realloc,
 * posix_memalign, aligned_alloc and memalign of the process is counted before being forwarded
 * to glibc's implementation (__libc_*). malloc_count_get() reads the count (Python: ctypes
 * CDLL(None).malloc_count_get). glibc only; used by scripts/bench, never by the library. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static __thread unsigned long count;

unsigned long malloc_count_get(void) { return count; }

void *malloc(size_t n) { ++count; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { ++count; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { ++count; return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { ++count; return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { ++count; return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
  ++count;
  void *p = __libc_memalign(a, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
