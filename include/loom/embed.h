/* Embedding: libloom for other languages. A flat API of opaque handles,
 * text and JSON, so that a binding (python/, through ctypes) needs no
 * knowledge of Loom's structs beyond loom_diag: modules read from TVMScript,
 * schedules driven by script lines, module passes, built kernels called on
 * the caller's memory, and tuning with a progress callback.
 *
 * Strings returned as `char *` are the caller's, freed with loom_embed_free.
 * Every fallible call fills a loom_diag (base.h) the caller initialized; its
 * locations point into the text the caller passed, so render it before that
 * text is gone. */
#ifndef LOOM_EMBED_H
#define LOOM_EMBED_H

#include <stdbool.h>

#include "loom/base.h"
#include "loom/ir.h"
#include "loom/script.h"

typedef struct loom_embed_module loom_embed_module;
typedef struct loom_embed_sched loom_embed_sched;
typedef struct loom_embed_built loom_embed_built;

LOOM_API void loom_embed_free(LOOM_TAKE void *p);

/* ---- modules ------------------------------------------------------------- */

/* A module read from text[0..len) (either spelling; see script.h), which
 * owns a copy of the text and its nodes. NULL with d filled when the text
 * is not a program (or memory ran out). */
LOOM_API LOOM_GIVE loom_embed_module *
loom_embed_read(const char *text, size_t len, const char *file, loom_diag *d);
LOOM_API void loom_embed_module_free(LOOM_TAKE loom_embed_module *m);
LOOM_API const loom_module *loom_embed_module_ir(const loom_embed_module *m);
/* Canonical TVMScript; NULL when out of memory. */
LOOM_API LOOM_GIVE char *loom_embed_module_script(const loom_embed_module *m,
                                                  loom_dialect dialect);
/* The functions and what calling them takes, as JSON:
 *   [{"name": "mm", "params": [{"name": "A", "dtype": "float32",
 *     "shape": [128, "n"], "written": false}, {"name": "n", "dtype": "int32",
 *     "shape": null, "written": false}, ...]}, ...]
 * A shape holds an integer per constant dimension and the variable's name
 * for a symbolic one; a scalar parameter has shape null; "written" says
 * whether the function stores to the buffer. NULL when out of memory. */
LOOM_API LOOM_GIVE char *loom_embed_module_signature(const loom_embed_module *m);
/* Structural equality, modulo names of variables and buffers. */
LOOM_API bool loom_embed_module_equal(const loom_embed_module *a,
                                      const loom_embed_module *b);

/* ---- schedules ----------------------------------------------------------- */

/* A schedule of m (borrowed: m must outlive it). NULL when out of memory. */
LOOM_API LOOM_GIVE loom_embed_sched *
loom_embed_sched_new(const loom_embed_module *m, uint64_t seed);
/* A copy with the same module and trace; its generator forked from s's. */
LOOM_API LOOM_GIVE loom_embed_sched *loom_embed_sched_copy(loom_embed_sched *s);
LOOM_API void loom_embed_sched_free(LOOM_TAKE loom_embed_sched *s);
/* Runs schedule-script lines on s (loom_sched_run_script): earlier outputs
 * are named as the trace prints them, b<k>, l<k> and v<k>. */
LOOM_API loom_status loom_embed_sched_run(loom_embed_sched *s, const char *text,
                                          size_t len, const char *file,
                                          loom_diag *d);
/* The instructions applied so far. */
LOOM_API int loom_embed_sched_length(const loom_embed_sched *s);
/* The outputs of instruction i (random-variable numbers, -1 for a dropped
 * one) into ids[0..max); returns how many it has. */
LOOM_API int loom_embed_sched_outputs(const loom_embed_sched *s, int i, int *ids,
                                      int max);
/* Whether instruction method `method` gives its outputs as a list
 * (`l1, l2 = sch.split(...)`): 1 yes, 0 no, -1 when there is no such
 * method. */
LOOM_API int loom_embed_method_is_list(const char *method);
/* The kind of random variable rv: 'b', 'l' or 'v'; 0 when there is none. */
LOOM_API int loom_embed_sched_rv_kind(const loom_embed_sched *s, int rv);
/* The value of a sampled ('v') random variable. */
LOOM_API int64_t loom_embed_sched_rv_value(const loom_embed_sched *s, int rv);
/* The trace as a script (json false) or TVM's JSON record. */
LOOM_API LOOM_GIVE char *loom_embed_sched_trace(const loom_embed_sched *s,
                                                bool json, loom_dialect dialect);
/* The module as scheduled so far, a module of its own. */
LOOM_API LOOM_GIVE loom_embed_module *
loom_embed_sched_module(const loom_embed_sched *s, loom_diag *d);

/* ---- module passes --------------------------------------------------------- */

/* m through the module pipeline `pipeline` ("dispatch,apply-db,default",
 * tune.h) for target (its textual form; NULL: this machine), reading the
 * tuning database at db (NULL: none). *explain (when not NULL) gets JSON
 * [{"func": ..., "pass": ... or null, "why": ...}, ...]. */
LOOM_API LOOM_GIVE loom_embed_module *
loom_embed_compile(const loom_embed_module *m, const char *target,
                   const char *pipeline, const char *db, char **explain,
                   loom_diag *d);

/* ---- built kernels ----------------------------------------------------------- */

/* Every function of m built by the C backend for target (NULL: this
 * machine; only cpu targets). Fails with d naming the function the backend
 * or the compiler refused. */
LOOM_API LOOM_GIVE loom_embed_built *
loom_embed_build(const loom_embed_module *m, const char *target, loom_diag *d);
LOOM_API void loom_embed_built_free(LOOM_TAKE loom_embed_built *b);
/* Calls function i (in the module's order) with the calling convention of
 * codegen.h: args[p] the data of buffer parameter p or a pointer to an
 * int64_t or double for a scalar, shapes[p] the shape of buffer parameter
 * p. Returns what the kernel returns: 0; -1 an assertion of the program
 * failed; -2 parameters disagree on a symbolic dimension; -3 out of memory;
 * -4 a library it calls (BLAS, oneDNN) cannot be opened; -5 the library
 * refused the call. LOOM_EMBED_NO_FUNC when there is no function i. */
#define LOOM_EMBED_NO_FUNC (-100)
LOOM_API int32_t loom_embed_call(const loom_embed_built *b, int i,
                                 void *const *args, const int64_t *const *shapes);

/* ---- tuning ---------------------------------------------------------------- */

/* What a tuning run reports after each measured batch of a task. */
typedef void (*loom_embed_progress)(void *ctx, const char *task, int trials,
                                    int max_trials, int failures,
                                    double best_ms, double elapsed_s);

typedef struct loom_embed_tune_options {
  const char *target;   /* textual form; NULL: this machine */
  const char *db;       /* path of the database; NULL: "loom.db" */
  const char *strategy; /* "evolutionary" (NULL), "replay-trace",
                         * "replay-func" or "fast" */
  const char *func;     /* only this function; NULL: every task */
  const char *space;    /* a space script's text; NULL: the rules' spaces */
  int trials;           /* per task */
  uint64_t seed;
  bool is_random_model; /* random ranks instead of XGBoost */
  loom_embed_progress progress; /* NULL: none */
  void *progress_ctx;
} loom_embed_tune_options;

/* Tunes the tasks of m as `loom tune` does, every measurement recorded in
 * the database and the cost model kept there. Returns a JSON list with an
 * object per task, the fields of `loom tune --json`; NULL with d filled on
 * an error (a bad option, a space that does not apply, the database).
 * Candidates are measured in forked children: call it from a process whose
 * OpenMP runtime has started no threads (no parallel kernel called through
 * loom_embed_call), since a child forked from one hangs in its first
 * parallel loop. The Python package tunes in a fresh process for that. */
LOOM_API LOOM_GIVE char *loom_embed_tune(const loom_embed_module *m,
                                         const loom_embed_tune_options *o,
                                         loom_diag *d);

#endif
