/* The kind of a prim func (loom_fuse_kind), found block by block as TVM's
 * AnnotateTIROpPattern finds it:
 *
 * - A block whose store (several: at the same indices) and every load pair
 *   up by index is elementwise
 *   (the same variables at the same places), broadcast (the load's
 *   variables are some of the store's, in order; a unit dimension read at
 *   0 aside) or injective (the store's indices are variables and the
 *   loads' indices use no others); with one elementwise load among
 *   broadcast ones it is elementwise (C[i, j] = A[i, j] + B[j]).
 * - Otherwise a block with reduction iters is a product, kind OUT_EWISE
 *   (C = C + X * Y, casts aside, where X and Y each miss one of C's
 *   variables), a pooling, OUT_EWISE too (a load mixes a reduction
 *   variable with others), or a reduction (every reduction variable read
 *   on its own).
 * - Anything else is opaque.
 *
 * The function's kind is the highest of its blocks', except that an output
 * block after a reduction makes it OUT_EWISE (softmax: a reduction, then
 * the normalization). Comparisons are by identity, as TVM's same_as: an
 * index is the store's when it is the same variable. */
#include "fuse/fuse_impl.h"

#include <string.h>

#define MAX_LOADS 64

typedef struct accesses {
  const loom_stmt *store; /* the last */
  const loom_expr *loads[MAX_LOADS];
  int n_loads;
  bool is_opaque; /* stores at other indices, a nested block, too many loads */
} accesses;

static const loom_var *var_of(const loom_expr *e) {
  return e && e->kind == LOOM_EXPR_VAR ? e->u.var : NULL;
}

/* The same index, as TVM's same_as finds it: the same variable, or the
 * same node. */
static bool same_index(const loom_expr *a, const loom_expr *b) {
  const loom_var *v = var_of(a);
  return a == b || (v && v == var_of(b));
}

static bool same_indices(loom_expr *const *a, int na, loom_expr *const *b, int nb) {
  if (na != nb)
    return false;
  for (int i = 0; i < na; i++)
    if (!same_index(a[i], b[i]))
      return false;
  return true;
}

static loom_visit on_stmt(void *ctx, loom_stmt *s) {
  accesses *x = ctx;
  if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
    x->is_opaque = true;
    return LOOM_VISIT_STOP;
  }
  if (s->kind == LOOM_STMT_STORE) {
    const loom_stmt *t = x->store;
    if (t && !same_indices(s->u.store.indices, s->u.store.n_indices, t->u.store.indices,
                           t->u.store.n_indices)) {
      x->is_opaque = true;
      return LOOM_VISIT_STOP;
    }
    x->store = s;
  }
  return LOOM_VISIT_GO;
}

static loom_visit on_expr(void *ctx, loom_expr *e) {
  accesses *x = ctx;
  if (e->kind != LOOM_EXPR_LOAD)
    return LOOM_VISIT_GO;
  if (x->n_loads == MAX_LOADS) {
    x->is_opaque = true;
    return LOOM_VISIT_STOP;
  }
  x->loads[x->n_loads++] = e;
  return LOOM_VISIT_GO;
}

static bool is_elemwise(const loom_stmt *st, const loom_expr *ld) {
  return same_indices(st->u.store.indices, st->u.store.n_indices, ld->u.load.indices,
                      ld->u.load.n_indices);
}

static bool is_broadcast(const loom_stmt *st, const loom_expr *ld) {
  const loom_buffer *b = ld->u.load.buffer;
  int j = 0;
  for (int i = 0; i < ld->u.load.n_indices; i++) {
    int64_t ext, at;
    if (i < b->ndim && loom_ir_is_const_int(b->shape[i], &ext) && ext == 1 &&
        loom_ir_is_const_int(ld->u.load.indices[i], &at) && at == 0)
      continue;
    while (j < st->u.store.n_indices &&
           !same_index(st->u.store.indices[j], ld->u.load.indices[i]))
      j++;
    if (j == st->u.store.n_indices)
      return false;
  }
  return true;
}

typedef struct var_set {
  const loom_var *const *vars;
  int n;
  bool has_other;
} var_set;

static loom_visit outside_set(void *ctx, loom_expr *e) {
  var_set *s = ctx;
  if (e->kind != LOOM_EXPR_VAR)
    return LOOM_VISIT_GO;
  for (int i = 0; i < s->n; i++)
    if (s->vars[i] == e->u.var)
      return LOOM_VISIT_GO;
  s->has_other = true;
  return LOOM_VISIT_STOP;
}

/* Does e use a variable outside vars[0..n)? */
static bool uses_other(const loom_expr *e, const loom_var *const *vars, int n) {
  var_set s = {vars, n, false};
  loom_ir_visitor v = {.expr_pre = outside_set, .ctx = &s};
  loom_ir_visit_expr(&v, e);
  return s.has_other;
}

/* The variables the store's indices are, into vars (64 at most); -1 when
 * an index is not a variable. */
static int store_vars(const loom_stmt *st, const loom_var **vars) {
  int n = st->u.store.n_indices;
  if (n > 64)
    return -1;
  for (int i = 0; i < n; i++)
    if (!(vars[i] = var_of(st->u.store.indices[i])))
      return -1;
  return n;
}

static bool is_injective(const loom_stmt *st, const loom_expr *ld) {
  const loom_var *vars[64];
  int n = store_vars(st, vars);
  if (n < 0)
    return false;
  for (int i = 0; i < ld->u.load.n_indices; i++)
    if (uses_other(ld->u.load.indices[i], vars, n))
      return false;
  return true;
}

/* The pattern of the block's index pairs; OPAQUE when a pair has none. */
static loom_fuse_kind index_kind(const accesses *x) {
  loom_fuse_kind k = LOOM_FUSE_ELEMWISE;
  bool has_elemwise = false;
  for (int i = 0; i < x->n_loads; i++) {
    const loom_expr *ld = x->loads[i];
    if (is_elemwise(x->store, ld)) {
      has_elemwise = true;
    } else if (is_broadcast(x->store, ld)) {
      if (k < LOOM_FUSE_BROADCAST)
        k = LOOM_FUSE_BROADCAST;
    } else if (is_injective(x->store, ld)) {
      k = LOOM_FUSE_INJECTIVE;
    } else {
      return LOOM_FUSE_OPAQUE;
    }
  }
  return k == LOOM_FUSE_BROADCAST && has_elemwise ? LOOM_FUSE_ELEMWISE : k;
}

/* Does some variable of the store's indices (all variables) appear nowhere
 * in ld's indices, so that ld's elements are reused along it? */
static bool reuses(const loom_stmt *st, const loom_expr *ld) {
  const loom_var *vars[64];
  int n = store_vars(st, vars);
  for (int i = 0; i < n; i++) {
    bool is_read = false;
    for (int k = 0; k < ld->u.load.n_indices && !is_read; k++)
      is_read = loom_ir_expr_uses(ld->u.load.indices[k], vars[i]);
    if (!is_read)
      return true;
  }
  return false;
}

static const loom_expr *without_casts(const loom_expr *e) {
  while (e->kind == LOOM_EXPR_CAST)
    e = e->u.unary.a;
  return e;
}

/* S = S + X * Y (casts aside) with X and Y loads that each reuse along an
 * axis: a matrix product or a convolution. */
static bool is_fma(const loom_stmt *body) {
  if (!body || body->kind != LOOM_STMT_STORE)
    return false;
  const loom_expr *v = without_casts(body->u.store.value);
  if (v->kind != LOOM_EXPR_ADD)
    return false;
  const loom_expr *acc = without_casts(v->u.bin.a), *mul = without_casts(v->u.bin.b);
  if (acc->kind != LOOM_EXPR_LOAD || mul->kind != LOOM_EXPR_MUL ||
      acc->u.load.buffer != body->u.store.buffer ||
      !is_elemwise(body, acc))
    return false;
  const loom_expr *x = without_casts(mul->u.bin.a), *y = without_casts(mul->u.bin.b);
  return x->kind == LOOM_EXPR_LOAD && y->kind == LOOM_EXPR_LOAD &&
         reuses(body, x) && reuses(body, y);
}

/* Is every index of ld that uses a reduction variable that variable
 * alone? */
static bool is_pure_reduce(const loom_block *b, const loom_expr *ld) {
  for (int i = 0; i < ld->u.load.n_indices; i++) {
    const loom_expr *e = ld->u.load.indices[i];
    for (int k = 0; k < b->n_iter_vars; k++) {
      const loom_var *v = b->iter_vars[k].var;
      if (b->iter_vars[k].kind == LOOM_ITER_REDUCE && loom_ir_expr_uses(e, v) &&
          var_of(e) != v)
        return false;
    }
  }
  return true;
}

static bool writes_param(const loom_func *f, const loom_block *b) {
  for (int i = 0; i < b->n_writes; i++)
    for (int p = 0; p < f->n_params; p++)
      if (f->params[p].buffer == b->writes[i].buffer)
        return true;
  return false;
}

/* The kind of block b of f, given the kind of the blocks before it. */
static loom_fuse_kind block_kind(const loom_func *f, const loom_block *b,
                                 loom_fuse_kind before) {
  accesses x = {0};
  loom_ir_visitor v = {.stmt_pre = on_stmt, .expr_pre = on_expr, .ctx = &x};
  loom_ir_visit_stmt(&v, b->body);
  if (x.is_opaque || !x.store)
    return LOOM_FUSE_OPAQUE;
  loom_fuse_kind k = index_kind(&x);
  if (k != LOOM_FUSE_OPAQUE) {
    if (before == LOOM_FUSE_REDUCE && writes_param(f, b))
      return LOOM_FUSE_OUT_EWISE;
    return k > before ? k : before;
  }
  bool has_reduce = false;
  for (int i = 0; i < b->n_iter_vars; i++)
    has_reduce |= b->iter_vars[i].kind == LOOM_ITER_REDUCE;
  if (!has_reduce)
    return LOOM_FUSE_OPAQUE;
  k = LOOM_FUSE_REDUCE;
  if (is_fma(b->body))
    k = LOOM_FUSE_OUT_EWISE;
  for (int i = 0; i < x.n_loads && k == LOOM_FUSE_REDUCE; i++)
    if (!is_pure_reduce(b, x.loads[i]))
      k = LOOM_FUSE_OUT_EWISE;
  return k > before ? k : before;
}

typedef struct walk {
  const loom_func *f;
  loom_fuse_kind kind;
  int n_blocks;
  bool is_root;
} walk;

static loom_visit on_block(void *ctx, loom_stmt *s) {
  walk *w = ctx;
  if (w->kind == LOOM_FUSE_OPAQUE)
    return LOOM_VISIT_STOP;
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  if (w->is_root) {
    w->is_root = false;
    return LOOM_VISIT_GO;
  }
  w->n_blocks++;
  w->kind = block_kind(w->f, s->u.realize.block, w->kind);
  return LOOM_VISIT_SKIP;
}

loom_fuse_kind loom_fuse_kind_of(const loom_func *f) {
  const loom_stmt *body = f->body;
  if (!body || body->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_FUSE_OPAQUE;
  walk w = {f, LOOM_FUSE_ELEMWISE, 0, true};
  loom_ir_visitor v = {.stmt_pre = on_block, .ctx = &w};
  loom_ir_visit_stmt(&v, body);
  return w.n_blocks ? w.kind : LOOM_FUSE_OPAQUE;
}

const char *loom_fuse_kind_name(loom_fuse_kind k) {
  switch (k) {
  case LOOM_FUSE_ELEMWISE: return "elementwise";
  case LOOM_FUSE_BROADCAST: return "broadcast";
  case LOOM_FUSE_INJECTIVE: return "injective";
  case LOOM_FUSE_REDUCE: return "reduction";
  case LOOM_FUSE_OUT_EWISE: return "out-elementwise-fusable";
  case LOOM_FUSE_OPAQUE: return "opaque";
  }
  return "opaque";
}
