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

static bool has_load(const loom_expr *e) {
  if (!e)
    return false;
  switch (e->kind) {
  case LOOM_EXPR_LOAD: return true;
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
  case LOOM_EXPR_VAR: return false;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST: return has_load(e->u.unary.a);
  case LOOM_EXPR_SELECT:
    return has_load(e->u.select.cond) || has_load(e->u.select.t) ||
           has_load(e->u.select.f);
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      if (has_load(e->u.call.args[i]))
        return true;
    return false;
  case LOOM_EXPR_LET: return has_load(e->u.let.value) || has_load(e->u.let.body);
  case LOOM_EXPR_RAMP: return has_load(e->u.ramp.base) || has_load(e->u.ramp.stride);
  case LOOM_EXPR_BROADCAST: return has_load(e->u.broadcast.value);
  default: return has_load(e->u.bin.a) || has_load(e->u.bin.b);
  }
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

static bool find_in_expr(const loom_expr *e, const loom_buffer *b, loom_buf *out) {
  if (!e)
    return false;
  if (e->kind == LOOM_EXPR_LOAD) {
    if (e->u.load.buffer == b &&
        print_if_data_dependent(b, e->u.load.indices, e->u.load.n_indices, out))
      return true;
    for (int i = 0; i < e->u.load.n_indices; i++)
      if (find_in_expr(e->u.load.indices[i], b, out))
        return true;
    return false;
  }
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
  case LOOM_EXPR_VAR: return false;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST: return find_in_expr(e->u.unary.a, b, out);
  case LOOM_EXPR_SELECT:
    return find_in_expr(e->u.select.cond, b, out) ||
           find_in_expr(e->u.select.t, b, out) || find_in_expr(e->u.select.f, b, out);
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      if (find_in_expr(e->u.call.args[i], b, out))
        return true;
    return false;
  case LOOM_EXPR_LET:
    return find_in_expr(e->u.let.value, b, out) || find_in_expr(e->u.let.body, b, out);
  case LOOM_EXPR_RAMP:
  case LOOM_EXPR_BROADCAST: return false;
  default:
    return find_in_expr(e->u.bin.a, b, out) || find_in_expr(e->u.bin.b, b, out);
  }
}

/* Prints the first access to b under s whose index reads memory. */
static bool find_data_dependent(const loom_stmt *s, const loom_buffer *b,
                                loom_buf *out) {
  if (!s)
    return false;
  switch (s->kind) {
  case LOOM_STMT_STORE:
    return (s->u.store.buffer == b &&
            print_if_data_dependent(b, s->u.store.indices, s->u.store.n_indices,
                                    out)) ||
           find_in_expr(s->u.store.value, b, out);
  case LOOM_STMT_FOR: return find_data_dependent(s->u.loop.body, b, out);
  case LOOM_STMT_BLOCK_REALIZE:
    return find_data_dependent(s->u.realize.block->init, b, out) ||
           find_data_dependent(s->u.realize.block->body, b, out);
  case LOOM_STMT_IF:
    return find_data_dependent(s->u.if_.then_case, b, out) ||
           find_data_dependent(s->u.if_.else_case, b, out);
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      if (find_data_dependent(s->u.seq.stmts[i], b, out))
        return true;
    return false;
  case LOOM_STMT_LET: return find_data_dependent(s->u.let.body, b, out);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: return find_data_dependent(s->u.alloc.body, b, out);
  case LOOM_STMT_ATTR: return find_data_dependent(s->u.attr.body, b, out);
  case LOOM_STMT_ASSERT: return find_data_dependent(s->u.assert_.body, b, out);
  default: return false;
  }
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
