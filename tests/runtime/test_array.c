/* Runtime arrays: shape checks, alignment, zero fill, and the deterministic
 * fill, which must write exactly the interpreter's bytes for every dtype. */
#include "loom/runtime.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

static const char *const dtype_names[] = {
    "float32", "float64", "float16", "bfloat16", "int8",  "int16", "int32",
    "int64",   "uint8",   "uint16",  "uint32",   "uint64", "bool", "int4",
    "uint4",   "int1",    "uint1"};

static loom_dtype dtype_of(const char *name) {
  loom_dtype t = LOOM_VOID;
  loom_dtype_parse(name, strlen(name), &t);
  return t;
}

static void test_new_and_free(void) {
  int64_t shape[3] = {3, 5, 7};
  for (unsigned flags = 0; flags <= LOOM_RUNTIME_SHARED; flags++) {
    loom_runtime_array *a = loom_runtime_array_new(LOOM_FLOAT32, shape, 3, flags);
    CHECK(a != NULL);
    if (!a)
      continue;
    CHECK(a->n_elems == 105 && a->n_bytes == 420 && a->ndim == 3);
    CHECK(a->shape[2] == 7 && a->flags == flags);
    CHECK((uintptr_t)a->data % 64 == 0);
    int zero = 1;
    for (size_t i = 0; i < a->n_bytes; i++)
      zero &= ((unsigned char *)a->data)[i] == 0;
    CHECK(zero);
    loom_runtime_array_free(a);
  }
  /* Scalars (ndim 0) and empty arrays still get a data pointer. */
  loom_runtime_array *s = loom_runtime_array_new(LOOM_INT64, NULL, 0, 0);
  CHECK(s && s->n_elems == 1 && s->n_bytes == 8 && s->data);
  loom_runtime_array_free(s);
  int64_t empty[2] = {4, 0};
  loom_runtime_array *e = loom_runtime_array_new(LOOM_FLOAT32, empty, 2, 0);
  CHECK(e && e->n_elems == 0 && e->n_bytes == 0 && e->data);
  loom_runtime_array_fill(e, 1);
  loom_runtime_array_free(e);
  loom_runtime_array_free(NULL);
}

static void test_refusals(void) {
  int64_t neg[2] = {4, -1};
  CHECK(loom_runtime_array_new(LOOM_FLOAT32, neg, 2, 0) == NULL);
  int64_t huge[3] = {1 << 20, 1 << 20, 1 << 20};
  CHECK(loom_runtime_array_new(LOOM_DTYPE(LOOM_DT_INT, 8, 1), huge, 3, 0) == NULL);
  int64_t wrap[2] = {INT64_MAX / 2, 4};
  CHECK(loom_runtime_array_new(LOOM_DTYPE(LOOM_DT_INT, 8, 1), wrap, 2, LOOM_RUNTIME_SHARED) == NULL);
  int64_t ok[1] = {4};
  CHECK(loom_runtime_array_new(LOOM_HANDLE, ok, 1, 0) == NULL);
  CHECK(loom_runtime_array_new(LOOM_VOID, ok, 1, 0) == NULL);
  CHECK(loom_runtime_array_new(LOOM_DTYPE(LOOM_DT_FLOAT, 32, 8), ok, 1, 0) == NULL);
  CHECK(loom_runtime_array_new(LOOM_FLOAT32, NULL, 1, 0) == NULL);
  CHECK(loom_runtime_array_new(LOOM_FLOAT32, ok, -1, 0) == NULL);
}

/* Every element lies in the dtype's documented range. */
static int in_range(loom_runtime_array *a) {
  loom_interp_array v = loom_runtime_array_view(a);
  loom_dtype t = a->dtype;
  for (int64_t i = 0; i < a->n_elems; i++) {
    double x = loom_interp_array_get(&v, i);
    int ok;
    if (loom_dtype_is_float(t))
      ok = x >= -1 && x <= 1 && !isnan(x); /* rounding may reach 1 itself */
    else if (t.code == LOOM_DT_BOOL || (t.code == LOOM_DT_UINT && t.bits == 1))
      ok = x == 0 || x == 1;
    else if (t.code == LOOM_DT_UINT)
      ok = x >= 0 && x < 16 && x == floor(x);
    else if (t.bits == 1)
      ok = x == 0 || x == -1;
    else
      ok = x >= -8 && x < 8 && x == floor(x);
    if (!ok) {
      fprintf(stderr, "element %lld = %g out of range\n", (long long)i, x);
      return 0;
    }
  }
  return 1;
}

/* Both ends of the range show up: the draw is not stuck on a subset. */
static int covers_range(loom_runtime_array *a) {
  loom_interp_array v = loom_runtime_array_view(a);
  double lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < a->n_elems; i++) {
    double x = loom_interp_array_get(&v, i);
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  loom_dtype t = a->dtype;
  if (loom_dtype_is_float(t))
    return lo < -0.9 && hi > 0.9;
  if (t.code == LOOM_DT_BOOL || t.bits == 1)
    return hi - lo == 1;
  if (t.code == LOOM_DT_UINT)
    return lo == 0 && hi == 15;
  return lo == -8 && hi == 7;
}

static void test_fill(void) {
  int64_t shape[2] = {37, 29};
  for (size_t k = 0; k < sizeof dtype_names / sizeof *dtype_names; k++) {
    loom_dtype t = dtype_of(dtype_names[k]);
    loom_runtime_array *a = loom_runtime_array_new(t, shape, 2, 0);
    loom_runtime_array *b = loom_runtime_array_new(t, shape, 2, LOOM_RUNTIME_SHARED);
    loom_runtime_array *c = loom_runtime_array_new(t, shape, 2, 0);
    loom_interp_array *ref = loom_interp_array_new(t, shape, 2);
    CHECK(a && b && c && ref);
    if (!a || !b || !c || !ref) {
      loom_runtime_array_free(a);
      loom_runtime_array_free(b);
      loom_runtime_array_free(c);
      loom_interp_array_free(ref);
      continue;
    }
    loom_runtime_array_fill(a, 42);
    loom_runtime_array_fill(b, 42);
    loom_runtime_array_fill(c, 43);
    loom_rng r;
    loom_rng_seed(&r, 42);
    loom_interp_fill_random(ref, &r);
    int same_seed = !memcmp(a->data, b->data, a->n_bytes);
    int other_seed = memcmp(a->data, c->data, a->n_bytes) != 0;
    int as_interp = !memcmp(a->data, ref->data, a->n_bytes);
    int ranged = in_range(a), covered = covers_range(a);
    if (!same_seed || !other_seed || !as_interp || !ranged || !covered)
      fprintf(stderr, "fill of %s: same %d other %d interp %d range %d cover %d\n",
              dtype_names[k], same_seed, other_seed, as_interp, ranged, covered);
    CHECK(same_seed && other_seed && as_interp && ranged && covered);
    /* Refilling overwrites everything: the same seed gives the same bytes. */
    loom_runtime_array_fill(c, 42);
    CHECK(!memcmp(a->data, c->data, a->n_bytes));
    loom_runtime_array_free(a);
    loom_runtime_array_free(b);
    loom_runtime_array_free(c);
    loom_interp_array_free(ref);
  }
}

/* A large float32 fill: native rounding must agree with the interpreter's
 * software rounding on a million draws, not only on a thousand. */
static void test_fill_float32_large(void) {
  int64_t n = 1 << 20;
  loom_runtime_array *a = loom_runtime_array_new(LOOM_FLOAT32, &n, 1, 0);
  loom_interp_array *ref = loom_interp_array_new(LOOM_FLOAT32, &n, 1);
  CHECK(a && ref);
  if (a && ref) {
    loom_runtime_array_fill(a, 7);
    loom_rng r;
    loom_rng_seed(&r, 7);
    loom_interp_fill_random(ref, &r);
    loom_interp_array v = loom_runtime_array_view(a);
    char *why = NULL;
    CHECK(loom_interp_compare(&v, ref, 0, 0, &why));
    if (why)
      fprintf(stderr, "%s\n", why);
    free(why);
  }
  loom_runtime_array_free(a);
  loom_interp_array_free(ref);
}

int main(void) {
  test_new_and_free();
  test_refusals();
  test_fill();
  test_fill_float32_large();
  return test_summary("runtime_array");
}
