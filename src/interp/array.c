/* Host arrays for the interpreter: allocation, deterministic random fill,
 * comparison with tolerances, and printing as nested lists. */
#include "interp/interp_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Arrays larger than this many bytes are refused rather than attempted. */
#define MAX_ARRAY_BYTES ((int64_t)1 << 40)

loom_interp_array *loom_interp_array_new(loom_dtype t, const int64_t *shape,
                                         int ndim) {
  int64_t n = 1;
  int eb = elem_bytes(t);
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0 || (shape[i] > 0 && n > MAX_ARRAY_BYTES / eb / shape[i]))
      return NULL;
    n *= shape[i];
  }
  loom_interp_array *a = calloc(1, sizeof *a);
  if (!a)
    return NULL;
  a->dtype = t;
  a->dtype.lanes = 1;
  a->ndim = ndim;
  a->n_elems = n;
  a->shape = calloc(ndim > 0 ? (size_t)ndim : 1, sizeof *a->shape);
  a->data = calloc((size_t)(n ? n : 1), (size_t)eb);
  if (!a->shape || !a->data) {
    loom_interp_array_free(a);
    return NULL;
  }
  if (ndim)
    memcpy(a->shape, shape, (size_t)ndim * sizeof *shape);
  return a;
}

void loom_interp_array_free(loom_interp_array *a) {
  if (!a)
    return;
  free(a->shape);
  free(a->data);
  free(a);
}

double loom_interp_array_get(const loom_interp_array *a, int64_t i) {
  return lane_as_double(a->dtype, load_elem(a->dtype, a->data, i));
}

void loom_interp_array_set(loom_interp_array *a, int64_t i, double v) {
  ilane x = {.f = v};
  store_elem(a->dtype, a->data, i,
             cast_lane(LOOM_DTYPE(LOOM_DT_FLOAT, 64, 1), a->dtype, x));
}

void loom_interp_fill_random(loom_interp_array *a, loom_rng *r) {
  loom_dtype t = a->dtype;
  for (int64_t i = 0; i < a->n_elems; i++) {
    ilane x;
    if (loom_dtype_is_float(t) && t.bits == 16) { /* its bits, encoded once */
      uint16_t h = t.code == LOOM_DT_BFLOAT
                       ? loom_interp_bf16_bits(loom_rng_double(r) * 2.0 - 1.0)
                       : loom_interp_f16_bits(loom_rng_double(r) * 2.0 - 1.0);
      memcpy((char *)a->data + 2 * i, &h, 2);
      continue;
    }
    if (loom_dtype_is_float(t))
      x = norm_float(t, loom_rng_double(r) * 2.0 - 1.0);
    else if (t.code == LOOM_DT_BOOL)
      x.u = loom_rng_below(r, 2);
    else if (t.code == LOOM_DT_UINT)
      x = norm_int(t, loom_rng_below(r, t.bits == 1 ? 2 : 16));
    else
      x = norm_int(t, loom_rng_below(r, 16) - 8);
    store_elem(t, a->data, i, x);
  }
}

/* Writes the row-major indices of flat element i as "[1, 2]". */
static void put_indices(const loom_interp_array *a, int64_t i, loom_buf *out) {
  int64_t idx[64];
  int nd = a->ndim < 64 ? a->ndim : 64;
  for (int k = a->ndim - 1; k >= 0; k--) {
    int64_t e = a->shape[k] ? a->shape[k] : 1;
    if (k < nd)
      idx[k] = i % e;
    i /= e;
  }
  loom_buf_putc(out, '[');
  for (int k = 0; k < nd; k++)
    loom_buf_printf(out, "%s%lld", k ? ", " : "", (long long)idx[k]);
  loom_buf_putc(out, ']');
}

static void put_lane(loom_dtype t, ilane x, loom_buf *out) {
  if (!loom_dtype_is_float(t)) {
    if (t.code == LOOM_DT_INT)
      loom_buf_printf(out, "%lld", (long long)lane_i64(x));
    else
      loom_buf_printf(out, "%llu", (unsigned long long)x.u);
  } else if (isnan(x.f)) {
    loom_buf_puts(out, "nan");
  } else if (isinf(x.f)) {
    loom_buf_puts(out, x.f < 0 ? "-inf" : "inf");
  } else {
    loom_buf_printf(out, "%.17g", x.f);
  }
}

static bool lanes_close(loom_dtype t, ilane x, ilane y, double rtol,
                        double atol) {
  if (!loom_dtype_is_float(t))
    return x.u == y.u;
  if (isnan(x.f) || isnan(y.f))
    return isnan(x.f) && isnan(y.f);
  if (x.f == y.f) /* also equal infinities */
    return true;
  return fabs(x.f - y.f) <= atol + rtol * fabs(y.f);
}

static void set_mismatch(char **first_mismatch, loom_buf *b) {
  if (first_mismatch)
    *first_mismatch = loom_buf_take(b);
  else
    loom_buf_free(b);
}

bool loom_interp_compare(const loom_interp_array *a, const loom_interp_array *b,
                         double rtol, double atol, char **first_mismatch) {
  loom_buf msg;
  loom_buf_init(&msg);
  if (first_mismatch)
    *first_mismatch = NULL;
  if (!loom_dtype_eq(a->dtype, b->dtype) || a->ndim != b->ndim) {
    loom_buf_puts(&msg, "dtype or rank differs");
    set_mismatch(first_mismatch, &msg);
    return false;
  }
  for (int k = 0; k < a->ndim; k++)
    if (a->shape[k] != b->shape[k]) {
      loom_buf_printf(&msg, "shape differs in dimension %d: %lld vs %lld", k,
                      (long long)a->shape[k], (long long)b->shape[k]);
      set_mismatch(first_mismatch, &msg);
      return false;
    }
  for (int64_t i = 0; i < a->n_elems; i++) {
    ilane x = load_elem(a->dtype, a->data, i);
    ilane y = load_elem(b->dtype, b->data, i);
    if (lanes_close(a->dtype, x, y, rtol, atol))
      continue;
    loom_buf_puts(&msg, "at ");
    put_indices(a, i, &msg);
    loom_buf_puts(&msg, ": ");
    put_lane(a->dtype, x, &msg);
    loom_buf_puts(&msg, " vs ");
    put_lane(b->dtype, y, &msg);
    set_mismatch(first_mismatch, &msg);
    return false;
  }
  loom_buf_free(&msg);
  return true;
}

typedef struct printer {
  const loom_interp_array *a;
  int64_t printed, max_elems;
  bool is_elided;
} printer;

static void print_dim(printer *p, int k, int64_t base, loom_buf *out) {
  const loom_interp_array *a = p->a;
  if (k == a->ndim) {
    if (p->printed >= p->max_elems) {
      if (!p->is_elided)
        loom_buf_puts(out, "...");
      p->is_elided = true;
      return;
    }
    put_lane(a->dtype, load_elem(a->dtype, a->data, base), out);
    p->printed++;
    return;
  }
  loom_buf_putc(out, '[');
  for (int64_t i = 0; i < a->shape[k] && !p->is_elided; i++) {
    if (i)
      loom_buf_puts(out, ", ");
    print_dim(p, k + 1, base * a->shape[k] + i, out);
  }
  loom_buf_putc(out, ']');
}

void loom_interp_array_print(const loom_interp_array *a, int64_t max_elems,
                             loom_buf *out) {
  printer p = {a, 0, max_elems, false};
  print_dim(&p, 0, 0, out);
}
