/* Drivers for the measured host mode's bias test (test_host_measurement.py): runtime
 * calls with no host work between them, and the same calls after known busy-work. */
#include <stdint.h>

#include "dma_runtime.h"

static volatile uint64_t g_sink;

/* An LCG chain in registers: `iters` dependent multiply-adds. (Through a volatile
 * variable, the busy-work's own speed depended on the process's address layout.) */
static uint64_t busy(uint64_t x, int iters) {
  for (int i = 0; i < iters; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

/* n rounds of `iters` busy-work (0: none), a literal write of its result (a copy
 * call) and a send poll (an other call): 2n call boundaries. */
int probe_calls(int n, int iters) {
  int rc = dma_init(0, 0, 1024, 0, 1024);
  uint64_t x = 1;
  for (int i = 0; i < n && rc == 0; i++) {
    __asm__ volatile("" : "+r"(x)); /* the work stays after the previous call */
    x = busy(x, iters);
    if (write_literal((uint32_t)x, i & 511) < 0) rc = -1;
    if (dma_check_send() < 0) rc = -1;
  }
  g_sink = x;
  int rc_free = dma_free();
  return rc ? rc : rc_free;
}
