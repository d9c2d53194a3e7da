/* What the cost models share inside the tuning module: the byte format of
 * saved states (little-endian whatever the machine, so a database moves
 * between machines) and the constructors' common checks. */
#ifndef LOOM_TUNE_MODEL_IMPL_H
#define LOOM_TUNE_MODEL_IMPL_H

#include "loom/model.h"

void model_put_u64(loom_buf *b, uint64_t v);
void model_put_f64(loom_buf *b, double v);
void model_put_f32(loom_buf *b, float v);

/* A cursor over saved bytes. A read past the end sets is_short and yields
 * zeros, so a loader checks once at the end. */
typedef struct model_reader {
  const unsigned char *p, *end;
  bool is_short;
} model_reader;

uint64_t model_get_u64(model_reader *r);
double model_get_f64(model_reader *r);
float model_get_f32(model_reader *r);
/* Points at the next n bytes and skips them; NULL when fewer are left. */
const void *model_get_bytes(model_reader *r, size_t n);

/* Checks that every input has rows and finite features; d says which not. */
loom_status model_check_inputs(const loom_model_input *cands, int n,
                               loom_diag *d);

#endif
