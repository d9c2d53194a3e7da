/* The cuda kind of target: an NVIDIA GPU, read off the driver when this
 * machine has one, or a named architecture's published figures when it does
 * not, and the options that override either.
 *
 * libcuda is opened at run time, so Loom builds and runs where CUDA is
 * absent. The driver is asked in a child process: a process that has
 * initialized CUDA cannot hand a working driver to the children it forks,
 * and the runner forks its measurements. */
#include "loom/runtime.h"
#include "target_impl.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* The driver API's device attributes Loom reads (cuda.h, CUdevice_attribute). */
enum {
  ATTR_MAX_THREADS_PER_BLOCK = 1,
  ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  ATTR_WARP_SIZE = 10,
  ATTR_MAX_REGISTERS_PER_BLOCK = 12,
  ATTR_CLOCK_RATE = 13,               /* kHz */
  ATTR_MULTIPROCESSOR_COUNT = 16,
  ATTR_MEMORY_CLOCK_RATE = 36,        /* kHz */
  ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37,  /* bits */
  ATTR_L2_CACHE_SIZE = 38,
  ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  ATTR_COMPUTE_CAPABILITY_MINOR = 76,
  ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* Published figures: A100 SXM4 80 GB (sm_80) and H100 SXM5 (sm_90), from
 * NVIDIA's datasheets and the CUDA programming guide's tables for compute
 * capabilities 8.0 and 9.0. */
static const loom_gpu_desc presets[] = {
    {.sm = 80, .multiprocessors = 108, .max_threads_per_block = 1024,
     .max_threads_per_sm = 2048, .warp_size = 32, .shared_per_block = 49152,
     .shared_per_block_optin = 166912, .shared_per_sm = 167936,
     .regs_per_sm = 65536, .regs_per_block = 65536, .regs_per_thread = 255,
     .l2_bytes = 41943040, .bandwidth_gbps = 2039, .clock_mhz = 1410},
    {.sm = 90, .multiprocessors = 132, .max_threads_per_block = 1024,
     .max_threads_per_sm = 2048, .warp_size = 32, .shared_per_block = 49152,
     .shared_per_block_optin = 232448, .shared_per_sm = 233472,
     .regs_per_sm = 65536, .regs_per_block = 65536, .regs_per_thread = 255,
     .l2_bytes = 52428800, .bandwidth_gbps = 3350, .clock_mhz = 1980},
};
#define N_PRESETS (int)(sizeof presets / sizeof *presets)

/* What each compute capability's tensor cores take (loom_target.h). */
static unsigned tensor_cores_of(int sm) {
  unsigned tc = 0;
  if (sm >= 80)
    tc |= LOOM_TC_F16 | LOOM_TC_BF16 | LOOM_TC_INT8;
  if (sm >= 89)
    tc |= LOOM_TC_FP8;
  if (sm == 90)
    tc |= LOOM_TC_WGMMA;
  return tc;
}

/* The attributes Loom reads, in the order query() returns them. */
static const int attrs[] = {
    ATTR_COMPUTE_CAPABILITY_MAJOR,
    ATTR_COMPUTE_CAPABILITY_MINOR,
    ATTR_MULTIPROCESSOR_COUNT,
    ATTR_MAX_THREADS_PER_BLOCK,
    ATTR_MAX_THREADS_PER_MULTIPROCESSOR,
    ATTR_WARP_SIZE,
    ATTR_MAX_SHARED_MEMORY_PER_BLOCK,
    ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
    ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
    ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR,
    ATTR_MAX_REGISTERS_PER_BLOCK,
    ATTR_L2_CACHE_SIZE,
    ATTR_MEMORY_CLOCK_RATE,
    ATTR_GLOBAL_MEMORY_BUS_WIDTH,
    ATTR_CLOCK_RATE,
};
#define N_ATTRS (int)(sizeof attrs / sizeof *attrs)

/* The attributes of device 0, in the order of `attrs`; false when there is
 * no driver or no device. Runs in the calling process: see detect(). */
static bool query(int *vals) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return false;
  typedef int (*init_fn)(unsigned);
  typedef int (*count_fn)(int *);
  typedef int (*get_fn)(int *, int);
  typedef int (*attr_fn)(int *, int, int);
  init_fn init = (init_fn)dlsym(lib, "cuInit");
  count_fn count = (count_fn)dlsym(lib, "cuDeviceGetCount");
  get_fn get = (get_fn)dlsym(lib, "cuDeviceGet");
  attr_fn attr = (attr_fn)dlsym(lib, "cuDeviceGetAttribute");
  int n = 0, dev = 0;
  bool ok = init && count && get && attr && init(0) == 0 &&
            count(&n) == 0 && n > 0 && get(&dev, 0) == 0;
  for (int i = 0; ok && i < N_ATTRS; i++)
    ok = attr(&vals[i], attrs[i], dev) == 0;
  dlclose(lib);
  return ok;
}

/* A driver that hangs is given up on after this long. */
#define DETECT_TIMEOUT_MS 20000

/* What the child hands back, in shared memory. */
typedef struct answer {
  bool ok;
  int vals[N_ATTRS];
} answer;

static int query_child(void *ctx) {
  answer *an = ctx;
  an->ok = query(an->vals);
  return 0;
}

/* Device 0's attributes, asked in a child process so that this one never
 * initializes the driver. */
static bool detect(int *vals) {
  answer *an = loom_runtime_shared_alloc(sizeof *an);
  if (!an)
    return false;
  loom_runtime_child_result r;
  loom_diag d;
  loom_diag_init(&d);
  bool ok = loom_runtime_run_child(query_child, an, DETECT_TIMEOUT_MS, &r, &d) == LOOM_OK &&
            r.kind == LOOM_RUNTIME_CHILD_OK && an->ok;
  if (ok)
    memcpy(vals, an->vals, sizeof an->vals);
  loom_diag_free(&d);
  loom_runtime_shared_free(an, sizeof *an);
  return ok;
}

static void init_defaults(loom_target *t) {
  memset(t, 0, sizeof *t);
  t->kind = LOOM_TARGET_CUDA;
  t->max_innermost_factor = 64;
}

static void use_preset(loom_target *t, const loom_gpu_desc *p) {
  t->gpu = *p;
  t->gpu.tensor_cores = tensor_cores_of(p->sm);
}

/* The GPU of this machine, else the sm_90 preset. */
static void init_cuda(loom_target *t) {
  init_defaults(t);
  use_preset(t, &presets[N_PRESETS - 1]);
  int v[N_ATTRS];
  if (!detect(v))
    return;
  loom_gpu_desc *g = &t->gpu;
  g->sm = v[0] * 10 + v[1];
  g->is_detected = true;
  g->multiprocessors = v[2];
  g->max_threads_per_block = v[3];
  g->max_threads_per_sm = v[4];
  g->warp_size = v[5];
  g->shared_per_block = v[6];
  g->shared_per_block_optin = v[7];
  g->shared_per_sm = v[8];
  g->regs_per_sm = v[9];
  g->regs_per_block = v[10];
  g->regs_per_thread = 255; /* no attribute; every sm_50 and later */
  g->l2_bytes = v[11];
  /* Double data rate: two transfers per memory clock. */
  g->bandwidth_gbps = (int)((double)v[12] * 1e3 * 2 * v[13] / 8 / 1e9 + 0.5);
  g->clock_mhz = v[14] / 1000;
  g->tensor_cores = tensor_cores_of(g->sm);
}

static bool set_arch(loom_target *t, int sm) {
  if (t->gpu.is_detected && t->gpu.sm == sm)
    return true;
  for (int i = 0; i < N_PRESETS; i++)
    if (presets[i].sm == sm) {
      use_preset(t, &presets[i]);
      return true;
    }
  return false;
}

#define GPU(field) offsetof(loom_target, gpu.field)

static const target_option cuda_options[] = {
    {"arch", OPT_ARCH, GPU(sm), true},
    {"multiprocessors", OPT_COUNT, GPU(multiprocessors), true},
    {"max-threads-per-block", OPT_COUNT, GPU(max_threads_per_block), true},
    {"max-threads-per-sm", OPT_COUNT, GPU(max_threads_per_sm), true},
    {"warp-size", OPT_POW2, GPU(warp_size), true},
    {"shared-per-block", OPT_BYTES, GPU(shared_per_block), true},
    {"shared-per-block-optin", OPT_BYTES, GPU(shared_per_block_optin), true},
    {"shared-per-sm", OPT_BYTES, GPU(shared_per_sm), true},
    {"regs-per-sm", OPT_COUNT, GPU(regs_per_sm), true},
    {"regs-per-block", OPT_COUNT, GPU(regs_per_block), true},
    {"regs-per-thread", OPT_COUNT, GPU(regs_per_thread), true},
    {"l2-bytes", OPT_BYTES, GPU(l2_bytes), true},
    {"bandwidth-gbps", OPT_COUNT, GPU(bandwidth_gbps), true},
    {"clock-mhz", OPT_COUNT, GPU(clock_mhz), true},
    {"max-innermost-factor", OPT_INT,
     offsetof(loom_target, max_innermost_factor), false},
};

const target_kind target_kind_cuda = {
    .name = "cuda",
    .init = init_cuda,
    .options = cuda_options,
    .n_options = (int)(sizeof cuda_options / sizeof *cuda_options),
    .set_arch = set_arch,
    .presets = "sm_80 (A100), sm_90 (H100)",
};
