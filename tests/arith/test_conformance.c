/* The analyses over TVM's own schedule test programs (../shared/conformance;
 * the test is skipped, exit 77, when it is absent): every program reads,
 * every function gets a dependence model and every
 * loop an answer, every block's bindings an iterator map or a reason, and
 * every block's regions a relaxed region under each of its loops; none may
 * fail for any other reason than a diagnosed one. */
#include "loom/arith.h"
#include "loom/script.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>

typedef struct stats {
  int n_files, n_funcs, n_loops, n_carried, n_blocks, n_affine, n_refused;
  int n_regions, n_whole;
} stats;

typedef struct frame {
  const loom_stmt *loops[64];
  int n;
} frame;

static void check_block(loom_arena *a, const loom_stmt *s, frame *fr, stats *st) {
  const loom_block *b = s->u.realize.block;
  if (b->n_iter_vars == 0)
    return;
  loom_arith_relax iters[64];
  int n = 0;
  for (int i = 0; i < fr->n; i++)
    iters[n++] = (loom_arith_relax){fr->loops[i]->u.loop.var,
                                    {fr->loops[i]->u.loop.min, fr->loops[i]->u.loop.extent}};
  loom_iter_map m;
  loom_diag d;
  loom_diag_init(&d);
  loom_status status = loom_arith_iter_map_detect(a, s->u.realize.iter_values,
                                                  s->u.realize.n_iter_values, iters, n,
                                                  s->u.realize.predicate,
                                                  LOOM_ITER_MAP_SURJECTIVE, &m, &d);
  CHECK(status == LOOM_OK || (status == LOOM_ERROR && d.msg));
  if (getenv("SHOW_REFUSED") && status == LOOM_ERROR)
    fprintf(stderr, "REFUSED %s\n", d.msg);
  st->n_blocks++;
  st->n_affine += status == LOOM_OK;
  st->n_refused += status == LOOM_ERROR;
  loom_diag_free(&d);
  /* Regions under each loop: relax the loops from there inwards. */
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  for (int from = 0; from <= fr->n; from++) {
    for (int r = 0; r < b->n_reads + b->n_writes; r++) {
      const loom_buffer_region *reg = r < b->n_reads ? &b->reads[r] : &b->writes[r - b->n_reads];
      loom_buffer_region out;
      bool whole[16] = {0}, is_found = false;
      loom_diag_init(&d);
      status = loom_arith_block_region(a, ctx, s, reg->buffer, r >= b->n_reads,
                                       iters + from, n - from, &out,
                                       reg->n_ranges <= 16 ? whole : NULL, &is_found, &d);
      CHECK(status == LOOM_OK && is_found);
      loom_diag_free(&d);
      st->n_regions++;
      for (int k = 0; k < reg->n_ranges && k < 16; k++)
        st->n_whole += whole[k];
    }
  }
  loom_arith_ctx_free(ctx);
}

static void walk(loom_arena *a, loom_arith_deps *deps, const loom_stmt *s, frame *fr,
                 stats *st, int depth) {
  if (!s || depth > 200)
    return;
  switch (s->kind) {
  case LOOM_STMT_FOR: {
    bool is_carried = false;
    loom_diag d;
    loom_diag_init(&d);
    CHECK(loom_arith_deps_loop_carried(deps, s->u.loop.var, &is_carried, NULL, &d) ==
          LOOM_OK);
    loom_diag_free(&d);
    st->n_loops++;
    st->n_carried += is_carried;
    if (fr->n < 64)
      fr->loops[fr->n++] = s;
    walk(a, deps, s->u.loop.body, fr, st, depth + 1);
    fr->n--;
    return;
  }
  case LOOM_STMT_BLOCK_REALIZE: {
    /* As TVM checks an affine binding: over the loops between the block
     * and the block around it, surjectively; outer iterators are invariants. */
    check_block(a, s, fr, st);
    frame inner = {.n = 0};
    walk(a, deps, s->u.realize.block->init, &inner, st, depth + 1);
    walk(a, deps, s->u.realize.block->body, &inner, st, depth + 1);
    return;
  }
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      walk(a, deps, s->u.seq.stmts[i], fr, st, depth + 1);
    return;
  case LOOM_STMT_IF:
    walk(a, deps, s->u.if_.then_case, fr, st, depth + 1);
    walk(a, deps, s->u.if_.else_case, fr, st, depth + 1);
    return;
  case LOOM_STMT_LET: walk(a, deps, s->u.let.body, fr, st, depth + 1); return;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: walk(a, deps, s->u.alloc.body, fr, st, depth + 1); return;
  case LOOM_STMT_ATTR: walk(a, deps, s->u.attr.body, fr, st, depth + 1); return;
  case LOOM_STMT_ASSERT: walk(a, deps, s->u.assert_.body, fr, st, depth + 1); return;
  default: return;
  }
}

static void check_file(const char *path, stats *st) {
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  CHECK(loom_read_file(path, &text, &len, &d) == LOOM_OK);
  if (d.has_error) {
    fprintf(stderr, "%s: %s\n", path, d.msg ? d.msg : "?");
    loom_diag_free(&d);
    return;
  }
  loom_arena *a = loom_arena_new();
  loom_module *m;
  bool is_read = loom_script_read(text, len, path, a, &m, &d) == LOOM_OK;
  CHECK(is_read);
  if (!is_read)
    fprintf(stderr, "%s: %s\n", path, d.msg ? d.msg : "?");
  if (is_read) {
    st->n_files++;
    for (int i = 0; i < m->n_funcs; i++) {
      loom_arith_deps *deps = NULL;
      loom_diag dd;
      loom_diag_init(&dd);
      loom_status status = loom_arith_deps_new(m->funcs[i], &deps, &dd);
      CHECK(status == LOOM_OK);
      if (status != LOOM_OK)
        fprintf(stderr, "%s: %s\n", path, dd.msg);
      loom_diag_free(&dd);
      st->n_funcs++;
      frame fr = {.n = 0};
      if (deps)
        walk(a, deps, m->funcs[i]->body, &fr, st, 0);
      loom_arith_deps_free(deps);
    }
  }
  loom_diag_free(&d);
  loom_arena_free(a);
  free(text);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/../shared/conformance", root);
  DIR *dp = opendir(dir);
  if (!dp) {
    printf("arith/conformance: skipped (%s absent)\n", dir);
    return 77;
  }
  /* Every case, in a stable order. */
  char **names = NULL;
  int n_names = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    char **p = realloc(names, (size_t)(n_names + 1) * sizeof *names);
    if (!p)
      break;
    names = p;
    names[n_names++] = strdup(de->d_name);
  }
  closedir(dp);
  qsort(names, (size_t)n_names, sizeof *names,
        (int (*)(const void *, const void *))strcmp);
  stats st = {0};
  for (int i = 0; i < n_names; i++) {
    for (int k = 0; k < 2; k++) {
      char path[4200];
      snprintf(path, sizeof path, "%s/%s/%s", dir, names[i], k ? "after.py" : "before.py");
      FILE *f = fopen(path, "rb");
      if (!f)
        continue;
      fclose(f);
      check_file(path, &st);
    }
    free(names[i]);
  }
  free(names);
  printf("conformance: %d programs, %d functions; %d loops, %d carry a dependence; "
         "%d blocks, %d affine bindings, %d refused; %d regions relaxed, %d "
         "whole dimensions\n",
         st.n_files, st.n_funcs, st.n_loops, st.n_carried, st.n_blocks, st.n_affine,
         st.n_refused, st.n_regions, st.n_whole);
  return test_summary("arith/conformance");
}
