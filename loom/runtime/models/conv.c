/* Conv2D accelerator model (AXI4MLIR section IV-D, output stationary) with a
 * protocol checker, as a loom_model.h model ("model": "builtin:conv2d").
 * Opcode bits: 0 read filters, 1 read inputs, 2 compute, 3 send outputs,
 * 4 set channels (next word iC), 5 set filter size (next word fHW), 6 save
 * output. Within one opcode: parameter words (iC first), read filters, read
 * inputs, compute, save, send. Filter slice and input window are both
 * iC x fHW x fHW words, layout [c][h][w]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dma_runtime.h"
#include "loom_model_glue.h"

enum {
  OP_READ_FILTERS = 1, OP_READ_INPUTS = 2, OP_COMPUTE = 4, OP_SEND = 8,
  OP_SET_CHANNELS = 16, OP_SET_FILTER = 32, OP_SAVE = 64
};
enum conv_state { EXPECT_OPCODE, EXPECT_PARAM, IN_BLOCK };
#define CONV_OPERAND_WORDS 16384 /* filter slice and input window buffers */
#define CONV_OUTPUT_WORDS 65536  /* one output plane (oH x oW) */

typedef struct conv_model {
  int f32;
  int arithmetic;                   /* 0: "arithmetic":0, values are not computed (host timing) */
  int iC, fHW;                      /* 0 = not set yet */
  int filter_loaded, window_loaded, acc_valid;
  uint32_t acc;                     /* uint32 bits of an int32 or a float */
  uint32_t *filter, *window, *saved, *outq;
  int64_t saved_len, outq_len;
  int64_t transfers, macs;
  char *err;
  int err_len;
  int state, actions, param_is_channels;
  uint32_t opcode;
  int64_t op_transfer;
  int op_word;
  uint32_t *block;
  const char *block_name;
  int block_len, block_filled;
} conv_model;

LOOM_MODEL_FAIL(conv_model)

static const char *where(conv_model *m, char *buf, size_t size) {
  snprintf(buf, size, "opcode %u (send #%lld, word %d)", m->opcode, (long long)m->op_transfer,
           m->op_word);
  return buf;
}

LOOM_MODEL_SHORT_TRANSFER(conv_model)

static int window_words(conv_model *m) { return m->iC * m->fHW * m->fHW; }

static void compute(conv_model *m) {
  const int n = window_words(m);
  if (m->f32) {
    const float *f = (const float *)m->filter, *x = (const float *)m->window;
    float acc = 0.0f;
    for (int i = 0; i < n; i++) acc += f[i] * x[i];
    memcpy(&m->acc, &acc, 4);
  } else {
    uint32_t acc = 0; /* wraps like int32 hardware, no signed overflow */
    for (int i = 0; i < n; i++) acc += m->filter[i] * m->window[i];
    m->acc = acc;
  }
}

static void start_block(conv_model *m, uint32_t *buf, const char *name) {
  m->state = IN_BLOCK;
  m->block = buf, m->block_name = name;
  m->block_len = window_words(m), m->block_filled = 0;
}

static int run_actions(conv_model *m) {
  char w[160];
  if (m->actions & (OP_SET_CHANNELS | OP_SET_FILTER)) {
    m->param_is_channels = (m->actions & OP_SET_CHANNELS) != 0;
    m->actions &= m->param_is_channels ? ~OP_SET_CHANNELS : ~OP_SET_FILTER;
    m->state = EXPECT_PARAM;
    return 0;
  }
  if (m->actions & (OP_READ_FILTERS | OP_READ_INPUTS)) {
    const int filters = (m->actions & OP_READ_FILTERS) != 0;
    if (!m->iC || !m->fHW)
      return fail(m, LOOM_ERR_STATE, "%s: reads %s before the %s was set (opcodes 16 / 32)",
                  where(m, w, sizeof w), filters ? "filters" : "inputs",
                  !m->iC ? "channel count" : "filter size");
    m->actions &= filters ? ~OP_READ_FILTERS : ~OP_READ_INPUTS;
    if (filters) m->filter_loaded = 0;
    else m->window_loaded = 0;
    start_block(m, filters ? m->filter : m->window, filters ? "filters" : "inputs");
    return 0;
  }
  if (m->actions & OP_COMPUTE) {
    m->actions &= ~OP_COMPUTE;
    if (!m->filter_loaded || !m->window_loaded)
      return fail(m, LOOM_ERR_STATE, "%s: compute before the %s were loaded", where(m, w, sizeof w),
                  !m->filter_loaded ? "filters" : "inputs");
    if (m->arithmetic) compute(m); /* else a host-timing run: acc keeps its value */
    m->macs += window_words(m); /* MACs of one output value */
    m->acc_valid = 1;
  }
  if (m->actions & OP_SAVE) {
    m->actions &= ~OP_SAVE;
    if (!m->acc_valid)
      return fail(m, LOOM_ERR_STATE, "%s: save output without a compute since the last save",
                  where(m, w, sizeof w));
    if (m->saved_len == CONV_OUTPUT_WORDS)
      return fail(m, LOOM_ERR_ACCEL_OVERFLOW, "%s: save output beyond the %d-word output buffer",
                  where(m, w, sizeof w), CONV_OUTPUT_WORDS);
    m->saved[m->saved_len++] = m->acc;
    m->acc_valid = 0;
  }
  if (m->actions & OP_SEND) {
    m->actions &= ~OP_SEND;
    if (m->outq_len)
      return fail(m, LOOM_ERR_ACCEL_OVERFLOW, "%s: outputs sent while the previous %lld were not received",
                  where(m, w, sizeof w), (long long)m->outq_len);
    memcpy(m->outq, m->saved, (size_t)m->saved_len * 4);
    m->outq_len = m->saved_len;
    m->saved_len = 0;
  }
  m->state = EXPECT_OPCODE;
  return 0;
}

static int accept_opcode(conv_model *m, uint32_t word, int index) {
  char w[160];
  m->opcode = word;
  m->op_transfer = m->transfers, m->op_word = index;
  if (word == 0 || word > 127)
    return fail(m, LOOM_ERR_UNKNOWN_OPCODE, "%s: unknown opcode (valid opcodes are 1..127)",
                where(m, w, sizeof w));
  m->actions = (int)word;
  return run_actions(m);
}

static int accept_param(conv_model *m, uint32_t value, int index) {
  char w[160];
  const char *what = m->param_is_channels ? "channel count iC" : "filter size fHW";
  const uint32_t limit = m->param_is_channels ? CONV_OPERAND_WORDS : 64;
  if (value == 0 || value > limit)
    return fail(m, LOOM_ERR_TILE_CONSTRAINT, "%s: %s = %u (send #%lld, word %d); expected 1..%u",
                where(m, w, sizeof w), what, value, (long long)m->transfers, index, limit);
  if (m->param_is_channels) m->iC = (int)value;
  else m->fHW = (int)value;
  m->filter_loaded = m->window_loaded = m->acc_valid = 0;
  if (m->iC && m->fHW && (int64_t)m->iC * m->fHW * m->fHW > CONV_OPERAND_WORDS)
    return fail(m, LOOM_ERR_ACCEL_OVERFLOW,
                "%s: iC=%d x fHW=%d x fHW=%d = %lld words exceed the %d-word filter buffer",
                where(m, w, sizeof w), m->iC, m->fHW, m->fHW, (long long)m->iC * m->fHW * m->fHW,
                CONV_OPERAND_WORDS);
  return run_actions(m);
}

int loom_model_consume(void *state, const uint32_t *words, int64_t n, char *err, int err_len) {
  conv_model *m = (conv_model *)state;
  m->err = err, m->err_len = err_len;
  m->transfers++;
  int64_t i = 0;
  int rc = 0, block_started_here = 0;
  while (i < n && rc == 0) {
    if (m->state == EXPECT_OPCODE) {
      rc = accept_opcode(m, words[i], (int)i);
      i++;
    } else if (m->state == EXPECT_PARAM) {
      rc = accept_param(m, words[i], (int)i);
      i++;
    } else {
      int64_t take = m->block_len - m->block_filled;
      if (take > n - i) take = n - i;
      memcpy(m->block + m->block_filled, words + i, (size_t)take * 4);
      block_started_here = 1;
      m->block_filled += (int)take;
      i += take;
      if (m->block_filled == m->block_len) {
        block_started_here = 0;
        if (m->block == m->filter) m->filter_loaded = 1;
        else m->window_loaded = 1;
        rc = run_actions(m);
      }
    }
  }
  if (rc == 0 && m->state == IN_BLOCK && block_started_here) rc = short_transfer(m);
  return rc;
}

int loom_model_idle(void *state, char *err, int err_len) {
  conv_model *m = (conv_model *)state;
  char w[160];
  m->err = err, m->err_len = err_len;
  if (m->state == EXPECT_PARAM)
    return fail(m, LOOM_ERR_TRANSFER_LENGTH, "%s: the %s word never arrived", where(m, w, sizeof w),
                m->param_is_channels ? "channel count" : "filter size");
  if (m->state == IN_BLOCK)
    return fail(m, LOOM_ERR_TRANSFER_LENGTH, "%s: still expects %d words of %s", where(m, w, sizeof w),
                m->block_len - m->block_filled, m->block_name);
  return 0;
}

LOOM_MODEL_QUEUE(conv_model, outq, outq_len)

void loom_model_destroy(void *state) {
  conv_model *m = (conv_model *)state;
  if (!m) return;
  free(m->filter), free(m->window), free(m->saved), free(m->outq);
  free(m);
}

void *loom_model_create(const char *config, char *err, int err_len) {
  const int f32 = loom_model_data_type(config, "Conv2D", err, err_len);
  if (f32 < 0) return NULL;
  conv_model *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, (size_t)err_len, "cannot allocate the Conv2D model");
    return NULL;
  }
  m->filter = loom_model_zeroed(CONV_OPERAND_WORDS), m->window = loom_model_zeroed(CONV_OPERAND_WORDS);
  m->saved = loom_model_zeroed(CONV_OUTPUT_WORDS), m->outq = loom_model_zeroed(CONV_OUTPUT_WORDS);
  if (!m->filter || !m->window || !m->saved || !m->outq) {
    loom_model_destroy(m);
    snprintf(err, (size_t)err_len, "cannot allocate the Conv2D model buffers");
    return NULL;
  }
  int64_t arithmetic = 1;
  loom_json_int(config, "arithmetic", -1, &arithmetic);
  m->f32 = f32, m->arithmetic = arithmetic != 0;
  m->state = EXPECT_OPCODE;
  return m;
}
