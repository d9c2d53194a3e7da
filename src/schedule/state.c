/* The schedule state: the current module, the random-variable table, the
 * trace, the generator, and the one place where an instruction is applied
 * and recorded. Copies share arenas through a counted chain so that forking
 * a schedule costs two small array copies. */
#include "schedule/sched_impl.h"

#include <stdarg.h>
#include <string.h>

const sched_kind_info sched_kinds[LOOM_INST_COUNT_] = {
#define X(id, json, json_alias, method, method_alias, out, is_list, spec,      \
          is_pure, apply)                                                       \
  {json, json_alias, method, method_alias, out, is_list, spec, is_pure, apply},
#include "loom/schedule_insts.def"
#undef X
};

int loom_inst_kind_by_json(const char *name) {
  for (int k = 0; k < LOOM_INST_COUNT_; k++)
    if (!strcmp(sched_kinds[k].json, name) ||
        (sched_kinds[k].json_alias && !strcmp(sched_kinds[k].json_alias, name)))
      return k;
  return -1;
}

int loom_inst_kind_by_method(const char *name) {
  for (int k = 0; k < LOOM_INST_COUNT_; k++)
    if (!strcmp(sched_kinds[k].method, name) ||
        (sched_kinds[k].method_alias &&
         !strcmp(sched_kinds[k].method_alias, name)))
      return k;
  return -1;
}

const char *loom_inst_kind_method(loom_inst_kind k, loom_dialect dialect) {
  if (k < 0 || k >= LOOM_INST_COUNT_)
    return "?";
  if (dialect == LOOM_DIALECT_TIRX && sched_kinds[k].method_alias)
    return sched_kinds[k].method_alias;
  return sched_kinds[k].method;
}

/* ---- signatures ------------------------------------------------------------ */

int sched_parse_spec(const char *spec, sched_param *out) {
  int n = 0;
  const char *p = spec;
  while (*p && n < SCHED_MAX_PARAMS) {
    while (*p == ' ')
      p++;
    if (!*p)
      break;
    sched_param *q = &out[n++];
    memset(q, 0, sizeof *q);
    if (*p == '*') {
      q->is_varargs = true;
      p++;
    }
    size_t len = strcspn(p, ":");
    if (len >= sizeof q->name)
      len = sizeof q->name - 1;
    memcpy(q->name, p, len);
    p += strcspn(p, ":");
    if (*p == ':')
      p++;
    q->type = *p ? *p++ : '?';
    q->is_input = strchr("LBRFVG", q->type) != NULL;
    if (*p == '=') {
      p++;
      q->dflt = p;
      q->dflt_len = strcspn(p, " ");
      p += q->dflt_len;
    }
  }
  return n;
}

/* ---- values ----------------------------------------------------------------- */

loom_tval loom_tval_none(void) { return (loom_tval){.kind = LOOM_TV_NONE}; }
loom_tval loom_tval_int(int64_t v) {
  return (loom_tval){.kind = LOOM_TV_INT, .i = v};
}
loom_tval loom_tval_bool(bool v) {
  return (loom_tval){.kind = LOOM_TV_BOOL, .i = v};
}
loom_tval loom_tval_str(const char *s) {
  return (loom_tval){.kind = LOOM_TV_STR, .s = s};
}
loom_tval loom_tval_rv(loom_sched_rv rv) {
  return (loom_tval){.kind = LOOM_TV_RV, .i = rv};
}

bool sched_tval_equal(const loom_tval *a, const loom_tval *b) {
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case LOOM_TV_NONE:
    return true;
  case LOOM_TV_BOOL:
  case LOOM_TV_INT:
  case LOOM_TV_RV:
    return a->i == b->i;
  case LOOM_TV_FLOAT:
    return a->f == b->f;
  case LOOM_TV_STR:
    return !strcmp(a->s, b->s);
  case LOOM_TV_LIST:
  case LOOM_TV_DICT:
    if (a->n != b->n)
      return false;
    for (int i = 0; i < a->n; i++) {
      if (a->kind == LOOM_TV_DICT && strcmp(a->keys[i], b->keys[i]))
        return false;
      if (!sched_tval_equal(&a->items[i], &b->items[i]))
        return false;
    }
    return true;
  }
  return false;
}

loom_status sched_tval_copy(loom_arena *a, const loom_tval *v,
                            const loom_sched_rv *map, int n_map,
                            loom_tval *out) {
  *out = *v;
  if (v->kind == LOOM_TV_RV && map) {
    if (v->i < 0 || v->i >= n_map)
      out->i = -1;
    else
      out->i = map[v->i];
  }
  if (v->kind == LOOM_TV_STR) {
    out->s = loom_arena_strdup(a, v->s);
    if (!out->s)
      return LOOM_NOMEM;
  }
  if (v->kind != LOOM_TV_LIST && v->kind != LOOM_TV_DICT)
    return LOOM_OK;
  out->items = NULL;
  out->keys = NULL;
  if (v->n == 0)
    return LOOM_OK;
  out->items = loom_arena_alloc(a, (size_t)v->n * sizeof *out->items);
  if (!out->items)
    return LOOM_NOMEM;
  if (v->kind == LOOM_TV_DICT) {
    out->keys = loom_arena_alloc(a, (size_t)v->n * sizeof *out->keys);
    if (!out->keys)
      return LOOM_NOMEM;
  }
  for (int i = 0; i < v->n; i++) {
    TRY(sched_tval_copy(a, &v->items[i], map, n_map, &out->items[i]));
    if (v->kind == LOOM_TV_DICT &&
        !(out->keys[i] = loom_arena_strdup(a, v->keys[i])))
      return LOOM_NOMEM;
  }
  return LOOM_OK;
}

/* ---- pools and schedules ---------------------------------------------------------- */

static sched_pool *pool_new(sched_pool *parent) {
  sched_pool *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->arena = loom_arena_new();
  if (!p->arena) {
    free(p);
    return NULL;
  }
  p->refs = 1;
  p->parent = parent;
  if (parent)
    parent->refs++;
  return p;
}

static void pool_release(sched_pool *p) {
  while (p && --p->refs == 0) {
    sched_pool *parent = p->parent;
    loom_arena_free(p->arena);
    free(p);
    p = parent;
  }
}

loom_arena *sched_arena(loom_sched *s) { return s->pool->arena; }

loom_sched *loom_sched_new(const loom_module *m, uint64_t seed) {
  loom_sched *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->pool = pool_new(NULL);
  if (!s->pool) {
    free(s);
    return NULL;
  }
  s->mod = m;
  loom_rng_seed(&s->rng, seed);
  return s;
}

loom_sched *loom_sched_copy(loom_sched *s) {
  loom_sched *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->pool = pool_new(s->pool);
  c->mod = s->mod;
  c->intrins = s->intrins;
  c->rvs = s->n_rvs ? malloc((size_t)s->n_rvs * sizeof *c->rvs) : NULL;
  c->insts = s->n_insts ? malloc((size_t)s->n_insts * sizeof *c->insts) : NULL;
  if (!c->pool || (s->n_rvs && !c->rvs) || (s->n_insts && !c->insts)) {
    loom_sched_free(c);
    return NULL;
  }
  if (s->n_rvs)
    memcpy(c->rvs, s->rvs, (size_t)s->n_rvs * sizeof *c->rvs);
  if (s->n_insts)
    memcpy(c->insts, s->insts, (size_t)s->n_insts * sizeof *c->insts);
  c->n_rvs = c->cap_rvs = s->n_rvs;
  c->n_insts = c->cap_insts = s->n_insts;
  loom_rng_seed(&c->rng, loom_rng_next(&s->rng));
  return c;
}

void loom_sched_free(loom_sched *s) {
  if (!s)
    return;
  pool_release(s->pool);
  free(s->rvs);
  free(s->insts);
  free(s);
}

const loom_module *loom_sched_module(const loom_sched *s) { return s->mod; }

loom_trace loom_sched_trace(const loom_sched *s) {
  return (loom_trace){s->insts, s->n_insts, s->n_rvs};
}

loom_rng *loom_sched_rng(loom_sched *s) { return &s->rng; }

loom_rv_kind loom_sched_rv_kind(const loom_sched *s, loom_sched_rv rv) {
  return rv >= 0 && rv < s->n_rvs ? s->rvs[rv].kind : LOOM_RV_EXPR;
}

int64_t loom_sched_rv_value(const loom_sched *s, loom_sched_rv rv) {
  return rv >= 0 && rv < s->n_rvs ? s->rvs[rv].value : 0;
}

const loom_var *loom_sched_rv_loop(const loom_sched *s, loom_sched_rv rv) {
  return rv >= 0 && rv < s->n_rvs && s->rvs[rv].kind == LOOM_RV_LOOP
             ? s->rvs[rv].loop
             : NULL;
}

const loom_block *loom_sched_rv_block(const loom_sched *s, loom_sched_rv rv) {
  if (rv < 0 || rv >= s->n_rvs || s->rvs[rv].kind != LOOM_RV_BLOCK)
    return NULL;
  const sched_rv *r = &s->rvs[rv];
  if (r->func < 0 || r->func >= s->mod->n_funcs)
    return NULL;
  sched_path p = {0};
  const loom_block *b = NULL;
  if (sched_find_block_nth(s->mod->funcs[r->func], r->block, r->nth, &p))
    b = p.stmts[p.n - 1]->u.realize.block;
  sched_path_free(&p);
  return b;
}

/* ---- refusals and inputs ------------------------------------------------------------ */

loom_status sched_fail(sched_call *c, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return loom_diag_error(c->d, c->loc, "%s: %s", sched_kinds[c->kind].method,
                         msg);
}

loom_status sched_nomem(sched_call *c) {
  loom_diag_error(c->d, c->loc, "%s: out of memory",
                  sched_kinds[c->kind].method);
  return LOOM_NOMEM;
}

loom_status sched_push_out(sched_call *c, sched_rv rv) {
  if (c->n_outs == c->cap_outs) {
    int cap = c->cap_outs ? 2 * c->cap_outs : 8;
    sched_rv *o = realloc(c->outs, (size_t)cap * sizeof *o);
    if (!o)
      return sched_nomem(c);
    c->outs = o;
    c->cap_outs = cap;
  }
  c->outs[c->n_outs++] = rv;
  return LOOM_OK;
}

const char *sched_stmt_name(const loom_stmt *s) {
  if (s->kind == LOOM_STMT_FOR)
    return s->u.loop.var->name ? s->u.loop.var->name : "?";
  if (s->kind == LOOM_STMT_BLOCK_REALIZE)
    return s->u.realize.block->name ? s->u.realize.block->name : "?";
  return "?";
}

static const sched_rv *input_rv(sched_call *c, int i) {
  if (i >= c->n_inputs || c->inputs[i].kind != LOOM_TV_RV)
    return NULL;
  int64_t id = c->inputs[i].i;
  if (id < 0 || id >= c->s->n_rvs)
    return NULL;
  return &c->s->rvs[id];
}

static loom_status find_rv(sched_call *c, const sched_rv *r, sched_path *p) {
  if (r->func < 0 || r->func >= c->mod->n_funcs)
    return sched_fail(c, "the function of this random variable is gone");
  if (r->kind == LOOM_RV_LOOP && !r->loop)
    return sched_fail(c, "this loop is a compute location that stands for "
                         "%s, not a loop",
                      r->value == -2 ? "inlining" : "the root");
  const loom_func *f = c->mod->funcs[r->func];
  p->func = r->func;
  bool found = r->kind == LOOM_RV_LOOP ? sched_find_loop(f, r->loop, p)
                                       : sched_find_block_nth(f, r->block,
                                                              r->nth, p);
  if (!found)
    return sched_fail(c, "%s '%s' no longer exists",
                      r->kind == LOOM_RV_LOOP ? "loop" : "block",
                      r->kind == LOOM_RV_LOOP ? r->loop->name : r->block);
  return LOOM_OK;
}

loom_status sched_input_loop(sched_call *c, int i, sched_path *p) {
  const sched_rv *r = input_rv(c, i);
  if (!r || r->kind != LOOM_RV_LOOP)
    return sched_fail(c, "argument %d must be a loop", i + 1);
  return find_rv(c, r, p);
}

int sched_input_mark(sched_call *c, int i) {
  const sched_rv *r = input_rv(c, i);
  if (!r || r->kind != LOOM_RV_LOOP || r->loop)
    return 0;
  return r->value == -2 ? -2 : -1;
}

loom_status sched_input_block(sched_call *c, int i, sched_path *p) {
  const sched_rv *r = input_rv(c, i);
  if (!r || r->kind != LOOM_RV_BLOCK)
    return sched_fail(c, "argument %d must be a block", i + 1);
  return find_rv(c, r, p);
}

loom_status sched_input_target(sched_call *c, int i, sched_path *p,
                               bool *is_loop) {
  const sched_rv *r = input_rv(c, i);
  if (!r || r->kind == LOOM_RV_EXPR)
    return sched_fail(c, "argument %d must be a block or a loop", i + 1);
  *is_loop = r->kind == LOOM_RV_LOOP;
  return find_rv(c, r, p);
}

int64_t sched_attr_int(const sched_call *c, int i, int64_t dflt) {
  return c->n_attrs > i && c->attrs[i].kind == LOOM_TV_INT ? c->attrs[i].i
                                                           : dflt;
}

const char *sched_attr_str(const sched_call *c, int i, const char *dflt) {
  return c->n_attrs > i && c->attrs[i].kind == LOOM_TV_STR ? c->attrs[i].s
                                                           : dflt;
}

loom_status sched_input_int(sched_call *c, int i, int64_t *v, bool *is_none) {
  *is_none = false;
  if (i >= c->n_inputs)
    return sched_fail(c, "missing argument %d", i + 1);
  const loom_tval *t = &c->inputs[i];
  if (t->kind == LOOM_TV_NONE) {
    *is_none = true;
    return LOOM_OK;
  }
  if (t->kind == LOOM_TV_INT) {
    *v = t->i;
    return LOOM_OK;
  }
  const sched_rv *r = input_rv(c, i);
  if (r && r->kind == LOOM_RV_EXPR) {
    *v = r->value;
    return LOOM_OK;
  }
  return sched_fail(c, "argument %d must be an integer", i + 1);
}

/* ---- apply and record ------------------------------------------------------------- */

static loom_status grow(void **items, int *cap, int need, size_t size) {
  if (need <= *cap)
    return LOOM_OK;
  int n = *cap ? *cap : 16;
  while (n < need)
    n *= 2;
  void *p = realloc(*items, (size_t)n * size);
  if (!p)
    return LOOM_NOMEM;
  *items = p;
  *cap = n;
  return LOOM_OK;
}

static loom_status copy_tvals(loom_arena *a, const loom_tval *v, int n,
                              loom_tval **out) {
  *out = NULL;
  if (n == 0)
    return LOOM_OK;
  *out = loom_arena_alloc(a, (size_t)n * sizeof **out);
  if (!*out)
    return LOOM_NOMEM;
  for (int i = 0; i < n; i++)
    TRY(sched_tval_copy(a, &v[i], NULL, 0, &(*out)[i]));
  return LOOM_OK;
}

/* Records the applied call: its instruction joins the trace and its outputs
 * the RV table. Nothing changes in s unless all of it succeeds. */
static loom_status record(loom_sched *s, sched_call *c) {
  loom_arena *a = sched_arena(s);
  loom_inst *in = loom_arena_alloc(a, sizeof *in);
  if (!in)
    return LOOM_NOMEM;
  in->kind = c->kind;
  in->loc = c->loc;
  TRY(copy_tvals(a, c->inputs, c->n_inputs, &in->inputs));
  TRY(copy_tvals(a, c->attrs, c->n_attrs, &in->attrs));
  TRY(sched_tval_copy(a, &c->decision, NULL, 0, &in->decision));
  in->n_inputs = c->n_inputs;
  in->n_attrs = c->n_attrs;
  if (c->n_outs) {
    in->outputs = loom_arena_alloc(a, (size_t)c->n_outs * sizeof *in->outputs);
    if (!in->outputs)
      return LOOM_NOMEM;
  }
  in->n_outputs = c->n_outs;
  TRY(grow((void **)&s->rvs, &s->cap_rvs, s->n_rvs + c->n_outs,
           sizeof *s->rvs));
  TRY(grow((void **)&s->insts, &s->cap_insts, s->n_insts + 1,
           sizeof *s->insts));
  for (int i = 0; i < c->n_outs; i++) {
    in->outputs[i] = s->n_rvs;
    s->rvs[s->n_rvs++] = c->outs[i];
  }
  s->insts[s->n_insts++] = in;
  s->mod = c->mod;
  for (int i = 0; c->rename_from && i < s->n_rvs; i++)
    if (s->rvs[i].kind == LOOM_RV_BLOCK && s->rvs[i].func == c->rename_func &&
        !strcmp(s->rvs[i].block, c->rename_from))
      s->rvs[i].block = c->rename_to;
  return LOOM_OK;
}

bool sched_would_apply(sched_call *c, loom_inst_kind kind, const sched_rv *in,
                       int n_in, const loom_tval *attrs, int n_attrs) {
  loom_sched *s = c->s;
  loom_tval tv[8];
  if (n_in > 8 || grow((void **)&s->rvs, &s->cap_rvs, s->n_rvs + n_in,
                       sizeof *s->rvs) != LOOM_OK)
    return false;
  int base = s->n_rvs;
  for (int i = 0; i < n_in; i++) {
    s->rvs[base + i] = in[i];
    tv[i] = loom_tval_rv(base + i);
  }
  s->n_rvs += n_in;
  loom_diag d;
  loom_diag_init(&d);
  sched_call t = {.s = s, .kind = kind, .inputs = tv, .n_inputs = n_in,
                  .attrs = attrs, .n_attrs = n_attrs, .loc = c->loc, .d = &d,
                  .mod = c->mod};
  bool ok = sched_kinds[kind].apply(&t) == LOOM_OK;
  free(t.outs);
  loom_diag_free(&d);
  s->n_rvs = base;
  return ok;
}

/* Whether instructions of kind take a decision (the sampling ones). */
static bool takes_decision(loom_inst_kind kind) {
  sched_param ps[SCHED_MAX_PARAMS];
  int n = sched_parse_spec(sched_kinds[kind].spec, ps);
  for (int i = 0; i < n; i++)
    if (ps[i].type == 'd')
      return true;
  return false;
}

#ifdef LOOM_VERIFY_EACH
/* Debug and sanitizer builds verify every function a primitive rewrote, so
 * that a primitive breaking an IR invariant is caught at the call that
 * broke it rather than passes later (QBE's ssacheck). The release build
 * does not pay for it. A failure is the primitive's bug, not the user's. */
static loom_status verify_rewrite(sched_call *c) {
  const loom_module *old = c->s->mod, *m = c->mod;
  loom_status st = LOOM_OK;
  for (int i = 0; m != old && i < m->n_funcs && st == LOOM_OK; i++) {
    if (i < old->n_funcs && m->funcs[i] == old->funcs[i])
      continue;
    loom_diag vd;
    loom_diag_init(&vd);
    st = loom_ir_verify_func(m->funcs[i], &vd);
    if (st == LOOM_NOMEM)
      st = sched_nomem(c);
    if (st == LOOM_ERROR) {
      char where[300] = "";
      if (vd.loc.file && vd.loc.file[0] && vd.loc.line > 0)
        snprintf(where, sizeof where, " (near %s:%d)", vd.loc.file,
                 vd.loc.line);
      else if (vd.loc.line > 0)
        snprintf(where, sizeof where, " (near line %d)", vd.loc.line);
      st = loom_diag_error(c->d, c->loc, "internal error: after %s, the IR "
                                         "fails verification: %s%s",
                           sched_kinds[c->kind].method,
                           vd.msg ? vd.msg : "no reason given", where);
    }
    loom_diag_free(&vd);
  }
  return st;
}
#endif

loom_status sched_apply_inst(loom_sched *s, const loom_inst *in,
                             bool repairs_decision, const loom_sched_rv **outs,
                             int *n_outs, loom_diag *d) {
  loom_inst_kind kind = in->kind;
  if (kind < 0 || kind >= LOOM_INST_COUNT_)
    return loom_diag_error(d, in->loc, "unknown instruction kind %d",
                           (int)kind);
  sched_call c = {.s = s, .kind = kind, .inputs = in->inputs,
                  .n_inputs = in->n_inputs, .attrs = in->attrs,
                  .n_attrs = in->n_attrs, .decision = in->decision,
                  .repairs_decision = repairs_decision, .loc = in->loc,
                  .d = d, .mod = s->mod};
  /* A trace's decisions are indexed by instruction, so one can be attached
   * to an instruction that has nothing to decide; it would be kept and
   * printed back as if it meant something. */
  if (in->decision.kind != LOOM_TV_NONE && !takes_decision(kind))
    return sched_fail(&c, "this instruction takes no decision; only the "
                          "sample_* instructions have one");
  loom_status st = sched_kinds[kind].apply(&c);
#ifdef LOOM_VERIFY_EACH
  if (st == LOOM_OK)
    st = verify_rewrite(&c);
#endif
  if (st == LOOM_OK && record(s, &c) != LOOM_OK)
    st = sched_nomem(&c);
  if (st == LOOM_OK) {
    if (outs)
      *outs = s->insts[s->n_insts - 1]->outputs;
    if (n_outs)
      *n_outs = c.n_outs;
  }
  free(c.outs);
  return st;
}

loom_status loom_sched_apply(loom_sched *s, loom_inst_kind kind,
                             const loom_tval *inputs, int n_inputs,
                             const loom_tval *attrs, int n_attrs,
                             loom_tval decision, loom_loc loc,
                             const loom_sched_rv **outs, int *n_outs,
                             loom_diag *d) {
  loom_inst in = {.kind = kind, .inputs = (loom_tval *)inputs,
                  .n_inputs = n_inputs, .attrs = (loom_tval *)attrs,
                  .n_attrs = n_attrs, .decision = decision, .loc = loc};
  return sched_apply_inst(s, &in, false, outs, n_outs, d);
}

/* ---- convenience wrappers ------------------------------------------------------------- */

loom_status loom_sched_get_block(loom_sched *s, const char *name,
                                 const char *func_name, loom_sched_rv *out,
                                 loom_diag *d) {
  loom_tval attrs[2] = {loom_tval_str(name),
                        func_name ? loom_tval_str(func_name) : loom_tval_none()};
  const loom_sched_rv *o;
  loom_loc nowhere = {0};
  TRY(loom_sched_apply(s, LOOM_INST_GET_BLOCK, NULL, 0, attrs, 2,
                       loom_tval_none(), nowhere, &o, NULL, d));
  *out = o[0];
  return LOOM_OK;
}

loom_status loom_sched_get_loops(loom_sched *s, loom_sched_rv block,
                                 const loom_sched_rv **loops, int *n,
                                 loom_diag *d) {
  loom_tval in = loom_tval_rv(block);
  loom_loc nowhere = {0};
  return loom_sched_apply(s, LOOM_INST_GET_LOOPS, &in, 1, NULL, 0,
                          loom_tval_none(), nowhere, loops, n, d);
}

loom_status loom_sched_split(loom_sched *s, loom_sched_rv loop,
                             const loom_tval *factors, int n_factors,
                             bool preserve_unit_iters, bool disable_predication,
                             const loom_sched_rv **outs, loom_diag *d) {
  loom_tval in[65];
  loom_loc nowhere = {0};
  if (n_factors < 1 || n_factors > 64)
    return loom_diag_error(d, nowhere, "split: %d factors (limit is 64)",
                           n_factors);
  in[0] = loom_tval_rv(loop);
  memcpy(in + 1, factors, (size_t)n_factors * sizeof *in);
  loom_tval attrs[2] = {loom_tval_bool(preserve_unit_iters),
                        loom_tval_bool(disable_predication)};
  return loom_sched_apply(s, LOOM_INST_SPLIT, in, n_factors + 1, attrs, 2,
                          loom_tval_none(), nowhere, outs, NULL, d);
}

loom_status loom_sched_fuse(loom_sched *s, const loom_sched_rv *loops, int n,
                            bool preserve_unit_iters, loom_sched_rv *out,
                            loom_diag *d) {
  loom_tval in[64];
  loom_loc nowhere = {0};
  if (n < 1 || n > 64)
    return loom_diag_error(d, nowhere, "fuse: %d loops (limit is 64)", n);
  for (int i = 0; i < n; i++)
    in[i] = loom_tval_rv(loops[i]);
  loom_tval attr = loom_tval_int(preserve_unit_iters);
  const loom_sched_rv *o;
  TRY(loom_sched_apply(s, LOOM_INST_FUSE, in, n, &attr, 1, loom_tval_none(),
                       nowhere, &o, NULL, d));
  *out = o[0];
  return LOOM_OK;
}

loom_status loom_sched_reorder(loom_sched *s, const loom_sched_rv *loops,
                               int n, loom_diag *d) {
  loom_tval in[64];
  loom_loc nowhere = {0};
  if (n < 1 || n > 64)
    return loom_diag_error(d, nowhere, "reorder: %d loops (limit is 64)", n);
  for (int i = 0; i < n; i++)
    in[i] = loom_tval_rv(loops[i]);
  return loom_sched_apply(s, LOOM_INST_REORDER, in, n, NULL, 0,
                          loom_tval_none(), nowhere, NULL, NULL, d);
}

loom_status loom_sched_for_kind(loom_sched *s, loom_inst_kind kind,
                                loom_sched_rv loop, loom_diag *d) {
  loom_tval in = loom_tval_rv(loop);
  loom_loc nowhere = {0};
  if (kind != LOOM_INST_PARALLEL && kind != LOOM_INST_VECTORIZE &&
      kind != LOOM_INST_UNROLL)
    return loom_diag_error(d, nowhere, "not a loop-kind instruction");
  return loom_sched_apply(s, kind, &in, 1, NULL, 0, loom_tval_none(), nowhere,
                          NULL, NULL, d);
}

loom_status loom_sched_bind(loom_sched *s, loom_sched_rv loop,
                            const char *thread_axis, loom_diag *d) {
  loom_tval in = loom_tval_rv(loop), attr = loom_tval_str(thread_axis);
  loom_loc nowhere = {0};
  return loom_sched_apply(s, LOOM_INST_BIND, &in, 1, &attr, 1,
                          loom_tval_none(), nowhere, NULL, NULL, d);
}

loom_status loom_sched_sample_perfect_tile(loom_sched *s, loom_sched_rv loop,
                                           int n, int max_innermost_factor,
                                           const loom_sched_rv **outs,
                                           loom_diag *d) {
  loom_tval in = loom_tval_rv(loop);
  loom_tval attrs[2] = {loom_tval_int(n), loom_tval_int(max_innermost_factor)};
  loom_loc nowhere = {0};
  return loom_sched_apply(s, LOOM_INST_SAMPLE_PERFECT_TILE, &in, 1, attrs, 2,
                          loom_tval_none(), nowhere, outs, NULL, d);
}
