/* Traces: printing as a schedule script (TVM's Trace.as_python) and as TVM's
 * JSON record, replaying on a schedule, and dropping dead instructions. */
#include "schedule/sched_impl.h"

#include <math.h>
#include <string.h>

/* ---- names -------------------------------------------------------------------- */

/* Output names: a prefix letter and a number counting every output of the
 * trace in order, dropped ones included. */
typedef struct rv_names {
  char *prefix; /* per RV id */
  int *number;
  int n;
} rv_names;

static bool names_make(const loom_trace *t, rv_names *nm) {
  nm->n = t->n_rvs;
  nm->prefix = calloc((size_t)(t->n_rvs ? t->n_rvs : 1), 1);
  nm->number = calloc((size_t)(t->n_rvs ? t->n_rvs : 1), sizeof *nm->number);
  if (!nm->prefix || !nm->number)
    return false;
  int k = 0;
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *in = t->insts[i];
    char pre = sched_kinds[in->kind].out_kind;
    for (int j = 0; j < in->n_outputs; j++, k++) {
      int id = in->outputs[j];
      if (id >= 0 && id < t->n_rvs) {
        nm->prefix[id] = pre;
        nm->number[id] = k;
      }
    }
  }
  return true;
}

static void names_free(rv_names *nm) {
  free(nm->prefix);
  free(nm->number);
}

static void put_name(loom_buf *b, const rv_names *nm, int64_t id) {
  if (id < 0 || id >= nm->n || !nm->prefix[id])
    loom_buf_putc(b, '_');
  else
    loom_buf_printf(b, "%c%d", nm->prefix[id], nm->number[id]);
}

/* ---- scalars ------------------------------------------------------------------- */

/* The shortest decimal that reads back to the same double, as Python's repr
 * writes it (always with a '.' or an exponent). */
static void put_shortest(loom_buf *b, double x) {
  char buf[40];
  if (isnan(x)) {
    loom_buf_puts(b, "nan");
    return;
  }
  if (isinf(x)) {
    loom_buf_puts(b, x > 0 ? "inf" : "-inf");
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (strtod(buf, NULL) == x)
      break;
  }
  loom_buf_puts(b, buf);
  if (!strpbrk(buf, ".eEn"))
    loom_buf_puts(b, ".0");
}

static void put_repr17(loom_buf *b, double x) {
  char buf[40];
  snprintf(buf, sizeof buf, "%.17g", x);
  loom_buf_puts(b, buf);
  if (!strpbrk(buf, ".eEn"))
    loom_buf_puts(b, ".0");
}

static void put_quoted(loom_buf *b, const char *s) {
  loom_buf_putc(b, '"');
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      loom_buf_printf(b, "\\%c", ch);
    else if (ch == '\n')
      loom_buf_puts(b, "\\n");
    else if (ch == '\t')
      loom_buf_puts(b, "\\t");
    else if (ch == '\r')
      loom_buf_puts(b, "\\r");
    else if (ch < 0x20)
      loom_buf_printf(b, "\\u%04x", ch);
    else
      loom_buf_putc(b, (char)ch);
  }
  loom_buf_putc(b, '"');
}

/* ---- Python --------------------------------------------------------------------- */

static void put_py(loom_buf *b, const loom_tval *v, const rv_names *nm,
                   bool floats17) {
  switch (v->kind) {
  case LOOM_TV_NONE:
    loom_buf_puts(b, "None");
    break;
  case LOOM_TV_BOOL:
    loom_buf_puts(b, v->i ? "True" : "False");
    break;
  case LOOM_TV_INT:
    loom_buf_printf(b, "%lld", (long long)v->i);
    break;
  case LOOM_TV_FLOAT:
    if (floats17)
      put_repr17(b, v->f);
    else
      put_shortest(b, v->f);
    break;
  case LOOM_TV_STR:
    put_quoted(b, v->s);
    break;
  case LOOM_TV_RV:
    put_name(b, nm, v->i);
    break;
  case LOOM_TV_LIST:
  case LOOM_TV_DICT:
    loom_buf_putc(b, v->kind == LOOM_TV_LIST ? '[' : '{');
    for (int i = 0; i < v->n; i++) {
      if (i)
        loom_buf_puts(b, ", ");
      if (v->kind == LOOM_TV_DICT) {
        put_quoted(b, v->keys[i]);
        loom_buf_puts(b, ": ");
      }
      put_py(b, &v->items[i], nm, floats17);
    }
    loom_buf_putc(b, v->kind == LOOM_TV_LIST ? ']' : '}');
    break;
  }
}

static void print_py_inst(loom_buf *b, const loom_inst *in, const rv_names *nm,
                          loom_dialect dialect) {
  const sched_kind_info *k = &sched_kinds[in->kind];
  if (k->out_kind && (in->n_outputs > 0 || !k->is_list)) {
    for (int j = 0; j < in->n_outputs; j++) {
      if (j)
        loom_buf_puts(b, ", ");
      put_name(b, nm, in->outputs[j]);
    }
    if (k->is_list && in->n_outputs == 1)
      loom_buf_putc(b, ',');
    loom_buf_puts(b, " = ");
  }
  loom_buf_printf(b, "sch.%s(", loom_inst_kind_method(in->kind, dialect));
  sched_param ps[SCHED_MAX_PARAMS];
  int np = sched_parse_spec(k->spec, ps);
  int ii = 0, ai = 0;
  bool first = true;
  for (int i = 0; i < np; i++) {
    const sched_param *q = &ps[i];
    if (q->type == 'd') {
      if (in->decision.kind == LOOM_TV_NONE)
        continue;
      loom_buf_printf(b, "%s%s=", first ? "" : ", ", q->name);
      put_py(b, &in->decision, nm, false);
      first = false;
      continue;
    }
    if (q->is_varargs) {
      for (; ii < in->n_inputs; ii++, first = false) {
        loom_buf_puts(b, first ? "" : ", ");
        put_py(b, &in->inputs[ii], nm, false);
      }
      continue;
    }
    if (q->type == 'F') {
      loom_buf_printf(b, "%s%s=[", first ? "" : ", ", q->name);
      for (int j = 0; ii < in->n_inputs; ii++, j++) {
        loom_buf_puts(b, j ? ", " : "");
        put_py(b, &in->inputs[ii], nm, false);
      }
      loom_buf_putc(b, ']');
      first = false;
      continue;
    }
    const loom_tval *v = NULL;
    if (q->is_input && ii < in->n_inputs)
      v = &in->inputs[ii++];
    else if (!q->is_input && ai < in->n_attrs)
      v = &in->attrs[ai++];
    /* An empty list left at its default is not printed (TVM leaves out
     * cache_read's consumer_blocks=[]). */
    if (!v || (q->type == 's' && v->kind == LOOM_TV_NONE) ||
        (v->kind == LOOM_TV_LIST && v->n == 0 && q->dflt &&
         q->dflt_len == 2 && !memcmp(q->dflt, "[]", 2)))
      continue;
    loom_buf_printf(b, "%s%s=", first ? "" : ", ", q->name);
    first = false;
    if ((q->type == 'b' || q->type == 't') &&
        (v->kind == LOOM_TV_INT || v->kind == LOOM_TV_BOOL))
      loom_buf_puts(b, v->i ? "True" : "False");
    else if (q->type == 'M' && v->kind == LOOM_TV_STR)
      loom_buf_puts(b, v->s); /* a lambda, printed as written */
    else if (q->type == 'U') {
      /* Two attrs: the index, then 0 (read) or 1 (write). */
      const loom_tval *kind = ai < in->n_attrs ? &in->attrs[ai++] : NULL;
      loom_buf_printf(b, "(\"%s\", ", kind && kind->i ? "write" : "read");
      put_py(b, v, nm, false);
      loom_buf_putc(b, ')');
    }
    else
      put_py(b, v, nm, q->type == 'P');
  }
  loom_buf_puts(b, ")\n");
}

void loom_trace_print_py(const loom_trace *t, loom_dialect dialect,
                         loom_buf *out) {
  rv_names nm = {0};
  if (!names_make(t, &nm)) {
    out->has_failed = 1;
    names_free(&nm);
    return;
  }
  for (int i = 0; i < t->n_insts; i++)
    print_py_inst(out, t->insts[i], &nm, dialect);
  names_free(&nm);
}

/* ---- JSON ------------------------------------------------------------------------- */

/* Inputs quote strings twice (a string input is "\"text\"") so that they
 * stay apart from RV names; attributes hold plain strings. */
static void put_json(loom_buf *b, const loom_tval *v, const rv_names *nm,
                     bool is_input) {
  switch (v->kind) {
  case LOOM_TV_NONE:
    loom_buf_puts(b, is_input ? "\"None\"" : "null");
    break;
  case LOOM_TV_BOOL:
    loom_buf_puts(b, v->i ? "true" : "false");
    break;
  case LOOM_TV_INT:
    loom_buf_printf(b, "%lld", (long long)v->i);
    break;
  case LOOM_TV_FLOAT:
    put_shortest(b, v->f);
    break;
  case LOOM_TV_STR:
    if (is_input) {
      loom_buf buf;
      loom_buf_init(&buf);
      put_quoted(&buf, v->s);
      put_quoted(b, buf.data ? buf.data : "");
      if (buf.has_failed)
        b->has_failed = 1;
      loom_buf_free(&buf);
    } else
      put_quoted(b, v->s);
    break;
  case LOOM_TV_RV:
    loom_buf_putc(b, '"');
    put_name(b, nm, v->i);
    loom_buf_putc(b, '"');
    break;
  case LOOM_TV_LIST:
  case LOOM_TV_DICT:
    loom_buf_putc(b, v->kind == LOOM_TV_LIST ? '[' : '{');
    for (int i = 0; i < v->n; i++) {
      if (i)
        loom_buf_puts(b, ", ");
      if (v->kind == LOOM_TV_DICT) {
        put_quoted(b, v->keys[i]);
        loom_buf_puts(b, ": ");
      }
      put_json(b, &v->items[i], nm, is_input);
    }
    loom_buf_putc(b, v->kind == LOOM_TV_LIST ? ']' : '}');
    break;
  }
}

void loom_trace_print_json(const loom_trace *t, loom_dialect dialect,
                           loom_buf *out) {
  rv_names nm = {0};
  if (!names_make(t, &nm)) {
    out->has_failed = 1;
    names_free(&nm);
    return;
  }
  loom_buf_puts(out, "[[");
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *in = t->insts[i];
    const sched_kind_info *k = &sched_kinds[in->kind];
    loom_buf_puts(out, i ? ", [" : "[");
    put_quoted(out, dialect == LOOM_DIALECT_TIRX && k->json_alias
                        ? k->json_alias
                        : k->json);
    loom_buf_puts(out, ", [");
    for (int j = 0; j < in->n_inputs; j++) {
      loom_buf_puts(out, j ? ", " : "");
      put_json(out, &in->inputs[j], &nm, true);
    }
    loom_buf_puts(out, "], [");
    for (int j = 0; j < in->n_attrs; j++) {
      loom_buf_puts(out, j ? ", " : "");
      put_json(out, &in->attrs[j], &nm, false);
    }
    loom_buf_puts(out, "], [");
    for (int j = 0; j < in->n_outputs; j++) {
      loom_buf_puts(out, j ? ", \"" : "\"");
      put_name(out, &nm, in->outputs[j]);
      loom_buf_putc(out, '"');
    }
    loom_buf_puts(out, "]]");
  }
  loom_buf_puts(out, "], [");
  bool first = true;
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *in = t->insts[i];
    if (in->decision.kind == LOOM_TV_NONE)
      continue;
    loom_buf_printf(out, "%s[%d, ", first ? "" : ", ", i);
    put_json(out, &in->decision, &nm, false);
    loom_buf_putc(out, ']');
    first = false;
  }
  loom_buf_puts(out, "]]\n");
  names_free(&nm);
}

/* ---- replay ------------------------------------------------------------------------ */

loom_status loom_trace_apply(const loom_trace *t, loom_sched *s,
                             loom_replay_mode mode, loom_diag *d) {
  loom_loc nowhere = {0};
  loom_sched_rv *map = malloc((size_t)(t->n_rvs ? t->n_rvs : 1) * sizeof *map);
  loom_arena *scratch = loom_arena_new();
  loom_status st = LOOM_OK;
  if (!map || !scratch) {
    st = loom_diag_error(d, nowhere, "out of memory replaying a trace");
    goto out;
  }
  for (int i = 0; i < t->n_rvs; i++)
    map[i] = -1;
  for (int i = 0; i < t->n_insts && st == LOOM_OK; i++) {
    const loom_inst *in = t->insts[i];
    loom_tval *inputs = loom_arena_alloc(
        scratch, (size_t)(in->n_inputs ? in->n_inputs : 1) * sizeof *inputs);
    if (!inputs) {
      st = loom_diag_error(d, nowhere, "out of memory replaying a trace");
      break;
    }
    for (int j = 0; j < in->n_inputs && st == LOOM_OK; j++) {
      st = sched_tval_copy(scratch, &in->inputs[j], map, t->n_rvs, &inputs[j]);
      if (st == LOOM_OK && in->inputs[j].kind == LOOM_TV_RV && inputs[j].i < 0)
        st = loom_diag_error(d, in->loc, "%s: argument %d is a variable that "
                                         "no earlier instruction defines",
                             sched_kinds[in->kind].method, j + 1);
    }
    if (st != LOOM_OK)
      break;
    const loom_sched_rv *outs;
    int n_outs;
    loom_inst call = *in;
    call.inputs = inputs;
    if (mode == LOOM_REPLAY_RESAMPLE)
      call.decision = loom_tval_none();
    st = sched_apply_inst(s, &call, mode == LOOM_REPLAY_REPAIR, &outs, &n_outs,
                          d);
    if (st != LOOM_OK)
      break;
    if (n_outs != in->n_outputs) {
      st = loom_diag_error(d, in->loc, "%s gives %d outputs here, but the "
                                       "trace names %d",
                           sched_kinds[in->kind].method, n_outs,
                           in->n_outputs);
      break;
    }
    loom_inst *rec = s->insts[s->n_insts - 1];
    for (int j = 0; j < n_outs; j++) {
      int old = in->outputs[j];
      if (old >= 0 && old < t->n_rvs)
        map[old] = outs[j];
      else
        rec->outputs[j] = -1;
    }
  }
out:
  free(map);
  loom_arena_free(scratch);
  return st;
}

/* ---- dead code ----------------------------------------------------------------------- */

static void mark_used(const loom_tval *v, bool *used, int n) {
  if (v->kind == LOOM_TV_RV && v->i >= 0 && v->i < n)
    used[v->i] = true;
  if (v->kind == LOOM_TV_LIST || v->kind == LOOM_TV_DICT)
    for (int i = 0; i < v->n; i++)
      mark_used(&v->items[i], used, n);
}

loom_status loom_trace_simplify(const loom_trace *t, loom_arena *a,
                                loom_trace *out) {
  bool *used = calloc((size_t)(t->n_rvs ? t->n_rvs : 1), sizeof *used);
  bool *keep = calloc((size_t)(t->n_insts ? t->n_insts : 1), sizeof *keep);
  loom_inst **insts =
      loom_arena_alloc(a, (size_t)(t->n_insts ? t->n_insts : 1) * sizeof *insts);
  if (!used || !keep || !insts) {
    free(used);
    free(keep);
    return LOOM_NOMEM;
  }
  for (int i = t->n_insts - 1; i >= 0; i--) {
    const loom_inst *in = t->insts[i];
    bool live = !sched_kinds[in->kind].is_pure;
    for (int j = 0; j < in->n_outputs && !live; j++)
      live = in->outputs[j] >= 0 && in->outputs[j] < t->n_rvs &&
             used[in->outputs[j]];
    keep[i] = live;
    if (live)
      for (int j = 0; j < in->n_inputs; j++)
        mark_used(&in->inputs[j], used, t->n_rvs);
  }
  int k = 0;
  for (int i = 0; i < t->n_insts; i++)
    if (keep[i])
      insts[k++] = (loom_inst *)t->insts[i];
  free(used);
  free(keep);
  *out = (loom_trace){insts, k, t->n_rvs};
  return LOOM_OK;
}
