/* Lowering's promises, checked on every program of the run corpus: no block
 * survives, every access is one flat index, no vector expression is left,
 * and the C file of each program is produced; plus symbol names. Whether
 * the lowered code computes the right thing is checked by
 * tests/codegen/run.sh against the interpreter. */
#include "loom/codegen.h"
#include "loom/lower.h"
#include "loom/script.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>

static int bad_exprs, bad_stmts;

static void check_expr(const loom_expr *e) {
  if (!e)
    return;
  if (e->dtype.lanes != 1 || e->kind == LOOM_EXPR_RAMP || e->kind == LOOM_EXPR_BROADCAST)
    bad_exprs++;
  switch (e->kind) {
  case LOOM_EXPR_LOAD:
    if (e->u.load.n_indices != 1 || e->u.load.buffer->ndim != 1)
      bad_exprs++;
    for (int i = 0; i < e->u.load.n_indices; i++)
      check_expr(e->u.load.indices[i]);
    return;
  case LOOM_EXPR_CALL:
    for (int i = 0; i < e->u.call.n_args; i++)
      check_expr(e->u.call.args[i]);
    return;
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST: check_expr(e->u.unary.a); return;
  case LOOM_EXPR_SELECT:
    check_expr(e->u.select.cond);
    check_expr(e->u.select.t);
    check_expr(e->u.select.f);
    return;
  case LOOM_EXPR_LET:
    check_expr(e->u.let.value);
    check_expr(e->u.let.body);
    return;
  case LOOM_EXPR_INT: case LOOM_EXPR_FLOAT: case LOOM_EXPR_STR: case LOOM_EXPR_VAR:
    return;
  default:
    check_expr(e->u.bin.a);
    check_expr(e->u.bin.b);
    return;
  }
}

static void check_stmt(const loom_stmt *s) {
  if (!s)
    return;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE: bad_stmts++; return;
  case LOOM_STMT_FOR:
    check_expr(s->u.loop.min);
    check_expr(s->u.loop.extent);
    check_stmt(s->u.loop.body);
    return;
  case LOOM_STMT_STORE:
    if (s->u.store.n_indices != 1 || s->u.store.buffer->ndim != 1)
      bad_stmts++;
    check_expr(s->u.store.indices[0]);
    check_expr(s->u.store.value);
    return;
  case LOOM_STMT_IF:
    check_expr(s->u.if_.cond);
    check_stmt(s->u.if_.then_case);
    check_stmt(s->u.if_.else_case);
    return;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      check_stmt(s->u.seq.stmts[i]);
    return;
  case LOOM_STMT_EVALUATE: check_expr(s->u.evaluate.value); return;
  case LOOM_STMT_LET:
    check_expr(s->u.let.value);
    check_stmt(s->u.let.body);
    return;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    if (s->u.alloc.buffer->ndim != 1)
      bad_stmts++;
    check_stmt(s->u.alloc.body);
    return;
  case LOOM_STMT_ATTR: check_stmt(s->u.attr.body); return;
  case LOOM_STMT_ASSERT:
    check_expr(s->u.assert_.cond);
    check_stmt(s->u.assert_.body);
    return;
  default: return;
  }
}

static void check_file(const char *path) {
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  loom_arena *a = loom_arena_new();
  loom_module *m;
  CHECK(loom_read_file(path, &text, &len, &d) == LOOM_OK);
  CHECK(loom_script_read(text, len, path, a, &m, &d) == LOOM_OK);
  bool has_extern = strstr(text, "call_extern") != NULL;
  for (int i = 0; !d.has_error && i < m->n_funcs; i++) {
    loom_func *lf;
    bad_exprs = bad_stmts = 0;
    CHECK(loom_lower_func(a, m->funcs[i], &lf, &d) == LOOM_OK);
    if (d.has_error)
      break;
    check_stmt(lf->body);
    if (bad_exprs || bad_stmts)
      fprintf(stderr, "%s: %s: %d expressions, %d statements not lowered\n", path,
              m->funcs[i]->name, bad_exprs, bad_stmts);
    CHECK(bad_exprs == 0 && bad_stmts == 0);
  }
  loom_buf c;
  loom_buf_init(&c);
  loom_status st = loom_codegen_c_module(m, &c, &d);
  CHECK(has_extern ? st == LOOM_ERROR : st == LOOM_OK);
  if (has_extern)
    CHECK_CONTAINS(d.msg, "cannot call extern function");
  else
    CHECK_CONTAINS(c.data, "int32_t loom_");
  loom_buf_free(&c);
  loom_diag_free(&d);
  loom_arena_free(a);
  free(text);
}

static void check_dir(const char *root, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", root, dir);
  DIR *dp = opendir(path);
  CHECK(dp != NULL);
  for (struct dirent *e; dp && (e = readdir(dp));) {
    size_t n = strlen(e->d_name);
    if (n < 4 || strcmp(e->d_name + n - 3, ".py"))
      continue;
    snprintf(path, sizeof path, "%s/%s/%s", root, dir, e->d_name);
    check_file(path);
  }
  if (dp)
    closedir(dp);
}

static void test_symbols(void) {
  char buf[64];
  CHECK_STREQ(loom_codegen_c_symbol("main", buf, sizeof buf), "loom_main");
  CHECK_STREQ(loom_codegen_c_symbol("mm_1", buf, sizeof buf), "loom_mm_5f1");
  CHECK_STREQ(loom_codegen_c_symbol("a.b", buf, sizeof buf), "loom_a_2eb");
  CHECK(loom_codegen_c_symbol("a_very_long_name", buf, 8) == NULL);
}

/* A pass of a backend's own, between Loom's: it sees the module the passes
 * before it made and hands on its own. */
static int n_seen_blocks;
static loom_status count_blocks(const void *ctx, loom_arena *a,
                                const loom_module *in, loom_module **out,
                                loom_diag *d) {
  (void)ctx, (void)a, (void)d;
  for (int i = 0; i < in->n_funcs; i++)
    n_seen_blocks += in->funcs[i]->body->kind == LOOM_STMT_BLOCK_REALIZE;
  *out = (loom_module *)in;
  return LOOM_OK;
}

static loom_status refuse(const void *ctx, loom_arena *a,
                          const loom_module *in, loom_module **out,
                          loom_diag *d) {
  (void)a, (void)in, (void)out;
  return loom_diag_error(d, (loom_loc){0}, "%s", (const char *)ctx);
}

static void test_pipeline(const char *root) {
  loom_arena *a = loom_arena_new();
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/matmul_16.py", root);
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  loom_module *m = NULL, *out = NULL;
  CHECK(loom_read_file(path, &text, &len, &d) == LOOM_OK);
  CHECK(loom_script_read(text, len, path, a, &m, &d) == LOOM_OK);
  CHECK(loom_lower_pass_named("nothing") == NULL);
  const loom_lower_pass *flatten = loom_lower_pass_named("flatten");
  const loom_lower_pass *scalarize = loom_lower_pass_named("scalarize");
  CHECK(flatten && scalarize && !strcmp(flatten->name, "flatten"));
  loom_lower_pass counter = {"count-blocks", count_blocks, NULL};
  const loom_lower_pass *list[] = {&counter, flatten, &counter, scalarize};
  n_seen_blocks = 0;
  CHECK(m && loom_lower_module(a, m, list, 4, &out, &d) == LOOM_OK);
  CHECK(n_seen_blocks == 1); /* the root block, before flatten only */
  CHECK(out && out != m && out->n_funcs == 1);
  /* The list of the C backend gives what loom_lower_func gives. */
  loom_func *lf = NULL;
  CHECK(m && loom_lower_func(a, m->funcs[0], &lf, &d) == LOOM_OK);
  CHECK(lf && out && loom_ir_equal_func(lf, out->funcs[0], NULL));
  /* The first pass that fails stops the list, and says why. */
  loom_lower_pass no = {"refuse", refuse, "no shared memory here"};
  const loom_lower_pass *bad[] = {flatten, &no, scalarize};
  CHECK(m && loom_lower_module(a, m, bad, 3, &out, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "no shared memory here");
  CHECK(m && loom_lower_module(a, m, NULL, 0, &out, &d) == LOOM_OK && out == m);
  loom_diag_free(&d);
  free(text);
  loom_arena_free(a);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  check_dir(root, "tests/codegen/cases");
  check_dir(root, "tests/script/cases");
  test_symbols();
  test_pipeline(root);
  return test_summary("lower");
}
