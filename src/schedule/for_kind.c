/* parallel, vectorize, unroll and bind: change the kind of one loop. All
 * but unroll require the iterations of the loop to be independent. The
 * quick test: every block under the loop is a complete or a reduction
 * block, and the loop feeds only spatial iters (or, for a threadIdx
 * binding, reduction iters too). A block that is neither (an in-place
 * update, a scan, a block without iter vars) sends the question to the
 * dependence analysis (legal_deps.c), which allows the loop when it
 * carries no dependence and otherwise names the one it carries. */
#include "schedule/sched_impl.h"

#include <string.h>

typedef struct parallel_check {
  sched_call *c;
  const loom_stmt *loop;
  const char *thread;
  const char *what;
  bool is_not_complete; /* failed on a block that is neither kind */
} parallel_check;

static loom_status check_block(const sched_path *q, void *arg) {
  parallel_check *k = arg;
  int ri = q->n - 1;
  const loom_stmt *r = q->stmts[ri];
  const loom_block *b = r->u.realize.block;
  if (!sched_is_complete(b) && !sched_is_reduction(q, ri)) {
    k->is_not_complete = true;
    const char *why = sched_affine_problem(q, ri);
    return sched_fail(k->c, "cannot %s loop '%s': block '%s' under it is "
                            "neither a complete block nor a reduction block%s%s",
                      k->what, sched_stmt_name(k->loop), b->name,
                      b->init && why ? ": " : "", b->init && why ? why : "");
  }
  bool is_thread_x = k->thread && !strncmp(k->thread, "threadIdx.", 10);
  for (int i = 0; i < b->n_iter_vars && i < r->u.realize.n_iter_values; i++) {
    if (!sched_expr_uses(r->u.realize.iter_values[i], k->loop->u.loop.var))
      continue;
    loom_iter_kind ik = b->iter_vars[i].kind;
    if (ik == LOOM_ITER_SPATIAL || (ik == LOOM_ITER_REDUCE && is_thread_x))
      continue;
    return sched_fail(k->c, "cannot %s loop '%s': iter '%s' of block '%s' "
                            "is a %s iter and its binding uses the loop%s",
                      k->what, sched_stmt_name(k->loop),
                      b->iter_vars[i].var->name, b->name,
                      ik == LOOM_ITER_REDUCE ? "reduction" : "non-spatial",
                      k->thread ? " (only threadIdx may bind reduction iters)"
                                : "");
  }
  return LOOM_OK;
}

/* The property check, then, when a block fails it, the dependence
 * analysis; the analysis's refusal replaces the property's, which stays
 * when the analysis is not available. */
static loom_status check_kind(sched_call *c, sched_path *p, const char *thread,
                              const char *what) {
  loom_stmt *loop = p->stmts[p->n - 1];
  parallel_check k = {c, loop, thread, what, false};
  loom_diag property, *d = c->d;
  loom_diag_init(&property);
  c->d = &property;
  loom_status st = sched_each_child_block(p, check_block, &k);
  c->d = d;
  if (st == LOOM_ERROR && k.is_not_complete) {
    sched_deps_answer r = sched_deps_loop_free(c, p->func, loop, what);
    st = r == SCHED_DEPS_LEGAL ? LOOM_OK : LOOM_ERROR;
    if (r == SCHED_DEPS_UNKNOWN)
      loom_diag_error(d, property.loc, "%s", property.msg ? property.msg : "?");
  } else if (st == LOOM_ERROR) {
    loom_diag_error(d, property.loc, "%s", property.msg ? property.msg : "?");
  } else if (st == LOOM_NOMEM) {
    st = sched_nomem(c);
  }
  loom_diag_free(&property);
  return st;
}

loom_status sched_check_for_kind(sched_call *c, sched_path *p,
                                 loom_inst_kind kind) {
  if (kind == LOOM_INST_PARALLEL)
    return check_kind(c, p, NULL, "parallelize");
  if (kind == LOOM_INST_VECTORIZE)
    return check_kind(c, p, NULL, "vectorize");
  return LOOM_OK;
}

static loom_status set_kind(sched_call *c, loom_for_kind kind,
                            const char *thread, const char *what) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_loop(c, 0, &p));
  loom_stmt *loop = p.stmts[p.n - 1];
  loom_status st = LOOM_OK;
  if (kind != LOOM_FOR_UNROLLED)
    st = check_kind(c, &p, thread, what);
  if (st == LOOM_OK) {
    loom_stmt *n = loom_arena_alloc(a, sizeof *n);
    if (n) {
      *n = *loop;
      n->u.loop.kind = kind;
      n->u.loop.thread = thread ? loom_arena_strdup(a, thread) : NULL;
    }
    c->mod = n && (!thread || n->u.loop.thread)
                 ? sched_replace(a, c->mod, &p, p.n - 1, n)
                 : NULL;
    if (!c->mod)
      st = sched_nomem(c);
  }
  sched_path_free(&p);
  return st;
}

loom_status sched_apply_parallel(sched_call *c) {
  return set_kind(c, LOOM_FOR_PARALLEL, NULL, "parallelize");
}

loom_status sched_apply_vectorize(sched_call *c) {
  return set_kind(c, LOOM_FOR_VECTORIZED, NULL, "vectorize");
}

loom_status sched_apply_unroll(sched_call *c) {
  return set_kind(c, LOOM_FOR_UNROLLED, NULL, "unroll");
}

static bool is_thread_axis(const char *s) {
  static const char *const prefixes[] = {"blockIdx.", "threadIdx.", "vthread."};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(prefixes[i]);
    if (!strncmp(s, prefixes[i], n) && s[n] && strchr("xyz", s[n]) &&
        !s[n + 1])
      return true;
  }
  return !strcmp(s, "vthread");
}

loom_status sched_apply_bind(sched_call *c) {
  if (c->n_attrs < 1 || c->attrs[0].kind != LOOM_TV_STR)
    return sched_fail(c, "the thread axis must be a string");
  if (!is_thread_axis(c->attrs[0].s))
    return sched_fail(c, "'%s' is not a thread axis (blockIdx.x/y/z, "
                         "threadIdx.x/y/z or vthread.x/y/z)",
                      c->attrs[0].s);
  return set_kind(c, LOOM_FOR_THREAD_BINDING, c->attrs[0].s, "bind");
}
