/* Tensors of data: ONNX's TensorProto (an initializer, a Constant's value,
 * a test's input or output) copied into an arena as a dense row-major
 * array of the loom dtype, whichever field the writer stored it in. */
#include "onnx_impl.h"
#include "loom/interp.h"

#include <stdlib.h>
#include <string.h>

typedef struct dtype_row {
  int32_t onnx;
  const char *name;
  loom_dtype t;
} dtype_row;

#define DT(x) ONNX__TENSOR_PROTO__DATA_TYPE__##x
static const dtype_row dtypes[] = {
    {DT(FLOAT), "FLOAT", LOOM_DTYPE(LOOM_DT_FLOAT, 32, 1)},
    {DT(UINT8), "UINT8", LOOM_DTYPE(LOOM_DT_UINT, 8, 1)},
    {DT(INT8), "INT8", LOOM_DTYPE(LOOM_DT_INT, 8, 1)},
    {DT(UINT16), "UINT16", LOOM_DTYPE(LOOM_DT_UINT, 16, 1)},
    {DT(INT16), "INT16", LOOM_DTYPE(LOOM_DT_INT, 16, 1)},
    {DT(INT32), "INT32", LOOM_DTYPE(LOOM_DT_INT, 32, 1)},
    {DT(INT64), "INT64", LOOM_DTYPE(LOOM_DT_INT, 64, 1)},
    {DT(STRING), "STRING", LOOM_DTYPE(LOOM_DT_VOID, 0, 1)},
    {DT(BOOL), "BOOL", LOOM_DTYPE(LOOM_DT_BOOL, 1, 1)},
    {DT(FLOAT16), "FLOAT16", LOOM_DTYPE(LOOM_DT_FLOAT, 16, 1)},
    {DT(DOUBLE), "DOUBLE", LOOM_DTYPE(LOOM_DT_FLOAT, 64, 1)},
    {DT(UINT32), "UINT32", LOOM_DTYPE(LOOM_DT_UINT, 32, 1)},
    {DT(UINT64), "UINT64", LOOM_DTYPE(LOOM_DT_UINT, 64, 1)},
    {DT(COMPLEX64), "COMPLEX64", LOOM_DTYPE(LOOM_DT_VOID, 0, 1)},
    {DT(COMPLEX128), "COMPLEX128", LOOM_DTYPE(LOOM_DT_VOID, 0, 1)},
    {DT(BFLOAT16), "BFLOAT16", LOOM_DTYPE(LOOM_DT_BFLOAT, 16, 1)},
};

static const dtype_row *find_dtype(int32_t data_type) {
  for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
    if (dtypes[i].onnx == data_type)
      return &dtypes[i];
  return NULL;
}

bool onnx_dtype(int32_t data_type, loom_dtype *out) {
  const dtype_row *r = find_dtype(data_type);
  if (!r || r->t.code == LOOM_DT_VOID)
    return false;
  *out = r->t;
  return true;
}

const char *onnx_dtype_name(int32_t data_type) {
  const dtype_row *r = find_dtype(data_type);
  return r ? r->name : "UNDEFINED";
}

int64_t onnx_numel(const loom_tensor_info *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++)
    n *= t->shape[i];
  return n;
}

size_t onnx_elem_bytes(loom_dtype t) {
  return t.bits < 8 ? 1 : t.bits / 8;
}

double onnx_tensor_get(const loom_onnx_tensor *t, int64_t i) {
  loom_dtype dt = t->info.dtype;
  const char *p = (const char *)t->data + (size_t)i * onnx_elem_bytes(dt);
  switch (dt.code) {
  case LOOM_DT_FLOAT:
    if (dt.bits == 16)
      return loom_interp_f16_value(*(const uint16_t *)p);
    if (dt.bits == 32)
      return *(const float *)p;
    if (dt.bits == 64)
      return *(const double *)p;
    break;
  case LOOM_DT_BFLOAT:
    return loom_interp_bf16_value(*(const uint16_t *)p);
  case LOOM_DT_INT:
  case LOOM_DT_UINT:
  case LOOM_DT_BOOL:
    return (double)onnx_tensor_get_int(t, i);
  default:
    break;
  }
  return 0;
}

loom_status onnx_tensor_retype(loom_arena *a, const loom_onnx_tensor *t,
                               loom_dtype dt, const loom_onnx_tensor **out) {
  loom_onnx_tensor *r = loom_arena_dup(a, t, sizeof *t);
  if (!r)
    return LOOM_NOMEM;
  r->info.dtype = dt;
  int64_t n = onnx_numel(&t->info);
  r->bytes = (size_t)n * onnx_elem_bytes(dt);
  r->data = n ? loom_arena_alloc(a, r->bytes) : NULL;
  if (n && !r->data)
    return LOOM_NOMEM;
  for (int64_t i = 0; i < n; i++)
    onnx_tensor_put(r, i, onnx_tensor_get(t, i));
  *out = r;
  return LOOM_OK;
}

void onnx_tensor_put(loom_onnx_tensor *t, int64_t i, double v) {
  loom_dtype dt = t->info.dtype;
  if (dt.code == LOOM_DT_BFLOAT)
    ((uint16_t *)t->data)[i] = loom_interp_bf16_bits(v);
  else if (dt.bits == 16)
    ((uint16_t *)t->data)[i] = loom_interp_f16_bits(v);
  else if (dt.bits == 32)
    ((float *)t->data)[i] = (float)v;
  else
    ((double *)t->data)[i] = v;
}

int64_t onnx_tensor_get_int(const loom_onnx_tensor *t, int64_t i) {
  loom_dtype dt = t->info.dtype;
  const char *p = (const char *)t->data + (size_t)i * onnx_elem_bytes(dt);
  bool is_signed = dt.code == LOOM_DT_INT;
  switch (onnx_elem_bytes(dt)) {
  case 1:
    return is_signed ? (int64_t)*(const int8_t *)p : (int64_t)*(const uint8_t *)p;
  case 2:
    return is_signed ? (int64_t)*(const int16_t *)p
                     : (int64_t)*(const uint16_t *)p;
  case 4:
    if (dt.code == LOOM_DT_FLOAT)
      return (int64_t)*(const float *)p;
    return is_signed ? (int64_t)*(const int32_t *)p
                     : (int64_t)*(const uint32_t *)p;
  default:
    if (dt.code == LOOM_DT_FLOAT)
      return (int64_t)*(const double *)p;
    return *(const int64_t *)p;
  }
}

/* Narrows the values of a typed field (int32_data holds every integer type
 * up to 32 bits, and float16's raw bits) to the element width. */
static void store_ints(void *dst, size_t width, const void *src,
                       size_t src_width, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int64_t v = src_width == 4 ? ((const int32_t *)src)[i]
                               : ((const int64_t *)src)[i];
    switch (width) {
    case 1: ((uint8_t *)dst)[i] = (uint8_t)v; break;
    case 2: ((uint16_t *)dst)[i] = (uint16_t)v; break;
    case 4: ((uint32_t *)dst)[i] = (uint32_t)v; break;
    default: ((int64_t *)dst)[i] = v; break;
    }
  }
}

/* The typed field the writer used for this dtype: its values and count. */
static loom_status copy_typed(const Onnx__TensorProto *p, loom_dtype t,
                              void *dst, size_t n, const char *what,
                              loom_diag *d) {
  size_t width = onnx_elem_bytes(t);
  size_t got;
  int32_t dt = p->data_type;
  if (dt == DT(FLOAT)) {
    got = p->n_float_data;
    if (got == n)
      memcpy(dst, p->float_data, n * sizeof(float));
  } else if (dt == DT(DOUBLE)) {
    got = p->n_double_data;
    if (got == n)
      memcpy(dst, p->double_data, n * sizeof(double));
  } else if (dt == DT(INT64)) {
    got = p->n_int64_data;
    if (got == n)
      memcpy(dst, p->int64_data, n * sizeof(int64_t));
  } else if (dt == DT(UINT32) || dt == DT(UINT64)) {
    got = p->n_uint64_data;
    if (got == n)
      for (size_t i = 0; i < n; i++) {
        if (width == 4)
          ((uint32_t *)dst)[i] = (uint32_t)p->uint64_data[i];
        else
          ((uint64_t *)dst)[i] = p->uint64_data[i];
      }
  } else {
    got = p->n_int32_data;
    if (got == n)
      store_ints(dst, width, p->int32_data, 4, n);
  }
  if (got != n)
    return loom_diag_error(d, (loom_loc){0},
                           "%s: holds %zu values where its shape has %zu",
                           what, got, n);
  return LOOM_OK;
}

loom_status onnx_tensor_from_proto(const Onnx__TensorProto *p, loom_arena *a,
                                   const char *what, loom_onnx_tensor *out,
                                   loom_diag *d) {
  memset(out, 0, sizeof *out);
  if (!onnx_dtype(p->data_type, &out->info.dtype))
    return loom_diag_error(d, (loom_loc){0},
                           "%s: data type %s is not supported", what,
                           onnx_dtype_name(p->data_type));
  if (p->n_external_data ||
      p->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return loom_diag_error(d, (loom_loc){0},
                           "%s: data kept in an external file are not "
                           "supported", what);
  if (p->segment)
    return loom_diag_error(d, (loom_loc){0},
                           "%s: a tensor in segments is not supported", what);
  out->name = loom_arena_strdup(a, p->name ? p->name : "");
  out->info.ndim = (int)p->n_dims;
  out->info.shape = loom_arena_alloc(a, sizeof(int64_t) * (p->n_dims + 1));
  if (!out->name || !out->info.shape)
    return LOOM_NOMEM;
  for (size_t i = 0; i < p->n_dims; i++) {
    if (p->dims[i] < 0 || p->dims[i] > (INT64_C(1) << 40))
      return loom_diag_error(d, (loom_loc){0},
                             "%s: dimension %zu has extent %lld", what, i,
                             (long long)p->dims[i]);
    out->info.shape[i] = p->dims[i];
  }
  size_t n = (size_t)onnx_numel(&out->info);
  size_t width = onnx_elem_bytes(out->info.dtype);
  if (n > (SIZE_MAX >> 4) / width)
    return loom_diag_error(d, (loom_loc){0}, "%s: too many elements", what);
  out->bytes = n * width;
  if (n == 0)
    return LOOM_OK;
  out->data = loom_arena_alloc(a, out->bytes);
  if (!out->data)
    return LOOM_NOMEM;
  if (p->has_raw_data) {
    /* raw_data is little-endian, as the hosts Loom runs on are. */
    if (p->raw_data.len != out->bytes)
      return loom_diag_error(d, (loom_loc){0},
                             "%s: raw_data has %zu bytes where its shape and "
                             "type need %zu",
                             what, p->raw_data.len, out->bytes);
    memcpy(out->data, p->raw_data.data, out->bytes);
    return LOOM_OK;
  }
  return copy_typed(p, out->info.dtype, out->data, n, what, d);
}

loom_status loom_onnx_read_tensor(const char *path, loom_arena *a,
                                  loom_onnx_tensor *out, loom_diag *d) {
  char *text;
  size_t len;
  TRY(loom_read_file(path, &text, &len, d));
  Onnx__TensorProto *p =
      onnx__tensor_proto__unpack(NULL, len, (const uint8_t *)text);
  free(text);
  if (!p)
    return loom_diag_error(d, (loom_loc){path, 0, 0},
                           "not a serialized ONNX TensorProto");
  loom_status s = onnx_tensor_from_proto(p, a, "the tensor", out, d);
  onnx__tensor_proto__free_unpacked(p, NULL);
  if (s == LOOM_ERROR && d->loc.file == NULL)
    d->loc.file = path;
  return s;
}
