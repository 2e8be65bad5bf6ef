/* Drivers for the measured host mode's bias test (test_host_measurement.py): runtime
 * calls with no host work between them, and the same calls around known busy-work. */
#include <stdint.h>

#include "dma_runtime.h"

static volatile uint64_t g_sink;

/* An LCG chain: `iters` dependent multiply-adds the compiler cannot remove. */
static void busy(int iters) {
  uint64_t x = g_sink;
  for (int i = 0; i < iters; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  g_sink = x;
}

/* n rounds of a literal write (a copy call) and a send poll (an other call):
 * 2n call boundaries; `iters` of busy-work before each poll (0: none). */
int probe_calls(int n, int iters) {
  int rc = dma_init(0, 0, 1024, 0, 1024);
  for (int i = 0; i < n && rc == 0; i++) {
    if (write_literal((uint32_t)i, i & 511) < 0) rc = -1;
    if (iters) busy(iters);
    if (dma_check_send() < 0) rc = -1;
  }
  int rc_free = dma_free();
  return rc ? rc : rc_free;
}

/* The busy-work alone, n times (its time is measured by the caller). */
void probe_busy(int n, int iters) {
  for (int i = 0; i < n; i++) busy(iters);
}
