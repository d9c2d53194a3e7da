/* The TVMScript reader's entry: parses the text, then builds a module from
 * its one @T.prim_func or its @I.ir_module class. This file holds the module
 * and function level (decorators, parameters, attributes, the root block
 * rule and region inference); the rest is in read_*.c. */
#include "script/read.h"

#include <stdlib.h>
#include <string.h>

/* ---- parameters ---------------------------------------------------------- */

/* The T.Buffer annotation of a parameter as a call; the old subscript
 * spelling T.Buffer[(128,), "float32"] is turned into the call form. */
static loom_status buffer_annotation(rd_ctx *c, const py_expr *ann,
                                     const py_expr **call) {
  *call = NULL;
  if (ann->kind == PY_CALL && rd_is_t(ann->u.call.func, "Buffer")) {
    *call = ann;
    return LOOM_OK;
  }
  if (ann->kind != PY_SUBSCRIPT || !rd_is_t(ann->u.sub.value, "Buffer"))
    return LOOM_OK;
  const py_expr *idx = ann->u.sub.index;
  py_expr *e = loom_arena_alloc(c->a, sizeof(py_expr));
  if (!e || !idx)
    return e ? rd_error(c, ann->loc, "T.Buffer[...] needs a shape")
             : LOOM_NOMEM;
  e->kind = PY_CALL;
  e->loc = ann->loc;
  e->u.call.func = ann->u.sub.value;
  if (idx->kind == PY_TUPLE && idx->u.seq.n_items >= 2 &&
      idx->u.seq.items[1] && idx->u.seq.items[1]->kind == PY_STR) {
    e->u.call.args = idx->u.seq.items; /* T.Buffer[shape, "dtype"] */
    e->u.call.n_args = idx->u.seq.n_items;
  } else {
    e->u.call.args = loom_arena_alloc(c->a, sizeof(py_expr *));
    if (!e->u.call.args)
      return LOOM_NOMEM;
    e->u.call.args[0] = (py_expr *)idx;
    e->u.call.n_args = 1;
  }
  *call = e;
  return LOOM_OK;
}

/* Scalar parameters are defined first, so that a buffer's shape may name a
 * scalar that comes later in the list, as TVM prints them. */
static loom_status params(rd_ctx *c, const py_stmt *s) {
  int n = s->u.func.n_args;
  const py_expr **calls =
      n ? loom_arena_alloc(c->a, sizeof(py_expr *) * (size_t)n) : NULL;
  if (n && !calls)
    return LOOM_NOMEM;
  for (int i = 0; i < n; i++) {
    const py_arg *arg = &s->u.func.args[i];
    if (!arg->name)
      return rd_error(c, arg->loc, "malformed parameter");
    for (int j = 0; j < i; j++)
      if (!strcmp(s->u.func.args[j].name, arg->name)) {
        rd_error(c, arg->loc, "parameter '%s' is defined twice", arg->name);
        loom_diag_note(c->d, s->u.func.args[j].loc, "the first '%s' is here",
                       arg->name);
        return LOOM_ERROR;
      }
    if (!arg->annotation)
      return rd_error(c, arg->loc,
                      "parameter '%s' needs a type, such as %s: T.int32 or "
                      "%s: T.Buffer((16,), \"float32\")",
                      arg->name, arg->name, arg->name);
    if (arg->default_value)
      return rd_error(c, arg->default_value->loc,
                      "parameters of a prim_func cannot have default values");
    loom_param *p = rd_vec_push(c, &c->params, sizeof(loom_param));
    if (!p)
      return LOOM_NOMEM;
    TRY(buffer_annotation(c, arg->annotation, &calls[i]));
    if (calls[i]) {
      if (!(p->var = loom_ir_var(c->a, arg->name, LOOM_HANDLE)))
        return LOOM_NOMEM;
      continue;
    }
    loom_dtype t, elem;
    const char *scope;
    TRY(rd_annotation_dtype(c, arg->annotation, &t, &elem, &scope));
    if (!(p->var = loom_ir_var(c->a, arg->name, t)))
      return LOOM_NOMEM;
    p->var->elem = elem;
    p->var->scope = scope;
    TRY(rd_define_var(c, p->var->name, p->var));
  }
  for (int i = 0; i < n; i++) {
    if (!calls[i])
      continue;
    loom_param *p = &RD_AT(c->params, loom_param, i);
    TRY(rd_buffer_decl(c, calls[i], BUF_PARAM, s->u.func.args[i].name, NULL,
                       &p->buffer));
    TRY(rd_define_buffer(c, p->buffer->name, p->buffer));
  }
  return LOOM_OK;
}

/* ---- decorators ---------------------------------------------------------- */

typedef struct func_flags {
  bool is_private, is_tirx;
} func_flags;

static loom_status bool_kwarg(rd_ctx *c, const py_keyword *kw, bool *out) {
  if (!kw->value || (kw->value->kind != PY_TRUE && kw->value->kind != PY_FALSE))
    return rd_error(c, kw->loc, "%s= takes True or False", kw->name);
  *out = kw->value->kind == PY_TRUE;
  return LOOM_OK;
}

/* The spellings of the decorators that published material uses: TVM's
 * printer writes T.prim_func and I.ir_module; tutorials and the ML
 * compilation course write the module paths out. */
static const char *const prim_func_names[] = {"T.prim_func", "tvm.script.tir.prim_func",
                                              "tir.prim_func", "tvm.script.prim_func"};
static const char *const ir_module_names[] = {"I.ir_module", "tvm.script.ir_module",
                                              "tvm.script.ir.ir_module", "ir_module"};

static bool is_prim_func(const py_expr *e) {
  return rd_is_dotted(e, prim_func_names, N_OF(prim_func_names));
}

static loom_status prim_func_decorator(rd_ctx *c, const py_stmt *s,
                                       func_flags *flags) {
  const char *name = s->u.func.name ? s->u.func.name : "";
  if (s->n_decorators != 1 || !s->decorators[0])
    return rd_error(c, s->loc,
                    s->n_decorators
                        ? "function '%s' has more than one decorator; "
                          "write only @T.prim_func"
                        : "function '%s' needs the decorator @T.prim_func",
                    name);
  const py_expr *d = s->decorators[0];
  if (is_prim_func(d))
    return LOOM_OK;
  if (d->kind != PY_CALL || !is_prim_func(d->u.call.func))
    return rd_error(
        c, d->loc, "unsupported decorator; a function is written @T.prim_func");
  if (d->u.call.n_args)
    return rd_error(c, d->loc, "@T.prim_func takes keyword arguments only");
  for (int i = 0; i < d->u.call.n_kwargs; i++) {
    const py_keyword *kw = &d->u.call.kwargs[i];
    bool v = false;
    if (!kw->name)
      return rd_error(c, kw->loc, "@T.prim_func does not take **kwargs");
    if (!strcmp(kw->name, "private")) {
      TRY(bool_kwarg(c, kw, &v));
      flags->is_private = v;
    } else if (!strcmp(kw->name, "s_tir")) {
      TRY(bool_kwarg(c, kw, &v));
      flags->is_tirx |= v;
    } else if (!strcmp(kw->name, "check_well_formed")) {
      TRY(bool_kwarg(c, kw, &v));
    } else {
      return rd_error(c, kw->loc,
                      "@T.prim_func has no argument '%s'; it takes private= "
                      "and s_tir=",
                      kw->name);
    }
  }
  return LOOM_OK;
}

/* ---- the function -------------------------------------------------------- */

/* TVM's root block rule (script_complete.cc): wrap the body in a block
 * "root" that owns the function-level buffers when there are such buffers,
 * or when the body holds blocks but is not itself one block without iter
 * vars. Returns the block that is the function's root, which keeps its
 * regions empty, or NULL. */
static loom_status root_block(rd_ctx *c, const py_stmt *s, loom_stmt **body,
                              loom_block **root) {
  loom_stmt *b = *body;
  bool is_single = b->kind == LOOM_STMT_BLOCK_REALIZE;
  *root = is_single ? b->u.realize.block : NULL;
  bool wrap = c->root_allocs.n > 0 ||
              (is_single && b->u.realize.block->n_iter_vars > 0) ||
              (!is_single && loom_ir_stmt_has(b, LOOM_STMT_BLOCK_REALIZE));
  if (!wrap)
    return LOOM_OK;
  loom_block *r = loom_ir_block(c->a, "root");
  loom_stmt *realize = loom_ir_stmt(c->a, LOOM_STMT_BLOCK_REALIZE, s->loc);
  if (!r || !realize)
    return LOOM_NOMEM;
  r->body = b;
  r->alloc_buffers = c->root_allocs.items;
  r->n_alloc_buffers = c->root_allocs.n;
  r->loc = s->loc;
  realize->u.realize.block = r;
  *body = realize;
  *root = r;
  return LOOM_OK;
}

static loom_status infer_regions(rd_ctx *c, const loom_block *root) {
  for (int i = 0; i < c->pending.n; i++) {
    rd_pending *p = &RD_AT(c->pending, rd_pending, i);
    if (p->block == root)
      continue;
    TRY(loom_ir_infer_block_regions(c->a, p->block, p->want_reads,
                                    p->want_writes, p->outer, p->n_outer,
                                    c->d));
  }
  return LOOM_OK;
}

static loom_status func_attrs(rd_ctx *c, const py_stmt *s, func_flags flags,
                              loom_func *f) {
  bool has_symbol = false;
  for (int i = 0; i < c->attrs.n; i++)
    has_symbol |= !strcmp(RD_AT(c->attrs, loom_attr, i).key, "global_symbol");
  if (!flags.is_private && !has_symbol) {
    loom_attr *a = rd_vec_push(c, &c->attrs, sizeof(loom_attr));
    if (!a || !(a->value = loom_ir_value_str(c->a, s->u.func.name)))
      return LOOM_NOMEM;
    a->key = "global_symbol";
  }
  rd_sort_attrs(c->attrs.items, c->attrs.n);
  f->attrs = c->attrs.items;
  f->n_attrs = c->attrs.n;
  return LOOM_OK;
}

static void reset_function(rd_ctx *c) {
  rd_vec none = {0};
  c->syms = none;
  c->loops = none;
  c->root_allocs = none;
  c->pending = none;
  c->params = none;
  c->attrs = none;
  c->block = NULL;
  c->has_func_attr = false;
  c->stmt_depth = 0;
  c->expr_depth = 0;
  c->loc_override = NULL;
  c->define_unknown_names = false;
  c->declared = none;
}

/* The `n = T.int64()` declarations at the top level of a function body,
 * gathered before the signature is read, so that a shape variable the
 * signature names as a string gets its declared dtype. */
static loom_status scan_declarations(rd_ctx *c, const py_block *body) {
  for (int i = 0; i < body->n_stmts; i++) {
    const py_stmt *s = body->stmts[i];
    if (!s || s->kind != PY_S_ASSIGN || !s->u.assign.target ||
        s->u.assign.target->kind != PY_NAME || !s->u.assign.target->u.name)
      continue;
    const py_expr *v = s->u.assign.value;
    char buf[96];
    const char *fn = v && v->kind == PY_CALL && v->u.call.n_args == 0 &&
                             v->u.call.n_kwargs == 0
                         ? rd_t_name(v->u.call.func, buf, sizeof buf)
                         : NULL;
    loom_dtype t;
    if (!fn || !loom_dtype_parse(fn, strlen(fn), &t) || !loom_dtype_is_int(t))
      continue;
    rd_declared *d = rd_vec_push(c, &c->declared, sizeof *d);
    if (!d)
      return LOOM_NOMEM;
    d->name = s->u.assign.target->u.name;
    d->dtype = t;
  }
  return LOOM_OK;
}

static loom_status read_func(rd_ctx *c, const py_stmt *s, loom_func **out) {
  func_flags flags = {false, c->file_is_tirx};
  if (!s->u.func.name)
    return rd_error(c, s->loc, "malformed function");
  TRY(prim_func_decorator(c, s, &flags));
  reset_function(c);
  c->func_is_tirx = flags.is_tirx;
  loom_func *f = loom_ir_func(c->a, s->u.func.name);
  if (!f)
    return LOOM_NOMEM;
  f->loc = s->loc;
  TRY(scan_declarations(c, &s->u.func.body));
  TRY(params(c, s));
  if (s->u.func.returns && s->u.func.returns->kind != PY_NONE) {
    loom_dtype elem;
    const char *scope;
    TRY(rd_annotation_dtype(c, s->u.func.returns, &f->ret_type, &elem, &scope));
  }
  loom_stmt *body;
  TRY(rd_body(c, &s->u.func.body, &body));
  loom_block *root;
  TRY(root_block(c, s, &body, &root));
  TRY(infer_regions(c, root));
  f->body = body;
  f->params = c->params.items;
  f->n_params = c->params.n;
  TRY(func_attrs(c, s, flags, f));
  *out = f;
  return LOOM_OK;
}

/* ---- the module ---------------------------------------------------------- */

static loom_status add_func(rd_ctx *c, const py_stmt *s, rd_vec *funcs) {
  loom_func *f = NULL;
  TRY(read_func(c, s, &f));
  return rd_vec_push_ptr(c, funcs, f);
}

static int cmp_def_name(const void *x, const void *y) {
  const py_stmt *s = *(const py_stmt *const *)x, *t = *(const py_stmt *const *)y;
  int r = strcmp(s->u.func.name, t->u.func.name);
  if (r)
    return r;
  /* Equal names keep source order, so the error lands on the later one. */
  return s->loc.line != t->loc.line ? s->loc.line - t->loc.line
                                    : s->loc.col - t->loc.col;
}

/* Two functions of one name in a class. Sorting the definitions keeps this
 * n log n for modules of thousands of functions. */
static loom_status check_unique_defs(rd_ctx *c, const py_block *body) {
  const py_stmt **defs = malloc(sizeof *defs * (size_t)(body->n_stmts + 1));
  if (!defs)
    return LOOM_NOMEM;
  int n = 0;
  for (int i = 0; i < body->n_stmts; i++) {
    const py_stmt *m = body->stmts[i];
    if (m && m->kind == PY_S_FUNCDEF && m->u.func.name)
      defs[n++] = m;
  }
  qsort(defs, (size_t)n, sizeof *defs, cmp_def_name);
  loom_status st = LOOM_OK;
  for (int i = 1; i < n && st == LOOM_OK; i++) {
    if (strcmp(defs[i - 1]->u.func.name, defs[i]->u.func.name))
      continue;
    st = rd_error(c, defs[i]->loc, "function '%s' is defined twice in the module",
                  defs[i]->u.func.name);
    loom_diag_note(c->d, defs[i - 1]->loc, "the first '%s' is here",
                   defs[i]->u.func.name);
  }
  free(defs);
  return st;
}

/* n = TypeVar("n") at the top of the file, as TVM prints a module's
 * symbolic shape variables. */
static const char *typevar_decl(const py_stmt *s) {
  if (s->kind != PY_S_ASSIGN || !s->u.assign.target || !s->u.assign.value ||
      s->u.assign.target->kind != PY_NAME)
    return NULL;
  const py_expr *v = s->u.assign.value;
  if (v->kind != PY_CALL || !v->u.call.func ||
      v->u.call.func->kind != PY_NAME || !v->u.call.func->u.name ||
      strcmp(v->u.call.func->u.name, "TypeVar") || v->u.call.n_args < 1 ||
      !v->u.call.args[0] || v->u.call.args[0]->kind != PY_STR)
    return NULL;
  return s->u.assign.target->u.name;
}

static bool is_ignorable(const py_stmt *s) {
  return s->kind == PY_S_PASS ||
         (s->kind == PY_S_EXPR && s->u.expr && s->u.expr->kind == PY_STR);
}

/* The class's prim funcs, then its graph functions, which call them. */
static loom_status read_class(rd_ctx *c, const py_stmt *s, loom_module *mod, rd_vec *funcs) {
  const char *name = s->u.cls.name ? s->u.cls.name : "";
  if (s->n_decorators != 1 ||
      !rd_is_dotted(s->decorators[0], ir_module_names, N_OF(ir_module_names)))
    return rd_error(c, s->loc, "class '%s' needs the decorator @I.ir_module "
                               "(or @tvm.script.ir_module)", name);
  TRY(check_unique_defs(c, &s->u.cls.body));
  rd_vec graph_defs = {0};
  for (int i = 0; i < s->u.cls.body.n_stmts; i++) {
    const py_stmt *m = s->u.cls.body.stmts[i];
    if (!m || is_ignorable(m))
      continue;
    if (m->kind != PY_S_FUNCDEF)
      return rd_error(c, m->loc,
                      "an @I.ir_module class holds only @T.prim_func "
                      "and @R.function functions");
    if (rd_is_graph_def(m))
      TRY(rd_vec_push_ptr(c, &graph_defs, (void *)m));
    else
      TRY(add_func(c, m, funcs));
  }
  mod->funcs = funcs->items;
  mod->n_funcs = funcs->n;
  rd_vec graphs = {0};
  for (int i = 0; i < graph_defs.n; i++) {
    loom_graph *g;
    TRY(rd_read_graph(c, RD_AT(graph_defs, const py_stmt *, i), mod, &g));
    TRY(rd_vec_push_ptr(c, &graphs, g));
  }
  mod->graphs = graphs.items;
  mod->n_graphs = graphs.n;
  return LOOM_OK;
}

static loom_status read_module(rd_ctx *c, const py_module *pm, loom_module *m) {
  rd_vec funcs = {0};
  const py_stmt *first = NULL;
  for (int i = 0; i < pm->body.n_stmts; i++) {
    const py_stmt *s = pm->body.stmts[i];
    if (!s || s->kind == PY_S_IMPORT || is_ignorable(s))
      continue;
    const char *tv = typevar_decl(s);
    if (tv) {
      TRY(rd_vec_push_ptr(c, &c->typevars, (void *)tv));
      continue;
    }
    /* Around a pasted module: `mod = MyModule`, `print(...)`,
     * `sch = tvm.tir.Schedule(MyModule)` are the notebook's, not the
     * program's. */
    if (s->kind == PY_S_ASSIGN || s->kind == PY_S_EXPR)
      continue;
    if (s->kind != PY_S_FUNCDEF && s->kind != PY_S_CLASSDEF)
      return rd_error(c, s->loc,
                      "expected @T.prim_func or @I.ir_module at the top level "
                      "of the file");
    if (first) {
      rd_error(c, s->loc,
               "a file holds one @T.prim_func or one @I.ir_module class; "
               "put several functions in an @I.ir_module class");
      loom_diag_note(c->d, first->loc, "the first definition is here");
      return LOOM_ERROR;
    }
    first = s;
    if (s->kind == PY_S_CLASSDEF) {
      m->is_ir_module = true;
      TRY(read_class(c, s, m, &funcs));
    } else {
      TRY(add_func(c, s, &funcs));
    }
  }
  if (!first)
    return rd_error(c, (loom_loc){c->file, 1, 1},
                    "no @T.prim_func found; a file holds one @T.prim_func or "
                    "an @I.ir_module class of them");
  m->funcs = funcs.items;
  m->n_funcs = funcs.n;
  return LOOM_OK;
}

static bool imports_tirx(const py_module *pm) {
  for (int i = 0; i < pm->n_header_comments; i++)
    if (pm->header_comments[i] && strstr(pm->header_comments[i], "tirx"))
      return true;
  return false;
}

loom_status loom_script_read(const char *text, size_t len, const char *file,
                             loom_arena *a, loom_module **out, loom_diag *d) {
  loom_diag_set_source(d, text, len);
  py_module *pm = NULL;
  loom_status st = py_parse(text, len, file, a, &pm, d);
  if (st == LOOM_NOMEM && !d->has_error)
    loom_diag_error(d, (loom_loc){file, 0, 0}, "out of memory");
  if (st != LOOM_OK)
    return st;
  rd_ctx c = {0};
  c.a = a;
  c.d = d;
  c.file = file;
  c.file_is_tirx = imports_tirx(pm);
  loom_module *m = loom_ir_module(a);
  if (!m)
    return LOOM_NOMEM;
  st = read_module(&c, pm, m);
  if (st == LOOM_OK)
    st = loom_arena_status(a);
  if (st == LOOM_NOMEM && !d->has_error)
    loom_diag_error(d, (loom_loc){file, 0, 0}, "out of memory");
  if (st != LOOM_OK)
    return st;
  *out = m;
  return LOOM_OK;
}
