/* The visitor and the mutator: the order of children, skipping and early
 * stop, every statement kind reached, sharing of unchanged subtrees,
 * replacements, the index callback, substitution and uses of a variable,
 * and failure at every step. */
#include "loom/ir.h"
#include "program.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static loom_arena *arena;

#define HEADER "# from tvm.script import tir as T\n\n@T.prim_func\n"

/* Every statement kind: loops, an if, lets, a store, an assertion, an
 * evaluate, an attribute, an allocation, a buffer declaration, blocks with
 * init, alloc and match buffers. */
static const char *every_kind =
    HEADER
    "def main(A: T.Buffer((64,), \"float32\"), B: T.Buffer((64,), "
    "\"float32\"), C: T.Buffer((8,), \"float32\")):\n"
    "    for i in range(64):\n"
    "        if i % 2 == 0:\n"
    "            x: T.float32 = A[i] * T.float32(2.0)\n"
    "            B[i] = x + T.float32(1.0)\n"
    "        else:\n"
    "            B[i] = A[i]\n"
    "    assert A[0] >= T.float32(0.0), \"A must start non-negative\"\n"
    "    T.evaluate(T.call_extern(\"void\", \"trace_point\", 1))\n"
    "    with T.attr(0, \"pragma_marker\", 1):\n"
    "        flat = T.decl_buffer((64,), scope=\"local\")\n"
    "        flat[0] = B[0]\n"
    "        alias = T.Buffer((8, 8), data=flat.data, scope=\"local\")\n"
    "        B[1] = alias[0, 0]\n"
    "    for j, k in T.grid(8, 8):\n"
    "        with T.block(\"sum\"):\n"
    "            vj = T.axis.spatial(8, j)\n"
    "            vk = T.axis.reduce(8, k)\n"
    "            T.reads(A[vj * 8 + vk])\n"
    "            T.writes(C[vj])\n"
    "            tmp = T.alloc_buffer((1,))\n"
    "            view = T.match_buffer(C[vj], (1,))\n"
    "            with T.init():\n"
    "                view[0] = T.float32(0.0)\n"
    "            tmp[0] = A[vj * 8 + vk]\n"
    "            view[0] = view[0] + tmp[0]\n";

static loom_func *read_func(const char *src) {
  loom_module *m = program_read(arena, src);
  CHECK(m && m->n_funcs == 1);
  return m && m->n_funcs ? m->funcs[0] : NULL;
}

/* ---- a trace of the walk ----------------------------------------------------- */

/* Short names of statement kinds, for traces. */
static const char *const stmt_tag[] = {
#define X(name, what) #name,
#include "loom/ir_stmts.def"
#undef X
};

typedef struct trace {
  loom_buf out;
  const loom_stmt *stop_at;   /* STOP when pre meets it */
  loom_stmt_kind skip;        /* SKIP statements of this kind */
  bool has_skip;
} trace;

static loom_visit trace_stmt_pre(void *ctx, loom_stmt *s) {
  trace *t = ctx;
  loom_buf_printf(&t->out, " %s{", stmt_tag[s->kind]);
  if (s == t->stop_at)
    return LOOM_VISIT_STOP;
  return t->has_skip && s->kind == t->skip ? LOOM_VISIT_SKIP : LOOM_VISIT_GO;
}

static loom_visit trace_stmt_post(void *ctx, loom_stmt *s) {
  loom_buf_puts(&((trace *)ctx)->out, " }");
  return LOOM_VISIT_GO;
}

static loom_visit trace_expr_pre(void *ctx, loom_expr *e) {
  trace *t = ctx;
  switch (e->kind) {
  case LOOM_EXPR_VAR: loom_buf_printf(&t->out, " %s", e->u.var->name); break;
  case LOOM_EXPR_INT:
    loom_buf_printf(&t->out, " %lld", (long long)e->u.int_value);
    break;
  case LOOM_EXPR_FLOAT: loom_buf_printf(&t->out, " %g", e->u.float_value); break;
  case LOOM_EXPR_STR: loom_buf_printf(&t->out, " '%s'", e->u.str); break;
  case LOOM_EXPR_LOAD:
    loom_buf_printf(&t->out, " %s[", e->u.load.buffer->name);
    break;
  default: loom_buf_printf(&t->out, " %s(", loom_expr_kind_name(e->kind)); break;
  }
  return LOOM_VISIT_GO;
}

static loom_visit trace_expr_post(void *ctx, loom_expr *e) {
  trace *t = ctx;
  if (e->kind == LOOM_EXPR_LOAD)
    loom_buf_puts(&t->out, " ]");
  else if (e->kind != LOOM_EXPR_VAR && e->kind != LOOM_EXPR_INT &&
           e->kind != LOOM_EXPR_FLOAT && e->kind != LOOM_EXPR_STR)
    loom_buf_puts(&t->out, " )");
  return LOOM_VISIT_GO;
}

static loom_visit trace_buffer(void *ctx, loom_buffer *b) {
  loom_buf_printf(&((trace *)ctx)->out, " buffer %s", b->name);
  return LOOM_VISIT_GO;
}

static loom_ir_visitor trace_visitor(trace *t) {
  return (loom_ir_visitor){trace_stmt_pre, trace_stmt_post, trace_expr_pre,
                           trace_expr_post, trace_buffer, t};
}

/* Walks s with v (whose ctx is t) and checks the trace and whether the walk
 * ran to its end. */
#define CHECK_TRACE(v, t, s, ran_to_end, want)                                 \
  do {                                                                         \
    loom_buf_init(&(t)->out);                                                  \
    CHECK(loom_ir_visit_stmt(v, s) == (ran_to_end));                           \
    CHECK_STREQ((t)->out.data, want);                                          \
    loom_buf_free(&(t)->out);                                                  \
  } while (0)

/* ---- the visitor ----------------------------------------------------------------- */

static void test_order(void) {
  loom_func *f = read_func(
      HEADER
      "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), "
      "\"float32\")):\n"
      "    for i in range(8):\n"
      "        B[i] = A[i] + T.float32(1.0)\n"
      "    B[0] = T.float32(0.0)\n");
  if (!f)
    return;
  trace t = {0};
  loom_ir_visitor v = trace_visitor(&t);
  CHECK_TRACE(&v, &t, f->body, true,
              " SEQ{ FOR{ 0 8 STORE{ ADD( A[ i ] 1 ) i } } STORE{ 0 0 } }");

  /* A block: bindings, iter var domains, regions, buffers, init, body. */
  f = read_func(
      HEADER
      "def main(A: T.Buffer((8,), \"float32\"), C: T.Buffer((2,), "
      "\"float32\")):\n"
      "    for j in range(2):\n"
      "        with T.block(\"b\"):\n"
      "            vj = T.axis.spatial(2, j)\n"
      "            T.reads(A[vj * 4:vj * 4 + 4])\n"
      "            T.writes(C[vj])\n"
      "            tmp = T.alloc_buffer((1,))\n"
      "            view = T.match_buffer(C[vj], (1,))\n"
      "            with T.init():\n"
      "                view[0] = T.float32(0.0)\n"
      "            tmp[0] = A[vj * 4]\n");
  if (!f)
    return;
  loom_stmt *loop = f->body->u.realize.block->body;
  CHECK_TRACE(&v, &t, loop, true,
              " FOR{ 0 2 BLOCK_REALIZE{ j"
              " 0 2"                          /* the domain of vj */
              " MUL( vj 4 ) 4"                /* reads */
              " vj 1"                         /* writes */
              " buffer tmp"                   /* alloc_buffers */
              " vj 1 buffer view"             /* match_buffers */
              " STORE{ 0 0 }"                 /* init */
              " STORE{ A[ MUL( vj 4 ) ] 0 } } }");

  /* The other kinds: if, let, assert, evaluate, attr, allocate, decl. */
  f = read_func(
      HEADER
      "def main(A: T.Buffer((8,), \"float32\")):\n"
      "    if A[0] > T.float32(0.0):\n"
      "        x: T.float32 = A[1]\n"
      "        A[2] = x\n"
      "    else:\n"
      "        A[3] = T.float32(1.0)\n"
      "    assert A[4] >= T.float32(0.0), \"why\"\n"
      "    T.evaluate(T.call_extern(\"void\", \"f\", 5))\n"
      "    with T.attr(6, \"pragma_marker\", 7):\n"
      "        flat = T.decl_buffer((8,), scope=\"local\")\n"
      "        alias = T.Buffer((2, 4), data=flat.data, scope=\"local\")\n"
      "        alias[0, 1] = flat[2]\n");
  if (!f)
    return;
  CHECK_TRACE(&v, &t, f->body, true,
              " SEQ{"
              " IF{ GT( A[ 0 ] 0 ) LET{ A[ 1 ] STORE{ x 2 } } STORE{ 1 3 } }"
              " ASSERT{ GE( A[ 4 ] 0 ) 'why' SEQ{"
              " EVALUATE{ CALL( 'f' 5 ) }"
              " ATTR{ 7 ALLOCATE{ buffer flat"
              " DECL_BUFFER{ buffer alias STORE{ flat[ 2 ] 0 1 } } } } } } }");
}

static void test_skip_and_stop(void) {
  loom_func *f = read_func(
      HEADER
      "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), "
      "\"float32\")):\n"
      "    for i in range(8):\n"
      "        B[i] = A[i]\n"
      "    B[0] = T.float32(0.0)\n"
      "    B[1] = T.float32(1.0)\n");
  if (!f)
    return;
  trace t = {.skip = LOOM_STMT_FOR, .has_skip = true};
  loom_ir_visitor v = trace_visitor(&t);
  /* SKIP leaves out the loop's min, extent and body; post still runs. */
  CHECK_TRACE(&v, &t, f->body, true,
              " SEQ{ FOR{ } STORE{ 0 0 } STORE{ 1 1 } }");
  /* STOP ends the walk at once: no post, no later sibling. */
  t.has_skip = false;
  t.stop_at = f->body->u.seq.stmts[1];
  CHECK_TRACE(&v, &t, f->body, false,
              " SEQ{ FOR{ 0 8 STORE{ A[ i ] i } } STORE{");
  /* Without expression callbacks, expressions are not walked. */
  loom_ir_visitor only_stmts = {.stmt_pre = trace_stmt_pre, .ctx = &t};
  t.stop_at = NULL;
  CHECK_TRACE(&only_stmts, &t, f->body, true,
              " SEQ{ FOR{ STORE{ STORE{ STORE{");
  CHECK(loom_ir_visit_stmt(&v, NULL) && loom_ir_visit_expr(&v, NULL));
}

static loom_visit count_kind(void *ctx, loom_stmt *s) {
  ((int *)ctx)[s->kind]++;
  return LOOM_VISIT_GO;
}

static void test_every_kind(void) {
  loom_func *f = read_func(every_kind);
  if (!f)
    return;
  int seen[LOOM_STMT_COUNT_] = {0};
  loom_ir_visitor v = {.stmt_pre = count_kind, .ctx = seen};
  CHECK(loom_ir_visit_stmt(&v, f->body));
  for (int k = 0; k < LOOM_STMT_COUNT_; k++) {
    if (!seen[k])
      fprintf(stderr, "not reached: %s\n", stmt_tag[k]);
    CHECK(seen[k] > 0);
  }
  CHECK(seen[LOOM_STMT_BLOCK_REALIZE] == 2); /* the root block and "sum" */
  CHECK(seen[LOOM_STMT_STORE] == 7);
}

/* Finds a variable by name anywhere in a statement. */
typedef struct find_name {
  const char *name;
  loom_var *found;
} find_name;

static loom_visit find_name_pre(void *ctx, loom_expr *e) {
  find_name *f = ctx;
  if (e->kind != LOOM_EXPR_VAR || strcmp(e->u.var->name, f->name))
    return LOOM_VISIT_GO;
  f->found = e->u.var;
  return LOOM_VISIT_STOP;
}

static loom_var *var_named(const loom_stmt *s, const char *name) {
  find_name f = {name, NULL};
  loom_ir_visitor v = {.expr_pre = find_name_pre, .ctx = &f};
  loom_ir_visit_stmt(&v, s);
  return f.found;
}

static void test_uses(void) {
  loom_func *f = read_func(every_kind);
  if (!f)
    return;
  loom_var *i = var_named(f->body, "i"), *vj = var_named(f->body, "vj");
  CHECK(i && vj);
  if (!i || !vj)
    return;
  CHECK(loom_ir_stmt_uses(f->body, i));
  CHECK(!loom_ir_stmt_uses(f->body->u.realize.block->body->u.seq.stmts[1], i));
  /* Substituting a block's iter var reaches its regions and body. */
  loom_var *n = loom_ir_var(arena, "n", LOOM_INT32);
  CHECK(!loom_ir_stmt_uses(f->body, n));
  loom_expr *vals[1] = {loom_ir_ref(arena, n)};
  loom_var *vars[1] = {vj};
  loom_stmt *g = loom_ir_substitute_stmt(arena, f->body, vars, vals, 1);
  CHECK(g && g != f->body && loom_ir_stmt_uses(g, n) &&
        !loom_ir_stmt_uses(g, vj));
  CHECK(loom_ir_expr_uses(vals[0], n) && !loom_ir_expr_uses(vals[0], vj));
  /* A kind anywhere, the statement itself included. */
  loom_stmt *loop = f->body->u.realize.block->body->u.seq.stmts[0];
  CHECK(loom_ir_stmt_has(f->body, LOOM_STMT_DECL_BUFFER));
  CHECK(loom_ir_stmt_has(loop, LOOM_STMT_FOR) &&
        loom_ir_stmt_has(loop, LOOM_STMT_LET));
  CHECK(!loom_ir_stmt_has(loop, LOOM_STMT_BLOCK_REALIZE) &&
        !loom_ir_stmt_has(NULL, LOOM_STMT_FOR));
}

/* ---- the mutator ------------------------------------------------------------------ */

typedef struct counts {
  int stmts[LOOM_STMT_COUNT_];
  int blocks;
  int index_calls, index_changed;
} counts;

static loom_stmt *count_post(void *ctx, loom_stmt *s) {
  ((counts *)ctx)->stmts[s->kind]++;
  return s;
}

static loom_block *count_block(void *ctx, const loom_block *old, loom_block *b) {
  ((counts *)ctx)->blocks++;
  return b;
}

static loom_expr *count_index(void *ctx, const loom_expr *old, loom_expr *e) {
  counts *c = ctx;
  c->index_calls++;
  c->index_changed += e != old;
  return e;
}

static void test_sharing(void) {
  loom_func *f = read_func(every_kind);
  if (!f)
    return;
  /* A mutation that changes nothing gives back the same tree, having
   * reached every statement. */
  counts c = {0};
  loom_ir_mutator m = {.stmt_post = count_post, .block_post = count_block,
                       .index = count_index, .ctx = &c};
  size_t used = loom_arena_bytes(arena);
  CHECK(loom_ir_mutate_stmt(arena, &m, f->body) == f->body);
  CHECK(loom_arena_bytes(arena) == used);
  for (int k = 0; k < LOOM_STMT_COUNT_; k++)
    CHECK(c.stmts[k] > 0);
  CHECK(c.blocks == 2 && c.index_calls > 0 && c.index_changed == 0);

  /* Replacing i rebuilds the first loop's spine and nothing else. */
  loom_stmt *root = f->body, *seq = root->u.realize.block->body;
  loom_stmt *loop = seq->u.seq.stmts[0];
  loom_var *i = loop->u.loop.var;
  loom_expr *vals[1] = {loom_ir_int(arena, LOOM_INT32, 3)};
  loom_var *vars[1] = {i};
  loom_stmt *r = loom_ir_substitute_stmt(arena, root, vars, vals, 1);
  CHECK(r && r != root);
  if (!r)
    return;
  loom_stmt *rseq = r->u.realize.block->body;
  CHECK(r->u.realize.block != root->u.realize.block);
  CHECK(rseq != seq && rseq->u.seq.stmts != seq->u.seq.stmts);
  CHECK(rseq->u.seq.stmts[0] != loop);
  for (int k = 1; k < seq->u.seq.n_stmts; k++)
    CHECK(rseq->u.seq.stmts[k] == seq->u.seq.stmts[k]);
  /* The loop keeps its bounds; its body's if is new, but the store in
   * its else branch that reads i is new while the constants are shared. */
  loom_stmt *rloop = rseq->u.seq.stmts[0];
  CHECK(rloop->u.loop.min == loop->u.loop.min &&
        rloop->u.loop.extent == loop->u.loop.extent);
  loom_stmt *rif = rloop->u.loop.body, *oif = loop->u.loop.body;
  CHECK(rif != oif && rif->u.if_.cond != oif->u.if_.cond);
  CHECK(!loom_ir_stmt_uses(r, i) && loom_ir_stmt_uses(root, i));
  /* The original is untouched. */
  CHECK(root->u.realize.block->body == seq && seq->u.seq.stmts[0] == loop &&
        loop->u.loop.body == oif);

  /* The index callback sees changed index expressions only where index
   * arithmetic is: i % 2 == 0, the loads' and stores' indices. */
  memset(&c, 0, sizeof c);
  loom_ir_mutator sm = {.vars = (const loom_var *const *)vars, .values = vals,
                        .n_vars = 1, .index = count_index, .ctx = &c};
  CHECK(loom_ir_mutate_stmt(arena, &sm, loop) != loop);
  /* cond; A[i] in the let; B[i]; A[i] and B[i] in the else branch. */
  CHECK(c.index_changed == 5);
}

/* Replaces every float constant 1.0 by 2.0 (after its operands), and every
 * evaluate by T.evaluate(0) (before). */
static loom_expr *double_ones(void *ctx, loom_expr *e) {
  if (e->kind == LOOM_EXPR_FLOAT && e->u.float_value == 1.0)
    return loom_ir_float(ctx, e->dtype, 2.0);
  return e;
}

/* The same before the operands: NULL goes on into them. */
static loom_expr *ones_pre(void *ctx, loom_expr *e) {
  loom_expr *r = double_ones(ctx, e);
  return r == e ? NULL : r;
}

static loom_stmt *drop_evaluate(void *ctx, loom_stmt *s) {
  if (s->kind != LOOM_STMT_EVALUATE)
    return NULL;
  loom_stmt *c = loom_ir_stmt(ctx, LOOM_STMT_EVALUATE, s->loc);
  if (c)
    c->u.evaluate.value = loom_ir_int(ctx, LOOM_INT32, 0);
  return c;
}

static void test_replacement(void) {
  loom_func *f = read_func(
      HEADER
      "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), "
      "\"float32\")):\n"
      "    for i in range(8):\n"
      "        B[i] = A[i] + T.float32(1.0)\n"
      "    T.evaluate(T.call_extern(\"void\", \"trace_point\", 1))\n");
  if (!f)
    return;
  loom_ir_mutator m = {.expr_post = double_ones, .stmt_pre = drop_evaluate,
                       .ctx = arena};
  loom_stmt *r = loom_ir_mutate_stmt(arena, &m, f->body);
  trace t = {0};
  loom_ir_visitor v = trace_visitor(&t);
  CHECK(r != NULL);
  CHECK_TRACE(&v, &t, r, true,
              " SEQ{ FOR{ 0 8 STORE{ ADD( A[ i ] 2 ) i } } EVALUATE{ 0 } }");
  /* The rewrite of one expression alone. */
  loom_stmt *store = f->body->u.seq.stmts[0]->u.loop.body;
  loom_expr *e = loom_ir_rewrite_expr(arena, store->u.store.value,
                                      ones_pre, arena);
  CHECK(e && e != store->u.store.value &&
        e->u.bin.a == store->u.store.value->u.bin.a &&
        e->u.bin.b->u.float_value == 2.0);
}

/* ---- failure ------------------------------------------------------------------------ */

/* Post callbacks that fail (as out of memory) at the nth call. */
typedef struct failing {
  long n, calls;
} failing;

static bool fails_now(failing *f) { return ++f->calls == f->n; }

static loom_expr *fail_expr(void *ctx, loom_expr *e) {
  return fails_now(ctx) ? NULL : e;
}

static loom_expr *fail_index(void *ctx, const loom_expr *old, loom_expr *e) {
  return fails_now(ctx) ? NULL : e;
}

static loom_stmt *fail_stmt(void *ctx, loom_stmt *s) {
  return fails_now(ctx) ? NULL : s;
}

static loom_block *fail_block(void *ctx, const loom_block *old, loom_block *b) {
  return fails_now(ctx) ? NULL : b;
}

/* A failure at any step, in a callback or an allocation, makes the whole
 * mutation NULL; past the last step it succeeds. */
static void test_failure(void) {
  loom_func *f = read_func(every_kind);
  if (!f)
    return;
  loom_stmt *loop = f->body->u.realize.block->body->u.seq.stmts[0];
  loom_var *vars[1] = {loop->u.loop.var};
  loom_expr *vals[1] = {loom_ir_int(arena, LOOM_INT32, 3)};
  long n = 1;
  for (; n < 100000; n++) {
    failing fl = {n, 0};
    loom_ir_mutator m = {.vars = (const loom_var *const *)vars,
                         .values = vals, .n_vars = 1, .expr_post = fail_expr,
                         .index = fail_index, .stmt_post = fail_stmt,
                         .block_post = fail_block, .ctx = &fl};
    loom_stmt *r = loom_ir_mutate_stmt(arena, &m, f->body);
    CHECK(fl.calls <= n);
    if (fl.calls == n)
      CHECK(r == NULL);
    if (r) {
      CHECK(fl.calls < n && !loom_ir_stmt_uses(r, vars[0]));
      break;
    }
  }
  CHECK(n > 50 && n < 100000);

  int n_failed_runs = 0;
  for (long k = 1; k < 1000; k++) {
    loom_faultsim fs = {k, 0};
    loom_arena *out = loom_arena_new();
    loom_arena_set_faultsim(out, &fs);
    loom_stmt *r = loom_ir_substitute_stmt(out, f->body, vars, vals, 1);
    bool is_ok = r != NULL;
    if (is_ok)
      CHECK(!loom_ir_stmt_uses(r, vars[0]) &&
            r->u.realize.block->body->u.seq.stmts[1] ==
                f->body->u.realize.block->body->u.seq.stmts[1]);
    loom_arena_free(out);
    if (is_ok)
      break;
    n_failed_runs++;
  }
  CHECK(n_failed_runs > 0);
}

int main(void) {
  arena = loom_arena_new();
  test_order();
  test_skip_and_stop();
  test_every_kind();
  test_uses();
  test_sharing();
  test_replacement();
  test_failure();
  loom_arena_free(arena);
  return test_summary("ir/visit");
}
