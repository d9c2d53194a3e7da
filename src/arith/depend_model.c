/* The polyhedral model of a function for dependence analysis: a walk over
 * its statements that turns every buffer store into an isl statement (its
 * domain: the enclosing loops' ranges, if conditions, block predicates and
 * the reduction-init condition), its accesses into isl maps, written in
 * isl's text syntax from the TensorIR expressions with block iterators
 * replaced by their bindings. What is not quasi-affine is widened and the
 * reason kept, so the model over-approximates and never misses an access. */
#include "arith/depend.h"
#include "loom/script.h"

#include <stdlib.h>
#include <string.h>

typedef struct subst {
  const loom_var *var;
  loom_expr *value;
} subst;

typedef struct view {
  const loom_buffer *view, *source;
} view;

/* A block around the statements, or a buffer private to the instances of
 * the loops around its allocation. */
typedef struct scope {
  const void *what;
  int depth;
} scope;

typedef struct walk {
  loom_arith_deps *deps;
  loom_arith_ctx *actx; /* constant loop and iterator ranges, to simplify */
  int *stack;           /* loop ids */
  int n_stack, cap_stack;
  int *ordinals;        /* textual position at each depth */
  int n_ord, cap_ord;
  int next_ordinal;
  subst *substs;
  int n_substs, cap_substs;
  const char **conds; /* isl constraints in force */
  int n_conds, cap_conds;
  loom_expr **cond_reads; /* loads of the conditions in force */
  int n_cond_reads, cap_cond_reads;
  const loom_var **lets; /* let variables: not affine */
  int n_lets, cap_lets;
  view *views;
  int n_views, cap_views;
  const loom_var **params;
  int n_params, cap_params;
  scope *blocks;
  int n_blocks, cap_blocks;
  scope *privates; /* buffers allocated under loops */
  int n_privates, cap_privates;
  const loom_buffer **visible; /* by data pointer, for opaque calls */
  int n_visible, cap_visible;
  const char *why; /* the first thing dropped for the current statement */
} walk;

void *dep_push(void **items, int *n, int *cap, size_t size) {
  if (*n == *cap) {
    int c = *cap ? *cap * 2 : 8;
    void *p = realloc(*items, (size_t)c * size);
    if (!p)
      return NULL;
    *items = p;
    *cap = c;
  }
  char *slot = (char *)*items + (size_t)(*n)++ * size;
  memset(slot, 0, size);
  return slot;
}

#define PUSH(arr, n, cap) dep_push((void **)&(arr), &(n), &(cap), sizeof *(arr))

static void note(walk *w, const char *what, const loom_expr *e, loom_loc loc) {
  loom_buf *b = &w->deps->assumptions;
  loom_buf_printf(b, "%d:%d: ", loc.line, loc.col);
  loom_buf_puts(b, what);
  if (e) {
    loom_buf_puts(b, ": ");
    loom_script_print_expr(e, b);
  }
  loom_buf_putc(b, '\n');
}

/* ---- quasi-affine expressions in isl syntax ------------------------------- */

static int find_loop(const walk *w, const loom_var *v) {
  for (int i = w->n_stack - 1; i >= 0; i--)
    if (w->deps->loops[w->stack[i]].var == v)
      return w->stack[i];
  return -1;
}

static loom_expr *find_subst(const walk *w, const loom_var *v) {
  for (int i = w->n_substs - 1; i >= 0; i--)
    if (w->substs[i].var == v)
      return w->substs[i].value;
  return NULL;
}

static bool is_let(const walk *w, const loom_var *v) {
  for (int i = 0; i < w->n_lets; i++)
    if (w->lets[i] == v)
      return true;
  return false;
}

static int param_id(walk *w, const loom_var *v) {
  for (int i = 0; i < w->n_params; i++)
    if (w->params[i] == v)
      return i;
  const loom_var **slot = PUSH(w->params, w->n_params, w->cap_params);
  if (!slot)
    return -1;
  *slot = v;
  return w->n_params - 1;
}

static bool emit_affine(walk *w, loom_expr *e, loom_buf *out, int depth);

static bool emit_var(walk *w, loom_expr *e, loom_buf *out, int depth) {
  const loom_var *v = e->u.var;
  int id = find_loop(w, v);
  if (id >= 0) {
    loom_buf_printf(out, "i%d", id);
    return true;
  }
  loom_expr *value = find_subst(w, v);
  if (value)
    return emit_affine(w, value, out, depth + 1);
  if (is_let(w, v))
    return false;
  int p = param_id(w, v);
  if (p < 0) {
    w->deps->has_failed = true;
    return false;
  }
  loom_buf_printf(out, "p%d", p);
  return true;
}

/* Writes e in isl syntax; false when it is not quasi-affine in the loops
 * and the function's parameters. */
static bool emit_affine(walk *w, loom_expr *e, loom_buf *out, int depth) {
  if (!e || depth > 64 || e->dtype.lanes != 1 || !loom_dtype_is_int(e->dtype))
    return false;
  int64_t c;
  loom_expr *x = e->u.bin.a, *y = e->u.bin.b;
  switch (e->kind) {
  case LOOM_EXPR_INT:
    loom_buf_printf(out, "%lld", (long long)e->u.int_value);
    return true;
  case LOOM_EXPR_VAR: return emit_var(w, e, out, depth);
  case LOOM_EXPR_CAST: return emit_affine(w, e->u.unary.a, out, depth + 1);
  case LOOM_EXPR_ADD:
  case LOOM_EXPR_SUB:
    loom_buf_putc(out, '(');
    if (!emit_affine(w, x, out, depth + 1))
      return false;
    loom_buf_puts(out, e->kind == LOOM_EXPR_ADD ? ") + (" : ") - (");
    if (!emit_affine(w, y, out, depth + 1))
      return false;
    loom_buf_putc(out, ')');
    return true;
  case LOOM_EXPR_MUL:
    if (!loom_ir_is_const_int(x, &c) && !loom_ir_is_const_int(y, &c))
      return false;
    loom_buf_printf(out, "%lld * (", (long long)c);
    if (!emit_affine(w, loom_ir_is_const_int(x, NULL) ? y : x, out, depth + 1))
      return false;
    loom_buf_putc(out, ')');
    return true;
  case LOOM_EXPR_FLOORDIV:
  case LOOM_EXPR_FLOORMOD:
    if (!loom_ir_is_const_int(y, &c) || c <= 0)
      return false;
    loom_buf_puts(out, e->kind == LOOM_EXPR_FLOORDIV ? "floor((" : "((");
    if (!emit_affine(w, x, out, depth + 1))
      return false;
    loom_buf_printf(out, e->kind == LOOM_EXPR_FLOORDIV ? ") / %lld)" : ") mod %lld)",
                    (long long)c);
    return true;
  default:
    return false;
  }
}

static loom_expr *simplify(walk *w, loom_expr *e) {
  loom_expr *s = loom_arith_simplify(w->deps->arena, w->actx, e);
  if (!s)
    w->deps->has_failed = true;
  return s ? s : e;
}

/* A condition in isl syntax (negated when is_negated); false when some part
 * is not affine. */
static bool emit_cond(walk *w, loom_expr *e, bool is_negated, loom_buf *out,
                      int depth) {
  if (!e || depth > 64)
    return false;
  static const char *const cmp[] = {"=", "!=", "<", "<=", ">", ">="};
  static const int negation[] = {1, 0, 5, 4, 3, 2};
  int64_t v;
  switch (e->kind) {
  case LOOM_EXPR_INT:
    loom_ir_is_const_int(e, &v);
    loom_buf_puts(out, (v != 0) != is_negated ? "0 = 0" : "1 = 0");
    return true;
  case LOOM_EXPR_NOT: return emit_cond(w, e->u.unary.a, !is_negated, out, depth + 1);
  case LOOM_EXPR_AND:
  case LOOM_EXPR_OR: {
    bool is_and = (e->kind == LOOM_EXPR_AND) != is_negated;
    loom_buf_putc(out, '(');
    if (!emit_cond(w, e->u.bin.a, is_negated, out, depth + 1))
      return false;
    loom_buf_puts(out, is_and ? ") and (" : ") or (");
    if (!emit_cond(w, e->u.bin.b, is_negated, out, depth + 1))
      return false;
    loom_buf_putc(out, ')');
    return true;
  }
  default: break;
  }
  if (e->kind < LOOM_EXPR_EQ || e->kind > LOOM_EXPR_GE)
    return false;
  int k = (int)(e->kind - LOOM_EXPR_EQ);
  if (is_negated)
    k = negation[k];
  loom_buf lhs, rhs;
  loom_buf_init(&lhs);
  loom_buf_init(&rhs);
  bool is_ok = emit_affine(w, e->u.bin.a, &lhs, depth + 1) &&
               emit_affine(w, e->u.bin.b, &rhs, depth + 1);
  if (is_ok && k == 1) /* a != b */
    loom_buf_printf(out, "(%s < %s or %s > %s)", lhs.data, rhs.data, lhs.data,
                    rhs.data);
  else if (is_ok)
    loom_buf_printf(out, "%s %s %s", lhs.data, cmp[k], rhs.data);
  loom_buf_free(&lhs);
  loom_buf_free(&rhs);
  return is_ok;
}

static bool push_cond_text(walk *w, const char *text) {
  const char **slot = PUSH(w->conds, w->n_conds, w->cap_conds);
  const char *copy = loom_arena_strdup(w->deps->arena, text);
  if (!slot || !copy) {
    w->deps->has_failed = true;
    return false;
  }
  *slot = copy;
  return true;
}

/* Pushes cond (or its negation) as a constraint; when it is not affine,
 * pushes nothing (all instances kept) and notes why. Returns how many
 * constraints were pushed. */
static int push_cond(walk *w, loom_expr *cond, bool is_negated, loom_loc loc) {
  loom_buf b;
  loom_buf_init(&b);
  bool is_ok = emit_cond(w, simplify(w, cond), is_negated, &b, 0) && !b.has_failed;
  int n = is_ok && push_cond_text(w, b.data) ? 1 : 0;
  if (!is_ok) {
    note(w, "condition is not affine; both branches are assumed to run", cond, loc);
    if (!w->why)
      w->why = "a condition that is not affine is assumed to hold";
  }
  loom_buf_free(&b);
  return n;
}

/* ---- reads ------------------------------------------------------------------ */

static void collect_loads(walk *w, loom_expr *e, loom_expr ***out, int *n,
                          int *cap, int depth) {
  if (!e || depth > 256)
    return;
  switch (e->kind) {
  case LOOM_EXPR_LOAD: {
    loom_expr **slot = dep_push((void **)out, n, cap, sizeof **out);
    if (!slot) {
      w->deps->has_failed = true;
      return;
    }
    *slot = e;
    for (int i = 0; i < e->u.load.n_indices; i++)
      collect_loads(w, e->u.load.indices[i], out, n, cap, depth + 1);
    return;
  }
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      collect_loads(w, e->u.call.args[i], out, n, cap, depth + 1);
    return;
  case LOOM_EXPR_SELECT:
    collect_loads(w, e->u.select.cond, out, n, cap, depth + 1);
    collect_loads(w, e->u.select.t, out, n, cap, depth + 1);
    collect_loads(w, e->u.select.f, out, n, cap, depth + 1);
    return;
  case LOOM_EXPR_LET:
    collect_loads(w, e->u.let.value, out, n, cap, depth + 1);
    collect_loads(w, e->u.let.body, out, n, cap, depth + 1);
    return;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST: collect_loads(w, e->u.unary.a, out, n, cap, depth + 1); return;
  case LOOM_EXPR_RAMP:
    collect_loads(w, e->u.ramp.base, out, n, cap, depth + 1);
    collect_loads(w, e->u.ramp.stride, out, n, cap, depth + 1);
    return;
  case LOOM_EXPR_BROADCAST:
    collect_loads(w, e->u.broadcast.value, out, n, cap, depth + 1);
    return;
  default:
    if (e->kind >= LOOM_EXPR_ADD && e->kind <= LOOM_EXPR_OR) {
      collect_loads(w, e->u.bin.a, out, n, cap, depth + 1);
      collect_loads(w, e->u.bin.b, out, n, cap, depth + 1);
    }
  }
}

/* ---- statements and accesses ------------------------------------------------ */

static void emit_params(walk *w, loom_buf *b) {
  loom_buf_putc(b, '[');
  for (int i = 0; i < w->n_params; i++)
    loom_buf_printf(b, "%sp%d", i ? ", " : "", i);
  loom_buf_puts(b, "] -> ");
}

static void emit_tuple(walk *w, int stmt, loom_buf *b) {
  loom_buf_printf(b, "S%d[", stmt);
  for (int i = 0; i < w->n_stack; i++)
    loom_buf_printf(b, "%si%d", i ? ", " : "", w->stack[i]);
  loom_buf_putc(b, ']');
}

static void *read_isl(walk *w, loom_buf *body, bool is_map) {
  loom_buf b;
  loom_buf_init(&b);
  emit_params(w, &b);
  loom_buf_puts(&b, body->data ? body->data : "{ }");
  void *r = NULL;
  if (!b.has_failed && !body->has_failed)
    r = is_map ? (void *)isl_map_read_from_str(w->deps->ctx, b.data)
               : (void *)isl_set_read_from_str(w->deps->ctx, b.data);
  if (!r)
    w->deps->has_failed = true;
  loom_buf_free(&b);
  return r;
}

static const loom_buffer *resolve_view(const walk *w, const loom_buffer *b,
                                       bool *is_view) {
  *is_view = false;
  for (int i = w->n_views - 1; i >= 0; i--)
    if (w->views[i].view == b) {
      *is_view = true;
      b = w->views[i].source;
    }
  return b;
}

/* An access of statement stmt; opaque (a reason) makes it touch any
 * element, as a call that is handed the buffer's pointer may. */
static void add_access(walk *w, int stmt, loom_buffer *buffer,
                       loom_expr **indices, int n_indices, bool is_write,
                       loom_loc loc, const char *opaque) {
  loom_arith_deps *deps = w->deps;
  dep_access *acc = PUSH(deps->accesses, deps->n_accesses, deps->cap_accesses);
  if (!acc) {
    deps->has_failed = true;
    return;
  }
  bool is_view;
  const loom_buffer *target = resolve_view(w, buffer, &is_view);
  *acc = (dep_access){.stmt = stmt, .buffer = target, .is_write = is_write,
                      .indices = indices, .n_indices = n_indices,
                      .written_buffer = buffer};
  int ndim = target->ndim;
  loom_buf body, bounds;
  loom_buf_init(&body);
  loom_buf_init(&bounds);
  loom_buf_puts(&body, "{ ");
  emit_tuple(w, stmt, &body);
  /* The range is named after the buffer, so different buffers never meet. */
  acc->buffer_id = deps->n_accesses - 1;
  for (int i = 0; i < deps->n_accesses - 1; i++)
    if (deps->accesses[i].buffer == target) {
      acc->buffer_id = deps->accesses[i].buffer_id;
      break;
    }
  loom_buf_printf(&body, " -> B%d[", acc->buffer_id);
  /* A buffer allocated under loops is a fresh one in each of their
   * iterations: the iteration is part of the element's name. */
  int private_depth = 0;
  for (int i = w->n_privates - 1; i >= 0; i--)
    if (w->privates[i].what == target) {
      private_depth = w->privates[i].depth;
      break;
    }
  for (int i = 0; i < private_depth && i < w->n_stack; i++)
    loom_buf_printf(&body, "i%d, ", w->stack[i]);
  for (int k = 0; k < ndim; k++) {
    loom_buf_puts(&body, k ? ", " : "");
    loom_buf idx;
    loom_buf_init(&idx);
    bool is_affine = !is_view && !opaque && n_indices == ndim &&
                     emit_affine(w, simplify(w, indices[k]), &idx, 0) && !idx.has_failed;
    if (is_affine) {
      loom_buf_puts(&body, idx.data);
    } else {
      /* Any element of the dimension; within the shape when it is known. */
      loom_buf_printf(&body, "o%d", k);
      loom_buf shape;
      loom_buf_init(&shape);
      if (emit_affine(w, target->shape[k], &shape, 0) && !shape.has_failed)
        loom_buf_printf(&bounds, "%s0 <= o%d < %s", bounds.len ? " and " : "", k,
                        shape.data);
      loom_buf_free(&shape);
      if (!acc->why && opaque) {
        acc->why = opaque;
      } else if (!acc->why) {
        acc->why = is_view ? "an access through a match_buffer view may touch "
                             "any element of the viewed buffer"
                           : "an index that is not affine may touch any element";
        note(w, is_view ? "access through a match_buffer view"
                        : "index is not affine",
             n_indices > k ? indices[k] : NULL, loc);
      }
    }
    loom_buf_free(&idx);
  }
  loom_buf_printf(&body, "]%s%s }", bounds.len ? " : " : "",
                  bounds.data ? bounds.data : "");
  acc->map = read_isl(w, &body, true);
  if (acc->map && deps->stmts[stmt].domain)
    acc->map = isl_map_intersect_domain(acc->map,
                                        isl_set_copy(deps->stmts[stmt].domain));
  if (!acc->map)
    deps->has_failed = true;
  loom_buf_free(&body);
  loom_buf_free(&bounds);
}

/* A statement at s: its domain from the constraints in force. Returns its
 * id, or -1 when out of memory. */
static int new_stmt(walk *w, loom_stmt *s) {
  loom_arith_deps *deps = w->deps;
  dep_stmt *st = PUSH(deps->stmts, deps->n_stmts, deps->cap_stmts);
  if (!st) {
    deps->has_failed = true;
    return -1;
  }
  int id = deps->n_stmts - 1;
  st->loc = s->loc;
  st->n_blocks = w->n_blocks;
  st->blocks = loom_arena_alloc(deps->arena, (size_t)(w->n_blocks + 1) * sizeof *st->blocks);
  st->block_depths = loom_arena_alloc(deps->arena, (size_t)(w->n_blocks + 1) * sizeof(int));
  if (!st->blocks || !st->block_depths) {
    deps->has_failed = true;
    return -1;
  }
  for (int i = 0; i < w->n_blocks; i++) {
    st->blocks[i] = w->blocks[i].what;
    st->block_depths[i] = w->blocks[i].depth;
  }
  st->why = w->why;
  st->n_loops = w->n_stack;
  st->loops = loom_arena_alloc(deps->arena, (size_t)(w->n_stack + 1) * sizeof(int));
  st->ordinals = loom_arena_alloc(deps->arena, (size_t)(w->n_stack + 1) * sizeof(int));
  if (!st->loops || !st->ordinals) {
    deps->has_failed = true;
    return -1;
  }
  for (int i = 0; i < w->n_stack; i++)
    st->loops[i] = w->stack[i];
  for (int i = 0; i < w->n_stack; i++)
    st->ordinals[i] = w->ordinals[i];
  st->ordinals[w->n_stack] = w->next_ordinal++;
  if (w->n_stack > deps->max_depth)
    deps->max_depth = w->n_stack;
  loom_buf body;
  loom_buf_init(&body);
  loom_buf_puts(&body, "{ ");
  emit_tuple(w, id, &body);
  for (int i = 0; i < w->n_conds; i++)
    loom_buf_printf(&body, "%s(%s)", i ? " and " : " : ", w->conds[i]);
  loom_buf_puts(&body, " }");
  deps->stmts[id].domain = read_isl(w, &body, false);
  loom_buf_free(&body);
  return id;
}

/* The reads of the conditions in force and of e, for statement id. */
static void add_reads(walk *w, int id, loom_expr *e, loom_expr **more, int n_more,
                      loom_loc loc) {
  loom_expr **loads = NULL;
  int n_loads = 0, cap_loads = 0;
  for (int i = 0; i < w->n_cond_reads; i++) {
    loom_expr **slot = dep_push((void **)&loads, &n_loads, &cap_loads, sizeof *loads);
    if (slot)
      *slot = w->cond_reads[i];
  }
  collect_loads(w, e, &loads, &n_loads, &cap_loads, 0);
  for (int i = 0; i < n_more; i++)
    collect_loads(w, more[i], &loads, &n_loads, &cap_loads, 0);
  for (int i = 0; i < n_loads; i++)
    add_access(w, id, loads[i]->u.load.buffer, loads[i]->u.load.indices,
               loads[i]->u.load.n_indices, false, loc, NULL);
  free(loads);
}

/* A buffer store: a statement that reads its loads, then writes. */
static void add_store(walk *w, loom_stmt *s) {
  int id = new_stmt(w, s);
  if (id < 0)
    return;
  add_reads(w, id, s->u.store.value, s->u.store.indices, s->u.store.n_indices, s->loc);
  add_access(w, id, s->u.store.buffer, s->u.store.indices, s->u.store.n_indices,
             true, s->loc, NULL);
}

static const loom_buffer *buffer_of_data(const walk *w, const loom_var *data) {
  for (int i = w->n_visible - 1; i >= 0; i--)
    if (w->visible[i]->data == data)
      return w->visible[i];
  return NULL;
}

/* The buffers whose data pointers e hands out (A.data, T.tvm_access_ptr). */
static void collect_pointers(walk *w, const loom_expr *e, const loom_buffer **out,
                             int *n, int cap, int depth) {
  if (!e || depth > 256)
    return;
  if (e->kind == LOOM_EXPR_VAR) {
    const loom_buffer *b = buffer_of_data(w, e->u.var);
    for (int i = 0; b && i < *n; i++)
      if (out[i] == b)
        b = NULL;
    if (b && *n < cap)
      out[(*n)++] = b;
    return;
  }
  if (e->kind == LOOM_EXPR_CALL)
    for (int i = 0; i < e->u.call.n_args; i++)
      collect_pointers(w, e->u.call.args[i], out, n, cap, depth + 1);
  else if (e->kind == LOOM_EXPR_LET)
    collect_pointers(w, e->u.let.value, out, n, cap, depth + 1);
  else if (e->kind == LOOM_EXPR_CAST)
    collect_pointers(w, e->u.unary.a, out, n, cap, depth + 1);
}

/* T.evaluate of a call: it may read and write any element of every buffer
 * whose pointer it is handed (a tensor intrinsic, an extern kernel). */
static void add_evaluate(walk *w, loom_stmt *s) {
  const loom_buffer *bufs[16];
  int n_bufs = 0;
  collect_pointers(w, s->u.evaluate.value, bufs, &n_bufs, 16, 0);
  bool is_call = s->u.evaluate.value && s->u.evaluate.value->kind == LOOM_EXPR_CALL;
  if (n_bufs == 16 || (n_bufs == 0 && is_call))
    note(w, n_bufs ? "T.evaluate hands out too many buffers; the first 16 are modelled"
                   : "effects of T.evaluate on anything but buffers are not modelled",
         s->u.evaluate.value, s->loc);
  if (n_bufs > 0)
    note(w, "T.evaluate is assumed to read and write all of each buffer it is "
         "handed", s->u.evaluate.value, s->loc);
  int id = new_stmt(w, s);
  if (id < 0)
    return;
  add_reads(w, id, s->u.evaluate.value, NULL, 0, s->loc);
  for (int i = 0; i < n_bufs; i++) {
    const char *why = "a call handed the buffer's pointer may touch any element";
    add_access(w, id, (loom_buffer *)bufs[i], NULL, 0, false, s->loc, why);
    add_access(w, id, (loom_buffer *)bufs[i], NULL, 0, true, s->loc, why);
  }
}

static bool push_visible(walk *w, const loom_buffer *b) {
  const loom_buffer **slot = PUSH(w->visible, w->n_visible, w->cap_visible);
  if (!slot) {
    w->deps->has_failed = true;
    return false;
  }
  *slot = b;
  return true;
}

/* A T.decl_buffer over another buffer's pointer is a view of it. */
static void push_alias(walk *w, const loom_buffer *b) {
  const loom_buffer *orig = b->data ? buffer_of_data(w, b->data) : NULL;
  if (orig && orig != b) {
    view *v = PUSH(w->views, w->n_views, w->cap_views);
    if (!v) {
      w->deps->has_failed = true;
      return;
    }
    *v = (view){b, orig};
  }
  push_visible(w, b);
}

static void walk_stmt(walk *w, loom_stmt *s, int depth);

/* Loads in a condition count as reads of every statement it guards. */
static int push_cond_reads(walk *w, loom_expr *cond) {
  int before = w->n_cond_reads;
  collect_loads(w, cond, &w->cond_reads, &w->n_cond_reads, &w->cap_cond_reads, 0);
  return w->n_cond_reads - before;
}

static void walk_for(walk *w, loom_stmt *s, int depth) {
  loom_arith_deps *deps = w->deps;
  dep_loop *l = PUSH(deps->loops, deps->n_loops, deps->cap_loops);
  int *slot = PUSH(w->stack, w->n_stack, w->cap_stack);
  int *ord = PUSH(w->ordinals, w->n_ord, w->cap_ord);
  if (!l || !slot || !ord) {
    deps->has_failed = true;
    return;
  }
  int id = deps->n_loops - 1;
  *l = (dep_loop){s->u.loop.var, w->n_stack - 1};
  /* Loads in the bounds are reads of every statement inside. */
  int old_reads = w->n_cond_reads;
  push_cond_reads(w, s->u.loop.min);
  push_cond_reads(w, s->u.loop.extent);
  *slot = id;
  *ord = w->next_ordinal++;
  int64_t lo, ext;
  if (loom_ir_is_const_int(s->u.loop.min, &lo) &&
      loom_ir_is_const_int(s->u.loop.extent, &ext) && ext > 0 &&
      !__builtin_add_overflow(lo, ext - 1, &ext))
    loom_arith_bind(w->actx, s->u.loop.var, lo, ext, NULL);
  loom_buf b, m, e;
  loom_buf_init(&b);
  loom_buf_init(&m);
  loom_buf_init(&e);
  int n_pushed = 0;
  bool has_min = emit_affine(w, simplify(w, s->u.loop.min), &m, 0) && !m.has_failed;
  bool has_ext = emit_affine(w, simplify(w, s->u.loop.extent), &e, 0) && !e.has_failed;
  const char *old_why = w->why;
  if (has_min && has_ext)
    loom_buf_printf(&b, "%s <= i%d < (%s) + (%s)", m.data, id, m.data, e.data);
  else if (has_min)
    loom_buf_printf(&b, "i%d >= %s", id, m.data);
  if (!has_min || !has_ext) {
    note(w, "loop range is not affine; its bound is dropped", s->u.loop.extent, s->loc);
    w->why = w->why ? w->why : "a loop bound that is not affine is dropped";
  }
  if (b.len && push_cond_text(w, b.data))
    n_pushed = 1;
  loom_buf_free(&b);
  loom_buf_free(&m);
  loom_buf_free(&e);
  walk_stmt(w, s->u.loop.body, depth + 1);
  w->n_conds -= n_pushed;
  w->n_cond_reads = old_reads;
  w->why = old_why;
  w->n_stack--;
  w->n_ord--;
}

static bool push_subst(walk *w, const loom_var *v, loom_expr *value) {
  subst *slot = PUSH(w->substs, w->n_substs, w->cap_substs);
  if (!slot) {
    w->deps->has_failed = true;
    return false;
  }
  *slot = (subst){v, value};
  return true;
}

static void walk_block(walk *w, loom_stmt *s, int depth) {
  const loom_block *b = s->u.realize.block;
  int old_substs = w->n_substs, old_conds = w->n_conds, old_views = w->n_views;
  int old_reads = w->n_cond_reads;
  int old_blocks = w->n_blocks, old_privates = w->n_privates;
  int old_visible = w->n_visible;
  const char *old_why = w->why;
  for (int i = 0; i < b->n_iter_vars && i < s->u.realize.n_iter_values; i++) {
    const loom_iter_var *iv = &b->iter_vars[i];
    push_subst(w, iv->var, s->u.realize.iter_values[i]);
    int64_t lo, ext;
    if (loom_ir_is_const_int(iv->dom.min, &lo) &&
        loom_ir_is_const_int(iv->dom.extent, &ext) && ext > 0 &&
        !__builtin_add_overflow(lo, ext - 1, &ext))
      loom_arith_bind(w->actx, iv->var, lo, ext, NULL);
  }
  for (int i = 0; i < b->n_match_buffers; i++) {
    view *v = PUSH(w->views, w->n_views, w->cap_views);
    if (!v) {
      w->deps->has_failed = true;
      return;
    }
    *v = (view){b->match_buffers[i].buffer, b->match_buffers[i].source.buffer};
    push_visible(w, b->match_buffers[i].buffer);
  }
  for (int i = 0; i < b->n_alloc_buffers; i++)
    push_visible(w, b->alloc_buffers[i]);
  if (s->u.realize.predicate) {
    push_cond_reads(w, s->u.realize.predicate);
    push_cond(w, s->u.realize.predicate, false, s->loc);
  }
  scope *sc = PUSH(w->blocks, w->n_blocks, w->cap_blocks);
  if (!sc) {
    w->deps->has_failed = true;
    return;
  }
  *sc = (scope){b, w->n_stack};
  for (int i = 0; i < b->n_alloc_buffers; i++) {
    scope *p = PUSH(w->privates, w->n_privates, w->cap_privates);
    if (!p) {
      w->deps->has_failed = true;
      return;
    }
    *p = (scope){b->alloc_buffers[i], w->n_stack};
  }
  if (b->init) {
    /* The init runs in the instances where every reduction iterator is at
     * the start of its domain. */
    int n_init = 0;
    for (int i = 0; i < b->n_iter_vars; i++) {
      const loom_iter_var *iv = &b->iter_vars[i];
      if (iv->kind != LOOM_ITER_REDUCE)
        continue;
      loom_expr *var = loom_ir_ref(w->deps->arena, iv->var);
      loom_expr *eq = var ? loom_ir_binary(w->deps->arena, LOOM_EXPR_EQ, var, iv->dom.min)
                          : NULL;
      if (!eq) {
        w->deps->has_failed = true;
        break;
      }
      n_init += push_cond(w, eq, false, s->loc);
    }
    walk_stmt(w, b->init, depth + 1);
    w->n_conds -= n_init;
  }
  walk_stmt(w, b->body, depth + 1);
  w->n_substs = old_substs;
  w->n_conds = old_conds;
  w->n_views = old_views;
  w->n_cond_reads = old_reads;
  w->n_blocks = old_blocks;
  w->n_privates = old_privates;
  w->n_visible = old_visible;
  w->why = old_why;
}

static void walk_if(walk *w, loom_stmt *s, int depth) {
  int old_reads = w->n_cond_reads;
  const char *old_why = w->why;
  push_cond_reads(w, s->u.if_.cond);
  int n = push_cond(w, s->u.if_.cond, false, s->loc);
  walk_stmt(w, s->u.if_.then_case, depth + 1);
  w->n_conds -= n;
  w->why = old_why;
  if (s->u.if_.else_case) {
    n = push_cond(w, s->u.if_.cond, true, s->loc);
    walk_stmt(w, s->u.if_.else_case, depth + 1);
    w->n_conds -= n;
  }
  w->n_cond_reads = old_reads;
  w->why = old_why;
}

static void walk_stmt(walk *w, loom_stmt *s, int depth) {
  if (!s || w->deps->has_failed)
    return;
  if (depth > 400) {
    w->deps->has_failed = true;
    return;
  }
  switch (s->kind) {
  case LOOM_STMT_FOR: walk_for(w, s, depth); return;
  case LOOM_STMT_BLOCK_REALIZE: walk_block(w, s, depth); return;
  case LOOM_STMT_STORE: add_store(w, s); return;
  case LOOM_STMT_IF: walk_if(w, s, depth); return;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      walk_stmt(w, s->u.seq.stmts[i], depth + 1);
    return;
  case LOOM_STMT_LET: {
    const loom_var **slot = PUSH(w->lets, w->n_lets, w->cap_lets);
    if (!slot) {
      w->deps->has_failed = true;
      return;
    }
    *slot = s->u.let.var;
    walk_stmt(w, s->u.let.body, depth + 1);
    return;
  }
  case LOOM_STMT_ALLOCATE: {
    scope *p = PUSH(w->privates, w->n_privates, w->cap_privates);
    if (!p) {
      w->deps->has_failed = true;
      return;
    }
    *p = (scope){s->u.alloc.buffer, w->n_stack};
    int old_visible = w->n_visible;
    push_visible(w, s->u.alloc.buffer);
    walk_stmt(w, s->u.alloc.body, depth + 1);
    w->n_privates--;
    w->n_visible = old_visible;
    return;
  }
  case LOOM_STMT_DECL_BUFFER: {
    int old_visible = w->n_visible, old_views = w->n_views;
    push_alias(w, s->u.alloc.buffer);
    walk_stmt(w, s->u.alloc.body, depth + 1);
    w->n_visible = old_visible;
    w->n_views = old_views;
    return;
  }
  case LOOM_STMT_ATTR: walk_stmt(w, s->u.attr.body, depth + 1); return;
  case LOOM_STMT_ASSERT: walk_stmt(w, s->u.assert_.body, depth + 1); return;
  case LOOM_STMT_EVALUATE: add_evaluate(w, s); return;
  case LOOM_STMT_COUNT_: return;
  }
}

loom_status dep_build_model(loom_arith_deps *deps, loom_diag *d) {
  walk w = {.deps = deps, .actx = loom_arith_ctx_new()};
  if (!w.actx)
    return LOOM_NOMEM;
  for (int i = 0; i < deps->f->n_params; i++)
    if (deps->f->params[i].buffer)
      push_visible(&w, deps->f->params[i].buffer);
  walk_stmt(&w, deps->f->body, 0);
  free(w.stack);
  free(w.ordinals);
  free(w.substs);
  free(w.conds);
  free(w.cond_reads);
  free(w.lets);
  free(w.views);
  free(w.params);
  free(w.blocks);
  free(w.privates);
  free(w.visible);
  loom_arith_ctx_free(w.actx);
  if (deps->has_failed || deps->assumptions.has_failed) {
    loom_loc nowhere = {0};
    loom_diag_error(d, nowhere, "dependence analysis of '%s' failed: out of "
                    "memory or a model the solver rejected",
                    deps->f->name ? deps->f->name : "?");
    return LOOM_ERROR;
  }
  return LOOM_OK;
}
