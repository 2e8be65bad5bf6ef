/* Element-wise multiply accelerator (elementwise.json, "ew_c"): C[i][j] = A[i][j] * B[i][j] on
 * one tile, as a loom_model.h model. Opcode bits: 1 read A, 2 read B, 4 compute, 8 send C and
 * clear it. The tile shape comes from the configuration ("tile": [TI, TJ]); an opcode and its
 * operand words must arrive in one send. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_model.h"
#include "loom_model_json.h"

typedef struct ew {
  int64_t words, out_len, macs;
  int f32, loaded; /* bits 1 (A) and 2 (B) */
  uint32_t *A, *B, *C, *out;
} ew;

void *loom_model_create(const char *config, char *err, int err_len) {
  int64_t ti = 0, tj = 0;
  char dtype[8] = "";
  if (!loom_json_int(config, "tile", 0, &ti) || !loom_json_int(config, "tile", 1, &tj) || ti < 1 || tj < 1 ||
      !loom_json_string(config, "data_type", dtype, sizeof dtype)) {
    snprintf(err, (size_t)err_len, "expected \"tile\": [TI, TJ] and \"data_type\" in the configuration");
    return NULL;
  }
  ew *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->words = ti * tj;
  m->f32 = strcmp(dtype, "f32") == 0;
  m->A = calloc((size_t)m->words, 4), m->B = calloc((size_t)m->words, 4);
  m->C = calloc((size_t)m->words, 4), m->out = calloc((size_t)m->words, 4);
  if (!m->A || !m->B || !m->C || !m->out) {
    loom_model_destroy(m);
    snprintf(err, (size_t)err_len, "out of memory");
    return NULL;
  }
  return m;
}

int loom_model_consume(void *state, const uint32_t *words, int64_t n, char *err, int err_len) {
  ew *m = state;
  int64_t i = 0;
  while (i < n) {
    const uint32_t op = words[i++];
    if (op == 0 || op > 15) {
      snprintf(err, (size_t)err_len, "unknown opcode %u (word %lld)", op, (long long)i - 1);
      return 1;
    }
    for (int bit = 1; bit <= 2; bit <<= 1) {
      if (!(op & (uint32_t)bit)) continue;
      if (n - i < m->words) {
        snprintf(err, (size_t)err_len, "opcode %u: %s needs %lld words, the send has %lld left", op,
                 bit == 1 ? "A" : "B", (long long)m->words, (long long)(n - i));
        return 2;
      }
      memcpy(bit == 1 ? m->A : m->B, words + i, (size_t)m->words * 4);
      m->loaded |= bit;
      i += m->words;
    }
    if (op & 4) {
      if (m->loaded != 3) {
        snprintf(err, (size_t)err_len, "opcode %u: compute before A and B were loaded", op);
        return 7;
      }
      for (int64_t k = 0; k < m->words; k++) {
        if (m->f32) {
          float a, b, c;
          memcpy(&a, m->A + k, 4), memcpy(&b, m->B + k, 4);
          c = a * b;
          memcpy(m->C + k, &c, 4);
        } else {
          m->C[k] = m->A[k] * m->B[k]; /* unsigned: int32 wrap-around without UB */
        }
      }
      m->macs += m->words;
    }
    if (op & 8) {
      if (m->out_len) {
        snprintf(err, (size_t)err_len, "opcode %u: C sent while the previous C was not received", op);
        return 4;
      }
      memcpy(m->out, m->C, (size_t)m->words * 4);
      memset(m->C, 0, (size_t)m->words * 4);
      m->out_len = m->words;
    }
  }
  return 0;
}

int64_t loom_model_pending(void *state) { return ((ew *)state)->out_len; }

int loom_model_produce(void *state, uint32_t *dst, int64_t n, char *err, int err_len) {
  ew *m = state;
  (void)err, (void)err_len;
  memcpy(dst, m->out, (size_t)n * 4);
  m->out_len = 0;
  return 0;
}

int64_t loom_model_macs(void *state) { return ((ew *)state)->macs; }

void loom_model_destroy(void *state) {
  ew *m = state;
  if (!m) return;
  free(m->A), free(m->B), free(m->C), free(m->out);
  free(m);
}
