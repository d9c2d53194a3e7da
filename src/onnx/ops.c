/* The importer's operator table (ops.def) and the attributes each row
 * takes: a node that sets an attribute its operator's row does not name is
 * refused rather than imported with that attribute ignored. */
#include "onnx_impl.h"

#include <string.h>

static const onnx_op ops[] = {
#define ONNX_OP(type, fn, func, layout, attrs) {type, fn, func, ONNX_LAYOUT_##layout, attrs},
#include "ops.def"
#undef ONNX_OP
};

static const char *const names[] = {
#define ONNX_OP(type, fn, func, layout, attrs) type,
#include "ops.def"
#undef ONNX_OP
    NULL,
};

#define N_OPS (int)(sizeof ops / sizeof *ops)

const onnx_op *onnx_op_find(const char *type) {
  for (int i = 0; i < N_OPS; i++)
    if (!strcmp(ops[i].type, type))
      return &ops[i];
  return NULL;
}

const char *const *loom_onnx_operators(void) { return names; }

/* Constant nodes never reach a builder: read.c takes their tensors as
 * weights. */
loom_status onnx_constant(onnx_node *n, loom_te_tensor **out) {
  (void)out;
  return node_error(n, "a Constant node makes no call (internal)");
}
