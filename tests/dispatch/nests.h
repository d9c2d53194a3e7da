/* What the conv and pool tests share: a program read and normalized, and
 * the loop nests at the top of its body. */
#ifndef LOOM_TESTS_DISPATCH_NESTS_H
#define LOOM_TESTS_DISPATCH_NESTS_H

#include "program.h"
#include "loom/tune.h"
#include "test.h"

#define HEAD "from tvm.script import tir as T\n@T.prim_func\n"

static inline const loom_func *read_one(loom_arena *a, const char *text) {
  loom_module *m = program_read(a, text);
  CHECK(m && m->n_funcs == 1);
  return m && m->n_funcs == 1 ? loom_tune_normalized(a, m->funcs[0]) : NULL;
}

/* The top-level statements of f's root block. */
static inline const loom_stmt *top(const loom_func *f, int i) {
  const loom_stmt *b = f->body->u.realize.block->body;
  if (b->kind != LOOM_STMT_SEQ)
    return i == 0 ? b : NULL;
  return i < b->u.seq.n_stmts ? b->u.seq.stmts[i] : NULL;
}

/* The library's nest, the last top-level loop; the one before, the pad. */
static inline void nests(const loom_func *f, const loom_stmt **pad, const loom_stmt **last) {
  int i = 0;
  while (top(f, i + 1))
    i++;
  *last = top(f, i);
  *pad = i > 0 ? top(f, i - 1) : NULL;
}

#endif
