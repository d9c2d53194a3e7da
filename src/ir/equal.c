/* Structural equality of TensorIR up to renaming (alpha equivalence), after
 * TVM's StructuralEqual: definitions pair the variables and buffers of the two
 * programs, and every later occurrence must agree with the pairing. The first
 * difference is reported as a path, a description and two script locations.
 *
 * Depth never costs C stack: expressions are walked with an explicit stack,
 * and a statement's last child (a loop or let body, an else branch, the last
 * statement of a sequence) is followed by iteration rather than recursion.
 * What recursion remains follows the script's own indentation, which the
 * reader bounds. hash.c visits fields in the same order with the same
 * canonical forms (walk.h); keep the two in step. Arrays are trusted to hold
 * as many items as their counts say, which loom_ir_verify_func checks. */
#include "ir/walk.h"
#include "loom/ir.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* One step of the path to the node being compared. */
typedef enum {
  SEG_NONE,  /* nothing: the caller already named the place */
  SEG_ROOT,  /* main */
  SEG_FIELD, /* .body */
  SEG_INDEX, /* .seq[1], or [1] when field is "" */
  SEG_KEY,   /* .annotations["k"], or ["k"] when field is "" */
  SEG_CALL,  /* .for(i) */
  SEG_QCALL, /* .block("C") */
} seg_style;

typedef struct seg {
  seg_style style;
  const char *field, *arg;
  int index;
} seg;

/* How an occurrence of a variable or buffer relates to its pairing. */
typedef enum {
  OCC_USE,  /* a use: two free nodes pair on first sight (map_free_vars) */
  OCC_BIND, /* a buffer field (shape, strides, offset, data): pairs on first
               sight and may meet a node seen before, as in an alias */
  OCC_DEF,  /* a binding site (parameter, loop, iter var, let, allocation):
               must not meet a pairing made by an earlier use */
} occurrence;

typedef struct pairing {
  const void *a, *b;
  bool is_buffer;
  bool is_free;    /* made by a use before any definition */
  char *first_use; /* that use's path, for the message; may be NULL */
  loom_loc loc_a, loc_b;
} pairing;

/* An operand pair waiting on the expression stack. */
typedef struct item {
  const loom_expr *a, *b;
  int depth; /* path segments between the walk's base and this operand */
  seg s;
} item;

typedef struct eq {
  loom_ptrmap map_a, map_b; /* node -> index in pairs */
  pairing *pairs;
  int n_pairs, cap_pairs;
  seg *path;
  int n_path, cap_path;
  item *work;
  int n_work, cap_work;
  loom_loc loc_a, loc_b; /* nearest enclosing statement or block */
  loom_ir_diff *diff;    /* NULL: the verdict is all that is wanted */
} eq;

static bool eq_expr(eq *q, const loom_expr *a, const loom_expr *b);
static bool eq_stmt(eq *q, const loom_stmt *a, const loom_stmt *b);
static bool eq_value(eq *q, const loom_value *a, const loom_value *b);

/* ---- paths and reports --------------------------------------------------- */

static seg field(const char *f) { return (seg){SEG_FIELD, f, NULL, 0}; }
static seg at(const char *f, int i) { return (seg){SEG_INDEX, f, NULL, i}; }
static seg key(const char *f, const char *k) { return (seg){SEG_KEY, f, k, 0}; }
static seg call(const char *f, const char *a) {
  return (seg){SEG_CALL, f, a, 0};
}
static seg qcall(const char *f, const char *a) {
  return (seg){SEG_QCALL, f, a, 0};
}

static const char *or_q(const char *s) { return s ? s : "?"; }

static bool str_same(const char *x, const char *y) {
  return x == y || (x && y && !strcmp(x, y));
}

static bool seg_same(const seg *x, const seg *y) {
  return x->style == y->style && x->index == y->index &&
         str_same(x->field, y->field) && str_same(x->arg, y->arg);
}

static void put_seg(loom_buf *b, const seg *s) {
  const char *f = or_q(s->field), *dot = f[0] ? "." : "";
  switch (s->style) {
  case SEG_NONE: break;
  case SEG_ROOT: loom_buf_puts(b, f); break;
  case SEG_FIELD: loom_buf_printf(b, ".%s", f); break;
  case SEG_INDEX: loom_buf_printf(b, "%s%s[%d]", dot, f, s->index); break;
  case SEG_KEY: loom_buf_printf(b, "%s%s[\"%s\"]", dot, f, or_q(s->arg)); break;
  case SEG_CALL: loom_buf_printf(b, ".%s(%s)", f, or_q(s->arg)); break;
  case SEG_QCALL: loom_buf_printf(b, ".%s(\"%s\")", f, or_q(s->arg)); break;
  }
}

/* Renders the path; a step repeated four or more times in a row (the left
 * spine of a long sum) is written once with its count: "(.a)x99998". */
static char *render_path(const seg *path, int n) {
  loom_buf b;
  loom_buf_init(&b);
  for (int i = 0; i < n;) {
    int run = 1;
    while (i + run < n && seg_same(&path[i], &path[i + run]))
      run++;
    if (run >= 4) {
      loom_buf_putc(&b, '(');
      put_seg(&b, &path[i]);
      loom_buf_printf(&b, ")x%d", run);
    } else {
      for (int k = 0; k < run; k++)
        put_seg(&b, &path[i]);
    }
    i += run;
  }
  loom_buf_putc(&b, '\0'); /* makes an empty path a valid "" */
  if (b.has_failed) {
    loom_buf_free(&b);
    return NULL;
  }
  return loom_buf_take(&b);
}

static char *vformat(const char *fmt, va_list ap) {
  loom_buf b;
  loom_buf_init(&b);
  loom_buf_vprintf(&b, fmt, ap);
  loom_buf_putc(&b, '\0');
  if (b.has_failed) {
    loom_buf_free(&b);
    return NULL;
  }
  return loom_buf_take(&b);
}

/* Records the first difference (path owned by the diff afterwards) and
 * returns false, so callers write `return report(...)`. */
static bool report(eq *q, char *path, loom_loc la, loom_loc lb, const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));
static bool report(eq *q, char *path, loom_loc la, loom_loc lb, const char *fmt,
                   ...) {
  if (!q->diff || q->diff->what || q->diff->path) {
    free(path);
    return false;
  }
  va_list ap;
  va_start(ap, fmt);
  q->diff->what = vformat(fmt, ap);
  va_end(ap);
  q->diff->path = path;
  q->diff->loc_a = la;
  q->diff->loc_b = lb;
  return false;
}

/* The common case: a difference at the current path. */
#define FAIL(q, ...)                                                           \
  report((q), (q)->diff ? render_path((q)->path, (q)->n_path) : NULL,          \
         (q)->loc_a, (q)->loc_b, __VA_ARGS__)

static bool nomem(eq *q) { return FAIL(q, "out of memory while comparing"); }

static bool fail_dtype(eq *q, const char *what, loom_dtype a, loom_dtype b) {
  char x[LOOM_DTYPE_STRLEN], y[LOOM_DTYPE_STRLEN];
  return FAIL(q, "%s %s vs %s", what, loom_dtype_str(a, x),
              loom_dtype_str(b, y));
}

static bool push(eq *q, seg s) {
  seg *p = walk_grow(q->path, &q->cap_path, q->n_path + 1, sizeof *p);
  if (!p)
    return nomem(q);
  q->path = p;
  p[q->n_path++] = s;
  return true;
}

static void pop(eq *q) { q->n_path--; }

static void enter_loc(loom_loc *cur, loom_loc loc) {
  if (loc.line > 0)
    *cur = loc;
}

/* ---- pairing of variables and buffers ------------------------------------ */

static const char *node_name(const void *p, bool is_buffer) {
  return or_q(is_buffer ? ((const loom_buffer *)p)->name
                        : ((const loom_var *)p)->name);
}

static bool used_before_mapped(eq *q, pairing *p) {
  const char *noun = p->is_buffer ? "buffer" : "variable";
  char *path = p->first_use;
  p->first_use = NULL;
  if (!path && q->diff)
    path = render_path(q->path, q->n_path);
  return report(q, path, p->loc_a, p->loc_b,
                "%s used before it is mapped: \"%s\" and \"%s\" are used "
                "here, before the definition that should pair them",
                noun, node_name(p->a, p->is_buffer),
                node_name(p->b, p->is_buffer));
}

/* Pairs a with b at an occurrence. *is_new tells the caller that this is
 * their first sight, when what a definition carries (dtype, buffer fields)
 * must be compared. The pairing is a bijection: neither node may already be
 * paired with a third. */
static bool pair(eq *q, const void *a, const void *b, bool is_buffer,
                 occurrence occ, bool *is_new) {
  *is_new = false;
  int ia = loom_ptrmap_get(&q->map_a, a), ib = loom_ptrmap_get(&q->map_b, b);
  if (ia >= 0 && ia == ib) {
    if (occ == OCC_DEF && q->pairs[ia].is_free)
      return used_before_mapped(q, &q->pairs[ia]);
    return true;
  }
  const char *noun = is_buffer ? "buffers" : "variables";
  if (ia >= 0)
    return FAIL(q,
                "%s do not correspond: first's \"%s\" is paired with "
                "second's \"%s\", not \"%s\"",
                noun, node_name(a, is_buffer),
                node_name(q->pairs[ia].b, is_buffer), node_name(b, is_buffer));
  if (ib >= 0)
    return FAIL(q,
                "%s do not correspond: second's \"%s\" is paired with "
                "first's \"%s\", not \"%s\"",
                noun, node_name(b, is_buffer),
                node_name(q->pairs[ib].a, is_buffer), node_name(a, is_buffer));
  pairing *ps = walk_grow(q->pairs, &q->cap_pairs, q->n_pairs + 1, sizeof *ps);
  if (!ps)
    return nomem(q);
  q->pairs = ps;
  if (loom_ptrmap_put(&q->map_a, a, q->n_pairs) ||
      loom_ptrmap_put(&q->map_b, b, q->n_pairs))
    return nomem(q);
  pairing *p = &ps[q->n_pairs++];
  *p = (pairing){a, b, is_buffer, occ == OCC_USE, NULL, q->loc_a, q->loc_b};
  if (p->is_free && q->diff)
    p->first_use = render_path(q->path, q->n_path);
  *is_new = true;
  return true;
}

/* has_pointee: compare what a handle points to. Buffer data variables skip
 * it; the buffer's own dtype and scope say the same thing. */
static bool eq_var(eq *q, const loom_var *a, const loom_var *b, occurrence occ,
                   bool has_pointee) {
  if (!a || !b)
    return a == b || FAIL(q, "%s vs %s", a ? "variable" : "no variable",
                          b ? "variable" : "no variable");
  bool is_new;
  if (!pair(q, a, b, false, occ, &is_new))
    return false;
  if (!is_new)
    return true;
  if (!loom_dtype_eq(a->dtype, b->dtype))
    return fail_dtype(q, "dtype", a->dtype, b->dtype);
  if (!has_pointee || a->dtype.code != LOOM_DT_HANDLE)
    return true;
  if (!loom_dtype_eq(a->elem, b->elem))
    return fail_dtype(q, "pointee dtype", a->elem, b->elem);
  if (strcmp(walk_var_scope(a), walk_var_scope(b)))
    return FAIL(q, "pointer scope \"%s\" vs \"%s\"", walk_var_scope(a),
                walk_var_scope(b));
  return true;
}

static bool eq_var_at(eq *q, const char *f, const loom_var *a,
                      const loom_var *b, occurrence occ, bool has_pointee) {
  if (!push(q, field(f)) || !eq_var(q, a, b, occ, has_pointee))
    return false;
  pop(q);
  return true;
}

/* A buffer field: a bare variable there defines it (a symbolic shape, an
 * offset variable); anything else is an ordinary expression. */
static bool eq_bind(eq *q, const loom_expr *a, const loom_expr *b) {
  if (!a || !b || a->kind != LOOM_EXPR_VAR || b->kind != LOOM_EXPR_VAR)
    return eq_expr(q, a, b);
  if (!loom_dtype_eq(a->dtype, b->dtype))
    return fail_dtype(q, "dtype", a->dtype, b->dtype);
  return eq_var(q, a->u.var, b->u.var, OCC_BIND, true);
}

static bool eq_bind_at(eq *q, seg s, const loom_expr *a, const loom_expr *b) {
  if (!push(q, s) || !eq_bind(q, a, b))
    return false;
  pop(q);
  return true;
}

static bool eq_axis_separators(eq *q, const loom_buffer *a,
                               const loom_buffer *b) {
  int na = a->axis_separators ? a->n_axis_separators : 0;
  int nb = b->axis_separators ? b->n_axis_separators : 0;
  if (na != nb)
    return FAIL(q, "buffer has %d axis separators vs %d", na, nb);
  for (int i = 0; i < na; i++)
    if (a->axis_separators[i] != b->axis_separators[i])
      return FAIL(q, "axis separator %d: %d vs %d", i, a->axis_separators[i],
                  b->axis_separators[i]);
  return true;
}

static const loom_expr *nth(loom_expr *const *xs, int i) {
  return xs ? xs[i] : NULL;
}

/* Everything a buffer definition carries except its name. */
static bool eq_buffer_fields(eq *q, const loom_buffer *a,
                             const loom_buffer *b) {
  if (!loom_dtype_eq(a->dtype, b->dtype))
    return fail_dtype(q, "buffer dtype", a->dtype, b->dtype);
  if (a->ndim != b->ndim)
    return FAIL(q, "buffer rank %d vs %d", a->ndim, b->ndim);
  if (strcmp(walk_buffer_scope(a), walk_buffer_scope(b)))
    return FAIL(q, "buffer scope \"%s\" vs \"%s\"", walk_buffer_scope(a),
                walk_buffer_scope(b));
  if (walk_buffer_align(a) != walk_buffer_align(b))
    return FAIL(q, "buffer align %d vs %d", walk_buffer_align(a),
                walk_buffer_align(b));
  if (walk_buffer_offset_factor(a) != walk_buffer_offset_factor(b))
    return FAIL(q, "buffer offset_factor %d vs %d",
                walk_buffer_offset_factor(a), walk_buffer_offset_factor(b));
  if (a->is_auto_broadcast != b->is_auto_broadcast)
    return FAIL(q, "buffer_type \"%s\" vs \"%s\"",
                a->is_auto_broadcast ? "auto" : "default",
                b->is_auto_broadcast ? "auto" : "default");
  if (!eq_axis_separators(q, a, b) ||
      !eq_var_at(q, "data", a->data, b->data, OCC_BIND, false))
    return false;
  for (int i = 0; i < a->ndim; i++)
    if (!eq_bind_at(q, at("shape", i), nth(a->shape, i), nth(b->shape, i)))
      return false;
  int sa = a->strides ? a->n_strides : 0, sb = b->strides ? b->n_strides : 0;
  if (sa != sb)
    return FAIL(q, "buffer has %d strides vs %d", sa, sb);
  for (int i = 0; i < sa; i++)
    if (!eq_bind_at(q, at("strides", i), a->strides[i], b->strides[i]))
      return false;
  bool za = walk_is_zero_offset(a->elem_offset);
  bool zb = walk_is_zero_offset(b->elem_offset);
  if (za != zb) {
    if (!push(q, field("elem_offset")))
      return false;
    return FAIL(q, "buffer elem_offset %s vs %s", za ? "0" : "non-zero",
                zb ? "0" : "non-zero");
  }
  return za ||
         eq_bind_at(q, field("elem_offset"), a->elem_offset, b->elem_offset);
}

static bool eq_buffer(eq *q, const loom_buffer *a, const loom_buffer *b,
                      occurrence occ) {
  if (!a || !b)
    return a == b || FAIL(q, "%s vs %s", a ? "buffer" : "no buffer",
                          b ? "buffer" : "no buffer");
  bool is_new;
  if (!pair(q, a, b, true, occ, &is_new))
    return false;
  return !is_new || eq_buffer_fields(q, a, b);
}

static bool eq_buffer_at(eq *q, seg s, const loom_buffer *a,
                         const loom_buffer *b, occurrence occ) {
  if (!push(q, s) || !eq_buffer(q, a, b, occ))
    return false;
  pop(q);
  return true;
}

/* ---- expressions --------------------------------------------------------- */

static uint64_t float_bits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

/* Bitwise, so 0.0 and -0.0 differ; every NaN equals every NaN. */
static bool same_float(double x, double y) {
  return (x != x && y != y) || float_bits(x) == float_bits(y);
}

static bool fail_int(eq *q, const loom_expr *a, const loom_expr *b) {
  if (a->dtype.code == LOOM_DT_UINT && a->dtype.bits == 64)
    return FAIL(q, "int constant %" PRIu64 " vs %" PRIu64,
                (uint64_t)a->u.int_value, (uint64_t)b->u.int_value);
  return FAIL(q, "int constant %" PRId64 " vs %" PRId64, a->u.int_value,
              b->u.int_value);
}

static const char *op_name(loom_op op) {
  return (unsigned)op < LOOM_OP_COUNT_ ? loom_op_table[op].name : "?";
}

/* Compares one node pair, not its operands (eq_expr stacks those). */
static bool eq_expr_node(eq *q, const loom_expr *a, const loom_expr *b) {
  if (!a || !b)
    return a == b || FAIL(q, "%s vs %s", a ? "expression" : "no expression",
                          b ? "expression" : "no expression");
  if (a->kind != b->kind)
    return FAIL(q, "expression %s vs %s", walk_expr_spelling(a->kind),
                walk_expr_spelling(b->kind));
  if (!loom_dtype_eq(a->dtype, b->dtype))
    return fail_dtype(q, "dtype", a->dtype, b->dtype);
  switch (a->kind) {
  case LOOM_EXPR_INT:
    return a->u.int_value == b->u.int_value || fail_int(q, a, b);
  case LOOM_EXPR_FLOAT:
    return same_float(a->u.float_value, b->u.float_value) ||
           FAIL(q, "float constant %.17g vs %.17g", a->u.float_value,
                b->u.float_value);
  case LOOM_EXPR_STR:
    return str_same(a->u.str, b->u.str) ||
           FAIL(q, "string \"%s\" vs \"%s\"", or_q(a->u.str), or_q(b->u.str));
  case LOOM_EXPR_VAR: return eq_var(q, a->u.var, b->u.var, OCC_USE, true);
  case LOOM_EXPR_LOAD:
    if (!eq_buffer_at(q, field("buffer"), a->u.load.buffer, b->u.load.buffer,
                      OCC_USE))
      return false;
    return a->u.load.n_indices == b->u.load.n_indices ||
           FAIL(q, "number of indices %d vs %d", a->u.load.n_indices,
                b->u.load.n_indices);
  case LOOM_EXPR_CALL:
    if (a->u.call.op != b->u.call.op)
      return FAIL(q, "intrinsic T.%s vs T.%s", op_name(a->u.call.op),
                  op_name(b->u.call.op));
    return a->u.call.n_args == b->u.call.n_args ||
           FAIL(q, "number of arguments %d vs %d", a->u.call.n_args,
                b->u.call.n_args);
  case LOOM_EXPR_LET:
    return eq_var_at(q, "var", a->u.let.var, b->u.let.var, OCC_DEF, true);
  case LOOM_EXPR_RAMP:
    return a->u.ramp.lanes == b->u.ramp.lanes ||
           FAIL(q, "lanes %d vs %d", a->u.ramp.lanes, b->u.ramp.lanes);
  case LOOM_EXPR_BROADCAST:
    return a->u.broadcast.lanes == b->u.broadcast.lanes ||
           FAIL(q, "lanes %d vs %d", a->u.broadcast.lanes,
                b->u.broadcast.lanes);
  default: return true;
  }
}

static bool push_item(eq *q, const loom_expr *a, const loom_expr *b, int depth,
                      seg s) {
  item *w = walk_grow(q->work, &q->cap_work, q->n_work + 1, sizeof *w);
  if (!w)
    return nomem(q);
  q->work = w;
  w[q->n_work++] = (item){a, b, depth, s};
  return true;
}

/* Pre-order, left to right, like the recursion it replaces. Each stacked
 * operand remembers its depth below the walk's base so the path can be cut
 * back to its parent's before its own step goes on. Reentrant: a buffer met
 * in a load compares its shape with a nested walk above this one's items. */
static bool eq_expr(eq *q, const loom_expr *a, const loom_expr *b) {
  int base = q->n_work, path_base = q->n_path;
  if (!push_item(q, a, b, 0, (seg){SEG_NONE, NULL, NULL, 0}))
    return false;
  while (q->n_work > base) {
    item it = q->work[--q->n_work];
    q->n_path = path_base + it.depth;
    if (it.s.style != SEG_NONE && !push(q, it.s))
      return false;
    if (!eq_expr_node(q, it.a, it.b))
      return false;
    int depth = q->n_path - path_base;
    for (int i = walk_expr_arity(it.a); i-- > 0;) {
      int index;
      const char *name = walk_expr_operand_name(it.a, i, &index);
      seg s = index < 0 ? field(name) : at(name, index);
      if (!push_item(q, walk_expr_operand(it.a, i), walk_expr_operand(it.b, i),
                     depth, s))
        return false;
    }
  }
  q->n_path = path_base;
  return true;
}

static bool eq_expr_at(eq *q, seg s, const loom_expr *a, const loom_expr *b) {
  if (!push(q, s) || !eq_expr(q, a, b))
    return false;
  pop(q);
  return true;
}

/* ---- attributes, annotations and their values ---------------------------- */

/* A dict seen through either of its two shapes: attribute array or DICT. */
typedef struct dict {
  const loom_attr *attrs;
  const loom_value *value;
  int n;
} dict;

static const char *dict_key_at(const dict *d, int i) {
  return d->attrs ? d->attrs[i].key : d->value->keys[i];
}

static const loom_value *dict_value_at(const dict *d, int i) {
  if (d->attrs)
    return d->attrs[i].value;
  return d->value->items ? d->value->items[i] : NULL;
}

static int key_cmp(const char *x, const char *y) {
  if (!x || !y)
    return (x != NULL) - (y != NULL);
  return strcmp(x, y);
}

/* Walks both dicts in key order; a key missing on one side is the first key
 * where the sorted lists part. */
static bool eq_dict_sorted(eq *q, const char *f, const char *noun,
                           const dict *a, const int *ia, const dict *b,
                           const int *ib) {
  int n = a->n < b->n ? a->n : b->n;
  for (int k = 0; k <= n; k++) {
    const char *ka = k < a->n ? dict_key_at(a, ia[k]) : NULL;
    const char *kb = k < b->n ? dict_key_at(b, ib[k]) : NULL;
    if (k == n && a->n == b->n)
      break;
    int c = k == n ? (a->n > b->n ? -1 : 1) : key_cmp(ka, kb);
    if (c != 0) {
      if (!push(q, field(f)))
        return false;
      return c < 0 ? FAIL(q, "%s \"%s\" only in the first", noun, or_q(ka))
                   : FAIL(q, "%s \"%s\" only in the second", noun, or_q(kb));
    }
    if (!push(q, key(f, ka)) ||
        !eq_value(q, dict_value_at(a, ia[k]), dict_value_at(b, ib[k])))
      return false;
    pop(q);
  }
  return true;
}

static bool eq_dict(eq *q, const char *f, const char *noun, const dict *a,
                    const dict *b) {
  walk_order oa, ob;
  const int *ia = a->attrs ? walk_order_attrs(&oa, a->attrs, a->n)
                           : walk_order_dict(&oa, a->value);
  const int *ib = b->attrs ? walk_order_attrs(&ob, b->attrs, b->n)
                           : walk_order_dict(&ob, b->value);
  bool ok = ia && ib ? eq_dict_sorted(q, f, noun, a, ia, b, ib) : nomem(q);
  walk_order_free(&oa);
  walk_order_free(&ob);
  return ok;
}

static bool eq_attrs(eq *q, const char *f, const char *noun, const loom_attr *a,
                     int na, const loom_attr *b, int nb) {
  static const loom_attr none[1];
  dict da = {a ? a : none, NULL, a ? na : 0};
  dict db = {b ? b : none, NULL, b ? nb : 0};
  return eq_dict(q, f, noun, &da, &db);
}

static const char *value_kind_name(loom_value_kind k) {
  switch (k) {
  case LOOM_VALUE_NONE: return "None";
  case LOOM_VALUE_EXPR: return "expression";
  case LOOM_VALUE_STR: return "string";
  case LOOM_VALUE_LIST: return "list";
  case LOOM_VALUE_DICT: return "dict";
  }
  return "?";
}

/* A missing value reads as None. */
static bool eq_value(eq *q, const loom_value *a, const loom_value *b) {
  loom_value_kind ka = a ? a->kind : LOOM_VALUE_NONE;
  loom_value_kind kb = b ? b->kind : LOOM_VALUE_NONE;
  if (ka != kb)
    return FAIL(q, "value %s vs %s", value_kind_name(ka), value_kind_name(kb));
  switch (ka) {
  case LOOM_VALUE_NONE: return true;
  case LOOM_VALUE_EXPR: return eq_expr(q, a->expr, b->expr);
  case LOOM_VALUE_STR:
    return str_same(a->str, b->str) ||
           FAIL(q, "string \"%s\" vs \"%s\"", or_q(a->str), or_q(b->str));
  case LOOM_VALUE_LIST:
    if (a->n_items != b->n_items)
      return FAIL(q, "list length %d vs %d", a->n_items, b->n_items);
    for (int i = 0; i < a->n_items; i++) {
      if (!push(q, at("", i)) || !eq_value(q, a->items ? a->items[i] : NULL,
                                           b->items ? b->items[i] : NULL))
        return false;
      pop(q);
    }
    return true;
  case LOOM_VALUE_DICT: {
    dict da = {NULL, a, a->keys ? a->n_items : 0};
    dict db = {NULL, b, b->keys ? b->n_items : 0};
    return eq_dict(q, "", "key", &da, &db);
  }
  }
  return true;
}

/* ---- statements and blocks ----------------------------------------------- */

static const char *stmt_name(loom_stmt_kind k) {
  return (unsigned)k < LOOM_STMT_COUNT_ ? loom_stmt_kind_name(k) : "?";
}

static const char *for_kind_name(loom_for_kind k) {
  switch (k) {
  case LOOM_FOR_SERIAL: return "serial";
  case LOOM_FOR_PARALLEL: return "parallel";
  case LOOM_FOR_VECTORIZED: return "vectorized";
  case LOOM_FOR_UNROLLED: return "unrolled";
  case LOOM_FOR_THREAD_BINDING: return "thread_binding";
  }
  return "?";
}

static const char *iter_kind_name(loom_iter_kind k) {
  switch (k) {
  case LOOM_ITER_SPATIAL: return "spatial";
  case LOOM_ITER_REDUCE: return "reduce";
  case LOOM_ITER_SCAN: return "scan";
  case LOOM_ITER_OPAQUE: return "opaque";
  }
  return "?";
}

static const char *var_name(const loom_var *v) {
  return v ? or_q(v->name) : "?";
}

static bool eq_range(eq *q, const loom_range *a, const loom_range *b) {
  return eq_expr_at(q, field("min"), a->min, b->min) &&
         eq_expr_at(q, field("extent"), a->extent, b->extent);
}

static bool eq_region(eq *q, const loom_buffer_region *a,
                      const loom_buffer_region *b) {
  if (!eq_buffer_at(q, field("buffer"), a->buffer, b->buffer, OCC_USE))
    return false;
  int na = a->ranges ? a->n_ranges : 0, nb = b->ranges ? b->n_ranges : 0;
  if (na != nb)
    return FAIL(q, "number of ranges %d vs %d", na, nb);
  for (int i = 0; i < na; i++) {
    if (!push(q, at("ranges", i)) || !eq_range(q, &a->ranges[i], &b->ranges[i]))
      return false;
    pop(q);
  }
  return true;
}

static bool eq_regions(eq *q, const char *f, const loom_buffer_region *a,
                       int na, const loom_buffer_region *b, int nb) {
  if (na != nb)
    return FAIL(q, "number of %s %d vs %d", f, na, nb);
  for (int i = 0; i < na; i++) {
    if (!push(q, at(f, i)) || !eq_region(q, &a[i], &b[i]))
      return false;
    pop(q);
  }
  return true;
}

static bool eq_iter_var(eq *q, const loom_iter_var *a, const loom_iter_var *b) {
  if (!eq_var_at(q, "var", a->var, b->var, OCC_DEF, true) ||
      !push(q, field("dom")) || !eq_range(q, &a->dom, &b->dom))
    return false;
  pop(q);
  return a->kind == b->kind ||
         FAIL(q, "iter var kind %s vs %s", iter_kind_name(a->kind),
              iter_kind_name(b->kind));
}

static bool eq_block_buffers(eq *q, const loom_block *a, const loom_block *b) {
  if (a->n_alloc_buffers != b->n_alloc_buffers)
    return FAIL(q, "number of alloc_buffers %d vs %d", a->n_alloc_buffers,
                b->n_alloc_buffers);
  for (int i = 0; i < a->n_alloc_buffers; i++)
    if (!eq_buffer_at(q, at("alloc_buffers", i), a->alloc_buffers[i],
                      b->alloc_buffers[i], OCC_DEF))
      return false;
  if (a->n_match_buffers != b->n_match_buffers)
    return FAIL(q, "number of match_buffers %d vs %d", a->n_match_buffers,
                b->n_match_buffers);
  for (int i = 0; i < a->n_match_buffers; i++) {
    const loom_match_buffer *x = &a->match_buffers[i],
                            *y = &b->match_buffers[i];
    if (!push(q, at("match_buffers", i)) ||
        !eq_buffer_at(q, field("buffer"), x->buffer, y->buffer, OCC_DEF) ||
        !push(q, field("source")) || !eq_region(q, &x->source, &y->source))
      return false;
    q->n_path -= 2;
  }
  return true;
}

/* The block's contents up to its body, in the order hash.c reads them:
 * iter vars, buffers it defines, reads, writes, annotations, init. */
static bool eq_block_head(eq *q, const loom_block *a, const loom_block *b) {
  if (a->n_iter_vars != b->n_iter_vars)
    return FAIL(q, "number of iter vars %d vs %d", a->n_iter_vars,
                b->n_iter_vars);
  for (int i = 0; i < a->n_iter_vars; i++) {
    if (!push(q, at("iter_vars", i)) ||
        !eq_iter_var(q, &a->iter_vars[i], &b->iter_vars[i]))
      return false;
    pop(q);
  }
  if (!eq_block_buffers(q, a, b) ||
      !eq_regions(q, "reads", a->reads, a->n_reads, b->reads, b->n_reads) ||
      !eq_regions(q, "writes", a->writes, a->n_writes, b->writes,
                  b->n_writes) ||
      !eq_attrs(q, "annotations", "annotation", a->annotations,
                a->n_annotations, b->annotations, b->n_annotations))
    return false;
  if (!a->init != !b->init) {
    if (!push(q, field("init")))
      return false;
    return FAIL(q, "init %s vs %s", a->init ? "present" : "absent",
                b->init ? "present" : "absent");
  }
  if (!a->init)
    return true;
  if (!push(q, field("init")) || !eq_stmt(q, a->init, b->init))
    return false;
  pop(q);
  return true;
}

/* A block realize and its block are one step of the path: block("C"). */
static bool eq_realize(eq *q, const loom_stmt *a, const loom_stmt *b,
                       const loom_stmt **na, const loom_stmt **nb) {
  const loom_block *x = a->u.realize.block, *y = b->u.realize.block;
  if (!x || !y)
    return x == y || FAIL(q, "%s vs %s", x ? "block" : "no block",
                          y ? "block" : "no block");
  if (!str_same(x->name, y->name))
    return FAIL(q, "block name \"%s\" vs \"%s\"", or_q(x->name), or_q(y->name));
  if (!push(q, qcall("block", x->name)))
    return false;
  int n = a->u.realize.n_iter_values;
  if (n != b->u.realize.n_iter_values)
    return FAIL(q, "number of bindings %d vs %d", n,
                b->u.realize.n_iter_values);
  for (int i = 0; i < n; i++)
    if (!eq_expr_at(q, at("bindings", i), nth(a->u.realize.iter_values, i),
                    nth(b->u.realize.iter_values, i)))
      return false;
  const loom_expr *pa = a->u.realize.predicate, *pb = b->u.realize.predicate;
  if (walk_is_true(pa) != walk_is_true(pb)) {
    if (!push(q, field("predicate")))
      return false;
    return FAIL(q, "predicate %s vs %s",
                walk_is_true(pa) ? "True" : "a condition",
                walk_is_true(pb) ? "True" : "a condition");
  }
  if (!walk_is_true(pa) && !eq_expr_at(q, field("predicate"), pa, pb))
    return false;
  enter_loc(&q->loc_a, x->loc);
  enter_loc(&q->loc_b, y->loc);
  if (!eq_block_head(q, x, y) || !push(q, field("body")))
    return false;
  *na = x->body;
  *nb = y->body;
  return true;
}

static bool eq_seq(eq *q, const loom_stmt *a, const loom_stmt *b,
                   const loom_stmt **na, const loom_stmt **nb) {
  int n = a->u.seq.stmts ? a->u.seq.n_stmts : 0;
  int m = b->u.seq.stmts ? b->u.seq.n_stmts : 0;
  if (n != m)
    return FAIL(q, "number of statements %d vs %d", n, m);
  for (int i = 0; i + 1 < n; i++) {
    if (!push(q, at("seq", i)) ||
        !eq_stmt(q, a->u.seq.stmts[i], b->u.seq.stmts[i]))
      return false;
    pop(q);
  }
  if (n == 0)
    return true;
  *na = a->u.seq.stmts[n - 1];
  *nb = b->u.seq.stmts[n - 1];
  return push(q, at("seq", n - 1));
}

static bool eq_for(eq *q, const loom_stmt *a, const loom_stmt *b,
                   const loom_stmt **na, const loom_stmt **nb) {
  if (!push(q, call("for", var_name(a->u.loop.var))) ||
      !eq_var_at(q, "var", a->u.loop.var, b->u.loop.var, OCC_DEF, true) ||
      !eq_expr_at(q, field("min"), a->u.loop.min, b->u.loop.min) ||
      !eq_expr_at(q, field("extent"), a->u.loop.extent, b->u.loop.extent))
    return false;
  if (a->u.loop.kind != b->u.loop.kind)
    return FAIL(q, "loop kind %s vs %s", for_kind_name(a->u.loop.kind),
                for_kind_name(b->u.loop.kind));
  if (!str_same(a->u.loop.thread, b->u.loop.thread))
    return FAIL(q, "thread tag \"%s\" vs \"%s\"",
                a->u.loop.thread ? a->u.loop.thread : "(none)",
                b->u.loop.thread ? b->u.loop.thread : "(none)");
  if (!eq_attrs(q, "annotations", "annotation", a->u.loop.annotations,
                a->u.loop.n_annotations, b->u.loop.annotations,
                b->u.loop.n_annotations) ||
      !push(q, field("body")))
    return false;
  *na = a->u.loop.body;
  *nb = b->u.loop.body;
  return true;
}

static bool eq_store(eq *q, const loom_stmt *a, const loom_stmt *b) {
  int n = a->u.store.n_indices;
  if (!push(q, field("store")) ||
      !eq_buffer_at(q, field("buffer"), a->u.store.buffer, b->u.store.buffer,
                    OCC_USE) ||
      !eq_expr_at(q, field("value"), a->u.store.value, b->u.store.value))
    return false;
  if (n != b->u.store.n_indices)
    return FAIL(q, "number of indices %d vs %d", n, b->u.store.n_indices);
  for (int i = 0; i < n; i++)
    if (!eq_expr_at(q, at("indices", i), nth(a->u.store.indices, i),
                    nth(b->u.store.indices, i)))
      return false;
  return true;
}

static bool eq_if(eq *q, const loom_stmt *a, const loom_stmt *b,
                  const loom_stmt **na, const loom_stmt **nb) {
  if (!push(q, field("if")) ||
      !eq_expr_at(q, field("cond"), a->u.if_.cond, b->u.if_.cond) ||
      !push(q, field("then")) ||
      !eq_stmt(q, a->u.if_.then_case, b->u.if_.then_case))
    return false;
  pop(q);
  *na = a->u.if_.else_case;
  *nb = b->u.if_.else_case;
  return push(q, field("else"));
}

static bool eq_attr_stmt(eq *q, const loom_stmt *a, const loom_stmt *b,
                         const loom_stmt **na, const loom_stmt **nb) {
  if (!str_same(a->u.attr.key, b->u.attr.key))
    return FAIL(q, "attribute key \"%s\" vs \"%s\"", or_q(a->u.attr.key),
                or_q(b->u.attr.key));
  if (!push(q, qcall("attr", a->u.attr.key)) || !push(q, field("node")) ||
      !eq_value(q, a->u.attr.node, b->u.attr.node))
    return false;
  pop(q);
  if (!eq_expr_at(q, field("value"), a->u.attr.value, b->u.attr.value))
    return false;
  *na = a->u.attr.body;
  *nb = b->u.attr.body;
  return push(q, field("body"));
}

/* Compares one statement pair; when it has a last child left to compare,
 * stores it in *na and *nb and leaves the path pointing at it. */
static bool eq_stmt_node(eq *q, const loom_stmt *a, const loom_stmt *b,
                         const loom_stmt **na, const loom_stmt **nb) {
  switch (a->kind) {
  case LOOM_STMT_FOR: return eq_for(q, a, b, na, nb);
  case LOOM_STMT_BLOCK_REALIZE: return eq_realize(q, a, b, na, nb);
  case LOOM_STMT_STORE: return eq_store(q, a, b);
  case LOOM_STMT_IF: return eq_if(q, a, b, na, nb);
  case LOOM_STMT_SEQ: return eq_seq(q, a, b, na, nb);
  case LOOM_STMT_EVALUATE:
    return push(q, field("evaluate")) &&
           eq_expr_at(q, field("value"), a->u.evaluate.value,
                      b->u.evaluate.value);
  case LOOM_STMT_LET:
    if (!push(q, call("let", var_name(a->u.let.var))) ||
        !eq_var_at(q, "var", a->u.let.var, b->u.let.var, OCC_DEF, true) ||
        !eq_expr_at(q, field("value"), a->u.let.value, b->u.let.value))
      return false;
    *na = a->u.let.body;
    *nb = b->u.let.body;
    return push(q, field("body"));
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    if (!push(q, field(a->kind == LOOM_STMT_ALLOCATE ? "alloc_buffer"
                                                     : "decl_buffer")) ||
        !eq_buffer_at(q, field("buffer"), a->u.alloc.buffer, b->u.alloc.buffer,
                      OCC_DEF))
      return false;
    *na = a->u.alloc.body;
    *nb = b->u.alloc.body;
    return push(q, field("body"));
  case LOOM_STMT_ATTR: return eq_attr_stmt(q, a, b, na, nb);
  case LOOM_STMT_ASSERT:
    if (!push(q, field("assert")) ||
        !eq_expr_at(q, field("cond"), a->u.assert_.cond, b->u.assert_.cond) ||
        !eq_expr_at(q, field("message"), a->u.assert_.message,
                    b->u.assert_.message))
      return false;
    *na = a->u.assert_.body;
    *nb = b->u.assert_.body;
    return push(q, field("body"));
  case LOOM_STMT_COUNT_: break;
  }
  return true; /* a kind outside the table: nothing more to compare */
}

/* Follows a chain of last children iteratively. */
static bool eq_chain(eq *q, const loom_stmt *a, const loom_stmt *b) {
  while (a || b) {
    if (a)
      enter_loc(&q->loc_a, a->loc);
    if (b)
      enter_loc(&q->loc_b, b->loc);
    if (!a || !b)
      return FAIL(q, "%s vs %s", a ? stmt_name(a->kind) : "no statement",
                  b ? stmt_name(b->kind) : "no statement");
    if (a->kind != b->kind)
      return FAIL(q, "%s vs %s", stmt_name(a->kind), stmt_name(b->kind));
    const loom_stmt *na = NULL, *nb = NULL;
    if (!eq_stmt_node(q, a, b, &na, &nb))
      return false;
    a = na;
    b = nb;
  }
  return true;
}

static bool eq_stmt(eq *q, const loom_stmt *a, const loom_stmt *b) {
  int mark = q->n_path;
  loom_loc la = q->loc_a, lb = q->loc_b;
  if (!eq_chain(q, a, b))
    return false;
  q->n_path = mark;
  q->loc_a = la;
  q->loc_b = lb;
  return true;
}

/* ---- functions and modules ----------------------------------------------- */

/* Parameters first, then the buffers bound to them (as TVM binds params
 * before its buffer_map), so a scalar parameter named in a buffer's shape is
 * defined by the parameter list wherever it appears in it. */
static bool eq_params(eq *q, const loom_func *a, const loom_func *b) {
  if (a->n_params != b->n_params)
    return FAIL(q, "number of parameters %d vs %d", a->n_params, b->n_params);
  for (int i = 0; i < a->n_params; i++) {
    const loom_param *x = &a->params[i], *y = &b->params[i];
    if (!push(q, at("params", i)))
      return false;
    if (!x->buffer != !y->buffer)
      return FAIL(q, "parameter is %s vs %s",
                  x->buffer ? "a buffer" : "a scalar",
                  y->buffer ? "a buffer" : "a scalar");
    if (!eq_var(q, x->var, y->var, OCC_DEF, !x->buffer))
      return false;
    pop(q);
  }
  for (int i = 0; i < a->n_params; i++) {
    const loom_param *x = &a->params[i], *y = &b->params[i];
    if (!x->buffer)
      continue;
    if (!push(q, at("params", i)) ||
        !eq_buffer_at(q, field("buffer"), x->buffer, y->buffer, OCC_DEF))
      return false;
    pop(q);
  }
  return true;
}

/* The function's name is not compared: in a module the caller pairs
 * functions by name, and a lone function may be renamed. */
static bool eq_func(eq *q, const loom_func *a, const loom_func *b) {
  if (!push(q, (seg){SEG_ROOT, or_q(a->name), NULL, 0}))
    return false;
  enter_loc(&q->loc_a, a->loc);
  enter_loc(&q->loc_b, b->loc);
  if (!eq_params(q, a, b))
    return false;
  if (!loom_dtype_eq(a->ret_type, b->ret_type))
    return fail_dtype(q, "return type", a->ret_type, b->ret_type);
  return eq_attrs(q, "attrs", "attribute", a->attrs, a->n_attrs, b->attrs,
                  b->n_attrs) &&
         push(q, field("body")) && eq_stmt(q, a->body, b->body);
}

static void eq_init(eq *q, loom_ir_diff *diff) {
  memset(q, 0, sizeof *q);
  q->diff = diff;
  if (diff)
    memset(diff, 0, sizeof *diff);
}

static void eq_reset(eq *q) {
  for (int i = 0; i < q->n_pairs; i++)
    free(q->pairs[i].first_use);
  q->n_pairs = q->n_path = q->n_work = 0;
  loom_ptrmap_clear(&q->map_a);
  loom_ptrmap_clear(&q->map_b);
  q->loc_a = q->loc_b = (loom_loc){0};
}

static void eq_free(eq *q) {
  eq_reset(q);
  loom_ptrmap_free(&q->map_a);
  loom_ptrmap_free(&q->map_b);
  free(q->pairs);
  free(q->path);
  free(q->work);
}

void loom_ir_diff_free(loom_ir_diff *d) {
  if (!d)
    return;
  free(d->path);
  free(d->what);
  memset(d, 0, sizeof *d);
}

bool loom_ir_equal_func(const loom_func *a, const loom_func *b,
                        loom_ir_diff *diff) {
  eq q;
  eq_init(&q, diff);
  bool ok = a && b ? eq_func(&q, a, b)
                   : a == b || FAIL(&q, "%s vs %s", a ? "function" : "nothing",
                                    b ? "function" : "nothing");
  eq_free(&q);
  return ok;
}

static int cmp_func_name(const void *x, const void *y) {
  const loom_func *f = *(const loom_func *const *)x;
  const loom_func *g = *(const loom_func *const *)y;
  return strcmp(f->name ? f->name : "", g->name ? g->name : "");
}

/* The functions of m sorted by name (NULL entries left out), so two modules
 * pair their functions by a merge instead of a search per function: modules
 * of thousands of functions compare in n log n. Heap; NULL when out of
 * memory or empty. */
static const loom_func **sorted_funcs(const loom_module *m, int *n) {
  *n = 0;
  if (m->n_funcs <= 0)
    return NULL;
  const loom_func **fs = malloc(sizeof *fs * (size_t)m->n_funcs);
  if (!fs)
    return NULL;
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i])
      fs[(*n)++] = m->funcs[i];
  qsort(fs, (size_t)*n, sizeof *fs, cmp_func_name);
  return fs;
}

/* Pairs the functions of a and b by name and compares each pair. A name
 * present on one side only is the first difference. */
static bool eq_module_funcs(eq *q, const loom_func **fa, int na,
                            const loom_func **fb, int nb) {
  int i = 0, j = 0;
  while (i < na || j < nb) {
    int c = i == na ? 1 : j == nb ? -1 : cmp_func_name(&fa[i], &fb[j]);
    if (c < 0)
      return FAIL(q, "function \"%s\" only in the first module",
                  or_q(fa[i]->name));
    if (c > 0)
      return FAIL(q, "function \"%s\" only in the second module",
                  or_q(fb[j]->name));
    eq_reset(q);
    if (!eq_func(q, fa[i++], fb[j++]))
      return false;
  }
  return true;
}

static bool eq_module(eq *q, const loom_module *a, const loom_module *b) {
  if (!push(q, (seg){SEG_ROOT, "module", NULL, 0}))
    return false;
  if (!eq_attrs(q, "attrs", "attribute", a->attrs, a->n_attrs, b->attrs,
                b->n_attrs))
    return false;
  int na, nb;
  const loom_func **fa = sorted_funcs(a, &na), **fb = sorted_funcs(b, &nb);
  bool ok;
  if ((a->n_funcs > 0 && !fa) || (b->n_funcs > 0 && !fb))
    ok = FAIL(q, "out of memory while comparing");
  else
    ok = eq_module_funcs(q, fa, na, fb, nb);
  free(fa);
  free(fb);
  if (ok && a->n_graphs != b->n_graphs)
    ok = FAIL(q, "%d graph functions vs %d", a->n_graphs, b->n_graphs);
  char why[256];
  for (int i = 0; ok && i < a->n_graphs; i++)
    if (!loom_ir_equal_graph(a->graphs[i], b->graphs[i], why, sizeof why))
      ok = FAIL(q, "%s", why);
  return ok;
}

bool loom_ir_equal_module(const loom_module *a, const loom_module *b,
                          loom_ir_diff *diff) {
  eq q;
  eq_init(&q, diff);
  bool ok = a && b ? eq_module(&q, a, b)
                   : a == b || FAIL(&q, "%s vs %s", a ? "module" : "nothing",
                                    b ? "module" : "nothing");
  eq_free(&q);
  return ok;
}

bool loom_ir_equal_expr(const loom_expr *a, const loom_expr *b) {
  eq q;
  eq_init(&q, NULL);
  bool ok = eq_expr(&q, a, b);
  eq_free(&q);
  return ok;
}
