/* The TVMScript printer's shared state: the names in scope, the loops that
 * enclose the statement being printed, and the helpers the function, the
 * statement and the expression printers share. Private to src/script. */
#ifndef LOOM_SCRIPT_PRINT_H
#define LOOM_SCRIPT_PRINT_H

#include "loom/script.h"

/* One definition in scope: a variable or buffer and what a use of it prints.
 * A named definition ("i", "A_1") holds its name, so no other definition in
 * scope gets it; an inline one ("A.data", "A.elem_offset") holds none, as
 * TVM's printer defines a buffer's data pointer through the buffer. */
typedef struct pr_def {
  const void *key; /* loom_var * or loom_buffer * */
  const char *text;
  bool holds_name;
} pr_def;

typedef struct pr_vec {
  void *items;
  int n, cap;
} pr_vec;

/* The printer. Definitions live on a stack that mirrors TVM's frames: a
 * scope (a loop, a block, an if branch, a with body, the function) releases
 * the names it defined when it ends, so sibling scopes reuse names and an
 * inner definition never shadows a visible one (it gets a `_1` suffix).
 * Variables used but never defined are defined on first use at function
 * level, in `frees`, and declared (`n = T.int32()`) in `decls`. */
typedef struct printer {
  loom_dialect dialect;
  loom_buf *out;         /* where text goes now */
  loom_arena *arena;     /* names */
  pr_vec defs;           /* pr_def, innermost last */
  pr_vec frees;          /* pr_def, defined on first use */
  loom_buf *decls;       /* declarations of free names; NULL: not printed */
  int decl_indent;
  pr_vec loops;          /* const loom_stmt *: FOR statements enclosing here */
  const loom_func *func; /* the function being printed, or NULL */
  bool is_ir_module;     /* "I" is the ir module alias */
  /* Signature shape variables declared as n = TypeVar("n") at the top of
   * the file (names kept in `keep`), rather than as strings ("n"). */
  bool use_typevars;
  loom_arena *keep;
  pr_vec *typevars;      /* const char * */
  bool has_failed;       /* out of memory somewhere */
} printer;

/* ---- print.c: state and names --------------------------------------------- */

void pr_init(printer *p, loom_dialect dialect, loom_buf *out);
/* Releases the printer; marks `out` failed when anything ran out of memory. */
void pr_finish(printer *p);
bool pr_vec_push(printer *p, pr_vec *v, const void *item, size_t size);

/* Scopes: pr_mark before, pr_release(mark) after. */
int pr_mark(const printer *p);
void pr_release(printer *p, int mark);

/* Defines key under a name made unique among the names in scope from hint
 * (made a valid, non-keyword Python identifier first). Returns the name. */
const char *pr_define(printer *p, const void *key, const char *hint);
/* Defines key as printing `text`, which holds no name. */
void pr_define_inline(printer *p, const void *key, const char *text);
/* What a use prints, or NULL when key is not in scope. */
const char *pr_lookup(const printer *p, const void *key);
/* What a use of v / b prints; defines it as free when not in scope. */
const char *pr_var(printer *p, const loom_var *v);
const char *pr_buffer(printer *p, const loom_buffer *b);

void pr_indent(printer *p, int level);
void pr_puts(printer *p, const char *s);
void pr_printf(printer *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "tir.x" keys print as "tirx.x" in the new spelling. */
const char *pr_attr_key(printer *p, const char *key);
/* The type annotation of a variable: T.int32, T.handle, T.handle("float32"). */
void pr_var_type(printer *p, const loom_var *v);

/* ---- print_expr.c: expressions and values -------------------------------- */

void pr_expr(printer *p, const loom_expr *e);
/* a + b as TVM's `+` builds it: constants folded, a zero operand dropped. */
void pr_sum(printer *p, const loom_expr *a, const loom_expr *b);
/* The constant true: absent, or a nonzero INT (a block predicate). */
bool pr_is_true(const loom_expr *e);
bool pr_is_zero(const loom_expr *e);
/* A Python string literal, escaped as TVM's StrEscape does. */
void pr_quoted(loom_buf *out, const char *s);
/* A buffer load or store target: A[i, j], A[()], A[T.Ramp(b, 1, 8)].
 * TVM writes a constant-stride ramp index as a slice (A[b:b + 8]); the
 * reader does not take slices in loads and stores, so the printer keeps
 * the form the reader and docs/tvmscript.md agree on. */
void pr_indices(printer *p, const loom_buffer *b, loom_expr *const *idx, int n);
/* A buffer region: A[vi, 0:16]. */
void pr_region(printer *p, const loom_buffer_region *r);
void pr_value(printer *p, const loom_value *v);
/* {"k": v, ...} with keys sorted as TVM sorts string-keyed maps; skip_key
 * (may be NULL) is left out. */
void pr_attr_dict(printer *p, const loom_attr *attrs, int n,
                  const char *skip_key);
/* Count of entries pr_attr_dict would print. */
int pr_attr_count(const loom_attr *attrs, int n, const char *skip_key);

/* ---- print_buffer.c: buffer declarations ---------------------------------- */

typedef enum {
  PR_BUF_PARAM, /* A: T.Buffer((n,), "float32") in a signature */
  PR_BUF_ALLOC, /* block and statement allocations, match_buffer */
  PR_BUF_DECL,  /* X = T.Buffer(..., data=Y.data) */
} pr_buf_form;

/* Prints the arguments of a buffer declaration, "(128, 128), "int8",
 * scope="shared"", and defines the buffer's data pointer and offset
 * variables as TVM does. The dtype is left out when it is float32, except
 * in a signature. In a signature, a shape entry with variables not yet in
 * scope prints as a string ("n") that defines them; those that are not
 * parameters are appended to `sig_vars` (const loom_var *) for their
 * `n = T.int32()` declarations. */
void pr_buffer_args(printer *p, const loom_buffer *b, pr_buf_form form,
                    pr_vec *sig_vars);
/* TVM 0.27 declares a signature's shape variables as n = TypeVar("n")
 * when the shapes introduce two or more of them, each as a whole entry;
 * with one, it writes the entry as a string ("n"). */
bool pr_wants_typevars(printer *p, const loom_func *f);
/* Declares a buffer that is used but defined nowhere: X = T.Buffer(...). */
void pr_free_buffer_decl(printer *p, const loom_buffer *b, const char *name);

/* ---- print_stmt.c: statements ---------------------------------------------- */

/* Prints s as statements at `indent`, flattening sequences and the bodies of
 * lets, asserts and allocations; returns how many lines it started, so a
 * caller can write `pass` for an empty body. */
int pr_stmts(printer *p, const loom_stmt *s, int indent);
/* The block a function body elides as `# with T.block("root"):`, or NULL. */
const loom_block *pr_implicit_root(const loom_stmt *body);

/* ---- print_graph.c --------------------------------------------------------- */

/* A graph function as a member of the module's class (indented once). */
void pr_graph(const loom_graph *g, loom_dialect dialect, loom_buf *out);

#endif
