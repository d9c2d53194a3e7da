/* Helpers the runtime tests share: compiling a kernel at -O1, counting open
 * descriptors and directory entries, sleeping, and telling whether a process
 * is gone. */
#ifndef LOOM_TEST_RT_UTIL_H
#define LOOM_TEST_RT_UTIL_H

#include "loom/runtime.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The hand-written kernels of these tests take only their arguments; the C
 * backend's also take shapes (include/loom/codegen.h). */
typedef int32_t (*test_kernel)(void **args);

/* Compiles src with -O1 (fast to build); NULL with the diagnostic printed
 * when it fails. */
static inline loom_runtime_lib *compile_src(const char *src, bool openmp) {
  loom_runtime_cc_options opt = {.flags = "-O1", .openmp = openmp};
  loom_runtime_lib *lib = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_runtime_compile(src, strlen(src), &opt, &lib, NULL, &d) != LOOM_OK) {
    loom_buf b;
    loom_buf_init(&b);
    loom_diag_render(&d, &b);
    fprintf(stderr, "compile failed:\n%s\n", b.data ? b.data : "");
    loom_buf_free(&b);
  }
  loom_diag_free(&d);
  return lib;
}

/* Number of entries in dir (without . and ..), -1 if it cannot be read. */
static inline int count_entries(const char *dir) {
  DIR *dp = opendir(dir);
  if (!dp)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dp)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      n++;
  closedir(dp);
  return n;
}

static inline int count_fds(void) { return count_entries("/proc/self/fd"); }

static inline void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* True when no process pid exists, or only as a zombie (a container's first
 * process may be slow to reap what it inherits). */
static inline int is_gone(int pid) {
  if (kill(pid, 0) < 0 && errno == ESRCH)
    return 1;
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return 1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *paren = strrchr(buf, ')');
  return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

#endif
