/* Storage scopes: the one table of the texts a buffer's scope may be, with
 * TVM's storage ranks, and what the ranks decide. */
#include "loom/ir.h"

#include <string.h>

/* A prefix ending in '.' takes any tag after it ("m.", "mma."); the others
 * match whole or followed by a ".tag". */
static const struct scope_row {
  const char *text;
  loom_scope_kind kind;
} scopes[] = {
    {"global", LOOM_SCOPE_GLOBAL},
    {"shared", LOOM_SCOPE_SHARED},
    {"warp", LOOM_SCOPE_WARP},
    {"local", LOOM_SCOPE_LOCAL},
    {"wmma.matrix_a", LOOM_SCOPE_FRAGMENT},
    {"wmma.matrix_b", LOOM_SCOPE_FRAGMENT},
    {"wmma.accumulator", LOOM_SCOPE_FRAGMENT},
    {"texture", LOOM_SCOPE_FRAGMENT},
    {"metal.simdgroup", LOOM_SCOPE_FRAGMENT},
    {"m.", LOOM_SCOPE_FRAGMENT},
    {"mma.", LOOM_SCOPE_FRAGMENT},
};

loom_scope_kind loom_ir_scope_kind(const char *scope) {
  if (!scope || !*scope)
    return LOOM_SCOPE_GLOBAL;
  for (size_t i = 0; i < sizeof scopes / sizeof *scopes; i++) {
    const char *t = scopes[i].text;
    size_t n = strlen(t);
    if (!strncmp(scope, t, n) &&
        (t[n - 1] == '.' || scope[n] == 0 || scope[n] == '.'))
      return scopes[i].kind;
  }
  return LOOM_SCOPE_NONE;
}

loom_wmma_role loom_ir_scope_wmma(const char *scope) {
  static const char *const roles[] = {NULL, "wmma.matrix_a", "wmma.matrix_b",
                                      "wmma.accumulator"};
  for (int r = LOOM_WMMA_A; scope && r <= LOOM_WMMA_ACC; r++)
    if (!strcmp(scope, roles[r]))
      return (loom_wmma_role)r;
  return LOOM_WMMA_NONE;
}

void loom_ir_wmma_tile(loom_wmma_role r, int64_t m, int64_t n, int64_t k, int64_t *rows,
                       int64_t *cols) {
  *rows = r == LOOM_WMMA_B ? k : m;
  *cols = r == LOOM_WMMA_A ? k : n;
}

bool loom_ir_scope_fits_inside(const char *scope, const char *thread) {
  return loom_ir_scope_kind(scope) != LOOM_SCOPE_GLOBAL &&
         !loom_ir_scope_is_shared_by(scope, thread);
}

/* TVM's thread ranks: blockIdx 0; threadIdx and vthread 1. */
bool loom_ir_scope_is_shared_by(const char *scope, const char *thread) {
  if (!thread)
    return false;
  bool is_block = !strncmp(thread, "blockIdx", 8);
  switch (loom_ir_scope_kind(scope)) {
  case LOOM_SCOPE_SHARED:
    return !is_block;
  case LOOM_SCOPE_WARP:
    return !strcmp(thread, "threadIdx.x");
  case LOOM_SCOPE_GLOBAL:
  case LOOM_SCOPE_LOCAL:
  case LOOM_SCOPE_FRAGMENT:
  case LOOM_SCOPE_NONE:
    return false;
  }
  return false;
}
