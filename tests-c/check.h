/* Minimal test helpers for the C tests: checks that run in every build mode (not assert). */
#ifndef DLPACK_HELPERS_TESTS_CHECK_H
#define DLPACK_HELPERS_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    ++check_count;                                                                  \
    if (!(cond)) {                                                                  \
      ++check_failures;                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);      \
    }                                                                               \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                          \
  do {                                                                              \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b);                 \
    ++check_count;                                                                  \
    if (check_a_ != check_b_) {                                                     \
      ++check_failures;                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__,   \
              __LINE__, #a, #b, check_a_, check_b_);                                \
    }                                                                               \
  } while (0)

/* Check that a call returned `want` and, when it failed, left a non-empty message. */
#define CHECK_STATUS(call, want)                                                    \
  do {                                                                              \
    dlpack_helpers_status check_s_ = (call);                                        \
    CHECK_EQ_INT(check_s_, (want));                                                 \
    if (check_s_ != DLPACK_HELPERS_STATUS_OK)                                       \
      CHECK(dlpack_last_error_message()[0] != '\0');                                \
  } while (0)

#define TEST(name) static void name(void)
#define RUN(name)                                                                   \
  do {                                                                              \
    int before_ = check_failures;                                                   \
    name();                                                                         \
    printf("%s %s\n", check_failures == before_ ? "ok  " : "FAIL", #name);         \
  } while (0)

#define CHECK_REPORT()                                                              \
  (printf("%d checks, %d failed\n", check_count, check_failures),                  \
   check_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE)

#endif
