/* The lookup instructions: get_block, get_loops, get_child_blocks,
 * get_producers, get_consumers and get_output_blocks. They change nothing in the IR; their
 * outputs are random variables naming what they found. */
#include "schedule/sched_impl.h"

#include <string.h>

static bool collect_child_blocks(loom_stmt *s, sched_stmt_list *out) {
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return sched_collect_blocks(s, out);
  loom_block *b = s->u.realize.block;
  if (b->init && !sched_collect_blocks(b->init, out))
    return false;
  return sched_collect_blocks(b->body, out);
}

static loom_status push_blocks(sched_call *c, int func,
                               const sched_stmt_list *l) {
  for (int i = 0; i < l->n; i++)
    TRY(sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = func,
                                     .block = l->items[i]->u.realize.block->name}));
  return LOOM_OK;
}

loom_status sched_apply_get_block(sched_call *c) {
  if (c->n_attrs < 1 || c->attrs[0].kind != LOOM_TV_STR)
    return sched_fail(c, "the block name must be a string");
  const char *name = c->attrs[0].s;
  const loom_module *m = c->mod;
  int func = -1;
  if (c->n_attrs >= 2 && c->attrs[1].kind == LOOM_TV_STR) {
    for (int i = 0; i < m->n_funcs; i++)
      if (m->funcs[i]->name && !strcmp(m->funcs[i]->name, c->attrs[1].s))
        func = i;
    if (func < 0)
      return sched_fail(c, "the module has no function named '%s'",
                        c->attrs[1].s);
  } else if (m->n_funcs == 1) {
    func = 0;
  } else {
    for (int i = 0; i < m->n_funcs; i++)
      if (m->funcs[i]->name && !strcmp(m->funcs[i]->name, "main"))
        func = i;
    if (func < 0)
      return sched_fail(c, "the module has %d functions; say which with "
                           "func_name",
                        m->n_funcs);
  }
  int count = sched_count_blocks(m->funcs[func], name);
  if (count == 0)
    return sched_fail(c, "function '%s' has no block named '%s'",
                      m->funcs[func]->name, name);
  if (count > 1)
    return sched_fail(c, "function '%s' has %d blocks named '%s'; the name "
                         "must be unique",
                      m->funcs[func]->name, count, name);
  if (c->n_attrs < 2 || c->attrs[1].kind != LOOM_TV_STR) {
    /* Recorded with the function it resolved to, as TVM records it. */
    c->own_attrs[0] = c->attrs[0];
    c->own_attrs[1] = loom_tval_str(m->funcs[func]->name);
    c->attrs = c->own_attrs;
    c->n_attrs = 2;
  }
  sched_path p = {0};
  sched_find_block(m->funcs[func], name, &p);
  const char *stored = p.n ? p.stmts[p.n - 1]->u.realize.block->name : name;
  sched_path_free(&p);
  return sched_push_out(c, (sched_rv){.kind = LOOM_RV_BLOCK, .func = func,
                                      .block = stored});
}

loom_status sched_apply_get_loops(sched_call *c) {
  sched_path p = {0};
  loom_status st = sched_input_block(c, 0, &p);
  int scope = st == LOOM_OK ? sched_scope_index(&p, p.n - 1) : 0;
  for (int i = scope + 1; st == LOOM_OK && i < p.n - 1; i++)
    if (p.stmts[i]->kind == LOOM_STMT_FOR)
      st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_LOOP, .func = p.func,
                                        .loop = p.stmts[i]->u.loop.var});
  sched_path_free(&p);
  return st;
}

loom_status sched_apply_get_child_blocks(sched_call *c) {
  sched_path p = {0};
  bool is_loop;
  sched_stmt_list l = {0};
  loom_status st = sched_input_target(c, 0, &p, &is_loop);
  if (st == LOOM_OK && !collect_child_blocks(p.stmts[p.n - 1], &l))
    st = sched_nomem(c);
  if (st == LOOM_OK)
    st = push_blocks(c, p.func, &l);
  free(l.items);
  sched_path_free(&p);
  return st;
}

static bool regions_share(const loom_buffer_region *a, int na,
                          const loom_buffer_region *b, int nb) {
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++)
      if (a[i].buffer == b[j].buffer)
        return true;
  return false;
}

/* Producers: earlier blocks of the same scope that write what the block
 * reads. Consumers: later blocks that read what it writes. */
static loom_status neighbours(sched_call *c, bool want_producers) {
  sched_path p = {0};
  sched_stmt_list l = {0}, found = {0};
  loom_status st = sched_input_block(c, 0, &p);
  if (st != LOOM_OK) {
    sched_path_free(&p);
    return st;
  }
  int scope = sched_scope_index(&p, p.n - 1);
  loom_stmt *self = p.stmts[p.n - 1];
  if (scope >= 0 && !collect_child_blocks(p.stmts[scope], &l))
    st = sched_nomem(c);
  int at = -1;
  for (int i = 0; i < l.n; i++)
    if (l.items[i] == self)
      at = i;
  const loom_block *b = self->u.realize.block;
  for (int i = 0; st == LOOM_OK && at >= 0 && i < l.n; i++) {
    const loom_block *o = l.items[i]->u.realize.block;
    bool hit = want_producers
                   ? i < at && regions_share(o->writes, o->n_writes, b->reads,
                                             b->n_reads)
                   : i > at && regions_share(b->writes, b->n_writes, o->reads,
                                             o->n_reads);
    if (hit && !sched_list_push(&found, l.items[i]))
      st = sched_nomem(c);
  }
  if (st == LOOM_OK)
    st = push_blocks(c, p.func, &found);
  free(l.items);
  free(found.items);
  sched_path_free(&p);
  return st;
}

loom_status sched_apply_get_producers(sched_call *c) {
  return neighbours(c, true);
}

loom_status sched_apply_get_consumers(sched_call *c) {
  return neighbours(c, false);
}

/* Blocks under the scope block (at any depth) that write a parameter of the
 * function, in program order. */
typedef struct outputs {
  const loom_func *f;
  sched_stmt_list *out;
} outputs;

static loom_visit take_output(void *ctx, loom_stmt *s) {
  const outputs *o = ctx;
  if (s->kind != LOOM_STMT_BLOCK_REALIZE)
    return LOOM_VISIT_GO;
  const loom_block *b = s->u.realize.block;
  bool is_output = false;
  for (int i = 0; i < b->n_writes && !is_output; i++)
    for (int j = 0; j < o->f->n_params; j++)
      is_output |= o->f->params[j].buffer == b->writes[i].buffer;
  return !is_output || sched_list_push(o->out, s) ? LOOM_VISIT_GO
                                                  : LOOM_VISIT_STOP;
}

static bool collect_outputs(loom_stmt *s, const loom_func *f,
                            sched_stmt_list *out) {
  outputs o = {f, out};
  loom_ir_visitor v = {.stmt_pre = take_output, .ctx = &o};
  return loom_ir_visit_stmt(&v, s);
}

loom_status sched_apply_get_output_blocks(sched_call *c) {
  sched_path p = {0};
  sched_stmt_list l = {0};
  TRY(sched_input_block(c, 0, &p));
  loom_status st = LOOM_OK;
  const loom_func *f = c->mod->funcs[p.func];
  const loom_block *scope = p.stmts[p.n - 1]->u.realize.block;
  if ((scope->init && !collect_outputs(scope->init, f, &l)) ||
      !collect_outputs(scope->body, f, &l))
    st = sched_nomem(c);
  if (st == LOOM_OK)
    st = push_blocks(c, p.func, &l);
  free(l.items);
  sched_path_free(&p);
  return st;
}
