/* Records as JSON lines, one object per measurement:
 *   {"workload": SCRIPT, "target": T, "trace": TRACE, "latencies_ms": [...],
 *    "error": null | MESSAGE, "created": UNIX_SECONDS}
 * Export writes every record; import reads such lines (from this or another
 * database) and commits them, with their workloads, in one transaction, or
 * nothing when a line is malformed. */
#include "db/db_impl.h"
#include "loom/script.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

loom_status loom_db_export_jsonl(loom_db *db, loom_buf *out, loom_diag *d) {
  loom_db_workloads ws;
  loom_db_records rs;
  TRY(loom_db_list_workloads(db, &ws, d));
  loom_status st = loom_db_all_records(db, 0, &rs, d);
  for (int i = 0; st == LOOM_OK && i < rs.n; i++) {
    const loom_db_record *r = &rs.items[i];
    const char *script = NULL;
    for (int k = 0; k < ws.n && !script; k++)
      if (ws.items[k].id == r->workload)
        script = ws.items[k].script;
    loom_buf_puts(out, "{\"workload\": ");
    loom_json_print_str(script, out);
    loom_buf_puts(out, ", \"target\": ");
    loom_json_print_str(r->target, out);
    /* The trace is one line of JSON; a newline after it would end the record. */
    size_t n = strlen(r->trace);
    while (n > 0 && strchr(" \t\r\n", r->trace[n - 1]))
      n--;
    loom_buf_puts(out, ", \"trace\": ");
    loom_buf_putn(out, r->trace, n);
    loom_buf_puts(out, ", \"latencies_ms\": [");
    for (int k = 0; k < r->n_latencies; k++)
      loom_buf_printf(out, "%s%.17g", k ? ", " : "", r->latencies_ms[k]);
    loom_buf_puts(out, "], \"error\": ");
    if (r->error)
      loom_json_print_str(r->error, out);
    else
      loom_buf_puts(out, "null");
    loom_buf_printf(out, ", \"created\": %" PRId64 "}\n", r->created);
  }
  if (st == LOOM_OK)
    loom_db_records_free(&rs);
  loom_db_workloads_free(&ws);
  return st == LOOM_OK && out->has_failed ? LOOM_NOMEM : st;
}

static const loom_json *field(const loom_json *obj, const char *key) {
  for (int i = 0; i < obj->n; i++)
    if (!strcmp(obj->keys[i], key))
      return &obj->items[i];
  return NULL;
}

/* One line into a record (strings in a); the workload is committed. */
static loom_status import_line(loom_db *db, loom_arena *a, const loom_json *v,
                               const char *file, loom_db_record *r, loom_diag *d) {
  if (v->kind != LOOM_JSON_DICT)
    return loom_diag_error(d, v->loc, "a record line is a JSON object");
  const loom_json *w = field(v, "workload"), *t = field(v, "target"),
                  *tr = field(v, "trace"), *lat = field(v, "latencies_ms"),
                  *err = field(v, "error"), *when = field(v, "created");
  if (!w || w->kind != LOOM_JSON_STR)
    return loom_diag_error(d, v->loc, "the record needs \"workload\": the "
                           "function's TVMScript");
  if (!t || t->kind != LOOM_JSON_STR)
    return loom_diag_error(d, v->loc, "the record needs \"target\": a string");
  if (!tr || tr->kind != LOOM_JSON_LIST || tr->n != 2 ||
      tr->items[0].kind != LOOM_JSON_LIST || tr->items[1].kind != LOOM_JSON_LIST)
    return loom_diag_error(d, tr ? tr->loc : v->loc, "the record needs \"trace\": "
                           "[instructions, decisions] as TVM writes it");
  if (!lat || lat->kind != LOOM_JSON_LIST)
    return loom_diag_error(d, v->loc, "the record needs \"latencies_ms\": a list");
  double *ms = loom_arena_alloc(a, (size_t)(lat->n + 1) * sizeof *ms);
  if (!ms)
    return LOOM_NOMEM;
  for (int i = 0; i < lat->n; i++) {
    const loom_json *x = &lat->items[i];
    if ((x->kind != LOOM_JSON_FLOAT && x->kind != LOOM_JSON_INT) ||
        (x->kind == LOOM_JSON_FLOAT ? x->f : (double)x->i) <= 0)
      return loom_diag_error(d, x->loc, "a latency is a positive number of ms");
    ms[i] = x->kind == LOOM_JSON_FLOAT ? x->f : (double)x->i;
  }
  bool has_error = err && err->kind == LOOM_JSON_STR;
  if (!has_error && lat->n == 0)
    return loom_diag_error(d, v->loc, "a record has latencies or an \"error\"");
  loom_module *m;
  loom_diag wd;
  loom_diag_init(&wd);
  loom_status st = loom_script_read(w->s, strlen(w->s), file, a, &m, &wd);
  if (st == LOOM_OK && m->n_funcs != 1)
    st = LOOM_ERROR;
  if (st != LOOM_OK) {
    loom_diag_error(d, w->loc, "the workload is not one readable prim func%s%s",
                    wd.msg ? ": " : "", wd.msg ? wd.msg : "");
    loom_diag_free(&wd);
    return LOOM_ERROR;
  }
  loom_diag_free(&wd);
  loom_buf trace;
  loom_buf_init(&trace);
  loom_json_print(tr, &trace);
  *r = (loom_db_record){.target = t->s, .latencies_ms = ms, .n_latencies = lat->n,
                        .error = has_error ? err->s : NULL,
                        .created = when && when->kind == LOOM_JSON_INT ? when->i : 0,
                        .trace = trace.data ? loom_arena_strdup(a, trace.data) : NULL};
  loom_buf_free(&trace);
  if (!r->trace)
    return LOOM_NOMEM;
  return db_workload(db, m->funcs[0], true, &r->workload, d);
}

loom_status loom_db_import_jsonl(loom_db *db, const char *text, size_t len,
                                 const char *file, int *n_imported, loom_diag *d) {
  loom_arena *a = loom_arena_new();
  loom_db_record *rs = NULL;
  int n = 0, cap = 0, line = 1;
  loom_status st = a ? db_begin(db, d) : LOOM_NOMEM;
  if (st != LOOM_OK) {
    loom_arena_free(a);
    return st;
  }
  loom_diag_set_source(d, text, len);
  for (size_t at = 0; st == LOOM_OK && at < len; line++) {
    const char *p = text + at, *nl = memchr(p, '\n', len - at);
    size_t n_line = nl ? (size_t)(nl - p) : len - at;
    at += n_line + 1;
    if (strspn(p, " \t\r") >= n_line)
      continue; /* blank */
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      loom_db_record *q = realloc(rs, (size_t)cap * sizeof *q);
      if (!q) {
        st = LOOM_NOMEM;
        break;
      }
      rs = q;
    }
    /* Parsed on its own, the line's locations count from 1: shift them. */
    loom_json v;
    loom_diag ld;
    loom_diag_init(&ld);
    st = loom_json_parse(a, p, n_line, file, &v, &ld);
    if (st == LOOM_OK)
      st = import_line(db, a, &v, file, &rs[n], &ld);
    if (st == LOOM_ERROR)
      loom_diag_error(d, (loom_loc){file, line, ld.loc.col}, "%s", ld.msg);
    loom_diag_free(&ld);
    n += st == LOOM_OK;
  }
  if (st == LOOM_OK)
    st = db_insert_records(db, rs, n, d);
  st = st == LOOM_OK ? db_commit(db, d) : (db_rollback(db), st);
  *n_imported = st == LOOM_OK ? n : 0;
  free(rs);
  loom_arena_free(a);
  return st;
}
