/* What each kind of target gives the table in target.c: a name, how a target
 * of the kind is made before its options apply, and the options its textual
 * form takes. A new kind is one such row in a file of its own. */
#ifndef LOOM_TARGET_IMPL_H
#define LOOM_TARGET_IMPL_H

#include "loom/target.h"

typedef enum {
  OPT_INT,   /* 1 to 4096 */
  OPT_COUNT, /* an int, 1 to 2^30 */
  OPT_POW2,  /* a power of two, 1 to 4096 */
  OPT_BOOL,  /* 0 or 1 */
  OPT_BYTES, /* a size, 0 or more */
  OPT_ARCH,  /* "sm_XY", an int XY; the kind's set_arch applies it */
} target_option_type;

typedef struct target_option {
  const char *name;        /* as written after '-' */
  target_option_type type;
  size_t offset;           /* of an int, bool or int64_t in loom_target */
  bool is_hardware;        /* part of the key */
} target_option;

typedef struct target_kind {
  const char *name;
  /* Fills t: the machine detected (or, where it is not this machine, the
   * kind's defaults) and the design-space defaults; never fails. */
  void (*init)(loom_target *t);
  const target_option *options;
  int n_options;
  /* For an OPT_ARCH option: makes t the architecture's machine (its
   * preset, unless t already describes a detected one of that
   * architecture); false when the kind has no preset for it. presets
   * names them, for a message. */
  bool (*set_arch)(loom_target *t, int sm);
  const char *presets;
} target_kind;

extern const target_kind target_kind_cpu;
extern const target_kind target_kind_cuda;

#endif
