/* ONNX import: a model file read into a module of TensorIR functions, one
 * per distinct operator instance, and a graph function that calls them in
 * the order of the model's nodes (include/loom/ir.h, loom_graph), as TVM's
 * frontend and legalization would leave it. The model's inputs are the
 * graph's first parameters, its initializers (the weights) the ones after
 * them; their data are kept beside the module. Weights are the initializers
 * then the Constant nodes' tensors, each only when a call takes it as an
 * argument (or the graph returns it): a constant read as data at import,
 * such as Reshape's shape, becomes part of the prim func instead. The
 * schema is ONNX's own (onnx.proto from Debian's libonnx-dev), read with
 * protobuf-c. docs/onnx.md has the operators and their attributes. */
#ifndef LOOM_ONNX_H
#define LOOM_ONNX_H

#include "loom/ir.h"

/* A tensor of data: an initializer, or a test's input or output. */
typedef struct loom_onnx_tensor {
  const char *name;
  loom_tensor_info info;
  void *data; /* dense, row-major, info.dtype's elements; NULL when empty */
  size_t bytes;
} loom_onnx_tensor;

typedef struct loom_onnx_model {
  loom_module *module; /* the prim funcs, then one graph named "main" */
  const loom_graph *graph;
  int n_inputs;        /* graph params [0, n_inputs): the model's inputs */
  loom_onnx_tensor *weights; /* graph params [n_inputs, n_params), in order */
  int n_weights;
  int64_t opset;       /* of the default domain */
} loom_onnx_model;

/* Graph rewrites the importer can make as it reads, each off by default,
 * so that a model imports as TVM's frontend reads it. */
typedef struct loom_onnx_options {
  /* The 4-D activations of convolutions, pools, batch normalizations and
   * the elementwise operators between them stored NHWC, the convolutions'
   * weights HWIO (HWC1 depthwise), as TVM's ConvertLayout does for NHWC:
   * copies in the model's NCHW are made (transpose calls) only where an
   * operator or the graph's output needs them. */
  bool is_channels_last;
  /* A BatchNormalization whose input is a Conv's result, read by nothing
   * else, with the weights, bias and statistics all constants, folded into
   * the convolution: W * s per output channel and (B - mean) * s + beta as
   * its bias, s = scale / sqrt(var + epsilon) (ONNX Runtime's Conv and
   * BatchNormalization fusion). The rounding differs from the two
   * operators computed apart. */
  bool is_bn_folded;
  /* Float16 and bfloat16 convolutions and matrix products (Conv, MatMul,
   * Gemm) multiply and sum in float32 and round their result once, as
   * cuDNN and cuBLAS compute them and as TVM's ToMixedPrecision rewrites
   * them (out_dtype float32, then a cast); the bias is added before the
   * rounding. Otherwise they compute in the model's type, as TVM's
   * frontend builds them. */
  bool is_f32_accumulated;
  /* Where set (bits > 0: float16 or bfloat16), the model's float32
   * tensors are read as this type: its inputs, outputs, weights and
   * constants, as PyTorch's model.half() converts a network (the weights
   * rounded to nearest even); every value computed from them follows. */
  loom_dtype float_dtype;
  /* Values for the model's symbolic dimensions (an input of shape
   * ["batch", 3, 224, 224]): dim_names[i] is dim_values[i] wherever the
   * model's inputs and outputs name it. One left without a value is an
   * error that names it. */
  const char *const *dim_names;
  const int64_t *dim_values;
  int n_dims;
} loom_onnx_options;

/* Reads the model at path into arena a. Fails with d (located at the file,
 * naming the node and its operator) on a file that is not a model, an
 * operator or attribute Loom does not import (the message lists the
 * operators it does), a shape that is not static, or a dtype it lacks. */
LOOM_API loom_status loom_onnx_read(const char *path, loom_arena *a,
                                    loom_onnx_model *out, loom_diag *d);
/* loom_onnx_read with the rewrites o asks for (NULL: none). */
LOOM_API loom_status loom_onnx_read_with(const char *path, loom_arena *a,
                                         const loom_onnx_options *o,
                                         loom_onnx_model *out, loom_diag *d);

/* Reads a serialized TensorProto (the input_0.pb and output_0.pb files of
 * ONNX's test data) into arena a, from raw_data or the typed fields. */
LOOM_API loom_status loom_onnx_read_tensor(const char *path, loom_arena *a,
                                           loom_onnx_tensor *out, loom_diag *d);

/* The operator types the importer takes, in a NULL-terminated list. */
LOOM_API const char *const *loom_onnx_operators(void);

#endif
