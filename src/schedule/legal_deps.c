/* Legality from dependences: the slow path of parallel, vectorize, bind and
 * reorder. The block-property checks (complete block, reduction block,
 * affine bindings) are sufficient conditions that are quick to test; when
 * they fail, the exact dependence analysis (loom_arith_deps, isl) decides,
 * so an in-place update may be parallelized while a prefix sum may not, and
 * a refusal names the dependence that forbids it: the two accesses, their
 * source lines and the distance. */
#include "schedule/sched_impl.h"

#include <stdio.h>
#include <string.h>

/* ---- data-dependent indices ---------------------------------------------------- */

static loom_visit stop_at_load(void *ctx, loom_expr *e) {
  return e->kind == LOOM_EXPR_LOAD ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

static bool has_load(const loom_expr *e) {
  loom_ir_visitor v = {.expr_pre = stop_at_load};
  return !loom_ir_visit_expr(&v, e);
}

static bool print_if_data_dependent(const loom_buffer *b, loom_expr *const *ix,
                                    int n, loom_buf *out) {
  bool is_dd = false;
  for (int i = 0; i < n; i++)
    is_dd |= has_load(ix[i]);
  if (!is_dd)
    return false;
  loom_buf_printf(out, "%s[", b->name ? b->name : "?");
  for (int i = 0; i < n; i++) {
    if (i)
      loom_buf_puts(out, ", ");
    loom_script_print_expr(ix[i], out);
  }
  loom_buf_putc(out, ']');
  return true;
}

typedef struct dd_search {
  const loom_buffer *b;
  loom_buf *out;
} dd_search;

/* A load of b whose index reads memory is printed, and ends the search;
 * ramps and broadcasts are not looked into. */
static loom_visit dd_load(void *ctx, loom_expr *e) {
  const dd_search *q = ctx;
  if (e->kind == LOOM_EXPR_RAMP || e->kind == LOOM_EXPR_BROADCAST)
    return LOOM_VISIT_SKIP;
  if (e->kind == LOOM_EXPR_LOAD && e->u.load.buffer == q->b &&
      print_if_data_dependent(q->b, e->u.load.indices, e->u.load.n_indices,
                              q->out))
    return LOOM_VISIT_STOP;
  return LOOM_VISIT_GO;
}

/* A store to b with such an index, or one in the stored value. */
static loom_visit dd_store(void *ctx, loom_stmt *s) {
  const dd_search *q = ctx;
  if (s->kind != LOOM_STMT_STORE)
    return LOOM_VISIT_GO;
  loom_ir_visitor in_value = {.expr_pre = dd_load, .ctx = ctx};
  bool is_found =
      (s->u.store.buffer == q->b &&
       print_if_data_dependent(q->b, s->u.store.indices, s->u.store.n_indices,
                               q->out)) ||
      !loom_ir_visit_expr(&in_value, s->u.store.value);
  return is_found ? LOOM_VISIT_STOP : LOOM_VISIT_GO;
}

/* Prints the first access to b under s whose index reads memory. */
static bool find_data_dependent(const loom_stmt *s, const loom_buffer *b,
                                loom_buf *out) {
  dd_search q = {b, out};
  loom_ir_visitor v = {.stmt_pre = dd_store, .ctx = &q};
  return !loom_ir_visit_stmt(&v, s);
}

/* ---- the analysis ---------------------------------------------------------------- */

static loom_arith_deps *analyse(sched_call *c, int func) {
  if (func < 0 || func >= c->mod->n_funcs)
    return NULL;
  loom_arith_deps *deps = NULL;
  loom_diag d;
  loom_diag_init(&d);
  loom_arith_deps_new(c->mod->funcs[func], &deps, &d);
  loom_diag_free(&d);
  return deps;
}

/* The store the script wrote at loc, or NULL. */
static const loom_stmt *store_at(const loom_stmt *s, loom_loc loc) {
  if (!s)
    return NULL;
  if (s->kind == LOOM_STMT_STORE)
    return s->loc.line == loc.line && s->loc.col == loc.col ? s : NULL;
  loom_stmt *buf[4], **kids;
  int n = sched_kids_of((loom_stmt *)s, &kids, buf);
  for (int i = 0; i < n; i++) {
    const loom_stmt *r = store_at(kids[i], loc);
    if (r)
      return r;
  }
  return NULL;
}

/* Notes the statements of the dependence, as the program wrote them: the
 * witness's positions are in the program, not in the schedule script. */
static void note_statements(sched_call *c, const loom_func *f,
                            const loom_dep_witness *w) {
  loom_loc locs[2] = {w->src_loc, w->dst_loc};
  for (int i = 0; i < 2; i++) {
    if (locs[i].line <= 0 || (i == 1 && locs[1].line == locs[0].line &&
                              locs[1].col == locs[0].col))
      continue;
    const loom_stmt *st = store_at(f->body, locs[i]);
    if (!st)
      continue;
    loom_buf b;
    loom_buf_init(&b);
    loom_print_opts o = {LOOM_DIALECT_TIR};
    loom_script_print_stmt(st, &o, 0, &b);
    while (b.len > 0 && b.data[b.len - 1] == '\n')
      b.data[--b.len] = '\0';
    if (!b.has_failed && b.data) {
      loom_loc at = {locs[i].file, 0, 0};
      loom_diag_note(c->d, at, "line %d of the program: %s", locs[i].line, b.data);
    }
    loom_buf_free(&b);
  }
}

/* Reports a dependence of loop `name` that forbids `what`. */
static loom_status refuse(sched_call *c, const loom_stmt *scope, const char *what,
                          const char *name, const loom_dep_witness *w) {
  loom_buf dd;
  loom_buf_init(&dd);
  loom_status st;
  if (!w->is_exact && find_data_dependent(scope, w->buffer, &dd) && !dd.has_failed)
    st = sched_fail(c, "cannot %s loop '%s': the index of %s is data-dependent, "
                       "so two iterations may touch the same element: %s",
                    what, name, dd.data, w->text);
  else if (!w->is_exact)
    st = sched_fail(c, "cannot %s loop '%s': two iterations may touch the "
                       "same element: %s",
                    what, name, w->text);
  else
    st = sched_fail(c, "cannot %s loop '%s': it carries a dependence of "
                       "distance %lld: %s",
                    what, name, (long long)w->distance, w->text);
  loom_buf_free(&dd);
  return st;
}

sched_deps_answer sched_deps_loop_free(sched_call *c, int func,
                                       const loom_stmt *loop, const char *what) {
  loom_arith_deps *deps = analyse(c, func);
  if (!deps)
    return SCHED_DEPS_UNKNOWN;
  bool is_carried = false;
  loom_dep_witness w;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_arith_deps_loop_carried(deps, loop->u.loop.var,
                                                &is_carried, &w, &d);
  loom_diag_free(&d);
  sched_deps_answer r = st != LOOM_OK ? SCHED_DEPS_UNKNOWN
                        : is_carried  ? SCHED_DEPS_ILLEGAL
                                      : SCHED_DEPS_LEGAL;
  if (r == SCHED_DEPS_ILLEGAL) {
    refuse(c, loop, what, sched_stmt_name(loop), &w);
    note_statements(c, c->mod->funcs[func], &w);
  }
  loom_arith_deps_free(deps);
  return r;
}

sched_deps_answer sched_deps_permute(sched_call *c, int func,
                                     loom_stmt *const *old,
                                     loom_stmt *const *perm, int n) {
  int first = -1, last = -1, n_moved = 0;
  for (int i = 0; i < n; i++)
    if (old[i] != perm[i]) {
      if (first < 0)
        first = i;
      last = i;
      n_moved++;
    }
  if (first < 0)
    return SCHED_DEPS_LEGAL;
  loom_arith_deps *deps = analyse(c, func);
  if (!deps)
    return SCHED_DEPS_UNKNOWN;
  loom_dep_witness w;
  loom_diag d;
  loom_diag_init(&d);
  sched_deps_answer r = SCHED_DEPS_LEGAL;
  if (n_moved == 2) {
    /* A swap of two loops: exactly what the analysis can decide. */
    bool is_legal = false;
    if (loom_arith_deps_can_interchange(deps, old[first]->u.loop.var,
                                        old[last]->u.loop.var, &is_legal, &w,
                                        &d) != LOOM_OK)
      r = SCHED_DEPS_UNKNOWN;
    else if (!is_legal) {
      r = SCHED_DEPS_ILLEGAL;
      sched_fail(c, "swapping loops '%s' and '%s' would reverse a dependence: %s",
                 sched_stmt_name(old[first]), sched_stmt_name(old[last]), w.text);
      note_statements(c, c->mod->funcs[func], &w);
    }
  } else {
    /* Any other permutation keeps every dependence when none is carried by
     * the loops from the first one that moves down: two dependent
     * instances then agree on all of those loops. */
    for (int i = first; i < n && r == SCHED_DEPS_LEGAL; i++) {
      bool is_carried = false;
      if (loom_arith_deps_loop_carried(deps, old[i]->u.loop.var, &is_carried,
                                       &w, &d) != LOOM_OK)
        r = SCHED_DEPS_UNKNOWN;
      else if (is_carried) {
        r = SCHED_DEPS_ILLEGAL;
        refuse(c, old[i], "reorder", sched_stmt_name(old[i]), &w);
        note_statements(c, c->mod->funcs[func], &w);
      }
    }
  }
  loom_diag_free(&d);
  loom_arith_deps_free(deps);
  return r;
}

/* ---- the public query ---------------------------------------------------------- */

loom_status loom_sched_can_for_kind(loom_sched *s, loom_inst_kind kind,
                                    loom_sched_rv loop, loom_diag *why) {
  loom_loc nowhere = {0};
  if (kind != LOOM_INST_PARALLEL && kind != LOOM_INST_VECTORIZE &&
      kind != LOOM_INST_UNROLL)
    return loom_diag_error(why, nowhere, "not a loop-kind instruction: %d",
                           (int)kind);
  loom_tval in = loom_tval_rv(loop);
  sched_call c = {.s = s, .kind = kind, .inputs = &in, .n_inputs = 1,
                  .loc = nowhere, .d = why, .mod = s->mod};
  sched_path p = {0};
  TRY(sched_input_loop(&c, 0, &p));
  loom_status st = sched_check_for_kind(&c, &p, kind);
  sched_path_free(&p);
  return st;
}

bool loom_sched_loop_is_parallel(loom_sched *s, loom_sched_rv loop) {
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_sched_can_for_kind(s, LOOM_INST_PARALLEL, loop, &d) == LOOM_OK;
  loom_diag_free(&d);
  return ok;
}
