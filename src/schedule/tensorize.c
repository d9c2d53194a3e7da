/* tensorize: replace the body of a block (a loop is blockized first) by the
 * implementation of a tensor intrinsic. The block must compute what the
 * intrinsic's description computes: the same loop nest, the same inner
 * block and the same expressions, where an access of the block's buffer at
 * index x matches the description's access at x - base, base being the
 * corner of the block's region of that buffer (TVM's TensorizeComparator;
 * the block's buffers may have more leading dimensions, each a point). The
 * implementation's buffers then become match_buffer views of those regions. */
#include "schedule/sched_impl.h"

#include <stdarg.h>
#include <string.h>

#define MAX_VARS 64
#define MAX_BUFS 16

/* A buffer of the description and the block's buffer it stands for. */
typedef struct buf_pair {
  loom_buffer *desc, *cur;
  const loom_buffer_region *region; /* the block's region: its corner is base */
  int offset;                        /* leading dimensions of cur not in desc */
} buf_pair;

typedef struct matcher {
  loom_arena *a;
  loom_arith_ctx *ctx;
  const loom_block *block; /* the block being tensorized */
  const loom_func *desc;
  loom_var *dvars[MAX_VARS]; /* a variable of the description ... */
  loom_expr *cvals[MAX_VARS]; /* ... and the block's variable it matched */
  int n_vars;
  buf_pair bufs[MAX_BUFS];
  int n_bufs;
  bool is_nomem;
  char why[400]; /* the first mismatch */
} matcher;

static bool mismatch(matcher *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static bool mismatch(matcher *m, const char *fmt, ...) {
  if (!m->why[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->why, sizeof m->why, fmt, ap);
    va_end(ap);
  }
  return false;
}

/* An expression as the script would print it, for messages. */
static const char *show(matcher *m, const loom_expr *e) {
  loom_buf b;
  loom_buf_init(&b);
  loom_script_print_expr(e, &b);
  const char *s = b.data ? loom_arena_strdup(m->a, b.data) : NULL;
  loom_buf_free(&b);
  return s ? s : "?";
}

static const char *dtype_name(matcher *m, loom_dtype t) {
  char buf[LOOM_DTYPE_STRLEN];
  const char *s = loom_arena_strdup(m->a, loom_dtype_str(t, buf));
  return s ? s : "?";
}

static bool map_var(matcher *m, loom_var *dv, loom_var *cv) {
  if (m->n_vars == MAX_VARS)
    return mismatch(m, "the description defines too many variables (limit "
                       "is %d)", MAX_VARS);
  loom_expr *r = loom_ir_ref(m->a, cv);
  if (!r) {
    m->is_nomem = true;
    return false;
  }
  m->dvars[m->n_vars] = dv;
  m->cvals[m->n_vars++] = r;
  return true;
}

static const loom_var *mapped_var(const matcher *m, const loom_var *dv) {
  for (int i = 0; i < m->n_vars; i++)
    if (m->dvars[i] == dv)
      return m->cvals[i]->u.var;
  return NULL;
}

/* d in the block's variables. */
static loom_expr *in_block_terms(matcher *m, loom_expr *d) {
  loom_expr *e = loom_ir_substitute_expr(m->a, d, m->dvars, m->cvals, m->n_vars);
  if (!e)
    m->is_nomem = true;
  return e;
}

static loom_expr *widen(loom_arena *a, loom_expr *e, loom_dtype t) {
  return loom_dtype_eq(e->dtype, t) ? e : loom_ir_cast(a, t, e);
}

/* Can the prover show c - base == d (d in the description's variables)?
 * base may be NULL (0). */
static bool same_value(matcher *m, loom_expr *c, loom_expr *base, loom_expr *d) {
  loom_expr *dd = in_block_terms(m, d);
  if (!dd)
    return false;
  loom_dtype t = c->dtype.bits >= dd->dtype.bits ? c->dtype : dd->dtype;
  if (base && base->dtype.bits > t.bits)
    t = base->dtype;
  loom_expr *lhs = widen(m->a, c, t);
  if (base && lhs)
    lhs = loom_ir_binary(m->a, LOOM_EXPR_SUB, lhs, widen(m->a, base, t));
  loom_expr *eq = lhs ? loom_ir_binary(m->a, LOOM_EXPR_EQ, lhs,
                                       widen(m->a, dd, t))
                      : NULL;
  if (!eq) {
    m->is_nomem = true;
    return false;
  }
  return loom_arith_can_prove(m->ctx, eq) == LOOM_ARITH_TRUE;
}

/* The block's region of buffer b: its write region if it writes b, else its
 * read region; NULL when it declares neither. */
static const loom_buffer_region *block_region(const loom_block *blk,
                                              const loom_buffer *b) {
  for (int i = 0; i < blk->n_writes; i++)
    if (blk->writes[i].buffer == b)
      return &blk->writes[i];
  for (int i = 0; i < blk->n_reads; i++)
    if (blk->reads[i].buffer == b)
      return &blk->reads[i];
  return NULL;
}

static bool is_desc_param(const loom_func *f, const loom_buffer *b) {
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer == b)
      return true;
  return false;
}

static const buf_pair *find_desc(const matcher *m, const loom_buffer *d) {
  for (int i = 0; i < m->n_bufs; i++)
    if (m->bufs[i].desc == d)
      return &m->bufs[i];
  return NULL;
}

static const buf_pair *find_cur(const matcher *m, const loom_buffer *c) {
  for (int i = 0; i < m->n_bufs; i++)
    if (m->bufs[i].cur == c)
      return &m->bufs[i];
  return NULL;
}

/* Pairs the description's buffer d with the block's buffer c on first
 * sight; later accesses must agree with the pairing. */
static const buf_pair *pair_buffers(matcher *m, loom_buffer *c,
                                    loom_buffer *d) {
  const buf_pair *p = find_desc(m, d);
  if (p) {
    if (p->cur != c)
      mismatch(m, "the block accesses '%s' where the description accesses "
                  "'%s', which stands for '%s'", c->name, d->name,
                  p->cur->name);
    return p->cur == c ? p : NULL;
  }
  if ((p = find_cur(m, c))) {
    mismatch(m, "the block accesses '%s' where the description accesses "
                "'%s', but '%s' already stands for the description's '%s'",
             c->name, d->name, c->name, p->desc->name);
    return NULL;
  }
  if (!is_desc_param(m->desc, d)) {
    mismatch(m, "the description accesses '%s', which is not one of its "
                "parameters", d->name);
    return NULL;
  }
  if (!loom_dtype_eq(c->dtype, d->dtype)) {
    mismatch(m, "buffer '%s' has dtype %s where the description's '%s' has "
                "%s", c->name, dtype_name(m, c->dtype), d->name,
             dtype_name(m, d->dtype));
    return NULL;
  }
  if (strcmp(c->scope, d->scope)) {
    mismatch(m, "buffer '%s' is in scope '%s' where the description's '%s' "
                "is in '%s'", c->name, c->scope, d->name, d->scope);
    return NULL;
  }
  if (c->ndim < d->ndim) {
    mismatch(m, "buffer '%s' has %d dimensions, fewer than the "
                "description's '%s' (%d)", c->name, c->ndim, d->name, d->ndim);
    return NULL;
  }
  const loom_buffer_region *r = block_region(m->block, c);
  if (!r || r->n_ranges != c->ndim) {
    mismatch(m, "block '%s' declares no region of '%s'", m->block->name,
             c->name);
    return NULL;
  }
  int offset = c->ndim - d->ndim;
  for (int k = 0; k < offset; k++) {
    int64_t e;
    if (!loom_ir_is_const_int(r->ranges[k].extent, &e) || e != 1) {
      mismatch(m, "the block's region of '%s' spans %s elements in "
                  "dimension %d, which the description's '%s' does not "
                  "have; leading dimensions must be single elements",
               c->name, show(m, r->ranges[k].extent), k, d->name);
      return NULL;
    }
  }
  if (m->n_bufs == MAX_BUFS) {
    mismatch(m, "the description has too many buffers (limit is %d)",
             MAX_BUFS);
    return NULL;
  }
  m->bufs[m->n_bufs] = (buf_pair){d, c, r, offset};
  return &m->bufs[m->n_bufs++];
}

/* c[ci] against d[di]: each trailing index, less the region's corner, must
 * equal the description's; each leading index must be the corner. */
static bool match_access(matcher *m, loom_buffer *cb, loom_expr **ci, int cn,
                         loom_buffer *db, loom_expr **di, int dn) {
  const buf_pair *p = pair_buffers(m, cb, db);
  if (!p)
    return false;
  if (cn != cb->ndim || dn != db->ndim)
    return mismatch(m, "an access of '%s' has the wrong number of indices",
                    cb->name);
  for (int k = 0; k < cn; k++) {
    loom_expr *base = p->region->ranges[k].min;
    bool ok = k < p->offset
                  ? same_value(m, ci[k], NULL, base)
                  : same_value(m, ci[k], base, di[k - p->offset]);
    if (m->is_nomem)
      return false;
    if (!ok)
      return mismatch(m, "index %d of '%s' is %s, which is not %s plus the "
                         "description's index %s", k, cb->name,
                      show(m, ci[k]), show(m, base),
                      k < p->offset ? "0" : show(m, di[k - p->offset]));
  }
  return true;
}

static bool match_expr(matcher *m, loom_expr *c, loom_expr *d);

static bool match_exprs(matcher *m, loom_expr **c, loom_expr **d, int n) {
  for (int i = 0; i < n; i++)
    if (!match_expr(m, c[i], d[i]))
      return false;
  return true;
}

/* Structural equality, the description's variables read through the map and
 * buffer accesses compared modulo their regions' corners. */
static bool match_expr(matcher *m, loom_expr *c, loom_expr *d) {
  if (d->kind == LOOM_EXPR_VAR) {
    const loom_var *v = mapped_var(m, d->u.var);
    if (!v)
      return mismatch(m, "the description uses '%s', which it does not "
                         "define", d->u.var->name);
    if (c->kind != LOOM_EXPR_VAR || c->u.var != v)
      return mismatch(m, "the block has %s where the description has %s "
                         "(standing for %s)", show(m, c), d->u.var->name,
                      v->name);
    return true;
  }
  if (c->kind != d->kind)
    return mismatch(m, "the block computes %s where the description "
                       "computes %s", show(m, c), show(m, d));
  if (!loom_dtype_eq(c->dtype, d->dtype))
    return mismatch(m, "%s has dtype %s where the description's %s has %s",
                    show(m, c), dtype_name(m, c->dtype), show(m, d),
                    dtype_name(m, d->dtype));
  switch (c->kind) {
  case LOOM_EXPR_INT:
    if (c->u.int_value != d->u.int_value)
      return mismatch(m, "the block has the constant %s where the "
                         "description has %s", show(m, c), show(m, d));
    return true;
  case LOOM_EXPR_FLOAT:
    if (c->u.float_value != d->u.float_value)
      return mismatch(m, "the block has the constant %s where the "
                         "description has %s", show(m, c), show(m, d));
    return true;
  case LOOM_EXPR_STR:
    if (strcmp(c->u.str, d->u.str))
      return mismatch(m, "the block has \"%s\" where the description has "
                         "\"%s\"", c->u.str, d->u.str);
    return true;
  case LOOM_EXPR_LOAD:
    return match_access(m, c->u.load.buffer, c->u.load.indices,
                        c->u.load.n_indices, d->u.load.buffer,
                        d->u.load.indices, d->u.load.n_indices);
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    return match_expr(m, c->u.unary.a, d->u.unary.a);
  case LOOM_EXPR_SELECT:
    return match_expr(m, c->u.select.cond, d->u.select.cond) &&
           match_expr(m, c->u.select.t, d->u.select.t) &&
           match_expr(m, c->u.select.f, d->u.select.f);
  case LOOM_EXPR_CALL:
    if (c->u.call.op != d->u.call.op || c->u.call.n_args != d->u.call.n_args)
      return mismatch(m, "the block calls %s where the description calls %s",
                      show(m, c), show(m, d));
    return match_exprs(m, c->u.call.args, d->u.call.args, c->u.call.n_args);
  case LOOM_EXPR_BROADCAST:
    if (c->u.broadcast.lanes != d->u.broadcast.lanes)
      return mismatch(m, "the block has %s where the description has %s",
                      show(m, c), show(m, d));
    return match_expr(m, c->u.broadcast.value, d->u.broadcast.value);
  case LOOM_EXPR_RAMP:
    if (c->u.ramp.lanes != d->u.ramp.lanes)
      return mismatch(m, "the block has %s where the description has %s",
                      show(m, c), show(m, d));
    return match_expr(m, c->u.ramp.base, d->u.ramp.base) &&
           match_expr(m, c->u.ramp.stride, d->u.ramp.stride);
  case LOOM_EXPR_LET:
  case LOOM_EXPR_VAR:
    return mismatch(m, "tensorize does not match %s", show(m, c));
  default: /* the binary operators */
    return match_expr(m, c->u.bin.a, d->u.bin.a) &&
           match_expr(m, c->u.bin.b, d->u.bin.b);
  }
}

static bool match_stmt(matcher *m, const loom_stmt *c, const loom_stmt *d);

static bool match_loop(matcher *m, const loom_stmt *c, const loom_stmt *d) {
  int64_t ce, de;
  const char *cn = c->u.loop.var->name, *dn = d->u.loop.var->name;
  if (!loom_ir_is_const_int(d->u.loop.extent, &de))
    return mismatch(m, "the description's loop '%s' has no constant extent",
                    dn);
  if (!loom_ir_is_const_int(c->u.loop.extent, &ce) || ce != de)
    return mismatch(m, "loop '%s' has extent %s where the description's loop "
                       "'%s' has %lld", cn, show(m, c->u.loop.extent), dn,
                    (long long)de);
  if (!same_value(m, c->u.loop.min, NULL, d->u.loop.min))
    return m->is_nomem ? false
                       : mismatch(m, "loop '%s' starts at %s where the "
                                     "description's loop '%s' starts at %s",
                                  cn, show(m, c->u.loop.min), dn,
                                  show(m, d->u.loop.min));
  if (c->u.loop.kind != d->u.loop.kind)
    return mismatch(m, "loop '%s' is not of the kind (serial, parallel, "
                       "vectorized, unrolled, bound) of the description's "
                       "loop '%s'", cn, dn);
  int64_t lo;
  if (loom_ir_is_const_int(c->u.loop.min, &lo) && ce > 0 &&
      loom_arith_bind(m->ctx, c->u.loop.var, lo, lo + ce - 1, NULL) != LOOM_OK)
    m->is_nomem = true;
  return !m->is_nomem && map_var(m, d->u.loop.var, c->u.loop.var) &&
         match_stmt(m, c->u.loop.body, d->u.loop.body);
}

/* The block inside: its iters, bindings, predicate, init and body. Its
 * regions follow from its body and are not compared. */
static bool match_realize(matcher *m, const loom_stmt *c, const loom_stmt *d) {
  const loom_block *cb = c->u.realize.block, *db = d->u.realize.block;
  if (cb->n_iter_vars != db->n_iter_vars)
    return mismatch(m, "block '%s' has %d iter vars where the description's "
                       "block '%s' has %d", cb->name, cb->n_iter_vars,
                    db->name, db->n_iter_vars);
  for (int i = 0; i < cb->n_iter_vars; i++) {
    const loom_iter_var *ci = &cb->iter_vars[i], *di = &db->iter_vars[i];
    int64_t ce, de;
    if (ci->kind != di->kind)
      return mismatch(m, "iter var '%s' of block '%s' is %s where the "
                         "description's '%s' is %s", ci->var->name, cb->name,
                      ci->kind == LOOM_ITER_REDUCE ? "a reduction" : "not a reduction",
                      di->var->name,
                      di->kind == LOOM_ITER_REDUCE ? "a reduction" : "not");
    if (!loom_ir_is_const_int(di->dom.extent, &de) ||
        !loom_ir_is_const_int(ci->dom.extent, &ce) || ce != de)
      return mismatch(m, "iter var '%s' of block '%s' ranges over %s values "
                         "where the description's '%s' ranges over %s",
                      ci->var->name, cb->name, show(m, ci->dom.extent),
                      di->var->name, show(m, di->dom.extent));
    if (!same_value(m, c->u.realize.iter_values[i], NULL,
                    d->u.realize.iter_values[i]))
      return m->is_nomem
                 ? false
                 : mismatch(m, "iter var '%s' of block '%s' is bound to %s "
                               "where the description binds '%s' to %s",
                            ci->var->name, cb->name,
                            show(m, c->u.realize.iter_values[i]),
                            di->var->name,
                            show(m, d->u.realize.iter_values[i]));
  }
  for (int i = 0; i < cb->n_iter_vars; i++) {
    int64_t lo, e;
    const loom_iter_var *ci = &cb->iter_vars[i];
    if (loom_ir_is_const_int(ci->dom.min, &lo) &&
        loom_ir_is_const_int(ci->dom.extent, &e) && e > 0 &&
        loom_arith_bind(m->ctx, ci->var, lo, lo + e - 1, NULL) != LOOM_OK)
      m->is_nomem = true;
    if (m->is_nomem || !map_var(m, db->iter_vars[i].var, ci->var))
      return false;
  }
  const loom_expr *cp = c->u.realize.predicate, *dp = d->u.realize.predicate;
  int64_t v;
  bool c_true = !cp || (loom_ir_is_const_int(cp, &v) && v);
  bool d_true = !dp || (loom_ir_is_const_int(dp, &v) && v);
  if (c_true != d_true)
    return mismatch(m, "block '%s' %s a predicate where the description's "
                       "block '%s' %s", cb->name, c_true ? "has no" : "has",
                    db->name, d_true ? "has none" : "has one");
  if (!c_true && !match_expr(m, (loom_expr *)cp, (loom_expr *)dp))
    return false;
  if (!cb->init != !db->init)
    return mismatch(m, "block '%s' %s an init where the description's block "
                       "'%s' %s", cb->name, cb->init ? "has" : "has no",
                    db->name, db->init ? "has one" : "has none");
  if (cb->init && !match_stmt(m, cb->init, db->init))
    return false;
  if (cb->n_alloc_buffers || db->n_alloc_buffers || cb->n_match_buffers ||
      db->n_match_buffers)
    return mismatch(m, "block '%s' or the description's block '%s' allocates "
                       "or matches buffers, which tensorize does not match",
                    cb->name, db->name);
  return match_stmt(m, cb->body, db->body);
}

static bool match_stmt(matcher *m, const loom_stmt *c, const loom_stmt *d) {
  if (c->kind != d->kind)
    return mismatch(m, "the block has a %s statement where the description "
                       "has a %s statement", loom_stmt_kind_name(c->kind),
                    loom_stmt_kind_name(d->kind));
  switch (c->kind) {
  case LOOM_STMT_FOR:
    return match_loop(m, c, d);
  case LOOM_STMT_BLOCK_REALIZE:
    return match_realize(m, c, d);
  case LOOM_STMT_STORE:
    return match_access(m, c->u.store.buffer, c->u.store.indices,
                        c->u.store.n_indices, d->u.store.buffer,
                        d->u.store.indices, d->u.store.n_indices) &&
           match_expr(m, c->u.store.value, d->u.store.value);
  case LOOM_STMT_SEQ:
    if (c->u.seq.n_stmts != d->u.seq.n_stmts)
      return mismatch(m, "the block has a sequence of %d statements where "
                         "the description has %d", c->u.seq.n_stmts,
                      d->u.seq.n_stmts);
    for (int i = 0; i < c->u.seq.n_stmts; i++)
      if (!match_stmt(m, c->u.seq.stmts[i], d->u.seq.stmts[i]))
        return false;
    return true;
  case LOOM_STMT_IF:
    if (!c->u.if_.else_case != !d->u.if_.else_case)
      return mismatch(m, "an if statement of the block and the "
                         "description's differ in having an else branch");
    return match_expr(m, c->u.if_.cond, d->u.if_.cond) &&
           match_stmt(m, c->u.if_.then_case, d->u.if_.then_case) &&
           (!c->u.if_.else_case ||
            match_stmt(m, c->u.if_.else_case, d->u.if_.else_case));
  case LOOM_STMT_EVALUATE:
    return match_expr(m, c->u.evaluate.value, d->u.evaluate.value);
  case LOOM_STMT_LET:
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_COUNT_: break;
  }
  return mismatch(m, "tensorize does not match %s statements",
                  loom_stmt_kind_name(c->kind));
}

static bool has_region(const loom_buffer_region *r, int n,
                       const loom_buffer *b) {
  for (int i = 0; i < n; i++)
    if (r[i].buffer == b)
      return true;
  return false;
}

/* The description's root regions against the block's: the same buffers, the
 * written ones written, with the same extents and corners. A block with an
 * init need not list what it writes among its reads (the reader leaves it
 * out); the description has no init and does. */
static bool match_regions(matcher *m, const loom_block *droot) {
  for (int w = 0; w < 2; w++) {
    const loom_buffer_region *dr = w ? droot->writes : droot->reads;
    int n = w ? droot->n_writes : droot->n_reads;
    for (int i = 0; i < n; i++) {
      const buf_pair *p = find_desc(m, dr[i].buffer);
      if (!p)
        return mismatch(m, "the description %s '%s', which its body never "
                           "accesses", w ? "writes" : "reads",
                        dr[i].buffer->name);
      const loom_block *b = m->block;
      bool is_there = w ? has_region(b->writes, b->n_writes, p->cur)
                        : has_region(b->reads, b->n_reads, p->cur) ||
                              (b->init &&
                               has_region(b->writes, b->n_writes, p->cur));
      if (!is_there)
        return mismatch(m, "block '%s' does not %s '%s' as the description "
                           "%s its '%s'", b->name, w ? "write" : "read",
                        p->cur->name, w ? "writes" : "reads", p->desc->name);
      if (dr[i].n_ranges != p->desc->ndim)
        return mismatch(m, "the description's region of '%s' has the wrong "
                           "rank", p->desc->name);
      for (int k = 0; k < dr[i].n_ranges; k++) {
        const loom_range *cr = &p->region->ranges[k + p->offset];
        if (!same_value(m, cr->extent, NULL, dr[i].ranges[k].extent) ||
            !same_value(m, cr->min, cr->min, dr[i].ranges[k].min))
          return m->is_nomem
                     ? false
                     : mismatch(m, "the block's region of '%s' spans %s "
                                   "elements in dimension %d where the "
                                   "description's '%s' spans %s",
                                p->cur->name, show(m, cr->extent),
                                k + p->offset, p->desc->name,
                                show(m, dr[i].ranges[k].extent));
      }
    }
  }
  for (int i = 0; i < m->block->n_writes; i++) {
    const buf_pair *p = find_cur(m, m->block->writes[i].buffer);
    if (!p || !has_region(droot->writes, droot->n_writes, p->desc))
      return mismatch(m, "block '%s' writes '%s', which the description "
                         "does not write", m->block->name,
                      m->block->writes[i].buffer->name);
  }
  for (int i = 0; i < m->block->n_reads; i++)
    if (!find_cur(m, m->block->reads[i].buffer))
      return mismatch(m, "block '%s' reads '%s', which the description does "
                         "not", m->block->name,
                      m->block->reads[i].buffer->name);
  return true;
}

/* The block with its body replaced by the implementation's, the
 * implementation's buffers viewing the regions their description buffers
 * matched (TVM's match_buffer regions: the corner, the implementation's
 * extents, single elements in the leading dimensions). */
static loom_block *splice(matcher *m, const loom_func *impl) {
  loom_arena *a = m->a;
  const loom_block *ib = impl->body->u.realize.block;
  const loom_block *b = m->block;
  int n = b->n_match_buffers + impl->n_params;
  loom_match_buffer *mb = loom_arena_alloc(a, (size_t)n * sizeof *mb);
  loom_block *nb = loom_arena_alloc(a, sizeof *nb);
  if (!mb || !nb)
    return NULL;
  if (b->n_match_buffers)
    memcpy(mb, b->match_buffers, (size_t)b->n_match_buffers * sizeof *mb);
  for (int i = 0; i < impl->n_params; i++) {
    loom_buffer *view = impl->params[i].buffer;
    const buf_pair *p = find_desc(m, m->desc->params[i].buffer);
    loom_range *rs = loom_arena_alloc(a, (size_t)p->cur->ndim * sizeof *rs);
    if (!rs)
      return NULL;
    const loom_buffer_region *ir = block_region(ib, view);
    for (int k = 0; k < p->cur->ndim; k++) {
      loom_expr *lo = p->region->ranges[k].min;
      loom_expr *ext = k < p->offset ? NULL
                       : ir ? ir->ranges[k - p->offset].extent
                            : view->shape[k - p->offset];
      rs[k].min = lo;
      rs[k].extent = ext ? widen(a, ext, lo->dtype) : loom_ir_int(a, lo->dtype, 1);
      if (!rs[k].extent)
        return NULL;
    }
    mb[b->n_match_buffers + i] =
        (loom_match_buffer){view, {p->cur, rs, p->cur->ndim}};
  }
  *nb = *b;
  nb->body = ib->body;
  nb->match_buffers = mb;
  nb->n_match_buffers = n;
  if (ib->n_alloc_buffers) {
    int na = b->n_alloc_buffers + ib->n_alloc_buffers;
    loom_buffer **al = loom_arena_alloc(a, (size_t)na * sizeof *al);
    if (!al)
      return NULL;
    for (int i = 0; i < na; i++)
      al[i] = i < b->n_alloc_buffers ? b->alloc_buffers[i]
                                     : ib->alloc_buffers[i - b->n_alloc_buffers];
    nb->alloc_buffers = al;
    nb->n_alloc_buffers = na;
  }
  return nb;
}

/* The block to tensorize: the block input, or the outer block blockize
 * makes of the loop input. */
static loom_status target_block(sched_call *c, bool keep_unit, sched_path *p) {
  bool is_loop;
  TRY(sched_input_target(c, 0, p, &is_loop));
  if (!is_loop)
    return LOOM_OK;
  int func = p->func;
  sched_path_free(p);
  loom_tval attr = loom_tval_bool(keep_unit);
  sched_call sub = *c;
  sub.attrs = &attr;
  sub.n_attrs = 1;
  sub.outs = NULL;
  sub.n_outs = sub.cap_outs = 0;
  loom_status st = sched_apply_blockize(&sub);
  const char *name = st == LOOM_OK && sub.n_outs == 1 ? sub.outs[0].block : NULL;
  if (name) {
    c->mod = sub.mod;
    p->func = func;
    if (!sched_find_block(c->mod->funcs[func], name, p))
      st = sched_nomem(c);
  }
  free(sub.outs);
  return st;
}

loom_status sched_apply_tensorize(sched_call *c) {
  if (c->n_attrs < 1 || c->attrs[0].kind != LOOM_TV_STR)
    return sched_fail(c, "missing the tensor intrinsic's name");
  const char *name = c->attrs[0].s;
  bool keep_unit = c->n_attrs < 2 || c->attrs[1].i != 0;
  const loom_sched_intrin *t = loom_sched_intrin_get(c->s->intrins, name);
  if (!t)
    return sched_fail(c, "no tensor intrinsic is named '%s'", name);
  sched_path p = {0};
  loom_status st = target_block(c, keep_unit, &p);
  if (st != LOOM_OK) {
    sched_path_free(&p);
    return st;
  }
  loom_arena *a = sched_arena(c->s);
  loom_arena *scratch = loom_arena_new();
  matcher *m = calloc(1, sizeof *m);
  const loom_func *desc = NULL, *impl = NULL;
  if (!scratch || !m || !(m->ctx = loom_arith_ctx_new())) {
    st = sched_nomem(c);
    goto done;
  }
  if ((st = sched_intrin_read(t, false, scratch, &desc, c->d)) != LOOM_OK ||
      (st = sched_intrin_read(t, true, a, &impl, c->d)) != LOOM_OK)
    goto done;
  const loom_stmt *rl = p.stmts[p.n - 1];
  const loom_stmt *droot = desc->body;
  m->a = a;
  m->block = rl->u.realize.block;
  m->desc = desc;
  bool ok = match_stmt(m, m->block->body, droot->u.realize.block->body) &&
            match_regions(m, droot->u.realize.block);
  for (int i = 0; ok && i < desc->n_params; i++)
    if (!find_desc(m, desc->params[i].buffer))
      ok = mismatch(m, "the description never accesses its parameter '%s'",
                    desc->params[i].buffer->name);
  if (m->is_nomem) {
    st = sched_nomem(c);
    goto done;
  }
  if (!ok) {
    st = sched_fail(c, "block '%s' does not match tensor intrinsic '%s': %s",
                    m->block->name, name, m->why);
    goto done;
  }
  loom_block *nb = splice(m, impl);
  loom_stmt *nr = nb ? loom_arena_alloc(a, sizeof *nr) : NULL;
  if (!nr) {
    st = sched_nomem(c);
    goto done;
  }
  *nr = *rl;
  nr->u.realize.block = nb;
  if (!(c->mod = sched_replace(a, c->mod, &p, p.n - 1, nr)))
    st = sched_nomem(c);
done:
  if (m)
    loom_arith_ctx_free(m->ctx);
  free(m);
  loom_arena_free(scratch);
  sched_path_free(&p);
  return st;
}

loom_status loom_sched_tensorize(loom_sched *s, loom_sched_rv block_or_loop,
                                 const char *intrin, bool preserve_unit_iters,
                                 loom_diag *d) {
  loom_tval in = loom_tval_rv(block_or_loop);
  loom_tval attrs[2] = {loom_tval_str(intrin),
                        loom_tval_bool(preserve_unit_iters)};
  loom_loc nowhere = {0};
  return loom_sched_apply(s, LOOM_INST_TENSORIZE, &in, 1, attrs, 2,
                          loom_tval_none(), nowhere, NULL, NULL, d);
}
