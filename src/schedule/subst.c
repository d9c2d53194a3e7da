/* Variable substitution through expressions and statements, rebuilding only
 * the nodes on the way to a changed leaf so that the rest stays shared. */
#include "schedule/sched_impl.h"

#include <string.h>

static loom_expr *lookup(const sched_map *m, const loom_var *v) {
  for (int i = 0; i < m->n; i++)
    if (m->vars[i] == v)
      return m->values[i];
  return NULL;
}

/* Substitutes into n expressions; *changed tells whether any differs. The
 * result is a fresh array only when something changed. */
static loom_expr **subst_array(loom_arena *a, loom_expr **es, int n,
                               const sched_map *m, bool *changed, bool *oom) {
  loom_expr **out = NULL;
  for (int i = 0; i < n; i++) {
    loom_expr *e = sched_subst_expr(a, es[i], m);
    if (!e && es[i]) {
      *oom = true;
      return es;
    }
    if (e != es[i] && !out) {
      out = loom_arena_alloc(a, (size_t)n * sizeof *out);
      if (!out) {
        *oom = true;
        return es;
      }
      memcpy(out, es, (size_t)n * sizeof *out);
    }
    if (out)
      out[i] = e;
  }
  if (out)
    *changed = true;
  return out ? out : es;
}

loom_expr *sched_subst_expr(loom_arena *a, loom_expr *e, const sched_map *m) {
  if (!e)
    return NULL;
  loom_expr c = *e;
  bool changed = false, oom = false;
  switch (e->kind) {
  case LOOM_EXPR_INT:
  case LOOM_EXPR_FLOAT:
  case LOOM_EXPR_STR:
    return e;
  case LOOM_EXPR_VAR: {
    loom_expr *r = lookup(m, e->u.var);
    return r ? r : e;
  }
  case LOOM_EXPR_NOT:
  case LOOM_EXPR_CAST:
    c.u.unary.a = sched_subst_expr(a, e->u.unary.a, m);
    changed = c.u.unary.a != e->u.unary.a;
    oom = !c.u.unary.a;
    break;
  case LOOM_EXPR_SELECT:
    c.u.select.cond = sched_subst_expr(a, e->u.select.cond, m);
    c.u.select.t = sched_subst_expr(a, e->u.select.t, m);
    c.u.select.f = sched_subst_expr(a, e->u.select.f, m);
    changed = c.u.select.cond != e->u.select.cond ||
              c.u.select.t != e->u.select.t || c.u.select.f != e->u.select.f;
    oom = !c.u.select.cond || !c.u.select.t || !c.u.select.f;
    break;
  case LOOM_EXPR_LOAD:
    c.u.load.indices = subst_array(a, e->u.load.indices, e->u.load.n_indices,
                                   m, &changed, &oom);
    if (!oom && m->on_load) {
      loom_expr *load = e;
      if (changed) {
        load = loom_arena_alloc(a, sizeof *load);
        if (!load)
          return NULL;
        *load = c;
      }
      return m->on_load(m, a, load);
    }
    break;
  case LOOM_EXPR_CALL:
    c.u.call.args =
        subst_array(a, e->u.call.args, e->u.call.n_args, m, &changed, &oom);
    break;
  case LOOM_EXPR_LET:
    c.u.let.value = sched_subst_expr(a, e->u.let.value, m);
    c.u.let.body = sched_subst_expr(a, e->u.let.body, m);
    changed = c.u.let.value != e->u.let.value || c.u.let.body != e->u.let.body;
    oom = !c.u.let.value || !c.u.let.body;
    break;
  case LOOM_EXPR_RAMP:
    c.u.ramp.base = sched_subst_expr(a, e->u.ramp.base, m);
    c.u.ramp.stride = sched_subst_expr(a, e->u.ramp.stride, m);
    changed =
        c.u.ramp.base != e->u.ramp.base || c.u.ramp.stride != e->u.ramp.stride;
    oom = !c.u.ramp.base || !c.u.ramp.stride;
    break;
  case LOOM_EXPR_BROADCAST:
    c.u.broadcast.value = sched_subst_expr(a, e->u.broadcast.value, m);
    changed = c.u.broadcast.value != e->u.broadcast.value;
    oom = !c.u.broadcast.value;
    break;
  default: /* binary */
    c.u.bin.a = sched_subst_expr(a, e->u.bin.a, m);
    c.u.bin.b = sched_subst_expr(a, e->u.bin.b, m);
    changed = c.u.bin.a != e->u.bin.a || c.u.bin.b != e->u.bin.b;
    oom = !c.u.bin.a || !c.u.bin.b;
    break;
  }
  if (oom)
    return NULL;
  if (!changed)
    return e;
  loom_expr *n = loom_arena_alloc(a, sizeof *n);
  if (n)
    *n = c;
  return n;
}

bool sched_expr_uses(const loom_expr *e, const loom_var *v) {
  return loom_ir_expr_uses(e, v);
}

/* ---- statements ------------------------------------------------------------ */

static bool subst_regions(loom_arena *a, loom_buffer_region **regions, int n,
                          const sched_map *m, bool *oom) {
  loom_buffer_region *rs = *regions, *out = NULL;
  for (int i = 0; i < n; i++) {
    loom_range *rg = rs[i].ranges, *nr = NULL;
    for (int j = 0; j < rs[i].n_ranges; j++) {
      loom_expr *mn = sched_subst_expr(a, rg[j].min, m);
      loom_expr *ex = sched_subst_expr(a, rg[j].extent, m);
      if (!mn || !ex) {
        *oom = true;
        return false;
      }
      if ((mn != rg[j].min || ex != rg[j].extent) && !nr) {
        nr = loom_arena_alloc(a, (size_t)rs[i].n_ranges * sizeof *nr);
        if (!nr) {
          *oom = true;
          return false;
        }
        memcpy(nr, rg, (size_t)rs[i].n_ranges * sizeof *nr);
      }
      if (nr)
        nr[j] = (loom_range){mn, ex};
    }
    if (nr && !out) {
      out = loom_arena_alloc(a, (size_t)n * sizeof *out);
      if (!out) {
        *oom = true;
        return false;
      }
      memcpy(out, rs, (size_t)n * sizeof *out);
    }
    if (nr)
      out[i].ranges = nr;
  }
  if (out)
    *regions = out;
  return out != NULL;
}

static loom_block *subst_block(loom_arena *a, loom_block *b,
                               const sched_map *m, bool *oom) {
  loom_block c = *b;
  bool changed = subst_regions(a, &c.reads, c.n_reads, m, oom);
  changed |= subst_regions(a, &c.writes, c.n_writes, m, oom);
  if (b->init) {
    c.init = sched_subst_stmt(a, b->init, m);
    changed |= c.init != b->init;
    *oom |= !c.init;
  }
  c.body = sched_subst_stmt(a, b->body, m);
  changed |= c.body != b->body;
  *oom |= !c.body;
  if (b->n_match_buffers) {
    loom_match_buffer *mb = NULL;
    for (int i = 0; i < b->n_match_buffers; i++) {
      loom_buffer_region r = b->match_buffers[i].source;
      loom_buffer_region *rp = &r;
      if (subst_regions(a, &rp, 1, m, oom)) {
        if (!mb) {
          mb = loom_arena_alloc(a, (size_t)b->n_match_buffers * sizeof *mb);
          if (!mb) {
            *oom = true;
            return b;
          }
          memcpy(mb, b->match_buffers, (size_t)b->n_match_buffers * sizeof *mb);
        }
        mb[i].source = *rp;
      }
    }
    if (mb) {
      c.match_buffers = mb;
      changed = true;
    }
  }
  if (*oom)
    return b;
  loom_block *n = b;
  if (changed) {
    n = loom_arena_alloc(a, sizeof *n);
    if (!n) {
      *oom = true;
      return b;
    }
    *n = c;
  }
  if (m->on_block) {
    loom_block *f = m->on_block(m, a, b, n);
    if (!f)
      *oom = true;
    return f ? f : b;
  }
  return n;
}

loom_stmt *sched_subst_stmt(loom_arena *a, loom_stmt *s, const sched_map *m) {
  if (!s)
    return NULL;
  loom_stmt c = *s;
  bool changed = false, oom = false;
#define SUB_E(field)                                                           \
  do {                                                                         \
    c.field = sched_subst_expr(a, s->field, m);                                \
    if (!c.field && s->field)                                                  \
      oom = true;                                                              \
    changed |= c.field != s->field;                                            \
  } while (0)
#define SUB_S(field)                                                           \
  do {                                                                         \
    c.field = sched_subst_stmt(a, s->field, m);                                \
    if (!c.field && s->field)                                                  \
      oom = true;                                                              \
    changed |= c.field != s->field;                                            \
  } while (0)
  switch (s->kind) {
  case LOOM_STMT_FOR:
    SUB_E(u.loop.min);
    SUB_E(u.loop.extent);
    SUB_S(u.loop.body);
    break;
  case LOOM_STMT_BLOCK_REALIZE:
    c.u.realize.iter_values =
        subst_array(a, s->u.realize.iter_values, s->u.realize.n_iter_values, m,
                    &changed, &oom);
    SUB_E(u.realize.predicate);
    c.u.realize.block = subst_block(a, s->u.realize.block, m, &oom);
    changed |= c.u.realize.block != s->u.realize.block;
    break;
  case LOOM_STMT_STORE:
    SUB_E(u.store.value);
    c.u.store.indices = subst_array(a, s->u.store.indices,
                                    s->u.store.n_indices, m, &changed, &oom);
    break;
  case LOOM_STMT_IF:
    SUB_E(u.if_.cond);
    SUB_S(u.if_.then_case);
    SUB_S(u.if_.else_case);
    break;
  case LOOM_STMT_SEQ: {
    loom_stmt **items = NULL;
    for (int i = 0; i < s->u.seq.n_stmts; i++) {
      loom_stmt *x = sched_subst_stmt(a, s->u.seq.stmts[i], m);
      if (!x) {
        oom = true;
        break;
      }
      if (x != s->u.seq.stmts[i] && !items) {
        items = loom_arena_alloc(a, (size_t)s->u.seq.n_stmts * sizeof *items);
        if (!items) {
          oom = true;
          break;
        }
        memcpy(items, s->u.seq.stmts, (size_t)s->u.seq.n_stmts * sizeof *items);
      }
      if (items)
        items[i] = x;
    }
    if (items) {
      c.u.seq.stmts = items;
      changed = true;
    }
    break;
  }
  case LOOM_STMT_EVALUATE:
    SUB_E(u.evaluate.value);
    break;
  case LOOM_STMT_LET:
    SUB_E(u.let.value);
    SUB_S(u.let.body);
    break;
  case LOOM_STMT_ALLOCATE:
  case LOOM_STMT_DECL_BUFFER:
    SUB_S(u.alloc.body);
    break;
  case LOOM_STMT_ATTR:
    SUB_E(u.attr.value);
    SUB_S(u.attr.body);
    break;
  case LOOM_STMT_ASSERT:
    SUB_E(u.assert_.cond);
    SUB_E(u.assert_.message);
    SUB_S(u.assert_.body);
    break;
  default:
    break;
  }
#undef SUB_E
#undef SUB_S
  if (oom)
    return NULL;
  loom_stmt *n = s;
  if (changed) {
    n = loom_arena_alloc(a, sizeof *n);
    if (!n)
      return NULL;
    *n = c;
  }
  return m->on_stmt ? m->on_stmt(m, a, n) : n;
}

bool sched_stmt_uses(loom_arena *a, loom_stmt *s, const loom_var *v) {
  /* Substituting v by a fresh constant changes s exactly when s mentions
   * v; the copy is garbage in the arena, which is cheap. */
  loom_expr *k = loom_ir_int(a, v->dtype, 0);
  loom_expr *vals[1] = {k};
  const loom_var *vars[1] = {v};
  sched_map m = {.vars = vars, .values = vals, .n = 1};
  return k && sched_subst_stmt(a, s, &m) != s;
}
