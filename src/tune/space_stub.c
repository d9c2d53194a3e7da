/* TEMPORARY: stand-ins for the target description, the schedule rules and
 * the postprocessors of include/loom/space.h, so that the search and the
 * mutators build and run before those parts exist. DELETE THIS FILE when
 * src/tune/target.c, src/tune/rules/ and src/tune/postproc/ are merged. */
#include "loom/space.h"

#include <string.h>
#include <unistd.h>

void loom_target_detect(loom_target *t) {
  memset(t, 0, sizeof *t);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  t->cores = n > 0 ? (int)n : 1;
  t->vector_bytes = 32;
  t->has_fma = true;
}

/* Only the bare "cpu" is understood here. */
loom_status loom_target_parse(const char *spec, loom_target *t, loom_diag *d) {
  loom_target_detect(t);
  if (!spec || strcmp(spec, "cpu"))
    return loom_diag_error(d, (loom_loc){0}, "unknown target '%s' (cpu is known)",
                           spec ? spec : "");
  return LOOM_OK;
}

/* One design space: the function as given, with no knobs. */
loom_status loom_space_generate(const loom_module *m, const loom_target *t,
                                loom_arena *a, loom_trace **spaces,
                                int *n_spaces, loom_diag *d) {
  loom_trace *s = loom_arena_alloc(a, sizeof *s);
  if (!s)
    return LOOM_NOMEM;
  *spaces = s;
  *n_spaces = 1;
  return LOOM_OK;
}

loom_status loom_space_postprocess(loom_sched *s, const loom_target *t,
                                   loom_diag *d) {
  return LOOM_OK;
}

loom_trace loom_space_strip_postproc(const loom_trace *t) {
  int enter = loom_inst_kind_by_json("EnterPostproc");
  loom_trace out = *t;
  for (int i = 0; enter >= 0 && i < t->n_insts; i++)
    if ((int)t->insts[i]->kind == enter) {
      out.n_insts = i;
      break;
    }
  return out;
}
