/* What the rules read off the IR: where a block sits (its loops and scope),
 * its consumers, and the block properties MetaSchedule's rules test. */
#include "tune/space_impl.h"

#include <string.h>

typedef struct finder {
  const char *name;
  space_block *out;
  const loom_stmt *scope;
  const loom_stmt *loops[SPACE_MAX_LOOPS];
  int n_loops;
  int n_odd;
  bool found;
} finder;

static void find_in(finder *fd, const loom_stmt *s, int depth) {
  if (!s || fd->found || depth > 400)
    return;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE: {
    const loom_block *b = s->u.realize.block;
    if (b->name && !strcmp(b->name, fd->name)) {
      space_block *o = fd->out;
      o->realize = s;
      o->block = b;
      o->scope = fd->scope;
      o->n_loops = fd->n_loops;
      memcpy(o->loops, fd->loops, (size_t)fd->n_loops * sizeof *o->loops);
      o->is_nested_oddly = fd->n_odd > 0;
      fd->found = true;
      return;
    }
    finder inner = *fd;
    inner.scope = s;
    inner.n_loops = 0;
    inner.n_odd = 0;
    find_in(&inner, b->init, depth + 1);
    find_in(&inner, b->body, depth + 1);
    fd->found = inner.found;
    return;
  }
  case LOOM_STMT_FOR:
    if (fd->n_loops < SPACE_MAX_LOOPS) {
      fd->loops[fd->n_loops++] = s;
      find_in(fd, s->u.loop.body, depth + 1);
      fd->n_loops--;
    } else {
      fd->n_odd++;
      find_in(fd, s->u.loop.body, depth + 1);
      fd->n_odd--;
    }
    return;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      find_in(fd, s->u.seq.stmts[i], depth + 1);
    return;
  case LOOM_STMT_STORE:
  case LOOM_STMT_IF:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_LET:
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
  case LOOM_STMT_ATTR:
  case LOOM_STMT_ASSERT:
  case LOOM_STMT_COUNT_: {
    /* Any other statement with a body puts the block off the plain path. */
    const loom_stmt *kids[2] = {NULL, NULL};
    switch (s->kind) {
    case LOOM_STMT_IF:
      kids[0] = s->u.if_.then_case;
      kids[1] = s->u.if_.else_case;
      break;
    case LOOM_STMT_LET: kids[0] = s->u.let.body; break;
    case LOOM_STMT_ALLOCATE:
    case LOOM_STMT_DECL_BUFFER: kids[0] = s->u.alloc.body; break;
    case LOOM_STMT_ATTR: kids[0] = s->u.attr.body; break;
    case LOOM_STMT_ASSERT: kids[0] = s->u.assert_.body; break;
    case LOOM_STMT_FOR:
    case LOOM_STMT_BLOCK_REALIZE:
    case LOOM_STMT_STORE:
    case LOOM_STMT_SEQ:
    case LOOM_STMT_EVALUATE:
    case LOOM_STMT_COUNT_: break;
    }
    fd->n_odd++;
    find_in(fd, kids[0], depth + 1);
    find_in(fd, kids[1], depth + 1);
    fd->n_odd--;
    return;
  }
  }
}

bool space_find_block(const loom_func *f, const char *name, space_block *out) {
  memset(out, 0, sizeof *out);
  out->f = f;
  finder fd = {.name = name, .out = out};
  find_in(&fd, f->body, 0);
  return fd.found;
}

typedef struct namer {
  const char **out;
  int n, max;
} namer;

static void names_in(namer *nm, const loom_stmt *s, int depth) {
  if (!s || depth > 400)
    return;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE:
    names_in(nm, s->u.realize.block->init, depth + 1);
    names_in(nm, s->u.realize.block->body, depth + 1);
    if (nm->n < nm->max)
      nm->out[nm->n++] = s->u.realize.block->name;
    return;
  case LOOM_STMT_FOR: names_in(nm, s->u.loop.body, depth + 1); return;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      names_in(nm, s->u.seq.stmts[i], depth + 1);
    return;
  case LOOM_STMT_IF:
    names_in(nm, s->u.if_.then_case, depth + 1);
    names_in(nm, s->u.if_.else_case, depth + 1);
    return;
  case LOOM_STMT_LET: names_in(nm, s->u.let.body, depth + 1); return;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER: names_in(nm, s->u.alloc.body, depth + 1); return;
  case LOOM_STMT_ATTR: names_in(nm, s->u.attr.body, depth + 1); return;
  case LOOM_STMT_ASSERT: names_in(nm, s->u.assert_.body, depth + 1); return;
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return;
  }
}

int space_block_names(const loom_func *f, const char **out, int max) {
  namer nm = {out, 0, max};
  names_in(&nm, f->body, 0);
  return nm.n;
}

static void children_in(const loom_stmt *s, const loom_stmt **out, int *n,
                        int max, int depth) {
  if (!s || depth > 400)
    return;
  switch (s->kind) {
  case LOOM_STMT_BLOCK_REALIZE:
    if (*n < max)
      out[(*n)++] = s;
    return;
  case LOOM_STMT_FOR: children_in(s->u.loop.body, out, n, max, depth + 1); return;
  case LOOM_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n_stmts; i++)
      children_in(s->u.seq.stmts[i], out, n, max, depth + 1);
    return;
  case LOOM_STMT_IF:
    children_in(s->u.if_.then_case, out, n, max, depth + 1);
    children_in(s->u.if_.else_case, out, n, max, depth + 1);
    return;
  case LOOM_STMT_LET: children_in(s->u.let.body, out, n, max, depth + 1); return;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    children_in(s->u.alloc.body, out, n, max, depth + 1);
    return;
  case LOOM_STMT_ATTR: children_in(s->u.attr.body, out, n, max, depth + 1); return;
  case LOOM_STMT_ASSERT:
    children_in(s->u.assert_.body, out, n, max, depth + 1);
    return;
  case LOOM_STMT_STORE:
  case LOOM_STMT_EVALUATE:
  case LOOM_STMT_COUNT_: return;
  }
}

int space_child_blocks(const loom_stmt *scope, const loom_stmt **out,
                       int max) {
  int n = 0;
  if (scope && scope->kind == LOOM_STMT_BLOCK_REALIZE)
    children_in(scope->u.realize.block->body, out, &n, max, 0);
  else if (scope)
    children_in(scope, out, &n, max, 0);
  return n;
}

static bool reads_of(const loom_block *o, const loom_block *b) {
  for (int i = 0; i < b->n_writes; i++)
    for (int j = 0; j < o->n_reads; j++)
      if (b->writes[i].buffer == o->reads[j].buffer)
        return true;
  return false;
}

int space_consumers(const space_block *b, const loom_stmt **out, int max) {
  if (!b->scope)
    return 0;
  const loom_stmt *kids[SPACE_MAX_BLOCKS];
  int n = space_child_blocks(b->scope, kids, SPACE_MAX_BLOCKS), m = 0;
  bool after = false;
  for (int i = 0; i < n; i++) {
    if (kids[i] == b->realize) {
      after = true;
      continue;
    }
    if (after && reads_of(kids[i]->u.realize.block, b->block) && m < max)
      out[m++] = kids[i];
  }
  return m;
}

bool space_is_spatial(const loom_block *b) {
  for (int i = 0; i < b->n_iter_vars; i++)
    if (b->iter_vars[i].kind != LOOM_ITER_SPATIAL)
      return false;
  return true;
}

static bool same_region(const loom_buffer_region *a, const loom_buffer_region *b) {
  if (a->buffer != b->buffer || a->n_ranges != b->n_ranges)
    return false;
  for (int k = 0; k < a->n_ranges; k++)
    if (!loom_ir_equal_expr(a->ranges[k].min, b->ranges[k].min) ||
        !loom_ir_equal_expr(a->ranges[k].extent, b->ranges[k].extent))
      return false;
  return true;
}

bool space_is_parallelizable(const loom_block *b) {
  if (b->init)
    return true;
  if (!space_is_spatial(b))
    return false;
  for (int i = 0; i < b->n_writes; i++)
    for (int j = 0; j < b->n_reads; j++)
      if (b->writes[i].buffer == b->reads[j].buffer &&
          !same_region(&b->writes[i], &b->reads[j]))
        return false;
  return true;
}

bool space_has_ann(const loom_attr *a, int n, const char *key) {
  return loom_ir_attr_get(a, n, key) != NULL;
}

bool space_is_trivial_nest(const space_block *sb) {
  const loom_stmt *r = sb->realize;
  const loom_block *b = sb->block;
  if (sb->is_nested_oddly || r->u.realize.predicate ||
      r->u.realize.n_iter_values != b->n_iter_vars ||
      b->n_iter_vars != sb->n_loops)
    return false;
  for (int i = 0; i < sb->n_loops; i++) {
    const loom_stmt *l = sb->loops[i];
    int64_t v;
    if (!loom_ir_is_const_int(l->u.loop.min, &v) || v != 0 ||
        !loom_ir_is_const_int(l->u.loop.extent, &v) || v < 1 ||
        l->u.loop.kind != LOOM_FOR_SERIAL || l->u.loop.n_annotations)
      return false;
    if (i + 1 < sb->n_loops && l->u.loop.body != sb->loops[i + 1])
      return false;
    if (i + 1 == sb->n_loops && l->u.loop.body != r)
      return false;
  }
  for (int i = 0; i < b->n_iter_vars; i++) {
    const loom_expr *e = r->u.realize.iter_values[i];
    if (e->kind != LOOM_EXPR_VAR)
      return false;
    bool hit = false;
    for (int k = 0; k < sb->n_loops; k++)
      hit |= sb->loops[k]->u.loop.var == e->u.var;
    for (int j = 0; j < i; j++)
      hit &= r->u.realize.iter_values[j]->u.var != e->u.var;
    if (!hit)
      return false;
  }
  return true;
}

bool space_is_open_nest(const space_block *sb) {
  const loom_block *b = sb->block;
  if (!sb->scope || !space_is_trivial_nest(sb) ||
      space_has_ann(b->annotations, b->n_annotations, SPACE_ANN_TILING))
    return false;
  for (int i = 0; i < b->n_iter_vars; i++)
    if (b->iter_vars[i].kind != LOOM_ITER_SPATIAL &&
        b->iter_vars[i].kind != LOOM_ITER_REDUCE)
      return false;
  return true;
}

int space_iter_index(const loom_block *b, const loom_var *v) {
  for (int i = 0; i < b->n_iter_vars; i++)
    if (b->iter_vars[i].var == v)
      return i;
  return -1;
}

const loom_iter_var *space_iter_of_loop(const space_block *sb,
                                        const loom_var *v) {
  const loom_stmt *r = sb->realize;
  for (int i = 0; i < r->u.realize.n_iter_values; i++) {
    const loom_expr *e = r->u.realize.iter_values[i];
    if (e->kind == LOOM_EXPR_VAR && e->u.var == v)
      return &sb->block->iter_vars[i];
  }
  return NULL;
}

bool space_is_unit_in(const loom_expr *e, const loom_var *v) {
  if (e->kind == LOOM_EXPR_VAR)
    return e->u.var == v;
  if (e->kind != LOOM_EXPR_ADD && e->kind != LOOM_EXPR_SUB)
    return false;
  const loom_expr *a = e->u.bin.a, *b = e->u.bin.b;
  if (space_is_unit_in(a, v) && !loom_ir_expr_uses(b, v))
    return true;
  return e->kind == LOOM_EXPR_ADD && space_is_unit_in(b, v) && !loom_ir_expr_uses(a, v);
}

const loom_var *space_unit_iter(const space_block *sb, const loom_var *v) {
  const loom_var *hit = NULL;
  const loom_stmt *r = sb->realize;
  for (int i = 0; i < r->u.realize.n_iter_values; i++) {
    const loom_expr *e = r->u.realize.iter_values[i];
    if (!loom_ir_expr_uses(e, v))
      continue;
    if (hit)
      return NULL;
    if (!space_is_unit_in(e, v))
      return NULL;
    hit = sb->block->iter_vars[i].var;
  }
  return hit;
}

bool space_func_is_spatial(const loom_func *f) {
  const char *names[SPACE_MAX_BLOCKS];
  int n = space_block_names(f, names, SPACE_MAX_BLOCKS);
  for (int i = 0; i < n; i++) {
    space_block sb;
    if (space_find_block(f, names[i], &sb) && !space_is_spatial(sb.block))
      return false;
  }
  return true;
}

bool space_region_uses(const loom_buffer_region *r, const loom_var *v) {
  for (int k = 0; k < r->n_ranges; k++)
    if (loom_ir_expr_uses(r->ranges[k].min, v) ||
        loom_ir_expr_uses(r->ranges[k].extent, v))
      return true;
  return false;
}

bool space_needs_tiling(const space_block *sb) {
  const loom_block *b = sb->block;
  if (b->n_writes != 1 || b->n_reads < 1 || space_is_spatial(b) ||
      !space_is_open_nest(sb))
    return false;
  for (int i = 0; i < b->n_reads; i++) {
    for (int j = 0; j < i; j++)
      if (b->reads[i].buffer == b->reads[j].buffer)
        return false;
    for (int k = 0; k < b->reads[i].n_ranges; k++)
      if (!loom_ir_is_const_int(b->reads[i].ranges[k].extent, NULL))
        return false;
  }
  for (int r = 0; r < b->n_reads; r++) {
    if (b->reads[r].buffer == b->writes[0].buffer)
      continue;
    for (int i = 0; i < b->n_iter_vars; i++) {
      const loom_iter_var *iv = &b->iter_vars[i];
      int64_t ext;
      if (iv->kind != LOOM_ITER_SPATIAL ||
          (loom_ir_is_const_int(iv->dom.extent, &ext) && ext == 1))
        continue;
      if (!space_region_uses(&b->reads[r], iv->var))
        return true;
    }
  }
  return false;
}

bool space_is_write_cache(const loom_block *b) {
  if (b->n_writes != 1)
    return false;
  const loom_buffer_region *w = &b->writes[0];
  int64_t one;
  for (int k = 0; k < w->n_ranges; k++)
    if (w->ranges[k].min->kind != LOOM_EXPR_VAR ||
        !loom_ir_is_const_int(w->ranges[k].extent, &one) || one != 1)
      return false;
  for (int r = 0; r < b->n_reads; r++) {
    const loom_buffer_region *rd = &b->reads[r];
    int last = -1;
    for (int k = 0; k < rd->n_ranges; k++) {
      const loom_expr *m = rd->ranges[k].min;
      if (!loom_ir_is_const_int(rd->ranges[k].extent, &one) || one != 1)
        return false;
      if (loom_ir_is_const_int(m, NULL))
        continue;
      int at = -1;
      for (int j = 0; m->kind == LOOM_EXPR_VAR && j < w->n_ranges; j++)
        if (w->ranges[j].min->u.var == m->u.var)
          at = j;
      if (at <= last)
        return false;
      last = at;
    }
  }
  return true;
}

void space_loop_extents(const space_block *sb, int64_t *space, int64_t *reduce) {
  *space = *reduce = 1;
  for (int i = 0; i < sb->n_loops; i++) {
    const loom_iter_var *iv = space_iter_of_loop(sb, sb->loops[i]->u.loop.var);
    int64_t ext = 1;
    loom_ir_is_const_int(sb->loops[i]->u.loop.extent, &ext);
    int64_t *p = iv && iv->kind == LOOM_ITER_SPATIAL ? space : reduce;
    *p = ext > 0 && *p > INT64_MAX / ext ? INT64_MAX : *p * ext;
  }
}
