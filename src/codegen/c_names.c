/* C identifiers and types for the emitter. */
#include "codegen/codegen_impl.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void emit_free(emitter *E) {
  loom_ptrmap_free(&E->names);
  loom_ptrmap_free(&E->data_vars);
  loom_ptrmap_free(&E->locals);
  loom_ptrmap_free(&E->fragments);
  loom_ptrmap_free(&E->nonneg);
  for (int i = 0; i < E->n_idents; i++)
    free(E->idents[i]);
  free(E->idents);
  free(E->heap);
}

void emit_error(emitter *E, const char *fmt, ...) {
  if (E->st != LOOM_OK)
    return;
  va_list ap;
  va_start(ap, fmt);
  E->st = loom_diag_verror(E->d, E->loc, fmt, ap);
  va_end(ap);
}

/* Words a generated identifier must not be: C keywords and the names the
 * prelude and the function signature use. */
static bool is_reserved(const char *s) {
  static const char *const words[] = {
      "auto", "break", "case", "char", "const", "continue", "default", "do",
      "double", "else", "enum", "extern", "float", "for", "goto", "if",
      "inline", "int", "long", "register", "restrict", "return", "short",
      "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
      "unsigned", "void", "volatile", "while", "bool", "true", "false",
      "args", "shapes", "NAN", "INFINITY", "main", "errno", "abs", "exp",
      "log", "sqrt", "free", "malloc", "memcpy", "nan", "inf", "signbit",
      /* C++ and CUDA words, for kernels */
      "class", "new", "delete", "template", "this", "namespace", "operator",
      "private", "public", "protected", "virtual", "friend", "typename",
      "using", "try", "catch", "throw", "export", "mutable", "explicit",
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "half",
      "min", "max", "float4", "float2", "int4", "uint4",
  };
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (!strcmp(words[i], s))
      return true;
  return !strncmp(s, "loom_", 5) || !strncmp(s, "__", 2);
}

static bool is_used(const emitter *E, const char *s) {
  for (int i = 0; i < E->n_idents; i++)
    if (!strcmp(E->idents[i], s))
      return true;
  return false;
}

static int add_ident(emitter *E, char *s) {
  if (E->n_idents == E->cap_idents) {
    int cap = E->cap_idents ? 2 * E->cap_idents : 32;
    char **p = realloc(E->idents, (size_t)cap * sizeof *p);
    if (!p) {
      free(s);
      return -1;
    }
    E->idents = p;
    E->cap_idents = cap;
  }
  E->idents[E->n_idents] = s;
  return E->n_idents++;
}

/* base with every character outside [A-Za-z0-9_] made '_', a leading digit
 * or a reserved word prefixed, and a number appended until unused. */
static int make_ident(emitter *E, const char *base) {
  size_t n = strlen(base);
  char *s = malloc(n + 24);
  if (!s)
    return -1;
  size_t k = 0;
  if (n == 0 || isdigit((unsigned char)base[0]))
    s[k++] = 'v';
  for (size_t i = 0; i < n; i++)
    s[k++] = isalnum((unsigned char)base[i]) || base[i] == '_' ? base[i] : '_';
  s[k] = 0;
  if (is_reserved(s)) {
    memmove(s + 2, s, k + 1);
    s[0] = 'v';
    s[1] = '_';
    k += 2;
  }
  for (int i = 1; is_used(E, s); i++)
    snprintf(s + k, 24, "_%d", i);
  return add_ident(E, s);
}

const char *emit_fresh(emitter *E, const char *base) {
  int i = make_ident(E, base);
  if (i < 0) {
    E->st = LOOM_NOMEM;
    return "?";
  }
  return E->idents[i];
}

const char *emit_name(emitter *E, const loom_var *v) {
  int i = loom_ptrmap_get(&E->names, v);
  if (i >= 0)
    return E->idents[i];
  if ((i = make_ident(E, v->name)) < 0 || loom_ptrmap_put(&E->names, v, i) != LOOM_OK) {
    E->st = LOOM_NOMEM;
    return "?";
  }
  return E->idents[i];
}

const char *emit_value_type(loom_dtype t) {
  switch (t.code) {
  case LOOM_DT_BOOL: return "bool";
  case LOOM_DT_BFLOAT: return "float";
  case LOOM_DT_FLOAT: return t.bits == 64 ? "double" : "float";
  case LOOM_DT_HANDLE: return "void *";
  default: return emit_elem_type(t);
  }
}

const char *emit_elem_type(loom_dtype t) {
  bool is_signed = t.code == LOOM_DT_INT;
  switch (t.code) {
  case LOOM_DT_BOOL: return "uint8_t";
  case LOOM_DT_BFLOAT: return "uint16_t";
  case LOOM_DT_FLOAT: return t.bits == 16 ? "uint16_t" : t.bits == 64 ? "double" : "float";
  case LOOM_DT_INT:
  case LOOM_DT_UINT:
    switch (t.bits) {
    case 8: return is_signed ? "int8_t" : "uint8_t";
    case 16: return is_signed ? "int16_t" : "uint16_t";
    case 32: return is_signed ? "int32_t" : "uint32_t";
    default: return is_signed ? "int64_t" : "uint64_t";
    }
  case LOOM_DT_HANDLE: return "void *";
  default: return "void";
  }
}

const char *emit_suffix(loom_dtype t) {
  static const char *const ints[] = {"i8", "i16", "i32", "i64"};
  static const char *const uints[] = {"u8", "u16", "u32", "u64"};
  int k = t.bits <= 8 ? 0 : t.bits <= 16 ? 1 : t.bits <= 32 ? 2 : 3;
  switch (t.code) {
  case LOOM_DT_INT: return ints[k];
  case LOOM_DT_UINT: return uints[k];
  case LOOM_DT_BOOL: return "u8";
  case LOOM_DT_FLOAT: return t.bits == 64 ? "f64" : "f32";
  default: return "f32";
  }
}
