/* How long dlight takes to schedule a function for the GPU: every program
 * of tests/dlight/cases and bench/gpu, scheduled again and again for at
 * least 0.2 s, reported as milliseconds per function with the rule that
 * took it. dlight's promise is milliseconds, with no tuning. Run from the
 * source root with `make bench` (or build/bench/bench_dlight [ROOT]). */
#include "loom/script.h"
#include "loom/target.h"
#include "loom/tune.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Times dlight on each function of the program at path; false when the
 * file is not a program or scheduling fails. */
static bool measure(const char *path, const char *label, const loom_target *t,
                    double *worst) {
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_read_file(path, &text, &len, &d) != LOOM_OK) {
    loom_diag_free(&d);
    return false;
  }
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  bool ok = loom_script_read(text, len, path, a, &m, &d) == LOOM_OK;
  for (int i = 0; ok && i < m->n_funcs; i++) {
    const char *rule = NULL;
    int n = 0;
    double t0 = now(), t1 = t0;
    while (ok && (n < 3 || t1 - t0 < 0.2)) {
      loom_arena *run = loom_arena_new();
      loom_sched *s = NULL;
      const loom_func *g;
      ok = run && loom_tune_dlight(run, m->funcs[i], t, NULL, 0, &s, &g, &rule, NULL, &d) ==
                      LOOM_OK;
      if (s)
        loom_sched_free(s);
      loom_arena_free(run);
      n++;
      t1 = now();
    }
    double ms = (t1 - t0) / n * 1e3;
    *worst = ms > *worst ? ms : *worst;
    printf("%-36s %-10s %8.3f ms\n", label, rule ? rule : "(none)", ms);
  }
  if (!ok && d.msg)
    fprintf(stderr, "%s: %s\n", path, d.msg);
  loom_diag_free(&d);
  loom_arena_free(a);
  free(text);
  return ok;
}

static int by_name(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_target_parse("cuda -arch=sm_90", &t, &d) != LOOM_OK)
    return 1;
  loom_diag_free(&d);
  static const char *const dirs[] = {"tests/dlight/cases", "bench/gpu"};
  double worst = 0;
  int n_programs = 0;
  printf("%-36s %-10s %11s\n", "program", "rule", "per function");
  for (size_t k = 0; k < sizeof dirs / sizeof *dirs; k++) {
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/%s", root, dirs[k]);
    DIR *dp = opendir(dir);
    if (!dp) {
      fprintf(stderr, "bench_dlight: no %s (run from the source root)\n", dir);
      return 1;
    }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) && n < 256) {
      size_t len = strlen(e->d_name);
      /* Programs only: schedule scripts end in .sched.py or .space.py. */
      if (len > 3 && !strcmp(e->d_name + len - 3, ".py") && !strstr(e->d_name, ".sched.") &&
          !strstr(e->d_name, ".space."))
        names[n++] = strdup(e->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
      char path[4096], label[512];
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      snprintf(label, sizeof label, "%s/%s", dirs[k], names[i]);
      n_programs += measure(path, label, &t, &worst);
      free(names[i]);
    }
  }
  printf("%d programs; the slowest function took %.3f ms to schedule\n", n_programs, worst);
  return 0;
}
