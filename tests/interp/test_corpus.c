/* The interpreter on the seed programs of ../shared/corpus: softmax against
 * a plain C softmax, and the long-tail kernels against what they mean. The
 * test is skipped (exit 77) where ../shared is absent; a program missing
 * from a corpus that is there is a failure. */
#include "interp/prog.h"
#include "test.h"

#include <math.h>
#include <sys/stat.h>

static const char *root;

static void test_softmax(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/../shared/corpus/softmax.py", root);
  prog p;
  CHECK(prog_load_file(&p, path));
  if (!p.f)
    return;
  loom_rng r;
  loom_rng_seed(&r, 1);
  loom_interp_fill_random(p.args[0], &r);
  CHECK(prog_run_ok(&p));
  loom_interp_array *ref = loom_interp_array_new(LOOM_FLOAT32, p.args[1]->shape, 2);
  for (int i = 0; i < 128; i++) {
    float m = -INFINITY, s = 0;
    for (int k = 0; k < 1000; k++)
      m = fmaxf(m, (float)get(p.args[0], i * 1000 + k));
    for (int k = 0; k < 1000; k++)
      s += expf((float)get(p.args[0], i * 1000 + k) - m);
    for (int j = 0; j < 1000; j++)
      loom_interp_array_set(ref, i * 1000 + j,
                            expf((float)get(p.args[0], i * 1000 + j) - m) / s);
  }
  char *why = NULL;
  CHECK(loom_interp_compare(p.args[1], ref, 1e-5, 1e-7, &why));
  if (why)
    fprintf(stderr, "softmax: %s\n", why);
  free(why);
  loom_interp_array_free(ref);
  prog_free(&p);
}

static double f16(double x) { return loom_interp_f16_value(loom_interp_f16_bits(x)); }

static int load_seed(prog *p, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/../shared/corpus/%s", root, name);
  CHECK(prog_load_file(p, path));
  if (!p->f)
    return 0;
  loom_rng r;
  loom_rng_seed(&r, 3);
  for (int i = 0; i < p->f->n_params; i++)
    loom_interp_fill_random(p->args[i], &r);
  return 1;
}

static void test_seeds(void) {
  prog p;
  if (load_seed(&p, "seed_prefix_sum.py")) {
    CHECK(prog_run_ok(&p));
    double acc = 0;
    int is_ok = get(p.args[1], 0) == 0;
    for (int i = 0; i < 99; i++) {
      acc = f16(acc + get(p.args[0], i + 1));
      is_ok &= get(p.args[1], i + 1) == acc;
    }
    CHECK(is_ok);
    prog_free(&p);
  }
  if (load_seed(&p, "seed_inplace.py")) {
    double before[100];
    for (int i = 0; i < 100; i++)
      before[i] = get(p.args[1], i);
    CHECK(prog_run_ok(&p));
    int is_ok = 1;
    for (int i = 0; i < 100; i++)
      is_ok &= get(p.args[1], i) == f16(before[i] + get(p.args[0], i));
    CHECK(is_ok);
    prog_free(&p);
  }
  if (load_seed(&p, "seed_loop_from_one.py")) {
    double b0 = get(p.args[1], 0);
    CHECK(prog_run_ok(&p));
    int is_ok = get(p.args[1], 0) == b0;
    for (int i = 1; i < 100; i++)
      is_ok &= get(p.args[1], i) == f16(get(p.args[0], i) + 1);
    CHECK(is_ok);
    prog_free(&p);
  }
  if (load_seed(&p, "seed_branches.py")) {
    CHECK(prog_run_ok(&p));
    int is_ok = 1;
    for (int i = 0; i < 100; i++)
      for (int j = 0; j < 100; j++)
        is_ok &= get(p.args[0], i * 100 + j) == (i % 2 == 0 ? 1 : 2);
    CHECK(is_ok);
    prog_free(&p);
  }
}

int main(int argc, char **argv) {
  root = argc > 1 ? argv[1] : ".";
  char dir[1024];
  struct stat st;
  snprintf(dir, sizeof dir, "%s/../shared/corpus", root);
  if (stat(dir, &st) != 0) {
    printf("interp corpus: skipped (no %s)\n", dir);
    return 77;
  }
  test_softmax();
  test_seeds();
  return test_summary("interp corpus");
}
