/* Hand-written MatMul drivers for the v1..v4 accelerators, one loop nest per
 * flow of the AXI4MLIR tables (Ns, As, Bs, Cs): the SECDA-style baselines
 * that loom's generated drivers are compared with, flow for flow.
 *
 * What a competent hand-tuner WOULD do (and this file does):
 *  - loop over tiles in the flow's order (Ns, Cs: m, n, k; As: m, k, n;
 *    Bs: n, k, m) and stage each instruction straight into the DMA input
 *    buffer: opcode (and v4 extension) words, then the A / B tiles, one
 *    memcpy per contiguous row; zero-fill only the padding of edge tiles
 *    (v4 edge tiles shrink to the next multiple of 16 instead);
 *  - one DMA send per instruction and one receive per C tile, each received
 *    tile added into C with a tight loop; check every runtime return code;
 *  - with MANUAL_COALESCE, one send per run of instructions up to the next
 *    receive (e.g. Cs: every k step and the "send C" opcode in one transfer),
 *    as loom's accel-coalesce does;
 *  - with MANUAL_DOUBLE_BUFFER, fill one half of the staging buffer while
 *    the other is sent and add each received tile one step late, as loom's
 *    double_buffer=True does (manual_staging.h).
 * What it would NOT do: tile for the CPU caches with a cost model, or pick
 * the flow per problem size (the caller names the flow). */
#include "manual_drivers.h"
#include "manual_staging.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int round_up16(int64_t x) { return (int)((x + 15) / 16 * 16); }

/* Copy a rows x cols block (row stride ld) into a prows x pcols block at dst,
 * zero-filling the padding. Elements move as raw 32-bit words. */
static void pack_block(uint32_t *restrict dst, const uint32_t *restrict src, int64_t ld, int rows,
                       int cols, int prows, int pcols) {
  const size_t row_bytes = (size_t)cols * 4, pad_bytes = (size_t)(pcols - cols) * 4;
  for (int r = 0; r < rows; r++) {
    memcpy(dst, src, row_bytes);
    if (pad_bytes) memset(dst + cols, 0, pad_bytes);
    dst += pcols, src += ld;
  }
  if (rows < prows) memset(dst, 0, (size_t)(prows - rows) * pcols * 4);
}

enum { OP_READ_A = 1, OP_READ_B = 2, OP_COMPUTE = 4, OP_SEND_C = 8 };

/* One run of one driver: the problem, the accelerator and the staging sides. */
typedef struct matmul_run {
  int version, header; /* header: opcode words per instruction (0, 1 or 2 with the v4 extension) */
  int64_t M, N, K;
  int tm, tn, tk;
  const uint32_t *A, *B;
  uint32_t *C;
  outbox ob;
  inbox ib;
} matmul_run;

/* The tile starting at (m0, n0, k0): its rows/cols and the padded sizes sent. */
typedef struct tile {
  int64_t m0, n0, k0;
  int mm, nn, kk, pm, pn, pk;
} tile;

static tile tile_at(const matmul_run *r, int64_t m0, int64_t n0, int64_t k0) {
  tile t = {m0, n0, k0, (int)min64(r->tm, r->M - m0), (int)min64(r->tn, r->N - n0),
            (int)min64(r->tk, r->K - k0), r->tm, r->tn, r->tk};
  if (r->version == 4) /* flexible accelerator: the edge tile's own size */
    t.pm = round_up16(t.mm), t.pn = round_up16(t.nn), t.pk = round_up16(t.kk);
  return t;
}

/* Stage one instruction: opcode (+ v4 extension word), then the A and/or B tile. */
static int stage(matmul_run *r, uint32_t opcode, const tile *t, int with_a, int with_b) {
  const int words = r->header + (with_a ? t->pm * t->pk : 0) + (with_b ? t->pk * t->pn : 0);
  uint32_t *p;
  int rc = outbox_reserve(&r->ob, words, &p);
  if (rc) return rc;
  if (r->header >= 1) *p++ = opcode;
  if (r->header == 2) *p++ = (uint32_t)t->pm | (uint32_t)t->pn << 10 | (uint32_t)t->pk << 20;
  if (with_a) {
    pack_block(p, r->A + t->m0 * r->K + t->k0, r->K, t->mm, t->kk, t->pm, t->pk);
    p += t->pm * t->pk;
  }
  if (with_b) pack_block(p, r->B + t->k0 * r->N + t->n0, r->N, t->kk, t->nn, t->pk, t->pn);
  return outbox_end(&r->ob);
}

static int receive_c(matmul_run *r, const tile *t) {
  return receive_accumulate(&r->ob, &r->ib, r->C + t->m0 * r->N + t->n0, r->N, t->mm, t->nn, t->pn,
                            t->pm * t->pn);
}

/* Compute opcode of an instruction that reads `reads`: v2 computes and sends C,
 * v3/v4 compute (C += A.B) and, unless the flow keeps C, send it. */
static uint32_t compute_opcode(const matmul_run *r, uint32_t reads, int send_c) {
  return reads | OP_COMPUTE | (r->version != 2 && send_c ? OP_SEND_C : 0u);
}

/* Ns: (s r) per (m, n, k); v2 opcode 7, v3/v4 15. */
static int flow_ns(matmul_run *r) {
  const uint32_t opcode = compute_opcode(r, OP_READ_A | OP_READ_B, 1);
  int rc = LOOM_OK;
  for (int64_t m0 = 0; m0 < r->M && !rc; m0 += r->tm)
    for (int64_t n0 = 0; n0 < r->N && !rc; n0 += r->tn)
      for (int64_t k0 = 0; k0 < r->K && !rc; k0 += r->tk) {
        const tile t = tile_at(r, m0, n0, k0);
        if (!(rc = stage(r, opcode, &t, 1, 1))) rc = receive_c(r, &t);
      }
  return rc;
}

/* As (loops m, k, n): A(m, k) sent once, then per n: B, compute, receive C
 * (v2 opcode 6, v3/v4 14). Bs (loops n, k, m) swaps the roles: B once, then
 * per m: A, compute, receive (v2 5, v3/v4 13). */
static int flow_input_stationary(matmul_run *r, int a_stays) {
  const uint32_t load = a_stays ? OP_READ_A : OP_READ_B;
  const uint32_t step = compute_opcode(r, a_stays ? OP_READ_B : OP_READ_A, 1);
  const int64_t outer = a_stays ? r->M : r->N, inner = a_stays ? r->N : r->M;
  const int t_outer = a_stays ? r->tm : r->tn, t_inner = a_stays ? r->tn : r->tm;
  int rc = LOOM_OK;
  for (int64_t o0 = 0; o0 < outer && !rc; o0 += t_outer)
    for (int64_t k0 = 0; k0 < r->K && !rc; k0 += r->tk) {
      const tile first = a_stays ? tile_at(r, o0, 0, k0) : tile_at(r, 0, o0, k0);
      rc = stage(r, load, &first, a_stays, !a_stays);
      for (int64_t i0 = 0; i0 < inner && !rc; i0 += t_inner) {
        const tile t = a_stays ? tile_at(r, o0, i0, k0) : tile_at(r, i0, o0, k0);
        if (!(rc = stage(r, step, &t, !a_stays, a_stays))) rc = receive_c(r, &t);
      }
    }
  return rc;
}

/* Cs: the accelerator accumulates C over k (opcode 7), then "send C" (8) and one receive per (m, n). */
static int flow_cs(matmul_run *r) {
  int rc = LOOM_OK;
  for (int64_t m0 = 0; m0 < r->M && !rc; m0 += r->tm)
    for (int64_t n0 = 0; n0 < r->N && !rc; n0 += r->tn) {
      tile t = tile_at(r, m0, n0, 0);
      for (int64_t k0 = 0; k0 < r->K && !rc; k0 += r->tk) {
        t = tile_at(r, m0, n0, k0);
        rc = stage(r, compute_opcode(r, OP_READ_A | OP_READ_B, 0), &t, 1, 1);
      }
      if (!rc) rc = stage(r, OP_SEND_C, &t, 0, 0);
      if (!rc) rc = receive_c(r, &t);
    }
  return rc;
}

static int valid_tiles(int version, int tm, int tn, int tk) {
  if (version == 4)
    return tm >= 16 && tn >= 16 && tk >= 16 && tm % 16 == 0 && tn % 16 == 0 && tk % 16 == 0 &&
           tm < 1024 && tn < 1024 && tk < 1024 && tm * tk <= 4096 && tk * tn <= 4096 &&
           tm * tn <= 4096;
  return (tm == 4 || tm == 8 || tm == 16) && tn == tm && tk == tm;
}

/* Which flows each accelerator has (the paper's tables). */
static int flow_supported(int version, int flow) {
  switch (version) {
  case 1: return flow == MANUAL_NS;
  case 2: return flow == MANUAL_NS || flow == MANUAL_AS || flow == MANUAL_BS;
  case 3:
  case 4: return flow >= MANUAL_NS && flow <= MANUAL_CS;
  default: return 0;
  }
}

int manual_matmul(int version, int flow, int options, int64_t M, int64_t N, int64_t K,
                  const void *A, const void *B, void *C, int tm, int tn, int tk, int f32) {
  if (!flow_supported(version, flow) || !valid_tiles(version, tm, tn, tk) || M < 0 || N < 0 ||
      K < 0 || !A || !B || !C || (options & ~(MANUAL_COALESCE | MANUAL_DOUBLE_BUFFER)))
    return LOOM_ERR_ARGUMENT;
  if (M == 0 || N == 0 || K == 0) return LOOM_OK;
  matmul_run r = {.version = version, .header = version == 1 ? 0 : version == 4 ? 2 : 1,
                  .M = M, .N = N, .K = K, .tm = tm, .tn = tn, .tk = tk,
                  .A = A, .B = B, .C = C};
  int rc = staging_open(&r.ob, &r.ib, (options & MANUAL_COALESCE) != 0,
                        (options & MANUAL_DOUBLE_BUFFER) != 0, f32);
  if (!rc) {
    switch (flow) {
    case MANUAL_NS: rc = flow_ns(&r); break;
    case MANUAL_AS: rc = flow_input_stationary(&r, 1); break;
    case MANUAL_BS: rc = flow_input_stationary(&r, 0); break;
    default: rc = flow_cs(&r); break;
    }
  }
  return staging_close(&r.ob, &r.ib, rc);
}

#define NS_DRIVERS(v)                                                                          \
  int manual_v##v##_ns(int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B,    \
                       int32_t *C, int tile) {                                                 \
    return manual_matmul(v, MANUAL_NS, 0, M, N, K, A, B, C, tile, tile, tile, 0);              \
  }                                                                                            \
  int manual_v##v##_ns_f32(int64_t M, int64_t N, int64_t K, const float *A, const float *B,    \
                           float *C, int tile) {                                               \
    return manual_matmul(v, MANUAL_NS, 0, M, N, K, A, B, C, tile, tile, tile, 1);              \
  }
NS_DRIVERS(1)
NS_DRIVERS(2)
NS_DRIVERS(3)
NS_DRIVERS(4)

int manual_v4_ns_tiles(int64_t M, int64_t N, int64_t K, const int32_t *A, const int32_t *B,
                       int32_t *C, int tm, int tn, int tk) {
  return manual_matmul(4, MANUAL_NS, 0, M, N, K, A, B, C, tm, tn, tk, 0);
}
