/* dlight's rules, case by case: each program of tests/dlight/cases names
 * the rule that must take it ("# dlight: RULE", or "none") and lines the
 * explanation must hold ("# explain: TEXT") and lines its trace must hold
 * ("# trace: TEXT", as the trace prints in Python), on the target "# target:
 * SPEC" names (cuda -arch=sm_90 when none). Every schedule a rule makes
 * must compute what the program computes (in the interpreter, where thread
 * loops are loops; a reduction split across threads adds in another order,
 * so within the tuner's tolerance) and lower and print as CUDA C; NVRTC
 * compiles the cases in tests/gpu/test_kernels. Scheduling the same
 * program twice gives the same trace. */
#include "interp_compare.h"
#include "program.h"
#include "loom/codegen.h"
#include "loom/lower.h"
#include "loom/target.h"
#include "loom/tune.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static int n_cases, n_scheduled;

/* The value of the first "# KEY: " comment line at or after from, copied
 * into out (up to the line's end); the position after it, or NULL. */
static const char *header(const char *from, const char *key, char *out, size_t n) {
  char pat[64];
  snprintf(pat, sizeof pat, "# %s: ", key);
  const char *p = strstr(from, pat);
  if (!p)
    return NULL;
  p += strlen(pat);
  size_t len = strcspn(p, "\n");
  snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
  return p + len;
}

static void check_case(const char *path, const char *text) {
  char want[128] = "", line[512];
  CHECK(header(text, "dlight", want, sizeof want) != NULL);
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read_file(a, path);
  CHECK(m != NULL && m->n_funcs == 1);
  if (!m || m->n_funcs != 1) {
    loom_arena_free(a);
    return;
  }
  loom_target t;
  loom_diag d;
  loom_diag_init(&d);
  char spec[256] = "cuda -arch=sm_90";
  header(text, "target", spec, sizeof spec);
  CHECK(loom_target_parse(spec, &t, &d) == LOOM_OK);
  const loom_func *f = m->funcs[0], *g;
  loom_sched *s = NULL;
  const char *rule = NULL;
  loom_buf explain;
  loom_buf_init(&explain);
  CHECK(loom_tune_dlight(a, f, &t, NULL, 0, &s, &g, &rule, &explain, &d) == LOOM_OK);
  loom_buf_putc(&explain, 0);
  n_cases++;
  if (strcmp(rule ? rule : "none", want)) {
    CHECK(false);
    fprintf(stderr, "%s: taken by %s, expected %s; explanation:\n%s", path,
            rule ? rule : "no rule", want, explain.data);
  }
  for (const char *p = text; (p = header(p, "explain", line, sizeof line));)
    CHECK_CONTAINS(explain.data, line);
  CHECK((s != NULL) == (rule != NULL));
  if (s) {
    n_scheduled++;
    loom_trace tr = loom_sched_trace(s);
    loom_buf py;
    loom_buf_init(&py);
    loom_trace_print_py(&tr, LOOM_DIALECT_TIR, &py);
    loom_buf_putc(&py, 0);
    for (const char *p = text; (p = header(p, "trace", line, sizeof line));)
      CHECK_CONTAINS(py.data, line);
    loom_buf_free(&py);
    if (!interp_compare_results(f, g, 2, true, true)) {
      CHECK(false);
      fprintf(stderr, "%s: %s's schedule changed the result\n", path, rule);
    }
    loom_gpu_func gf;
    loom_buf cu;
    loom_buf_init(&cu);
    bool ok = loom_lower_gpu(a, g, &t, &gf, &d) == LOOM_OK &&
              loom_codegen_cuda(&gf, &cu, &d) == LOOM_OK;
    if (!ok)
      fprintf(stderr, "%s: %s\n", path, d.msg ? d.msg : "?");
    CHECK(ok);
    loom_buf_free(&cu);
    /* The same function scheduled again: the same steps. */
    loom_sched *s2 = NULL;
    const loom_func *g2;
    CHECK(loom_tune_dlight(a, f, &t, NULL, 0, &s2, &g2, NULL, NULL, &d) == LOOM_OK);
    CHECK(s2 && loom_ir_equal_func(g, g2, NULL));
    if (s2)
      loom_sched_free(s2);
    loom_sched_free(s);
  }
  loom_buf_free(&explain);
  loom_diag_free(&d);
  loom_arena_free(a);
}

static int by_name(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/dlight/cases", root);
  DIR *dp = opendir(dir);
  CHECK(dp != NULL);
  char *names[128];
  int n = 0;
  struct dirent *e;
  while (dp && (e = readdir(dp)) && n < 128) {
    size_t len = strlen(e->d_name);
    if (len > 3 && !strcmp(e->d_name + len - 3, ".py"))
      names[n++] = strdup(e->d_name);
  }
  if (dp)
    closedir(dp);
  qsort(names, (size_t)n, sizeof *names, by_name);
  for (int i = 0; i < n; i++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    char *text;
    size_t len;
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_read_file(path, &text, &len, &d) == LOOM_OK);
    loom_diag_free(&d);
    if (text) {
      check_case(path, text);
      free(text);
    }
    free(names[i]);
  }
  CHECK(n_cases >= 9);
  printf("dlight: %d cases, %d scheduled by a rule\n", n_cases, n_scheduled);
  return test_summary("dlight");
}
