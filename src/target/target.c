/* The table of target kinds, and what every kind shares: the textual form
 * ("KIND -option=value ...") read against the kind's options, and the key,
 * the canonical text of a target's hardware that tuning records are stored
 * under. */
#include "target_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const target_kind *const kinds[LOOM_TARGET_KIND_COUNT_] = {
    [LOOM_TARGET_CPU] = &target_kind_cpu,
    [LOOM_TARGET_CUDA] = &target_kind_cuda,
};

const char *loom_target_kind_name(loom_target_kind k) {
  return k >= 0 && k < LOOM_TARGET_KIND_COUNT_ ? kinds[k]->name : "?";
}

static loom_loc at(const char *spec, const char *p) {
  return (loom_loc){.file = "<target>", .line = 1, .col = (int)(p - spec) + 1};
}

/* "-a, -b, -c": the options of kind k, for a message. */
static void list_options(const target_kind *k, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < k->n_options && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, "%s-%s", i ? ", " : "",
                             k->options[i].name);
}

static void *field_of(loom_target *t, const target_option *o) {
  return (char *)t + o->offset;
}

static long long option_value(const loom_target *t, const target_option *o) {
  const char *field = (const char *)t + o->offset;
  switch (o->type) {
  case OPT_BOOL:
    return *(const bool *)field;
  case OPT_BYTES:
    return *(const int64_t *)field;
  case OPT_INT:
  case OPT_COUNT:
  case OPT_POW2:
  case OPT_ARCH:
    return *(const int *)field;
  }
  return 0;
}

/* "sm_90" (or "sm_90a", Hopper's architecture-specific features): 90. */
static bool read_arch(const char *val, size_t vlen, long long *out) {
  if (vlen < 5 || vlen > 6 || strncmp(val, "sm_", 3) ||
      !isdigit((unsigned char)val[3]) || !isdigit((unsigned char)val[4]) ||
      (vlen == 6 && val[5] != 'a'))
    return false;
  *out = (val[3] - '0') * 10 + (val[4] - '0');
  return true;
}

/* Sets one option of t; is_arch_pass: only an architecture (which sets many
 * fields at once, so it goes first wherever it is written), else only the
 * others. */
static loom_status set_option(const char *spec, const target_kind *kind,
                              const char *key, size_t klen, const char *val,
                              size_t vlen, bool is_arch_pass, loom_target *t,
                              loom_diag *d) {
  const target_option *o = NULL;
  for (int i = 0; i < kind->n_options; i++)
    if (strlen(kind->options[i].name) == klen &&
        !strncmp(kind->options[i].name, key, klen))
      o = &kind->options[i];
  if (!o) {
    char known[512];
    list_options(kind, known, sizeof known);
    return loom_diag_error(d, at(spec, key),
                           "unknown target option '-%.*s' (a %s target "
                           "knows %s)",
                           (int)klen, key, kind->name, known);
  }
  char buf[32];
  char *end = NULL;
  long long v = 0;
  if ((o->type == OPT_ARCH) != is_arch_pass)
    return LOOM_OK;
  if (o->type == OPT_ARCH) {
    if (!read_arch(val, vlen, &v))
      return loom_diag_error(d, at(spec, val),
                             "target option '-%s' is an architecture such as "
                             "sm_90, not '%.*s'",
                             o->name, (int)vlen, val);
    if (!kind->set_arch(t, (int)v))
      return loom_diag_error(d, at(spec, val),
                             "no preset for architecture '%.*s' (known: %s)",
                             (int)vlen, val, kind->presets);
    return LOOM_OK;
  }
  if (vlen > 0 && vlen < sizeof buf) {
    memcpy(buf, val, vlen);
    buf[vlen] = 0;
    errno = 0;
    v = strtoll(buf, &end, 10);
  }
  if (!end || *end || errno || vlen == 0)
    return loom_diag_error(d, at(spec, val),
                           "target option '-%s' needs an integer, not '%.*s'",
                           o->name, (int)vlen, val);
  switch (o->type) {
  case OPT_BOOL:
    if (v != 0 && v != 1)
      return loom_diag_error(d, at(spec, val),
                             "target option '-%s' is 0 or 1, not %lld",
                             o->name, v);
    *(bool *)field_of(t, o) = v;
    return LOOM_OK;
  case OPT_INT:
  case OPT_COUNT:
  case OPT_POW2: {
    long long most = o->type == OPT_COUNT ? 1 << 30 : 4096;
    if (v < 1 || v > most)
      return loom_diag_error(d, at(spec, val),
                             "target option '-%s' must be between 1 and "
                             "%lld, not %lld",
                             o->name, most, v);
    if (o->type == OPT_POW2 && (v & (v - 1)))
      return loom_diag_error(d, at(spec, val),
                             "target option '-%s' must be a power of two, "
                             "not %lld",
                             o->name, v);
    *(int *)field_of(t, o) = (int)v;
    return LOOM_OK;
  }
  case OPT_ARCH:
    return LOOM_OK;
  case OPT_BYTES:
    if (v < 0)
      return loom_diag_error(d, at(spec, val),
                             "target option '-%s' must not be negative",
                             o->name);
    *(int64_t *)field_of(t, o) = v;
    return LOOM_OK;
  }
  return LOOM_OK;
}

static const target_kind *find_kind(const char *name, size_t len) {
  for (int k = 0; k < LOOM_TARGET_KIND_COUNT_; k++)
    if (strlen(kinds[k]->name) == len && !strncmp(kinds[k]->name, name, len))
      return kinds[k];
  return NULL;
}

/* The options from p on, read in one pass (above). */
static loom_status set_options(const char *spec, const char *p,
                               const target_kind *kind, bool is_arch_pass,
                               loom_target *t, loom_diag *d) {
  for (;;) {
    while (isspace((unsigned char)*p))
      p++;
    if (!*p)
      return LOOM_OK;
    if (*p != '-')
      return loom_diag_error(d, at(spec, p),
                             "expected a target option '-key=value'");
    const char *key = ++p;
    while (*p && *p != '=' && !isspace((unsigned char)*p))
      p++;
    if (*p != '=')
      return loom_diag_error(d, at(spec, key),
                             "target option '-%.*s' needs '=value'",
                             (int)(p - key), key);
    size_t klen = (size_t)(p - key);
    const char *val = ++p;
    while (*p && !isspace((unsigned char)*p))
      p++;
    TRY(set_option(spec, kind, key, klen, val, (size_t)(p - val),
                   is_arch_pass, t, d));
  }
}

loom_status loom_target_parse(const char *spec, loom_target *t,
                              loom_diag *d) {
  const char *p = spec;
  while (isspace((unsigned char)*p))
    p++;
  const char *name = p;
  while (*p && !isspace((unsigned char)*p))
    p++;
  const target_kind *kind = find_kind(name, (size_t)(p - name));
  if (!kind) {
    loom_target_detect(t);
    return loom_diag_error(d, at(spec, name),
                           "unknown target '%s' (known: \"cpu\" and "
                           "\"cuda\", with options such as \"cpu -cores=4\" "
                           "or \"cuda -arch=sm_80\")",
                           spec);
  }
  kind->init(t);
  TRY(set_options(spec, p, kind, true, t, d));
  return set_options(spec, p, kind, false, t, d);
}

void loom_target_key(const loom_target *t, char *buf, size_t n) {
  const target_kind *kind = kinds[t->kind];
  size_t used = (size_t)snprintf(buf, n, "%s", kind->name);
  for (int i = 0; i < kind->n_options && used < n; i++) {
    const target_option *o = &kind->options[i];
    if (!o->is_hardware)
      continue;
    if (o->type == OPT_ARCH)
      used += (size_t)snprintf(buf + used, n - used, " -%s=sm_%lld", o->name,
                               option_value(t, o));
    else
      used += (size_t)snprintf(buf + used, n - used, " -%s=%lld", o->name,
                               option_value(t, o));
  }
}
