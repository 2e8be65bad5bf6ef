/* MatMul accelerator models v1..v4 (AXI4MLIR Table I) with a protocol
 * checker, as a loom_model.h model: selected by "model": "builtin:matmul_vN"
 * (the version is read from the model name in the configuration, the tile
 * size from "tile", the element type from "data_type").
 * The model parses the input word stream as the hardware would: opcode word
 * (v2..v4), extension word (v4), then operand blocks; an operand block must
 * end inside the transfer that started it.
 * Layouts: A is M x K, B is K x N, C is M x N, all row-major. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dma_runtime.h"
#include "loom_model_glue.h"

enum { ACT_READ_A = 1, ACT_READ_B = 2, ACT_COMPUTE = 4, ACT_SEND = 8 };
enum parse_state { EXPECT_OPCODE, EXPECT_EXT, IN_BLOCK };
#define V4_BUFFER_WORDS 4096

typedef struct matmul_model {
  char name[64];
  int version, f32;
  int arithmetic;          /* 0: "arithmetic":0, values are not computed (host timing) */
  int M, N, K;             /* tile of the current instruction */
  int a_rows, a_cols;      /* shape held by the A buffer (0 = never loaded) */
  int b_rows, b_cols;
  int c_rows, c_cols;      /* shape of the partial sums in C (0 = clear) */
  uint32_t *A, *B, *C, *out; /* C holds uint32 (i32) or float (f32) */
  int64_t out_len;         /* words waiting to be received */
  int64_t transfers, macs; /* sends seen; multiply-accumulates done */
  char *err;               /* the caller's message buffer during a call */
  int err_len;
  /* parser */
  int state;
  uint32_t opcode;
  int actions;             /* actions of the current opcode not yet done */
  int64_t op_transfer;     /* send # and word index of the current opcode */
  int op_word;
  uint32_t *block;         /* operand block being filled */
  const char *block_name;
  int block_len, block_filled;
} matmul_model;

LOOM_MODEL_FAIL(matmul_model)

static const char *where(matmul_model *m, char *buf, size_t size) {
  if (m->version == 1)
    snprintf(buf, size, "tile stream (send #%lld, word %d)", (long long)m->op_transfer, m->op_word);
  else
    snprintf(buf, size, "opcode %u (send #%lld, word %d)", m->opcode, (long long)m->op_transfer,
             m->op_word);
  return buf;
}

LOOM_MODEL_SHORT_TRANSFER(matmul_model)

/* C[M][N] += A[M][K] . B[K][N]; i-k-j order keeps the j loop contiguous
 * for vectorisation. Unsigned: int32 wrap-around without UB. */
static void mac_u32(uint32_t *restrict C, const uint32_t *restrict A,
                    const uint32_t *restrict B, int M, int N, int K) {
  for (int i = 0; i < M; i++) {
    uint32_t *restrict c = C + (size_t)i * N;
    for (int k = 0; k < K; k++) {
      const uint32_t a = A[(size_t)i * K + k];
      const uint32_t *restrict b = B + (size_t)k * N;
      for (int j = 0; j < N; j++) c[j] += a * b[j];
    }
  }
}

static void mac_f32(float *restrict C, const float *restrict A, const float *restrict B,
                    int M, int N, int K) {
  for (int i = 0; i < M; i++) {
    float *restrict c = C + (size_t)i * N;
    for (int k = 0; k < K; k++) {
      const float a = A[(size_t)i * K + k];
      const float *restrict b = B + (size_t)k * N;
      for (int j = 0; j < N; j++) c[j] += a * b[j];
    }
  }
}

static int do_compute(matmul_model *m, int overwrite) {
  char w[160];
  if (!m->a_rows || !m->b_rows)
    return fail(m, LOOM_ERR_STATE, "%s: compute before %s was loaded", where(m, w, sizeof w),
                !m->a_rows ? "A" : "B");
  if (m->a_rows != m->M || m->a_cols != m->K || m->b_rows != m->K || m->b_cols != m->N)
    return fail(m, LOOM_ERR_STATE, "%s: compute of tile M=%d N=%d K=%d but A holds %dx%d and B %dx%d",
                where(m, w, sizeof w), m->M, m->N, m->K, m->a_rows, m->a_cols, m->b_rows, m->b_cols);
  if (!overwrite && m->c_rows && (m->c_rows != m->M || m->c_cols != m->N))
    return fail(m, LOOM_ERR_STATE, "%s: accumulating a %dx%d tile into partial sums of shape %dx%d",
                where(m, w, sizeof w), m->M, m->N, m->c_rows, m->c_cols);
  if (overwrite || !m->c_rows) memset(m->C, 0, (size_t)m->M * m->N * 4);
  if (!m->arithmetic)
    ; /* host-timing run: the words move, the values are not computed */
  else if (m->f32)
    mac_f32((float *)m->C, (const float *)m->A, (const float *)m->B, m->M, m->N, m->K);
  else
    mac_u32(m->C, m->A, m->B, m->M, m->N, m->K);
  m->c_rows = m->M, m->c_cols = m->N;
  m->macs += (int64_t)m->M * m->N * m->K;
  return 0;
}

/* Queue C (current tile shape) for the host; v3/v4 clear C afterwards. */
static int do_send(matmul_model *m, int clear) {
  char w[160];
  if (m->out_len)
    return fail(m, LOOM_ERR_ACCEL_OVERFLOW,
                "%s: C is sent while the previous %lld output words were not received",
                where(m, w, sizeof w), (long long)m->out_len);
  const int words = m->M * m->N;
  if (m->c_rows) memcpy(m->out, m->C, (size_t)words * 4);
  else memset(m->out, 0, (size_t)words * 4); /* never computed: C is zero */
  m->out_len = words;
  if (clear) {
    memset(m->C, 0, (size_t)words * 4);
    m->c_rows = m->c_cols = 0;
  }
  return 0;
}

static void start_block(matmul_model *m, uint32_t *buf, const char *name, int len) {
  m->state = IN_BLOCK;
  m->block = buf, m->block_name = name;
  m->block_len = len, m->block_filled = 0;
}

/* Runs the remaining actions of the current instruction in bit order,
 * stopping at the next operand block to read. */
static int run_actions(matmul_model *m) {
  int rc;
  if (m->actions & ACT_READ_A) {
    m->actions &= ~ACT_READ_A;
    m->a_rows = 0; /* invalid until the block is complete */
    start_block(m, m->A, "A", m->M * m->K);
    return 0;
  }
  if (m->actions & ACT_READ_B) {
    m->actions &= ~ACT_READ_B;
    m->b_rows = 0;
    start_block(m, m->B, "B", m->K * m->N);
    return 0;
  }
  if (m->actions & ACT_COMPUTE) {
    m->actions &= ~ACT_COMPUTE;
    const int compute_and_send = m->version <= 2; /* v1, v2: C = A.B, sent at once */
    if ((rc = do_compute(m, compute_and_send))) return rc;
    if (compute_and_send && (rc = do_send(m, 0))) return rc;
  }
  if (m->actions & ACT_SEND) {
    m->actions &= ~ACT_SEND;
    if ((rc = do_send(m, 1))) return rc;
  }
  m->state = EXPECT_OPCODE;
  if (m->version == 1) { /* no opcodes: the next words are the next A tile */
    m->actions = ACT_READ_A | ACT_READ_B | ACT_COMPUTE;
    return run_actions(m);
  }
  return 0;
}

static int accept_opcode(matmul_model *m, uint32_t word, int index) {
  char w[160];
  m->opcode = word;
  m->op_transfer = m->transfers, m->op_word = index;
  const uint32_t valid = m->version == 2 ? 0x7u : 0xfu;
  if (word == 0 || (word & ~valid))
    return fail(m, LOOM_ERR_UNKNOWN_OPCODE, "%s: unknown opcode (valid opcodes are 1..%u)",
                where(m, w, sizeof w), valid);
  m->actions = (int)word;
  if (m->version == 4) {
    m->state = EXPECT_EXT;
    return 0;
  }
  return run_actions(m);
}

static int accept_extension(matmul_model *m, uint32_t ext, int index) {
  char w[160];
  const int M = ext & 0x3ff, N = (ext >> 10) & 0x3ff, K = (ext >> 20) & 0x3ff;
  if ((ext >> 30) || !M || !N || !K || M % 16 || N % 16 || K % 16)
    return fail(m, LOOM_ERR_TILE_CONSTRAINT,
                "%s: extension word %u (send #%lld, word %d) gives M=%d N=%d K=%d%s; "
                "each must be a positive multiple of 16 below 1024",
                where(m, w, sizeof w), ext, (long long)m->transfers, index, M, N, K,
                (ext >> 30) ? " and sets bits 31..30" : "");
  if (M * K > V4_BUFFER_WORDS || K * N > V4_BUFFER_WORDS || M * N > V4_BUFFER_WORDS)
    return fail(m, LOOM_ERR_ACCEL_OVERFLOW,
                "%s: tile M=%d N=%d K=%d needs A %d, B %d, C %d words; each buffer holds %d",
                where(m, w, sizeof w), M, N, K, M * K, K * N, M * N, V4_BUFFER_WORDS);
  m->M = M, m->N = N, m->K = K;
  return run_actions(m);
}

int loom_model_consume(void *state, const uint32_t *words, int64_t n, char *err, int err_len) {
  matmul_model *m = (matmul_model *)state;
  m->err = err, m->err_len = err_len;
  m->transfers++;
  int64_t i = 0;
  int rc = 0, block_started_here = 0;
  while (i < n && rc == 0) {
    switch (m->state) {
    case EXPECT_OPCODE:
      rc = accept_opcode(m, words[i], (int)i);
      i++;
      break;
    case EXPECT_EXT:
      rc = accept_extension(m, words[i], (int)i);
      i++;
      break;
    case IN_BLOCK: {
      if (m->version == 1 && m->block == m->A && m->block_filled == 0)
        m->op_transfer = m->transfers, m->op_word = (int)i; /* a new v1 tile */
      int64_t take = m->block_len - m->block_filled;
      if (take > n - i) take = n - i;
      memcpy(m->block + m->block_filled, words + i, (size_t)take * 4);
      block_started_here = 1;
      m->block_filled += (int)take;
      i += take;
      if (m->block_filled == m->block_len) {
        block_started_here = 0;
        if (m->block == m->A) m->a_rows = m->M, m->a_cols = m->K;
        else m->b_rows = m->K, m->b_cols = m->N;
        rc = run_actions(m);
      }
      break;
    }
    }
  }
  if (rc == 0 && m->state == IN_BLOCK && block_started_here) rc = short_transfer(m);
  return rc;
}

int loom_model_idle(void *state, char *err, int err_len) {
  matmul_model *m = (matmul_model *)state;
  char w[160];
  m->err = err, m->err_len = err_len;
  if (m->state == EXPECT_EXT)
    return fail(m, LOOM_ERR_TRANSFER_LENGTH, "%s: the extension word never arrived", where(m, w, sizeof w));
  if (m->state == IN_BLOCK && !(m->version == 1 && m->block == m->A && m->block_filled == 0))
    return fail(m, LOOM_ERR_TRANSFER_LENGTH, "%s: still expects %d words of %s", where(m, w, sizeof w),
                m->block_len - m->block_filled, m->block_name);
  return 0;
}

LOOM_MODEL_QUEUE(matmul_model, out, out_len)

void loom_model_destroy(void *state) {
  matmul_model *m = (matmul_model *)state;
  if (!m) return;
  free(m->A), free(m->B), free(m->C), free(m->out);
  free(m);
}

void *loom_model_create(const char *config, char *err, int err_len) {
  char model[64] = "";
  int64_t size = 0;
  const char *v = loom_json_string(config, "model", model, sizeof model) ? strstr(model, "matmul_v") : NULL;
  const int version = v ? v[8] - '0' : 0;
  if (version < 1 || version > 4) {
    snprintf(err, (size_t)err_len, "the MatMul model needs \"model\": \"builtin:matmul_v1\" .. \"matmul_v4\" "
             "in its configuration, found %s", model[0] ? model : "none");
    return NULL;
  }
  const int f32 = loom_model_data_type(config, "MatMul", err, err_len);
  if (f32 < 0) return NULL;
  if (version != 4) {
    int64_t n = 0, k = 0;
    if (!loom_json_int(config, "tile", 0, &size) || !loom_json_int(config, "tile", 1, &n) ||
        !loom_json_int(config, "tile", 2, &k) || size != n || size != k ||
        (size != 4 && size != 8 && size != 16)) {
      snprintf(err, (size_t)err_len, "MatMul v%d takes square tiles of 4, 8 or 16 (\"tile\": [%lld, ...])",
               version, (long long)size);
      return NULL;
    }
  }
  matmul_model *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, (size_t)err_len, "cannot allocate the MatMul model");
    return NULL;
  }
  const int words = version == 4 ? V4_BUFFER_WORDS : (int)(size * size);
  m->A = loom_model_zeroed((size_t)words), m->B = loom_model_zeroed((size_t)words);
  m->C = loom_model_zeroed((size_t)words), m->out = loom_model_zeroed((size_t)words);
  if (!m->A || !m->B || !m->C || !m->out) {
    loom_model_destroy(m);
    snprintf(err, (size_t)err_len, "cannot allocate the MatMul model buffers");
    return NULL;
  }
  int64_t arithmetic = 1;
  loom_json_int(config, "arithmetic", -1, &arithmetic);
  m->version = version, m->f32 = f32, m->arithmetic = arithmetic != 0;
  m->M = m->N = m->K = version == 4 ? 16 : (int)size;
  m->state = EXPECT_OPCODE;
  if (version == 1) {
    m->actions = ACT_READ_A | ACT_READ_B | ACT_COMPUTE;
    run_actions(m);
  }
  return m;
}
