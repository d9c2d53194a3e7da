/* A table-driven driver for the tests of one schedule primitive: a case is
 * a program, a schedule script, and either the exact refusal message or a
 * line the printed result must hold and whether the result computes what
 * the program computes (the interpreter is the oracle, on random inputs of
 * three seeds). An allowed case is run again failing its 1st, 2nd, ...
 * allocation until it succeeds: each failure must be a clean error. */
#ifndef LOOM_TESTS_PRIM_CASE_H
#define LOOM_TESTS_PRIM_CASE_H

#include "schedule/sched_impl.h"
#include "loom/interp.h"
#include "loom/schedule.h"
#include "loom/script.h"
#include "test.h"

#include <stdlib.h>

typedef struct prim_case {
  const char *name;
  const char *program;
  const char *script;
  const char *error;  /* NULL: allowed; else the exact message */
  const char *output; /* when allowed: a line the printed result holds */
  bool same_values;   /* when allowed: does it keep the results? */
} prim_case;

static bool run(const loom_func *f, uint64_t seed, loom_interp_array **args) {
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_interp_alloc_args(f, NULL, args, &d) == LOOM_OK;
  loom_rng r;
  loom_rng_seed(&r, seed);
  for (int i = 0; ok && i < f->n_params; i++)
    if (args[i])
      loom_interp_fill_random(args[i], &r);
  ok = ok && loom_interp_run(f, args, NULL, &d) == LOOM_OK;
  if (!ok)
    fprintf(stderr, "interp: %s\n", d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return ok;
}

/* Whether f and g leave the same values in every parameter. */
static bool same_results(const loom_func *f, const loom_func *g) {
  bool ok = true, same = true;
  for (uint64_t seed = 1; seed <= 3 && ok && same; seed++) {
    loom_interp_array *x[8] = {0}, *y[8] = {0};
    ok = f->n_params <= 8 && run(f, seed, x) && run(g, seed, y);
    for (int i = 0; ok && i < f->n_params; i++) {
      char *why = NULL;
      if (x[i] && !loom_interp_compare(y[i], x[i], 0, 0, &why))
        same = false;
      free(why);
    }
    loom_interp_free_args(f, x);
    loom_interp_free_args(g, y);
  }
  return ok && same;
}

static void run_faults(const loom_module *m, const prim_case *c) {
  for (long at = 1; at < 5000; at++) {
    loom_sched *s = loom_sched_new(m, 7);
    if (!s)
      continue;
    loom_faultsim fs = {at, 0};
    loom_arena_set_faultsim(sched_arena(s), &fs);
    loom_diag d;
    loom_diag_init(&d);
    loom_status st = loom_sched_run_script(s, c->script, strlen(c->script),
                                           "s.py", &d);
    CHECK(st == LOOM_OK || d.has_error);
    loom_diag_free(&d);
    loom_sched_free(s);
    if (st == LOOM_OK)
      return;
  }
  CHECK(!"the script never succeeded under fault simulation");
}

static void run_case(const prim_case *c) {
  loom_arena *a = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_script_read(c->program, strlen(c->program), "t.py", a, &m, &d) !=
      LOOM_OK) {
    fprintf(stderr, "%s: %s\n", c->name, d.msg ? d.msg : "?");
    CHECK(m != NULL);
    loom_diag_free(&d);
    loom_arena_free(a);
    return;
  }
  loom_sched *s = loom_sched_new(m, 7);
  loom_status st = loom_sched_run_script(s, c->script, strlen(c->script),
                                         "s.py", &d);
  if (c->error) {
    CHECK(st != LOOM_OK);
    if (st != LOOM_OK && (!d.msg || strcmp(d.msg, c->error)))
      fprintf(stderr, "%s: message:\n  %s\n", c->name, d.msg ? d.msg : "?");
    CHECK_STREQ(d.msg, c->error);
  } else {
    if (st != LOOM_OK)
      fprintf(stderr, "%s: refused: %s\n", c->name, d.msg ? d.msg : "?");
    CHECK(st == LOOM_OK);
    if (st == LOOM_OK) {
      const loom_module *out = loom_sched_module(s);
      loom_diag v;
      loom_diag_init(&v);
      CHECK(loom_ir_verify_module(out, &v) == LOOM_OK);
      loom_diag_free(&v);
      loom_buf b;
      loom_buf_init(&b);
      loom_print_opts o = {LOOM_DIALECT_TIR};
      loom_script_print_module(out, &o, &b);
      CHECK_CONTAINS(b.data, c->output);
      loom_buf_free(&b);
      bool same = same_results(m->funcs[0], out->funcs[0]);
      if (same != c->same_values)
        fprintf(stderr, "%s: results %s\n", c->name,
                same ? "kept" : "changed");
      CHECK(same == c->same_values);
      run_faults(m, c);
    }
  }
  loom_diag_free(&d);
  loom_sched_free(s);
  loom_arena_free(a);
}

#endif
