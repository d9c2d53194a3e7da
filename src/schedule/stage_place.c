/* Where a copy stage (cache_read / cache_write, reindex_cache_read /
 * reindex_cache_write) goes in its scope, as TVM's CacheLocDetector places
 * it, and the scope's body rebuilt with the stage there and some blocks
 * replaced. */
#include "schedule/sched_impl.h"

#include <string.h>

typedef struct locator {
  const loom_stmt *writer;
  loom_stmt *const *related;
  int n_related;
  bool seen_writer, seen_related;
  int pos;
  loom_stmt *seq; /* the sequence pos indexes */
  loom_stmt *loc; /* a loop, or NULL for the scope */
} locator;

static bool is_related(const locator *l, const loom_stmt *s) {
  for (int i = 0; i < l->n_related; i++)
    if (l->related[i] == s)
      return true;
  return false;
}

static void locate(locator *l, loom_stmt *s) {
  if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
    if (s == l->writer)
      l->seen_writer = true;
    else if (is_related(l, s))
      l->seen_related = true;
    return;
  }
  if (s->kind == LOOM_STMT_SEQ) {
    bool before = l->seen_writer;
    l->seen_writer = false;
    for (int i = 0; i < s->u.seq.n_stmts && l->pos < 0; i++) {
      locate(l, s->u.seq.stmts[i]);
      if (l->seen_writer && l->seen_related && l->pos < 0) {
        l->pos = i;
        l->seq = s;
        break;
      }
      if (l->seen_related) {
        l->seen_writer = l->seen_writer || before;
        break;
      }
    }
    l->seen_writer = l->seen_writer || before;
    return;
  }
  /* Only a loop around the sequence found is loc: not one in the else
   * branch of the if whose then branch holds it. */
  bool had_pos = l->pos >= 0;
  loom_stmt *buf[4], **kids;
  int n = sched_kids_of(s, &kids, buf);
  for (int i = 0; i < n && l->pos < 0; i++)
    locate(l, kids[i]);
  if (s->kind == LOOM_STMT_FOR && !had_pos && l->pos >= 0 && !l->loc)
    l->loc = s;
}

bool sched_place_stage(loom_stmt *body, const loom_stmt *writer,
                       loom_stmt *const *related, int n_related,
                       sched_place *out) {
  locator l = {writer, related, n_related, false, false, -1, NULL, NULL};
  locate(&l, body);
  if (l.pos < 0)
    return false;
  out->at = l.seq ? l.seq : body;
  out->pos = l.pos;
  out->loc = l.loc;
  return true;
}

/* Puts stage at position pos of body (a sequence, or one statement). */
static loom_stmt *insert_at(loom_arena *a, loom_stmt *body, int pos,
                            loom_stmt *stage) {
  bool is_seq = body->kind == LOOM_STMT_SEQ;
  int n = is_seq ? body->u.seq.n_stmts : 1;
  if (pos > n)
    pos = n;
  if (!is_seq)
    pos = pos == 0 ? 0 : 1;
  loom_stmt **items = loom_arena_alloc(a, (size_t)(n + 1) * sizeof *items);
  loom_stmt *seq = loom_ir_stmt(a, LOOM_STMT_SEQ, body->loc);
  if (!items || !seq)
    return NULL;
  for (int i = 0, k = 0; i <= n; i++)
    items[i] = i == pos ? stage : is_seq ? body->u.seq.stmts[k++] : body;
  seq->u.seq.stmts = items;
  seq->u.seq.n_stmts = n + 1;
  return seq;
}

typedef struct rewriter {
  loom_arena *a;
  loom_stmt *const *olds; /* block realizes to replace */
  loom_stmt *const *news;
  int n;
  const loom_stmt *at; /* the statement the stage goes into, at pos */
  int pos;
  loom_stmt *stage;
  bool nomem;
} rewriter;

static loom_stmt *rewrite(rewriter *r, loom_stmt *s);

/* s with the blocks under it replaced. */
static loom_stmt *rewrite_under(rewriter *r, loom_stmt *s) {
  if (s->kind == LOOM_STMT_BLOCK_REALIZE) {
    for (int i = 0; i < r->n; i++)
      if (r->olds[i] == s)
        return r->news[i];
    return s;
  }
  loom_stmt *cur = s;
  if (s->kind == LOOM_STMT_SEQ) {
    int n = s->u.seq.n_stmts;
    loom_stmt **items = NULL;
    for (int i = 0; i < n; i++) {
      loom_stmt *y = rewrite(r, s->u.seq.stmts[i]);
      if (y != s->u.seq.stmts[i] && !items) {
        items = loom_arena_alloc(r->a, (size_t)n * sizeof *items);
        loom_stmt *c = loom_arena_alloc(r->a, sizeof *c);
        if (!items || !c) {
          r->nomem = true;
          return s;
        }
        memcpy(items, s->u.seq.stmts, (size_t)n * sizeof *items);
        *c = *s;
        c->u.seq.stmts = items;
        cur = c;
      }
      if (items)
        items[i] = y;
    }
  } else {
    loom_stmt *kids[4];
    int n = sched_children(s, kids, 4);
    for (int i = 0; i < n && cur; i++) {
      loom_stmt *y = rewrite(r, kids[i]);
      if (y != kids[i])
        cur = sched_with_child(r->a, cur, kids[i], y);
    }
    if (!cur) {
      r->nomem = true;
      return s;
    }
  }
  return cur;
}

/* s with the blocks replaced and, when s is r->at, the stage inserted. */
static loom_stmt *rewrite(rewriter *r, loom_stmt *s) {
  loom_stmt *cur = rewrite_under(r, s);
  if (s != r->at)
    return cur;
  loom_stmt *with_stage = insert_at(r->a, cur, r->pos, r->stage);
  if (!with_stage)
    r->nomem = true;
  return with_stage ? with_stage : cur;
}

loom_stmt *sched_insert_stage(loom_arena *a, loom_stmt *body,
                              const sched_place *at, loom_stmt *stage,
                              loom_stmt *const *olds, loom_stmt *const *news,
                              int n) {
  rewriter r = {a, olds, news, n, at->at, at->pos, stage, false};
  loom_stmt *out = rewrite(&r, body);
  return r.nomem ? NULL : out;
}
