/* The interpreter's results must not drift: every function of every program
 * in tests/script/cases, tests/interp/cases and ../shared/corpus runs on
 * seeded random inputs, and the status, message and a checksum of every
 * parameter buffer afterwards are compared with tests/interp/golden.txt,
 * which holds what the first, unoptimized evaluator computed (programs
 * added since are only noted). Run with --print as the second argument to
 * print the lines instead of checking. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "loom/interp.h"
#include "loom/script.h"
#include "test.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Every scalar parameter gets this value (and so every symbolic dimension
 * that is a parameter). */
#define SCALAR_VALUE 6

/* Programs too big for every run: conv2d_nhwc (1.2e8 multiply-adds) runs
 * only in optimized builds (NDEBUG), matmul_1024 (1.1e9) only when the
 * environment sets LOOM_TEST_SLOW=1 too. */
static const struct {
  const char *name;
  bool is_slow;
} heavy[] = {{"conv2d_nhwc.py", false}, {"matmul_1024.py", true}};
#ifdef NDEBUG
static const bool is_optimized = true;
#else
static const bool is_optimized = false;
#endif

typedef struct golden {
  char **lines;
  int n;
  bool *is_seen;
} golden;

static bool is_print;

/* The whole file, NUL-terminated; NULL when it cannot be read. */
static char *read_all(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  char *s = NULL;
  long n = -1;
  if (fp && fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
      fseek(fp, 0, SEEK_SET) == 0)
    s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, fp) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (fp)
    fclose(fp);
  if (s) {
    s[n] = 0;
    *len = (size_t)n;
  }
  return s;
}

/* FNV-1a over the bytes of every parameter buffer, in parameter order. */
static uint64_t checksum(const loom_func *f, loom_interp_array **arrays) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < f->n_params; i++) {
    const loom_interp_array *a = arrays[i];
    if (!a)
      continue;
    int eb = a->dtype.code == LOOM_DT_BOOL || a->dtype.bits <= 8 ? 1 : a->dtype.bits / 8;
    const unsigned char *p = a->data;
    for (int64_t k = 0; k < a->n_elems * eb; k++)
      h = (h ^ p[k]) * 1099511628211ull;
  }
  return h;
}

/* One line: "file func status checksum message". */
static void run_func(const char *name, const loom_func *f, loom_buf *out) {
  loom_diag d;
  loom_diag_init(&d);
  int64_t scalars[64];
  for (int i = 0; i < 64; i++)
    scalars[i] = SCALAR_VALUE;
  loom_interp_array **arrays = calloc((size_t)f->n_params + 1, sizeof *arrays);
  loom_status st = f->n_params <= 64
                       ? loom_interp_alloc_args(f, scalars, arrays, &d)
                       : LOOM_ERROR;
  uint64_t h = 0;
  if (st == LOOM_OK) {
    loom_rng r;
    loom_rng_seed(&r, 1);
    for (int i = 0; i < f->n_params; i++)
      if (arrays[i])
        loom_interp_fill_random(arrays[i], &r);
    st = loom_interp_run(f, arrays, scalars, &d);
    h = checksum(f, arrays);
    loom_interp_free_args(f, arrays);
  }
  loom_buf_printf(out, "%s %s %s %016llx %d:%s", name, f->name,
                  st == LOOM_OK ? "ok" : "error", (unsigned long long)h,
                  d.has_error ? d.loc.line : 0, d.has_error && d.msg ? d.msg : "");
  free(arrays);
  loom_diag_free(&d);
}

static void check_line(golden *g, const char *line) {
  if (is_print) {
    printf("%s\n", line);
    return;
  }
  size_t key = strcspn(line, " ");
  key += 1 + strcspn(line + key + 1, " "); /* file and function */
  for (int i = 0; i < g->n; i++)
    if (!strncmp(g->lines[i], line, key + 1)) {
      g->is_seen[i] = true;
      CHECK_STREQ(line, g->lines[i]);
      return;
    }
  /* A program added after the golden file was made has nothing to be
   * compared with; it is not an error. */
  printf("note: no golden line for: %s\n", line);
}

/* True when program name is to be left out of this run. */
static bool is_skipped(const char *name) {
  const char *slow = getenv("LOOM_TEST_SLOW");
  bool is_slow_ok = is_optimized && slow && !strcmp(slow, "1");
  for (size_t i = 0; i < sizeof heavy / sizeof *heavy; i++)
    if (!strcmp(name, heavy[i].name))
      return heavy[i].is_slow ? !is_slow_ok : !is_optimized;
  return false;
}

static void run_file(golden *g, const char *dir, const char *tag,
                     const char *file) {
  char path[4096], name[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  snprintf(name, sizeof name, "%s/%s", tag, file);
  size_t len;
  char *text = read_all(path, &len);
  CHECK(text != NULL);
  if (!text)
    return;
  loom_arena *arena = loom_arena_new();
  loom_module *m = NULL;
  loom_diag d;
  loom_diag_init(&d);
  if (loom_script_read(text, len, name, arena, &m, &d) == LOOM_OK) {
    for (int i = 0; i < m->n_funcs; i++) {
      loom_buf line;
      loom_buf_init(&line);
      run_func(name, m->funcs[i], &line);
      check_line(g, line.data);
      loom_buf_free(&line);
    }
  } else {
    char line[4200];
    snprintf(line, sizeof line, "%s - unreadable", name);
    check_line(g, line);
  }
  loom_diag_free(&d);
  loom_arena_free(arena);
  free(text);
}

/* Marks the golden lines of tag/file as accounted for. */
static void mark_seen(golden *g, const char *tag, const char *file) {
  char name[512];
  snprintf(name, sizeof name, "%s/%s ", tag, file);
  for (int k = 0; k < g->n; k++)
    if (!strncmp(g->lines[k], name, strlen(name)))
      g->is_seen[k] = true;
}

static int compare_str(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Runs every *.py of dir but schedule scripts, in name order; false when
 * dir is absent. */
static bool run_dir(golden *g, const char *dir, const char *tag) {
  DIR *dp = opendir(dir);
  if (!dp)
    return false;
  char *names[512];
  int n = 0;
  for (struct dirent *e; (e = readdir(dp)) && n < 512;) {
    size_t len = strlen(e->d_name);
    if (len > 3 && !strcmp(e->d_name + len - 3, ".py") &&
        !strstr(e->d_name, ".sched."))
      names[n++] = strdup(e->d_name);
  }
  closedir(dp);
  qsort(names, (size_t)n, sizeof *names, compare_str);
  for (int i = 0; i < n; i++) {
    if (is_skipped(names[i])) {
      fprintf(stderr, "%s: skipped (too slow for this build or without "
              "LOOM_TEST_SLOW=1)\n", names[i]);
      mark_seen(g, tag, names[i]);
      free(names[i]);
      continue;
    }
    run_file(g, dir, tag, names[i]);
    free(names[i]);
  }
  return true;
}

static void load_golden(golden *g, const char *root) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/interp/golden.txt", root);
  size_t len;
  char *text = is_print ? NULL : read_all(path, &len);
  memset(g, 0, sizeof *g);
  if (!text) {
    CHECK(is_print);
    return;
  }
  int cap = 0;
  for (char *s = strtok(text, "\n"); s; s = strtok(NULL, "\n")) {
    if (s[0] == '#')
      continue;
    if (g->n == cap) {
      cap = cap ? cap * 2 : 64;
      g->lines = realloc(g->lines, (size_t)cap * sizeof *g->lines);
    }
    g->lines[g->n++] = strdup(s);
  }
  g->is_seen = calloc((size_t)g->n + 1, sizeof *g->is_seen);
  free(text);
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  is_print = argc > 2 && !strcmp(argv[2], "--print");
  golden g;
  load_golden(&g, root);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/script/cases", root);
  CHECK(run_dir(&g, dir, "script"));
  snprintf(dir, sizeof dir, "%s/tests/interp/cases", root);
  CHECK(run_dir(&g, dir, "interp"));
  snprintf(dir, sizeof dir, "%s/../shared/corpus", root);
  bool has_corpus = run_dir(&g, dir, "corpus");
  if (!has_corpus)
    printf("note: %s absent; corpus programs skipped\n", dir);
  /* Every golden line was produced (the corpus's only when present). */
  for (int i = 0; i < g.n; i++) {
    bool is_corpus = !strncmp(g.lines[i], "corpus/", 7);
    if (!g.is_seen[i] && (has_corpus || !is_corpus)) {
      fprintf(stderr, "golden line never produced: %s\n", g.lines[i]);
      CHECK(0);
    }
    free(g.lines[i]);
  }
  free(g.lines);
  free(g.is_seen);
  if (is_print)
    return 0;
  return test_summary("interp golden");
}
