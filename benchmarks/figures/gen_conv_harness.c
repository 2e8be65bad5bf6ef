/* Standalone runner of one GENERATED Conv2D driver (NCHW input, FCHW filters,
 * NCHW output; out += conv), the counterpart of `manual_harness conv`, so
 * valgrind sees both drivers the same way. The driver's C function is GEN_FUNC.
 *
 *   gen_conv_harness BATCH IC H W OC FHW STRIDE [--no-check] [--baseline]
 * Prints "ok checksum=0x........"; exit 1 on a mismatch, 2 on bad usage, 3 on
 * a runtime error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dma_runtime.h"
#include "harness_common.h"

typedef struct {
  int32_t *allocated, *aligned;
  intptr_t offset, sizes[4], strides[4];
} memref4d;

void GEN_FUNC(memref4d *I, memref4d *W, memref4d *O);

static int32_t small_random(void) { return (int32_t)(next_random() % 16) - 8; } /* in [-8, 8) */

static int32_t *random_tensor(int64_t n) {
  int32_t *p = malloc((size_t)(n > 0 ? n : 1) * 4);
  if (!p) exit(3);
  for (int64_t i = 0; i < n; i++) p[i] = small_random();
  return p;
}

static memref4d view(int32_t *p, int64_t a, int64_t b, int64_t c, int64_t d) {
  memref4d m = {p, p, 0, {a, b, c, d}, {b * c * d, c * d, d, 1}};
  return m;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: gen_conv_harness BATCH IC H W OC FHW STRIDE [--no-check] [--baseline]\n");
    return 2;
  }
  const int64_t B = atoll(argv[1]), iC = atoll(argv[2]), H = atoll(argv[3]), Wd = atoll(argv[4]),
                oC = atoll(argv[5]), f = atoll(argv[6]), s = atoll(argv[7]);
  int check = 1, baseline = 0;
  for (int i = 8; i < argc; i++) {
    if (!strcmp(argv[i], "--no-check")) check = 0;
    else if (!strcmp(argv[i], "--baseline")) baseline = 1, check = 0;
    else return 2;
  }
  if (B < 1 || iC < 1 || f < 1 || s < 1 || H < f || Wd < f || oC < 1) return 2;
  const int64_t oH = (H - f) / s + 1, oW = (Wd - f) / s + 1;
  rng_state = 0x9e3779b9u;
  int32_t *in = random_tensor(B * iC * H * Wd), *flt = random_tensor(oC * iC * f * f);
  int32_t *out = random_tensor(B * oC * oH * oW);
  int32_t *out0 = malloc((size_t)(B * oC * oH * oW) * 4);
  if (!out0) return 3;
  memcpy(out0, out, (size_t)(B * oC * oH * oW) * 4);
  if (loom_sim_use_model(LOOM_MODEL_CONV2D, 0, LOOM_DTYPE_I32)) return 3;
  if (!baseline) {
    memref4d a = view(in, B, iC, H, Wd), w = view(flt, oC, iC, f, f), o = view(out, B, oC, oH, oW);
    GEN_FUNC(&a, &w, &o);
    if (loom_dma_error_code()) return report_runtime_error(loom_dma_error_code(), "generated conv");
  }
  if (check) {
    for (int64_t n = 0; n < B; n++)
      for (int64_t oc = 0; oc < oC; oc++)
        for (int64_t y = 0; y < oH; y++)
          for (int64_t x = 0; x < oW; x++) {
            uint32_t want = (uint32_t)out0[((n * oC + oc) * oH + y) * oW + x];
            for (int64_t c = 0; c < iC; c++)
              for (int64_t i = 0; i < f; i++)
                for (int64_t j = 0; j < f; j++)
                  want += (uint32_t)in[((n * iC + c) * H + y * s + i) * Wd + x * s + j] *
                          (uint32_t)flt[((oc * iC + c) * f + i) * f + j];
            if ((uint32_t)out[((n * oC + oc) * oH + y) * oW + x] != want) {
              fprintf(stderr, "mismatch at (%lld, %lld, %lld, %lld)\n", (long long)n, (long long)oc,
                      (long long)y, (long long)x);
              return 1;
            }
          }
  }
  printf("ok checksum=0x%08x\n", checksum(out, B * oC * oH * oW));
  free(in), free(flt), free(out), free(out0);
  return 0;
}
