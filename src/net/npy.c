/* NumPy's .npy files, the form tensors come in and go out of `loom model
 * run`: a magic string, a version, a header that is a Python dict literal
 * ({'descr': '<f4', 'fortran_order': False, 'shape': (1, 8), }) padded to a
 * multiple of 64 bytes, then the elements in C order. Little-endian files
 * only (this is what x86 and ARM machines write). */
#include "net/net_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct descr {
  const char *text;
  loom_dtype dtype;
} descr;

static const descr descrs[] = {
    {"<f4", LOOM_DTYPE(LOOM_DT_FLOAT, 32, 1)}, {"<f8", LOOM_DTYPE(LOOM_DT_FLOAT, 64, 1)},
    {"<f2", LOOM_DTYPE(LOOM_DT_FLOAT, 16, 1)}, {"<i4", LOOM_DTYPE(LOOM_DT_INT, 32, 1)},
    {"<i8", LOOM_DTYPE(LOOM_DT_INT, 64, 1)},   {"<i2", LOOM_DTYPE(LOOM_DT_INT, 16, 1)},
    {"|i1", LOOM_DTYPE(LOOM_DT_INT, 8, 1)},    {"|u1", LOOM_DTYPE(LOOM_DT_UINT, 8, 1)},
    {"<u2", LOOM_DTYPE(LOOM_DT_UINT, 16, 1)},  {"<u4", LOOM_DTYPE(LOOM_DT_UINT, 32, 1)},
    {"<u8", LOOM_DTYPE(LOOM_DT_UINT, 64, 1)},  {"|b1", LOOM_DTYPE(LOOM_DT_BOOL, 1, 1)},
};

#define N_DESCRS (int)(sizeof descrs / sizeof *descrs)

static loom_status bad(loom_diag *d, const char *path, const char *what) {
  return loom_diag_error(d, (loom_loc){path, 0, 0}, "not a .npy file Loom reads: %s", what);
}

/* The value after 'key': in the header dict, or NULL. */
static const char *value_of(const char *h, const char *key) {
  const char *p = strstr(h, key);
  if (!p)
    return NULL;
  p = strchr(p + strlen(key), ':');
  if (!p)
    return NULL;
  p++;
  while (*p == ' ')
    p++;
  return p;
}

loom_status loom_net_npy_read(const char *path, loom_arena *a, loom_tensor_info *info,
                              void **data, loom_diag *d) {
  char *text;
  size_t len;
  TRY(loom_read_file(path, &text, &len, d));
  loom_status st = LOOM_OK;
  uint32_t hlen = 0;
  size_t start = 0;
  if (len < 10 || memcmp(text, "\x93NUMPY", 6))
    st = bad(d, path, "no \\x93NUMPY magic");
  else if (text[6] == 1) {
    hlen = (uint8_t)text[8] | (uint32_t)(uint8_t)text[9] << 8;
    start = 10;
  } else if ((text[6] == 2 || text[6] == 3) && len >= 12) {
    hlen = (uint8_t)text[8] | (uint32_t)(uint8_t)text[9] << 8 |
           (uint32_t)(uint8_t)text[10] << 16 | (uint32_t)(uint8_t)text[11] << 24;
    start = 12;
  } else {
    st = bad(d, path, "an unknown version");
  }
  char *h = NULL;
  if (st == LOOM_OK && (start + hlen > len || !(h = loom_arena_strndup(a, text + start, hlen))))
    st = start + hlen > len ? bad(d, path, "the header runs past the end") : LOOM_NOMEM;
  const char *dv = h ? value_of(h, "'descr'") : NULL;
  const char *fv = h ? value_of(h, "'fortran_order'") : NULL;
  const char *sv = h ? value_of(h, "'shape'") : NULL;
  if (st == LOOM_OK && (!dv || !fv || !sv || *sv != '('))
    st = bad(d, path, "the header lacks descr, fortran_order or shape");
  if (st == LOOM_OK && strncmp(fv, "False", 5))
    st = bad(d, path, "Fortran order (save it with numpy.ascontiguousarray)");
  int k = 0;
  while (st == LOOM_OK && k < N_DESCRS && strncmp(dv + 1, descrs[k].text, 3))
    k++;
  if (st == LOOM_OK && (k == N_DESCRS || *dv != '\''))
    st = bad(d, path, "a dtype other than float16/32/64, int8/16/32/64, uint8/16/32/64 "
                      "or bool, little-endian");
  int64_t shape[16];
  int ndim = 0;
  for (const char *p = sv ? sv + 1 : NULL; st == LOOM_OK && *p != ')';) {
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || v < 0 || ndim == 16) {
      st = bad(d, path, "a shape that is not a tuple of at most 16 sizes");
      break;
    }
    shape[ndim++] = v;
    p = end;
    while (*p == ',' || *p == ' ')
      p++;
  }
  if (st == LOOM_OK) {
    info->dtype = descrs[k].dtype;
    info->ndim = ndim;
    info->shape = loom_arena_dup(a, shape, sizeof *shape * (size_t)(ndim ? ndim : 1));
    size_t bytes = loom_net_bytes(info);
    if (!info->shape)
      st = LOOM_NOMEM;
    else if (start + hlen + bytes != len)
      st = bad(d, path, "the data is not as long as the shape says");
    else if (!(*data = loom_arena_alloc(a, bytes ? bytes : 1)))
      st = LOOM_NOMEM;
    else
      memcpy(*data, text + start + hlen, bytes);
  }
  if (st == LOOM_NOMEM && !d->has_error)
    loom_diag_error(d, (loom_loc){path, 0, 0}, "out of memory reading it");
  free(text);
  return st;
}

loom_status loom_net_npy_write(const char *path, const loom_tensor_info *info,
                               const void *data, loom_diag *d) {
  const char *dt = NULL;
  for (int k = 0; k < N_DESCRS; k++)
    if (loom_dtype_eq(descrs[k].dtype, info->dtype))
      dt = descrs[k].text;
  if (!dt)
    return loom_diag_error(d, (loom_loc){path, 0, 0}, "no .npy dtype for this tensor");
  char h[512];
  int n = snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (", dt);
  for (int i = 0; i < info->ndim && n < 400; i++)
    n += snprintf(h + n, sizeof h - (size_t)n, "%lld,%s", (long long)info->shape[i],
                  i + 1 < info->ndim ? " " : "");
  n += snprintf(h + n, sizeof h - (size_t)n, "), }");
  /* Padded with spaces and a newline so the data starts at a multiple of 64. */
  int total = (10 + n + 1 + 63) / 64 * 64;
  while (10 + n + 1 < total)
    h[n++] = ' ';
  h[n++] = '\n';
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                           (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};
  FILE *f = fopen(path, "wb");
  size_t bytes = loom_net_bytes(info);
  bool ok = f && fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, (size_t)n, f) == (size_t)n &&
            fwrite(data, 1, bytes, f) == bytes;
  if (f && fclose(f))
    ok = false;
  if (!ok)
    return loom_diag_error(d, (loom_loc){path, 0, 0}, "cannot write it: %s", strerror(errno));
  return LOOM_OK;
}
