/* GPU kernels without a GPU. Every program of tests/gpu/programs and
 * bench/gpu and tests/dlight/cases, and where ../shared is there every
 * corpus program and every conformance case's program, gets dlight's
 * schedule (the nests that bind threads already stay as they are), which must
 * compute what the program computes (in the interpreter, where thread
 * loops are loops, for programs small enough to interpret; floats within
 * the tuner's tolerance, as a reduction across threads adds in another
 * order), then
 * lowers for the GPU, prints as CUDA C and compiles with NVRTC for sm_80
 * and sm_90 (schedule scripts, *.sched.py and *.space.py, are not
 * programs). A program the C emitter cannot print on the CPU either (an
 * extern call, a tensor-core intrinsic) is counted as refused and named;
 * any other failure fails the test. The register and spill figures ptxas
 * reports are printed. Without NVRTC the test is skipped, loudly; under CI
 * (CI=true) that is a failure. */
#include "interp_compare.h"
#include "program.h"
#include "loom/codegen.h"
#include "loom/script.h"
#include "loom/target.h"
#include "loom/tune.h"
#include "test.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SOURCES 1024

typedef struct source {
  char *name; /* heap */
  char *text; /* heap: CUDA C */
  int sm;
  bool ok;
  int registers;
  int64_t spills;
  char *error; /* heap */
} source;

static source sources[MAX_SOURCES];
static int n_sources, n_refused, n_checked;
static loom_runtime_nvrtc *nv;

/* Programs whose every buffer is this small are interpreted. */
#define INTERP_ELEMS (1 << 18)
#define INTERP_FLOPS (1 << 22)

static bool is_small(const loom_func *f) {
  int64_t n = 0;
  for (int i = 0; i < f->n_params; i++) {
    const loom_buffer *b = f->params[i].buffer;
    int64_t e = 1, x;
    for (int k = 0; b && k < b->ndim; k++)
      e *= loom_ir_is_const_int(b->shape[k], &x) ? x : INTERP_ELEMS;
    n += b ? e : 0;
  }
  return n <= INTERP_ELEMS && loom_tune_flops(f) <= INTERP_FLOPS;
}

static bool is_refusal(const char *msg) {
  return msg && (strstr(msg, "does not support") || strstr(msg, "cannot call extern") ||
                 strstr(msg, "not supported by the interpreter") ||
                 strstr(msg, "has a size known only at run time"));
}

static void add_source(const char *name, const char *text, int sm) {
  CHECK(n_sources < MAX_SOURCES); /* raise MAX_SOURCES: none is dropped unseen */
  if (n_sources == MAX_SOURCES)
    return;
  source *s = &sources[n_sources++];
  s->name = strdup(name);
  s->text = strdup(text);
  s->sm = sm;
}

/* The CUDA C of g, its kernels lowered for t, into out. */
static bool emit_cuda(loom_arena *a, const loom_func *g, const loom_target *t, loom_buf *out,
                      loom_diag *d) {
  loom_gpu_func gf;
  return loom_lower_gpu(a, g, t, &gf, d) == LOOM_OK && loom_codegen_cuda(&gf, out, d) == LOOM_OK;
}

/* out's text, to compile for sm_80 and for sm_90. */
static void add_sources(const char *name, loom_buf *out) {
  loom_buf_putc(out, 0);
  add_source(name, out->data, 80);
  add_source(name, out->data, 90);
}

/* How many functions each dlight rule took; the last entry, no rule. */
static const char *rule_names[8];
static int n_by_rule[8], n_rule_names;

static void count_rule(const char *rule) {
  int i = 0;
  while (i < n_rule_names && rule && strcmp(rule_names[i], rule))
    i++;
  if (rule && i == n_rule_names && n_rule_names < 7)
    rule_names[n_rule_names++] = rule;
  n_by_rule[rule ? i : 7]++;
}

/* Schedules, checks, lowers and prints each function of the file. */
static void take_file(const char *path, const char *label) {
  loom_diag d;
  loom_diag_init(&d);
  loom_arena *a = loom_arena_new();
  loom_module *m = program_read_file(a, path);
  CHECK(m != NULL);
  loom_target t;
  CHECK(loom_target_parse("cuda -arch=sm_90", &t, &d) == LOOM_OK);
  for (int i = 0; m && i < m->n_funcs; i++) {
    const loom_func *f = m->funcs[i], *g;
    loom_sched *s = NULL;
    loom_buf out;
    loom_buf_init(&out);
    loom_diag_free(&d);
    loom_diag_init(&d);
    const char *rule = NULL;
    bool ok = loom_tune_dlight(a, f, &t, NULL, 0, &s, &g, &rule, NULL, &d) == LOOM_OK;
    count_rule(rule);
    if (ok && s && is_small(f)) {
      /* The default schedule means what the program means; a program the
       * interpreter refuses (an index out of bounds on random data) is
       * refused by both. */
      loom_interp_array *x[16] = {0};
      bool runs = f->n_params <= 16 && interp_run_random(f, 1, x);
      loom_interp_free_args(f, x);
      if (runs) {
        bool same = interp_compare_results(f, g, 1, true, true);
        if (!same)
          fprintf(stderr, "%s: dlight's schedule changed the result\n", label);
        CHECK(same);
        n_checked++;
      }
    }
    ok = ok && emit_cuda(a, g, &t, &out, &d);
    if (!ok && is_refusal(d.msg)) {
      printf("refused %s: %s\n", label, d.msg);
      n_refused++;
    } else if (!ok) {
      fprintf(stderr, "%s: %s (line %d)\n", label, d.msg ? d.msg : "?", d.loc.line);
      CHECK(false);
    } else {
      char name[1024];
      snprintf(name, sizeof name, "%s:%s", label, f->name);
      add_sources(name, &out);
    }
    loom_buf_free(&out);
    if (s)
      loom_sched_free(s);
  }
  loom_diag_free(&d);
  loom_arena_free(a);
}

/* bench/gpu's hand schedules of tensor-core kernels: each applied to its
 * program at a size the interpreter checks against the program (every
 * occurrence of `size` in the text becomes `small`) and at full size, both
 * lowered and compiled. */
static const struct hand {
  const char *program, *script, *size, *small;
} hands[] = {
    {"matmul_f16.py", "matmul_wmma.sched.py", "4096", "256"},
    {"matmul_nt_f16.py", "matmul_wmma_nt.sched.py", "4096", "256"},
};

static void take_hand(const char *root, const struct hand *h) {
  char path[2048], label[600];
  char *text, *script;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  snprintf(path, sizeof path, "%s/bench/gpu/%s", root, h->program);
  CHECK(loom_read_file(path, &text, &len, &d) == LOOM_OK);
  snprintf(path, sizeof path, "%s/bench/gpu/%s", root, h->script);
  CHECK(loom_read_file(path, &script, &len, &d) == LOOM_OK);
  loom_target t;
  CHECK(loom_target_parse("cuda -arch=sm_90", &t, &d) == LOOM_OK);
  for (int small = 1; small >= 0 && text && script; small--) {
    loom_arena *a = loom_arena_new();
    char *prog = small ? program_replace(text, h->size, h->small) : strdup(text);
    loom_module *m = program_read(a, prog);
    loom_sched *s = m ? program_schedule(m, 1, script, h->script) : NULL;
    CHECK(s != NULL);
    snprintf(label, sizeof label, "bench/%s by %s%s", h->program, h->script,
             small ? " (small)" : "");
    const loom_func *g = s ? loom_sched_module(s)->funcs[0] : NULL;
    if (g && small) {
      bool same = interp_compare_results(m->funcs[0], g, 1, true, true);
      if (!same)
        fprintf(stderr, "%s: the schedule changed the result\n", label);
      CHECK(same);
      n_checked++;
    }
    loom_buf out;
    loom_buf_init(&out);
    if (g && !emit_cuda(a, g, &t, &out, &d)) {
      fprintf(stderr, "%s: %s (line %d)\n", label, d.msg ? d.msg : "?", d.loc.line);
      CHECK(false);
    } else if (g) {
      add_sources(label, &out);
    }
    loom_buf_free(&out);
    if (s)
      loom_sched_free(s);
    free(prog);
    loom_arena_free(a);
  }
  free(text);
  free(script);
  loom_diag_free(&d);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .py file of dir (conformance: every DIR/CASE/before.py), in name
 * order; false when dir is absent. */
static bool take_dir(const char *dir, const char *prefix, bool cases) {
  DIR *dp = opendir(dir);
  if (!dp)
    return false;
  char *names[512];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dp)) && n < 512) {
    size_t k = strlen(e->d_name);
    bool is_py = k > 3 && !strcmp(e->d_name + k - 3, ".py") && !strstr(e->d_name, ".sched.") &&
                 !strstr(e->d_name, ".space.");
    if (e->d_name[0] != '.' && (cases || is_py))
      names[n++] = strdup(e->d_name);
  }
  closedir(dp);
  qsort(names, (size_t)n, sizeof *names, by_name);
  for (int i = 0; i < n; i++) {
    char path[2048], label[600];
    snprintf(path, sizeof path, "%s/%s%s", dir, names[i], cases ? "/before.py" : "");
    snprintf(label, sizeof label, "%s%s", prefix, names[i]);
    if (!cases || access(path, R_OK) == 0)
      take_file(path, label);
    free(names[i]);
  }
  return true;
}

/* ---- compiling, in parallel ----------------------------------------------- */

static int next_source;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *compile_worker(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&lock);
    int i = next_source++;
    pthread_mutex_unlock(&lock);
    if (i >= n_sources)
      return NULL;
    source *s = &sources[i];
    loom_runtime_cubin c;
    loom_diag d;
    loom_diag_init(&d);
    s->ok = loom_runtime_nvrtc_compile(nv, s->text, s->name, s->sm, &c, &d) == LOOM_OK;
    if (s->ok) {
      s->registers = c.max_registers;
      s->spills = c.spill_bytes;
    } else {
      loom_buf msg;
      loom_buf_init(&msg);
      loom_diag_render(&d, &msg);
      loom_buf_putc(&msg, 0);
      s->error = strdup(msg.data ? msg.data : "?");
      loom_buf_free(&msg);
    }
    loom_runtime_cubin_free(&c);
    loom_diag_free(&d);
  }
}

static void compile_all(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = cpus > 1 ? (int)(cpus < 8 ? cpus : 8) : 1;
  pthread_t tids[8];
  for (int i = 0; i < jobs; i++)
    pthread_create(&tids[i], NULL, compile_worker, NULL);
  for (int i = 0; i < jobs; i++)
    pthread_join(tids[i], NULL);
  int most = 0, spilling = 0, failed = 0;
  for (int i = 0; i < n_sources; i++) {
    source *s = &sources[i];
    if (!s->ok) {
      fprintf(stderr, "%s (sm_%d): %s\n", s->name, s->sm, s->error);
      failed++;
    } else if (s->spills) {
      printf("spills %s (sm_%d): %lld bytes, %d registers\n", s->name, s->sm,
             (long long)s->spills, s->registers);
      spilling++;
    }
    if (s->ok && s->registers > most)
      most = s->registers;
  }
  CHECK(failed == 0);
  printf("NVRTC: %d kernels files compiled for sm_80 and sm_90, %d failed; "
         "at most %d registers per thread, %d with spills\n",
         n_sources, failed, most, spilling);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  loom_diag d;
  loom_diag_init(&d);
  if (loom_runtime_nvrtc_open(&nv, &d) != LOOM_OK) {
    const char *ci = getenv("CI");
    fprintf(stderr, "NVRTC IS MISSING, NO KERNEL WAS COMPILED: %s\n", d.msg ? d.msg : "?");
    loom_diag_free(&d);
    return ci && !strcmp(ci, "true") ? 1 : 77;
  }
  char dir[2048];
  snprintf(dir, sizeof dir, "%s/tests/gpu/programs", root);
  CHECK(take_dir(dir, "gpu/", false));
  snprintf(dir, sizeof dir, "%s/bench/gpu", root);
  CHECK(take_dir(dir, "bench/", false));
  snprintf(dir, sizeof dir, "%s/tests/dlight/cases", root);
  CHECK(take_dir(dir, "dlight/", false));
  for (size_t i = 0; i < sizeof hands / sizeof *hands; i++)
    take_hand(root, &hands[i]);
  snprintf(dir, sizeof dir, "%s/../shared/corpus", root);
  bool has_shared = take_dir(dir, "corpus/", false);
  snprintf(dir, sizeof dir, "%s/../shared/conformance", root);
  has_shared = take_dir(dir, "conformance/", true) && has_shared;
  if (!has_shared)
    printf("../shared is absent: its programs were not compiled\n");
  printf("%d dlight schedules checked in the interpreter, %d programs refused "
         "by the C emitter\n", n_checked, n_refused);
  printf("dlight:");
  for (int i = 0; i < n_rule_names; i++)
    printf(" %s %d,", rule_names[i], n_by_rule[i]);
  printf(" no rule %d\n", n_by_rule[7]);
  compile_all();
  for (int i = 0; i < n_sources; i++) {
    free(sources[i].name);
    free(sources[i].text);
    free(sources[i].error);
  }
  loom_runtime_nvrtc_close(nv);
  return test_summary("gpu kernels");
}
