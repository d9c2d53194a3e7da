/* Statements as TVM prints them: loops (T.grid where TVM folds them),
 * blocks and their headers (T.axis.remap where TVM uses it), stores, branches,
 * and lets, asserts and allocations, whose bodies go on at the same level. */
#include "script/print.h"

#include <stdlib.h>
#include <string.h>

static bool is_tirx(const printer *p) { return p->dialect == LOOM_DIALECT_TIRX; }

/* ---- expression helpers --------------------------------------------------- */

/* TVM's ExprDeepEqual: the same tree, variables by identity. An absent
 * expression reads as the constant 0 (an absent minimum). */
static bool same_expr(const loom_expr *a, const loom_expr *b) {
  if (!a || !b)
    return a == b || pr_is_zero(a ? a : b);
  return loom_ir_same_expr(a, b);
}

/* Whether e refers to the loop variable of any of loops[0..n). */
static bool uses_loop_var(const loom_expr *e, const loom_stmt *const *loops,
                          int n) {
  if (!e)
    return false;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
    return false;
  case LOOM_EXPR_VAR:
    for (int i = 0; i < n; i++)
      if (loops[i]->u.loop.var == e->u.var)
        return true;
    return false;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    return uses_loop_var(e->u.unary.a, loops, n);
  case LOOM_EXPR_SELECT:
    return uses_loop_var(e->u.select.cond, loops, n) ||
           uses_loop_var(e->u.select.t, loops, n) ||
           uses_loop_var(e->u.select.f, loops, n);
  case LOOM_EXPR_LOAD:
    for (int i = 0; i < e->u.load.n_indices; i++)
      if (uses_loop_var(e->u.load.indices[i], loops, n))
        return true;
    return false;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      if (uses_loop_var(e->u.call.args[i], loops, n))
        return true;
    return false;
  case LOOM_EXPR_LET:
    return uses_loop_var(e->u.let.value, loops, n) ||
           uses_loop_var(e->u.let.body, loops, n);
  case LOOM_EXPR_RAMP:
    return uses_loop_var(e->u.ramp.base, loops, n) ||
           uses_loop_var(e->u.ramp.stride, loops, n);
  case LOOM_EXPR_BROADCAST:
    return uses_loop_var(e->u.broadcast.value, loops, n);
  default:
    return uses_loop_var(e->u.bin.a, loops, n) ||
           uses_loop_var(e->u.bin.b, loops, n);
  }
}

/* Prints e into a string of the printer's arena, so that what it names is
 * looked up before the statement that prints it defines anything: TVM
 * prints a definition's right-hand side first. */
static const char *render(printer *p, const loom_expr *e) {
  loom_buf text, *saved = p->out;
  loom_buf_init(&text);
  p->out = &text;
  pr_expr(p, e);
  p->out = saved;
  const char *s = text.data && p->arena ? loom_arena_strdup(p->arena, text.data)
                                        : NULL;
  if (text.has_failed || !s)
    p->has_failed = true;
  loom_buf_free(&text);
  return s ? s : "?";
}

/* An indented body; `pass` when it prints nothing. Its names end with it. */
static void body(printer *p, const loom_stmt *s, int indent) {
  int mark = pr_mark(p);
  if (pr_stmts(p, s, indent) == 0) {
    pr_indent(p, indent);
    pr_puts(p, "pass\n");
  }
  pr_release(p, mark);
}

/* ---- loops ---------------------------------------------------------------- */

static const char *loop_prefix(const loom_stmt *s) {
  switch (s->u.loop.kind) {
  case LOOM_FOR_SERIAL:
    return s->u.loop.n_annotations ? "T.serial" : "range";
  case LOOM_FOR_PARALLEL:
    return "T.parallel";
  case LOOM_FOR_VECTORIZED:
    return "T.vectorized";
  case LOOM_FOR_UNROLLED:
    return "T.unroll";
  case LOOM_FOR_THREAD_BINDING:
    return "T.thread_binding";
  }
  return "range";
}

/* for i in range(n) / range(a, b) / T.parallel(...) / T.thread_binding(...) */
static void single_loop(printer *p, const loom_stmt *s) {
  const char *name = pr_define(p, s->u.loop.var, s->u.loop.var->name);
  pr_printf(p, "for %s in %s(", name, loop_prefix(s));
  if (pr_is_zero(s->u.loop.min) || !s->u.loop.min) {
    pr_expr(p, s->u.loop.extent);
  } else {
    pr_expr(p, s->u.loop.min);
    pr_puts(p, ", ");
    pr_sum(p, s->u.loop.min, s->u.loop.extent);
  }
  if (s->u.loop.kind == LOOM_FOR_THREAD_BINDING) {
    pr_puts(p, ", thread=");
    pr_quoted(p->out, s->u.loop.thread ? s->u.loop.thread : "");
  }
  if (s->u.loop.n_annotations) {
    pr_puts(p, ", annotations=");
    pr_attr_dict(p, s->u.loop.annotations, s->u.loop.n_annotations, NULL);
  }
  pr_puts(p, "):\n");
}

/* TVM folds directly nested serial loops from 0 without annotations into
 * one T.grid, as long as no extent depends on a loop of the grid. Deeper
 * than 64 the nest goes on in a second T.grid, which reads back the same. */
static int grid_depth(const loom_stmt *s) {
  const loom_stmt *grid[64];
  int n = 0;
  for (const loom_stmt *l = s; l && l->kind == LOOM_STMT_FOR && n < 64;
       l = l->u.loop.body) {
    if (l->u.loop.kind != LOOM_FOR_SERIAL || !l->u.loop.var ||
        !(pr_is_zero(l->u.loop.min) || !l->u.loop.min) ||
        l->u.loop.n_annotations || uses_loop_var(l->u.loop.extent, grid, n))
      break;
    grid[n++] = l;
  }
  return n;
}

static int loop(printer *p, const loom_stmt *s, int indent) {
  if (!s->u.loop.var) {
    pr_indent(p, indent);
    pr_puts(p, "# loop without a variable\n");
    return 1;
  }
  int mark = pr_mark(p), n_loops = p->loops.n;
  int n = grid_depth(s);
  const loom_stmt *last = s;
  pr_indent(p, indent);
  if (n > 1) {
    pr_puts(p, "for ");
    for (int i = 0; i < n; i++, last = last->u.loop.body) {
      pr_printf(p, i ? ", %s" : "%s",
                pr_define(p, last->u.loop.var, last->u.loop.var->name));
      pr_vec_push(p, &p->loops, &last, sizeof last);
    }
    pr_puts(p, " in T.grid(");
    last = s;
    for (int i = 0; i < n; i++, last = last->u.loop.body) {
      if (i)
        pr_puts(p, ", ");
      pr_expr(p, last->u.loop.extent);
    }
    pr_puts(p, "):\n");
    body(p, last, indent + 1);
  } else {
    single_loop(p, s);
    pr_vec_push(p, &p->loops, &s, sizeof s);
    body(p, s->u.loop.body, indent + 1);
  }
  p->loops.n = n_loops;
  pr_release(p, mark);
  return 1;
}

/* ---- blocks ----------------------------------------------------------------- */

static const char *const iter_kinds[] = {"spatial", "reduce", "scan", "opaque"};

/* TVM writes `vi, vj = T.axis.remap("SS", [i, j])` for a run of spatial or
 * reduce iter vars each bound to an enclosing loop's variable with the
 * loop's own range. */
static bool is_remappable(const printer *p, const loom_iter_var *iv,
                          const loom_expr *binding) {
  if (iv->kind != LOOM_ITER_SPATIAL && iv->kind != LOOM_ITER_REDUCE)
    return false;
  if (!binding || binding->kind != LOOM_EXPR_VAR)
    return false;
  const loom_stmt *const *loops = p->loops.items;
  for (int i = p->loops.n - 1; i >= 0; i--) {
    if (loops[i]->u.loop.var != binding->u.var)
      continue;
    return same_expr(loops[i]->u.loop.min, iv->dom.min) &&
           same_expr(loops[i]->u.loop.extent, iv->dom.extent);
  }
  return false;
}

static void single_iter_var(printer *p, const loom_iter_var *iv,
                            const loom_expr *binding, int indent) {
  loom_buf rhs, *saved = p->out;
  loom_buf_init(&rhs);
  p->out = &rhs;
  unsigned k = (unsigned)iv->kind < 4 ? (unsigned)iv->kind : 3;
  pr_printf(p, "T.axis.%s(", iter_kinds[k]);
  if (!iv->dom.min || pr_is_zero(iv->dom.min)) {
    pr_expr(p, iv->dom.extent);
  } else {
    pr_puts(p, "(");
    pr_expr(p, iv->dom.min);
    pr_puts(p, ", ");
    pr_sum(p, iv->dom.min, iv->dom.extent);
    pr_puts(p, ")");
  }
  pr_puts(p, ", ");
  pr_expr(p, binding);
  pr_puts(p, ")");
  p->out = saved;
  pr_indent(p, indent);
  pr_printf(p, "%s = %s\n", pr_define(p, iv->var, iv->var->name),
            rhs.data ? rhs.data : "");
  if (rhs.has_failed)
    p->has_failed = true;
  loom_buf_free(&rhs);
}

static void remap(printer *p, const loom_block *b, loom_expr *const *values,
                  const int *run, int n, int indent) {
  if (n == 1) {
    single_iter_var(p, &b->iter_vars[run[0]], values[run[0]], indent);
    return;
  }
  pr_indent(p, indent);
  for (int i = 0; i < n; i++) {
    const loom_var *v = b->iter_vars[run[i]].var;
    pr_printf(p, i ? ", %s" : "%s", pr_define(p, v, v->name));
  }
  pr_puts(p, " = T.axis.remap(\"");
  for (int i = 0; i < n; i++)
    pr_puts(p, b->iter_vars[run[i]].kind == LOOM_ITER_SPATIAL ? "S" : "R");
  pr_puts(p, "\", [");
  for (int i = 0; i < n; i++) {
    if (i)
      pr_puts(p, ", ");
    pr_expr(p, values[run[i]]);
  }
  pr_puts(p, "])\n");
}

static void iter_vars(printer *p, const loom_stmt *s, int indent) {
  const loom_block *b = s->u.realize.block;
  int n = b->n_iter_vars;
  int *run = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!run) {
    p->has_failed = true;
    return;
  }
  int n_run = 0;
  for (int i = 0; i < n; i++) {
    const loom_iter_var *iv = &b->iter_vars[i];
    const loom_expr *binding =
        i < s->u.realize.n_iter_values ? s->u.realize.iter_values[i] : NULL;
    if (!iv->var)
      continue;
    if (is_remappable(p, iv, binding)) {
      run[n_run++] = i;
      continue;
    }
    if (n_run)
      remap(p, b, s->u.realize.iter_values, run, n_run, indent);
    n_run = 0;
    single_iter_var(p, iv, binding, indent);
  }
  if (n_run)
    remap(p, b, s->u.realize.iter_values, run, n_run, indent);
  free(run);
}

static void regions(printer *p, const char *what, const loom_buffer_region *rs,
                    int n, int indent) {
  pr_indent(p, indent);
  pr_printf(p, "T.%s(", what);
  for (int i = 0; i < n; i++) {
    if (i)
      pr_puts(p, ", ");
    pr_region(p, &rs[i]);
  }
  pr_puts(p, ")\n");
}

/* The block's header, in TVM's order: iter vars, T.where, T.reads,
 * T.writes, annotations, allocated buffers, matched buffers, T.init. */
static void block_header(printer *p, const loom_stmt *s, int indent) {
  const loom_block *b = s->u.realize.block;
  iter_vars(p, s, indent);
  if (!pr_is_true(s->u.realize.predicate)) {
    pr_indent(p, indent);
    pr_puts(p, "T.where(");
    pr_expr(p, s->u.realize.predicate);
    pr_puts(p, ")\n");
  }
  regions(p, "reads", b->reads, b->n_reads, indent);
  regions(p, "writes", b->writes, b->n_writes, indent);
  if (b->n_annotations) {
    pr_indent(p, indent);
    pr_puts(p, is_tirx(p) ? "T.sblock_attr(" : "T.block_attr(");
    pr_attr_dict(p, b->annotations, b->n_annotations, NULL);
    pr_puts(p, ")\n");
  }
  for (int i = 0; i < b->n_alloc_buffers; i++) {
    const loom_buffer *buf = b->alloc_buffers[i];
    pr_indent(p, indent);
    pr_printf(p, "%s = T.%s(", pr_define(p, buf, buf->name),
              is_tirx(p) ? "sblock_alloc_buffer" : "alloc_buffer");
    pr_buffer_args(p, buf, PR_BUF_ALLOC, NULL);
    pr_puts(p, ")\n");
  }
  for (int i = 0; i < b->n_match_buffers; i++) {
    const loom_match_buffer *m = &b->match_buffers[i];
    pr_indent(p, indent);
    pr_printf(p, "%s = T.match_buffer(", pr_define(p, m->buffer, m->buffer->name));
    pr_region(p, &m->source);
    pr_puts(p, ", ");
    pr_buffer_args(p, m->buffer, PR_BUF_ALLOC, NULL);
    pr_puts(p, ")\n");
  }
  if (b->init) {
    pr_indent(p, indent);
    pr_puts(p, "with T.init():\n");
    body(p, b->init, indent + 1);
  }
}

static int block(printer *p, const loom_stmt *s, int indent) {
  const loom_block *b = s->u.realize.block;
  pr_indent(p, indent);
  if (!b) {
    pr_puts(p, "# block realize without a block\n");
    return 1;
  }
  pr_printf(p, "with T.%s(", is_tirx(p) ? "sblock" : "block");
  pr_quoted(p->out, b->name ? b->name : "");
  pr_puts(p, "):\n");
  int mark = pr_mark(p);
  block_header(p, s, indent + 1);
  pr_stmts(p, b->body, indent + 1);
  pr_release(p, mark);
  return 1;
}

/* ---- other statements ---------------------------------------------------------- */

static void let_line(printer *p, const loom_stmt *s, int indent) {
  const char *value = render(p, s->u.let.value);
  const loom_var *v = s->u.let.var;
  pr_indent(p, indent);
  pr_printf(p, "%s: ", pr_define(p, v, v->name));
  if (is_tirx(p)) {
    pr_puts(p, "T.let[");
    pr_var_type(p, v);
    pr_puts(p, "]");
  } else {
    pr_var_type(p, v);
  }
  pr_printf(p, " = %s\n", value);
}

static void buffer_line(printer *p, const loom_stmt *s, int indent) {
  const loom_buffer *b = s->u.alloc.buffer;
  bool is_alloc = s->kind == LOOM_STMT_ALLOCATE;
  const char *fn = !is_alloc     ? "Buffer"
                   : is_tirx(p) ? "alloc_buffer"
                                : "decl_buffer";
  pr_indent(p, indent);
  pr_printf(p, "%s = T.%s(", pr_define(p, b, b->name), fn);
  pr_buffer_args(p, b, is_alloc ? PR_BUF_ALLOC : PR_BUF_DECL, NULL);
  pr_puts(p, ")\n");
}

static int attr(printer *p, const loom_stmt *s, int indent) {
  pr_indent(p, indent);
  pr_puts(p, "with T.attr(");
  pr_value(p, s->u.attr.node);
  pr_puts(p, ", ");
  pr_quoted(p->out, s->u.attr.key ? pr_attr_key(p, s->u.attr.key) : "");
  pr_puts(p, ", ");
  pr_expr(p, s->u.attr.value);
  pr_puts(p, "):\n");
  body(p, s->u.attr.body, indent + 1);
  return 1;
}

static int if_stmt(printer *p, const loom_stmt *s, int indent) {
  pr_indent(p, indent);
  pr_puts(p, "if ");
  pr_expr(p, s->u.if_.cond);
  pr_puts(p, ":\n");
  body(p, s->u.if_.then_case, indent + 1);
  if (s->u.if_.else_case) {
    pr_indent(p, indent);
    pr_puts(p, "else:\n");
    body(p, s->u.if_.else_case, indent + 1);
  }
  return 1;
}

static int simple(printer *p, const loom_stmt *s, int indent) {
  pr_indent(p, indent);
  switch (s->kind) {
  case LOOM_STMT_STORE:
    pr_indices(p, s->u.store.buffer, s->u.store.indices, s->u.store.n_indices);
    pr_puts(p, " = ");
    pr_expr(p, s->u.store.value);
    break;
  case LOOM_STMT_EVALUATE:
    if (s->u.evaluate.value && s->u.evaluate.value->kind == LOOM_EXPR_CALL) {
      pr_expr(p, s->u.evaluate.value);
      break;
    }
    pr_puts(p, "T.evaluate(");
    pr_expr(p, s->u.evaluate.value);
    pr_puts(p, ")");
    break;
  case LOOM_STMT_ASSERT:
    pr_puts(p, "assert ");
    pr_expr(p, s->u.assert_.cond);
    if (s->u.assert_.message) {
      pr_puts(p, ", ");
      pr_expr(p, s->u.assert_.message);
    }
    break;
  case LOOM_STMT_FOR: /* printed by pr_stmts, never here */
  case LOOM_STMT_BLOCK_REALIZE:
  case LOOM_STMT_IF:
  case LOOM_STMT_SEQ:
  case LOOM_STMT_LET:
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_COUNT_:
    pr_puts(p, "pass");
    break;
  }
  pr_puts(p, "\n");
  return 1;
}

int pr_stmts(printer *p, const loom_stmt *s, int indent) {
  if (!s)
    return 0;
  switch (s->kind) {
  case LOOM_STMT_SEQ: {
    int n = 0;
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      n += pr_stmts(p, s->u.seq.stmts[i], indent);
    return n;
  }
  case LOOM_STMT_LET:
    if (!s->u.let.var)
      return pr_stmts(p, s->u.let.body, indent);
    let_line(p, s, indent);
    return 1 + pr_stmts(p, s->u.let.body, indent);
  case LOOM_STMT_ASSERT:
    simple(p, s, indent);
    return 1 + pr_stmts(p, s->u.assert_.body, indent);
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    if (!s->u.alloc.buffer)
      return pr_stmts(p, s->u.alloc.body, indent);
    buffer_line(p, s, indent);
    return 1 + pr_stmts(p, s->u.alloc.body, indent);
  case LOOM_STMT_FOR:
    return loop(p, s, indent);
  case LOOM_STMT_BLOCK_REALIZE:
    return block(p, s, indent);
  case LOOM_STMT_IF:
    return if_stmt(p, s, indent);
  case LOOM_STMT_ATTR:
    return attr(p, s, indent);
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: break;
  }
  return simple(p, s, indent);
}

/* ---- function-level questions ------------------------------------------------- */

/* TVM's test, plus the name: the reader wraps a body in a block named
 * "root", so only such a block may be elided. */
const loom_block *pr_implicit_root(const loom_stmt *s) {
  if (!s || s->kind != LOOM_STMT_BLOCK_REALIZE || s->u.realize.n_iter_values ||
      !pr_is_true(s->u.realize.predicate))
    return NULL;
  const loom_block *b = s->u.realize.block;
  if (!b || !b->name || strcmp(b->name, "root") || b->n_iter_vars ||
      b->n_annotations || b->n_match_buffers || b->n_reads || b->n_writes ||
      b->init)
    return NULL;
  if (b->n_alloc_buffers)
    return b;
  const loom_stmt *inner = b->body;
  if (inner && inner->kind == LOOM_STMT_BLOCK_REALIZE)
    return inner->u.realize.block && inner->u.realize.block->n_iter_vars ? b
                                                                        : NULL;
  return loom_ir_stmt_has(inner, LOOM_STMT_BLOCK_REALIZE) ? b : NULL;
}
