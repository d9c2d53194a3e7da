/* Schedule scripts: the Python subset traces print as (`l1, l2 = sch.split(
 * loop=l0, factors=[None, 16])`), run statement by statement on a schedule.
 * Arguments are matched against the instruction table's signatures, so a
 * new instruction needs no change here. */
#include "schedule/index_map.h"
#include "schedule/sched_impl.h"
#include "script/ast.h"

#include <string.h>

typedef struct env {
  const char **names;
  loom_tval *vals;
  int n, cap;
} env;

typedef struct reader {
  loom_sched *s;
  loom_arena *a; /* values read from the script */
  env e;
  loom_diag *d;
} reader;

static loom_status nomem(reader *r, loom_loc loc) {
  loom_diag_error(r->d, loc, "out of memory reading the schedule script");
  return LOOM_NOMEM;
}

static loom_status bind(reader *r, const char *name, loom_tval v, loom_loc loc) {
  for (int i = 0; i < r->e.n; i++)
    if (!strcmp(r->e.names[i], name)) {
      r->e.vals[i] = v;
      return LOOM_OK;
    }
  if (r->e.n == r->e.cap) {
    int cap = r->e.cap ? 2 * r->e.cap : 32;
    const char **nn = realloc(r->e.names, (size_t)cap * sizeof *nn);
    if (!nn)
      return nomem(r, loc);
    r->e.names = nn;
    loom_tval *nv = realloc(r->e.vals, (size_t)cap * sizeof *nv);
    if (!nv)
      return nomem(r, loc);
    r->e.vals = nv;
    r->e.cap = cap;
  }
  r->e.names[r->e.n] = name;
  r->e.vals[r->e.n++] = v;
  return LOOM_OK;
}

static const loom_tval *lookup(reader *r, const char *name) {
  for (int i = r->e.n - 1; i >= 0; i--)
    if (!strcmp(r->e.names[i], name))
      return &r->e.vals[i];
  return NULL;
}

/* An output of an earlier step, named as its trace prints it: b<k>, l<k>
 * or v<k> is random variable k, when it is of that kind. A script run on a
 * schedule that has a trace already (a binding driving a schedule a line at
 * a time, or the rest of a printed trace) can name what came before. */
static bool trace_name(reader *r, const char *name, loom_tval *out) {
  static const char prefix[] = {[LOOM_RV_BLOCK] = 'b', [LOOM_RV_LOOP] = 'l',
                                [LOOM_RV_EXPR] = 'v'};
  if (!name[0] || !name[1] || (name[1] == '0' && name[2]))
    return false;
  int64_t k = 0;
  for (const char *p = name + 1; *p; p++) {
    if (*p < '0' || *p > '9' || k > INT32_MAX / 10)
      return false;
    k = k * 10 + (*p - '0');
  }
  if (k >= r->s->n_rvs || prefix[r->s->rvs[k].kind] != name[0])
    return false;
  *out = loom_tval_rv((loom_sched_rv)k);
  return true;
}

/* ---- values ------------------------------------------------------------------- */

static loom_status eval(reader *r, const py_expr *x, loom_tval *out);

static loom_status eval_seq(reader *r, py_expr *const *items, int n,
                            loom_tval *out) {
  out->kind = LOOM_TV_LIST;
  out->n = n;
  out->items = n ? loom_arena_alloc(r->a, (size_t)n * sizeof *out->items) : NULL;
  if (n && !out->items)
    return nomem(r, items[0]->loc);
  for (int i = 0; i < n; i++)
    TRY(eval(r, items[i], &out->items[i]));
  return LOOM_OK;
}

static loom_status eval(reader *r, const py_expr *x, loom_tval *out) {
  memset(out, 0, sizeof *out);
  switch (x->kind) {
  case PY_NAME: {
    const loom_tval *v = lookup(r, x->u.name);
    if (v) {
      *out = *v;
      return LOOM_OK;
    }
    if (trace_name(r, x->u.name, out))
      return LOOM_OK;
    return loom_diag_error(r->d, x->loc, "undefined variable '%s'", x->u.name);
  }
  case PY_INT:
    if (x->u.num.is_big)
      return loom_diag_error(r->d, x->loc, "integer too large");
    *out = loom_tval_int(x->u.num.int_value);
    return LOOM_OK;
  case PY_FLOAT:
    out->kind = LOOM_TV_FLOAT;
    out->f = x->u.float_value;
    return LOOM_OK;
  case PY_STR:
    *out = loom_tval_str(x->u.str);
    return LOOM_OK;
  case PY_TRUE:
  case PY_FALSE:
    *out = loom_tval_bool(x->kind == PY_TRUE);
    return LOOM_OK;
  case PY_NONE:
    return LOOM_OK;
  case PY_LIST:
  case PY_TUPLE:
    return eval_seq(r, x->u.seq.items, x->u.seq.n_items, out);
  case PY_DICT: {
    int n = x->u.dict.n_items;
    out->kind = LOOM_TV_DICT;
    out->n = n;
    out->items = loom_arena_alloc(r->a, (size_t)(n ? n : 1) * sizeof *out->items);
    out->keys = loom_arena_alloc(r->a, (size_t)(n ? n : 1) * sizeof *out->keys);
    if (!out->items || !out->keys)
      return nomem(r, x->loc);
    for (int i = 0; i < n; i++) {
      const py_expr *k = x->u.dict.keys[i];
      if (!k || k->kind != PY_STR)
        return loom_diag_error(r->d, k ? k->loc : x->loc,
                               "dictionary keys must be strings");
      out->keys[i] = k->u.str;
      TRY(eval(r, x->u.dict.values[i], &out->items[i]));
    }
    return LOOM_OK;
  }
  case PY_LAMBDA: {
    /* An index map: kept as its canonical text. */
    const char *why;
    const char *text = sched_lambda_text(r->a, x, &why);
    if (!text)
      return why ? loom_diag_error(r->d, x->loc, "%s", why) : nomem(r, x->loc);
    *out = loom_tval_str(text);
    return LOOM_OK;
  }
  case PY_UNARY:
    if (x->u.unary.op == PY_OP_NEG || x->u.unary.op == PY_OP_POS) {
      TRY(eval(r, x->u.unary.a, out));
      bool neg = x->u.unary.op == PY_OP_NEG;
      if (out->kind == LOOM_TV_INT && out->i != INT64_MIN) {
        out->i = neg ? -out->i : out->i;
        return LOOM_OK;
      }
      if (out->kind == LOOM_TV_FLOAT) {
        out->f = neg ? -out->f : out->f;
        return LOOM_OK;
      }
    }
    return loom_diag_error(r->d, x->loc, "expected a number after the sign");
  default:
    return loom_diag_error(r->d, x->loc,
                           "unsupported expression in a schedule script "
                           "(expected a variable, a number, a string, None, "
                           "True, False, a list or a dict)");
  }
}

/* ---- arguments ------------------------------------------------------------------ */

typedef struct args {
  int kind;
  loom_tval inputs[130];
  int n_inputs;
  loom_tval attrs[SCHED_MAX_PARAMS];
  int n_attrs;
  loom_tval decision;
} args;

static const char *rv_kind_name(loom_rv_kind k) {
  return k == LOOM_RV_BLOCK ? "a block" : k == LOOM_RV_LOOP ? "a loop" : "a value";
}

static const char *tval_kind_name(reader *r, const loom_tval *v) {
  switch (v->kind) {
  case LOOM_TV_NONE: return "None";
  case LOOM_TV_BOOL: return "a bool";
  case LOOM_TV_INT: return "an integer";
  case LOOM_TV_FLOAT: return "a float";
  case LOOM_TV_STR: return "a string";
  case LOOM_TV_RV: return rv_kind_name(loom_sched_rv_kind(r->s, (int)v->i));
  case LOOM_TV_LIST: return "a list";
  case LOOM_TV_DICT: return "a dict";
  }
  return "?";
}

static bool is_rv(reader *r, const loom_tval *v, loom_rv_kind k) {
  return v->kind == LOOM_TV_RV && loom_sched_rv_kind(r->s, (int)v->i) == k;
}

static loom_status push_input(reader *r, args *g, loom_tval v, loom_loc loc) {
  if (g->n_inputs >= (int)(sizeof g->inputs / sizeof *g->inputs))
    return loom_diag_error(r->d, loc, "too many arguments (limit is %d)",
                           (int)(sizeof g->inputs / sizeof *g->inputs));
  g->inputs[g->n_inputs++] = v;
  return LOOM_OK;
}

static loom_status bad_arg(reader *r, const sched_param *q, const loom_tval *v,
                           const char *want, loom_loc loc) {
  return loom_diag_error(r->d, loc, "argument '%s' must be %s, not %s",
                         q->name, want, tval_kind_name(r, v));
}

/* A buffer named by a string where an index into the block's reads or
 * writes is asked for, as TVM's Python methods allow
 * (`sch.cache_read(b, "A", "shared")`, `sch.transform_layout(b, "C", ...)`):
 * looked up among the reads (which 'r'), the writes ('w'), or both ('a':
 * a buffer both read and written counts as written, as in TVM). */
static loom_status buffer_by_name(reader *r, const args *g, const char *name, char which,
                                  int64_t *index, bool *is_write, loom_loc loc) {
  const loom_block *b = NULL;
  for (int i = g->n_inputs - 1; i >= 0 && !b; i--)
    if (is_rv(r, &g->inputs[i], LOOM_RV_BLOCK))
      b = loom_sched_rv_block(r->s, (loom_sched_rv)g->inputs[i].i);
  if (!b)
    return loom_diag_error(r->d, loc, "buffer '%s' is given by name, but there is no block "
                           "to find it in", name);
  for (int w = which == 'r' ? 0 : 1; w >= (which == 'w' ? 1 : 0); w--) {
    const loom_buffer_region *rs = w ? b->writes : b->reads;
    int n = w ? b->n_writes : b->n_reads;
    for (int i = 0; i < n; i++)
      if (!strcmp(rs[i].buffer->name, name)) {
        *index = i;
        *is_write = w;
        return LOOM_OK;
      }
  }
  return loom_diag_error(r->d, loc, "block '%s' %s no buffer named '%s'", b->name,
                         which == 'r' ? "reads" : which == 'w' ? "writes" : "accesses", name);
}

/* Checks one argument against its parameter and stores it. */
static loom_status take(reader *r, args *g, const sched_param *q,
                        const loom_tval *v, loom_loc loc) {
  switch (q->type) {
  case 'L':
  case 'B':
  case 'R': {
    bool ok = q->type == 'L'   ? is_rv(r, v, LOOM_RV_LOOP)
              : q->type == 'B' ? is_rv(r, v, LOOM_RV_BLOCK)
                               : is_rv(r, v, LOOM_RV_LOOP) ||
                                     is_rv(r, v, LOOM_RV_BLOCK);
    if (!ok)
      return bad_arg(r, q, v, q->type == 'L'   ? "a loop"
                              : q->type == 'B' ? "a block"
                                               : "a block or a loop",
                     loc);
    return push_input(r, g, *v, loc);
  }
  case 'F':
    if (v->kind != LOOM_TV_LIST)
      return bad_arg(r, q, v, "a list of factors", loc);
    for (int i = 0; i < v->n; i++) {
      const loom_tval *f = &v->items[i];
      if (f->kind != LOOM_TV_INT && f->kind != LOOM_TV_NONE &&
          !is_rv(r, f, LOOM_RV_EXPR))
        return loom_diag_error(r->d, loc, "factor %d must be an integer, "
                                          "None or a sampled value, not %s",
                               i, tval_kind_name(r, f));
      TRY(push_input(r, g, *f, loc));
    }
    return LOOM_OK;
  case 'G': {
    bool ok = is_rv(r, v, LOOM_RV_LOOP) || is_rv(r, v, LOOM_RV_BLOCK);
    if (v->kind == LOOM_TV_LIST) {
      ok = v->n > 0;
      for (int i = 0; i < v->n; i++)
        ok &= is_rv(r, &v->items[i], LOOM_RV_BLOCK);
    }
    if (!ok)
      return bad_arg(r, q, v, "a loop, a block or a list of blocks", loc);
    return push_input(r, g, *v, loc);
  }
  case 'V':
    if (v->kind == LOOM_TV_RV && !is_rv(r, v, LOOM_RV_EXPR))
      return bad_arg(r, q, v, "a value", loc);
    return push_input(r, g, *v, loc);
  case 's':
    if (v->kind != LOOM_TV_STR && v->kind != LOOM_TV_NONE)
      return bad_arg(r, q, v, "a string", loc);
    break;
  case 'i': {
    char which = !strcmp(q->name, "read_buffer_index")    ? 'r'
                 : !strcmp(q->name, "write_buffer_index") ? 'w'
                 : !strcmp(q->name, "buffer_index") && g->kind != LOOM_INST_ANNOTATE_BUFFER_ACCESS
                     ? 'w'
                     : 0;
    if (which && v->kind == LOOM_TV_STR) {
      int64_t index;
      bool is_write;
      TRY(buffer_by_name(r, g, v->s, which, &index, &is_write, loc));
      g->attrs[g->n_attrs++] = loom_tval_int(index);
      return LOOM_OK;
    }
    if (v->kind != LOOM_TV_INT)
      return bad_arg(r, q, v, which ? "an integer or a buffer's name" : "an integer", loc);
    break;
  }
  case 'b':
  case 't':
    if (v->kind != LOOM_TV_BOOL && v->kind != LOOM_TV_INT)
      return bad_arg(r, q, v, "True or False", loc);
    g->attrs[g->n_attrs++] = q->type == 'b' ? loom_tval_bool(v->i != 0)
                                            : loom_tval_int(v->i != 0);
    return LOOM_OK;
  case 'I':
  case 'P':
    if (v->kind != LOOM_TV_LIST)
      return bad_arg(r, q, v, "a list", loc);
    for (int i = 0; i < v->n; i++) {
      loom_tval_kind k = v->items[i].kind;
      if (k != LOOM_TV_INT && (q->type == 'I' || k != LOOM_TV_FLOAT))
        return loom_diag_error(r->d, loc, "item %d of '%s' must be %s", i,
                               q->name, q->type == 'I' ? "an integer"
                                                       : "a number");
      if (q->type == 'P' && k == LOOM_TV_INT) {
        double f = (double)v->items[i].i;
        v->items[i].kind = LOOM_TV_FLOAT;
        v->items[i].f = f;
      }
    }
    break;
  case 'M':
    if (v->kind != LOOM_TV_STR && v->kind != LOOM_TV_NONE)
      return bad_arg(r, q, v, "a lambda", loc);
    break;
  case 'U': {
    /* ("read" | "write", index), recorded as TVM does: the index, then 0
     * for read or 1 for write; or the buffer's name. */
    if (v->kind == LOOM_TV_STR) {
      int64_t index;
      bool is_write;
      TRY(buffer_by_name(r, g, v->s, 'a', &index, &is_write, loc));
      g->attrs[g->n_attrs++] = loom_tval_int(index);
      g->attrs[g->n_attrs++] = loom_tval_int(is_write);
      return LOOM_OK;
    }
    bool ok = v->kind == LOOM_TV_LIST && v->n == 2 &&
              v->items[0].kind == LOOM_TV_STR &&
              v->items[1].kind == LOOM_TV_INT &&
              (!strcmp(v->items[0].s, "read") ||
               !strcmp(v->items[0].s, "write"));
    if (!ok)
      return bad_arg(r, q, v, "(\"read\" or \"write\", index) or a buffer's name", loc);
    g->attrs[g->n_attrs++] = loom_tval_int(v->items[1].i);
    g->attrs[g->n_attrs++] = loom_tval_int(!strcmp(v->items[0].s, "write"));
    return LOOM_OK;
  }
  case 'd':
    g->decision = *v;
    return LOOM_OK;
  default:
    return loom_diag_error(r->d, loc, "bad parameter type '%c'", q->type);
  }
  g->attrs[g->n_attrs++] = *v;
  return LOOM_OK;
}

static loom_status default_value(reader *r, const sched_param *q,
                                 loom_tval *v, loom_loc loc) {
  char buf[64];
  size_t n = q->dflt_len < sizeof buf - 1 ? q->dflt_len : sizeof buf - 1;
  memcpy(buf, q->dflt, n);
  buf[n] = 0;
  if (!strcmp(buf, "None"))
    *v = loom_tval_none();
  else if (!strcmp(buf, "True") || !strcmp(buf, "False"))
    *v = loom_tval_bool(buf[0] == 'T');
  else if (!strcmp(buf, "[]"))
    *v = (loom_tval){.kind = LOOM_TV_LIST};
  else if ((buf[0] >= '0' && buf[0] <= '9') || buf[0] == '-')
    *v = loom_tval_int(strtoll(buf, NULL, 10));
  else {
    char *s = loom_arena_strdup(r->a, buf);
    if (!s)
      return nomem(r, loc);
    *v = loom_tval_str(s);
  }
  return LOOM_OK;
}

static loom_status match_args(reader *r, int kind, const py_expr *call,
                              args *g) {
  sched_param ps[SCHED_MAX_PARAMS];
  int np = sched_parse_spec(sched_kinds[kind].spec, ps);
  const py_expr *given[SCHED_MAX_PARAMS] = {0};
  loom_loc given_loc[SCHED_MAX_PARAMS];
  const char *method = call->u.call.func->u.attr.name;
  int pi = 0, varargs = -1;
  for (int i = 0; i < np; i++)
    if (ps[i].is_varargs)
      varargs = i;
  for (int i = 0; i < call->u.call.n_args; i++) {
    const py_expr *x = call->u.call.args[i];
    if (varargs >= 0 && pi >= varargs)
      break;
    if (pi >= np || ps[pi].type == 'd')
      return loom_diag_error(r->d, x->loc, "too many arguments to %s", method);
    given[pi] = x;
    given_loc[pi++] = x->loc;
  }
  for (int i = 0; i < call->u.call.n_kwargs; i++) {
    const py_keyword *kw = &call->u.call.kwargs[i];
    int at = -1;
    for (int j = 0; j < np && kw->name; j++)
      if (!strcmp(ps[j].name, kw->name) && !ps[j].is_varargs)
        at = j;
    if (at < 0)
      return loom_diag_error(r->d, kw->loc, "%s has no parameter '%s'", method,
                             kw->name ? kw->name : "**");
    if (given[at])
      return loom_diag_error(r->d, kw->loc, "argument '%s' given twice",
                             kw->name);
    given[at] = kw->value;
    given_loc[at] = kw->loc;
  }
  for (int i = 0; i < np; i++) {
    const sched_param *q = &ps[i];
    loom_tval v;
    if (q->is_varargs) {
      int first = i;
      for (int j = 0; j < call->u.call.n_args; j++) {
        if (j < first)
          continue;
        const py_expr *x = call->u.call.args[j];
        TRY(eval(r, x, &v));
        if (v.kind == LOOM_TV_LIST) {
          for (int k = 0; k < v.n; k++)
            TRY(take(r, g, q, &v.items[k], x->loc));
        } else
          TRY(take(r, g, q, &v, x->loc));
      }
      if (g->n_inputs == 0)
        return loom_diag_error(r->d, call->loc, "%s needs at least one %s",
                               method, q->type == 'L' ? "loop" : "argument");
      continue;
    }
    if (given[i])
      TRY(eval(r, given[i], &v));
    else if (q->dflt)
      TRY(default_value(r, q, &v, call->loc));
    else
      return loom_diag_error(r->d, call->loc, "%s: missing argument '%s'",
                             method, q->name);
    TRY(take(r, g, q, &v, given[i] ? given_loc[i] : call->loc));
  }
  return LOOM_OK;
}

/* ---- statements ----------------------------------------------------------------- */

static loom_status run_call(reader *r, const py_expr *target,
                            const py_expr *call) {
  const py_expr *f = call->u.call.func;
  if (f->kind != PY_ATTRIBUTE || f->u.attr.value->kind != PY_NAME)
    return loom_diag_error(r->d, call->loc,
                           "expected a call of a schedule method, sch.NAME(...)");
  int kind = loom_inst_kind_by_method(f->u.attr.name);
  if (kind < 0)
    return loom_diag_error(r->d, f->u.attr.name_loc,
                           "unknown schedule method '%s'", f->u.attr.name);
  args *g = calloc(1, sizeof *g);
  if (!g)
    return nomem(r, call->loc);
  g->kind = kind;
  loom_status st = match_args(r, kind, call, g);
  const loom_sched_rv *outs = NULL;
  int n_outs = 0;
  if (st == LOOM_OK)
    st = loom_sched_apply(r->s, kind, g->inputs, g->n_inputs, g->attrs,
                          g->n_attrs, g->decision, call->loc, &outs, &n_outs,
                          r->d);
  free(g);
  if (st != LOOM_OK || !target)
    return st;
  loom_inst *rec = r->s->insts[r->s->n_insts - 1];
  if (target->kind == PY_NAME) {
    if (!sched_kinds[kind].is_list) {
      if (n_outs != 1)
        return loom_diag_error(r->d, target->loc, "%s gives no value to "
                                                  "assign",
                               f->u.attr.name);
      if (!strcmp(target->u.name, "_")) {
        rec->outputs[0] = -1;
        return LOOM_OK;
      }
      return bind(r, target->u.name, loom_tval_rv(outs[0]), target->loc);
    }
    loom_tval list = {.kind = LOOM_TV_LIST, .n = n_outs};
    list.items = loom_arena_alloc(r->a, (size_t)(n_outs ? n_outs : 1) *
                                            sizeof *list.items);
    if (!list.items)
      return nomem(r, target->loc);
    for (int i = 0; i < n_outs; i++)
      list.items[i] = loom_tval_rv(outs[i]);
    return bind(r, target->u.name, list, target->loc);
  }
  if (target->kind != PY_TUPLE && target->kind != PY_LIST)
    return loom_diag_error(r->d, target->loc,
                           "assign to a name or a tuple of names");
  int n = target->u.seq.n_items;
  if (n != n_outs)
    return loom_diag_error(r->d, target->loc,
                           "%s gives %d output%s here, but %d name%s given",
                           f->u.attr.name, n_outs, n_outs == 1 ? "" : "s", n,
                           n == 1 ? " is" : "s are");
  for (int i = 0; i < n; i++) {
    const py_expr *t = target->u.seq.items[i];
    if (t->kind != PY_NAME)
      return loom_diag_error(r->d, t->loc, "expected a name");
    if (!strcmp(t->u.name, "_"))
      rec->outputs[i] = -1;
    else
      TRY(bind(r, t->u.name, loom_tval_rv(outs[i]), t->loc));
  }
  return LOOM_OK;
}

/* TVM's own lines around a schedule, pasted with it: the schedule made
 * (`sch = tvm.tir.Schedule(MyModule)`), the module taken out
 * (`mod = sch.mod`) or shown (`sch.mod.show()`, `print(sch.trace)`). The
 * schedule is the one the script runs on. */
static bool is_tvm_frame(const py_stmt *st) {
  static const char *const makers[] = {"tvm.tir.Schedule", "tir.Schedule", "tvm.s_tir.Schedule",
                                       "s_tir.Schedule", "Schedule"};
  const py_expr *v = st->kind == PY_S_ASSIGN ? st->u.assign.value
                     : st->kind == PY_S_EXPR ? st->u.expr : NULL;
  if (!v)
    return false;
  if (v->kind == PY_SUBSCRIPT)
    v = v->u.sub.value;
  if (v->kind == PY_CALL) {
    for (size_t i = 0; i < sizeof makers / sizeof *makers; i++)
      if (py_is_dotted(v->u.call.func, makers[i]))
        return st->kind == PY_S_ASSIGN;
    if (py_is_dotted(v->u.call.func, "print"))
      return true;
    v = v->u.call.func;
    if (v->kind == PY_ATTRIBUTE)
      v = v->u.attr.value; /* sch.mod.show() */
  }
  return py_is_dotted(v, "sch.mod") || py_is_dotted(v, "sch.trace");
}

static loom_status run_stmt(reader *r, const py_stmt *st) {
  if (is_tvm_frame(st))
    return LOOM_OK;
  switch (st->kind) {
  case PY_S_PASS:
  case PY_S_IMPORT:
    return LOOM_OK;
  case PY_S_EXPR:
    if (st->u.expr->kind == PY_CALL)
      return run_call(r, NULL, st->u.expr);
    break;
  case PY_S_ASSIGN: {
    const py_expr *v = st->u.assign.value;
    if (v->kind == PY_CALL)
      return run_call(r, st->u.assign.target, v);
    if (st->u.assign.target->kind != PY_NAME)
      return loom_diag_error(r->d, st->u.assign.target->loc,
                             "a value can only be assigned to one name");
    loom_tval val;
    TRY(eval(r, v, &val));
    return bind(r, st->u.assign.target->u.name, val, st->loc);
  }
  default:
    break;
  }
  return loom_diag_error(r->d, st->loc,
                         "a schedule script holds only `x = sch.method(...)` "
                         "calls and `name = value` assignments");
}

loom_status loom_sched_run_script(loom_sched *s, const char *text, size_t len,
                                  const char *file, loom_diag *d) {
  loom_arena *a = loom_arena_new();
  loom_loc nowhere = {file, 0, 0};
  if (!a)
    return loom_diag_error(d, nowhere, "out of memory");
  loom_diag_set_source(d, text, len);
  py_module *m = NULL;
  loom_status st = py_parse(text, len, file, a, &m, d);
  reader r = {.s = s, .a = sched_arena(s), .d = d};
  for (int i = 0; st == LOOM_OK && i < m->body.n_stmts; i++)
    st = run_stmt(&r, m->body.stmts[i]);
  free(r.e.names);
  free(r.e.vals);
  loom_arena_free(a);
  return st;
}
