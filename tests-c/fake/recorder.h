/* The call recorder shared by the driver test doubles (fake_cuda.c, fake_hip.c), and their FAKE_TLS.
 *
 * Before including it, define NFN and `static const char *names[NFN]` (the entry points the
 * double records, NULL-terminated). It provides enter() for the entry points and the exported
 * controls the tests use: fake_count(name), fake_fail(name, code) (0 clears),
 * fake_reset_counts(), fake_last(name, &a, &b). */
#ifndef DLPACK_HELPERS_FAKE_RECORDER_H
#define DLPACK_HELPERS_FAKE_RECORDER_H

#include <pthread.h>
#include <string.h>

/* FAKE_TLS: thread-local state of the doubles, in the initial-exec TLS model (a dlopen'ed library's
 * initial-exec block sits in the static TLS surplus glibc keeps for them), never the default
 * global-dynamic model. Every global-dynamic access goes through __tls_get_addr, and GCC 12's
 * AddressSanitizer runtime guesses the bounds of the block it returns: a heap-allocated block that
 * starts 16 bytes into a page is taken for glibc 2.19's layout, a bogus range is recorded, and
 * LeakSanitizer's end-of-run scan of that range dies ("Tracer caught signal 11"; one run in about
 * ten of test_reliability under ASan on Debian 12, whichever thread touched the fake). What the
 * doubles do does not depend on the model. */
#define FAKE_TLS static _Thread_local __attribute__((tls_model("initial-exec")))

static long counts[NFN];
static int fail_codes[NFN];
static void *last_a[NFN], *last_b[NFN];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int idx(const char *n) {
  for (int i = 0; i < NFN && names[i]; ++i)
    if (strcmp(names[i], n) == 0) return i;
  return -1;
}
/* Count a call, remember its two handle arguments, and return the injected error (0 if none). */
static int enter(const char *n, void *a, void *b) {
  int i = idx(n);
  pthread_mutex_lock(&lock);
  ++counts[i];
  last_a[i] = a;
  last_b[i] = b;
  int f = fail_codes[i];
  pthread_mutex_unlock(&lock);
  return f;
}

long fake_count(const char *n) {
  int i = idx(n);
  if (i < 0) return -1;
  pthread_mutex_lock(&lock);
  long c = counts[i];
  pthread_mutex_unlock(&lock);
  return c;
}
void fake_fail(const char *n, int code) {
  pthread_mutex_lock(&lock);
  fail_codes[idx(n)] = code;
  pthread_mutex_unlock(&lock);
}
void fake_reset_counts(void) {
  pthread_mutex_lock(&lock);
  memset(counts, 0, sizeof counts);
  pthread_mutex_unlock(&lock);
}
void fake_last(const char *n, void **a, void **b) {
  int i = idx(n);
  pthread_mutex_lock(&lock);
  *a = last_a[i];
  *b = last_b[i];
  pthread_mutex_unlock(&lock);
}

#endif
