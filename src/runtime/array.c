/* Host arrays for compiled kernels: aligned or shared allocation and the
 * deterministic fill that reproduces the interpreter's inputs byte for byte. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "runtime/runtime_impl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Arrays larger than this many bytes are refused rather than attempted. */
#define MAX_ARRAY_BYTES ((int64_t)1 << 40)
#define ALIGN 64

/* Bytes per element, or 0 for a dtype that has no storage here. */
static int elem_bytes(loom_dtype t) {
  if (t.lanes != 1)
    return 0;
  switch (t.code) {
  case LOOM_DT_BOOL:
    return 1;
  case LOOM_DT_INT:
  case LOOM_DT_UINT:
  case LOOM_DT_FLOAT:
  case LOOM_DT_BFLOAT:
    if (t.bits == 0 || t.bits > 64)
      return 0;
    return t.bits <= 8 ? 1 : t.bits / 8;
  default:
    return 0;
  }
}

static size_t page_round(size_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (page == 0 || page == (size_t)-1)
    page = 4096;
  return n == 0 ? page : (n + page - 1) / page * page;
}

void *loom_runtime_shared_alloc(size_t n) {
  if (n > (size_t)MAX_ARRAY_BYTES)
    return NULL;
  void *p = mmap(NULL, page_round(n), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void loom_runtime_shared_free(void *p, size_t n) {
  if (p)
    munmap(p, page_round(n));
}

loom_runtime_array *loom_runtime_array_new(loom_dtype t, const int64_t *shape,
                                           int ndim, unsigned flags) {
  int eb = elem_bytes(t);
  if (eb == 0 || ndim < 0 || (ndim > 0 && !shape))
    return NULL;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0 || (shape[i] > 0 && n > MAX_ARRAY_BYTES / eb / shape[i]))
      return NULL;
    n *= shape[i];
  }
  loom_runtime_array *a = calloc(1, sizeof *a);
  if (!a)
    return NULL;
  a->dtype = t;
  a->ndim = ndim;
  a->n_elems = n;
  a->n_bytes = (size_t)n * (size_t)eb;
  a->flags = flags & LOOM_RUNTIME_SHARED;
  a->shape = malloc(ndim > 0 ? (size_t)ndim * sizeof *shape : 1);
  if (a->flags & LOOM_RUNTIME_SHARED) {
    a->data = loom_runtime_shared_alloc(a->n_bytes);
  } else {
    /* aligned_alloc wants a multiple of the alignment, and never 0. */
    size_t sz = (a->n_bytes + ALIGN - 1) / ALIGN * ALIGN;
    a->data = aligned_alloc(ALIGN, sz ? sz : ALIGN);
    if (a->data)
      memset(a->data, 0, sz ? sz : ALIGN);
  }
  if (!a->shape || !a->data) {
    loom_runtime_array_free(a);
    return NULL;
  }
  if (ndim > 0)
    memcpy(a->shape, shape, (size_t)ndim * sizeof *shape);
  return a;
}

void loom_runtime_array_free(loom_runtime_array *a) {
  if (!a)
    return;
  if (a->flags & LOOM_RUNTIME_SHARED)
    loom_runtime_shared_free(a->data, a->n_bytes);
  else
    free(a->data);
  free(a->shape);
  free(a);
}

loom_interp_array loom_runtime_array_view(loom_runtime_array *a) {
  loom_interp_array v;
  v.dtype = a->dtype;
  v.ndim = a->ndim;
  v.shape = a->shape;
  v.n_elems = a->n_elems;
  v.data = a->data;
  return v;
}

/* Stores the low bits of v as one element of eb bytes. Types narrower than a
 * byte keep only their own bits, as the interpreter stores them. */
static void store_bits(void *data, int64_t i, int eb, int bits, uint64_t v) {
  if (bits < 64)
    v &= ((uint64_t)1 << bits) - 1;
  switch (eb) {
  case 1:
    ((uint8_t *)data)[i] = (uint8_t)v;
    break;
  case 2:
    ((uint16_t *)data)[i] = (uint16_t)v;
    break;
  case 4:
    ((uint32_t *)data)[i] = (uint32_t)v;
    break;
  default:
    ((uint64_t *)data)[i] = v;
    break;
  }
}

/* The draws below are the interpreter's, one per element in order (see
 * loom_interp_fill_random); only the rounding is done natively where the
 * host's conversion rounds the same way (to nearest, ties to even). */
void loom_runtime_array_fill(loom_runtime_array *a, uint64_t seed) {
  loom_rng r;
  loom_rng_seed(&r, seed);
  loom_dtype t = a->dtype;
  int eb = elem_bytes(t);
  int64_t n = a->n_elems;
  if (t.code == LOOM_DT_FLOAT && t.bits == 32) {
    float *p = a->data;
    for (int64_t i = 0; i < n; i++)
      p[i] = (float)(loom_rng_double(&r) * 2.0 - 1.0);
  } else if (t.code == LOOM_DT_FLOAT && t.bits == 64) {
    double *p = a->data;
    for (int64_t i = 0; i < n; i++)
      p[i] = loom_rng_double(&r) * 2.0 - 1.0;
  } else if (t.code == LOOM_DT_FLOAT && t.bits == 16) {
    uint16_t *p = a->data;
    for (int64_t i = 0; i < n; i++)
      p[i] = loom_interp_f16_bits(loom_rng_double(&r) * 2.0 - 1.0);
  } else if (t.code == LOOM_DT_BFLOAT) {
    uint16_t *p = a->data;
    for (int64_t i = 0; i < n; i++)
      p[i] = loom_interp_bf16_bits(loom_rng_double(&r) * 2.0 - 1.0);
  } else if (t.code == LOOM_DT_BOOL) {
    uint8_t *p = a->data;
    for (int64_t i = 0; i < n; i++)
      p[i] = (uint8_t)loom_rng_below(&r, 2);
  } else if (t.code == LOOM_DT_UINT) {
    uint64_t range = t.bits == 1 ? 2 : 16;
    for (int64_t i = 0; i < n; i++)
      store_bits(a->data, i, eb, t.bits, loom_rng_below(&r, range));
  } else if (t.code == LOOM_DT_INT) {
    for (int64_t i = 0; i < n; i++)
      store_bits(a->data, i, eb, t.bits, loom_rng_below(&r, 16) - 8);
  }
}
