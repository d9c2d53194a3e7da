/* Block properties the primitives check: affine bindings, complete blocks,
 * reduction blocks. They follow TVM's definitions closely enough to refuse
 * what TVM refuses in its own tests, erring on the side of refusing. */
#include "schedule/sched_impl.h"

#include <string.h>

static bool uses_loops(const loom_expr *e, const sched_path *p, int lo,
                       int hi) {
  for (int i = lo; i < hi; i++)
    if (p->stmts[i]->kind == LOOM_STMT_FOR &&
        sched_expr_uses(e, p->stmts[i]->u.loop.var))
      return true;
  return false;
}

/* The terms of a sum that are not multiples of d, scaled by `scale`. */
typedef struct rough_terms {
  int64_t coef[8];
  const loom_expr *term[8];
  int n;
} rough_terms;

/* Collects the terms of e (times scale) that are not multiples of d;
 * fails when one does not divide d either, or there are too many. */
static bool collect_rough_terms(const loom_expr *e, int64_t scale, int64_t d,
                                const sched_path *p, int lo, int hi,
                                rough_terms *r) {
  int64_t k;
  if (!uses_loops(e, p, lo, hi))
    return true; /* a constant of the chain */
  switch (e->kind) {
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB:
    return collect_rough_terms(e->u.bin.a, scale, d, p, lo, hi, r) &&
           collect_rough_terms(e->u.bin.b, scale, d, p, lo, hi, r);
  case LOOM_EXPR_MUL:
    if (loom_ir_is_const_int(e->u.bin.b, &k))
      return collect_rough_terms(e->u.bin.a, scale * k, d, p, lo, hi, r);
    if (loom_ir_is_const_int(e->u.bin.a, &k))
      return collect_rough_terms(e->u.bin.b, scale * k, d, p, lo, hi, r);
    return false;
  default: {
    int64_t c = scale < 0 ? -scale : scale;
    if (c % d == 0)
      return true;
    if (d % c != 0 || r->n == 8)
      return false;
    r->coef[r->n] = scale;
    r->term[r->n++] = e;
    return true;
  }
  }
}

/* The constant extent of loop var e of the chain, from 0; 0 when e is no
 * such loop. */
static int64_t loop_extent(const loom_expr *e, const sched_path *p, int lo,
                           int hi) {
  int64_t m, ext;
  if (e->kind != LOOM_EXPR_VAR)
    return 0;
  for (int i = lo; i < hi; i++) {
    const loom_stmt *l = p->stmts[i];
    if (l->kind == LOOM_STMT_FOR && l->u.loop.var == e->u.var)
      return loom_ir_is_const_int(l->u.loop.min, &m) && m == 0 &&
                     loom_ir_is_const_int(l->u.loop.extent, &ext) && ext > 0
                 ? ext
                 : 0;
  }
  return 0;
}

/* Several rough terms still split cleanly when they are the digits of one
 * fused loop, as fuse then split leaves them (`(f0 * 64 + f1) // 256`
 * with f1 in [0, 64)): positive coefficients that, in increasing order,
 * each step by the previous loop's extent (unit loops aside), and a fused
 * extent that d divides. */
static bool is_fused_digits(const rough_terms *r, int64_t d,
                            const sched_path *p, int lo, int hi) {
  int order[8];
  for (int i = 0; i < r->n; i++) {
    int j = i;
    for (; j > 0 && r->coef[order[j - 1]] > r->coef[i]; j--)
      order[j] = order[j - 1];
    order[j] = i;
  }
  int64_t next = 0; /* the coefficient the next digit must have; 0 at first */
  for (int i = 0; i < r->n; i++) {
    int64_t c = r->coef[order[i]];
    int64_t ext = loop_extent(r->term[order[i]], p, lo, hi);
    if (ext == 1)
      continue; /* a unit loop adds nothing */
    if (c <= 0 || (next && c != next) || ext == 0 || c > INT64_MAX / ext)
      return false;
    next = c * ext;
  }
  return next && next % d == 0;
}

/* x // d and x % d keep an iteration space affine when x splits cleanly at
 * d: every term of x is a multiple of d except at most one, whose
 * coefficient divides d (`(i * 16 + j) // 4`, not `(i * 16 + j) // 12`),
 * or except the digits of one fused loop. */
static bool splits_cleanly(const loom_expr *x, int64_t d, const sched_path *p,
                           int lo, int hi) {
  rough_terms r = {{0}, {0}, 0};
  if (!collect_rough_terms(x, 1, d, p, lo, hi, &r))
    return false;
  return r.n <= 1 || is_fused_digits(&r, d, p, lo, hi);
}

/* x // n and x % n by a symbolic n: affine when x is a loop of the chain
 * that runs from 0 over a multiple of n (a fused loop `range(n * 32)`). */
static bool splits_by_symbol(const loom_expr *x, const loom_expr *n,
                             const sched_path *p, int lo, int hi) {
  if (x->kind != LOOM_EXPR_VAR || uses_loops(n, p, lo, hi))
    return false;
  for (int i = lo; i < hi; i++) {
    const loom_stmt *l = p->stmts[i];
    int64_t m;
    if (l->kind != LOOM_STMT_FOR || l->u.loop.var != x->u.var)
      continue;
    const loom_expr *ext = l->u.loop.extent;
    return loom_ir_is_const_int(l->u.loop.min, &m) && m == 0 &&
           ext->kind == LOOM_EXPR_MUL &&
           (loom_ir_same_expr(ext->u.bin.a, n) || loom_ir_same_expr(ext->u.bin.b, n));
  }
  return false;
}

/* Quasi-affine in the loops p[lo, hi): sums, differences, products with one
 * constant side, floordiv and floormod by positive constants. Other
 * variables count as constants. */
static bool quasi_affine(const loom_expr *e, const sched_path *p, int lo,
                         int hi) {
  int64_t k;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_VAR:
    return true;
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB:
    return quasi_affine(e->u.bin.a, p, lo, hi) &&
           quasi_affine(e->u.bin.b, p, lo, hi);
  case LOOM_EXPR_MUL: {
    bool ca = true, cb = true;
    for (int i = lo; i < hi; i++)
      if (p->stmts[i]->kind == LOOM_STMT_FOR) {
        ca = ca && !sched_expr_uses(e->u.bin.a, p->stmts[i]->u.loop.var);
        cb = cb && !sched_expr_uses(e->u.bin.b, p->stmts[i]->u.loop.var);
      }
    return (ca || cb) && quasi_affine(e->u.bin.a, p, lo, hi) &&
           quasi_affine(e->u.bin.b, p, lo, hi);
  }
  case LOOM_EXPR_FLOORDIV:
  case LOOM_EXPR_FLOORMOD:
    if (!loom_ir_is_const_int(e->u.bin.b, NULL))
      return splits_by_symbol(e->u.bin.a, e->u.bin.b, p, lo, hi);
    return loom_ir_is_const_int(e->u.bin.b, &k) && k > 0 &&
           quasi_affine(e->u.bin.a, p, lo, hi) &&
           splits_cleanly(e->u.bin.a, k, p, lo, hi);
  default:
    return false;
  }
}

static void loop_vars_in(const loom_expr *e, const sched_path *p, int lo,
                         int hi, bool *mask) {
  for (int i = lo; i < hi; i++)
    mask[i - lo] = p->stmts[i]->kind == LOOM_STMT_FOR &&
                   sched_expr_uses(e, p->stmts[i]->u.loop.var);
}

static const char *check_predicate(const loom_expr *pred, const sched_path *p,
                                   int lo, int hi, const loom_stmt *r) {
  int64_t t;
  if (!pred || (loom_ir_is_const_int(pred, &t) && t))
    return NULL;
  if (pred->kind == LOOM_EXPR_AND) {
    const char *w = check_predicate(pred->u.bin.a, p, lo, hi, r);
    return w ? w : check_predicate(pred->u.bin.b, p, lo, hi, r);
  }
  if (pred->kind != LOOM_EXPR_LT || !loom_ir_is_const_int(pred->u.bin.b, &t) ||
      !quasi_affine(pred->u.bin.a, p, lo, hi))
    return "its predicate is not a bound on an affine expression";
  /* The bound must constrain exactly the loops of one binding, as a split
   * leaves it; a bound across several iters is not an affine iteration
   * space. */
  int n = hi - lo;
  bool want[256], got[256];
  if (n > 256)
    return "too many loops";
  loop_vars_in(pred->u.bin.a, p, lo, hi, want);
  for (int i = 0; i < r->u.realize.n_iter_values; i++) {
    loop_vars_in(r->u.realize.iter_values[i], p, lo, hi, got);
    bool covers = true, any = false;
    for (int j = 0; j < n; j++) {
      if (want[j] && !got[j])
        covers = false;
      any |= want[j];
    }
    if (covers && any)
      return NULL;
  }
  return "its predicate bounds loops that no single binding uses";
}

const char *sched_affine_problem(const sched_path *p, int ri) {
  return sched_affine_problem_below(p, ri, sched_scope_index(p, ri) + 1);
}

const char *sched_affine_problem_below(const sched_path *p, int ri, int lo) {
  const loom_stmt *r = p->stmts[ri];
  int hi = ri;
  for (int i = lo; i < hi; i++) {
    const loom_stmt *s = p->stmts[i];
    if (s->kind != LOOM_STMT_FOR)
      continue;
    for (int j = lo; j < hi; j++)
      if (j != i && p->stmts[j]->kind == LOOM_STMT_FOR &&
          (sched_expr_uses(s->u.loop.extent, p->stmts[j]->u.loop.var) ||
           sched_expr_uses(s->u.loop.min, p->stmts[j]->u.loop.var)))
        return "the range of one of its loops depends on another loop";
  }
  for (int i = 0; i < r->u.realize.n_iter_values; i++)
    if (!quasi_affine(r->u.realize.iter_values[i], p, lo, hi))
      return "a binding is not a quasi-affine expression of the loops";
  return check_predicate(r->u.realize.predicate, p, lo, hi, r);
}

static bool writes_what_it_reads(const loom_block *b) {
  for (int i = 0; i < b->n_writes; i++)
    for (int j = 0; j < b->n_reads; j++)
      if (b->writes[i].buffer == b->reads[j].buffer)
        return true;
  return false;
}

bool sched_is_complete(const loom_block *b) {
  if (b->init)
    return false;
  for (int i = 0; i < b->n_iter_vars; i++)
    if (b->iter_vars[i].kind != LOOM_ITER_SPATIAL)
      return false;
  return b->n_writes > 0 && !writes_what_it_reads(b);
}

bool sched_is_reduction(const sched_path *p, int ri) {
  const loom_block *b = p->stmts[ri]->u.realize.block;
  if (!b->init || b->n_writes == 0)
    return false;
  for (int i = 0; i < b->n_iter_vars; i++)
    if (b->iter_vars[i].kind != LOOM_ITER_SPATIAL &&
        b->iter_vars[i].kind != LOOM_ITER_REDUCE)
      return false;
  return sched_affine_problem(p, ri) == NULL && !writes_what_it_reads(b);
}

bool sched_block_reads(const loom_block *b, const loom_buffer *buf) {
  for (int i = 0; i < b->n_reads; i++)
    if (b->reads[i].buffer == buf)
      return true;
  return false;
}

bool sched_block_writes(const loom_block *b, const loom_buffer *buf) {
  for (int i = 0; i < b->n_writes; i++)
    if (b->writes[i].buffer == buf)
      return true;
  return false;
}

bool sched_block_updates(const loom_block *b, const loom_buffer *buf) {
  return sched_block_reads(b, buf) && sched_block_writes(b, buf);
}

bool sched_is_param_buffer(const loom_func *f, const loom_buffer *b) {
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer == b)
      return true;
  return false;
}

bool sched_scope_allocates(const loom_block *scope, const loom_buffer *b) {
  for (int i = 0; scope && i < scope->n_alloc_buffers; i++)
    if (scope->alloc_buffers[i] == b)
      return true;
  return false;
}

const char *sched_cover_problem(const sched_path *p, int ri, char *why,
                                size_t n_why) {
  const loom_stmt *r = p->stmts[ri];
  const loom_block *b = r->u.realize.block;
  int64_t t, loops = 1, iters = 1;
  if (sched_has_predicate(r))
    return "it has a predicate";
  for (int i = sched_scope_index(p, ri) + 1; i < ri; i++) {
    const loom_stmt *s = p->stmts[i];
    int64_t ext;
    if (s->kind == LOOM_STMT_IF)
      return "it lies under an if";
    if (s->kind != LOOM_STMT_FOR)
      continue;
    if (!loom_ir_is_const_int(s->u.loop.min, &t) ||
        !loom_ir_is_const_int(s->u.loop.extent, &ext)) {
      snprintf(why, n_why, "the range of loop '%s' is not constant (a "
                           "triangular or irregular nest)",
               s->u.loop.var->name);
      return why;
    }
    loops *= ext;
  }
  for (int i = 0; i < b->n_iter_vars; i++) {
    int64_t ext;
    if (!loom_ir_is_const_int(b->iter_vars[i].dom.extent, &ext))
      return "an iter has no constant domain";
    iters *= ext;
  }
  if (loops != iters || sched_affine_problem(p, ri))
    return "its loops do not run over its iters one to one";
  return NULL;
}
