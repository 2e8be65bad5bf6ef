/* Standalone runner of one GENERATED matmul driver (the counterpart of
 * benchmarks/manual/harness.c, same inputs, same checks), so that valgrind
 * and the task-clock timer see the generated and the hand-written drivers the
 * same way. The driver's C function is GEN_FUNC (set with -D at build time).
 *
 *   gen_harness MODEL SIZE M N K [--repeat R] [--no-check] [--baseline]
 * MODEL is v1..v4 (the simulated accelerator), SIZE its tile (0 for v4).
 * Prints "ok checksum=0x........"; exit 1 on a mismatch, 2 on bad usage,
 * 3 on a runtime error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dma_runtime.h"
#include "harness_common.h"

typedef struct {
  int32_t *allocated, *aligned;
  intptr_t offset, sizes[2], strides[2];
} memref2d;

void GEN_FUNC(memref2d *A, memref2d *B, memref2d *C);

static int32_t *random_matrix(int64_t n) {
  int32_t *p = malloc((size_t)(n > 0 ? n : 1) * 4);
  if (!p) exit(3);
  for (int64_t i = 0; i < n; i++) p[i] = (int32_t)next_random();
  return p;
}

static memref2d view(int32_t *p, int64_t rows, int64_t cols) {
  memref2d d = {p, p, 0, {rows, cols}, {cols, 1}};
  return d;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: gen_harness MODEL SIZE M N K [--repeat R] [--no-check] [--baseline]\n");
    return 2;
  }
  const int model = loom_model_id_from_name(argv[1]);
  const int size = atoi(argv[2]);
  const int64_t M = atoll(argv[3]), N = atoll(argv[4]), K = atoll(argv[5]);
  int repeat = 1, check = 1, baseline = 0;
  for (int i = 6; i < argc; i++) {
    if (!strcmp(argv[i], "--no-check")) check = 0;
    else if (!strcmp(argv[i], "--baseline")) baseline = 1, check = 0;
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else return 2;
  }
  if (model < 0 || M <= 0 || N <= 0 || K <= 0 || repeat < 1) return 2;
  rng_state = 0x12345678u;
  int32_t *A = random_matrix(M * K), *B = random_matrix(K * N), *C = random_matrix(M * N);
  int32_t *C0 = malloc((size_t)(M * N) * 4);
  if (!C0) return 3;
  memcpy(C0, C, (size_t)(M * N) * 4);
  if (loom_sim_use_model(model, size, LOOM_DTYPE_I32)) return 3;
  if (!baseline) {
    memref2d a = view(A, M, K), b = view(B, K, N), c = view(C, M, N);
    for (int r = 0; r < repeat; r++) GEN_FUNC(&a, &b, &c);
    if (loom_dma_error_code()) return report_runtime_error(loom_dma_error_code(), "generated matmul");
  }
  if (check) {
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        uint32_t want = (uint32_t)C0[i * N + j];
        for (int64_t k = 0; k < K; k++)
          want += (uint32_t)repeat * ((uint32_t)A[i * K + k] * (uint32_t)B[k * N + j]);
        if ((uint32_t)C[i * N + j] != want) {
          fprintf(stderr, "mismatch at (%lld, %lld)\n", (long long)i, (long long)j);
          return 1;
        }
      }
  }
  printf("ok checksum=0x%08x\n", checksum(C, M * N));
  free(A), free(B), free(C), free(C0);
  return 0;
}
