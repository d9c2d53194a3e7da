/* The well-formedness check: the invariants every pass may rely on, checked
 * after the reader, normalization, TE and postprocessing and, in debug and
 * sanitizer builds, after every schedule primitive. The first violation
 * becomes one diagnostic at the nearest statement or block that has a script
 * location, naming what is wrong and what would be right.
 *
 * Scopes are a stack of live definitions; a definition leaves it, but not the
 * table of everything defined, when its loop, block or let ends, so "used
 * outside its scope" and "defined twice" are told apart. Like equal.c, it
 * walks expressions with an explicit stack and statement chains by
 * iteration, so neither a long sum nor a long let chain costs C stack. */
#include "ir/walk.h"
#include "loom/ir.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
  DEF_PARAM,
  DEF_LOOP,
  DEF_ITER,
  DEF_LET,
  DEF_BUFFER_FIELD, /* a symbolic shape, stride, offset or data variable */
  DEF_BUFFER,
} def_kind;

typedef struct def {
  const void *node;
  def_kind kind;
  bool is_alive;
  const loom_block *block; /* for iter vars: the block that defines them */
} def;

/* Expression stack entries: an expression to check, or the two halves of a
 * let's scope around its body. */
typedef enum { ITEM_EXPR, ITEM_LET_DEFINE, ITEM_LET_END } item_kind;

typedef struct item {
  item_kind kind;
  const loom_expr *e;
  int mark; /* ITEM_LET_END: live-stack height to return to */
} item;

typedef struct verifier {
  loom_diag *d;
  loom_ptrmap index; /* variable or buffer -> index in defs */
  def *defs;
  int n_defs, cap_defs;
  int *live; /* indices of defs in scope, innermost last */
  int n_live, cap_live;
  item *work;
  int n_work, cap_work;
  loom_loc loc;                /* nearest enclosing statement or block */
  const loom_block *realizing; /* block whose bindings are being checked */
} verifier;

static loom_status check_expr(verifier *v, const loom_expr *e);
static loom_status check_stmt(verifier *v, const loom_stmt *s);

/* ---- reporting ----------------------------------------------------------- */

static loom_status err(verifier *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static loom_status err(verifier *v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  loom_diag_verror(v->d, v->loc, fmt, ap);
  va_end(ap);
  return LOOM_ERROR;
}

static loom_status nomem(verifier *v) {
  err(v, "out of memory while verifying the program");
  return LOOM_NOMEM;
}

static const char *or_q(const char *s) { return s ? s : "?"; }
static const char *var_name(const loom_var *x) {
  return x ? or_q(x->name) : "?";
}

static void enter_loc(verifier *v, loom_loc loc) {
  if (loc.line > 0)
    v->loc = loc;
}

/* Formats a dtype into a small rotating buffer, so one message may show two. */
typedef struct dstr {
  char s[3][LOOM_DTYPE_STRLEN];
} dstr;

static const char *dt(dstr *b, int i, loom_dtype t) {
  return loom_dtype_str(t, b->s[i]);
}

static const char *plural(int n) { return n == 1 ? "" : "s"; }

static bool is_bool(loom_dtype t) { return t.code == LOOM_DT_BOOL; }
static bool is_scalar_int(loom_dtype t) {
  return loom_dtype_is_int(t) && t.lanes == 1;
}

/* ---- definitions and scopes ---------------------------------------------- */

static const char *def_noun(def_kind k) {
  switch (k) {
  case DEF_PARAM: return "parameter";
  case DEF_LOOP: return "loop variable";
  case DEF_ITER: return "block iter var";
  case DEF_LET: return "let variable";
  case DEF_BUFFER_FIELD: return "buffer variable";
  case DEF_BUFFER: return "buffer";
  }
  return "?";
}

static const char *node_name(const def *x) {
  return or_q(x->kind == DEF_BUFFER ? ((const loom_buffer *)x->node)->name
                                    : ((const loom_var *)x->node)->name);
}

static loom_status define(verifier *v, const void *node, def_kind kind,
                          const loom_block *block) {
  int i = loom_ptrmap_get(&v->index, node);
  if (i >= 0) {
    const def *old = &v->defs[i];
    def now = {node, kind, true, block};
    const char *obj = kind == DEF_BUFFER ? "buffer" : "variable";
    if (old->kind == kind)
      return err(v,
                 "%s \"%s\" is defined twice; each definition needs its "
                 "own %s object (copy the subtree with fresh %ss)",
                 def_noun(kind), node_name(&now), obj, obj);
    return err(v,
               "%s \"%s\" is defined twice, first as a %s; each "
               "definition needs its own %s object",
               def_noun(kind), node_name(&now), def_noun(old->kind), obj);
  }
  def *ds = walk_grow(v->defs, &v->cap_defs, v->n_defs + 1, sizeof *ds);
  if (!ds)
    return nomem(v);
  v->defs = ds;
  int *ls = walk_grow(v->live, &v->cap_live, v->n_live + 1, sizeof *ls);
  if (!ls)
    return nomem(v);
  v->live = ls;
  if (loom_ptrmap_put(&v->index, node, v->n_defs))
    return nomem(v);
  ds[v->n_defs] = (def){node, kind, true, block};
  ls[v->n_live++] = v->n_defs++;
  return LOOM_OK;
}

/* Ends the scopes opened since the live stack was `mark` high. */
static void leave(verifier *v, int mark) {
  while (v->n_live > mark)
    v->defs[v->live[--v->n_live]].is_alive = false;
}

static bool is_iter_var_of(const loom_block *b, const loom_var *x) {
  for (int i = 0; b && i < b->n_iter_vars; i++)
    if (b->iter_vars[i].var == x)
      return true;
  return false;
}

static loom_status use_var(verifier *v, const loom_var *x) {
  if (!x)
    return err(v, "a variable reference names no variable");
  int i = loom_ptrmap_get(&v->index, x);
  if (i < 0 && is_iter_var_of(v->realizing, x))
    return err(v,
               "block iter var \"%s\" is used in the bindings of its own "
               "block \"%s\"; a binding may use only variables defined "
               "outside the block, such as the loop variables around it",
               var_name(x), or_q(v->realizing->name));
  if (i < 0)
    return err(v,
               "variable \"%s\" is not defined here; define it as a "
               "parameter, loop variable, block iter var or let before "
               "this use",
               var_name(x));
  const def *dd = &v->defs[i];
  if (dd->is_alive)
    return LOOM_OK;
  if (dd->kind == DEF_ITER)
    return err(v,
               "block iter var \"%s\" of block \"%s\" is used outside its "
               "block; outside the block use the value bound to it",
               var_name(x), or_q(dd->block->name));
  return err(v,
             "%s \"%s\" is used outside its scope; it is defined only "
             "inside the %s that introduces it",
             def_noun(dd->kind), var_name(x),
             dd->kind == DEF_LOOP  ? "loop"
             : dd->kind == DEF_LET ? "let"
                                   : "block");
}

static loom_status use_buffer(verifier *v, const loom_buffer *b) {
  if (!b)
    return err(v, "a buffer access names no buffer");
  int i = loom_ptrmap_get(&v->index, b);
  if (i < 0)
    return err(v,
               "buffer \"%s\" is not defined here; it must be a parameter "
               "or allocated by an enclosing block or statement",
               or_q(b->name));
  if (!v->defs[i].is_alive)
    return err(v,
               "buffer \"%s\" is used outside the block or statement that "
               "allocates it",
               or_q(b->name));
  return LOOM_OK;
}

/* A variable in a buffer field defines it on first sight (a symbolic shape
 * bound by a parameter or match_buffer) and is a use afterwards. */
static loom_status bind_var(verifier *v, const loom_var *x) {
  if (!x)
    return err(v, "a buffer field names no variable");
  if (loom_ptrmap_get(&v->index, x) < 0)
    return define(v, x, DEF_BUFFER_FIELD, NULL);
  return use_var(v, x);
}

/* A shape, stride or offset: integer, a bare variable binds. */
static loom_status check_buffer_field(verifier *v, const loom_buffer *b,
                                      const char *field, int i,
                                      const loom_expr *e) {
  char where[48];
  if (i >= 0)
    snprintf(where, sizeof where, "%s[%d]", field, i);
  else
    snprintf(where, sizeof where, "%s", field);
  if (!e)
    return err(v, "buffer \"%s\" has no %s", or_q(b->name), where);
  if (e->kind == LOOM_EXPR_VAR)
    TRY(bind_var(v, e->u.var));
  else
    TRY(check_expr(v, e));
  dstr s;
  if (!is_scalar_int(e->dtype))
    return err(v, "buffer \"%s\": %s is %s; it must be a scalar integer",
               or_q(b->name), where, dt(&s, 0, e->dtype));
  return LOOM_OK;
}

static loom_status define_buffer(verifier *v, const loom_buffer *b) {
  if (!b)
    return err(v, "a buffer definition names no buffer");
  TRY(define(v, b, DEF_BUFFER, NULL));
  if (!b->data)
    return err(v, "buffer \"%s\" has no data variable", or_q(b->name));
  TRY(bind_var(v, b->data));
  if (b->ndim < 0 || (b->ndim > 0 && !b->shape))
    return err(v, "buffer \"%s\" has no shape for its %d dimensions",
               or_q(b->name), b->ndim);
  for (int i = 0; i < b->ndim; i++)
    TRY(check_buffer_field(v, b, "shape", i, b->shape[i]));
  if (b->strides && b->n_strides != b->ndim)
    return err(v,
               "buffer \"%s\" has %d strides for %d dimensions; give one "
               "stride per dimension or none",
               or_q(b->name), b->n_strides, b->ndim);
  for (int i = 0; b->strides && i < b->n_strides; i++)
    TRY(check_buffer_field(v, b, "strides", i, b->strides[i]));
  if (b->elem_offset)
    TRY(check_buffer_field(v, b, "elem_offset", -1, b->elem_offset));
  return LOOM_OK;
}

/* ---- expressions --------------------------------------------------------- */

static bool is_comparison(loom_expr_kind k) {
  return k == LOOM_EXPR_EQ || k == LOOM_EXPR_NE || k == LOOM_EXPR_LT ||
         k == LOOM_EXPR_LE || k == LOOM_EXPR_GT || k == LOOM_EXPR_GE;
}

static loom_status check_binary(verifier *v, const loom_expr *e) {
  const char *op = walk_expr_spelling(e->kind);
  loom_dtype ta = e->u.bin.a->dtype, tb = e->u.bin.b->dtype;
  dstr s;
  if (!loom_dtype_eq(ta, tb))
    return err(v,
               "operands of '%s' have different dtypes, %s and %s; cast "
               "one so both have the same dtype",
               op, dt(&s, 0, ta), dt(&s, 1, tb));
  bool is_logic = e->kind == LOOM_EXPR_AND || e->kind == LOOM_EXPR_OR;
  if (is_logic && !is_bool(ta))
    return err(v, "operands of '%s' are %s; they must be bool", op,
               dt(&s, 0, ta));
  loom_dtype want = ta;
  if (is_logic || is_comparison(e->kind))
    want = loom_dtype_with_lanes(LOOM_BOOL, ta.lanes);
  if (!loom_dtype_eq(e->dtype, want))
    return err(v, "result of '%s' is %s; for %s operands it must be %s", op,
               dt(&s, 0, e->dtype), dt(&s, 1, ta), dt(&s, 2, want));
  return LOOM_OK;
}

static loom_status check_load(verifier *v, const loom_expr *e) {
  const loom_buffer *b = e->u.load.buffer;
  TRY(use_buffer(v, b));
  if (e->u.load.n_indices != b->ndim)
    return err(v,
               "buffer \"%s\" has %d dimension%s but is loaded with %d "
               "ind%s; give one index per dimension",
               or_q(b->name), b->ndim, plural(b->ndim), e->u.load.n_indices,
               e->u.load.n_indices == 1 ? "ex" : "ices");
  for (int i = 0; i < e->u.load.n_indices; i++)
    if (e->u.load.indices[i] && !loom_dtype_is_int(e->u.load.indices[i]->dtype))
      return err(v, "index %d of a load from \"%s\" is not an integer", i,
                 or_q(b->name));
  return LOOM_OK;
}

static loom_status check_call(verifier *v, const loom_expr *e) {
  if ((unsigned)e->u.call.op >= LOOM_OP_COUNT_)
    return err(v, "call of unknown intrinsic %d", (int)e->u.call.op);
  const loom_op_info *op = &loom_op_table[e->u.call.op];
  if (op->arity >= 0 && e->u.call.n_args != op->arity)
    return err(v, "T.%s takes %d argument%s, not %d", op->name, op->arity,
               op->arity == 1 ? "" : "s", e->u.call.n_args);
  if (e->u.call.op == LOOM_OP_IF_THEN_ELSE &&
      !is_bool(e->u.call.args[0]->dtype))
    return err(v, "the condition of T.if_then_else must be bool");
  return LOOM_OK;
}

/* Checks one node; its operands are known to be present. */
static loom_status check_expr_node(verifier *v, const loom_expr *e) {
  dstr s;
  switch (e->kind) {
  case LOOM_EXPR_INT:
    if (!loom_dtype_is_int(e->dtype) && !is_bool(e->dtype))
      return err(v, "integer constant %lld has dtype %s",
                 (long long)e->u.int_value, dt(&s, 0, e->dtype));
    return LOOM_OK;
  case LOOM_EXPR_FLOAT:
    if (!loom_dtype_is_float(e->dtype))
      return err(v, "float constant %g has dtype %s", e->u.float_value,
                 dt(&s, 0, e->dtype));
    return LOOM_OK;
  case LOOM_EXPR_VAR:
    TRY(use_var(v, e->u.var));
    if (!loom_dtype_eq(e->dtype, e->u.var->dtype))
      return err(
          v, "a reference to \"%s\" has dtype %s, but the variable is %s",
          var_name(e->u.var), dt(&s, 0, e->dtype), dt(&s, 1, e->u.var->dtype));
    return LOOM_OK;
  case LOOM_EXPR_NOT:
    if (!is_bool(e->u.unary.a->dtype))
      return err(v, "operand of 'not' is %s; it must be bool",
                 dt(&s, 0, e->u.unary.a->dtype));
    return LOOM_OK;
  case LOOM_EXPR_CAST:
    if (e->dtype.lanes != e->u.unary.a->dtype.lanes)
      return err(v, "cast from %s to %s changes the number of lanes",
                 dt(&s, 0, e->u.unary.a->dtype), dt(&s, 1, e->dtype));
    return LOOM_OK;
  case LOOM_EXPR_SELECT:
    if (!is_bool(e->u.select.cond->dtype))
      return err(v, "the condition of T.Select is %s; it must be bool",
                 dt(&s, 0, e->u.select.cond->dtype));
    if (!loom_dtype_eq(e->u.select.t->dtype, e->u.select.f->dtype))
      return err(v,
                 "the branches of T.Select have different dtypes, %s and "
                 "%s",
                 dt(&s, 0, e->u.select.t->dtype),
                 dt(&s, 1, e->u.select.f->dtype));
    return LOOM_OK;
  case LOOM_EXPR_LOAD: return check_load(v, e);
  case LOOM_EXPR_CALL: return check_call(v, e);
  case LOOM_EXPR_LET:
    if (!e->u.let.var)
      return err(v, "T.Let binds no variable");
    if (!loom_dtype_eq(e->u.let.var->dtype, e->u.let.value->dtype))
      return err(v, "T.Let binds \"%s\" of dtype %s to a value of dtype %s",
                 var_name(e->u.let.var), dt(&s, 0, e->u.let.var->dtype),
                 dt(&s, 1, e->u.let.value->dtype));
    return LOOM_OK;
  case LOOM_EXPR_RAMP:
    if (!loom_dtype_eq(e->u.ramp.base->dtype, e->u.ramp.stride->dtype) ||
        e->u.ramp.base->dtype.lanes != 1)
      return err(v,
                 "T.Ramp needs a scalar base and a stride of the same dtype");
    return LOOM_OK;
  case LOOM_EXPR_BROADCAST:
    if (e->u.broadcast.value->dtype.lanes != 1)
      return err(v, "T.Broadcast needs a scalar value");
    return LOOM_OK;
  default:
    if (walk_expr_class(e->kind) == WALK_BINARY)
      return check_binary(v, e);
    return LOOM_OK;
  }
}

static loom_status push_item(verifier *v, item it) {
  item *w = walk_grow(v->work, &v->cap_work, v->n_work + 1, sizeof *w);
  if (!w)
    return nomem(v);
  v->work = w;
  w[v->n_work++] = it;
  return LOOM_OK;
}

/* Stacks e's operands so they pop in evaluation order. A let's value is
 * checked before its variable is in scope, its body after. */
static loom_status push_operands(verifier *v, const loom_expr *e) {
  if (e->kind == LOOM_EXPR_LET) {
    TRY(push_item(v, (item){ITEM_LET_END, e, v->n_live}));
    TRY(push_item(v, (item){ITEM_EXPR, e->u.let.body, 0}));
    TRY(push_item(v, (item){ITEM_LET_DEFINE, e, 0}));
    return push_item(v, (item){ITEM_EXPR, e->u.let.value, 0});
  }
  for (int i = walk_expr_arity(e); i-- > 0;)
    TRY(push_item(v, (item){ITEM_EXPR, walk_expr_operand(e, i), 0}));
  return LOOM_OK;
}

static loom_status check_operands_present(verifier *v, const loom_expr *e) {
  if ((unsigned)e->kind >= LOOM_EXPR_COUNT_)
    return err(v, "expression of unknown kind %d", (int)e->kind);
  if (walk_expr_class(e->kind) == WALK_LOAD && e->u.load.n_indices > 0 &&
      !e->u.load.indices)
    return err(v, "a load has no index array");
  if (walk_expr_class(e->kind) == WALK_CALL && e->u.call.n_args > 0 &&
      !e->u.call.args)
    return err(v, "a call of T.%s has no argument array",
               (unsigned)e->u.call.op < LOOM_OP_COUNT_
                   ? loom_op_table[e->u.call.op].name
                   : "?");
  for (int i = 0; i < walk_expr_arity(e); i++) {
    if (walk_expr_operand(e, i))
      continue;
    int index;
    const char *name = walk_expr_operand_name(e, i, &index);
    if (index >= 0)
      return err(v, "'%s' has no %s[%d]", walk_expr_spelling(e->kind), name,
                 index);
    return err(v, "'%s' has no operand %s", walk_expr_spelling(e->kind), name);
  }
  return LOOM_OK;
}

static loom_status check_expr(verifier *v, const loom_expr *e) {
  if (!e)
    return err(v, "an expression is missing");
  int base = v->n_work;
  TRY(push_item(v, (item){ITEM_EXPR, e, 0}));
  while (v->n_work > base) {
    item it = v->work[--v->n_work];
    if (it.kind == ITEM_LET_DEFINE) {
      TRY(define(v, it.e->u.let.var, DEF_LET, NULL));
      continue;
    }
    if (it.kind == ITEM_LET_END) {
      leave(v, it.mark);
      continue;
    }
    TRY(check_operands_present(v, it.e));
    TRY(check_expr_node(v, it.e));
    TRY(push_operands(v, it.e));
  }
  return LOOM_OK;
}

/* A condition of an if, an assert or a block predicate: one bool. */
static loom_status check_cond(verifier *v, const loom_expr *e, const char *of) {
  if (!e)
    return err(v, "%s has no condition", of);
  TRY(check_expr(v, e));
  dstr s;
  if (!loom_dtype_eq(e->dtype, LOOM_BOOL))
    return err(v, "the condition of %s is %s; it must be a single bool", of,
               dt(&s, 0, e->dtype));
  return LOOM_OK;
}

/* ---- values, regions, blocks --------------------------------------------- */

static loom_status check_value(verifier *v, const loom_value *x) {
  if (!x)
    return LOOM_OK;
  switch (x->kind) {
  case LOOM_VALUE_EXPR: return check_expr(v, x->expr);
  case LOOM_VALUE_LIST:
  case LOOM_VALUE_DICT:
    for (int i = 0; x->items && i < x->n_items; i++)
      TRY(check_value(v, x->items[i]));
    return LOOM_OK;
  default: return LOOM_OK;
  }
}

/* A count with no array behind it, or a negative count: every walker would
 * index past what exists. */
static loom_status check_array(verifier *v, const void *items, int n,
                               const char *what) {
  if (n < 0 || (n > 0 && !items))
    return err(v, "%s: %d listed but no array holds them", what, n);
  return LOOM_OK;
}

static loom_status check_attrs(verifier *v, const loom_attr *attrs, int n) {
  TRY(check_array(v, attrs, n, "attributes"));
  for (int i = 0; i < n; i++) {
    if (!attrs[i].key)
      return err(v, "an attribute has no key");
    TRY(check_value(v, attrs[i].value));
  }
  return LOOM_OK;
}

/* min and extent present, checked, and integers. */
static loom_status check_range(verifier *v, const loom_range *r,
                               const char *of) {
  if (!r->min || !r->extent)
    return err(v, "a range of %s has no %s", of, r->min ? "extent" : "min");
  TRY(check_expr(v, r->min));
  TRY(check_expr(v, r->extent));
  if (!is_scalar_int(r->min->dtype) || !is_scalar_int(r->extent->dtype))
    return err(v, "a range of %s is not a scalar integer range", of);
  return LOOM_OK;
}

static loom_status check_region(verifier *v, const loom_block *blk,
                                const loom_buffer_region *r, const char *verb) {
  TRY(use_buffer(v, r->buffer));
  const loom_buffer *b = r->buffer;
  int n = r->ranges ? r->n_ranges : 0;
  if (n != b->ndim)
    return err(v,
               "block \"%s\" %s \"%s\" with %d range%s, but \"%s\" has %d "
               "dimension%s; give one range per dimension",
               or_q(blk->name), verb, or_q(b->name), n, plural(n),
               or_q(b->name), b->ndim, plural(b->ndim));
  char of[96];
  snprintf(of, sizeof of, "\"%s\" in block \"%s\"", or_q(b->name),
           or_q(blk->name));
  for (int i = 0; i < n; i++)
    TRY(check_range(v, &r->ranges[i], of));
  return LOOM_OK;
}

static loom_status check_iter_var(verifier *v, const loom_block *blk,
                                  const loom_iter_var *iv) {
  if (!iv->var)
    return err(v, "block \"%s\" has an iter var with no variable",
               or_q(blk->name));
  char of[96];
  snprintf(of, sizeof of, "iter var \"%s\"", var_name(iv->var));
  TRY(check_range(v, &iv->dom, of));
  dstr s;
  if (!is_scalar_int(iv->var->dtype))
    return err(v,
               "iter var \"%s\" of block \"%s\" is %s; iter vars must be "
               "integers",
               var_name(iv->var), or_q(blk->name), dt(&s, 0, iv->var->dtype));
  if (!loom_dtype_eq(iv->dom.extent->dtype, iv->var->dtype) ||
      !loom_dtype_eq(iv->dom.min->dtype, iv->var->dtype))
    return err(v,
               "the domain of iter var \"%s\" of block \"%s\" is %s but "
               "the iter var is %s; they must have one dtype",
               var_name(iv->var), or_q(blk->name),
               dt(&s, 0, iv->dom.extent->dtype), dt(&s, 1, iv->var->dtype));
  return define(v, iv->var, DEF_ITER, blk);
}

/* Everything in a block before its body, in scope order: iter vars, the
 * buffers it defines, then the regions and annotations that may use them. */
static loom_status check_block_head(verifier *v, const loom_block *b) {
  if (!b->name)
    return err(v, "a block has no name");
  TRY(check_array(v, b->iter_vars, b->n_iter_vars, "block iter vars"));
  TRY(check_array(v, b->alloc_buffers, b->n_alloc_buffers, "alloc_buffers"));
  TRY(check_array(v, b->match_buffers, b->n_match_buffers, "match_buffers"));
  TRY(check_array(v, b->reads, b->n_reads, "block reads"));
  TRY(check_array(v, b->writes, b->n_writes, "block writes"));
  for (int i = 0; i < b->n_iter_vars; i++)
    TRY(check_iter_var(v, b, &b->iter_vars[i]));
  for (int i = 0; i < b->n_alloc_buffers; i++)
    TRY(define_buffer(v, b->alloc_buffers[i]));
  for (int i = 0; i < b->n_match_buffers; i++) {
    TRY(define_buffer(v, b->match_buffers[i].buffer));
    TRY(check_region(v, b, &b->match_buffers[i].source, "matches"));
  }
  for (int i = 0; i < b->n_reads; i++)
    TRY(check_region(v, b, &b->reads[i], "reads"));
  for (int i = 0; i < b->n_writes; i++)
    TRY(check_region(v, b, &b->writes[i], "writes"));
  TRY(check_attrs(v, b->annotations, b->n_annotations));
  if (!b->body)
    return err(v, "block \"%s\" has no body", b->name);
  return b->init ? check_stmt(v, b->init) : LOOM_OK;
}

/* Bindings and predicate are outside the block's scope: they see the loops
 * around it, never the block's own iter vars. */
static loom_status check_realize(verifier *v, const loom_stmt *s) {
  const loom_block *b = s->u.realize.block;
  if (!b)
    return err(v, "a block realize has no block");
  int n = s->u.realize.n_iter_values;
  if (n != b->n_iter_vars)
    return err(v,
               "block \"%s\" has %d iter var%s but its realize binds %d "
               "value%s; bind one value per iter var",
               or_q(b->name), b->n_iter_vars, plural(b->n_iter_vars), n,
               plural(n));
  TRY(check_array(v, b->iter_vars, b->n_iter_vars, "block iter vars"));
  const loom_block *outer = v->realizing;
  v->realizing = b;
  for (int i = 0; i < n; i++) {
    const loom_expr *x =
        s->u.realize.iter_values ? s->u.realize.iter_values[i] : NULL;
    const loom_var *iv = b->iter_vars[i].var;
    if (!x)
      return err(v, "block \"%s\" has no binding for iter var \"%s\"",
                 or_q(b->name), var_name(iv));
    TRY(check_expr(v, x));
    dstr t;
    if (iv && !loom_dtype_eq(x->dtype, iv->dtype))
      return err(v,
                 "the binding of iter var \"%s\" of block \"%s\" is %s but "
                 "the iter var is %s; bind a value of the iter var's dtype",
                 var_name(iv), or_q(b->name), dt(&t, 0, x->dtype),
                 dt(&t, 1, iv->dtype));
  }
  v->realizing = outer;
  if (s->u.realize.predicate) {
    char of[96];
    snprintf(of, sizeof of, "the predicate (T.where) of block \"%s\"",
             or_q(b->name));
    TRY(check_cond(v, s->u.realize.predicate, of));
  }
  enter_loc(v, b->loc);
  return check_block_head(v, b);
}

/* ---- statements ---------------------------------------------------------- */

static loom_status check_for(verifier *v, const loom_stmt *s) {
  const loom_var *x = s->u.loop.var;
  if (!x)
    return err(v, "a for loop has no loop variable");
  if (!s->u.loop.min || !s->u.loop.extent)
    return err(v, "loop \"%s\" has no %s", var_name(x),
               s->u.loop.min ? "extent" : "min");
  TRY(check_expr(v, s->u.loop.min));
  TRY(check_expr(v, s->u.loop.extent));
  dstr t;
  if (!is_scalar_int(x->dtype))
    return err(v,
               "loop variable \"%s\" is %s; loop variables must be "
               "integers",
               var_name(x), dt(&t, 0, x->dtype));
  if (!loom_dtype_eq(s->u.loop.min->dtype, x->dtype))
    return err(v,
               "loop \"%s\": min is %s but the loop variable is %s; min, "
               "extent and loop variable must have one dtype",
               var_name(x), dt(&t, 0, s->u.loop.min->dtype),
               dt(&t, 1, x->dtype));
  if (!loom_dtype_eq(s->u.loop.extent->dtype, x->dtype))
    return err(v,
               "loop \"%s\": extent is %s but the loop variable is %s; min, "
               "extent and loop variable must have one dtype",
               var_name(x), dt(&t, 0, s->u.loop.extent->dtype),
               dt(&t, 1, x->dtype));
  if (s->u.loop.kind == LOOM_FOR_THREAD_BINDING && !s->u.loop.thread)
    return err(v,
               "loop \"%s\" is bound to a thread but names none; give a "
               "thread tag such as \"threadIdx.x\"",
               var_name(x));
  TRY(check_attrs(v, s->u.loop.annotations, s->u.loop.n_annotations));
  if (!s->u.loop.body)
    return err(v, "loop \"%s\" has no body", var_name(x));
  return define(v, x, DEF_LOOP, NULL);
}

static loom_status check_store(verifier *v, const loom_stmt *s) {
  const loom_buffer *b = s->u.store.buffer;
  TRY(use_buffer(v, b));
  if (!s->u.store.value)
    return err(v, "a store to \"%s\" has no value", or_q(b->name));
  int n = s->u.store.n_indices;
  if (n != b->ndim)
    return err(v,
               "buffer \"%s\" has %d dimension%s but is stored to with "
               "%d ind%s; give one index per dimension",
               or_q(b->name), b->ndim, plural(b->ndim), n,
               n == 1 ? "ex" : "ices");
  for (int i = 0; i < n; i++) {
    const loom_expr *x = s->u.store.indices ? s->u.store.indices[i] : NULL;
    if (!x)
      return err(v, "index %d of a store to \"%s\" is missing", i,
                 or_q(b->name));
    TRY(check_expr(v, x));
    if (!loom_dtype_is_int(x->dtype))
      return err(v, "index %d of a store to \"%s\" is not an integer", i,
                 or_q(b->name));
  }
  TRY(check_expr(v, s->u.store.value));
  loom_dtype t = s->u.store.value->dtype;
  dstr d;
  if (t.code != b->dtype.code || t.bits != b->dtype.bits)
    return err(v,
               "a store to \"%s\" writes a %s value, but \"%s\" holds %s; "
               "cast the value to the buffer's dtype",
               or_q(b->name), dt(&d, 0, t), or_q(b->name), dt(&d, 1, b->dtype));
  return LOOM_OK;
}

/* Checks one statement up to its last child; returns that child in *next
 * when the caller's chain should go on with it. Definitions made here stay
 * live until the chain ends, which is where their scopes end. */
static loom_status check_stmt_node(verifier *v, const loom_stmt *s,
                                   const loom_stmt **next) {
  *next = NULL;
  switch (s->kind) {
  case LOOM_STMT_FOR:
    TRY(check_for(v, s));
    *next = s->u.loop.body;
    return LOOM_OK;
  case LOOM_STMT_BLOCK_REALIZE:
    TRY(check_realize(v, s));
    *next = s->u.realize.block->body;
    return LOOM_OK;
  case LOOM_STMT_STORE: return check_store(v, s);
  case LOOM_STMT_IF:
    TRY(check_cond(v, s->u.if_.cond, "an if statement"));
    if (!s->u.if_.then_case)
      return err(v, "an if statement has no then branch");
    TRY(check_stmt(v, s->u.if_.then_case));
    *next = s->u.if_.else_case;
    return LOOM_OK;
  case LOOM_STMT_SEQ: {
    int n = s->u.seq.n_stmts;
    TRY(check_array(v, s->u.seq.stmts, n, "statements of a sequence"));
    for (int i = 0; i < n; i++)
      if (!s->u.seq.stmts[i])
        return err(v, "statement %d of a sequence is missing", i);
    for (int i = 0; i + 1 < n; i++)
      TRY(check_stmt(v, s->u.seq.stmts[i]));
    *next = n ? s->u.seq.stmts[n - 1] : NULL;
    return LOOM_OK;
  }
  case LOOM_STMT_EVALUATE: return check_expr(v, s->u.evaluate.value);
  case LOOM_STMT_LET: {
    const loom_var *x = s->u.let.var;
    if (!x)
      return err(v, "a let binds no variable");
    TRY(check_expr(v, s->u.let.value));
    dstr t;
    if (!loom_dtype_eq(x->dtype, s->u.let.value->dtype))
      return err(v, "let \"%s\" is %s but its value is %s; cast the value",
                 var_name(x), dt(&t, 0, x->dtype),
                 dt(&t, 1, s->u.let.value->dtype));
    TRY(define(v, x, DEF_LET, NULL));
    *next = s->u.let.body;
    return LOOM_OK;
  }
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    TRY(define_buffer(v, s->u.alloc.buffer));
    *next = s->u.alloc.body;
    return LOOM_OK;
  case LOOM_STMT_ATTR:
    if (!s->u.attr.key)
      return err(v, "an attribute statement has no key");
    TRY(check_value(v, s->u.attr.node));
    if (s->u.attr.value)
      TRY(check_expr(v, s->u.attr.value));
    *next = s->u.attr.body;
    return LOOM_OK;
  case LOOM_STMT_ASSERT:
    TRY(check_cond(v, s->u.assert_.cond, "an assertion"));
    if (s->u.assert_.message)
      TRY(check_expr(v, s->u.assert_.message));
    *next = s->u.assert_.body;
    return LOOM_OK;
  case LOOM_STMT_COUNT_: break;
  }
  return err(v, "statement of unknown kind %d", (int)s->kind);
}

/* Follows last children iteratively; every scope opened along the chain
 * closes where the chain ends. The bodies of lets, allocations, attributes
 * and assertions may be absent: nothing follows them. */
static loom_status check_stmt(verifier *v, const loom_stmt *s) {
  int mark = v->n_live;
  loom_loc loc = v->loc;
  loom_status st = LOOM_OK;
  while (s && st == LOOM_OK) {
    enter_loc(v, s->loc);
    st = check_stmt_node(v, s, &s);
  }
  leave(v, mark);
  v->loc = loc;
  return st;
}

/* ---- functions and modules ----------------------------------------------- */

static loom_status check_func(verifier *v, const loom_func *f) {
  enter_loc(v, f->loc);
  if (f->n_params > 0 && !f->params)
    return err(v, "function \"%s\" has no parameter array", or_q(f->name));
  for (int i = 0; i < f->n_params; i++) {
    if (!f->params[i].var)
      return err(v, "parameter %d of function \"%s\" has no variable", i,
                 or_q(f->name));
    TRY(define(v, f->params[i].var, DEF_PARAM, NULL));
  }
  for (int i = 0; i < f->n_params; i++)
    if (f->params[i].buffer)
      TRY(define_buffer(v, f->params[i].buffer));
  TRY(check_attrs(v, f->attrs, f->n_attrs));
  if (!f->body)
    return err(v, "function \"%s\" has no body", or_q(f->name));
  return check_stmt(v, f->body);
}

loom_status loom_ir_verify_func(const loom_func *f, loom_diag *d) {
  if (!f)
    return loom_diag_error(d, (loom_loc){0}, "no function to verify");
  verifier v;
  memset(&v, 0, sizeof v);
  v.d = d;
  loom_status st = check_func(&v, f);
  loom_ptrmap_free(&v.index);
  free(v.defs);
  free(v.live);
  free(v.work);
  return st;
}

static int func_name_cmp(const void *x, const void *y) {
  const loom_func *a = *(const loom_func *const *)x;
  const loom_func *b = *(const loom_func *const *)y;
  return strcmp(a->name, b->name);
}

/* Function names are how modules, schedules and databases refer to
 * functions; sorting finds a repeated one without quadratic time. */
static loom_status check_unique_names(const loom_module *m, loom_diag *d) {
  const loom_func **fs = malloc(sizeof *fs * (size_t)(m->n_funcs + 1));
  if (!fs) {
    loom_diag_error(d, (loom_loc){0},
                    "out of memory while verifying the "
                    "module");
    return LOOM_NOMEM;
  }
  int n = 0;
  for (int i = 0; i < m->n_funcs; i++)
    if (m->funcs[i]->name)
      fs[n++] = m->funcs[i];
  qsort(fs, (size_t)n, sizeof *fs, func_name_cmp);
  loom_status st = LOOM_OK;
  for (int i = 1; i < n && st == LOOM_OK; i++)
    if (!strcmp(fs[i - 1]->name, fs[i]->name))
      st = loom_diag_error(d, fs[i]->loc,
                           "function \"%s\" is defined twice "
                           "in the module; rename one",
                           fs[i]->name);
  free(fs);
  return st;
}

loom_status loom_ir_verify_module(const loom_module *m, loom_diag *d) {
  if (!m)
    return loom_diag_error(d, (loom_loc){0}, "no module to verify");
  for (int i = 0; i < m->n_funcs; i++)
    if (!m->funcs || !m->funcs[i])
      return loom_diag_error(d, (loom_loc){0},
                             "function %d of the module is missing", i);
  TRY(check_unique_names(m, d));
  for (int i = 0; i < m->n_funcs; i++)
    TRY(loom_ir_verify_func(m->funcs[i], d));
  for (int i = 0; i < m->n_graphs; i++)
    TRY(loom_ir_verify_graph(m, m->graphs[i], d));
  return LOOM_OK;
}
