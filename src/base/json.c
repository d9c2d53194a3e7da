/* A small JSON reader: values in an arena, each with the line:col where it
 * starts, for diagnostics that point into the text. Nesting is bounded so
 * that no input can exhaust the stack. */
#include "loom/base.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_JSON_DEPTH 64

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

static loom_status parse_value(jreader *r, loom_json *out, int depth);

static loom_status parse_items(jreader *r, loom_json *out, int depth, bool is_dict) {
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
      loom_json *ni = loom_arena_alloc(r->a, (size_t)nc * sizeof *ni);
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

static loom_status parse_value(jreader *r, loom_json *out, int depth) {
  memset(out, 0, sizeof *out);
  skip_ws(r);
  out->loc = here(r);
  if (depth > MAX_JSON_DEPTH)
    return jerr(r, "JSON nested too deeply");
  if (r->p >= r->end)
    return jerr(r, "unexpected end of input");
  char ch = *r->p;
  if (ch == '[' || ch == '{') {
    out->kind = ch == '[' ? LOOM_JSON_LIST : LOOM_JSON_DICT;
    return parse_items(r, out, depth, ch == '{');
  }
  if (ch == '"') {
    const char *bad = "bad string";
    out->kind = LOOM_JSON_STR;
    out->s = decode_string(r->a, r->p, r->end, &r->p, &bad);
    return out->s ? LOOM_OK : jerr(r, bad);
  }
  static const struct { const char *word; loom_json_kind kind; int v; } words[] = {
      {"null", LOOM_JSON_NULL, 0}, {"true", LOOM_JSON_BOOL, 1}, {"false", LOOM_JSON_BOOL, 0}};
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
      out->kind = LOOM_JSON_FLOAT;
      out->f = strtod(buf, &endp);
    } else {
      out->kind = LOOM_JSON_INT;
      out->i = strtoll(buf, &endp, 10);
    }
    if (*endp || errno)
      return jerr(r, "malformed number");
    r->p += n;
    return LOOM_OK;
  }
  return jerr(r, "expected a JSON value");
}


loom_status loom_json_parse(loom_arena *a, const char *text, size_t len,
                            const char *file, loom_json *out, loom_diag *d) {
  jreader r = {text, text + len, text, 1, file, a, d};
  TRY(parse_value(&r, out, 0));
  skip_ws(&r);
  if (r.p != r.end)
    return jerr(&r, "unexpected text after the JSON value");
  return LOOM_OK;
}

void loom_json_print_str(const char *s, loom_buf *out) {
  loom_buf_putc(out, '"');
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      loom_buf_printf(out, "\\%c", c);
    else if (c == '\n')
      loom_buf_puts(out, "\\n");
    else if (c < 0x20)
      loom_buf_printf(out, "\\u%04x", c);
    else
      loom_buf_putc(out, (char)c);
  }
  loom_buf_putc(out, '"');
}

void loom_json_print(const loom_json *v, loom_buf *out) {
  switch (v->kind) {
  case LOOM_JSON_NULL: loom_buf_puts(out, "null"); return;
  case LOOM_JSON_BOOL: loom_buf_puts(out, v->i ? "true" : "false"); return;
  case LOOM_JSON_INT: loom_buf_printf(out, "%lld", (long long)v->i); return;
  case LOOM_JSON_FLOAT: {
    char num[40];
    snprintf(num, sizeof num, "%.17g", v->f);
    loom_buf_puts(out, num);
    if (!strpbrk(num, ".eEn")) /* stays a float when read back */
      loom_buf_puts(out, ".0");
    return;
  }
  case LOOM_JSON_STR: loom_json_print_str(v->s, out); return;
  case LOOM_JSON_LIST:
  case LOOM_JSON_DICT:
    loom_buf_putc(out, v->kind == LOOM_JSON_LIST ? '[' : '{');
    for (int i = 0; i < v->n; i++) {
      if (i)
        loom_buf_puts(out, ", ");
      if (v->kind == LOOM_JSON_DICT) {
        loom_json_print_str(v->keys[i], out);
        loom_buf_puts(out, ": ");
      }
      loom_json_print(&v->items[i], out);
    }
    loom_buf_putc(out, v->kind == LOOM_JSON_LIST ? ']' : '}');
    return;
  }
}
