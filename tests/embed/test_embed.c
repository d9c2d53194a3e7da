/* The embedding API as a binding uses it: every diagnostic rendered after
 * the call that filled it returns (so none points into freed memory, which
 * the sanitizer build would catch), schedules driven a line at a time with
 * earlier outputs named as the trace prints them, module passes, built
 * kernels called on the caller's arrays against a plain loop, and tuning
 * into a database. */
#include "loom/embed.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MM                                                                           \
  "from tvm.script import tir as T\n"                                                \
  "@T.prim_func\n"                                                                   \
  "def mm(A: T.Buffer((16, 8), \"float32\"), B: T.Buffer((8, 12), \"float32\"),\n"   \
  "       C: T.Buffer((16, 12), \"float32\")):\n"                                    \
  "    for i, j, k in T.grid(16, 12, 8):\n"                                          \
  "        with T.block(\"C\"):\n"                                                   \
  "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"                      \
  "            with T.init():\n"                                                     \
  "                C[vi, vj] = T.float32(0)\n"                                       \
  "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"

#define SCALE                                                                        \
  "from tvm.script import tir as T\n"                                                \
  "@T.prim_func\n"                                                                   \
  "def scale(a: T.handle, b: T.handle, s: T.float32):\n"                             \
  "    n = T.int32()\n"                                                              \
  "    A = T.match_buffer(a, (n,))\n"                                                \
  "    B = T.match_buffer(b, (n,))\n"                                                \
  "    for i in range(n):\n"                                                         \
  "        with T.block(\"B\"):\n"                                                   \
  "            vi = T.axis.spatial(n, i)\n"                                          \
  "            B[vi] = A[vi] * s\n"

/* The diagnostic as a binding shows it, rendered once its call returned. */
static char *rendered(loom_diag *d) {
  loom_buf b;
  loom_buf_init(&b);
  loom_diag_render(d, &b);
  loom_diag_free(d);
  loom_diag_init(d);
  return loom_buf_take(&b);
}

static loom_embed_module *read_text(const char *text) {
  loom_diag d;
  loom_diag_init(&d);
  loom_embed_module *m = loom_embed_read(text, strlen(text), "prog.py", &d);
  CHECK(m && !d.has_error);
  loom_diag_free(&d);
  return m;
}

static void test_read(void) {
  /* The text goes before the diagnostic is rendered: the caret line comes
   * from the caller's copy. */
  char *text = strdup(MM);
  char *bad = strstr(text, "T.grid");
  memcpy(bad, "T.grud", 6);
  loom_diag d;
  loom_diag_init(&d);
  CHECK(!loom_embed_read(text, strlen(text), "bad.py", &d));
  CHECK(d.has_error && d.loc.line == 5);
  char *r = rendered(&d);
  CHECK_CONTAINS(r, "bad.py:5:");
  CHECK_CONTAINS(r, "T.grud");
  free(r);
  free(text);

  loom_embed_module *m = read_text(MM);
  char *sig = loom_embed_module_signature(m);
  CHECK_STREQ(sig, "[{\"name\": \"mm\", \"params\": ["
                   "{\"name\": \"A\", \"dtype\": \"float32\", \"shape\": [16, 8], \"written\": false}, "
                   "{\"name\": \"B\", \"dtype\": \"float32\", \"shape\": [8, 12], \"written\": false}, "
                   "{\"name\": \"C\", \"dtype\": \"float32\", \"shape\": [16, 12], \"written\": true}]}]");
  loom_embed_free(sig);
  loom_embed_module *s = read_text(SCALE);
  sig = loom_embed_module_signature(s);
  CHECK_CONTAINS(sig, "{\"name\": \"A\", \"dtype\": \"float32\", \"shape\": [\"n\"], \"written\": false}");
  CHECK_CONTAINS(sig, "{\"name\": \"s\", \"dtype\": \"float32\", \"shape\": null, \"written\": false}");
  loom_embed_free(sig);

  /* Printed in the other spelling, read back: the same module. */
  char *tirx = loom_embed_module_script(m, LOOM_DIALECT_TIRX);
  CHECK_CONTAINS(tirx, "T.sblock(\"C\")");
  loom_embed_module *m2 = read_text(tirx);
  CHECK(loom_embed_module_equal(m, m2));
  CHECK(!loom_embed_module_equal(m, s));
  loom_embed_free(tirx);
  loom_embed_module_free(m2);
  loom_embed_module_free(s);
  loom_embed_module_free(m);
}

static loom_status run_line(loom_embed_sched *s, const char *line, loom_diag *d) {
  return loom_embed_sched_run(s, line, strlen(line), "<line>", d);
}

static void test_sched(void) {
  loom_embed_module *m = read_text(MM);
  loom_embed_sched *s = loom_embed_sched_new(m, 0);
  loom_diag d;
  loom_diag_init(&d);
  int ids[8];
  CHECK(run_line(s, "sch.get_block(\"C\")", &d) == LOOM_OK);
  CHECK(loom_embed_sched_outputs(s, 0, ids, 8) == 1 && ids[0] == 0);
  CHECK(loom_embed_sched_rv_kind(s, 0) == 'b');
  CHECK(run_line(s, "sch.get_loops(b0)", &d) == LOOM_OK);
  CHECK(loom_embed_sched_outputs(s, 1, ids, 8) == 3 && ids[0] == 1 && ids[2] == 3);
  CHECK(loom_embed_sched_rv_kind(s, 2) == 'l');
  CHECK(run_line(s, "sch.sample_perfect_tile(l2, n=2, max_innermost_factor=4)", &d) == LOOM_OK);
  CHECK(loom_embed_sched_outputs(s, 2, ids, 8) == 2 && loom_embed_sched_rv_kind(s, ids[0]) == 'v');
  int64_t outer = loom_embed_sched_rv_value(s, ids[0]), inner = loom_embed_sched_rv_value(s, ids[1]);
  CHECK(outer * inner == 12 && inner <= 4);
  CHECK(run_line(s, "sch.split(l2, factors=[v4, v5])\nsch.reorder(l7, l1)", &d) == LOOM_OK);
  CHECK(loom_embed_sched_length(s) == 5);
  /* A name of the wrong kind, one past the table and one never given are
   * undefined, not taken. */
  CHECK(run_line(s, "sch.split(b1, factors=[None, 2])", &d) == LOOM_ERROR);
  char *r = rendered(&d);
  CHECK_CONTAINS(r, "<line>:1:11: error: undefined variable 'b1'");
  free(r);
  CHECK(run_line(s, "sch.parallel(l99)", &d) == LOOM_ERROR);
  free(rendered(&d));
  CHECK(run_line(s, "sch.parallel(l01)", &d) == LOOM_ERROR);
  free(rendered(&d));
  /* A name the script binds wins over the trace's. */
  CHECK(run_line(s, "l1 = 5\nsch.parallel(l1)", &d) == LOOM_ERROR);
  free(rendered(&d));
  CHECK(loom_embed_sched_length(s) == 5);
  CHECK(loom_embed_method_is_list("split") == 1 && loom_embed_method_is_list("get_block") == 0 &&
        loom_embed_method_is_list("get_sblock") == 0 && loom_embed_method_is_list("nope") == -1);

  char *trace = loom_embed_sched_trace(s, false, LOOM_DIALECT_TIR);
  CHECK_CONTAINS(trace, "l6, l7 = sch.split(loop=l2, factors=[v4, v5]");
  CHECK_CONTAINS(trace, "sch.reorder(l7, l1)");
  /* The printed trace, run on a fresh schedule, gives the same module. */
  loom_embed_sched *again = loom_embed_sched_new(m, 0);
  CHECK(run_line(again, trace, &d) == LOOM_OK);
  loom_embed_module *a = loom_embed_sched_module(s, &d), *b = loom_embed_sched_module(again, &d);
  CHECK(a && b && loom_embed_module_equal(a, b) && !loom_embed_module_equal(a, m));
  loom_embed_sched *copy = loom_embed_sched_copy(s);
  CHECK(copy && loom_embed_sched_length(copy) == 5);
  loom_embed_free(trace);
  trace = loom_embed_sched_trace(s, true, LOOM_DIALECT_TIRX);
  CHECK_CONTAINS(trace, "\"GetSBlock\"");
  loom_embed_free(trace);
  loom_embed_module_free(a);
  loom_embed_module_free(b);
  loom_embed_sched_free(copy);
  loom_embed_sched_free(again);
  loom_embed_sched_free(s);
  loom_embed_module_free(m);
  loom_diag_free(&d);
}

static void test_build(void) {
  loom_embed_module *m = read_text(MM);
  loom_diag d;
  loom_diag_init(&d);
  char *explain = NULL;
  loom_embed_module *c = loom_embed_compile(m, "cpu", "dispatch,default", NULL, &explain, &d);
  CHECK(c && explain);
  CHECK_CONTAINS(explain, "{\"func\": \"mm\", \"pass\": \"dispatch\"");
  loom_embed_free(explain);
  CHECK(!loom_embed_compile(m, "cpu", "dispatch,nothing", NULL, NULL, &d));
  char *r = rendered(&d);
  CHECK_CONTAINS(r, "nothing");
  free(r);
  CHECK(!loom_embed_compile(m, "cpu -cores=x", "default", NULL, NULL, &d));
  r = rendered(&d);
  CHECK_CONTAINS(r, "<target>:1:");
  free(r);

  /* As written, and dispatched to the library: both compute the product. */
  const loom_embed_module *mods[] = {m, c};
  for (int t = 0; t < 2; t++) {
    loom_embed_built *b = loom_embed_build(mods[t], NULL, &d);
    CHECK(b);
    if (!b)
      continue;
    float A[16 * 8], B[8 * 12], C[16 * 12], want[16 * 12];
    for (int i = 0; i < 16 * 8; i++)
      A[i] = (float)((i * 7) % 11) - 5;
    for (int i = 0; i < 8 * 12; i++)
      B[i] = (float)((i * 5) % 13) - 6;
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 12; j++) {
        float acc = 0;
        for (int k = 0; k < 8; k++)
          acc += A[i * 8 + k] * B[k * 12 + j];
        want[i * 12 + j] = acc;
        C[i * 12 + j] = 99;
      }
    int64_t sa[] = {16, 8}, sb[] = {8, 12}, sc[] = {16, 12};
    void *args[] = {A, B, C};
    const int64_t *shapes[] = {sa, sb, sc};
    CHECK(loom_embed_call(b, 0, args, shapes) == 0);
    CHECK(!memcmp(C, want, sizeof C));
    CHECK(loom_embed_call(b, 1, args, shapes) == LOOM_EMBED_NO_FUNC);
    loom_embed_built_free(b);
  }
  CHECK(!loom_embed_build(m, "cuda", &d));
  r = rendered(&d);
  CHECK_CONTAINS(r, "only cpu targets");
  free(r);

  /* A symbolic dimension and a scalar. */
  loom_embed_module *s = read_text(SCALE);
  loom_embed_built *b = loom_embed_build(s, NULL, &d);
  CHECK(b);
  if (b) {
    float A[5] = {1, 2, 3, 4, 5}, B[5] = {0};
    double k = 2.5;
    int64_t sa[] = {5}, sb[] = {5}, sb_bad[] = {4};
    void *args[] = {A, B, &k};
    const int64_t *shapes[] = {sa, sb, NULL};
    CHECK(loom_embed_call(b, 0, args, shapes) == 0);
    CHECK(B[0] == 2.5f && B[4] == 12.5f);
    const int64_t *bad[] = {sa, sb_bad, NULL};
    CHECK(loom_embed_call(b, 0, args, bad) == -2);
    loom_embed_built_free(b);
  }
  loom_embed_module_free(s);
  loom_embed_module_free(c);
  loom_embed_module_free(m);
  loom_diag_free(&d);
}

typedef struct seen {
  int calls, last_trials;
} seen;

static void progress(void *ctx, const char *task, int trials, int max_trials, int failures,
                     double best_ms, double elapsed_s) {
  seen *s = ctx;
  CHECK_STREQ(task, "mm");
  CHECK(trials >= s->last_trials && max_trials == 6);
  s->calls++;
  s->last_trials = trials;
}

static void test_tune(void) {
  char db[] = "/tmp/loom_embed_XXXXXX";
  int fd = mkstemp(db);
  CHECK(fd >= 0);
  close(fd);
  unlink(db);
  loom_embed_module *m = read_text(MM);
  loom_diag d;
  loom_diag_init(&d);
  seen s = {0};
  loom_embed_tune_options o = {.db = db, .trials = 6, .seed = 1, .is_random_model = true,
                               .progress = progress, .progress_ctx = &s};
  char *json = loom_embed_tune(m, &o, &d);
  CHECK(json);
  CHECK_CONTAINS(json, "[{\"task\": \"mm\", \"weight\": 1, \"trials\": 6");
  CHECK(s.calls > 0 && s.last_trials == 6);
  loom_embed_free(json);
  /* The records apply. */
  loom_embed_module *t = loom_embed_compile(m, NULL, "apply-db", db, NULL, &d);
  CHECK(t && !loom_embed_module_equal(t, m));
  loom_embed_module_free(t);
  o.strategy = "sideways";
  CHECK(!loom_embed_tune(m, &o, &d));
  char *r = rendered(&d);
  CHECK_CONTAINS(r, "unknown strategy 'sideways'");
  free(r);
  o.strategy = NULL;
  o.func = "other";
  CHECK(!loom_embed_tune(m, &o, &d));
  r = rendered(&d);
  CHECK_CONTAINS(r, "no function named 'other'");
  free(r);
  loom_embed_module_free(m);
  loom_diag_free(&d);
  unlink(db);
}

int main(void) {
  test_read();
  test_sched();
  test_build();
  test_tune();
  return test_summary("embed/test_embed");
}
