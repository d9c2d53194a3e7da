/* `loom run FILE [--func NAME] [--target cpu] [--seed N] [--repeat N]
 * [--verify] [--arg NAME=VALUE]... [--threads N] [--timeout MS]`: builds
 * FILE with the C backend, runs each function on seeded random inputs in a
 * child process (a crash or a hang is reported, not suffered), times it and,
 * with --verify, compares every buffer with the reference interpreter.
 *
 * The inputs are those `loom interp --seed N` uses: one generator seeded
 * with N fills the buffer parameters in order. */
#include "cli/cli.h"

#include "loom/codegen.h"
#include "loom/interp.h"
#include "loom/runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64

typedef struct run_opts {
  const char *file, *func;
  uint64_t seed;
  int repeat, threads;
  double timeout_ms;
  bool is_verify;
  const char *arg_names[MAX_ARGS];
  int64_t arg_values[MAX_ARGS];
  int n_args;
  const char *range_names[MAX_ARGS]; /* --range NAME=LO:HI */
  int64_t range_lo[MAX_ARGS], range_hi[MAX_ARGS];
  int n_ranges;
} run_opts;

static bool parse_int(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

static int parse_opts(int argc, char **argv, run_opts *o) {
  memset(o, 0, sizeof *o);
  o->repeat = 5;
  o->timeout_ms = 120000;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    long long v;
    if (!strcmp(a, "--verify")) {
      o->is_verify = true;
      continue;
    }
    static const char *const with_value[] = {"--func", "--target", "--seed", "--repeat",
                                             "--threads", "--timeout", "--arg", "--range"};
    for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
      if (!strcmp(a, with_value[k]) && i + 1 >= argc)
        return cli_usage_error("run", "%s needs a value", a);
    if (!strcmp(a, "--func")) {
      o->func = argv[++i];
    } else if (!strcmp(a, "--target")) {
      if (strcmp(argv[++i], "cpu"))
        return cli_usage_error("run", "unknown target '%s' (cpu is known)", argv[i]);
    } else if (!strcmp(a, "--seed")) {
      if (!parse_int(argv[++i], 0, INT64_MAX, &v))
        return cli_usage_error("run", "bad seed '%s' (a non-negative integer)", argv[i]);
      o->seed = (uint64_t)v;
    } else if (!strcmp(a, "--repeat") || !strcmp(a, "--threads")) {
      if (!parse_int(argv[++i], 1, 1 << 20, &v))
        return cli_usage_error("run", "bad %s '%s' (a positive integer)", a, argv[i]);
      *(a[2] == 'r' ? &o->repeat : &o->threads) = (int)v;
    } else if (!strcmp(a, "--timeout")) {
      if (!parse_int(argv[++i], 1, 1LL << 40, &v))
        return cli_usage_error("run", "bad timeout '%s' (milliseconds)", argv[i]);
      o->timeout_ms = (double)v;
    } else if (!strcmp(a, "--arg")) {
      char *eq = strchr(argv[++i], '=');
      if (!eq || eq == argv[i] || !parse_int(eq + 1, INT64_MIN, INT64_MAX, &v))
        return cli_usage_error("run", "bad --arg '%s' (NAME=INTEGER)", argv[i]);
      /* Float parameters take integer values too, as the interpreter's
       * scalar arguments are integers. */
      if (o->n_args == MAX_ARGS)
        return cli_usage_error("run", "more than %d --arg options", MAX_ARGS);
      *eq = 0;
      o->arg_names[o->n_args] = argv[i];
      o->arg_values[o->n_args++] = v;
    } else if (!strcmp(a, "--range")) {
      char *eq = strchr(argv[++i], '='), *colon = eq ? strchr(eq, ':') : NULL;
      long long lo, hi;
      if (colon)
        *colon = 0;
      if (!colon || eq == argv[i] || !parse_int(eq + 1, INT64_MIN, INT64_MAX, &lo) ||
          !parse_int(colon + 1, INT64_MIN, INT64_MAX, &hi) || lo >= hi)
        return cli_usage_error("run", "bad --range '%s' (NAME=LO:HI with LO < HI)", argv[i]);
      if (o->n_ranges == MAX_ARGS)
        return cli_usage_error("run", "more than %d --range options", MAX_ARGS);
      *eq = 0;
      o->range_names[o->n_ranges] = argv[i];
      o->range_lo[o->n_ranges] = lo;
      o->range_hi[o->n_ranges++] = hi;
    } else if (a[0] == '-' && a[1]) {
      return cli_usage_error("run", "unknown option '%s'", a);
    } else if (o->file) {
      return cli_usage_error("run", "one FILE expected, got '%s' too", a);
    } else {
      o->file = a;
    }
  }
  if (!o->file)
    return cli_usage_error("run", "missing FILE");
  return 0;
}

typedef int32_t (*kernel_fn)(void *const *args, const int64_t *const *shapes);

/* What the child reports back, in shared memory. */
typedef struct run_result {
  int32_t kernel_rc; /* of the first call, on the arrays the parent checks */
  bool is_timed;
  loom_runtime_timing timing;
  char message[512];
} run_result;

typedef struct run_job {
  const loom_func *f;
  kernel_fn kernel;
  void (*set_threads)(int);
  int threads, repeat;
  loom_runtime_array **arrays; /* per parameter; NULL for scalars */
  int64_t *scalars;            /* per parameter, as --arg gave them */
  double *fscalars;            /* the same, for float parameters */
  void **args;
  const int64_t **shapes;
  void **timed_args;
  run_result *result;
} run_job;

static int timed_call(void *ctx) {
  run_job *j = ctx;
  return j->kernel(j->timed_args, j->shapes) ? 1 : 0;
}

/* In the child: one call on the arrays the parent will check, then the
 * timing runs on copies of the inputs (so a kernel that updates in place
 * is checked after exactly one call). */
static int child_main(void *ctx) {
  run_job *j = ctx;
  const loom_func *f = j->f;
  if (j->set_threads)
    j->set_threads(j->threads);
  for (int i = 0; i < f->n_params; i++) {
    j->timed_args[i] = j->args[i];
    if (!j->arrays[i])
      continue;
    void *copy = malloc(j->arrays[i]->n_bytes ? j->arrays[i]->n_bytes : 1);
    if (!copy)
      return 3;
    memcpy(copy, j->arrays[i]->data, j->arrays[i]->n_bytes);
    j->timed_args[i] = copy;
  }
  j->result->kernel_rc = j->kernel(j->args, j->shapes);
  if (j->result->kernel_rc)
    return 0;
  loom_runtime_timer_config cfg = loom_runtime_timer_default();
  cfg.repeat = j->repeat;
  cfg.warmup = 0; /* the checked call above warmed up */
  loom_diag d;
  loom_diag_init(&d);
  if (loom_runtime_time(timed_call, j, &cfg, &j->result->timing, &d) == LOOM_OK)
    j->result->is_timed = true;
  else
    snprintf(j->result->message, sizeof j->result->message, "%s",
             d.msg ? d.msg : "timing failed");
  return 0;
}

static double rtol_of(loom_dtype t) {
  if (t.code == LOOM_DT_BFLOAT)
    return 2e-2;
  return t.bits == 16 ? 1e-2 : t.bits == 64 ? 1e-9 : 1e-4;
}

/* Scalar parameter values from --arg, in parameter order. */
static bool scalar_values(const loom_func *f, const run_opts *o, int64_t *vals,
                          loom_diag *d) {
  for (int i = 0; i < f->n_params; i++) {
    vals[i] = 0;
    if (f->params[i].buffer)
      continue;
    const char *name = f->params[i].var->name;
    int k = 0;
    while (k < o->n_args && strcmp(o->arg_names[k], name))
      k++;
    if (k == o->n_args) {
      loom_diag_error(d, f->loc, "%s: scalar parameter '%s' needs a value: "
                      "pass --arg %s=VALUE", f->name, name, name);
      return false;
    }
    vals[i] = o->arg_values[k];
  }
  return true;
}

/* Compares every buffer parameter with the interpreter's result; prints the
 * first mismatch. */
static bool verify(const cli_program *p, const run_job *j,
                   loom_interp_array **expect, const run_opts *o) {
  const loom_func *f = j->f;
  loom_diag d;
  loom_diag_init(&d);
  loom_diag_set_source(&d, p->text, p->len);
  if (loom_interp_run(f, expect, j->scalars, &d) != LOOM_OK) {
    if (d.has_error) {
      fprintf(stderr, "%s: the interpreter refused to run %s:\n", o->file, f->name);
      cli_print_diag(&d);
    } else {
      fprintf(stderr, "%s: error: out of memory\n", o->file);
    }
    loom_diag_free(&d);
    return false;
  }
  loom_diag_free(&d);
  for (int i = 0; i < f->n_params; i++) {
    if (!j->arrays[i])
      continue;
    loom_interp_array got = loom_runtime_array_view(j->arrays[i]);
    double tol = rtol_of(got.dtype);
    char *why = NULL;
    if (!loom_interp_compare(&got, expect[i], tol, tol, &why)) {
      fprintf(stderr, "%s: error: %s: %s differs from the interpreter %s "
              "(compiled vs interpreted; tolerance %g relative and absolute)\n",
              o->file, f->name, f->params[i].buffer->name, why ? why : "", tol);
      free(why);
      return false;
    }
  }
  return true;
}

/* --range NAME=LO:HI: integers uniform in [LO, HI) for buffer NAME (index
 * buffers, whose values must be valid indices), from a generator of their
 * own so the other buffers keep the inputs `loom interp` gives them. */
static void restrict_range(loom_interp_array *a, const char *name,
                           const run_opts *o, int param) {
  for (int k = 0; k < o->n_ranges; k++) {
    if (strcmp(o->range_names[k], name))
      continue;
    loom_rng r;
    loom_rng_seed(&r, o->seed * 1000003u + (uint64_t)param);
    uint64_t span = (uint64_t)o->range_hi[k] - (uint64_t)o->range_lo[k];
    for (int64_t i = 0; i < a->n_elems; i++)
      loom_interp_array_set(a, i, (double)(o->range_lo[k] +
                                           (int64_t)loom_rng_below(&r, span)));
  }
}

static void free_arrays(const loom_func *f, loom_runtime_array **arrays) {
  for (int i = 0; arrays && i < f->n_params; i++)
    loom_runtime_array_free(arrays[i]);
}

/* Runs one function of the built library; returns the exit code. */
static int run_func(const cli_program *p, loom_runtime_lib *lib,
                    const loom_func *f, const run_opts *o) {
  int n = f->n_params ? f->n_params : 1, rc = EXIT_USER;
  loom_diag d;
  loom_diag_init(&d);
  loom_diag_set_source(&d, p->text, p->len);
  char sym[512];
  run_job j = {.f = f, .threads = o->threads, .repeat = o->repeat};
  loom_interp_array **inputs = calloc((size_t)n, sizeof *inputs);
  j.arrays = calloc((size_t)n, sizeof *j.arrays);
  j.scalars = calloc((size_t)n, sizeof *j.scalars);
  j.fscalars = calloc((size_t)n, sizeof *j.fscalars);
  j.args = calloc((size_t)n, sizeof *j.args);
  j.shapes = calloc((size_t)n, sizeof *j.shapes);
  j.timed_args = calloc((size_t)n, sizeof *j.timed_args);
  j.result = loom_runtime_shared_alloc(sizeof *j.result);
  bool is_ok = inputs && j.arrays && j.scalars && j.fscalars && j.args && j.shapes &&
               j.timed_args && j.result;
  if (!is_ok)
    fprintf(stderr, "%s: error: out of memory\n", o->file);
  if (is_ok && !loom_codegen_c_symbol(f->name, sym, sizeof sym)) {
    fprintf(stderr, "%s: error: function name '%s' is too long\n", o->file, f->name);
    is_ok = false;
  }
  if (is_ok) {
    j.kernel = (kernel_fn)loom_runtime_lib_symbol(lib, sym);
    j.set_threads = (void (*)(int))loom_runtime_lib_symbol(lib, "loom_set_num_threads");
    is_ok = scalar_values(f, o, j.scalars, &d) &&
            loom_interp_alloc_args(f, j.scalars, inputs, &d) == LOOM_OK;
    if (!is_ok && !d.has_error)
      fprintf(stderr, "%s: error: out of memory\n", o->file);
  }
  if (is_ok) {
    loom_rng r;
    loom_rng_seed(&r, o->seed);
    for (int i = 0; i < f->n_params && is_ok; i++) {
      j.fscalars[i] = (double)j.scalars[i];
      j.args[i] = loom_dtype_is_float(f->params[i].var->dtype) ? (void *)&j.fscalars[i]
                                                               : (void *)&j.scalars[i];
      if (!inputs[i])
        continue;
      loom_interp_fill_random(inputs[i], &r);
      restrict_range(inputs[i], f->params[i].buffer->name, o, i);
      j.arrays[i] = loom_runtime_array_new(inputs[i]->dtype, inputs[i]->shape,
                                           inputs[i]->ndim, LOOM_RUNTIME_SHARED);
      if (!(is_ok = j.arrays[i] != NULL)) {
        fprintf(stderr, "%s: error: %s: cannot allocate '%s'\n", o->file, f->name,
                f->params[i].buffer->name);
        break;
      }
      memcpy(j.arrays[i]->data, inputs[i]->data, j.arrays[i]->n_bytes);
      j.args[i] = j.arrays[i]->data;
      j.shapes[i] = j.arrays[i]->shape;
    }
  }
  loom_runtime_child_result child;
  if (is_ok && loom_runtime_run_child(child_main, &j, o->timeout_ms, &child, &d) != LOOM_OK)
    is_ok = false;
  if (is_ok && child.kind != LOOM_RUNTIME_CHILD_OK) {
    char why[128];
    fprintf(stderr, "%s: error: %s: the compiled kernel failed: %s\n", o->file, f->name,
            loom_runtime_child_describe(&child, why, sizeof why));
    is_ok = false;
  } else if (is_ok && j.result->kernel_rc) {
    fprintf(stderr, "%s: error: %s: the compiled kernel returned %d (%s)\n", o->file,
            f->name, j.result->kernel_rc,
            j.result->kernel_rc == -1 ? "a T.assert failed"
            : j.result->kernel_rc == -2 ? "arrays disagree on a symbolic dimension"
            : "out of memory");
    is_ok = false;
  } else if (is_ok && !j.result->is_timed) {
    fprintf(stderr, "%s: error: %s: %s\n", o->file, f->name, j.result->message);
    is_ok = false;
  }
  if (is_ok && (!o->is_verify || verify(p, &j, inputs, o))) {
    printf("%s: %.6f ms (n=%d)%s\n", f->name, j.result->timing.median_ms,
           j.result->timing.repeat, o->is_verify ? "  verify: ok" : "");
    rc = 0;
  }
  if (d.has_error)
    cli_print_diag(&d);
  if (inputs)
    loom_interp_free_args(f, inputs);
  free_arrays(f, j.arrays);
  free(inputs);
  free(j.arrays);
  free(j.scalars);
  free(j.fscalars);
  free(j.args);
  free(j.shapes);
  free(j.timed_args);
  if (j.result)
    loom_runtime_shared_free(j.result, sizeof *j.result);
  loom_diag_free(&d);
  return rc;
}

static loom_runtime_lib *build(const cli_program *p, const run_opts *o) {
  loom_diag d;
  loom_diag_init(&d);
  loom_diag_set_source(&d, p->text, p->len);
  loom_buf src;
  loom_buf_init(&src);
  loom_runtime_lib *lib = NULL;
  loom_status st = loom_codegen_c_module(p->module, &src, &d);
  if (st == LOOM_OK) {
    const char *env = getenv("LOOM_CFLAGS");
    char flags[1024];
    snprintf(flags, sizeof flags, "%s %s", env ? env : "-O3 -march=native",
             LOOM_CODEGEN_CFLAGS);
    loom_runtime_cc_options cc = {.flags = flags, .openmp = true};
    st = loom_runtime_compile(src.data, src.len, &cc, &lib, NULL, &d);
  }
  if (st == LOOM_NOMEM)
    fprintf(stderr, "%s: error: out of memory\n", o->file);
  else if (st != LOOM_OK)
    cli_print_diag(&d);
  loom_buf_free(&src);
  loom_diag_free(&d);
  return lib;
}

int cli_run(int argc, char **argv) {
  run_opts o;
  int rc = parse_opts(argc, argv, &o);
  if (rc)
    return rc;
  cli_program p;
  if ((rc = cli_load(o.file, &p)))
    return rc;
  const loom_module *m = p.module;
  if (o.func && !loom_ir_module_find(m, o.func)) {
    fprintf(stderr, "%s: error: no function named '%s'\n", o.file, o.func);
    cli_program_free(&p);
    return EXIT_USER;
  }
  loom_runtime_lib *lib = build(&p, &o);
  if (!lib)
    rc = EXIT_USER;
  for (int i = 0; i < m->n_funcs && rc == 0; i++)
    if (!o.func || !strcmp(m->funcs[i]->name, o.func)) {
      rc = run_func(&p, lib, m->funcs[i], &o);
      fflush(stdout);
    }
  loom_runtime_lib_free(lib);
  cli_program_free(&p);
  return rc;
}
