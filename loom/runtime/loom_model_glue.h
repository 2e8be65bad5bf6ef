/* The glue between loom_model.h and a model's state that the shipped C models (models/matmul.c,
 * models/conv.c) share: error messages into the caller's buffer, the output queue's pending/produce,
 * the MAC counter and the data_type choice. The state struct names its fields as the macros expect:
 * `err`/`err_len` (the current call's message buffer) and `macs`. */
#ifndef LOOM_MODEL_GLUE_H
#define LOOM_MODEL_GLUE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_model.h"
#include "loom_model_json.h"

/* static int fail(type *m, int code, fmt, ...): the message into m->err; returns code */
#define LOOM_MODEL_FAIL(type)                                                                   \
  static int fail(type *m, int code, const char *fmt, ...) {                                    \
    if (m->err && m->err_len > 0) {                                                             \
      va_list ap;                                                                               \
      va_start(ap, fmt);                                                                        \
      vsnprintf(m->err, (size_t)m->err_len, fmt, ap);                                           \
      va_end(ap);                                                                               \
    }                                                                                           \
    return code;                                                                                \
  }

/* static int short_transfer(type *m): the error of a send that ended inside an operand block (after
 * LOOM_MODEL_FAIL and the model's where(m, buf, size), which names the opcode being parsed) */
#define LOOM_MODEL_SHORT_TRANSFER(type)                                                         \
  static int short_transfer(type *m) {                                                          \
    char w[160];                                                                                \
    return fail(m, LOOM_ERR_TRANSFER_LENGTH,                                                    \
                "%s: send #%lld ended after %d of the %d words of %s (short transfer)",         \
                where(m, w, sizeof w), (long long)m->transfers, m->block_filled, m->block_len,  \
                m->block_name);                                                                 \
  }

/* loom_model_pending/produce/macs of a model whose produced words wait in m->queue[0, m->queue_len) */
#define LOOM_MODEL_QUEUE(type, queue, queue_len)                                                \
  int64_t loom_model_pending(void *state) { return ((type *)state)->queue_len; }                \
  int loom_model_produce(void *state, uint32_t *dst, int64_t n, char *err, int err_len) {       \
    type *m = (type *)state;                                                                    \
    (void)err, (void)err_len;                                                                   \
    memcpy(dst, m->queue, (size_t)n * 4);                                                       \
    m->queue_len = 0;                                                                           \
    return 0;                                                                                   \
  }                                                                                             \
  int64_t loom_model_macs(void *state) { return ((type *)state)->macs; }

/* `words` zeroed 32-bit words (NULL when out of memory). Not calloc: whether calloc clears depends on
 * the heap's history, and its memset is the C library's, which host counts cannot tell from the
 * driver's; an explicit memset in the model's own file is the simulator's (excluded like the model). */
static inline void *loom_model_zeroed(size_t words) {
  void *p = malloc(words * 4);
  if (p) memset(p, 0, words * 4);
  return p;
}

/* The configuration's data_type: 1 for f32, 0 for i32, -1 (the message in err) for anything else. */
static inline int loom_model_data_type(const char *config, const char *model, char *err, int err_len) {
  char dtype[16] = "i32";
  loom_json_string(config, "data_type", dtype, sizeof dtype);
  if (strcmp(dtype, "f32") == 0) return 1;
  if (strcmp(dtype, "i32") == 0) return 0;
  snprintf(err, (size_t)err_len, "the %s model takes data_type i32 or f32, found %s", model, dtype);
  return -1;
}

#endif
