/* `loom run FILE [--func NAME] [--target SPEC] [--seed N] [--repeat N]
 * [--verify] [--against FILE] [--arg NAME=VALUE]... [--threads N]
 * [--timeout MS] [--pipeline P1,P2,... [--db PATH] [--explain]]`: builds
 * FILE (after the module passes of --pipeline, as `loom compile` runs
 * them) with the backend of the target (C for the
 * CPU, CUDA for --target cuda), runs each function on seeded random inputs
 * in a child process (a crash or a hang is reported,
 * not suffered), times it and, with --verify, compares every buffer with the
 * reference interpreter: on FILE's function, or with --against on the
 * function of the same name in another file (the program before it was
 * scheduled), so that a schedule that changed the meaning is caught.
 *
 * The inputs are those `loom interp --seed N` uses: one generator seeded
 * with N fills the buffer parameters in order. */
#include "cli/cli.h"

#include "loom/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64

typedef struct run_opts {
  const char *file, *func, *target, *against, *pipeline, *db;
  bool is_explain;
  loom_target tg;
  const loom_module *reference; /* --against's program, else NULL */
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

static int parse_opts(int argc, char **argv, run_opts *o) {
  memset(o, 0, sizeof *o);
  o->repeat = 5;
  o->timeout_ms = 600000;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    long long v;
    if (!strcmp(a, "--verify") || !strcmp(a, "--explain")) {
      *(a[2] == 'v' ? &o->is_verify : &o->is_explain) = true;
      continue;
    }
    static const char *const with_value[] = {"--func",    "--target",  "--seed",
                                             "--repeat",  "--threads", "--timeout",
                                             "--arg",     "--range",   "--against",
                                             "--pipeline", "--db"};
    for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
      if (!strcmp(a, with_value[k]) && i + 1 >= argc)
        return cli_usage_error("run", "%s needs a value", a);
    if (!strcmp(a, "--func")) {
      o->func = argv[++i];
    } else if (!strcmp(a, "--target")) {
      o->target = argv[++i];
    } else if (!strcmp(a, "--against")) {
      o->against = argv[++i];
    } else if (!strcmp(a, "--pipeline") || !strcmp(a, "--db")) {
      *(a[2] == 'p' ? &o->pipeline : &o->db) = argv[++i];
    } else if (!strcmp(a, "--seed")) {
      if (!cli_parse_int(argv[++i], 0, INT64_MAX, &v))
        return cli_usage_error("run", "bad seed '%s' (a non-negative integer)", argv[i]);
      o->seed = (uint64_t)v;
    } else if (!strcmp(a, "--repeat") || !strcmp(a, "--threads")) {
      if (!cli_parse_int(argv[++i], 1, 1 << 20, &v))
        return cli_usage_error("run", "bad %s '%s' (a positive integer)", a, argv[i]);
      *(a[2] == 'r' ? &o->repeat : &o->threads) = (int)v;
    } else if (!strcmp(a, "--timeout")) {
      if (!cli_parse_int(argv[++i], 1, 1LL << 40, &v))
        return cli_usage_error("run", "bad timeout '%s' (milliseconds)", argv[i]);
      o->timeout_ms = (double)v;
    } else if (!strcmp(a, "--arg")) {
      char *eq = strchr(argv[++i], '=');
      if (!eq || eq == argv[i] || !cli_parse_int(eq + 1, INT64_MIN, INT64_MAX, &v))
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
      if (!colon || eq == argv[i] || !cli_parse_int(eq + 1, INT64_MIN, INT64_MAX, &lo) ||
          !cli_parse_int(colon + 1, INT64_MIN, INT64_MAX, &hi) || lo >= hi)
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

/* --range NAME=LO:HI: integers uniform in [LO, HI) for buffer NAME (index
 * buffers, whose values must be valid indices), from a generator of their
 * own so the other buffers keep the inputs `loom interp` gives them. */
static void apply_ranges(void *ctx, const loom_func *f, loom_interp_array **inputs) {
  const run_opts *o = ctx;
  for (int i = 0; i < f->n_params; i++)
    for (int k = 0; inputs[i] && k < o->n_ranges; k++) {
      if (strcmp(o->range_names[k], f->params[i].buffer->name))
        continue;
      loom_rng r;
      loom_rng_seed(&r, o->seed * 1000003u + (uint64_t)i);
      uint64_t span = (uint64_t)o->range_hi[k] - (uint64_t)o->range_lo[k];
      for (int64_t e = 0; e < inputs[i]->n_elems; e++)
        loom_interp_array_set(inputs[i], e, (double)(o->range_lo[k] +
                                                     (int64_t)loom_rng_below(&r, span)));
    }
}

/* Whether g takes what f takes: the same scalars, and buffers of the same
 * dtypes and constant shapes, in order. */
static bool same_signature(const loom_func *f, const loom_func *g) {
  if (f->n_params != g->n_params)
    return false;
  for (int i = 0; i < f->n_params; i++) {
    const loom_buffer *x = f->params[i].buffer, *y = g->params[i].buffer;
    if (!x != !y)
      return false;
    if (!x) {
      if (!loom_dtype_eq(f->params[i].var->dtype, g->params[i].var->dtype))
        return false;
      continue;
    }
    if (!loom_dtype_eq(x->dtype, y->dtype) || x->ndim != y->ndim)
      return false;
    for (int k = 0; k < x->ndim; k++) {
      int64_t a, b;
      bool ca = loom_ir_is_const_int(x->shape[k], &a);
      bool cb = loom_ir_is_const_int(y->shape[k], &b);
      if (ca != cb || (ca && a != b))
        return false;
    }
  }
  return true;
}

/* The function the interpreter checks f against: f, or --against's. */
static const loom_func *reference_of(const loom_func *f, const run_opts *o) {
  if (!o->reference)
    return f;
  const loom_func *g = loom_ir_module_find(o->reference, f->name);
  if (!g) {
    fprintf(stderr, "%s: error: no function named '%s' to check %s against\n",
            o->against, f->name, o->file);
    return NULL;
  }
  if (!same_signature(f, g)) {
    fprintf(stderr, "%s: error: '%s' takes other parameters than %s's\n",
            o->against, f->name, o->file);
    return NULL;
  }
  return g;
}

/* Runs function i of the built module; returns the exit code. */
static int run_func(const cli_program *p, const loom_build_set *b, int i,
                    const run_opts *o) {
  const loom_func *f = p->module->funcs[i];
  loom_diag d;
  loom_diag_init(&d);
  loom_diag_set_source(&d, p->text, p->len);
  int rc = EXIT_USER;
  int64_t *scalars = calloc((size_t)(f->n_params + 1), sizeof *scalars);
  if (!scalars) {
    fprintf(stderr, "%s: error: out of memory\n", o->file);
    return EXIT_USER;
  }
  const loom_func *ref = reference_of(f, o);
  if (!ref) {
    /* said */
  } else if (!b->items[i].kernel) {
    fprintf(stderr, "%s: error: %s: %s\n", o->file, f->name, b->items[i].error);
  } else if (scalar_values(f, o, scalars, &d)) {
    loom_runner_options ro = {
        .repeat = o->repeat, .min_repeat_ms = 10, .timeout_ms = o->timeout_ms,
        .long_call_ms = 1e300, /* the user asked for --repeat runs */
        .seed = o->seed, .check = o->is_verify, .scalars = scalars, .target = &o->tg,
        .threads = o->threads, .fill_hook = apply_ranges, .fill_ctx = (void *)o,
        /* A GPU kernel is timed from a cold L2, as MetaSchedule's runner
         * does; the CPU's caches stay as the last call left them. */
        .flush_cache = o->tg.kind == LOOM_TARGET_CUDA};
    loom_measured m;
    loom_kernel k = b->items[i].kernel;
    if (loom_tune_run(ref, &k, 1, &ro, &m, &d) != LOOM_OK) {
      if (!d.has_error)
        fprintf(stderr, "%s: error: out of memory\n", o->file);
      else
        fprintf(stderr, "%s: the interpreter cannot check %s:\n", o->file, f->name);
    } else if (m.error) {
      fprintf(stderr, "%s: error: %s: %s\n", o->file, f->name, m.error);
    } else {
      char regs[96] = "";
      if (b->items[i].registers > 0)
        snprintf(regs, sizeof regs, ", %d registers, %lld bytes spilled",
                 b->items[i].registers, (long long)b->items[i].spill_bytes);
      printf("%s: %.6f ms (n=%d%s)%s%s%s\n", f->name, m.timing.median_ms,
             m.timing.repeat, regs, o->is_verify ? "  verify: ok" : "",
             o->is_verify && o->reference ? " against " : "",
             o->is_verify && o->reference ? o->against : "");
      rc = 0;
    }
    loom_tune_measured_free(&m, 1);
  }
  if (d.has_error)
    cli_print_diag(&d);
  loom_diag_free(&d);
  free(scalars);
  return rc;
}

int cli_run(int argc, char **argv) {
  run_opts o;
  int rc = parse_opts(argc, argv, &o);
  if (rc)
    return rc;
  if ((rc = cli_target("run", o.target, &o.tg)))
    return rc;
  cli_program p, ref;
  if (o.against) {
    if ((rc = cli_load(o.against, &ref)))
      return rc;
    o.reference = ref.module;
  }
  if ((rc = cli_load(o.file, &p))) {
    if (o.against)
      cli_program_free(&ref);
    return rc;
  }
  cli_pipeline_result piped = {0};
  if (o.pipeline &&
      (rc = cli_pipeline("run", o.pipeline, o.db, &o.tg, o.is_explain, &p, &piped))) {
    cli_program_free(&p);
    if (o.against)
      cli_program_free(&ref);
    return rc;
  }
  const loom_module *m = p.module;
  if (o.func && !loom_ir_module_find(m, o.func)) {
    fprintf(stderr, "%s: error: no function named '%s'\n", o.file, o.func);
    cli_pipeline_free(&piped);
    cli_program_free(&p);
    if (o.against)
      cli_program_free(&ref);
    return EXIT_USER;
  }
  /* One C file for the whole module, as the user would build it. */
  loom_builder_options bo = {.per_file = m->n_funcs, .jobs = 1, .target = &o.tg};
  loom_build_set b;
  if (loom_tune_build((const loom_func *const *)m->funcs, m->n_funcs, &bo, &b) != LOOM_OK) {
    fprintf(stderr, "%s: error: out of memory\n", o.file);
    rc = EXIT_USER;
  }
  for (int i = 0; i < m->n_funcs && rc == 0; i++)
    if (!o.func || !strcmp(m->funcs[i]->name, o.func)) {
      rc = run_func(&p, &b, i, &o);
      fflush(stdout);
    }
  loom_tune_build_free(&b);
  cli_pipeline_free(&piped);
  cli_program_free(&p);
  if (o.against)
    cli_program_free(&ref);
  return rc;
}
