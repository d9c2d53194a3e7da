/* The sampling instructions: sample_perfect_tile, sample_partitioned_tile
 * and sample_categorical.
 * Each draws from the schedule's generator unless given a decision, and
 * records what it decided, so that a replay reproduces the schedule. */
#include "schedule/sched_impl.h"

#include <stdio.h>
#include <string.h>

#define MAX_TILES 64

/* Distributes `e` copies of a prime among n slots, uniformly over the
 * compositions e = x_1 + ... + x_n ("stars and bars": n - 1 bars placed
 * among e + n - 1 positions without replacement). */
static void spread_prime(loom_rng *r, int64_t prime, int e, int n,
                         int64_t *tile) {
  int total = e + n - 1;
  int pos[MAX_TILES + 64];
  for (int i = 0; i < total; i++)
    pos[i] = i;
  for (int i = 0; i < n - 1; i++) {
    int j = i + (int)loom_rng_below(r, (uint64_t)(total - i));
    int t = pos[i];
    pos[i] = pos[j];
    pos[j] = t;
  }
  bool is_bar[MAX_TILES + 64] = {false};
  for (int i = 0; i < n - 1; i++)
    is_bar[pos[i]] = true;
  int slot = 0;
  for (int i = 0; i < total; i++) {
    if (is_bar[i])
      slot++;
    else
      tile[slot] *= prime;
  }
}

static void sample_tile(loom_rng *r, int64_t extent, int n, int64_t max_inner,
                        int64_t *tile) {
  for (int attempt = 0; attempt < 100000; attempt++) {
    for (int i = 0; i < n; i++)
      tile[i] = 1;
    int64_t x = extent;
    for (int64_t p = 2; p * p <= x; p++) {
      int e = 0;
      while (x % p == 0) {
        x /= p;
        e++;
      }
      if (e > 0)
        spread_prime(r, p, e < 63 ? e : 63, n, tile);
    }
    if (x > 1)
      tile[loom_rng_below(r, (uint64_t)n)] *= x;
    if (max_inner < 0 || tile[n - 1] <= max_inner)
      return;
  }
  for (int i = 0; i < n; i++)
    tile[i] = 1;
  tile[0] = extent;
}

/* Whether tile meets sample_partitioned_tile's condition: the product of
 * its factors from pos on is a multiple of factor (always, for pos 0 and
 * factor 1: sample_perfect_tile). */
static bool inner_part_ok(const int64_t *tile, int n, int64_t pos,
                          int64_t factor) {
  int64_t prod = 1;
  for (int i = (int)pos; i < n; i++)
    prod = prod * tile[i] % factor;
  return prod % factor == 0;
}

/* The decision as n integers in tile; a refusal when it is not a list of
 * n integers. */
static loom_status read_decision(sched_call *c, int64_t n, int64_t *tile) {
  const loom_tval *dec = &c->decision;
  if (dec->kind != LOOM_TV_LIST)
    return sched_fail(c, "the decision must be a list of integers");
  if (dec->n != n)
    return sched_fail(c, "the decision has %d factors, but n is %lld", dec->n,
                      (long long)n);
  for (int i = 0; i < n; i++) {
    if (dec->items[i].kind != LOOM_TV_INT)
      return sched_fail(c, "the decision must be a list of integers");
    tile[i] = dec->items[i].i;
  }
  return LOOM_OK;
}

/* A tile as a message shows it, "[5, 5]", cut short with "..." past the
 * buffer's room. */
static const char *tile_text(const int64_t *tile, int n, char *buf,
                             size_t size) {
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && at < size; i++) {
    int k = snprintf(buf + at, size - at, "%s%lld", i ? ", " : "[",
                     (long long)tile[i]);
    at += k > 0 ? (size_t)k : 0;
  }
  if (at + 1 < size)
    snprintf(buf + at, size - at, "]");
  else
    memcpy(buf + size - 4, "...", 4);
  return buf;
}

/* The product of the tile's factors when they are all positive and it
 * does not overflow; -1 otherwise. */
static int64_t tile_product(const int64_t *tile, int n) {
  int64_t prod = 1;
  for (int i = 0; i < n; i++) {
    if (tile[i] <= 0 || prod > INT64_MAX / tile[i])
      return -1;
    prod *= tile[i];
  }
  return prod;
}

/* Refuses a decided tile that does not fit its loop: a factor that is not
 * positive (the outermost may be -1, what the sampler records, when the
 * extent is not a constant), a product other than a constant extent, an
 * innermost factor above max_inner (when it is positive). */
static loom_status check_decision(sched_call *c, const int64_t *tile, int n,
                                  const loom_stmt *loop, bool is_const,
                                  int64_t extent, int64_t max_inner) {
  char text[200];
  tile_text(tile, n, text, sizeof text);
  for (int i = 0; i < n; i++)
    if (tile[i] <= 0 && (is_const || i > 0 || tile[i] != -1))
      return sched_fail(c, "factor %d of the decision %s is %lld: every "
                           "factor must be positive%s",
                        i, text, (long long)tile[i],
                        is_const ? "" : " (the outermost may be -1, for a "
                                        "loop whose extent is not a "
                                        "constant)");
  int64_t prod = is_const ? tile_product(tile, n) : extent;
  if (is_const && prod < 0)
    return sched_fail(c, "the decision %s overflows 64 bits, but loop '%s' "
                         "has extent %lld: the factors must multiply to %lld",
                      text, sched_stmt_name(loop), (long long)extent,
                      (long long)extent);
  if (prod != extent)
    return sched_fail(c, "the decision %s multiplies to %lld, but loop '%s' "
                         "has extent %lld: the factors must multiply to %lld",
                      text, (long long)prod, sched_stmt_name(loop),
                      (long long)extent, (long long)extent);
  if (max_inner > 0 && tile[n - 1] > max_inner)
    return sched_fail(c, "the decision %s has innermost factor %lld, but "
                         "max_innermost_factor is %lld: the innermost factor "
                         "must be at most %lld",
                      text, (long long)tile[n - 1], (long long)max_inner,
                      (long long)max_inner);
  return LOOM_OK;
}

/* A decision made for another extent, as the tuner replays it after a
 * mutation changed the loop it was made for: from the innermost factor
 * out, one that does not divide what is left becomes what is left, and
 * the outermost takes the remainder. */
static void repair_decision(int64_t *tile, int n, int64_t extent) {
  if (tile_product(tile, n) == extent)
    return;
  int64_t left = extent;
  for (int i = n - 1; i > 0; i--) {
    if (tile[i] <= 0 || left % tile[i] != 0)
      tile[i] = left;
    left /= tile[i];
  }
  tile[0] = left;
}

/* A fresh tile of a constant extent, drawn by rejection until the factors
 * from pos on multiply to a multiple of factor. */
static void draw_tile(sched_call *c, int64_t extent, int n, int64_t max_inner,
                      int64_t pos, int64_t factor, int64_t *tile) {
  for (int attempt = 0; attempt < 1000; attempt++) {
    sample_tile(&c->s->rng, extent, n, max_inner, tile);
    if (inner_part_ok(tile, n, pos, factor))
      return;
  }
  for (int i = 0; i < n; i++) /* the whole extent innermost always qualifies */
    tile[i] = 1;
  tile[n - 1] = extent;
}

/* The tile an instruction decides: its decision, checked (or, for the
 * tuner, repaired), else a draw; [-1, 1, ..., 1] on an extent that is not
 * a constant. */
static loom_status decide_tile(sched_call *c, const loom_stmt *loop, int n,
                               int64_t max_inner, int64_t pos, int64_t factor,
                               int64_t *tile) {
  int64_t extent;
  bool is_const = loom_ir_is_const_int(loop->u.loop.extent, &extent) &&
                  extent > 0;
  if (is_const && factor > 1 && extent % factor != 0)
    return sched_fail(c, "innerpart_factor %lld does not divide the extent "
                         "%lld of loop '%s'",
                      (long long)factor, (long long)extent,
                      sched_stmt_name(loop));
  if (c->decision.kind != LOOM_TV_NONE) {
    TRY(read_decision(c, n, tile));
    if (!c->repairs_decision)
      TRY(check_decision(c, tile, n, loop, is_const, extent, max_inner));
    else if (is_const)
      repair_decision(tile, n, extent);
  } else if (!is_const) {
    tile[0] = -1;
    for (int i = 1; i < n; i++)
      tile[i] = 1;
  } else {
    draw_tile(c, extent, n, max_inner, pos, factor, tile);
  }
  if (is_const && !inner_part_ok(tile, n, pos, factor))
    return sched_fail(c, "the factors from position %lld on do not multiply "
                         "to a multiple of innerpart_factor %lld",
                      (long long)pos, (long long)factor);
  return LOOM_OK;
}

/* Both tile samplers: n factors of the loop's extent, the innermost at most
 * max_inner (-1: any), those from pos on multiplying to a multiple of
 * factor. The tile is recorded as the decision, and its factors are the
 * outputs. */
static loom_status sample_tiles(sched_call *c, int64_t n, int64_t max_inner,
                                int64_t pos, int64_t factor) {
  if (n < 1 || n > MAX_TILES)
    return sched_fail(c, "n is %lld; it must be between 1 and %d",
                      (long long)n, MAX_TILES);
  if (pos < 0 || pos >= n || factor < 1)
    return sched_fail(c, "partition_pos is %lld and innerpart_factor %lld; "
                         "they must be a factor's position (0 to %lld) and "
                         "positive",
                      (long long)pos, (long long)factor, (long long)n - 1);
  sched_path p = {0};
  TRY(sched_input_loop(c, 0, &p));
  int64_t tile[MAX_TILES];
  loom_status st = decide_tile(c, p.stmts[p.n - 1], (int)n, max_inner, pos,
                               factor, tile);
  loom_tval *items = NULL;
  if (st == LOOM_OK &&
      !(items = loom_arena_alloc(sched_arena(c->s), (size_t)n * sizeof *items)))
    st = sched_nomem(c);
  if (st == LOOM_OK) {
    for (int i = 0; i < n; i++)
      items[i] = loom_tval_int(tile[i]);
    c->decision =
        (loom_tval){.kind = LOOM_TV_LIST, .n = (int)n, .items = items};
  }
  for (int i = 0; i < n && st == LOOM_OK; i++)
    st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_EXPR, .func = p.func,
                                      .value = tile[i]});
  sched_path_free(&p);
  return st;
}

loom_status sched_apply_sample_perfect_tile(sched_call *c) {
  return sample_tiles(c, c->n_attrs >= 1 ? c->attrs[0].i : 0,
                      c->n_attrs >= 2 ? c->attrs[1].i : 16, 0, 1);
}

loom_status sched_apply_sample_partitioned_tile(sched_call *c) {
  return sample_tiles(c, c->n_attrs >= 1 ? c->attrs[0].i : 0, -1,
                      c->n_attrs >= 2 ? c->attrs[1].i : 0,
                      c->n_attrs >= 3 ? c->attrs[2].i : 1);
}

loom_status sched_apply_sample_categorical(sched_call *c) {
  if (c->n_attrs < 2 || c->attrs[0].kind != LOOM_TV_LIST ||
      c->attrs[1].kind != LOOM_TV_LIST)
    return sched_fail(c, "candidates and probs must be lists");
  const loom_tval *cand = &c->attrs[0], *probs = &c->attrs[1];
  if (cand->n != probs->n || cand->n == 0)
    return sched_fail(c, "%d candidates but %d probabilities", cand->n,
                      probs->n);
  double sum = 0;
  for (int i = 0; i < probs->n; i++) {
    const loom_tval *q = &probs->items[i];
    double v = q->kind == LOOM_TV_FLOAT ? q->f : (double)q->i;
    if (cand->items[i].kind != LOOM_TV_INT)
      return sched_fail(c, "candidate %d is not an integer", i);
    if (!(v >= 0))
      return sched_fail(c, "probability %d is negative", i);
    sum += v;
  }
  if (!(sum > 0))
    return sched_fail(c, "the probabilities sum to 0");
  int64_t idx;
  if (c->decision.kind == LOOM_TV_INT) {
    idx = c->decision.i;
    if (idx < 0 || idx >= cand->n)
      return sched_fail(c, "the decision %lld is not an index into the %d "
                           "candidates: it must be 0 to %d",
                        (long long)idx, cand->n, cand->n - 1);
  } else if (c->decision.kind == LOOM_TV_NONE) {
    double u = loom_rng_double(&c->s->rng) * sum, acc = 0;
    idx = cand->n - 1;
    for (int i = 0; i < cand->n; i++) {
      const loom_tval *q = &probs->items[i];
      acc += q->kind == LOOM_TV_FLOAT ? q->f : (double)q->i;
      if (u < acc) {
        idx = i;
        break;
      }
    }
  } else
    return sched_fail(c, "the decision must be an integer index");
  c->decision = loom_tval_int(idx);
  return sched_push_out(c, (sched_rv){.kind = LOOM_RV_EXPR,
                                      .value = cand->items[idx].i});
}
