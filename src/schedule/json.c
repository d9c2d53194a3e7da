/* Reading TVM's JSON trace record: a small JSON reader that keeps the
 * line:col of every value for diagnostics, then the mapping of
 * [[[kind, inputs, attrs, outputs], ...], [[inst_index, decision], ...]]
 * onto a trace. Nesting is bounded so that no input can exhaust the stack. */
#include "schedule/sched_impl.h"

#include <errno.h>
#include <string.h>

#define MAX_JSON_DEPTH 64

typedef enum { J_NULL, J_BOOL, J_INT, J_FLOAT, J_STR, J_LIST, J_DICT } jkind;

typedef struct jv {
  jkind kind;
  int64_t i;
  double f;
  const char *s;
  struct jv *items;
  const char **keys;
  int n;
  loom_loc loc;
} jv;

typedef struct jreader {
  const char *p, *end, *line_start;
  int line;
  const char *file;
  loom_arena *a;
  loom_diag *d;
} jreader;

static loom_loc here(const jreader *r) {
  return (loom_loc){r->file, r->line, (int)(r->p - r->line_start) + 1};
}

static void skip_ws(jreader *r) {
  while (r->p < r->end && strchr(" \t\r\n", *r->p)) {
    if (*r->p == '\n') {
      r->line++;
      r->line_start = r->p + 1;
    }
    r->p++;
  }
}

static loom_status jerr(jreader *r, const char *what) {
  return loom_diag_error(r->d, here(r), "%s", what);
}

static void put_utf8(char *out, size_t *n, unsigned cp) {
  if (cp < 0x80)
    out[(*n)++] = (char)cp;
  else if (cp < 0x800) {
    out[(*n)++] = (char)(0xC0 | (cp >> 6));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*n)++] = (char)(0xE0 | (cp >> 12));
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  }
}

/* Decodes a JSON string starting at s[0] == '"' within [s, end); sets *next
 * past the closing quote. NULL with *bad set on a malformed string. */
static char *decode_string(loom_arena *a, const char *s, const char *end,
                           const char **next, const char **bad) {
  const char *p = s + 1;
  size_t cap = 0;
  while (p + cap < end && p[cap] != '"')
    cap += p[cap] == '\\' ? 2 : 1;
  char *out = loom_arena_alloc(a, cap * 3 + 1);
  if (!out) {
    *bad = "out of memory";
    return NULL;
  }
  size_t n = 0;
  while (p < end && *p != '"') {
    unsigned char ch = (unsigned char)*p;
    if (ch < 0x20) {
      *bad = "control character in a string";
      return NULL;
    }
    if (ch != '\\') {
      out[n++] = (char)ch;
      p++;
      continue;
    }
    if (p + 1 >= end)
      break;
    char e = p[1];
    p += 2;
    switch (e) {
    case '"': out[n++] = '"'; break;
    case '\\': out[n++] = '\\'; break;
    case '/': out[n++] = '/'; break;
    case 'b': out[n++] = '\b'; break;
    case 'f': out[n++] = '\f'; break;
    case 'n': out[n++] = '\n'; break;
    case 'r': out[n++] = '\r'; break;
    case 't': out[n++] = '\t'; break;
    case 'u': {
      unsigned cp = 0;
      for (int i = 0; i < 4; i++, p++) {
        if (p >= end || !strchr("0123456789abcdefABCDEF", *p) || !*p) {
          *bad = "bad \\u escape";
          return NULL;
        }
        cp = cp * 16 + (unsigned)(*p <= '9' ? *p - '0' : (*p | 32) - 'a' + 10);
      }
      if (cp == 0) {
        *bad = "NUL character in a string";
        return NULL;
      }
      put_utf8(out, &n, cp);
      break;
    }
    default:
      *bad = "bad escape in a string";
      return NULL;
    }
  }
  if (p >= end) {
    *bad = "unterminated string";
    return NULL;
  }
  out[n] = 0;
  *next = p + 1;
  return out;
}

static loom_status parse_value(jreader *r, jv *out, int depth);

static loom_status parse_items(jreader *r, jv *out, int depth, bool is_dict) {
  char close = is_dict ? '}' : ']';
  int cap = 0;
  r->p++;
  skip_ws(r);
  if (r->p < r->end && *r->p == close) {
    r->p++;
    return LOOM_OK;
  }
  for (;;) {
    if (out->n == cap) {
      int nc = cap ? 2 * cap : 8;
      jv *ni = loom_arena_alloc(r->a, (size_t)nc * sizeof *ni);
      const char **nk = loom_arena_alloc(r->a, (size_t)nc * sizeof *nk);
      if (!ni || !nk)
        return loom_diag_error(r->d, here(r), "out of memory"), LOOM_NOMEM;
      if (out->n) {
        memcpy(ni, out->items, (size_t)out->n * sizeof *ni);
        memcpy(nk, out->keys, (size_t)out->n * sizeof *nk);
      }
      out->items = ni;
      out->keys = nk;
      cap = nc;
    }
    skip_ws(r);
    if (is_dict) {
      if (r->p >= r->end || *r->p != '"')
        return jerr(r, "expected a string key");
      const char *bad = "bad string";
      loom_loc at = here(r);
      const char *key = decode_string(r->a, r->p, r->end, &r->p, &bad);
      if (!key)
        return loom_diag_error(r->d, at, "%s", bad);
      out->keys[out->n] = key;
      skip_ws(r);
      if (r->p >= r->end || *r->p != ':')
        return jerr(r, "expected ':' after a key");
      r->p++;
    }
    TRY(parse_value(r, &out->items[out->n], depth + 1));
    out->n++;
    skip_ws(r);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      continue;
    }
    if (r->p < r->end && *r->p == close) {
      r->p++;
      return LOOM_OK;
    }
    return jerr(r, is_dict ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static loom_status parse_value(jreader *r, jv *out, int depth) {
  memset(out, 0, sizeof *out);
  skip_ws(r);
  out->loc = here(r);
  if (depth > MAX_JSON_DEPTH)
    return jerr(r, "JSON nested too deeply");
  if (r->p >= r->end)
    return jerr(r, "unexpected end of input");
  char ch = *r->p;
  if (ch == '[' || ch == '{') {
    out->kind = ch == '[' ? J_LIST : J_DICT;
    return parse_items(r, out, depth, ch == '{');
  }
  if (ch == '"') {
    const char *bad = "bad string";
    out->kind = J_STR;
    out->s = decode_string(r->a, r->p, r->end, &r->p, &bad);
    return out->s ? LOOM_OK : jerr(r, bad);
  }
  static const struct { const char *word; jkind kind; int v; } words[] = {
      {"null", J_NULL, 0}, {"true", J_BOOL, 1}, {"false", J_BOOL, 0}};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(words[i].word);
    if ((size_t)(r->end - r->p) >= n && !memcmp(r->p, words[i].word, n)) {
      out->kind = words[i].kind;
      out->i = words[i].v;
      r->p += n;
      return LOOM_OK;
    }
  }
  if (ch == '-' || (ch >= '0' && ch <= '9')) {
    char buf[64];
    size_t n = 0;
    bool is_float = false;
    while (r->p + n < r->end && n < sizeof buf - 1 &&
           strchr("0123456789+-.eE", r->p[n]) && r->p[n]) {
      is_float |= strchr(".eE", r->p[n]) != NULL;
      n++;
    }
    memcpy(buf, r->p, n);
    buf[n] = 0;
    char *endp;
    errno = 0;
    if (is_float) {
      out->kind = J_FLOAT;
      out->f = strtod(buf, &endp);
    } else {
      out->kind = J_INT;
      out->i = strtoll(buf, &endp, 10);
    }
    if (*endp || errno)
      return jerr(r, "malformed number");
    r->p += n;
    return LOOM_OK;
  }
  return jerr(r, "expected a JSON value");
}

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

static loom_status to_tval(converter *cv, const jv *v, bool is_input,
                           loom_tval *out) {
  memset(out, 0, sizeof *out);
  switch (v->kind) {
  case J_NULL:
    return LOOM_OK;
  case J_BOOL:
    *out = loom_tval_bool(v->i != 0);
    return LOOM_OK;
  case J_INT:
    *out = loom_tval_int(v->i);
    return LOOM_OK;
  case J_FLOAT:
    out->kind = LOOM_TV_FLOAT;
    out->f = v->f;
    return LOOM_OK;
  case J_STR: {
    if (!is_input) {
      *out = loom_tval_str(v->s);
      return LOOM_OK;
    }
    size_t n = strlen(v->s);
    if (n >= 2 && v->s[0] == '"' && v->s[n - 1] == '"') {
      const char *bad = "bad quoted string", *next;
      char *s = decode_string(cv->a, v->s, v->s + n, &next, &bad);
      if (!s || next != v->s + n)
        return loom_diag_error(cv->d, v->loc, "%s", bad);
      *out = loom_tval_str(s);
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
  case J_LIST:
  case J_DICT:
    out->kind = v->kind == J_LIST ? LOOM_TV_LIST : LOOM_TV_DICT;
    out->n = v->n;
    out->items = v->n ? loom_arena_alloc(cv->a, (size_t)v->n * sizeof *out->items)
                      : NULL;
    if (v->n && !out->items)
      return LOOM_NOMEM;
    out->keys = v->kind == J_DICT ? v->keys : NULL;
    for (int i = 0; i < v->n; i++)
      TRY(to_tval(cv, &v->items[i], is_input, &out->items[i]));
    return LOOM_OK;
  }
  return LOOM_OK;
}

static loom_status convert_inst(converter *cv, const jv *v, int *n_rvs,
                                loom_inst *in) {
  if (v->kind != J_LIST || v->n != 4 || v->items[0].kind != J_STR ||
      v->items[1].kind != J_LIST || v->items[2].kind != J_LIST ||
      v->items[3].kind != J_LIST)
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
  const jv *outs = &v->items[3];
  in->n_outputs = outs->n;
  in->outputs = loom_arena_alloc(
      cv->a, (size_t)(outs->n ? outs->n : 1) * sizeof *in->outputs);
  if (!in->outputs)
    return LOOM_NOMEM;
  for (int i = 0; i < outs->n; i++) {
    const jv *o = &outs->items[i];
    if (o->kind != J_STR)
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
  jreader r = {text, text + len, text, 1, file, a, d};
  jv top;
  TRY(parse_value(&r, &top, 0));
  skip_ws(&r);
  if (r.p != r.end)
    return jerr(&r, "unexpected text after the trace");
  if (top.kind != J_LIST || top.n != 2 || top.items[0].kind != J_LIST ||
      top.items[1].kind != J_LIST)
    return loom_diag_error(d, top.loc, "a trace is [instructions, decisions]");
  const jv *insts = &top.items[0], *decs = &top.items[1];
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
    const jv *e = &decs->items[i];
    if (e->kind != J_LIST || e->n != 2 || e->items[0].kind != J_INT ||
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
