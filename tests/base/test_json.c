/* The JSON reader: every kind of value, escapes, locations, and errors with
 * their line:col, nesting beyond the limit included. */
#include "loom/base.h"
#include "test.h"

#include <stdlib.h>

static loom_status parse(loom_arena *a, const char *text, loom_json *v, loom_diag *d) {
  loom_diag_init(d);
  return loom_json_parse(a, text, strlen(text), "t.json", v, d);
}

static void test_values(void) {
  loom_arena *a = loom_arena_new();
  loom_json v;
  loom_diag d;
  const char *text = "{\"k\": [1, -2, 3.5e1, true, false, null],\n \"s\": \"a\\\"b\\n\\u00e9\"}";
  CHECK(parse(a, text, &v, &d) == LOOM_OK);
  CHECK(v.kind == LOOM_JSON_DICT && v.n == 2);
  CHECK_STREQ(v.keys[0], "k");
  const loom_json *l = &v.items[0];
  CHECK(l->kind == LOOM_JSON_LIST && l->n == 6);
  CHECK(l->items[0].kind == LOOM_JSON_INT && l->items[0].i == 1);
  CHECK(l->items[1].i == -2);
  CHECK(l->items[2].kind == LOOM_JSON_FLOAT && l->items[2].f == 35.0);
  CHECK(l->items[3].kind == LOOM_JSON_BOOL && l->items[3].i == 1);
  CHECK(l->items[4].kind == LOOM_JSON_BOOL && l->items[4].i == 0);
  CHECK(l->items[5].kind == LOOM_JSON_NULL);
  CHECK_STREQ(v.items[1].s, "a\"b\n\xc3\xa9");
  CHECK(v.items[1].loc.line == 2 && v.items[1].loc.col == 7);
  loom_diag_free(&d);
  loom_arena_free(a);
}

static void test_errors(void) {
  static const struct { const char *text; int line, col; const char *msg; } cases[] = {
      {"[1, 2", 1, 6, "expected ',' or ']'"},
      {"{\"a\" 1}", 1, 6, "expected ':'"},
      {"[1]\n x", 2, 2, "unexpected text"},
      {"", 1, 1, "unexpected end"},
      {"[1.2.3]", 1, 2, "malformed number"},
      {"\"abc", 1, 1, "unterminated string"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    loom_arena *a = loom_arena_new();
    loom_json v;
    loom_diag d;
    CHECK(parse(a, cases[i].text, &v, &d) == LOOM_ERROR);
    CHECK(d.loc.line == cases[i].line && d.loc.col == cases[i].col);
    CHECK_CONTAINS(d.msg, cases[i].msg);
    if (d.loc.line != cases[i].line || d.loc.col != cases[i].col)
      fprintf(stderr, "  case %zu at %d:%d: %s\n", i, d.loc.line, d.loc.col, d.msg);
    loom_diag_free(&d);
    loom_arena_free(a);
  }
  /* Deep nesting is an error, not a stack overflow. */
  char *deep = malloc(200001);
  memset(deep, '[', 200000);
  deep[200000] = 0;
  loom_arena *a = loom_arena_new();
  loom_json v;
  loom_diag d;
  CHECK(parse(a, deep, &v, &d) == LOOM_ERROR);
  CHECK_CONTAINS(d.msg, "nested too deeply");
  loom_diag_free(&d);
  loom_arena_free(a);
  free(deep);
}

int main(void) {
  test_values();
  test_errors();
  return test_summary("json");
}
