/* What the embedding API's files share: the handles' insides. */
#ifndef LOOM_EMBED_IMPL_H
#define LOOM_EMBED_IMPL_H

#include "loom/embed.h"
#include "loom/target.h"

struct loom_embed_module {
  loom_arena *arena; /* the nodes, and the copy of the text they came from */
  const loom_module *module;
};

/* An empty module with its arena; NULL when out of memory. */
loom_embed_module *embed_module_new(void);
/* A module of its own equal to m, which lives in memory that is not the
 * binding's (a schedule's, a pass's): m printed and read back, which
 * structural equality cannot tell from it. what names it in diagnostics. */
loom_embed_module *embed_module_copy(const loom_module *m, const char *what,
                                     loom_diag *d);

/* The target a spec names (NULL: this machine); a bad one fails with d
 * located in spec. */
loom_status embed_target(const char *spec, loom_target *t, loom_diag *d);

#endif
