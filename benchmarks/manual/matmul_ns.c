/* Hand-written MatMul drivers, Nothing-stationary (Ns) flow, for the v1..v4
 * accelerators: the SECDA-style baseline of AXI4MLIR section IV-A.
 *
 * What a competent hand-tuner WOULD do (and this file does):
 *  - loop over (m, n, k) tiles and, per tile, stage the instruction words and
 *    the A and B tiles straight into the DMA input buffer (dma_in_buffer()),
 *    one memcpy per contiguous row; zero-fill only the padding of edge tiles;
 *  - issue exactly one DMA send per instruction (opcode + A + B) and one
 *    receive per C tile: the fewest transactions for the Ns flow, no wasted
 *    words (v4 edge tiles shrink to the next multiple of 16);
 *  - hoist row pointers / address arithmetic out of the inner loops and
 *    accumulate the received tile into C with a tight (vectorisable) loop;
 *  - check every runtime return code.
 * What it would NOT do:
 *  - re-derive a different dataflow (As/Bs/Cs) or loop order per problem size,
 *    or tile for the CPU caches with a cost model;
 *  - coalesce several instructions into one DMA transaction, or double-buffer;
 *  - specialise per accelerator size beyond the tile parameter. */
#include <string.h>

#include "dma_runtime.h"
#include "manual_drivers.h"

#define DMA_ADDRESS 0x40400000u
#define IN_ADDRESS 0x16000000u
#define OUT_ADDRESS 0x16400000u
#define STAGING_WORDS 65536

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Copy a rows x cols block (row stride ld) into a prows x pcols block at dst,
 * zero-filling the padding. Elements are moved as raw 32-bit words. */
static void pack_block(uint32_t *restrict dst, const uint32_t *restrict src, int64_t ld,
                       int rows, int cols, int prows, int pcols) {
  const size_t row_bytes = (size_t)cols * 4, pad_bytes = (size_t)(pcols - cols) * 4;
  for (int r = 0; r < rows; r++) {
    memcpy(dst, src, row_bytes);
    if (pad_bytes) memset(dst + cols, 0, pad_bytes);
    dst += pcols, src += ld;
  }
  if (rows < prows) memset(dst, 0, (size_t)(prows - rows) * pcols * 4);
}

/* C[rows x cols] (row stride ldc) += tile (row stride pcols); unsigned words
 * so int32 wraps without undefined behaviour. */
static void accumulate_i32(uint32_t *restrict C, int64_t ldc, const uint32_t *restrict tile,
                           int rows, int cols, int pcols) {
  for (int r = 0; r < rows; r++, C += ldc, tile += pcols)
    for (int c = 0; c < cols; c++) C[c] += tile[c];
}

static void accumulate_f32(float *restrict C, int64_t ldc, const float *restrict tile, int rows,
                           int cols, int pcols) {
  for (int r = 0; r < rows; r++, C += ldc, tile += pcols)
    for (int c = 0; c < cols; c++) C[c] += tile[c];
}

static int round_up16(int64_t x) { return (int)((x + 15) / 16 * 16); }

/* The whole Ns driver; `version` only changes the instruction header words
 * and how edge tiles are sized. f32 only changes the accumulate loop. */
static int matmul_ns(int version, int64_t M, int64_t N, int64_t K, const void *Av,
                     const void *Bv, void *Cv, int tm, int tn, int tk, int f32) {
  if (M < 0 || N < 0 || K < 0 || !Av || !Bv || !Cv) return LOOM_ERR_ARGUMENT;
  if (version == 4) {
    if (tm < 16 || tn < 16 || tk < 16 || tm % 16 || tn % 16 || tk % 16 || tm >= 1024 ||
        tn >= 1024 || tk >= 1024 || tm * tk > 4096 || tk * tn > 4096 || tm * tn > 4096)
      return LOOM_ERR_ARGUMENT;
  } else if (!(tm == 4 || tm == 8 || tm == 16) || tn != tm || tk != tm) {
    return LOOM_ERR_ARGUMENT;
  }
  if (M == 0 || N == 0 || K == 0) return LOOM_OK;
  const uint32_t *A = Av, *B = Bv;
  uint32_t *C = Cv;
  const int header = version == 1 ? 0 : version == 4 ? 2 : 1;
  const uint32_t opcode = version == 2 ? 7u : 15u; /* sA sB compute (+ send C for v3/v4) */

  int rc = dma_init(DMA_ADDRESS, IN_ADDRESS, STAGING_WORDS, OUT_ADDRESS, STAGING_WORDS);
  if (rc) return rc;
  uint32_t *const in = dma_in_buffer(), *const out = dma_out_buffer();

  for (int64_t m0 = 0; m0 < M; m0 += tm) {
    const int mm = (int)min64(tm, M - m0);
    for (int64_t n0 = 0; n0 < N; n0 += tn) {
      const int nn = (int)min64(tn, N - n0);
      uint32_t *const c_tile = C + m0 * N + n0;
      for (int64_t k0 = 0; k0 < K; k0 += tk) {
        const int kk = (int)min64(tk, K - k0);
        /* v1..v3 have a fixed tile: pad; v4 takes the edge tile's own size. */
        const int pm = version == 4 ? round_up16(mm) : tm;
        const int pn = version == 4 ? round_up16(nn) : tn;
        const int pk = version == 4 ? round_up16(kk) : tk;
        uint32_t *p = in;
        if (header >= 1) *p++ = opcode;
        if (header == 2) *p++ = (uint32_t)pm | (uint32_t)pn << 10 | (uint32_t)pk << 20;
        pack_block(p, A + m0 * K + k0, K, mm, kk, pm, pk);
        p += pm * pk;
        pack_block(p, B + k0 * N + n0, N, kk, nn, pk, pn);
        p += pk * pn;
        if ((rc = dma_start_send((int)(p - in), 0)) || (rc = dma_wait_send())) goto done;
        if ((rc = dma_start_recv(pm * pn, 0)) || (rc = dma_wait_recv())) goto done;
        if (f32)
          accumulate_f32((float *)c_tile, N, (const float *)out, mm, nn, pn);
        else
          accumulate_i32(c_tile, N, out, mm, nn, pn);
      }
    }
  }
done:;
  const int free_rc = dma_free();
  return rc ? rc : free_rc;
}

#define NS_DRIVERS(v)                                                                          \
  int manual_v##v##_ns(int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B,    \
                       int32_t *C, int tile) {                                                 \
    return matmul_ns(v, M, N, K, A, B, C, tile, tile, tile, 0);                                \
  }                                                                                            \
  int manual_v##v##_ns_f32(int64_t M, int64_t N, int64_t K, const float *A, const float *B,    \
                           float *C, int tile) {                                               \
    return matmul_ns(v, M, N, K, A, B, C, tile, tile, tile, 1);                                \
  }
NS_DRIVERS(1)
NS_DRIVERS(2)
NS_DRIVERS(3)
NS_DRIVERS(4)

int manual_v4_ns_tiles(int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B,
                       int32_t *C, int tm, int tn, int tk) {
  return matmul_ns(4, M, N, K, A, B, C, tm, tn, tk, 0);
}
