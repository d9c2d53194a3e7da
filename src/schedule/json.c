/* Reading TVM's JSON trace record: the mapping of
 * [[[kind, inputs, attrs, outputs], ...], [[inst_index, decision], ...]]
 * onto a trace, over the JSON values of loom_json_parse. */
#include "schedule/sched_impl.h"

#include <string.h>

/* ---- the trace record ------------------------------------------------------------ */

typedef struct names {
  const char **names;
  int *ids;
  int n, cap;
} names;

static int name_find(const names *nm, const char *s) {
  for (int i = nm->n - 1; i >= 0; i--)
    if (!strcmp(nm->names[i], s))
      return nm->ids[i];
  return -1;
}

static bool name_add(names *nm, const char *s, int id) {
  if (nm->n == nm->cap) {
    int cap = nm->cap ? 2 * nm->cap : 32;
    const char **a = realloc(nm->names, (size_t)cap * sizeof *a);
    if (!a)
      return false;
    nm->names = a;
    int *b = realloc(nm->ids, (size_t)cap * sizeof *b);
    if (!b)
      return false;
    nm->ids = b;
    nm->cap = cap;
  }
  nm->names[nm->n] = s;
  nm->ids[nm->n++] = id;
  return true;
}

typedef struct converter {
  loom_arena *a;
  names nm;
  loom_diag *d;
} converter;

static loom_status to_tval(converter *cv, const loom_json *v, bool is_input,
                           loom_tval *out) {
  memset(out, 0, sizeof *out);
  switch (v->kind) {
  case LOOM_JSON_NULL:
    return LOOM_OK;
  case LOOM_JSON_BOOL:
    *out = loom_tval_bool(v->i != 0);
    return LOOM_OK;
  case LOOM_JSON_INT:
    *out = loom_tval_int(v->i);
    return LOOM_OK;
  case LOOM_JSON_FLOAT:
    out->kind = LOOM_TV_FLOAT;
    out->f = v->f;
    return LOOM_OK;
  case LOOM_JSON_STR: {
    if (!is_input) {
      *out = loom_tval_str(v->s);
      return LOOM_OK;
    }
    size_t n = strlen(v->s);
    if (n >= 2 && v->s[0] == '"' && v->s[n - 1] == '"') {
      /* A string input is quoted twice: its text is itself a JSON string. */
      loom_json inner;
      loom_diag scratch;
      loom_diag_init(&scratch);
      loom_status st = loom_json_parse(cv->a, v->s, n, "", &inner, &scratch);
      loom_diag_free(&scratch);
      if (st != LOOM_OK || inner.kind != LOOM_JSON_STR)
        return loom_diag_error(cv->d, v->loc, "bad quoted string");
      *out = loom_tval_str(inner.s);
      return LOOM_OK;
    }
    if (!strcmp(v->s, "None"))
      return LOOM_OK;
    int id = name_find(&cv->nm, v->s);
    if (id < 0)
      return loom_diag_error(cv->d, v->loc, "undefined variable '%s'", v->s);
    *out = loom_tval_rv(id);
    return LOOM_OK;
  }
  case LOOM_JSON_LIST:
  case LOOM_JSON_DICT:
    out->kind = v->kind == LOOM_JSON_LIST ? LOOM_TV_LIST : LOOM_TV_DICT;
    out->n = v->n;
    out->items = v->n ? loom_arena_alloc(cv->a, (size_t)v->n * sizeof *out->items)
                      : NULL;
    if (v->n && !out->items)
      return LOOM_NOMEM;
    out->keys = v->kind == LOOM_JSON_DICT ? v->keys : NULL;
    for (int i = 0; i < v->n; i++)
      TRY(to_tval(cv, &v->items[i], is_input, &out->items[i]));
    return LOOM_OK;
  }
  return LOOM_OK;
}

static loom_status convert_inst(converter *cv, const loom_json *v, int *n_rvs,
                                loom_inst *in) {
  if (v->kind != LOOM_JSON_LIST || v->n != 4 || v->items[0].kind != LOOM_JSON_STR ||
      v->items[1].kind != LOOM_JSON_LIST || v->items[2].kind != LOOM_JSON_LIST ||
      v->items[3].kind != LOOM_JSON_LIST)
    return loom_diag_error(cv->d, v->loc, "an instruction is [kind, inputs, "
                                          "attrs, outputs]");
  int kind = loom_inst_kind_by_json(v->items[0].s);
  if (kind < 0)
    return loom_diag_error(cv->d, v->items[0].loc,
                           "unknown instruction kind '%s'", v->items[0].s);
  in->kind = kind;
  in->loc = v->loc;
  loom_tval list;
  TRY(to_tval(cv, &v->items[1], true, &list));
  in->inputs = list.items;
  in->n_inputs = list.n;
  TRY(to_tval(cv, &v->items[2], false, &list));
  in->attrs = list.items;
  in->n_attrs = list.n;
  const loom_json *outs = &v->items[3];
  in->n_outputs = outs->n;
  in->outputs = loom_arena_alloc(
      cv->a, (size_t)(outs->n ? outs->n : 1) * sizeof *in->outputs);
  if (!in->outputs)
    return LOOM_NOMEM;
  for (int i = 0; i < outs->n; i++) {
    const loom_json *o = &outs->items[i];
    if (o->kind != LOOM_JSON_STR)
      return loom_diag_error(cv->d, o->loc, "an output is a name string");
    if (!strcmp(o->s, "_")) {
      in->outputs[i] = -1;
      continue;
    }
    in->outputs[i] = (*n_rvs)++;
    if (!name_add(&cv->nm, o->s, in->outputs[i]))
      return LOOM_NOMEM;
  }
  return LOOM_OK;
}

loom_status loom_trace_read_json(const char *text, size_t len,
                                 const char *file, loom_arena *a,
                                 loom_trace *out, loom_diag *d) {
  loom_diag_set_source(d, text, len);
  loom_json top;
  TRY(loom_json_parse(a, text, len, file, &top, d));
  if (top.kind != LOOM_JSON_LIST || top.n != 2 || top.items[0].kind != LOOM_JSON_LIST ||
      top.items[1].kind != LOOM_JSON_LIST)
    return loom_diag_error(d, top.loc, "a trace is [instructions, decisions]");
  const loom_json *insts = &top.items[0], *decs = &top.items[1];
  converter cv = {a, {0}, d};
  loom_status st = LOOM_OK;
  loom_inst **list = loom_arena_alloc(
      a, (size_t)(insts->n ? insts->n : 1) * sizeof *list);
  int n_rvs = 0;
  if (!list)
    st = LOOM_NOMEM;
  for (int i = 0; st == LOOM_OK && i < insts->n; i++) {
    list[i] = loom_arena_alloc(a, sizeof **list);
    st = list[i] ? convert_inst(&cv, &insts->items[i], &n_rvs, list[i])
                 : LOOM_NOMEM;
  }
  for (int i = 0; st == LOOM_OK && i < decs->n; i++) {
    const loom_json *e = &decs->items[i];
    if (e->kind != LOOM_JSON_LIST || e->n != 2 || e->items[0].kind != LOOM_JSON_INT ||
        e->items[0].i < 0 || e->items[0].i >= insts->n) {
      st = loom_diag_error(d, e->loc, "a decision is [instruction index, "
                                      "value] with an index into the trace");
      break;
    }
    st = to_tval(&cv, &e->items[1], false, &list[e->items[0].i]->decision);
  }
  free(cv.nm.names);
  free(cv.nm.ids);
  if (st == LOOM_NOMEM && !d->has_error)
    loom_diag_error(d, (loom_loc){file, 0, 0}, "out of memory reading a trace");
  if (st == LOOM_OK)
    *out = (loom_trace){list, insts->n, n_rvs};
  return st;
}
