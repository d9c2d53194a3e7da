/* Pointer -> int hash map with linear probing (Knuth, TAOCP 6.4, algorithm L),
 * sized to powers of two and kept at most half full so probes stay short. */
#include "loom/base.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CAP 64

void loom_ptrmap_init(loom_ptrmap *m) { memset(m, 0, sizeof *m); }

void loom_ptrmap_free(loom_ptrmap *m) {
  free(m->keys);
  free(m->vals);
  loom_ptrmap_init(m);
}

void loom_ptrmap_clear(loom_ptrmap *m) {
  if (m->len)
    memset(m->keys, 0, sizeof *m->keys * m->cap);
  m->len = 0;
}

/* Fibonacci hashing of the address; the low bits of arena pointers are
 * always zero, the multiply spreads the rest over the whole word. */
static size_t slot_of(const void *key, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(x >> 32) & (cap - 1);
}

int loom_ptrmap_get(const loom_ptrmap *m, const void *key) {
  if (!m->cap)
    return -1;
  for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key)
      return m->vals[i];
    if (!m->keys[i])
      return -1;
  }
}

/* Places key without growing; the caller guarantees a free slot. */
static void place(const void **keys, int *vals, size_t cap, const void *key,
                  int val, size_t *len) {
  size_t i = slot_of(key, cap);
  while (keys[i] && keys[i] != key)
    i = (i + 1) & (cap - 1);
  if (!keys[i])
    (*len)++;
  keys[i] = key;
  vals[i] = val;
}

static loom_status grow(loom_ptrmap *m) {
  size_t cap = m->cap ? m->cap * 2 : MIN_CAP;
  const void **keys = calloc(cap, sizeof *keys);
  int *vals = malloc(cap * sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return LOOM_NOMEM;
  }
  size_t len = 0;
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i])
      place(keys, vals, cap, m->keys[i], m->vals[i], &len);
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  return LOOM_OK;
}

loom_status loom_ptrmap_put(loom_ptrmap *m, const void *key, int val) {
  if ((m->len + 1) * 2 > m->cap)
    TRY(grow(m));
  place(m->keys, m->vals, m->cap, key, val, &m->len);
  return LOOM_OK;
}
