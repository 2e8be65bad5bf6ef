/* Hand-written (SECDA-style) host drivers: the baseline that loom's
 * generated drivers must beat (issue 4). All drivers talk to the accelerator
 * through the loom DMA runtime (dma_runtime.h) exactly like generated code,
 * call dma_init/dma_free themselves, and return 0 or a runtime error code
 * (LOOM_ERR_ARGUMENT for bad sizes/tiles given to the driver itself).
 * The accelerator model is chosen by the caller (loom_sim_use_model).
 *
 * Semantics follow linalg: C += A.B (A is M x K, B is K x N, C is M x N,
 * row-major, contiguous); out += conv(in, filters) (NCHW input, FCHW filters,
 * output N x oC x oH x oW). int32 arithmetic wraps. */
#ifndef LOOM_MANUAL_DRIVERS_H
#define LOOM_MANUAL_DRIVERS_H

#include <stdint.h>

/* Flows of the MatMul accelerators (AXI4MLIR tables): v1 Ns; v2 Ns/As/Bs;
 * v3 and v4 Ns/As/Bs/Cs. */
enum manual_flow { MANUAL_NS = 0, MANUAL_AS = 1, MANUAL_BS = 2, MANUAL_CS = 3 };
/* Optimisations, or-ed: one DMA transfer per run of instructions up to the
 * next receive; input staging in two halves with receives added one step late. */
enum manual_option { MANUAL_COALESCE = 1, MANUAL_DOUBLE_BUFFER = 2 };

/* Any flow and options; tiles as below (v1..v3: tm = tn = tk = the accelerator
 * size). f32 = 1: float data (C += A.B in float), else int32 (wraps). */
int manual_matmul(int version, int flow, int options, int64_t M, int64_t N, int64_t K,
                  const void *A, const void *B, void *C, int tm, int tn, int tk, int f32);

/* MatMul, Nothing-stationary flow, no options (one instruction per (m, n, k) tile).
 * tile: the accelerator size (4, 8 or 16) for v1..v3; for v4 the square tile
 * (16, 32, 48 or 64: a multiple of 16 whose tile x tile fits 4096 words). */
int manual_v1_ns(int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B, int32_t *C, int tile);
int manual_v2_ns(int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B, int32_t *C, int tile);
int manual_v3_ns(int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B, int32_t *C, int tile);
int manual_v4_ns(int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B, int32_t *C, int tile);
/* v4 with separate (non-square) tile sizes, each a multiple of 16 below 1024. */
int manual_v4_ns_tiles(int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B, int32_t *C,
                       int tm, int tn, int tk);

int manual_v1_ns_f32(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C, int tile);
int manual_v2_ns_f32(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C, int tile);
int manual_v3_ns_f32(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C, int tile);
int manual_v4_ns_f32(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C, int tile);

/* Conv2D accelerator, output-stationary host protocol (AXI4MLIR Fig. 15b).
 * in: batch x iC x H x W; filters: oC x iC x fHW x fHW; out: batch x oC x oH x oW
 * with oH = (H - fHW) / stride + 1 (no padding). */
int manual_conv(int options, int64_t batch, int64_t iC, int64_t H, int64_t W, int64_t oC,
                int64_t fHW, int64_t stride, const void *in, const void *filters, void *out,
                int f32);
int manual_conv_os(int64_t batch, int64_t iC, int64_t H, int64_t W, int64_t oC, int64_t fHW,
                   int64_t stride, const int32_t *in, const int32_t *filters, int32_t *out);
int manual_conv_os_f32(int64_t batch, int64_t iC, int64_t H, int64_t W, int64_t oC, int64_t fHW,
                       int64_t stride, const float *in, const float *filters, float *out);

/* The ws_bias engine (tests/accel_flow/frontier/ws_bias_c.json): weight stationary, each output tile
 * preloaded and read back (replaced) around its MAC; tile t; options: MANUAL_COALESCE only; staging
 * buffers of staging_words words (the description's). */
int manual_ws_preload(int options, int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B,
                      int32_t *C, int t, int staging_words);

#endif
