/* `loom db list|show ID|export|import FILE [--db PATH]`: the tuning
 * database. list: one line per workload (id, hash, function signature,
 * records, failures, best mean latency); show ID: the workload's TVMScript
 * and its records, fastest first; export: every record as a JSON line;
 * import: such lines into the database, all or none. */
#include "cli/cli.h"

#include "loom/db.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The "def main(...):" line of a stored script, for one-line listings. */
static void print_signature(const char *script) {
  const char *p = strstr(script, "def ");
  const char *end = p ? strchr(p, '\n') : NULL;
  if (!p)
    fputs("?", stdout);
  else
    fwrite(p + 4, 1, end ? (size_t)(end - p - 4) : strlen(p + 4), stdout);
}

static void print_latencies(const loom_db_record *r) {
  putchar('[');
  for (int i = 0; i < r->n_latencies; i++)
    printf("%s%.17g", i ? ", " : "", r->latencies_ms[i]);
  putchar(']');
}

static int list(loom_db *db, loom_diag *d) {
  loom_db_workloads ws;
  if (loom_db_list_workloads(db, &ws, d) != LOOM_OK)
    return EXIT_USER;
  for (int i = 0; i < ws.n; i++) {
    const loom_db_workload_info *w = &ws.items[i];
    printf("%" PRId64 "  %016" PRIx64 "  ", w->id, w->hash);
    print_signature(w->script);
    printf("  records=%d failures=%d", w->n_records, w->n_failures);
    if (w->n_records > w->n_failures)
      printf(" best=%.6f ms", w->best_ms);
    putchar('\n');
  }
  loom_db_workloads_free(&ws);
  return 0;
}

static int show(loom_db *db, int64_t id, loom_diag *d) {
  loom_db_workloads ws;
  if (loom_db_list_workloads(db, &ws, d) != LOOM_OK)
    return EXIT_USER;
  const loom_db_workload_info *w = NULL;
  for (int i = 0; i < ws.n; i++)
    if (ws.items[i].id == id)
      w = &ws.items[i];
  int rc = 0;
  loom_db_records top;
  if (!w) {
    fprintf(stderr, "loom db: no workload %" PRId64 " (see loom db list)\n", id);
    rc = EXIT_USER;
  } else if (loom_db_top_k(db, id, NULL, 1 << 30, &top, d) != LOOM_OK) {
    rc = EXIT_USER;
  } else {
    printf("# workload %" PRId64 ", hash %016" PRIx64 "\n%s\n", w->id, w->hash, w->script);
    for (int i = 0; i < top.n; i++) {
      printf("# record %" PRId64 " on %s: ", top.items[i].id, top.items[i].target);
      print_latencies(&top.items[i]);
      printf(" ms\n%s\n", top.items[i].trace);
    }
    loom_db_records_free(&top);
  }
  loom_db_workloads_free(&ws);
  return rc;
}

static int export_all(loom_db *db, loom_diag *d) {
  loom_buf out;
  loom_buf_init(&out);
  loom_status st = loom_db_export_jsonl(db, &out, d);
  if (st == LOOM_OK && out.data)
    fputs(out.data, stdout);
  else if (st == LOOM_NOMEM)
    fprintf(stderr, "loom db: out of memory\n");
  loom_buf_free(&out);
  return st == LOOM_OK ? 0 : EXIT_USER;
}

static int import_file(loom_db *db, const char *path, loom_diag *d) {
  char *text;
  size_t len;
  if (loom_read_file(path, &text, &len, d) != LOOM_OK)
    return EXIT_USAGE;
  int n = 0;
  loom_status st = loom_db_import_jsonl(db, text, len, path, &n, d);
  if (st == LOOM_OK)
    fprintf(stderr, "loom db: imported %d records from %s\n", n, path);
  else if (st == LOOM_NOMEM)
    fprintf(stderr, "loom db: out of memory\n");
  if (st != LOOM_OK && d->has_error) {
    cli_print_diag(d);
    loom_diag_free(d);
    loom_diag_init(d);
  }
  free(text);
  return st == LOOM_OK ? 0 : EXIT_USER;
}

int cli_db(int argc, char **argv) {
  const char *path = "loom.db", *action = NULL, *arg = NULL;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--db")) {
      if (i + 1 >= argc)
        return cli_usage_error("db", "--db needs a path");
      path = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return cli_usage_error("db", "unknown option '%s'", argv[i]);
    } else if (!action) {
      action = argv[i];
    } else if (!arg) {
      arg = argv[i];
    } else {
      return cli_usage_error("db", "unexpected argument '%s'", argv[i]);
    }
  }
  if (!action)
    return cli_usage_error("db", "missing action (list, show, export or import)");
  bool is_show = !strcmp(action, "show"), is_import = !strcmp(action, "import");
  if (strcmp(action, "list") && !is_show && !is_import && strcmp(action, "export"))
    return cli_usage_error("db", "unknown action '%s' (list, show, export or import)",
                           action);
  char *end = NULL;
  long long id = arg && is_show ? strtoll(arg, &end, 10) : 0;
  if (is_show && (!arg || *end || id <= 0))
    return cli_usage_error("db", "show needs a workload id (see loom db list)");
  if (is_import && !arg)
    return cli_usage_error("db", "import needs a FILE of JSON lines (as export writes)");
  if (!is_show && !is_import && arg)
    return cli_usage_error("db", "unexpected argument '%s'", arg);
  loom_diag d;
  loom_diag_init(&d);
  loom_db *db;
  int rc = EXIT_USER;
  if (loom_db_open(path, &db, &d) == LOOM_OK) {
    rc = is_show ? show(db, id, &d) : is_import ? import_file(db, arg, &d)
         : action[0] == 'l' ? list(db, &d) : export_all(db, &d);
    loom_db_close(db);
  }
  if (d.has_error)
    cli_print_diag(&d);
  loom_diag_free(&d);
  return rc;
}
