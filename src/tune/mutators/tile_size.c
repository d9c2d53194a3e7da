/* MutateTileSize: moves a factor between two levels of a perfect tile. Of
 * the SamplePerfectTile decisions with two or more levels and a product of
 * at least 2, one is chosen; then a source level x, a destination y and a
 * divisor d > 1 of tile[x] are chosen uniformly among the moves that keep
 * the innermost level within max_innermost_factor, and tile[x] /= d,
 * tile[y] *= d. The product, the loop's extent, is unchanged. On a GPU
 * the vector length of a cooperative fetch is a candidate too, chosen as
 * often as a tile and drawn again as MutateUnroll draws a depth. */
#include "tune/mutators/mutators.h"

#include <string.h>

#define MAX_LEVELS 16

/* The decision of inst as integers; false when it is not a usable tile. */
static bool read_tile(const loom_inst *inst, int64_t *tile, int *n) {
  const loom_tval *dec = &inst->decision;
  if (inst->kind != LOOM_INST_SAMPLE_PERFECT_TILE || dec->kind != LOOM_TV_LIST ||
      dec->n < 2 || dec->n > MAX_LEVELS)
    return false;
  int64_t prod = 1;
  for (int i = 0; i < dec->n; i++) {
    if (dec->items[i].kind != LOOM_TV_INT || dec->items[i].i < 1)
      return false;
    tile[i] = dec->items[i].i;
    prod = prod > INT64_MAX / tile[i] ? INT64_MAX : prod * tile[i];
  }
  *n = dec->n;
  return prod >= 2;
}

static int64_t max_innermost(const loom_inst *inst) {
  return inst->n_attrs >= 2 && inst->attrs[1].kind == LOOM_TV_INT && inst->attrs[1].i > 0
             ? inst->attrs[1].i
             : INT64_MAX;
}

/* The divisors greater than 1 of v, at most cap of them. */
static int divisors(int64_t v, int64_t *out, int cap) {
  int n = 0;
  for (int64_t f = 2; f <= v / f && n < cap; f++)
    if (v % f == 0) {
      out[n++] = f;
      if (f != v / f && n < cap)
        out[n++] = v / f;
    }
  if (v > 1 && n < cap)
    out[n++] = v;
  return n;
}

#define MAX_DIVISORS 512

/* Visits the legal moves of a tile in a fixed order: the one numbered
 * `want` is stored in *x, *y, *d; returns how many there are. */
static int64_t moves(const int64_t *tile, int n, int64_t max_inner, int64_t want,
                     int *x, int *y, int64_t *d) {
  int64_t count = 0, divs[MAX_DIVISORS];
  for (int i = 0; i < n; i++) {
    int n_divs = divisors(tile[i], divs, MAX_DIVISORS);
    for (int k = 0; k < n_divs; k++)
      for (int j = 0; j < n; j++) {
        if (j == i || (j == n - 1 && tile[j] > max_inner / divs[k]))
          continue;
        if (count++ == want) {
          *x = i;
          *y = j;
          *d = divs[k];
        }
      }
  }
  return count;
}

static bool is_fetch_key(const char *key) {
  return key && !strcmp(key, "meta_schedule.cooperative_fetch");
}

loom_status mutate_tile_size(const loom_trace *t, const loom_target *tg,
                             loom_rng *rng, loom_arena *a, loom_trace *out) {
  int64_t tile[MAX_LEVELS];
  int n, x = 0, y = 0, n_cands = 0;
  int64_t d = 1;
  for (int i = 0; i < t->n_insts; i++)
    n_cands += read_tile(t->insts[i], tile, &n) &&
               moves(tile, n, max_innermost(t->insts[i]), -1, &x, &y, &d) > 0;
  int *fetches = loom_arena_alloc(a, (size_t)(t->n_insts ? t->n_insts : 1) * sizeof *fetches);
  if (!fetches)
    return LOOM_NOMEM;
  int n_fetches = mutator_categoricals(t, is_fetch_key, fetches);
  if (n_cands + n_fetches == 0)
    return LOOM_ERROR;
  int pick = (int)loom_rng_below(rng, (uint64_t)(n_cands + n_fetches));
  if (pick >= n_cands)
    return mutator_redraw_categorical(t, is_fetch_key, rng, a, out);
  for (int i = 0; i < t->n_insts; i++) {
    const loom_inst *inst = t->insts[i];
    if (!read_tile(inst, tile, &n))
      continue;
    int64_t max_inner = max_innermost(inst);
    int64_t n_moves = moves(tile, n, max_inner, -1, &x, &y, &d);
    if (n_moves == 0 || pick-- > 0)
      continue;
    moves(tile, n, max_inner, (int64_t)loom_rng_below(rng, (uint64_t)n_moves), &x, &y, &d);
    tile[x] /= d;
    tile[y] *= d;
    loom_tval *items = loom_arena_alloc(a, (size_t)n * sizeof *items);
    if (!items)
      return LOOM_NOMEM;
    for (int k = 0; k < n; k++)
      items[k] = loom_tval_int(tile[k]);
    loom_inst changed = *inst;
    changed.decision = (loom_tval){.kind = LOOM_TV_LIST, .n = n, .items = items};
    return mutator_replace(t, i, &changed, a, out);
  }
  return LOOM_ERROR;
}
