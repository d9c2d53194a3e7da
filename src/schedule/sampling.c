/* The sampling instructions: sample_perfect_tile, sample_partitioned_tile
 * and sample_categorical.
 * Each draws from the schedule's generator unless given a decision, and
 * records what it decided, so that a replay reproduces the schedule. */
#include "schedule/sched_impl.h"

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

/* Both tile samplers: n factors of the loop's extent, the innermost at most
 * max_inner (-1: any), those from pos on multiplying to a multiple of
 * factor. A decision is checked against these, a missing one drawn by
 * rejection. */
static loom_status sample_tiles(sched_call *c, int64_t n, int64_t max_inner,
                                int64_t pos, int64_t factor) {
  sched_path p = {0};
  TRY(sched_input_loop(c, 0, &p));
  const loom_stmt *loop = p.stmts[p.n - 1];
  loom_status st = LOOM_OK;
  int64_t tile[MAX_TILES], extent;
  if (n < 1 || n > MAX_TILES) {
    st = sched_fail(c, "n is %lld; it must be between 1 and %d", (long long)n,
                    MAX_TILES);
    goto out;
  }
  if (pos < 0 || pos >= n || factor < 1) {
    st = sched_fail(c, "partition_pos is %lld and innerpart_factor %lld; "
                       "they must be a factor's position (0 to %lld) and "
                       "positive",
                    (long long)pos, (long long)factor, (long long)n - 1);
    goto out;
  }
  bool is_const = loom_ir_is_const_int(loop->u.loop.extent, &extent) &&
                  extent > 0;
  if (is_const && factor > 1 && extent % factor != 0) {
    st = sched_fail(c, "innerpart_factor %lld does not divide the extent "
                       "%lld of loop '%s'",
                    (long long)factor, (long long)extent,
                    sched_stmt_name(loop));
    goto out;
  }
  const loom_tval *dec = &c->decision;
  if (dec->kind == LOOM_TV_LIST) {
    if (dec->n != n) {
      st = sched_fail(c, "the decision has %d factors, but n is %lld", dec->n,
                      (long long)n);
      goto out;
    }
    for (int i = 0; i < n; i++) {
      if (dec->items[i].kind != LOOM_TV_INT) {
        st = sched_fail(c, "the decision must be a list of integers");
        goto out;
      }
      tile[i] = dec->items[i].i;
    }
    /* A decision made for another extent is repaired: from the innermost
     * factor out, one that does not divide what is left becomes what is
     * left, and the outermost takes the remainder. */
    if (is_const) {
      int64_t prod = 1;
      bool ok = true;
      for (int i = 0; i < n; i++) {
        ok = ok && tile[i] > 0 && prod <= extent / tile[i];
        if (ok)
          prod *= tile[i];
      }
      if (!ok || prod != extent) {
        int64_t left = extent;
        for (int i = (int)n - 1; i > 0; i--) {
          if (tile[i] <= 0 || left % tile[i] != 0)
            tile[i] = left;
          left /= tile[i];
        }
        tile[0] = left;
      }
    }
  } else if (dec->kind != LOOM_TV_NONE) {
    st = sched_fail(c, "the decision must be a list of integers");
    goto out;
  } else if (!is_const) {
    tile[0] = -1;
    for (int i = 1; i < n; i++)
      tile[i] = 1;
  } else {
    bool found = false;
    for (int attempt = 0; attempt < 1000 && !found; attempt++) {
      sample_tile(&c->s->rng, extent, (int)n, max_inner, tile);
      found = inner_part_ok(tile, (int)n, pos, factor);
    }
    if (!found) { /* the whole extent innermost always qualifies */
      for (int i = 0; i < n; i++)
        tile[i] = 1;
      tile[n - 1] = extent;
    }
  }
  if (is_const && !inner_part_ok(tile, (int)n, pos, factor)) {
    st = sched_fail(c, "the factors from position %lld on do not multiply "
                       "to a multiple of innerpart_factor %lld",
                    (long long)pos, (long long)factor);
    goto out;
  }
  loom_arena *a = sched_arena(c->s);
  loom_tval *items = loom_arena_alloc(a, (size_t)n * sizeof *items);
  if (!items) {
    st = sched_nomem(c);
    goto out;
  }
  for (int i = 0; i < n; i++)
    items[i] = loom_tval_int(tile[i]);
  c->decision = (loom_tval){.kind = LOOM_TV_LIST, .n = (int)n, .items = items};
  for (int i = 0; i < n && st == LOOM_OK; i++)
    st = sched_push_out(c, (sched_rv){.kind = LOOM_RV_EXPR, .func = p.func,
                                      .value = tile[i]});
out:
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
      return sched_fail(c, "decision %lld is not an index into the %d "
                           "candidates",
                        (long long)idx, cand->n);
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
