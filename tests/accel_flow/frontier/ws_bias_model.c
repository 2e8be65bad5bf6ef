/* The ws_bias engine (ws_bias_c.json) as a loom_model.h model: weight-stationary T x T x T i32
 * MatMul that keeps no partial sums between instructions.
 *   0x31 + W (T x T): load the weight tile     0x32 + C (T x T): preload the accumulator
 *   0x33 + A (T x T): acc += A.W                0x34: send the accumulator (T x T words)
 * Instructions are parsed by their opcode's length, so coalesced transactions work. The tile size
 * comes from the configuration ("tile": [T, T, T]). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_model.h"
#include "loom_model_json.h"

typedef struct wsb {
  int t, arithmetic, have_w, have_acc;
  int64_t macs, out_len;
  uint32_t *W, *acc, *out;
} wsb;

void *loom_model_create(const char *config, char *err, int err_len) {
  int64_t t = 0, arithmetic = 1;
  if (!loom_json_int(config, "tile", 0, &t) || t < 1 || t > 256) {
    snprintf(err, (size_t)err_len, "expected \"tile\": [T, T, T] with 1 <= T <= 256 in the configuration");
    return NULL;
  }
  loom_json_int(config, "arithmetic", -1, &arithmetic);
  wsb *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->t = (int)t, m->arithmetic = arithmetic != 0;
  m->W = calloc((size_t)(t * t), 4), m->acc = calloc((size_t)(t * t), 4), m->out = calloc((size_t)(t * t), 4);
  if (!m->W || !m->acc || !m->out) {
    loom_model_destroy(m);
    snprintf(err, (size_t)err_len, "out of memory");
    return NULL;
  }
  return m;
}

int loom_model_consume(void *state, const uint32_t *words, int64_t n, char *err, int err_len) {
  wsb *m = state;
  const int t = m->t;
  const int64_t tile = (int64_t)t * t;
  int64_t i = 0;
  while (i < n) {
    const uint32_t op = words[i++];
    if (op < 0x31 || op > 0x34) {
      snprintf(err, (size_t)err_len, "unknown opcode 0x%x (word %lld)", op, (long long)i - 1);
      return 1;
    }
    if (op != 0x34 && n - i < tile) {
      snprintf(err, (size_t)err_len, "opcode 0x%x needs %lld words, the send has %lld left", op, (long long)tile,
               (long long)(n - i));
      return 2;
    }
    if (op == 0x31) {
      memcpy(m->W, words + i, (size_t)tile * 4), m->have_w = 1, i += tile;
    } else if (op == 0x32) {
      memcpy(m->acc, words + i, (size_t)tile * 4), m->have_acc = 1, i += tile;
    } else if (op == 0x33) {
      if (!m->have_w || !m->have_acc) {
        snprintf(err, (size_t)err_len, "MAC before the weights and the preload");
        return 7;
      }
      const uint32_t *A = words + i;
      if (m->arithmetic)
        for (int r = 0; r < t; r++)
          for (int k = 0; k < t; k++)
            for (int c = 0; c < t; c++) m->acc[r * t + c] += A[r * t + k] * m->W[k * t + c]; /* wraps, no UB */
      m->macs += tile * t, i += tile;
    } else {
      if (m->out_len || !m->have_acc) {
        snprintf(err, (size_t)err_len, m->out_len ? "accumulator sent while the last one was not received"
                                                  : "accumulator sent before a preload");
        return 4;
      }
      memcpy(m->out, m->acc, (size_t)tile * 4), m->out_len = tile, m->have_acc = 0;
    }
  }
  return 0;
}

int64_t loom_model_pending(void *state) { return ((wsb *)state)->out_len; }

int loom_model_produce(void *state, uint32_t *dst, int64_t n, char *err, int err_len) {
  wsb *m = state;
  if (n > m->out_len) {
    snprintf(err, (size_t)err_len, "%lld words asked, %lld ready", (long long)n, (long long)m->out_len);
    return 5;
  }
  memcpy(dst, m->out, (size_t)n * 4);
  m->out_len = 0;
  return 0;
}

int64_t loom_model_macs(void *state) { return ((wsb *)state)->macs; }

void loom_model_destroy(void *state) {
  wsb *m = state;
  if (!m) return;
  free(m->W), free(m->acc), free(m->out);
  free(m);
}
