/* The cost model a tuning run keeps in its database, so that the next run
 * on the same database starts from what this one learned. */
#include "loom/tune.h"

#include <stdlib.h>
#include <string.h>

#define MODEL_KEY "model.xgb"

loom_status loom_tune_model_open(loom_db *db, bool is_random, uint64_t seed,
                                 loom_model **out, char **note, loom_diag *d) {
  *out = NULL;
  if (note)
    *note = NULL;
  if (is_random)
    return loom_model_random_new(seed, out, d);
  loom_model_options o = {.seed = seed};
  TRY(loom_model_xgb_new(&o, out, d));
  loom_buf state;
  loom_buf_init(&state);
  bool found = false;
  loom_diag why;
  loom_diag_init(&why);
  loom_status st = loom_db_load_state(db, MODEL_KEY, &state, &found, d);
  if (st == LOOM_OK && found &&
      loom_model_load(*out, state.data, state.len, &why) != LOOM_OK) {
    /* A state this Loom cannot read: start cold rather than fail. */
    if (note) {
      loom_buf b;
      loom_buf_init(&b);
      loom_buf_printf(&b, "the database's cost model is unreadable (%s); starting a new one",
                      why.msg ? why.msg : "?");
      *note = loom_buf_take(&b);
    }
    loom_model_free(*out);
    *out = NULL;
    st = loom_model_xgb_new(&o, out, d);
  }
  if (st != LOOM_OK && *out) {
    loom_model_free(*out);
    *out = NULL;
  }
  loom_buf_free(&state);
  loom_diag_free(&why);
  return st;
}

loom_status loom_tune_model_save(const loom_model *m, loom_db *db, loom_diag *d) {
  if (strcmp(loom_model_name(m), "xgboost"))
    return LOOM_OK;
  loom_buf state;
  loom_buf_init(&state);
  loom_status st = loom_model_save(m, &state, d);
  if (st == LOOM_OK)
    st = loom_db_save_state(db, MODEL_KEY, state.data, state.len, d);
  loom_buf_free(&state);
  return st;
}
