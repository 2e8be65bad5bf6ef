/* Standalone runner of one hand-written driver on one problem (what valgrind
 * and the task-clock timer run). Inputs are deterministic pseudo-random
 * values; the result is checked against a plain C reference.
 *
 *   manual_harness matmul v1|v2|v3|v4 M N K TILE [options]
 *   manual_harness conv BATCH IC H W OC FHW STRIDE [options]
 * options:
 *   --flow F     matmul flow Ns (default), As, Bs or Cs (those the version has)
 *   --coalesce   one DMA transfer per run of instructions before a receive
 *   --double-buffer  staging in two halves, receives added one step late
 *   --f32        float data (small integer values, so sums are exact)
 *   --repeat R   call the driver R times (C accumulates R products)
 *   --no-check   skip the reference (for counting the driver alone)
 *   --baseline   allocate and fill the inputs only, call no driver (the
 *                set-up cost to subtract from a measured run)
 * Prints "ok checksum=0x........" and exits 0; exits 1 on a mismatch, 2 on
 * bad usage, 3 on a runtime error (message on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dma_runtime.h"
#include "harness_common.h"
#include "manual_drivers.h"

typedef struct options {
  int f32, repeat, check, baseline, flow, driver_options;
} options;

/* Full-range int32 words, or small integer-valued floats in [-8, 8]. */
static uint32_t *random_words(int64_t n, int f32) {
  uint32_t *p = malloc((size_t)(n > 0 ? n : 1) * 4);
  if (!p) return NULL;
  for (int64_t i = 0; i < n; i++) {
    if (f32) {
      float v = (float)((int)(next_random() % 17) - 8);
      memcpy(p + i, &v, 4);
    } else {
      p[i] = next_random();
    }
  }
  return p;
}

/* expected = initial + repeat * product, then compared word by word. */
static int compare(const uint32_t *got, const uint32_t *initial, const uint32_t *product,
                   int64_t n, int repeat, int f32) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t want;
    if (f32) {
      float a, b;
      memcpy(&a, initial + i, 4), memcpy(&b, product + i, 4);
      float w = a + (float)repeat * b;
      memcpy(&want, &w, 4);
    } else {
      want = initial[i] + (uint32_t)repeat * product[i];
    }
    if (got[i] != want) {
      fprintf(stderr, "mismatch at element %lld: got 0x%08x, expected 0x%08x\n", (long long)i,
              got[i], want);
      return 1;
    }
  }
  return 0;
}

static void reference_matmul(int64_t M, int64_t N, int64_t K, const uint32_t *A,
                             const uint32_t *B, uint32_t *P, int f32) {
  memset(P, 0, (size_t)(M * N) * 4);
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t j = 0; j < N; j++) {
        if (f32) {
          float a, b, p;
          memcpy(&a, A + i * K + k, 4), memcpy(&b, B + k * N + j, 4), memcpy(&p, P + i * N + j, 4);
          p += a * b;
          memcpy(P + i * N + j, &p, 4);
        } else {
          P[i * N + j] += A[i * K + k] * B[k * N + j];
        }
      }
}

static void reference_conv(int64_t batch, int64_t iC, int64_t H, int64_t W, int64_t oC,
                           int64_t f, int64_t s, const uint32_t *in, const uint32_t *flt,
                           uint32_t *P, int f32) {
  const int64_t oH = (H - f) / s + 1, oW = (W - f) / s + 1;
  for (int64_t n = 0; n < batch; n++)
    for (int64_t o = 0; o < oC; o++)
      for (int64_t y = 0; y < oH; y++)
        for (int64_t x = 0; x < oW; x++) {
          uint32_t acc = 0;
          float facc = 0.0f;
          for (int64_t c = 0; c < iC; c++)
            for (int64_t i = 0; i < f; i++)
              for (int64_t j = 0; j < f; j++) {
                const uint32_t a = in[((n * iC + c) * H + y * s + i) * W + x * s + j];
                const uint32_t b = flt[((o * iC + c) * f + i) * f + j];
                if (f32) {
                  float fa, fb;
                  memcpy(&fa, &a, 4), memcpy(&fb, &b, 4);
                  facc += fa * fb;
                } else {
                  acc += a * b;
                }
              }
          if (f32) memcpy(&acc, &facc, 4);
          P[((n * oC + o) * oH + y) * oW + x] = acc;
        }
}

static int usage(void) {
  fprintf(stderr,
          "usage: manual_harness matmul v1|v2|v3|v4 M N K TILE [--flow Ns|As|Bs|Cs] [--coalesce] "
          "[--double-buffer] [--f32] [--repeat R] [--no-check] [--baseline]\n"
          "       manual_harness conv BATCH IC H W OC FHW STRIDE [--coalesce] [--double-buffer] "
          "[--f32] [--repeat R] [--no-check] [--baseline]\n");
  return 2;
}

static int parse_int(const char *s, int64_t *out) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < 0 || v > (1LL << 20)) return 0;
  *out = v;
  return 1;
}

static int parse_options(int argc, char **argv, int first, options *o) {
  static const char *const flows[] = {"Ns", "As", "Bs", "Cs"};
  o->f32 = 0, o->repeat = 1, o->check = 1, o->baseline = 0, o->flow = MANUAL_NS, o->driver_options = 0;
  for (int i = first; i < argc; i++) {
    int64_t r;
    if (!strcmp(argv[i], "--f32")) o->f32 = 1;
    else if (!strcmp(argv[i], "--coalesce")) o->driver_options |= MANUAL_COALESCE;
    else if (!strcmp(argv[i], "--double-buffer")) o->driver_options |= MANUAL_DOUBLE_BUFFER;
    else if (!strcmp(argv[i], "--flow") && i + 1 < argc) {
      o->flow = -1;
      for (int f = 0; f < 4; f++)
        if (!strcmp(argv[i + 1], flows[f])) o->flow = f;
      if (o->flow < 0) return 0;
      i++;
    }
    else if (!strcmp(argv[i], "--no-check")) o->check = 0;
    else if (!strcmp(argv[i], "--baseline")) o->baseline = 1, o->check = 0;
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc && parse_int(argv[i + 1], &r) && r >= 1)
      o->repeat = (int)r, i++;
    else return 0;
  }
  return 1;
}

static int finish(const uint32_t *result, const uint32_t *initial, const uint32_t *product,
                  int64_t n, const options *o) {
  if (o->check && compare(result, initial, product, n, o->repeat, o->f32)) return 1;
  printf("ok checksum=0x%08x\n", checksum(result, n));
  return 0;
}

static int run_matmul(int argc, char **argv) {
  int64_t dims[4];
  options o;
  if (argc < 7) return usage();
  const char *v = argv[2];
  const int version = (v[0] == 'v' && v[1] >= '1' && v[1] <= '4' && !v[2]) ? v[1] - '0' : 0;
  for (int i = 0; i < 4; i++)
    if (!parse_int(argv[3 + i], &dims[i])) return usage();
  if (!version || !parse_options(argc, argv, 7, &o)) return usage();
  const int64_t M = dims[0], N = dims[1], K = dims[2];
  const int tile = (int)dims[3];
  rng_state = 0x9e3779b9u ^ (uint32_t)(M * 73856093 + N * 19349663 + K * 83492791);
  uint32_t *A = random_words(M * K, o.f32), *B = random_words(K * N, o.f32);
  uint32_t *C = random_words(M * N, o.f32), *C0 = malloc((size_t)(M * N + 1) * 4);
  uint32_t *P = malloc((size_t)(M * N + 1) * 4);
  if (!A || !B || !C || !C0 || !P) return fprintf(stderr, "out of memory\n"), 3;
  memcpy(C0, C, (size_t)(M * N) * 4);
  int status = 0;
  if (o.baseline) { /* the checksum through finish(), as a run does: the subtracted code is the same */
    status = finish(C, C0, P, M * N, &o);
  } else {
    if (loom_sim_use_model(version, version == 4 ? 0 : tile, o.f32 ? LOOM_DTYPE_F32 : LOOM_DTYPE_I32))
      return report_runtime_error(loom_dma_error_code(), argv[2]);
    for (int r = 0; r < o.repeat; r++) {
      const int rc = manual_matmul(version, o.flow, o.driver_options, M, N, K, A, B, C, tile, tile,
                                   tile, o.f32);
      if (rc) return report_runtime_error(rc, argv[2]);
    }
    if (o.check) reference_matmul(M, N, K, A, B, P, o.f32);
    status = finish(C, C0, P, M * N, &o);
  }
  free(A), free(B), free(C), free(C0), free(P);
  return status;
}

static int run_conv(int argc, char **argv) {
  int64_t d[7];
  options o;
  if (argc < 9) return usage();
  for (int i = 0; i < 7; i++)
    if (!parse_int(argv[2 + i], &d[i])) return usage();
  if (!parse_options(argc, argv, 9, &o)) return usage();
  const int64_t batch = d[0], iC = d[1], H = d[2], W = d[3], oC = d[4], f = d[5], s = d[6];
  if (f < 1 || s < 1 || H < f || W < f) return usage();
  const int64_t oH = (H - f) / s + 1, oW = (W - f) / s + 1, n_out = batch * oC * oH * oW;
  rng_state = 0x85ebca6bu ^ (uint32_t)(iC * 73856093 + H * 19349663 + oC * 83492791 + f);
  uint32_t *in = random_words(batch * iC * H * W, o.f32);
  uint32_t *flt = random_words(oC * iC * f * f, o.f32);
  uint32_t *out = random_words(n_out, o.f32), *out0 = malloc((size_t)(n_out + 1) * 4);
  uint32_t *P = malloc((size_t)(n_out + 1) * 4);
  if (!in || !flt || !out || !out0 || !P) return fprintf(stderr, "out of memory\n"), 3;
  memcpy(out0, out, (size_t)n_out * 4);
  int status = 0;
  if (o.baseline) { /* as for matmul */
    status = finish(out, out0, P, n_out, &o);
  } else {
    if (loom_sim_use_model(LOOM_MODEL_CONV2D, 0, o.f32 ? LOOM_DTYPE_F32 : LOOM_DTYPE_I32))
      return report_runtime_error(loom_dma_error_code(), "conv");
    for (int r = 0; r < o.repeat; r++) {
      const int rc = manual_conv(o.driver_options, batch, iC, H, W, oC, f, s, in, flt, out, o.f32);
      if (rc) return report_runtime_error(rc, "conv");
    }
    if (o.check) reference_conv(batch, iC, H, W, oC, f, s, in, flt, P, o.f32);
    status = finish(out, out0, P, n_out, &o);
  }
  free(in), free(flt), free(out), free(out0), free(P);
  return status;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "matmul")) return run_matmul(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "conv")) return run_conv(argc, argv);
  return usage();
}
