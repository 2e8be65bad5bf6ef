/* Hand-written driver for the ws_bias engine (tests/accel_flow/frontier/ws_bias_c.json): a
 * weight-stationary T x T x T i32 MatMul that keeps no partial sums, so every output tile is
 * preloaded and read back around its MAC. The flow loom generates from the description, written
 * out by hand: loops n, k, m; per (n, k) the weight tile B(k, n) once (0x31); per m the C tile
 * (0x32, the running sum), the A tile (0x33) and the drain (0x34), then the receive, which
 * replaces C's tile (its valid corner). Rows copied straight into the staging buffer (padding
 * zero-filled), one send per instruction or, with MANUAL_COALESCE, one per run
 * of instructions up to the receive (as accel-coalesce), in staging buffers of the description's size
 * (staging_words, the generated driver's). No double buffering: the next preload
 * of a C tile reads what the last receive wrote, which a one-step-late receive would break. */
#include "manual_drivers.h"
#include "manual_staging.h"

enum { WS_LOAD_W = 0x31, WS_PRELOAD = 0x32, WS_MAC = 0x33, WS_DRAIN = 0x34 };

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* A rows x cols block (row stride ld) into a t x t block, zero-padded. Rows of a few words are
 * copied by a loop, not memcpy: gcc -O3 expands a memcpy of unknown length into `rep movsq`, whose
 * start-up costs more than the copy itself at these sizes (measured: 3x the whole driver). */
static void ws_pack(uint32_t *restrict dst, const uint32_t *restrict src, int64_t ld, int rows, int cols, int t) {
  for (int r = 0; r < t; r++, dst += t, src += ld)
    for (int c = 0; c < t; c++) dst[c] = r < rows && c < cols ? src[c] : 0;
}

/* One instruction: its opcode, then (block != NULL) a rows x cols block padded to t x t. */
static int ws_stage(outbox *ob, uint32_t opcode, const uint32_t *block, int64_t ld, int rows, int cols, int t) {
  uint32_t *p;
  int rc = outbox_reserve(ob, 1 + (block ? t * t : 0), &p);
  if (rc) return rc;
  *p++ = opcode;
  if (block) ws_pack(p, block, ld, rows, cols, t);
  return outbox_end(ob);
}

/* Send what is staged, receive the t x t tile and copy its rows x cols corner over C's tile. */
static int ws_receive_replace(outbox *ob, const inbox *ib, uint32_t *C, int64_t ldc, int rows, int cols, int t) {
  int rc = outbox_flush(ob);
  if (rc || (rc = dma_start_recv(t * t, 0)) || (rc = dma_wait_recv())) return rc;
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) C[r * ldc + c] = ib->out[(int64_t)r * t + c];
  loom_timing_driver_copied(LOOM_TRACE_RECV, t * t);
  return LOOM_OK;
}

int manual_ws_preload(int options, int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B,
                      int32_t *C, int t, int staging_words) {
  if (M < 0 || N < 0 || K < 0 || t < 1 || t > 256 || !A || !B || !C || (options & ~MANUAL_COALESCE) ||
      staging_words < 1 + t * t)
    return LOOM_ERR_ARGUMENT;
  if (M == 0 || N == 0 || K == 0) return LOOM_OK;
  outbox ob;
  inbox ib;
  const uint32_t *a = (const uint32_t *)A, *b = (const uint32_t *)B;
  uint32_t *c = (uint32_t *)C;
  int rc = staging_open_words(&ob, &ib, (options & MANUAL_COALESCE) != 0, 0, 0, staging_words);
  for (int64_t n0 = 0; n0 < N && !rc; n0 += t) {
    const int nn = (int)min64(t, N - n0);
    for (int64_t k0 = 0; k0 < K && !rc; k0 += t) {
      const int kk = (int)min64(t, K - k0);
      rc = ws_stage(&ob, WS_LOAD_W, b + k0 * N + n0, N, kk, nn, t);
      for (int64_t m0 = 0; m0 < M && !rc; m0 += t) {
        const int mm = (int)min64(t, M - m0);
        if (!(rc = ws_stage(&ob, WS_PRELOAD, c + m0 * N + n0, N, mm, nn, t)) &&
            !(rc = ws_stage(&ob, WS_MAC, a + m0 * K + k0, K, mm, kk, t)) &&
            !(rc = ws_stage(&ob, WS_DRAIN, NULL, 0, 0, 0, t)))
          rc = ws_receive_replace(&ob, &ib, c + m0 * N + n0, N, mm, nn, t);
      }
    }
  }
  return staging_close(&ob, &ib, rc);
}
