/* The reader's graph functions: an @R.function of an @I.ir_module whose
 * steps call the module's prim funcs, as TVM prints a Relax function once
 * its operators are TensorIR:
 *
 *   @R.function
 *   def main(x: R.Tensor((1, 8), dtype="float32"), w: R.Tensor(...)):
 *       cls = Module
 *       with R.dataflow():
 *           lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor(...))
 *           gv: R.Tensor(...) = lv
 *           R.output(gv)
 *       return gv
 *
 * Steps are R.call_tir bindings (out_sinfo=, or out_ty= as TVM 0.27 prints
 * it), names bound to other names or to tuples of them, and R.output; the
 * return is a name or a tuple of names. Everything else is refused at its
 * place. */
#include "script/read.h"

#include <string.h>

typedef struct gname {
  const char *name;
  int value;       /* -1 for a tuple */
  int *items;      /* a tuple's values */
  int n_items;
} gname;

typedef struct greader {
  rd_ctx *c;
  const loom_module *m; /* the prim funcs read so far: all of the class's */
  const char *cls;      /* the name `cls = Module` binds, "cls" by default */
  rd_vec values;        /* loom_graph_value */
  rd_vec calls;         /* loom_graph_call */
  rd_vec names;         /* gname, latest last */
  rd_vec outputs;       /* int */
  bool has_return;
} greader;

static const char *const function_names[] = {"R.function", "relax.function",
                                              "tvm.script.relax.function"};

bool rd_is_graph_def(const py_stmt *s) {
  if (s->kind != PY_S_FUNCDEF || s->n_decorators != 1 || !s->decorators[0])
    return false;
  const py_expr *d = s->decorators[0];
  if (d->kind == PY_CALL)
    d = d->u.call.func;
  return rd_is_dotted(d, function_names, N_OF(function_names));
}

static const gname *find(greader *r, const char *name) {
  for (int i = r->names.n - 1; i >= 0; i--)
    if (!strcmp(RD_AT(r->names, gname, i).name, name))
      return &RD_AT(r->names, gname, i);
  return NULL;
}

static loom_status bind(greader *r, const char *name, int value, int *items, int n,
                        loom_loc loc) {
  if (find(r, name))
    return rd_error(r->c, loc, "'%s' is bound twice in the graph", name);
  gname *g = rd_vec_push(r->c, &r->names, sizeof *g);
  if (!g)
    return LOOM_NOMEM;
  *g = (gname){name, value, items, n};
  return LOOM_OK;
}

/* A name that stands for one tensor. */
static loom_status tensor_of(greader *r, const py_expr *e, int *out) {
  if (e->kind != PY_NAME)
    return rd_error(r->c, e->loc, "expected the name of a tensor");
  const gname *g = find(r, e->u.name);
  if (!g)
    return rd_error(r->c, e->loc, "'%s' is not defined in the graph", e->u.name);
  if (g->value < 0)
    return rd_error(r->c, e->loc, "'%s' is a tuple, not a tensor", e->u.name);
  *out = g->value;
  return LOOM_OK;
}

/* R.Tensor((1, 8), dtype="float32"), the dtype positional or not. */
static loom_status tensor_info(rd_ctx *c, const py_expr *e, loom_tensor_info *out) {
  static const char *const tensor[] = {"R.Tensor", "relax.Tensor"};
  if (!e || e->kind != PY_CALL || !rd_is_dotted(e->u.call.func, tensor, N_OF(tensor)))
    return rd_error(c, e ? e->loc : (loom_loc){c->file, 0, 0},
                    "expected a tensor type, R.Tensor((d0, d1, ...), dtype=\"float32\")");
  static const char *const params[] = {"shape", "dtype"};
  py_expr *args[2];
  TRY(rd_bind_args(c, e, "R.Tensor", params, 2, args));
  TRY(rd_require(c, e, "R.Tensor", args[0], "shape"));
  TRY(rd_require(c, e, "R.Tensor", args[1], "dtype"));
  const py_expr *s = args[0];
  if (s->kind != PY_TUPLE && s->kind != PY_LIST)
    return rd_error(c, s->loc, "the shape of a graph tensor is a tuple of integers");
  out->ndim = s->u.seq.n_items;
  out->shape = loom_arena_alloc(c->a, sizeof *out->shape * (size_t)(out->ndim + 1));
  if (!out->shape)
    return LOOM_NOMEM;
  for (int i = 0; i < out->ndim; i++) {
    const py_expr *x = s->u.seq.items[i];
    /* T.int64(8) as well as 8. */
    if (x->kind == PY_CALL && x->u.call.n_args == 1 && !x->u.call.n_kwargs)
      x = x->u.call.args[0];
    if (x->kind != PY_INT || x->u.num.is_big || x->u.num.int_value < 0)
      return rd_error(c, x->loc, "a graph tensor's dimension is a constant integer "
                      "(symbolic shapes are not supported in graphs)");
    out->shape[i] = x->u.num.int_value;
  }
  return rd_dtype_arg(c, args[1], &out->dtype);
}

static loom_status new_value(greader *r, const char *name, loom_tensor_info info, int *out) {
  loom_graph_value *v = rd_vec_push(r->c, &r->values, sizeof *v);
  if (!v)
    return LOOM_NOMEM;
  *v = (loom_graph_value){name, info};
  *out = r->values.n - 1;
  return LOOM_OK;
}

/* lv = R.call_tir(cls.f, (a, b), out_sinfo=R.Tensor(...)) */
static loom_status read_call(greader *r, const char *target, const py_expr *call,
                             loom_loc loc) {
  rd_ctx *c = r->c;
  static const char *const params[] = {"gvar", "args", "out_sinfo", "out_ty"};
  py_expr *args[4];
  TRY(rd_bind_args(c, call, "R.call_tir", params, 4, args));
  TRY(rd_require(c, call, "R.call_tir", args[0], "gvar"));
  TRY(rd_require(c, call, "R.call_tir", args[1], "args"));
  const py_expr *out_type = args[2] ? args[2] : args[3];
  TRY(rd_require(c, call, "R.call_tir", (py_expr *)out_type, "out_sinfo"));
  const py_expr *f = args[0];
  if (f->kind != PY_ATTRIBUTE || f->u.attr.value->kind != PY_NAME ||
      strcmp(f->u.attr.value->u.name, r->cls))
    return rd_error(c, f->loc, "R.call_tir calls a prim func of the module, written %s.NAME",
                    r->cls);
  const char *callee = f->u.attr.name;
  if (!loom_ir_module_find(r->m, callee))
    return rd_error(c, f->u.attr.name_loc, "the module has no prim func '%s'", callee);
  const py_expr *a = args[1];
  bool is_seq = a->kind == PY_TUPLE || a->kind == PY_LIST;
  int n = is_seq ? a->u.seq.n_items : 1;
  int *vs = loom_arena_alloc(c->a, sizeof *vs * (size_t)(n + 1));
  if (!vs)
    return LOOM_NOMEM;
  for (int i = 0; i < n; i++)
    TRY(tensor_of(r, is_seq ? a->u.seq.items[i] : a, &vs[i]));
  loom_tensor_info info;
  TRY(tensor_info(c, out_type, &info));
  int out;
  TRY(new_value(r, target, info, &out));
  loom_graph_call *k = rd_vec_push(c, &r->calls, sizeof *k);
  if (!k)
    return LOOM_NOMEM;
  *k = (loom_graph_call){callee, vs, n, out, loc};
  return bind(r, target, out, NULL, 0, loc);
}

static loom_status read_binding(greader *r, const py_expr *target, const py_expr *value,
                                loom_loc loc) {
  rd_ctx *c = r->c;
  static const char *const call_tir[] = {"R.call_tir", "relax.call_tir"};
  if (target->kind != PY_NAME)
    return rd_error(c, target->loc, "a graph binds one name at a time");
  const char *name = target->u.name;
  if (value->kind == PY_CALL && rd_is_dotted(value->u.call.func, call_tir, N_OF(call_tir)))
    return read_call(r, name, value, loc);
  if (value->kind == PY_NAME) {
    const gname *g = find(r, value->u.name);
    if (!g)
      return rd_error(c, value->loc, "'%s' is not defined in the graph", value->u.name);
    return bind(r, name, g->value, g->items, g->n_items, loc);
  }
  if (value->kind == PY_TUPLE) {
    int n = value->u.seq.n_items;
    int *items = loom_arena_alloc(c->a, sizeof *items * (size_t)(n + 1));
    if (!items)
      return LOOM_NOMEM;
    for (int i = 0; i < n; i++)
      TRY(tensor_of(r, value->u.seq.items[i], &items[i]));
    return bind(r, name, -1, items, n, loc);
  }
  return rd_error(c, value->loc, "a graph step is R.call_tir(cls.NAME, (args...), "
                  "out_sinfo=R.Tensor(...)), a name or a tuple of names");
}

static loom_status read_return(greader *r, const py_expr *e) {
  rd_ctx *c = r->c;
  if (!e)
    return rd_error(c, (loom_loc){c->file, 0, 0}, "a graph returns a tensor or a tuple");
  if (e->kind == PY_TUPLE) {
    for (int i = 0; i < e->u.seq.n_items; i++) {
      int *o = rd_vec_push(c, &r->outputs, sizeof *o);
      if (!o)
        return LOOM_NOMEM;
      TRY(tensor_of(r, e->u.seq.items[i], o));
    }
    return LOOM_OK;
  }
  if (e->kind == PY_NAME) {
    const gname *g = find(r, e->u.name);
    if (g && g->value < 0) {
      for (int i = 0; i < g->n_items; i++) {
        int *o = rd_vec_push(c, &r->outputs, sizeof *o);
        if (!o)
          return LOOM_NOMEM;
        *o = g->items[i];
      }
      return LOOM_OK;
    }
  }
  int *o = rd_vec_push(c, &r->outputs, sizeof *o);
  if (!o)
    return LOOM_NOMEM;
  return tensor_of(r, e, o);
}

static loom_status read_body(greader *r, const py_block *b, bool in_dataflow) {
  rd_ctx *c = r->c;
  static const char *const dataflow[] = {"R.dataflow", "relax.dataflow"};
  static const char *const output[] = {"R.output", "relax.output"};
  for (int i = 0; i < b->n_stmts; i++) {
    const py_stmt *s = b->stmts[i];
    if (!s || s->kind == PY_S_PASS ||
        (s->kind == PY_S_EXPR && s->u.expr && s->u.expr->kind == PY_STR))
      continue;
    if (r->has_return)
      return rd_error(c, s->loc, "nothing may follow the graph's return");
    if (s->kind == PY_S_ASSIGN && s->u.assign.target->kind == PY_NAME &&
        s->u.assign.value->kind == PY_NAME && !find(r, s->u.assign.value->u.name) &&
        !in_dataflow) {
      r->cls = s->u.assign.target->u.name; /* cls = Module */
    } else if (s->kind == PY_S_ASSIGN) {
      TRY(read_binding(r, s->u.assign.target, s->u.assign.value, s->loc));
    } else if (s->kind == PY_S_ANNASSIGN && s->u.ann.value) {
      TRY(read_binding(r, s->u.ann.target, s->u.ann.value, s->loc));
    } else if (s->kind == PY_S_WITH && !in_dataflow && s->u.with.n_items == 1 &&
               s->u.with.items[0].context->kind == PY_CALL &&
               rd_is_dotted(s->u.with.items[0].context->u.call.func, dataflow,
                            N_OF(dataflow))) {
      TRY(read_body(r, &s->u.with.body, true));
    } else if (s->kind == PY_S_EXPR && s->u.expr->kind == PY_CALL &&
               rd_is_dotted(s->u.expr->u.call.func, output, N_OF(output))) {
      for (int k = 0; k < s->u.expr->u.call.n_args; k++) {
        const py_expr *x = s->u.expr->u.call.args[k];
        if (x->kind != PY_NAME || !find(r, x->u.name))
          return rd_error(c, x->loc, "R.output names values bound in the dataflow block");
      }
    } else if (s->kind == PY_S_RETURN && !in_dataflow) {
      TRY(read_return(r, s->u.expr));
      r->has_return = true;
    } else {
      return rd_error(c, s->loc, "a graph function holds R.call_tir steps, R.output and "
                      "a return%s", in_dataflow ? "" : ", in or out of `with R.dataflow():`");
    }
  }
  return LOOM_OK;
}

loom_status rd_read_graph(rd_ctx *c, const py_stmt *s, const loom_module *m,
                          loom_graph **out) {
  const py_expr *d = s->decorators[0];
  if (d->kind == PY_CALL)
    for (int i = 0; i < d->u.call.n_kwargs; i++) {
      const py_keyword *k = &d->u.call.kwargs[i];
      if (!k->name || (strcmp(k->name, "pure") && strcmp(k->name, "private")))
        return rd_error(c, k->loc, "@R.function takes pure= and private= only");
    }
  greader r = {.c = c, .m = m, .cls = "cls"};
  for (int i = 0; i < s->u.func.n_args; i++) {
    const py_arg *a = &s->u.func.args[i];
    loom_tensor_info info;
    if (!a->annotation)
      return rd_error(c, a->loc, "graph parameter '%s' needs a type, R.Tensor(...)",
                      a->name);
    TRY(tensor_info(c, a->annotation, &info));
    int v;
    TRY(new_value(&r, a->name, info, &v));
    TRY(bind(&r, a->name, v, NULL, 0, a->loc));
  }
  int n_params = r.values.n;
  TRY(read_body(&r, &s->u.func.body, false));
  if (!r.has_return)
    return rd_error(c, s->loc, "graph function '%s' has no return", s->u.func.name);
  loom_graph *g = loom_arena_alloc(c->a, sizeof *g);
  if (!g)
    return LOOM_NOMEM;
  *g = (loom_graph){.name = s->u.func.name, .values = r.values.items, .n_values = r.values.n,
                    .n_params = n_params, .calls = r.calls.items, .n_calls = r.calls.n,
                    .outputs = r.outputs.items, .n_outputs = r.outputs.n, .loc = s->loc};
  if (loom_ir_verify_graph(m, g, c->d) != LOOM_OK)
    return LOOM_ERROR;
  *out = g;
  return LOOM_OK;
}
