/* The builder: candidates are printed as C in files of per_file functions,
 * and the files are compiled by a pool of threads (each compile is its own
 * compiler process, so the threads only wait). */
#include "loom/codegen.h"
#include "tune/tune_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct build_file {
  int first, count;       /* candidates [first, first + count) */
  loom_buf src;
  char **symbols;         /* per candidate of the file */
  loom_runtime_lib *lib;
  double compile_ms;
  char *error;            /* the compiler's complaint, when it failed */
} build_file;

typedef struct build_ctx {
  const loom_func *const *funcs;
  loom_runtime_cc_options cc;
  build_file *files;
  int n_files;
  int next;               /* the next file a worker takes */
  pthread_mutex_t lock;
} build_ctx;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* "compile: first note" from a failed diagnostic, on the heap. */
static char *describe(const loom_diag *d, const char *what) {
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_printf(&b, "%s: %s", what, d->msg ? d->msg : "failed");
  for (int i = 0; i < d->n_notes && i < 3; i++)
    loom_buf_printf(&b, "\n  %s", d->notes[i].msg);
  return loom_buf_take(&b);
}

static void compile_file(build_ctx *c, build_file *f) {
  loom_diag d;
  loom_diag_init(&d);
  if (loom_runtime_compile(f->src.data, f->src.len, &c->cc, &f->lib, &f->compile_ms,
                           &d) != LOOM_OK)
    f->error = describe(&d, "C compiler");
  loom_diag_free(&d);
}

static void *worker(void *arg) {
  build_ctx *c = arg;
  for (;;) {
    pthread_mutex_lock(&c->lock);
    int i = c->next < c->n_files ? c->next++ : -1;
    pthread_mutex_unlock(&c->lock);
    if (i < 0)
      return NULL;
    compile_file(c, &c->files[i]);
  }
}

/* Runs compile_file on every file with up to jobs threads. */
static void compile_all(build_ctx *c, int jobs) {
  if (jobs > c->n_files)
    jobs = c->n_files;
  pthread_t *tids = calloc((size_t)(jobs > 0 ? jobs : 1), sizeof *tids);
  int started = 0;
  for (int i = 0; tids && i < jobs - 1; i++)
    if (pthread_create(&tids[i], NULL, worker, c) == 0)
      started++;
  worker(c); /* the caller works too, so no thread is ever required */
  for (int i = 0; i < started; i++)
    pthread_join(tids[i], NULL);
  free(tids);
}

/* Prints the file of candidates idx[0..count) (all known to print). */
static loom_status print_file(build_ctx *c, build_file *f, const int *idx) {
  const loom_func **fs = calloc((size_t)f->count, sizeof *fs);
  f->symbols = calloc((size_t)f->count, sizeof *f->symbols);
  if (!fs || !f->symbols) {
    free(fs);
    return LOOM_NOMEM;
  }
  loom_status st = LOOM_OK;
  for (int k = 0; k < f->count && st == LOOM_OK; k++) {
    fs[k] = c->funcs[idx[k]];
    if (!(f->symbols[k] = malloc(32)))
      st = LOOM_NOMEM;
    else
      snprintf(f->symbols[k], 32, "loom_cand%d", idx[k]);
  }
  loom_diag d;
  loom_diag_init(&d);
  loom_buf_init(&f->src);
  if (st == LOOM_OK)
    st = loom_codegen_c_funcs(fs, (const char *const *)f->symbols, f->count, &f->src, &d);
  loom_diag_free(&d);
  free(fs);
  return st;
}

static void free_file(build_file *f) {
  for (int k = 0; f->symbols && k < f->count; k++)
    free(f->symbols[k]);
  free(f->symbols);
  loom_buf_free(&f->src);
  free(f->error);
}

/* Makes files of up to per_file candidates from idx[0..n), compiles them,
 * and fills the items of the candidates whose file compiled. Returns the
 * candidates of files that failed in *failed (n_failed of them). */
static loom_status build_round(build_ctx *c, const int *idx, int n, int per_file,
                               int jobs, loom_build_set *out, int *failed,
                               int *n_failed) {
  c->n_files = (n + per_file - 1) / per_file;
  c->next = 0;
  c->files = calloc((size_t)(c->n_files ? c->n_files : 1), sizeof *c->files);
  if (!c->files)
    return LOOM_NOMEM;
  loom_status st = LOOM_OK;
  for (int i = 0; i < c->n_files && st == LOOM_OK; i++) {
    build_file *f = &c->files[i];
    f->first = i * per_file;
    f->count = n - f->first < per_file ? n - f->first : per_file;
    st = print_file(c, f, idx + f->first);
  }
  if (st == LOOM_OK)
    compile_all(c, jobs);
  *n_failed = 0;
  for (int i = 0; i < c->n_files; i++) {
    build_file *f = &c->files[i];
    for (int k = 0; st == LOOM_OK && k < f->count; k++) {
      loom_built *b = &out->items[idx[f->first + k]];
      if (!f->lib) {
        if (f->count > 1)
          failed[(*n_failed)++] = idx[f->first + k];
        else
          b->error = f->error, f->error = NULL;
        continue;
      }
      b->kernel = loom_runtime_lib_symbol(f->lib, f->symbols[k]);
      b->compile_ms = f->compile_ms / f->count;
      if (!b->kernel)
        b->error = strdup("the compiled file lacks the candidate's symbol");
    }
    if (f->lib) {
      loom_runtime_lib **libs = realloc(out->libs, (size_t)(out->n_libs + 1) * sizeof *libs);
      if (!libs) {
        loom_runtime_lib_free(f->lib);
        st = LOOM_NOMEM;
      } else {
        out->libs = libs;
        out->libs[out->n_libs++] = f->lib;
      }
    }
    free_file(f);
  }
  free(c->files);
  c->files = NULL;
  return st;
}

static int online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

loom_status tune_c_build(const loom_func *const *funcs, int n,
                         const loom_builder_options *o, loom_build_set *out) {
  double t0 = now_ms();
  memset(out, 0, sizeof *out);
  loom_builder_options dflt = {0};
  if (!o)
    o = &dflt;
  int per_file = o->per_file > 0 ? o->per_file : 32;
  int jobs = o->jobs > 0 ? o->jobs : online_cpus();
  const char *env = getenv("LOOM_CFLAGS");
  char flags[1024], target_flags[256];
  if (!o->cflags && !env) {
    loom_target detected;
    if (!o->target)
      loom_target_detect(&detected);
    loom_target_cflags(o->target ? o->target : &detected, target_flags,
                       sizeof target_flags);
  }
  snprintf(flags, sizeof flags, "%s %s",
           o->cflags ? o->cflags : env ? env : target_flags, LOOM_CODEGEN_CFLAGS);
  /* A compile beside a measurement runs niced, so that the kernel being
   * timed keeps its cores and the compiler takes what is left. */
  const char *cc_env = getenv("CC");
  char cc[512];
  snprintf(cc, sizeof cc, "nice -n %d %s", o->nice, cc_env && *cc_env ? cc_env : "cc");
  build_ctx c = {.funcs = funcs,
                 .cc = {.cc = o->nice > 0 ? cc : NULL, .flags = flags, .openmp = true,
                        .timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 60000}};
  out->items = calloc((size_t)(n ? n : 1), sizeof *out->items);
  out->n = out->items ? n : 0;
  int *good = calloc((size_t)(n ? n : 1), sizeof *good);
  int *failed = calloc((size_t)(n ? n : 1), sizeof *failed);
  if (!out->items || !good || !failed || pthread_mutex_init(&c.lock, NULL)) {
    free(good);
    free(failed);
    tune_c_build_free(out);
    return LOOM_NOMEM;
  }
  /* What the C backend refuses fails here, alone, before any file is made. */
  int n_good = 0, n_failed = 0;
  loom_status st = LOOM_OK;
  for (int i = 0; i < n && st == LOOM_OK; i++) {
    loom_buf scratch;
    loom_diag cd;
    loom_buf_init(&scratch);
    loom_diag_init(&cd);
    const char *sym = "loom_check";
    st = loom_codegen_c_funcs(&funcs[i], &sym, 1, &scratch, &cd);
    if (st == LOOM_OK)
      good[n_good++] = i;
    else if (st == LOOM_ERROR && !(out->items[i].error = describe(&cd, "C backend")))
      st = LOOM_NOMEM;
    else if (st == LOOM_ERROR)
      st = LOOM_OK;
    loom_buf_free(&scratch);
    loom_diag_free(&cd);
  }
  if (st == LOOM_OK)
    st = build_round(&c, good, n_good, per_file, jobs, out, failed, &n_failed);
  /* A file that failed is built again one candidate per file. */
  if (st == LOOM_OK && n_failed > 0) {
    int n_again = 0;
    st = build_round(&c, failed, n_failed, 1, jobs, out, good, &n_again);
  }
  pthread_mutex_destroy(&c.lock);
  free(good);
  free(failed);
  out->wall_ms = now_ms() - t0;
  if (st != LOOM_OK)
    tune_c_build_free(out);
  return st;
}

void tune_c_build_free(loom_build_set *b) {
  for (int i = 0; b->items && i < b->n; i++)
    free(b->items[i].error);
  free(b->items);
  for (int i = 0; i < b->n_libs; i++)
    loom_runtime_lib_free(b->libs[i]);
  free(b->libs);
  memset(b, 0, sizeof *b);
}
