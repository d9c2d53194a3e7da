/* One program read from text or a file, with arrays for its first
 * function, for the interpreter's tests. */
#ifndef LOOM_TESTS_INTERP_PROG_H
#define LOOM_TESTS_INTERP_PROG_H

#include "loom/interp.h"
#include "loom/script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One program read from text, with arrays for its first function. */
typedef struct prog {
  loom_arena *arena;
  loom_module *m;
  const loom_func *f;
  loom_interp_array *args[8];
  char *text;
} prog;

static inline int prog_load(prog *p, const char *text) {
  memset(p, 0, sizeof *p);
  p->arena = loom_arena_new();
  loom_diag d;
  loom_diag_init(&d);
  if (loom_script_read(text, strlen(text), "t.py", p->arena, &p->m, &d) != LOOM_OK) {
    fprintf(stderr, "read failed: %s (line %d)\n", d.msg, d.loc.line);
    loom_diag_free(&d);
    return 0;
  }
  p->f = p->m->funcs[0];
  if (loom_interp_alloc_args(p->f, NULL, p->args, &d) != LOOM_OK) {
    fprintf(stderr, "alloc failed: %s\n", d.msg);
    loom_diag_free(&d);
    return 0;
  }
  loom_diag_free(&d);
  return 1;
}

static inline int prog_load_file(prog *p, const char *path) {
  memset(p, 0, sizeof *p);
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return 0;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  fclose(fp);
  buf[n] = 0;
  return prog_load(p, buf);
}

/* Runs; returns the status and leaves the message in d (caller frees). */
static inline loom_status prog_run(prog *p, loom_diag *d) {
  loom_diag_init(d);
  return loom_interp_run(p->f, p->args, NULL, d);
}

static inline int prog_run_ok(prog *p) {
  loom_diag d;
  loom_status st = prog_run(p, &d);
  if (st != LOOM_OK)
    fprintf(stderr, "run failed: %s\n", d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return st == LOOM_OK;
}

static inline void prog_free(prog *p) {
  if (p->f)
    loom_interp_free_args(p->f, p->args);
  loom_arena_free(p->arena);
}

static inline double get(const loom_interp_array *a, int64_t i) {
  return loom_interp_array_get(a, i);
}

#endif
