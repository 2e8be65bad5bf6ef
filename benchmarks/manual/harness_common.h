/* What the standalone driver runners share (manual/harness.c, figures/gen_harness.c,
 * figures/gen_conv_harness.c): one xorshift32 generator, one FNV-1a checksum of the
 * result and one report of a runtime error, so that their outputs compare. */
#ifndef LOOM_HARNESS_COMMON_H
#define LOOM_HARNESS_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include "dma_runtime.h"

static uint32_t rng_state; /* each runner seeds it before drawing */

static inline uint32_t next_random(void) { /* xorshift32 */
  uint32_t x = rng_state;
  x ^= x << 13, x ^= x >> 17, x ^= x << 5;
  return rng_state = x;
}

static inline uint32_t checksum(const void *words, int64_t n) { /* FNV-1a over 32-bit words */
  const uint32_t *p = words;
  uint32_t h = 2166136261u;
  for (int64_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

/* The runtime's error on stderr; returns the runners' exit status for it (3). */
static inline int report_runtime_error(int rc, const char *driver) {
  const char *msg = loom_dma_last_error();
  fprintf(stderr, "%s: runtime error %d%s%s\n", driver, rc, *msg ? ": " : "",
          *msg ? msg : (rc == LOOM_ERR_ARGUMENT ? "bad sizes or tile for this driver" : ""));
  return 3;
}

#endif
