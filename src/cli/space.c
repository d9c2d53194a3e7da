/* `loom space FILE`: the design spaces the CPU rules generate for a
 * one-function program (after the scripts --block NAME=SCRIPT gives for
 * blocks), each printed as a schedule script; with --sample N,
 * N candidates of each space drawn with fresh decisions and postprocessed,
 * each printed as its trace or the reason it was dropped. */
#include "cli/cli.h"
#include "loom/space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_trace(const loom_trace *t, bool as_json) {
  loom_buf out;
  loom_buf_init(&out);
  if (as_json)
    loom_trace_print_json(t, LOOM_DIALECT_TIR, &out);
  else
    loom_trace_print_py(t, LOOM_DIALECT_TIR, &out);
  if (out.data)
    fputs(out.data, stdout);
  if (as_json)
    putchar('\n');
  loom_buf_free(&out);
}

/* Draws n candidates of space t; returns how many postprocessing dropped,
 * or -1 when out of memory. */
static int sample(const loom_module *m, const loom_trace *t,
                  const loom_target *tg, int n, uint64_t seed, bool as_json,
                  bool quiet) {
  int dropped = 0;
  for (int i = 0; i < n; i++) {
    loom_sched *s = loom_sched_new(m, seed + (uint64_t)i);
    if (!s)
      return -1;
    loom_diag d;
    loom_diag_init(&d);
    loom_status st = loom_trace_apply(t, s, LOOM_REPLAY_RESAMPLE, &d);
    if (st == LOOM_OK)
      st = loom_space_postprocess(s, tg, &d);
    if (st == LOOM_NOMEM) {
      loom_diag_free(&d);
      loom_sched_free(s);
      return -1;
    }
    if (st != LOOM_OK) {
      dropped++;
      if (!quiet)
        printf("# candidate %d: dropped: %s\n", i, d.msg ? d.msg : "?");
    } else if (!quiet) {
      printf("# candidate %d\n", i);
      loom_trace ct = loom_sched_trace(s);
      print_trace(&ct, as_json);
    }
    loom_diag_free(&d);
    loom_sched_free(s);
  }
  return dropped;
}

int cli_space(int argc, char **argv) {
  const char *file = NULL, *spec = NULL;
  long long n_sample = 0, seed = 1;
  bool as_json = false, quiet = false;
  cli_block_rules blocks = {.n = 0};
  int rc = 0;
  for (int i = 0; rc == 0 && i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json"))
      as_json = true;
    else if (!strcmp(a, "--block") && i + 1 < argc)
      rc = cli_block_rule_add(&blocks, "space", argv[++i]);
    else if (!strcmp(a, "--quiet"))
      quiet = true;
    else if (!strcmp(a, "--target") && i + 1 < argc)
      spec = argv[++i];
    else if (!strcmp(a, "--sample") && i + 1 < argc) {
      if (!cli_parse_int(argv[++i], 0, 1000000, &n_sample))
        rc = cli_usage_error("space", "--sample needs a count, not '%s'",
                             argv[i]);
    } else if (!strcmp(a, "--seed") && i + 1 < argc) {
      if (!cli_parse_int(argv[++i], 0, (long long)1 << 62, &seed))
        rc = cli_usage_error("space", "--seed needs an integer, not '%s'",
                             argv[i]);
    } else if (a[0] == '-' && a[1])
      rc = cli_usage_error("space", "unknown option '%s'", a);
    else if (file)
      rc = cli_usage_error("space", "one FILE expected, got '%s' too", a);
    else
      file = a;
  }
  if (rc == 0 && !file)
    rc = cli_usage_error("space", "missing FILE");
  if (rc) {
    cli_block_rules_free(&blocks);
    return rc;
  }
  loom_target tg;
  if ((rc = cli_target("space", spec, &tg))) {
    cli_block_rules_free(&blocks);
    return rc;
  }
  loom_diag d;
  loom_diag_init(&d);
  cli_program p;
  if ((rc = cli_load(file, &p))) {
    loom_diag_free(&d);
    cli_block_rules_free(&blocks);
    return rc;
  }
  loom_arena *a = loom_arena_new();
  loom_trace *spaces = NULL;
  int n_spaces = 0;
  loom_status st = a ? loom_space_generate_with(p.module, &tg, blocks.rules,
                                                blocks.n, a, &spaces,
                                                &n_spaces, &d)
                     : LOOM_NOMEM;
  if (st != LOOM_OK) {
    if (!d.has_error)
      fprintf(stderr, "%s: error: out of memory\n", file);
    cli_block_rules_source(&blocks, file, &p, &d);
    cli_print_diag(&d);
    rc = EXIT_USER;
  }
  for (int k = 0; rc == 0 && k < n_spaces; k++) {
    if (!quiet) {
      printf("# design space %d of %d\n", k + 1, n_spaces);
      print_trace(&spaces[k], as_json);
    }
    if (n_sample == 0)
      continue;
    double t0 = now();
    clock_t c0 = clock();
    int dropped = sample(p.module, &spaces[k], &tg, (int)n_sample,
                         (uint64_t)seed, as_json, quiet);
    double dt = now() - t0;
    double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    if (dropped < 0) {
      fprintf(stderr, "%s: error: out of memory\n", file);
      rc = EXIT_USER;
      break;
    }
    fprintf(stderr,
            "space %d: %lld candidates, %d dropped by postprocessing, "
            "%.1f candidates/s (%.1f per CPU second)\n",
            k + 1, n_sample, dropped, dt > 0 ? (double)n_sample / dt : 0.0,
            cpu > 0 ? (double)n_sample / cpu : 0.0);
  }
  loom_arena_free(a);
  loom_diag_free(&d);
  cli_program_free(&p);
  cli_block_rules_free(&blocks);
  return rc;
}
