/* annotate_buffer_access: replace one read or write region of a block by
 * ranges written as a lambda over the block iters, [(begin, end), ...],
 * and record the region's index under "explicit_read_region" or
 * "explicit_write_region" so that later passes keep it. */
#include "schedule/index_map.h"

#include <string.h>

#define MAX_DIMS 32

/* attrs with key's list of ints extended by index (once). */
static loom_attr *with_index(loom_arena *a, const loom_attr *attrs, int n,
                             const char *key, int64_t index, int *n_out) {
  loom_attr *out = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *out);
  if (!out)
    return NULL;
  int at = -1;
  for (int i = 0; i < n; i++) {
    out[i] = attrs[i];
    if (!strcmp(attrs[i].key, key))
      at = i;
  }
  const loom_value *old = at >= 0 ? attrs[at].value : NULL;
  int n_old = old && old->kind == LOOM_VALUE_LIST ? old->n_items : 0;
  loom_value *list = loom_arena_alloc(a, sizeof *list);
  loom_value **items = loom_arena_alloc(a, (size_t)(n_old + 1) * sizeof *items);
  if (!list || !items)
    return NULL;
  int k = 0;
  bool present = false;
  for (int i = 0; i < n_old; i++) {
    int64_t v;
    items[k++] = old->items[i];
    present |= old->items[i]->kind == LOOM_VALUE_EXPR &&
               loom_ir_is_const_int(old->items[i]->expr, &v) && v == index;
  }
  if (!present &&
      !(items[k++] = loom_ir_value_expr(a, loom_ir_int(a, LOOM_INT32, index))))
    return NULL;
  list->kind = LOOM_VALUE_LIST;
  list->items = items;
  list->n_items = k;
  if (at >= 0) {
    out[at].value = list;
    *n_out = n;
  } else {
    out[n] = (loom_attr){key, list};
    *n_out = n + 1;
  }
  return out;
}

loom_status sched_apply_annotate_buffer_access(sched_call *c) {
  loom_arena *a = sched_arena(c->s);
  sched_path p = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_stmt *r = p.stmts[p.n - 1];
  const loom_block *b = r->u.realize.block;
  loom_status st = LOOM_OK;
  if (c->n_attrs < 3 || c->attrs[0].kind != LOOM_TV_INT ||
      c->attrs[1].kind != LOOM_TV_STR || c->attrs[2].kind != LOOM_TV_STR) {
    st = sched_fail(c, "expected buffer_index, buf_type and gen_new_ranges");
    goto out;
  }
  bool is_write = !strcmp(c->attrs[1].s, "write");
  if (!is_write && strcmp(c->attrs[1].s, "read")) {
    st = sched_fail(c, "buf_type must be \"read\" or \"write\", not \"%s\"",
                    c->attrs[1].s);
    goto out;
  }
  int64_t idx = c->attrs[0].i;
  int n = is_write ? b->n_writes : b->n_reads;
  if (idx < 0 || idx >= n) {
    st = sched_fail(c, "block '%s' %s %d buffer%s, so buffer_index must be in "
                       "[0, %d), not %lld",
                    b->name, is_write ? "writes" : "reads", n, n == 1 ? "" : "s",
                    n, (long long)idx);
    goto out;
  }
  const loom_buffer_region *old = is_write ? &b->writes[idx] : &b->reads[idx];
  sched_index_map map;
  char why[256];
  loom_dtype t = b->n_iter_vars ? b->iter_vars[0].var->dtype : LOOM_INT32;
  if (!sched_index_map_parse(a, c->attrs[2].s, t, &map, why, sizeof why)) {
    st = sched_fail(c, "%s", why);
    goto out;
  }
  if (!map.is_ranges || map.n_params != b->n_iter_vars ||
      map.n_results != 2 * old->n_ranges || old->n_ranges > MAX_DIMS) {
    st = sched_fail(c, "gen_new_ranges must take the %d iters of block '%s' "
                       "and give %d (begin, end) ranges for '%s'",
                    b->n_iter_vars, b->name, old->n_ranges, old->buffer->name);
    goto out;
  }
  loom_expr *args[MAX_DIMS * 4], *res[MAX_DIMS * 2];
  if (b->n_iter_vars > MAX_DIMS * 4) {
    st = sched_fail(c, "too many iters");
    goto out;
  }
  for (int i = 0; i < b->n_iter_vars; i++)
    if (!(args[i] = loom_ir_ref(a, b->iter_vars[i].var))) {
      st = sched_nomem(c);
      goto out;
    }
  loom_arith_ctx *ctx = loom_arith_ctx_new();
  loom_buffer_region *regs = loom_arena_alloc(a, (size_t)n * sizeof *regs);
  loom_range *ranges = loom_arena_alloc(
      a, (size_t)(old->n_ranges ? old->n_ranges : 1) * sizeof *ranges);
  if (!ctx || !regs || !ranges || !sched_index_map_apply(a, &map, args, res)) {
    loom_arith_ctx_free(ctx);
    st = sched_nomem(c);
    goto out;
  }
  for (int d = 0; d < old->n_ranges; d++) {
    loom_expr *begin = res[2 * d], *end = res[2 * d + 1];
    ranges[d].min = loom_arith_simplify(a, ctx, begin);
    loom_expr *ext = loom_ir_binary(a, LOOM_EXPR_SUB, end, begin);
    ranges[d].extent = ext ? loom_arith_simplify(a, ctx, ext) : NULL;
    if (!ranges[d].min || !ranges[d].extent) {
      loom_arith_ctx_free(ctx);
      st = sched_nomem(c);
      goto out;
    }
  }
  loom_arith_ctx_free(ctx);
  memcpy(regs, is_write ? b->writes : b->reads, (size_t)n * sizeof *regs);
  regs[idx].ranges = ranges;
  loom_block *nb = loom_arena_alloc(a, sizeof *nb);
  loom_stmt *nr = loom_arena_alloc(a, sizeof *nr);
  if (!nb || !nr) {
    st = sched_nomem(c);
    goto out;
  }
  *nb = *b;
  if (is_write)
    nb->writes = regs;
  else
    nb->reads = regs;
  int na;
  nb->annotations = with_index(a, b->annotations, b->n_annotations,
                               is_write ? "explicit_write_region"
                                        : "explicit_read_region",
                               idx, &na);
  if (!nb->annotations) {
    st = sched_nomem(c);
    goto out;
  }
  nb->n_annotations = na;
  *nr = *r;
  nr->u.realize.block = nb;
  if (!(c->mod = sched_replace(a, c->mod, &p, p.n - 1, nr)))
    st = sched_nomem(c);
out:
  sched_path_free(&p);
  return st;
}
