/* TVMScript in and out: the reader turns TVMScript text (a lone @T.prim_func
 * or an @I.ir_module class, in either spelling) into an IRModule, and the
 * printer writes an IRModule back as canonical TVMScript. */
#ifndef LOOM_SCRIPT_H
#define LOOM_SCRIPT_H

#include "loom/ir.h"

/* The two spellings of TVMScript in use. Reading accepts both, mixed;
 * printing picks one. */
typedef enum {
  LOOM_DIALECT_TIR,  /* classic: tir, T.block, T.alloc_buffer in blocks */
  LOOM_DIALECT_TIRX, /* TVM 0.25+: tirx, T.sblock, s_tir=True, "tirx.*" keys */
} loom_dialect;

/* Hard limits of the reader, reported as errors when exceeded. */
#define LOOM_SCRIPT_MAX_DEPTH 200  /* nesting of blocks and brackets */
#define LOOM_SCRIPT_MAX_CHAIN 2000 /* terms of one chain like a + b + c */

/* Reads a module from text[0..len). `file` names the text in diagnostics;
 * the diagnostic's source is set to text, which must outlive d's use.
 * Nodes go into arena a. On error *out is untouched and d says what and
 * where (file:line:col of the offending token). */
LOOM_API loom_status loom_script_read(const char *text, size_t len,
                                      const char *file, loom_arena *a,
                                      loom_module **out, loom_diag *d);

typedef struct loom_print_opts {
  loom_dialect dialect;
} loom_print_opts;

/* Prints canonical TVMScript: reading it back gives a structurally equal
 * module, and printing that gives the same text. A module read from a lone
 * prim_func prints as a lone prim_func. */
LOOM_API void loom_script_print_module(const loom_module *m,
                                       const loom_print_opts *o, loom_buf *out);
LOOM_API void loom_script_print_func(const loom_func *f,
                                     const loom_print_opts *o, loom_buf *out);
LOOM_API void loom_script_print_stmt(const loom_stmt *s,
                                     const loom_print_opts *o, int indent,
                                     loom_buf *out);
/* An expression as it would appear inside a program, for messages. */
LOOM_API void loom_script_print_expr(const loom_expr *e, loom_buf *out);

#endif
