/* Structural hashing of TensorIR, consistent with equal.c: programs equal up
 * to renaming hash equal. The hash is a function of the IR alone, the same on
 * every machine and build, because tuning databases key workloads by it.
 *
 * The program is read as a stream of 64-bit tokens in the order equal.c
 * compares fields, each folded in with the splitmix64 finalizer (Steele, Lea
 * and Flood, "Fast splittable pseudorandom number generators", 2014).
 * Variables and buffers are tokens of their first-sight number (de Bruijn
 * style), never addresses or names; doubles are their IEEE bit patterns as
 * integers, strings their bytes, so byte order never enters. Node kinds and
 * intrinsics enter by name; the small enums of ir.h (dtype codes, loop, iter
 * and value kinds) by number, so those are append-only. Changing what a
 * token means changes every stored hash: bump HASH_VERSION when you do, and
 * the golden values in tests/ir/test_hash.c will say so too. */
#include "ir/walk.h"
#include "loom/ir.h"

#include <stdlib.h>
#include <string.h>

#define HASH_VERSION 1

/* Tags that start each kind of record in the stream. Values are part of the
 * hash: append, never renumber. */
enum {
  T_NULL = 1,
  T_VAR_NEW,
  T_VAR_REF,
  T_BUFFER_NEW,
  T_BUFFER_REF,
  T_EXPR,
  T_STMT,
  T_BLOCK,
  T_TRUE_PREDICATE,
  T_PREDICATE,
  T_ZERO_OFFSET,
  T_INIT,
  T_NO_INIT,
  T_DICT,
  T_VALUE,
  T_FUNC,
  T_MODULE,
  T_STR,
  T_PARAM_BUFFER,
  T_PARAM_SCALAR,
};

/* Node kinds enter the hash by name, not by their place in the .def tables,
 * so adding a kind anywhere in a table leaves old hashes valid. */
static const char *const expr_kind_names[] = {
#define X(name, spelling, cls) #name,
#include "loom/ir_exprs.def"
#undef X
};

static const char *const stmt_kind_names[] = {
#define X(name, what) #name,
#include "loom/ir_stmts.def"
#undef X
};

typedef struct hasher {
  uint64_t h;
  /* Tokens of kind names, computed on first use; 0 until then. */
  uint64_t expr_kind[LOOM_EXPR_COUNT_];
  uint64_t stmt_kind[LOOM_STMT_COUNT_];
  uint64_t op[LOOM_OP_COUNT_];
  loom_ptrmap index; /* variable or buffer -> first-sight number */
  int n_seen;
  const loom_expr **work;
  int n_work, cap_work;
  bool has_failed; /* out of memory: the result is meaningless */
} hasher;

static void hash_expr(hasher *h, const loom_expr *e);
static void hash_stmt(hasher *h, const loom_stmt *s);
static void hash_value(hasher *h, const loom_value *v);

/* ---- the token stream ---------------------------------------------------- */

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static void absorb(hasher *h, uint64_t x) {
  h->h = mix64(h->h ^ x) + UINT64_C(0x9E3779B97F4A7C15);
}

static void absorb_int(hasher *h, int64_t x) { absorb(h, (uint64_t)x); }

static void absorb_dtype(hasher *h, loom_dtype t) {
  absorb(h, (uint64_t)t.code | (uint64_t)t.bits << 8 | (uint64_t)t.lanes << 16);
}

/* FNV-1a 64 over the bytes of s; *n gets the length. */
static uint64_t fnv1a(const char *s, size_t *n) {
  uint64_t f = UINT64_C(0xCBF29CE484222325);
  size_t i = 0;
  for (; s[i]; i++)
    f = (f ^ (unsigned char)s[i]) * UINT64_C(0x100000001B3);
  *n = i;
  return f;
}

/* The bytes and the length, so "ab","c" and "a","bc" differ. */
static void absorb_str(hasher *h, const char *s) {
  if (!s) {
    absorb(h, T_NULL);
    return;
  }
  size_t n;
  uint64_t f = fnv1a(s, &n);
  absorb(h, T_STR);
  absorb(h, (uint64_t)n);
  absorb(h, f);
}

/* A kind as the token of its name; out-of-range kinds (malformed IR) are
 * tokens of their number. */
static void absorb_kind(hasher *h, uint64_t *cache, const char *const *names,
                        unsigned count, unsigned k) {
  if (k >= count) {
    absorb(h, k);
    return;
  }
  if (!cache[k]) {
    size_t n;
    cache[k] = fnv1a(names[k], &n) | 1;
  }
  absorb(h, cache[k]);
}

static void absorb_expr_kind(hasher *h, loom_expr_kind k) {
  absorb_kind(h, h->expr_kind, expr_kind_names, LOOM_EXPR_COUNT_, (unsigned)k);
}

static void absorb_stmt_kind(hasher *h, loom_stmt_kind k) {
  absorb_kind(h, h->stmt_kind, stmt_kind_names, LOOM_STMT_COUNT_, (unsigned)k);
}

static void absorb_op(hasher *h, loom_op op) {
  if ((unsigned)op >= LOOM_OP_COUNT_) {
    absorb(h, (uint64_t)op);
    return;
  }
  if (!h->op[op]) {
    size_t n;
    h->op[op] = fnv1a(loom_op_table[op].name, &n) | 1;
  }
  absorb(h, h->op[op]);
}

/* Equality calls every NaN equal and tells 0.0 from -0.0 by bits. */
static void absorb_float(hasher *h, double x) {
  uint64_t u = UINT64_C(0x7FF8000000000000);
  if (x == x)
    memcpy(&u, &x, sizeof u);
  absorb(h, u);
}

static void hasher_init(hasher *h) {
  memset(h, 0, sizeof *h);
  h->h = mix64(HASH_VERSION);
}

static void hasher_free(hasher *h) {
  loom_ptrmap_free(&h->index);
  free(h->work);
}

/* 0 is kept for "could not hash" (out of memory). */
static uint64_t hasher_result(const hasher *h) {
  if (h->has_failed)
    return 0;
  return h->h ? h->h : 1;
}

/* ---- variables and buffers ----------------------------------------------- */

/* has_pointee as in equal.c's eq_var. */
static void hash_var(hasher *h, const loom_var *v, bool has_pointee) {
  if (!v) {
    absorb(h, T_NULL);
    return;
  }
  int i = loom_ptrmap_get(&h->index, v);
  if (i >= 0) {
    absorb(h, T_VAR_REF);
    absorb(h, (uint64_t)i);
    return;
  }
  absorb(h, T_VAR_NEW);
  if (loom_ptrmap_put(&h->index, v, h->n_seen++))
    h->has_failed = true;
  absorb_dtype(h, v->dtype);
  if (!has_pointee || v->dtype.code != LOOM_DT_HANDLE)
    return;
  absorb_dtype(h, v->elem);
  absorb_str(h, walk_var_scope(v));
}

static void hash_exprs(hasher *h, loom_expr *const *xs, int n) {
  absorb_int(h, n);
  for (int i = 0; i < n; i++)
    hash_expr(h, xs ? xs[i] : NULL);
}

static void hash_buffer(hasher *h, const loom_buffer *b) {
  if (!b) {
    absorb(h, T_NULL);
    return;
  }
  int i = loom_ptrmap_get(&h->index, b);
  if (i >= 0) {
    absorb(h, T_BUFFER_REF);
    absorb(h, (uint64_t)i);
    return;
  }
  absorb(h, T_BUFFER_NEW);
  if (loom_ptrmap_put(&h->index, b, h->n_seen++))
    h->has_failed = true;
  absorb_dtype(h, b->dtype);
  absorb_int(h, b->ndim);
  absorb_str(h, walk_buffer_scope(b));
  absorb_int(h, walk_buffer_align(b));
  absorb_int(h, walk_buffer_offset_factor(b));
  absorb(h, b->is_auto_broadcast);
  int n_sep = b->axis_separators ? b->n_axis_separators : 0;
  absorb_int(h, n_sep);
  for (int k = 0; k < n_sep; k++)
    absorb_int(h, b->axis_separators[k]);
  hash_var(h, b->data, false);
  for (int k = 0; k < b->ndim; k++)
    hash_expr(h, b->shape ? b->shape[k] : NULL);
  hash_exprs(h, b->strides, b->strides ? b->n_strides : 0);
  if (walk_is_zero_offset(b->elem_offset))
    absorb(h, T_ZERO_OFFSET);
  else
    hash_expr(h, b->elem_offset);
}

/* ---- expressions --------------------------------------------------------- */

/* One node without its operands. */
static void hash_expr_node(hasher *h, const loom_expr *e) {
  if (!e) {
    absorb(h, T_NULL);
    return;
  }
  absorb(h, T_EXPR);
  absorb_expr_kind(h, e->kind);
  absorb_dtype(h, e->dtype);
  switch (e->kind) {
  case LOOM_EXPR_INT: absorb_int(h, e->u.int_value); break;
  case LOOM_EXPR_FLOAT: absorb_float(h, e->u.float_value); break;
  case LOOM_EXPR_STR: absorb_str(h, e->u.str); break;
  case LOOM_EXPR_VAR: hash_var(h, e->u.var, true); break;
  case LOOM_EXPR_LOAD:
    hash_buffer(h, e->u.load.buffer);
    absorb_int(h, e->u.load.n_indices);
    break;
  case LOOM_EXPR_CALL:
    absorb_op(h, e->u.call.op);
    absorb_int(h, e->u.call.n_args);
    break;
  case LOOM_EXPR_LET: hash_var(h, e->u.let.var, true); break;
  case LOOM_EXPR_RAMP: absorb_int(h, e->u.ramp.lanes); break;
  case LOOM_EXPR_BROADCAST: absorb_int(h, e->u.broadcast.lanes); break;
  default: break;
  }
}

/* Pre-order with an explicit stack; reentrant for the buffer a load meets. */
static void hash_expr(hasher *h, const loom_expr *e) {
  int base = h->n_work;
  const loom_expr **w = walk_grow(h->work, &h->cap_work, base + 1, sizeof *w);
  if (!w) {
    h->has_failed = true;
    return;
  }
  h->work = w;
  h->work[h->n_work++] = e;
  while (h->n_work > base) {
    const loom_expr *x = h->work[--h->n_work];
    hash_expr_node(h, x);
    int n = walk_expr_arity(x);
    w = walk_grow(h->work, &h->cap_work, h->n_work + n, sizeof *w);
    if (!w) {
      h->has_failed = true;
      h->n_work = base;
      return;
    }
    h->work = w;
    for (int i = n; i-- > 0;)
      h->work[h->n_work++] = walk_expr_operand(x, i);
  }
}

/* ---- attributes and values ----------------------------------------------- */

/* Keyed entries in key order, as equality compares them. */
static void hash_attrs(hasher *h, const loom_attr *attrs, int n) {
  if (!attrs)
    n = 0;
  walk_order o;
  const int *idx = walk_order_attrs(&o, attrs, n);
  if (!idx) {
    h->has_failed = true;
    return;
  }
  absorb(h, T_DICT);
  absorb_int(h, n);
  for (int k = 0; k < n; k++) {
    absorb_str(h, attrs[idx[k]].key);
    hash_value(h, attrs[idx[k]].value);
  }
  walk_order_free(&o);
}

static void hash_dict_value(hasher *h, const loom_value *v) {
  int n = v->keys ? v->n_items : 0;
  walk_order o;
  const int *idx = walk_order_dict(&o, v);
  if (!idx) {
    h->has_failed = true;
    return;
  }
  absorb(h, T_DICT);
  absorb_int(h, n);
  for (int k = 0; k < n; k++) {
    absorb_str(h, v->keys[idx[k]]);
    hash_value(h, v->items ? v->items[idx[k]] : NULL);
  }
  walk_order_free(&o);
}

/* A missing value is None, as in equality. */
static void hash_value(hasher *h, const loom_value *v) {
  loom_value_kind k = v ? v->kind : LOOM_VALUE_NONE;
  absorb(h, T_VALUE);
  absorb(h, (uint64_t)k);
  switch (k) {
  case LOOM_VALUE_NONE: break;
  case LOOM_VALUE_EXPR: hash_expr(h, v->expr); break;
  case LOOM_VALUE_STR: absorb_str(h, v->str); break;
  case LOOM_VALUE_LIST:
    absorb_int(h, v->n_items);
    for (int i = 0; i < v->n_items; i++)
      hash_value(h, v->items ? v->items[i] : NULL);
    break;
  case LOOM_VALUE_DICT: hash_dict_value(h, v); break;
  }
}

/* ---- statements and blocks ----------------------------------------------- */

static void hash_range(hasher *h, const loom_range *r) {
  hash_expr(h, r->min);
  hash_expr(h, r->extent);
}

static void hash_region(hasher *h, const loom_buffer_region *r) {
  hash_buffer(h, r->buffer);
  int n = r->ranges ? r->n_ranges : 0;
  absorb_int(h, n);
  for (int i = 0; i < n; i++)
    hash_range(h, &r->ranges[i]);
}

static void hash_regions(hasher *h, const loom_buffer_region *rs, int n) {
  absorb_int(h, n);
  for (int i = 0; i < n; i++)
    hash_region(h, &rs[i]);
}

/* In equal.c's eq_block_head order. */
static void hash_block_head(hasher *h, const loom_block *b) {
  absorb_int(h, b->n_iter_vars);
  for (int i = 0; i < b->n_iter_vars; i++) {
    const loom_iter_var *iv = &b->iter_vars[i];
    hash_var(h, iv->var, true);
    hash_range(h, &iv->dom);
    absorb(h, (uint64_t)iv->kind);
  }
  absorb_int(h, b->n_alloc_buffers);
  for (int i = 0; i < b->n_alloc_buffers; i++)
    hash_buffer(h, b->alloc_buffers[i]);
  absorb_int(h, b->n_match_buffers);
  for (int i = 0; i < b->n_match_buffers; i++) {
    hash_buffer(h, b->match_buffers[i].buffer);
    hash_region(h, &b->match_buffers[i].source);
  }
  hash_regions(h, b->reads, b->n_reads);
  hash_regions(h, b->writes, b->n_writes);
  hash_attrs(h, b->annotations, b->n_annotations);
  if (!b->init) {
    absorb(h, T_NO_INIT);
    return;
  }
  absorb(h, T_INIT);
  hash_stmt(h, b->init);
}

/* Returns the block's body, which the caller's chain hashes next. */
static const loom_stmt *hash_realize(hasher *h, const loom_stmt *s,
                                     bool *has_tail) {
  const loom_block *b = s->u.realize.block;
  if (!b) {
    absorb(h, T_NULL);
    return NULL;
  }
  absorb(h, T_BLOCK);
  absorb_str(h, b->name);
  hash_exprs(h, s->u.realize.iter_values, s->u.realize.n_iter_values);
  if (walk_is_true(s->u.realize.predicate)) {
    absorb(h, T_TRUE_PREDICATE);
  } else {
    absorb(h, T_PREDICATE);
    hash_expr(h, s->u.realize.predicate);
  }
  hash_block_head(h, b);
  *has_tail = true;
  return b->body;
}

/* Hashes one statement; returns its last child, with *has_tail set, when the
 * caller should go on with it. */
static const loom_stmt *hash_stmt_node(hasher *h, const loom_stmt *s,
                                       bool *has_tail) {
  *has_tail = true;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    hash_var(h, s->u.loop.var, true);
    hash_expr(h, s->u.loop.min);
    hash_expr(h, s->u.loop.extent);
    absorb(h, (uint64_t)s->u.loop.kind);
    absorb_str(h, s->u.loop.thread);
    hash_attrs(h, s->u.loop.annotations, s->u.loop.n_annotations);
    return s->u.loop.body;
  case LOOM_STMT_BLOCK_REALIZE:
    *has_tail = false;
    return hash_realize(h, s, has_tail);
  case LOOM_STMT_STORE:
    hash_buffer(h, s->u.store.buffer);
    hash_expr(h, s->u.store.value);
    hash_exprs(h, s->u.store.indices, s->u.store.n_indices);
    break;
  case LOOM_STMT_IF:
    hash_expr(h, s->u.if_.cond);
    hash_stmt(h, s->u.if_.then_case);
    return s->u.if_.else_case;
  case LOOM_STMT_SEQ: {
    int n = s->u.seq.stmts ? s->u.seq.n_stmts : 0;
    absorb_int(h, n);
    for (int i = 0; i + 1 < n; i++)
      hash_stmt(h, s->u.seq.stmts[i]);
    if (n > 0)
      return s->u.seq.stmts[n - 1];
    break;
  }
  case LOOM_STMT_EVALUATE: hash_expr(h, s->u.evaluate.value); break;
  case LOOM_STMT_LET:
    hash_var(h, s->u.let.var, true);
    hash_expr(h, s->u.let.value);
    return s->u.let.body;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    hash_buffer(h, s->u.alloc.buffer);
    return s->u.alloc.body;
  case LOOM_STMT_ATTR:
    absorb_str(h, s->u.attr.key);
    hash_value(h, s->u.attr.node);
    hash_expr(h, s->u.attr.value);
    return s->u.attr.body;
  case LOOM_STMT_ASSERT:
    hash_expr(h, s->u.assert_.cond);
    hash_expr(h, s->u.assert_.message);
    return s->u.assert_.body;
  case LOOM_STMT_COUNT_: break;
  }
  *has_tail = false;
  return NULL;
}

/* Follows last children iteratively, so long chains cost no C stack. A
 * missing last child is a NULL token, as a missing statement anywhere. */
static void hash_stmt(hasher *h, const loom_stmt *s) {
  for (;;) {
    if (!s) {
      absorb(h, T_NULL);
      return;
    }
    absorb(h, T_STMT);
    absorb_stmt_kind(h, s->kind);
    bool has_tail;
    const loom_stmt *next = hash_stmt_node(h, s, &has_tail);
    if (!has_tail)
      return;
    s = next;
  }
}

/* ---- functions and modules ----------------------------------------------- */

/* Parameters, then their buffers, as equal.c's eq_params. The name is left
 * out: equality of lone functions ignores it. */
static void hash_func_into(hasher *h, const loom_func *f) {
  if (!f) {
    absorb(h, T_NULL);
    return;
  }
  absorb(h, T_FUNC);
  absorb_int(h, f->n_params);
  for (int i = 0; i < f->n_params; i++) {
    const loom_param *p = &f->params[i];
    absorb(h, p->buffer ? T_PARAM_BUFFER : T_PARAM_SCALAR);
    hash_var(h, p->var, !p->buffer);
  }
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer)
      hash_buffer(h, f->params[i].buffer);
  absorb_dtype(h, f->ret_type);
  hash_attrs(h, f->attrs, f->n_attrs);
  hash_stmt(h, f->body);
}

uint64_t loom_ir_hash_func(const loom_func *f) {
  hasher h;
  hasher_init(&h);
  hash_func_into(&h, f);
  uint64_t r = hasher_result(&h);
  hasher_free(&h);
  return r;
}

uint64_t loom_ir_hash_expr(const loom_expr *e) {
  hasher h;
  hasher_init(&h);
  hash_expr(&h, e);
  uint64_t r = hasher_result(&h);
  hasher_free(&h);
  return r;
}

static uint64_t hash_name(const char *name) {
  hasher h;
  hasher_init(&h);
  absorb_str(&h, name);
  return h.h;
}

/* Functions are combined by a sum of their mixed (name, hash) pairs, which
 * does not depend on the order they are listed in. */
uint64_t loom_ir_hash_module(const loom_module *m) {
  hasher h;
  hasher_init(&h);
  absorb(&h, T_MODULE);
  if (!m) {
    absorb(&h, T_NULL);
    return hasher_result(&h);
  }
  uint64_t sum = 0;
  for (int i = 0; i < m->n_funcs; i++) {
    const loom_func *f = m->funcs[i];
    uint64_t hf = loom_ir_hash_func(f);
    if (hf == 0)
      h.has_failed = true;
    sum += mix64(hf ^ mix64(hash_name(f ? f->name : NULL)));
  }
  absorb_int(&h, m->n_funcs);
  absorb(&h, sum);
  for (int i = 0; i < m->n_graphs; i++) {
    const loom_graph *g = m->graphs[i];
    absorb(&h, hash_name(g->name));
    absorb_int(&h, g->n_params);
    for (int k = 0; k < g->n_calls; k++)
      absorb(&h, hash_name(g->calls[k].func));
  }
  hash_attrs(&h, m->attrs, m->n_attrs);
  uint64_t r = hasher_result(&h);
  hasher_free(&h);
  return r;
}
