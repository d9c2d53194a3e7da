/* OpenBLAS as the C backend's kernels load it (the prelude's
 * loom_library_symbol): where its own detection takes this CPU for an old
 * core (a Prescott, SSE3 only, when the CPU is newer than the library), it
 * runs as the core the CPU matches instead, unless OPENBLAS_CORETYPE chose
 * one. Skipped without OpenBLAS. */
#include "codegen/codegen_impl.h"
#include "loom/runtime.h"
#include "rt_util.h"
#include "test.h"

#include <dlfcn.h>
#include <string.h>

static bool is_old_core(const char *core) {
  static const char *const old[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem",
                                    "Atom", "Katmai", "Coppermine", "Northwood", "Banias",
                                    "Generic"};
  for (size_t i = 0; i < sizeof old / sizeof *old; i++)
    if (!strcmp(core, old[i]))
      return true;
  return false;
}

int main(void) {
  unsetenv("OPENBLAS_CORETYPE");
  void *probe = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!probe) {
    printf("blas_core: skipped (no libopenblas.so.0)\n");
    return 77;
  }
  const char *(*corename)(void) = (const char *(*)(void))dlsym(probe, "openblas_get_corename");
  char detected[64];
  snprintf(detected, sizeof detected, "%s", corename ? corename() : "?");
  dlclose(probe);
  loom_runtime_lib *lib = compile_src(codegen_prelude, false);
  CHECK(lib != NULL);
  void *(*symbol)(const char *) =
      lib ? (void *(*)(const char *))loom_runtime_lib_symbol(lib, "loom_library_symbol") : NULL;
  CHECK(symbol != NULL);
  CHECK(symbol && symbol("cblas_sgemm") != NULL);
  /* The instance the kernel loaded: the same library, already in memory. */
  void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  corename = h ? (const char *(*)(void))dlsym(h, "openblas_get_corename") : NULL;
  CHECK(corename != NULL);
  const char *core = corename ? corename() : "?";
  __builtin_cpu_init();
  bool has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  printf("blas_core: OpenBLAS detects %s, kernels run as %s\n", detected, core);
  CHECK(!has_avx2 || !is_old_core(core));
  /* The choice stays in the environment, for the processes started after. */
  CHECK(!is_old_core(detected) || !has_avx2 || getenv("OPENBLAS_CORETYPE") != NULL);
  if (h)
    dlclose(h);
  if (lib)
    loom_runtime_lib_free(lib);
  return test_summary("runtime/blas_core");
}
