/* A minimal unit-test harness: CHECK records a failure with its location and
 * carries on, so one run shows every broken expectation. Each test program
 * ends with test_summary(), whose exit code ctest reads. */
#ifndef LOOM_TEST_H
#define LOOM_TEST_H

#include <stdio.h>
#include <string.h>

static int test_checks, test_failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    test_checks++;                                                             \
    if (!(cond)) {                                                             \
      test_failures++;                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_STREQ(a, b)                                                      \
  do {                                                                         \
    const char *check_a_ = (a), *check_b_ = (b);                               \
    test_checks++;                                                             \
    if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_)) {               \
      test_failures++;                                                         \
      fprintf(stderr, "%s:%d: strings differ:\n  got:      %s\n  expected: %s\n", \
              __FILE__, __LINE__, check_a_ ? check_a_ : "(null)",              \
              check_b_ ? check_b_ : "(null)");                                 \
    }                                                                          \
  } while (0)

/* True when haystack contains needle. */
#define CHECK_CONTAINS(hay, needle)                                            \
  do {                                                                         \
    const char *check_h_ = (hay), *check_n_ = (needle);                        \
    test_checks++;                                                             \
    if (!check_h_ || !strstr(check_h_, check_n_)) {                            \
      test_failures++;                                                         \
      fprintf(stderr, "%s:%d: expected to find \"%s\" in:\n%s\n", __FILE__,    \
              __LINE__, check_n_, check_h_ ? check_h_ : "(null)");             \
    }                                                                          \
  } while (0)

/* A test that made no check proves nothing: it fails. */
static inline int test_summary(const char *name) {
  printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);
  if (test_checks == 0)
    printf("%s: no check was made\n", name);
  return test_failures || test_checks == 0 ? 1 : 0;
}

#endif
