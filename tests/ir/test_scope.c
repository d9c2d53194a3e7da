/* Storage scopes: which texts are scopes, their kinds, and which thread
 * loops share a buffer of each (TVM's storage and thread ranks). */
#include "loom/ir.h"
#include "test.h"

int main(void) {
  CHECK(loom_ir_scope_kind(NULL) == LOOM_SCOPE_GLOBAL);
  CHECK(loom_ir_scope_kind("") == LOOM_SCOPE_GLOBAL);
  CHECK(loom_ir_scope_kind("global") == LOOM_SCOPE_GLOBAL);
  CHECK(loom_ir_scope_kind("shared") == LOOM_SCOPE_SHARED);
  CHECK(loom_ir_scope_kind("shared.dyn") == LOOM_SCOPE_SHARED);
  CHECK(loom_ir_scope_kind("warp") == LOOM_SCOPE_WARP);
  CHECK(loom_ir_scope_kind("local") == LOOM_SCOPE_LOCAL);
  CHECK(loom_ir_scope_kind("wmma.accumulator") == LOOM_SCOPE_FRAGMENT);
  CHECK(loom_ir_scope_kind("m.anything") == LOOM_SCOPE_FRAGMENT);
  CHECK(loom_ir_scope_kind("sharedx") == LOOM_SCOPE_NONE);
  CHECK(loom_ir_scope_kind("wmma.matrix_c") == LOOM_SCOPE_NONE);
  CHECK(loom_ir_scope_kind("gpu") == LOOM_SCOPE_NONE);

  static const struct {
    const char *scope, *thread;
    bool want;
  } shared_by[] = {
      {"global", "threadIdx.x", false}, {"global", "blockIdx.x", false},
      {NULL, "threadIdx.x", false},     {"shared", "threadIdx.y", true},
      {"shared", "vthread", true},      {"shared.dyn", "threadIdx.x", true},
      {"shared", "blockIdx.x", false},  {"warp", "threadIdx.x", true},
      {"warp", "threadIdx.y", false},   {"warp", "vthread", false},
      {"local", "threadIdx.x", false},  {"wmma.matrix_a", "threadIdx.x", false},
      {"shared", NULL, false},
  };
  for (size_t i = 0; i < sizeof shared_by / sizeof *shared_by; i++)
    CHECK(loom_ir_scope_is_shared_by(shared_by[i].scope, shared_by[i].thread) ==
          shared_by[i].want);
  /* Where an allocation may go: never inside a thread loop for global
   * memory, not inside the threads that share it for shared and warp. */
  CHECK(!loom_ir_scope_fits_inside("global", "threadIdx.x"));
  CHECK(!loom_ir_scope_fits_inside(NULL, "blockIdx.x"));
  CHECK(loom_ir_scope_fits_inside("shared", "blockIdx.x"));
  CHECK(!loom_ir_scope_fits_inside("shared", "threadIdx.x"));
  CHECK(loom_ir_scope_fits_inside("warp", "threadIdx.y"));
  CHECK(!loom_ir_scope_fits_inside("warp", "threadIdx.x"));
  CHECK(loom_ir_scope_fits_inside("local", "threadIdx.x"));
  return test_summary("scope");
}
