/* A cache of cubins on disk, keyed by the hash of the CUDA C, the
 * architecture and the NVRTC version: `loom run --target cuda` on a program
 * it ran before, or a tuner meeting a kernel it compiled before, skips
 * NVRTC. The folder is $LOOM_CUBIN_CACHE, else $XDG_CACHE_HOME/loom/cubin,
 * else ~/.cache/loom/cubin; LOOM_CUBIN_CACHE set to the empty string turns
 * the cache off. A file holds a header line with the registers and spills,
 * then the cubin; it is written under a temporary name and renamed, so a
 * reader sees a whole file or none. A file that cannot be read or written
 * only costs a compile. */
#include "loom/runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "loom-cubin 1"

/* Two FNV-1a hashes of different offsets: 128 bits of key. */
static void hash(const char *s, size_t n, int sm, int major, int minor, uint64_t h[2]) {
  h[0] = 0xcbf29ce484222325ull;
  h[1] = 0x84222325cbf29ce4ull;
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 2; k++)
      h[k] = (h[k] ^ (unsigned char)s[i]) * 0x100000001b3ull;
  uint64_t tail = (uint64_t)sm << 32 | (uint64_t)major << 16 | (uint64_t)minor;
  for (int k = 0; k < 2; k++)
    h[k] = (h[k] ^ tail) * 0x100000001b3ull;
}

/* mkdir -p of path (a copy is cut at each slash). */
static bool make_dirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n >= sizeof buf)
    return false;
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++)
    if (buf[i] == '/' || buf[i] == 0) {
      char c = buf[i];
      buf[i] = 0;
      if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return false;
      buf[i] = c;
    }
  return true;
}

/* The cache folder into buf; false when the cache is off. */
static bool cache_dir(char *buf, size_t n) {
  const char *env = getenv("LOOM_CUBIN_CACHE");
  if (env)
    return *env && snprintf(buf, n, "%s", env) < (int)n;
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg)
    return snprintf(buf, n, "%s/loom/cubin", xdg) < (int)n;
  return home && *home && snprintf(buf, n, "%s/.cache/loom/cubin", home) < (int)n;
}

static bool read_entry(const char *path, loom_runtime_cubin *out) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return false;
  char magic[32];
  int regs;
  long long spills;
  size_t size;
  bool ok = fscanf(f, "%31[^\n]\n%d %lld %zu\n", magic, &regs, &spills, &size) == 4 &&
            !strcmp(magic, MAGIC) && size > 0 && size < ((size_t)1 << 30) &&
            (out->data = malloc(size)) && fread(out->data, 1, size, f) == size &&
            (out->log = strdup("(from the cubin cache)"));
  fclose(f);
  if (!ok) {
    loom_runtime_cubin_free(out);
    return false;
  }
  out->size = size;
  out->max_registers = regs;
  out->spill_bytes = spills;
  return true;
}

static void write_entry(const char *dir, const char *path, const loom_runtime_cubin *c) {
  if (!make_dirs(dir))
    return;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f)
    return;
  bool ok = fprintf(f, "%s\n%d %lld %zu\n", MAGIC, c->max_registers,
                    (long long)c->spill_bytes, c->size) > 0 &&
            fwrite(c->data, 1, c->size, f) == c->size;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0)
    unlink(tmp);
}

loom_status loom_runtime_nvrtc_compile_cached(loom_runtime_nvrtc *nv, const char *src,
                                              const char *name, int sm,
                                              loom_runtime_cubin *out, loom_diag *d) {
  char dir[4000], path[4100];
  bool is_on = cache_dir(dir, sizeof dir);
  if (is_on) {
    int major, minor;
    uint64_t h[2];
    loom_runtime_nvrtc_version(nv, &major, &minor);
    hash(src, strlen(src), sm, major, minor, h);
    snprintf(path, sizeof path, "%s/%016llx%016llx.sm_%d.cubin", dir,
             (unsigned long long)h[0], (unsigned long long)h[1], sm);
    memset(out, 0, sizeof *out);
    if (read_entry(path, out))
      return LOOM_OK;
  }
  TRY(loom_runtime_nvrtc_compile_apart(nv, src, name, sm, out, d));
  if (is_on)
    write_entry(dir, path, out);
  return LOOM_OK;
}
