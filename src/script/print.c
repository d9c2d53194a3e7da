/* The TVMScript printer's top level: modules, functions and their
 * signatures, and the names every variable and buffer prints under. The
 * text is what TVM's printer writes (TVM 0.27 in the tirx spelling). */
#include "script/print.h"

#include <stdlib.h>
#include <string.h>

/* ---- state ------------------------------------------------------------------ */

void pr_init(printer *p, loom_dialect dialect, loom_buf *out) {
  memset(p, 0, sizeof *p);
  p->dialect = dialect;
  p->out = out;
  p->arena = loom_arena_new();
  if (!p->arena)
    p->has_failed = true;
}

void pr_finish(printer *p) {
  free(p->defs.items);
  free(p->frees.items);
  free(p->loops.items);
  if (p->arena && loom_arena_status(p->arena) != LOOM_OK)
    p->has_failed = true;
  loom_arena_free(p->arena);
  if (p->has_failed && p->out)
    p->out->has_failed = 1;
  memset(p, 0, sizeof *p);
}

bool pr_vec_push(printer *p, pr_vec *v, const void *item, size_t size) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 16;
    void *items = realloc(v->items, size * (size_t)cap);
    if (!items) {
      p->has_failed = true;
      return false;
    }
    v->items = items;
    v->cap = cap;
  }
  memcpy((char *)v->items + size * (size_t)v->n++, item, size);
  return true;
}

int pr_mark(const printer *p) { return p->defs.n; }

void pr_release(printer *p, int mark) {
  if (mark < p->defs.n)
    p->defs.n = mark;
}

void pr_puts(printer *p, const char *s) { loom_buf_puts(p->out, s); }

void pr_printf(printer *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  loom_buf_vprintf(p->out, fmt, ap);
  va_end(ap);
}

void pr_indent(printer *p, int level) {
  for (int i = 0; i < level; i++)
    loom_buf_puts(p->out, "    ");
}

const char *pr_attr_key(printer *p, const char *key) {
  if (p->dialect != LOOM_DIALECT_TIRX || strncmp(key, "tir.", 4))
    return key;
  const char *k = p->arena ? loom_arena_printf(p->arena, "tirx.%s", key + 4)
                           : NULL;
  return k ? k : key;
}

/* ---- names ------------------------------------------------------------------ */

/* Python keywords, and the names the printed text itself relies on. */
static const char *const reserved[] = {
    "False",  "None",   "True",     "and",    "as",     "assert", "async",
    "await",  "break",  "class",    "continue", "def",  "del",    "elif",
    "else",   "except", "finally",  "for",    "from",   "global", "if",
    "import", "in",     "is",       "lambda", "nonlocal", "not",  "or",
    "pass",   "raise",  "return",   "try",    "while",  "with",   "yield",
    "T",      "range",
};

static bool defs_hold(const pr_vec *v, const char *name) {
  const pr_def *d = v->items;
  for (int i = 0; i < v->n; i++)
    if (d[i].holds_name && !strcmp(d[i].text, name))
      return true;
  return false;
}

static bool is_taken(const printer *p, const char *name) {
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (!strcmp(reserved[i], name))
      return true;
  if (p->is_ir_module && !strcmp(name, "I"))
    return true;
  return defs_hold(&p->defs, name) || defs_hold(&p->frees, name);
}

/* A valid Python identifier from a name hint: TVM turns every character
 * other than a letter, digit or underscore into an underscore; an empty
 * hint or one that starts with a digit gets a leading "v". */
static char *identifier(printer *p, const char *hint) {
  if (!hint)
    hint = "";
  size_t n = strlen(hint);
  bool needs_prefix = n == 0 || (hint[0] >= '0' && hint[0] <= '9');
  char *s = loom_arena_alloc(p->arena, n + 2);
  if (!s)
    return NULL;
  char *w = s;
  if (needs_prefix)
    *w++ = 'v';
  for (size_t i = 0; i < n; i++) {
    char c = hint[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_';
    *w++ = ok ? c : '_';
  }
  *w = 0;
  return s;
}

/* TVM's rule: the hint itself, else hint_1, hint_2, ... whichever is free. */
static const char *unique_name(printer *p, const char *hint) {
  if (!p->arena)
    return "v";
  const char *base = identifier(p, hint);
  if (!base)
    return "v";
  const char *name = base;
  for (int i = 1; is_taken(p, name); i++) {
    name = loom_arena_printf(p->arena, "%s_%d", base, i);
    if (!name)
      return "v";
  }
  return name;
}

const char *pr_define(printer *p, const void *key, const char *hint) {
  pr_def d = {key, unique_name(p, hint), true};
  pr_vec_push(p, &p->defs, &d, sizeof d);
  return d.text;
}

void pr_define_inline(printer *p, const void *key, const char *text) {
  pr_def d = {key, text ? text : "?", false};
  pr_vec_push(p, &p->defs, &d, sizeof d);
}

static const char *find(const pr_vec *v, const void *key) {
  const pr_def *d = v->items;
  for (int i = v->n - 1; i >= 0; i--)
    if (d[i].key == key)
      return d[i].text;
  return NULL;
}

const char *pr_lookup(const printer *p, const void *key) {
  const char *t = find(&p->defs, key);
  return t ? t : find(&p->frees, key);
}

static const char *define_free(printer *p, const void *key, const char *hint) {
  pr_def d = {key, unique_name(p, hint), true};
  pr_vec_push(p, &p->frees, &d, sizeof d);
  return d.text;
}

/* The right-hand side that declares a variable: T.int32(), T.handle(...). */
static void var_creation(printer *p, const loom_var *v) {
  char b[LOOM_DTYPE_STRLEN];
  if (v->dtype.code == LOOM_DT_HANDLE && v->elem.code != LOOM_DT_VOID) {
    pr_printf(p, "T.handle(\"%s\"", loom_dtype_str(v->elem, b));
    if (v->scope) {
      pr_puts(p, ", ");
      pr_quoted(p->out, v->scope);
    }
    pr_puts(p, ")");
    return;
  }
  pr_printf(p, "T.%s()", loom_dtype_str(v->dtype, b));
}

static void declare_var(printer *p, const char *name, const loom_var *v) {
  if (!p->decls)
    return;
  loom_buf *saved = p->out;
  p->out = p->decls;
  pr_indent(p, p->decl_indent);
  pr_printf(p, "%s = ", name);
  var_creation(p, v);
  pr_puts(p, "\n");
  p->out = saved;
}

const char *pr_var(printer *p, const loom_var *v) {
  const char *t = pr_lookup(p, v);
  if (t)
    return t;
  t = define_free(p, v, v->name);
  declare_var(p, t, v);
  return t;
}

const char *pr_buffer(printer *p, const loom_buffer *b) {
  const char *t = pr_lookup(p, b);
  if (t)
    return t;
  t = define_free(p, b, b->name);
  if (p->decls)
    pr_free_buffer_decl(p, b, t);
  return t;
}

void pr_var_type(printer *p, const loom_var *v) {
  char b[LOOM_DTYPE_STRLEN];
  if (v->dtype.code == LOOM_DT_HANDLE && v->elem.code != LOOM_DT_VOID) {
    var_creation(p, v);
    return;
  }
  pr_printf(p, "T.%s", loom_dtype_str(v->dtype, b));
}

/* ---- functions -------------------------------------------------------------- */

static const char *global_symbol(const loom_func *f) {
  const loom_value *v = loom_ir_attr_get(f->attrs, f->n_attrs, "global_symbol");
  if (!v)
    return NULL;
  if (v->kind == LOOM_VALUE_STR)
    return v->str ? v->str : "";
  if (v->kind == LOOM_VALUE_EXPR && v->expr && v->expr->kind == LOOM_EXPR_STR)
    return v->expr->u.str;
  return ""; /* present but not a string: never equal to the name */
}

static void print_decorator(printer *p, const loom_func *f, int indent) {
  bool is_private = !loom_ir_attr_get(f->attrs, f->n_attrs, "global_symbol");
  bool s_tir = p->dialect == LOOM_DIALECT_TIRX && loom_ir_stmt_has(f->body, LOOM_STMT_BLOCK_REALIZE);
  pr_indent(p, indent);
  pr_puts(p, "@T.prim_func");
  if (is_private || s_tir) {
    pr_puts(p, "(");
    if (is_private)
      pr_puts(p, s_tir ? "private=True, " : "private=True");
    if (s_tir)
      pr_puts(p, "s_tir=True");
    pr_puts(p, ")");
  }
  pr_puts(p, "\n");
}

/* The parameter list. Buffers print inline as TVM 0.27 prints them; shape
 * variables they introduce that are not parameters are declared at the top
 * of the body. */
static void print_params(printer *p, const loom_func *f, pr_vec *sig_vars) {
  for (int i = 0; i < f->n_params; i++) {
    const loom_param *prm = &f->params[i];
    if (i)
      pr_puts(p, ", ");
    if (prm->buffer) {
      pr_printf(p, "%s: T.Buffer(", pr_define(p, prm->buffer, prm->buffer->name));
      pr_buffer_args(p, prm->buffer, PR_BUF_PARAM, sig_vars);
      pr_puts(p, ")");
      continue;
    }
    if (!prm->var) {
      pr_puts(p, "_: T.handle");
      continue;
    }
    const char *name = pr_lookup(p, prm->var);
    if (!name)
      name = pr_define(p, prm->var, prm->var->name);
    pr_printf(p, "%s: ", name);
    pr_var_type(p, prm->var);
  }
  if (f->ret_type.code != LOOM_DT_VOID) {
    char b[LOOM_DTYPE_STRLEN];
    pr_printf(p, ") -> T.%s", loom_dtype_str(f->ret_type, b));
  } else {
    pr_puts(p, ")");
  }
}

static void print_body(printer *p, const loom_func *f, const char *name,
                       int indent) {
  const char *gs = global_symbol(f);
  const char *skip = gs && !strcmp(gs, name) ? "global_symbol" : NULL;
  if (pr_attr_count(f->attrs, f->n_attrs, skip) > 0) {
    pr_indent(p, indent);
    pr_puts(p, "T.func_attr(");
    pr_attr_dict(p, f->attrs, f->n_attrs, skip);
    pr_puts(p, ")\n");
  }
  const loom_block *root = pr_implicit_root(f->body);
  if (!root) {
    pr_stmts(p, f->body, indent);
    return;
  }
  pr_indent(p, indent);
  pr_printf(p, "# with T.%s(\"root\"):\n",
            p->dialect == LOOM_DIALECT_TIRX ? "sblock" : "block");
  const char *alloc = p->dialect == LOOM_DIALECT_TIRX ? "sblock_alloc_buffer"
                                                      : "alloc_buffer";
  for (int i = 0; i < root->n_alloc_buffers; i++) {
    const loom_buffer *b = root->alloc_buffers[i];
    pr_indent(p, indent);
    pr_printf(p, "%s = T.%s(", pr_define(p, b, b->name), alloc);
    pr_buffer_args(p, b, PR_BUF_ALLOC, NULL);
    pr_puts(p, ")\n");
  }
  pr_stmts(p, root->body, indent);
}

/* Where the file-level TypeVar names of all functions are collected. */
typedef struct typevar_list {
  loom_arena *keep;
  pr_vec names; /* const char * */
} typevar_list;

/* One function: decorator, signature, declarations, body. Its names are its
 * own: each function gets a fresh printer. */
static void print_func(const loom_func *f, loom_dialect dialect,
                       bool is_ir_module, int indent, typevar_list *tv,
                       loom_buf *out) {
  printer p;
  pr_init(&p, dialect, out);
  p.func = f;
  p.is_ir_module = is_ir_module;
  p.keep = tv->keep;
  p.typevars = &tv->names;
  p.use_typevars = pr_wants_typevars(&p, f);
  loom_buf sig, decls, body;
  loom_buf_init(&sig);
  loom_buf_init(&decls);
  loom_buf_init(&body);
  pr_vec sig_vars = {0};

  p.out = &sig;
  pr_printf(&p, "def %s(", p.arena ? identifier(&p, f->name) : "f");
  print_params(&p, f, &sig_vars);
  p.out = &decls;
  const loom_var *const *vars = sig_vars.items;
  for (int i = 0; i < sig_vars.n; i++) {
    pr_indent(&p, indent + 1);
    pr_printf(&p, "%s = ", pr_lookup(&p, vars[i]));
    var_creation(&p, vars[i]);
    pr_puts(&p, "\n");
  }
  p.decls = &decls;
  p.decl_indent = indent + 1;
  p.out = &body;
  print_body(&p, f, f->name, indent + 1);

  p.out = out;
  print_decorator(&p, f, indent);
  pr_indent(&p, indent);
  if (sig.data)
    pr_puts(&p, sig.data);
  pr_puts(&p, ":\n");
  if (decls.data)
    pr_puts(&p, decls.data);
  if (body.data)
    pr_puts(&p, body.data);
  if (!decls.len && !body.len) {
    pr_indent(&p, indent + 1);
    pr_puts(&p, "pass\n");
  }
  if (sig.has_failed || decls.has_failed || body.has_failed)
    p.has_failed = true;
  free(sig_vars.items);
  loom_buf_free(&sig);
  loom_buf_free(&decls);
  loom_buf_free(&body);
  pr_finish(&p);
}

/* ---- modules ------------------------------------------------------------------ */

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The file header; TypeVar declarations, sorted and each once, come after
 * it with no blank line before the decorator, as TVM writes them. */
static void print_header(loom_dialect dialect, bool is_ir_module, bool has_graphs,
                         typevar_list *tv, loom_buf *out) {
  if (tv->names.n)
    loom_buf_puts(out, "# from typing import TypeVar\n");
  if (is_ir_module)
    loom_buf_puts(out, "# from tvm.script import ir as I\n");
  if (dialect == LOOM_DIALECT_TIRX)
    loom_buf_puts(out, "# from tvm.script import tirx as T\n"
                       "# from tvm.tirx.layout import Axis\n");
  else
    loom_buf_puts(out, "# from tvm.script import tir as T\n");
  if (has_graphs)
    loom_buf_puts(out, "# from tvm.script import relax as R\n");
  loom_buf_puts(out, "\n");
  const char **names = tv->names.items;
  if (tv->names.n)
    qsort(names, (size_t)tv->names.n, sizeof *names, compare_names);
  for (int i = 0; i < tv->names.n; i++)
    if (i == 0 || strcmp(names[i - 1], names[i]))
      loom_buf_printf(out, "%s = TypeVar(\"%s\")\n", names[i], names[i]);
}

static loom_dialect dialect_of(const loom_print_opts *o) {
  return o ? o->dialect : LOOM_DIALECT_TIR;
}

/* Prints the functions (as a module when as_module) into a buffer first:
 * the header needs the TypeVar names the functions collect. */
static void print_file(const loom_module *m, const loom_func *lone,
                       loom_dialect dialect, loom_buf *out) {
  typevar_list tv = {loom_arena_new(), {0}};
  loom_buf text;
  loom_buf_init(&text);
  if (lone) {
    print_func(lone, dialect, false, 0, &tv, &text);
  } else {
    loom_buf_puts(&text, "@I.ir_module\nclass Module:\n");
    if (m->n_attrs > 0) {
      printer p;
      pr_init(&p, dialect, &text);
      pr_puts(&p, "    I.module_attrs(");
      pr_attr_dict(&p, m->attrs, m->n_attrs, NULL);
      pr_puts(&p, ")\n");
      pr_finish(&p);
    }
    for (int i = 0; i < m->n_funcs; i++) {
      if (i)
        loom_buf_puts(&text, "\n");
      print_func(m->funcs[i], dialect, true, 1, &tv, &text);
    }
    for (int i = 0; i < m->n_graphs; i++) {
      if (i || m->n_funcs)
        loom_buf_puts(&text, "\n");
      pr_graph(m->graphs[i], dialect, &text);
    }
    if (m->n_funcs == 0 && m->n_graphs == 0 && m->n_attrs == 0)
      loom_buf_puts(&text, "    pass\n");
  }
  print_header(dialect, !lone, m && m->n_graphs > 0, &tv, out);
  if (text.data)
    loom_buf_puts(out, text.data);
  if (text.has_failed || !tv.keep || loom_arena_status(tv.keep) != LOOM_OK)
    out->has_failed = 1;
  loom_buf_free(&text);
  free(tv.names.items);
  loom_arena_free(tv.keep);
}

void loom_script_print_module(const loom_module *m, const loom_print_opts *o,
                              loom_buf *out) {
  bool as_module = m->is_ir_module || m->n_funcs != 1 || m->n_attrs > 0 || m->n_graphs > 0;
  print_file(m, as_module ? NULL : m->funcs[0], dialect_of(o), out);
}

void loom_script_print_func(const loom_func *f, const loom_print_opts *o,
                            loom_buf *out) {
  print_file(NULL, f, dialect_of(o), out);
}

void loom_script_print_stmt(const loom_stmt *s, const loom_print_opts *o,
                            int indent, loom_buf *out) {
  printer p;
  pr_init(&p, dialect_of(o), out);
  pr_stmts(&p, s, indent);
  pr_finish(&p);
}

void loom_script_print_expr(const loom_expr *e, loom_buf *out) {
  printer p;
  pr_init(&p, LOOM_DIALECT_TIR, out);
  pr_expr(&p, e);
  pr_finish(&p);
}
