/* te.create_prim_func: compute stages to TensorIR, one block per stage in
 * dependence order, as TVM builds them (iter vars "v_<axis>" bound to their
 * loops one to one, reductions with T.init(), intermediate stages allocated
 * in the root block, reads and writes inferred). */
#include "te_impl.h"

#include <string.h>

typedef struct pf_ctx {
  loom_te *te;
  loom_arena *a;
  loom_te_tensor *const *args;
  int n_args;
  loom_te_tensor *order[TE_MAX_TENSORS]; /* stages, producers first */
  int n_order;
  bool is_visiting[TE_MAX_TENSORS];
  const char *names[TE_MAX_TENSORS]; /* block names, by position in order */
  loom_diag *d;
} pf_ctx;

static int tensor_index(const loom_te *te, const loom_te_tensor *t) {
  for (int i = 0; i < te->n_tensors; i++)
    if (te->tensors[i] == t)
      return i;
  return -1;
}

static bool is_placed(const pf_ctx *c, const loom_te_tensor *t) {
  for (int i = 0; i < c->n_order; i++)
    if (c->order[i] == t)
      return true;
  return false;
}

static loom_status visit(pf_ctx *c, loom_te_tensor *t);

/* Visits the producers of every tensor e reads, in the order e reads them. */
static loom_status visit_expr(pf_ctx *c, const loom_expr *e) {
  if (!e)
    return LOOM_OK;
  switch (e->kind) {
  case LOOM_EXPR_LOAD: {
    for (int i = 0; i < e->u.load.n_indices; i++)
      TRY(visit_expr(c, e->u.load.indices[i]));
    loom_te_tensor *t = te_find_tensor(c->te, e->u.load.buffer);
    if (!t)
      return loom_diag_error(c->d, (loom_loc){0},
                             "buffer '%s' is not a tensor of this definition",
                             e->u.load.buffer->name);
    return visit(c, t);
  }
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      TRY(visit_expr(c, e->u.call.args[i]));
    return LOOM_OK;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    return visit_expr(c, e->u.unary.a);
  case LOOM_EXPR_SELECT:
    TRY(visit_expr(c, e->u.select.cond));
    TRY(visit_expr(c, e->u.select.t));
    return visit_expr(c, e->u.select.f);
  case LOOM_EXPR_LET:
    TRY(visit_expr(c, e->u.let.value));
    return visit_expr(c, e->u.let.body);
  case LOOM_EXPR_RAMP:
    TRY(visit_expr(c, e->u.ramp.base));
    return visit_expr(c, e->u.ramp.stride);
  case LOOM_EXPR_BROADCAST:
    return visit_expr(c, e->u.broadcast.value);
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
  case LOOM_EXPR_VAR:
    return LOOM_OK;
  default:
    TRY(visit_expr(c, e->u.bin.a));
    return visit_expr(c, e->u.bin.b);
  }
}

/* Post-order depth-first walk from the outputs: a stage comes after every
 * stage it reads, as TVM's CollectOrderedOps orders them. */
static loom_status visit(pf_ctx *c, loom_te_tensor *t) {
  if (t->n_outputs > 1)
    t = t->outputs[0]; /* a stage with several outputs is placed once */
  if (is_placed(c, t))
    return LOOM_OK;
  int i = tensor_index(c->te, t);
  if (i < 0)
    return loom_diag_error(c->d, (loom_loc){0},
                           "a tensor of another definition was given");
  if (c->is_visiting[i])
    return loom_diag_error(c->d, (loom_loc){0},
                           "tensor '%s' depends on itself", t->buffer->name);
  c->is_visiting[i] = true;
  if (t->is_compute && t->reduce) {
    for (int k = 0; k < (t->reduce->comm ? t->reduce->comm->n : 1); k++)
      TRY(visit_expr(c, t->reduce->srcs[k]));
    TRY(visit_expr(c, t->reduce->where));
  } else if (t->is_compute) {
    TRY(visit_expr(c, t->body));
  }
  c->is_visiting[i] = false;
  c->order[c->n_order++] = t;
  return LOOM_OK;
}

static bool is_arg(const pf_ctx *c, const loom_te_tensor *t) {
  for (int i = 0; i < c->n_args; i++)
    if (c->args[i] == t)
      return true;
  return false;
}

static loom_expr *identity(loom_te *te, loom_te_reducer r, loom_dtype t) {
  switch (r) {
  case LOOM_TE_SUM: return loom_te_const(te, t, 0);
  case LOOM_TE_PROD: return loom_te_const(te, t, 1);
  case LOOM_TE_MAX: return loom_te_min_value(te, t);
  case LOOM_TE_MIN: return loom_te_max_value(te, t);
  }
  return NULL;
}

static loom_expr *combine(loom_arena *a, loom_te_reducer r, loom_expr *x,
                          loom_expr *y) {
  static const loom_expr_kind kinds[] = {
      [LOOM_TE_SUM] = LOOM_EXPR_ADD, [LOOM_TE_MAX] = LOOM_EXPR_MAX,
      [LOOM_TE_MIN] = LOOM_EXPR_MIN, [LOOM_TE_PROD] = LOOM_EXPR_MUL};
  return loom_ir_binary(a, kinds[r], x, y);
}

static loom_stmt *store(loom_arena *a, loom_buffer *b, loom_expr *v,
                        loom_expr **idx, int n) {
  loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_STORE, (loom_loc){0});
  if (!s || !v)
    return NULL;
  s->u.store.buffer = b;
  s->u.store.value = v;
  s->u.store.indices = idx;
  s->u.store.n_indices = n;
  return s;
}

static void sort_attrs(loom_attr *attrs, int n) {
  for (int i = 1; i < n; i++) {
    loom_attr x = attrs[i];
    int j = i - 1;
    while (j >= 0 && strcmp(attrs[j].key, x.key) > 0) {
      attrs[j + 1] = attrs[j];
      j--;
    }
    attrs[j + 1] = x;
  }
}

static loom_stmt *seq(loom_arena *a, loom_stmt **stmts, int n) {
  if (n == 1)
    return stmts[0];
  loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_SEQ, (loom_loc){0});
  if (!s)
    return NULL;
  s->u.seq.stmts = stmts;
  s->u.seq.n_stmts = n;
  return s;
}

/* The init and body of a tuple reduction, as TVM's create_prim_func makes
 * them: the init stores every identity; the body binds each combined value
 * to a let variable "v_<output>", all computed from the old values, and
 * then stores them (with one value, the result is stored directly). The
 * combiner's lhs variables become loads of the outputs, its rhs variables
 * the sources. from / to map the stage's axes to the block iter vars. */
static loom_status tuple_reduction(pf_ctx *c, const loom_te_tensor *t,
                                   loom_block *b, loom_var **from,
                                   loom_expr **to, int n, loom_expr **idx,
                                   int ns) {
  loom_arena *a = c->a;
  const loom_te_comm_reducer *cr = t->reduce->comm;
  int nv = cr->n;
  loom_var **vars = loom_arena_alloc(a, sizeof *vars * (size_t)(2 * nv + n));
  loom_expr **vals = loom_arena_alloc(a, sizeof *vals * (size_t)(2 * nv + n));
  loom_stmt **inits = loom_arena_alloc(a, sizeof *inits * (size_t)nv);
  loom_stmt **stores = loom_arena_alloc(a, sizeof *stores * (size_t)nv);
  loom_var **lets = loom_arena_alloc(a, sizeof *lets * (size_t)nv);
  if (!vars || !vals || !inits || !stores || !lets)
    return LOOM_NOMEM;
  for (int i = 0; i < nv; i++) {
    loom_buffer *buf = t->outputs[i]->buffer;
    vars[i] = cr->lhs[i];
    vals[i] = loom_ir_load(a, buf, idx, ns);
    vars[nv + i] = cr->rhs[i];
    vals[nv + i] = loom_ir_substitute_expr(a, t->reduce->srcs[i], from, to, n);
    inits[i] = store(a, buf, loom_ir_substitute_expr(a, cr->identity[i], from,
                                                     to, n),
                     idx, ns);
    if (!vals[i] || !vals[nv + i] || !inits[i])
      return LOOM_NOMEM;
  }
  for (int i = 0; i < n; i++) {
    vars[2 * nv + i] = from[i];
    vals[2 * nv + i] = to[i];
  }
  for (int i = 0; i < nv; i++) {
    loom_buffer *buf = t->outputs[i]->buffer;
    loom_expr *v = nv == 1 ? loom_ir_substitute_expr(a, cr->result[i], vars,
                                                     vals, 2 * nv + n)
                           : NULL;
    if (nv > 1) {
      const char *name = loom_arena_printf(a, "v_%s", buf->name);
      lets[i] = name ? loom_ir_var(a, name, buf->dtype) : NULL;
      v = lets[i] ? loom_ir_ref(a, lets[i]) : NULL;
    }
    if (!(stores[i] = store(a, buf, v, idx, ns)))
      return LOOM_NOMEM;
  }
  b->init = seq(a, inits, nv);
  b->body = seq(a, stores, nv);
  for (int i = nv - 1; i >= 0 && nv > 1 && b->body; i--) {
    loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_LET, (loom_loc){0});
    if (!s)
      return LOOM_NOMEM;
    s->u.let.var = lets[i];
    s->u.let.value = loom_ir_substitute_expr(a, cr->result[i], vars, vals,
                                             2 * nv + n);
    s->u.let.body = b->body;
    b->body = s->u.let.value ? s : NULL;
  }
  return b->init && b->body ? LOOM_OK : LOOM_NOMEM;
}

/* The block of one compute stage inside its loop nest. */
static loom_status stage_nest(pf_ctx *c, const loom_te_tensor *t,
                              const char *name, loom_buffer *const *outer,
                              int n_outer, loom_stmt **out) {
  loom_arena *a = c->a;
  const te_reduce *r = t->reduce;
  int ns = t->buffer->ndim, nr = r ? r->n_axes : 0, n = ns + nr;
  loom_block *b = loom_ir_block(a, name);
  if (!b)
    return LOOM_NOMEM;
  loom_var **from = loom_arena_alloc(a, sizeof *from * (size_t)(n + 1));
  loom_expr **to = loom_arena_alloc(a, sizeof *to * (size_t)(n + 1));
  loom_var **loops = loom_arena_alloc(a, sizeof *loops * (size_t)(n + 1));
  loom_expr **idx = loom_arena_alloc(a, sizeof *idx * (size_t)(ns + 1));
  loom_expr **bind = loom_arena_alloc(a, sizeof *bind * (size_t)(n + 1));
  b->iter_vars = loom_arena_alloc(a, sizeof *b->iter_vars * (size_t)(n + 1));
  if (!from || !to || !loops || !idx || !bind || !b->iter_vars)
    return LOOM_NOMEM;
  b->n_iter_vars = n;
  for (int i = 0; i < n; i++) {
    loom_var *axis = i < ns ? t->axes[i] : r->axes[i - ns];
    loom_expr *extent = i < ns ? t->buffer->shape[i]
                               : te_axis_extent(c->te, axis);
    loom_expr *min = i < ns ? loom_te_int(c->te, 0) : te_axis_min(c->te, axis);
    loom_iter_var *iv = &b->iter_vars[i];
    const char *ivname = loom_arena_printf(a, "v_%s", axis->name);
    iv->var = ivname ? loom_ir_var(a, ivname, LOOM_INT32) : NULL;
    iv->dom.min = min;
    iv->dom.extent = extent;
    iv->kind = i < ns ? LOOM_ITER_SPATIAL : LOOM_ITER_REDUCE;
    loops[i] = loom_ir_var(a, axis->name, LOOM_INT32);
    from[i] = axis;
    to[i] = loom_ir_ref(a, iv->var);
    bind[i] = loom_ir_ref(a, loops[i]);
    if (i < ns)
      idx[i] = to[i];
    if (!iv->var || !loops[i] || !to[i] || !bind[i] || !iv->dom.min)
      return LOOM_NOMEM;
  }
  /* A reduce axis whose range depends on the stage's indices would need
   * TVM's nested blocks; it is reported instead. Substitution hands back
   * the same node when nothing in it changes. */
  for (int i = ns; i < n; i++) {
    loom_range *dom = &b->iter_vars[i].dom;
    if (loom_ir_substitute_expr(a, dom->min, from, to, ns) != dom->min ||
        loom_ir_substitute_expr(a, dom->extent, from, to, ns) != dom->extent)
      return loom_diag_error(c->d, (loom_loc){0},
                             "the range of reduce axis '%s' of stage '%s' "
                             "depends on the stage's indices; give it a "
                             "range that does not and a where= condition",
                             from[i]->name, name);
  }
  if (r && r->comm) {
    TRY(tuple_reduction(c, t, b, from, to, n, idx, ns));
  } else if (r) {
    loom_expr *src = loom_ir_substitute_expr(a, r->src, from, to, n);
    loom_expr *cur = loom_ir_load(a, t->buffer, idx, ns);
    b->init = store(a, t->buffer, identity(c->te, r->reducer, src ? src->dtype
                                                                  : LOOM_INT32),
                    idx, ns);
    b->body = store(a, t->buffer, combine(a, r->reducer, cur, src), idx, ns);
    if (!b->init)
      return LOOM_NOMEM;
  } else {
    b->body = store(a, t->buffer,
                    loom_ir_substitute_expr(a, t->body, from, to, n), idx, ns);
  }
  if (r && r->where && b->body) {
    loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_IF, (loom_loc){0});
    if (!s)
      return LOOM_NOMEM;
    s->u.if_.cond = loom_ir_substitute_expr(a, r->where, from, to, n);
    s->u.if_.then_case = b->body;
    b->body = s->u.if_.cond ? s : NULL;
  }
  if (!b->body)
    return LOOM_NOMEM;
  if (t->n_attrs) {
    b->annotations = loom_arena_dup(a, t->attrs,
                                    sizeof *t->attrs * (size_t)t->n_attrs);
    if (!b->annotations)
      return LOOM_NOMEM;
    b->n_annotations = t->n_attrs;
    sort_attrs(b->annotations, b->n_annotations);
  }
  TRY(loom_ir_infer_block_regions(a, b, true, true, outer, n_outer, c->d));
  loom_stmt *s = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, (loom_loc){0});
  if (!s)
    return LOOM_NOMEM;
  s->u.realize.block = b;
  s->u.realize.iter_values = bind;
  s->u.realize.n_iter_values = n;
  for (int i = n - 1; i >= 0; i--) {
    loom_stmt *l = loom_ir_stmt(a, LOOM_STMT_FOR, (loom_loc){0});
    if (!l)
      return LOOM_NOMEM;
    l->u.loop.var = loops[i];
    l->u.loop.min = b->iter_vars[i].dom.min;
    l->u.loop.extent = b->iter_vars[i].dom.extent;
    l->u.loop.kind = LOOM_FOR_SERIAL;
    l->u.loop.body = s;
    s = l;
  }
  *out = s;
  return LOOM_OK;
}

/* The function's attributes: "global_symbol", then, when a stage marks
 * placeholders among the arguments free to re-layout, "layout_free_buffers"
 * with their parameter positions (stages in order, as TVM collects them),
 * then "tir.noalias". */
static loom_status func_attrs(pf_ctx *c, loom_func *f) {
  loom_arena *a = c->a;
  loom_value **items = loom_arena_alloc(a, sizeof *items * (size_t)(c->n_args + 1));
  f->attrs = loom_arena_alloc(a, sizeof *f->attrs * 3);
  if (!items || !f->attrs)
    return LOOM_NOMEM;
  int n = 0;
  for (int i = 0; i < c->n_order; i++)
    for (int k = 0; k < c->order[i]->n_layout_free; k++)
      for (int j = 0; j < c->n_args; j++) {
        bool is_listed = false;
        for (int m = 0; m < n; m++)
          is_listed |= items[m]->expr->u.int_value == j;
        if (c->args[j] != c->order[i]->layout_free[k] || is_listed)
          continue;
        if (!(items[n++] = loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT32, j))))
          return LOOM_NOMEM;
      }
  f->n_attrs = 0;
  f->attrs[f->n_attrs].key = "global_symbol";
  f->attrs[f->n_attrs++].value = loom_ir_value_str(a, "main");
  if (n) {
    loom_value *list = loom_arena_alloc(a, sizeof *list);
    if (!list)
      return LOOM_NOMEM;
    list->kind = LOOM_VALUE_LIST;
    list->items = items;
    list->n_items = n;
    f->attrs[f->n_attrs].key = "layout_free_buffers";
    f->attrs[f->n_attrs++].value = list;
  }
  f->attrs[f->n_attrs].key = "tir.noalias";
  f->attrs[f->n_attrs++].value =
      loom_ir_value_expr(a, loom_ir_int(a, LOOM_BOOL, 1));
  for (int i = 0; i < f->n_attrs; i++)
    if (!f->attrs[i].value)
      return LOOM_NOMEM;
  return LOOM_OK;
}

/* Block names are unique: a stage named like an earlier one gets the first
 * free suffix "_1", "_2", ..., as TVM names them. */
static const char *unique_name(pf_ctx *c, int i) {
  const char *base = c->order[i]->op_name ? c->order[i]->op_name
                                          : c->order[i]->buffer->name;
  const char *name = base;
  for (int k = 1;; k++) {
    bool is_taken = false;
    for (int j = 0; j < i && !is_taken; j++)
      is_taken = c->order[j]->is_compute && c->names[j] &&
                 !strcmp(c->names[j], name);
    if (!is_taken)
      break;
    name = loom_arena_printf(c->a, "%s_%d", base, k);
    if (!name)
      return NULL;
  }
  c->names[i] = name;
  return name;
}

static loom_status build(pf_ctx *c, loom_func **out) {
  loom_arena *a = c->a;
  for (int i = 0; i < c->n_args; i++) {
    if (!c->args[i])
      return loom_diag_error(c->d, (loom_loc){0}, "argument %d is missing", i);
    for (int j = 0; j < i; j++)
      if (c->args[j] == c->args[i])
        return loom_diag_error(c->d, (loom_loc){0},
                               "tensor '%s' is given twice",
                               c->args[i]->buffer->name);
  }
  for (int i = 0; i < c->n_args; i++)
    TRY(visit(c, c->args[i]));
  int n_bufs = 0;
  for (int i = 0; i < c->n_order; i++)
    n_bufs += loom_te_n_outputs(c->order[i]);
  loom_buffer **outer =
      loom_arena_alloc(a, sizeof *outer * (size_t)(n_bufs + 1));
  loom_buffer **allocs =
      loom_arena_alloc(a, sizeof *allocs * (size_t)(n_bufs + 1));
  loom_stmt **nests =
      loom_arena_alloc(a, sizeof *nests * (size_t)(c->n_order + 1));
  if (!outer || !allocs || !nests)
    return LOOM_NOMEM;
  int n_outer = 0, n_allocs = 0, n_nests = 0;
  for (int i = 0; i < c->n_order; i++) {
    for (int k = 0; k < loom_te_n_outputs(c->order[i]); k++) {
      loom_te_tensor *t = loom_te_output(c->order[i], k);
      outer[n_outer++] = t->buffer;
      if (is_arg(c, t))
        continue;
      if (!t->is_compute)
        return loom_diag_error(c->d, (loom_loc){0},
                               "placeholder '%s' is read but is not among the "
                               "arguments of create_prim_func",
                               t->buffer->name);
      allocs[n_allocs++] = t->buffer;
    }
  }
  for (int i = 0; i < c->n_order; i++) {
    if (!c->order[i]->is_compute)
      continue;
    const char *name = unique_name(c, i);
    if (!name)
      return LOOM_NOMEM;
    TRY(stage_nest(c, c->order[i], name, outer, n_outer, &nests[n_nests++]));
  }
  if (n_nests == 0)
    return loom_diag_error(c->d, (loom_loc){0},
                           "no compute stage among the arguments");
  loom_block *root = loom_ir_block(a, "root");
  loom_stmt *rs = loom_ir_stmt(a, LOOM_STMT_BLOCK_REALIZE, (loom_loc){0});
  loom_stmt *body = nests[0];
  if (n_nests > 1) {
    body = loom_ir_stmt(a, LOOM_STMT_SEQ, (loom_loc){0});
    if (!body)
      return LOOM_NOMEM;
    body->u.seq.stmts = nests;
    body->u.seq.n_stmts = n_nests;
  }
  loom_func *f = loom_ir_func(a, "main");
  loom_param *params =
      loom_arena_alloc(a, sizeof *params * (size_t)(c->n_args + 1));
  if (!root || !rs || !f || !params)
    return LOOM_NOMEM;
  root->body = body;
  root->alloc_buffers = n_allocs ? allocs : NULL;
  root->n_alloc_buffers = n_allocs;
  rs->u.realize.block = root;
  for (int i = 0; i < c->n_args; i++) {
    params[i].buffer = c->args[i]->buffer;
    params[i].var = loom_ir_var(a, c->args[i]->buffer->name, LOOM_HANDLE);
    if (!params[i].var)
      return LOOM_NOMEM;
  }
  f->params = params;
  f->n_params = c->n_args;
  f->body = rs;
  TRY(func_attrs(c, f));
  TRY(loom_ir_verify_func(f, c->d));
  *out = f;
  return LOOM_OK;
}

loom_status loom_te_create_prim_func(loom_te *te, loom_te_tensor *const *args,
                                     int n_args, loom_func **out,
                                     loom_diag *d) {
  if (loom_arena_status(te->arena) != LOOM_OK) {
    loom_diag_error(d, (loom_loc){0}, "out of memory");
    return LOOM_NOMEM;
  }
  if (te->error)
    return loom_diag_error(d, (loom_loc){0}, "%s", te->error);
  if (n_args < 1 || n_args > TE_MAX_TENSORS)
    return loom_diag_error(d, (loom_loc){0},
                           "create_prim_func takes 1 to %d tensors, not %d",
                           TE_MAX_TENSORS, n_args);
  pf_ctx *c = loom_arena_alloc(te->arena, sizeof *c);
  if (!c)
    return LOOM_NOMEM;
  c->te = te;
  c->a = te->arena;
  c->args = args;
  c->n_args = n_args;
  c->d = d;
  loom_status s = build(c, out);
  if (s == LOOM_NOMEM || loom_arena_status(te->arena) != LOOM_OK) {
    loom_diag_error(d, (loom_loc){0}, "out of memory");
    return LOOM_NOMEM;
  }
  return s;
}
