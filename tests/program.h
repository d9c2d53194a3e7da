/* Reading a test's program from text and scheduling it with a script,
 * saying on stderr why when either fails. */
#ifndef LOOM_TESTS_PROGRAM_H
#define LOOM_TESTS_PROGRAM_H

#include "loom/schedule.h"
#include "loom/script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline loom_module *program_read(loom_arena *a, const char *text) {
  loom_diag d;
  loom_diag_init(&d);
  loom_module *m = NULL;
  if (loom_script_read(text, strlen(text), "case.py", a, &m, &d) != LOOM_OK) {
    fprintf(stderr, "read: %s\n", d.msg ? d.msg : "?");
    m = NULL;
  }
  loom_diag_free(&d);
  return m;
}

/* The module in the file at path; NULL, said on stderr, when it cannot be
 * read or parsed. */
static inline loom_module *program_read_file(loom_arena *a, const char *path) {
  char *text;
  size_t len;
  loom_diag d;
  loom_diag_init(&d);
  loom_module *m = NULL;
  if (loom_read_file(path, &text, &len, &d) == LOOM_OK) {
    if (loom_script_read(text, len, path, a, &m, &d) != LOOM_OK)
      m = NULL;
    free(text);
  }
  if (!m)
    fprintf(stderr, "%s: %s\n", path, d.msg ? d.msg : "?");
  loom_diag_free(&d);
  return m;
}

/* text with every occurrence of from replaced by to (a program shrunk to a
 * size the interpreter checks); the caller frees it; NULL when out of
 * memory. */
static inline char *program_replace(const char *text, const char *from, const char *to) {
  size_t n = strlen(text), nf = strlen(from), nt = strlen(to);
  char *out = malloc(n / nf * (nt > nf ? nt : nf) + n + 1), *o = out;
  for (const char *p = text; out && *p;)
    if (!strncmp(p, from, nf)) {
      memcpy(o, to, nt);
      o += nt, p += nf;
    } else {
      *o++ = *p++;
    }
  if (out)
    *o = 0;
  return out;
}

/* m scheduled by script (named id in messages); NULL when the script fails. */
static inline loom_sched *program_schedule(loom_module *m, uint64_t seed,
                                           const char *script, const char *id) {
  loom_sched *s = loom_sched_new(m, seed);
  loom_diag d;
  loom_diag_init(&d);
  if (s && loom_sched_run_script(s, script, strlen(script), id, &d) != LOOM_OK) {
    fprintf(stderr, "%s: %s\n", id, d.msg ? d.msg : "?");
    loom_sched_free(s);
    s = NULL;
  }
  loom_diag_free(&d);
  return s;
}

/* t printed as a schedule script in dialect without its `, decision=...`
 * arguments (random draws, left out of comparisons); the caller frees it. */
static inline char *program_trace_plain(const loom_trace *t, loom_dialect dialect) {
  loom_buf b;
  loom_buf_init(&b);
  loom_trace_print_py(t, dialect, &b);
  char *s = loom_buf_take(&b), *w = s;
  for (char *r = s; s && *r;) {
    if (!strncmp(r, ", decision=", 11)) {
      r += 11;
      int depth = 0;
      while (*r && (depth > 0 || (*r != ')' && *r != ','))) {
        depth += *r == '[' ? 1 : *r == ']' ? -1 : 0;
        r++;
      }
      continue;
    }
    *w++ = *r++;
  }
  if (s)
    *w = 0;
  return s;
}

#endif
