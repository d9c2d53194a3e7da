/* TVM's own schedule tests (../shared/conformance): for every case whose
 * methods the instruction table knows, trace.py and trace.json applied to
 * before.py give a module structurally equal to after.py, printing the trace
 * again gives trace.py and trace.json byte for byte, and a refused case is
 * refused at its last line. Every case runs twice: as TVM 0.27 printed it
 * (tirx) and rewritten to the classic spelling (tir, T.block, get_block),
 * the rewrite ../shared/tools/conformance makes. A case whose methods the
 * table does not know fails. The cases of tests/schedule/tvmdiff (TVM's
 * results on traces of the differential tester) run the same way; those of
 * ../shared are skipped when it is absent. */
#include "loom/schedule.h"
#include "loom/script.h"
#include "test.h"
#include "interp_compare.h"

#include <stdlib.h>

/* Whether the files are read in the classic spelling. */
static bool classic;

/* The classic spelling's words for TVM 0.27's, in the order the rewrite
 * applies them (sblock_alloc_buffer before sblock). */
static const char *const respell[][2] = {
    {"T.sblock_alloc_buffer(", "T.alloc_buffer("},
    {"T.sblock", "T.block"},
    {"import tirx as T", "import tir as T"},
    {"tvm.tirx", "tvm.tir"},
    {"\"tirx.", "\"tir."},
    {"@T.prim_func(s_tir=True)", "@T.prim_func"},
    {", s_tir=True)", ")"},
    {"get_sblock", "get_block"},
    {"\"GetSBlock\"", "\"GetBlock\""},
};

/* text with every occurrence of from replaced by to (no longer than from). */
static void replace_all(char *text, const char *from, const char *to) {
  size_t nf = strlen(from), nt = strlen(to);
  char *w = text;
  for (const char *r = text; *r;) {
    if (!strncmp(r, from, nf)) {
      memmove(w, to, nt);
      w += nt;
      r += nf;
    } else
      *w++ = *r++;
  }
  *w = 0;
}

static loom_dialect dialect(void) {
  return classic ? LOOM_DIALECT_TIR : LOOM_DIALECT_TIRX;
}

static char *slurp(const char *path, size_t *len) {
  char *text;
  size_t n;
  loom_diag d;
  loom_diag_init(&d);
  loom_status st = loom_read_file(path, &text, &n, &d);
  loom_diag_free(&d);
  if (st != LOOM_OK)
    return NULL;
  if (classic) {
    for (size_t i = 0; i < sizeof respell / sizeof *respell; i++)
      replace_all(text, respell[i][0], respell[i][1]);
    n = strlen(text);
  }
  if (len)
    *len = n;
  return text;
}

static loom_module *load(const char *path, loom_arena *a, char **keep) {
  size_t len;
  char *text = slurp(path, &len);
  if (!text)
    return NULL;
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_script_read(text, len, path, a, &m, &d) != LOOM_OK) {
    fprintf(stderr, "%s: %s\n", path, d.msg);
    m = NULL;
  }
  loom_diag_free(&d);
  *keep = text;
  return m;
}

static bool supported(char *methods) {
  for (char *tok = strtok(methods, ","); tok; tok = strtok(NULL, ","))
    if (loom_inst_kind_by_method(tok) < 0)
      return false;
  return true;
}

static int n_lines(const char *s) {
  int n = 0;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

/* One ok case; returns whether every check passed. */
static bool run_ok(const char *dir) {
  char path[1200];
  bool ok = true;
  loom_arena *a = loom_arena_new();
  char *t_before = NULL, *t_after = NULL;
  snprintf(path, sizeof path, "%s/before.py", dir);
  loom_module *before = load(path, a, &t_before);
  snprintf(path, sizeof path, "%s/after.py", dir);
  loom_module *after = load(path, a, &t_after);
  size_t len;
  snprintf(path, sizeof path, "%s/trace.py", dir);
  char *script = slurp(path, &len);
  if (!before || !after || !script) {
    fprintf(stderr, "%s: cannot load\n", dir);
    ok = false;
    goto out;
  }
  loom_sched *s = loom_sched_new(before, 1);
  loom_diag d;
  loom_diag_init(&d);
  if (loom_sched_run_script(s, script, len, path, &d) != LOOM_OK) {
    fprintf(stderr, "%s: trace.py refused: %s (line %d)\n", dir, d.msg,
            d.loc.line);
    ok = false;
  } else {
    loom_ir_diff diff = {0};
    if (!loom_ir_equal_module(loom_sched_module(s), after, &diff)) {
      fprintf(stderr, "%s: trace.py result differs at %s: %s\n", dir,
              diff.path, diff.what);
      ok = false;
    }
    loom_ir_diff_free(&diff);
    loom_buf b;
    loom_buf_init(&b);
    loom_trace t = loom_sched_trace(s);
    loom_trace_print_py(&t, dialect(), &b);
    if (!b.data || strcmp(b.data, script)) {
      fprintf(stderr, "%s: trace.py prints back as:\n%s", dir,
              b.data ? b.data : "");
      ok = false;
    }
    loom_buf_free(&b);
  }
  loom_diag_free(&d);
  loom_sched_free(s);

  snprintf(path, sizeof path, "%s/trace.json", dir);
  char *json = slurp(path, &len);
  if (json) {
    loom_trace t;
    loom_diag_init(&d);
    s = loom_sched_new(before, 1);
    if (loom_trace_read_json(json, len, path, a, &t, &d) != LOOM_OK ||
        loom_trace_apply(&t, s, LOOM_REPLAY_CHECK, &d) != LOOM_OK) {
      fprintf(stderr, "%s: trace.json refused: %s (line %d)\n", dir, d.msg,
              d.loc.line);
      ok = false;
    } else {
      if (!loom_ir_equal_module(loom_sched_module(s), after, NULL)) {
        fprintf(stderr, "%s: trace.json result differs\n", dir);
        ok = false;
      }
      loom_buf b;
      loom_buf_init(&b);
      loom_trace_print_json(&t, dialect(), &b);
      if (!b.data || strcmp(b.data, json)) {
        fprintf(stderr, "%s: trace.json prints back as:\n%s", dir,
                b.data ? b.data : "");
        ok = false;
      }
      loom_buf_free(&b);
    }
    loom_diag_free(&d);
    loom_sched_free(s);
    free(json);
  }
out:
  free(script);
  free(t_before);
  free(t_after);
  loom_arena_free(a);
  return ok;
}

/* Cases TVM refuses on a block property where the dependence analysis
 * proves the step legal, so Loom applies it (docs/tvm-differences.md). */
static const char *const legal_by_deps[] = {
    "for_kind_003", /* parallel over the spatial loop of a reduction whose
                       reduce binding is not quasi-affine */
    "reorder_007",  /* reorder of an elementwise block whose predicate
                       bounds several iters */
};

static bool is_legal_by_deps(const char *dir) {
  const char *name = strrchr(dir, '/');
  name = name ? name + 1 : dir;
  for (int i = 0; i < (int)(sizeof legal_by_deps / sizeof *legal_by_deps); i++)
    if (!strcmp(name, legal_by_deps[i]))
      return true;
  return false;
}

/* Whether f's buffers are small enough to interpret quickly (reorder_007's
 * two 128^4 arrays are not: a gigabyte each, most of it predicated away). */
static bool is_small(const loom_func *f) {
  int64_t total = 0;
  for (int i = 0; i < f->n_params; i++) {
    const loom_buffer *b = f->params[i].buffer;
    int64_t n = 1, e;
    for (int k = 0; b && k < b->ndim; k++)
      n = loom_ir_is_const_int(b->shape[k], &e) ? n * e : 1 << 30;
    total += b ? n : 0;
  }
  return total <= 1 << 20;
}

static bool run_refused(const char *dir) {
  char path[1200];
  loom_arena *a = loom_arena_new();
  char *t_before = NULL;
  snprintf(path, sizeof path, "%s/before.py", dir);
  loom_module *before = load(path, a, &t_before);
  size_t len;
  snprintf(path, sizeof path, "%s/trace.py", dir);
  char *script = slurp(path, &len);
  bool ok = false;
  if (before && script) {
    loom_sched *s = loom_sched_new(before, 1);
    loom_diag d;
    loom_diag_init(&d);
    bool is_applied = loom_sched_run_script(s, script, len, path, &d) == LOOM_OK;
    if (is_legal_by_deps(dir)) {
      /* Applied where TVM refuses: it must compute what the program did. */
      ok = is_applied &&
           loom_ir_verify_module(loom_sched_module(s), &d) == LOOM_OK;
      if (!ok)
        fprintf(stderr, "%s: the step legal by dependences was refused: %s\n",
                dir, d.msg ? d.msg : "?");
      if (ok && is_small(before->funcs[0]) &&
          !interp_same_results(before->funcs[0], loom_sched_module(s)->funcs[0],
                               3, true)) {
        fprintf(stderr, "%s: the step legal by dependences changed the results\n",
                dir);
        ok = false;
      }
    } else if (is_applied)
      fprintf(stderr, "%s: the refused step was applied\n", dir);
    else if (d.loc.line != n_lines(script))
      fprintf(stderr, "%s: refused at line %d, not the last (%s)\n", dir,
              d.loc.line, d.msg);
    else
      ok = true;
    loom_diag_free(&d);
    loom_sched_free(s);
  }
  free(script);
  free(t_before);
  loom_arena_free(a);
  return ok;
}

/* Every case of the index in the current spelling; counts into n[]: ok
 * cases, passed, refused cases, passed, cases with unknown methods. */
static void run_all(const char *base, const char *index, int n[5]) {
  char *copy = strdup(index), *save = NULL, path[1024];
  for (char *line = strtok_r(copy, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    char name[128], kind[32], methods[512];
    if (sscanf(line, "%127s %31s %511s", name, kind, methods) != 3 ||
        !strcmp(name, "case"))
      continue;
    if (!supported(methods)) {
      fprintf(stderr, "%s: uses a method Loom does not know\n", name);
      n[4]++;
      continue;
    }
    snprintf(path, sizeof path, "%s/%s", base, name);
    bool is_ok = !strcmp(kind, "ok");
    bool pass = is_ok ? run_ok(path) : run_refused(path);
    n[is_ok ? 0 : 2]++;
    n[is_ok ? 1 : 3] += pass;
    if (!pass)
      fprintf(stderr, "%s failed in the %s spelling\n", name,
              classic ? "classic" : "tirx");
    CHECK(pass);
  }
  free(copy);
}

/* The cases of one folder in both spellings; false when it has no index. */
static bool run_folder(const char *base, const char *what) {
  char path[1024];
  snprintf(path, sizeof path, "%s/index.tsv", base);
  char *index = slurp(path, NULL);
  if (!index)
    return false;
  for (int pass = 0; pass < 2; pass++) {
    int n[5] = {0};
    classic = pass == 1;
    run_all(base, index, n);
    CHECK(n[4] == 0);
    printf("%s (%s): ok cases %d/%d, refused cases %d/%d, %d cases "
           "with unknown methods\n",
           what, classic ? "classic" : "tirx", n[1], n[0], n[3], n[2], n[4]);
  }
  free(index);
  return true;
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  char base[512];
  /* TVM's results on traces the differential tester (tools/tvmdiff) found
   * Loom once treated otherwise; they live with the tests. */
  snprintf(base, sizeof base, "%s/tests/schedule/tvmdiff", root);
  CHECK(run_folder(base, "tvmdiff cases"));
  snprintf(base, sizeof base, "%s/../shared/conformance", root);
  if (!run_folder(base, "conformance"))
    printf("no conformance cases at %s: skipped\n", base);
  return test_summary("schedule/conformance");
}
