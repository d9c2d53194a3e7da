/* A table-driven driver for the tests of one schedule primitive: a case is
 * a program, a schedule script, and either the exact refusal message or the
 * lines the printed result must hold and whether the result computes what
 * the program computes (the interpreter is the oracle, on random inputs of
 * three seeds). An allowed case is run again failing its 1st, 2nd, ...
 * arena allocation until it succeeds: each failure must be a clean error,
 * never a crash or a leak (the sanitizers watch). */
#ifndef LOOM_TESTS_PRIM_CASE_H
#define LOOM_TESTS_PRIM_CASE_H

#include "schedule/sched_impl.h"
#include "interp_compare.h"
#include "loom/interp.h"
#include "loom/schedule.h"
#include "loom/script.h"
#include "test.h"

#include <stdlib.h>

#define PRIM_CASE_LINES 6

typedef struct prim_case {
  const char *name;
  const char *program;
  const char *script;
  const char *error; /* NULL: allowed; else the exact message */
  /* when allowed: lines (fragments) the printed result holds */
  const char *output[PRIM_CASE_LINES];
  bool same_values; /* when allowed: does it keep the results? */
} prim_case;

static void run_faults(const loom_module *m, const prim_case *c) {
  for (long at = 1; at < 20000; at++) {
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
    if (st == LOOM_OK)
      fprintf(stderr, "%s: allowed, but should be refused\n", c->name);
    CHECK(st == LOOM_ERROR);
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
      for (int i = 0; i < PRIM_CASE_LINES && c->output[i]; i++)
        CHECK_CONTAINS(b.data, c->output[i]);
      loom_buf_free(&b);
      bool same = interp_same_results(m->funcs[0], out->funcs[0], 3,
                                      c->same_values);
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
