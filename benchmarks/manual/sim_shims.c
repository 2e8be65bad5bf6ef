/* memcpy/memset for the accelerator simulator in the standalone harness.
 * The harness compiles the simulator sources (model_*.c, backend_sim.c) with
 * -Dmemcpy=loom_sim_memcpy -Dmemset=loom_sim_memset so that the words the
 * simulated accelerator copies are charged to this file, which counter runs
 * exclude together with the models: on the board that work is done by the
 * DMA engine and the FPGA, not by the host CPU. Built with -fno-builtin and
 * -fno-tree-loop-distribute-patterns so the loops do not turn back into
 * libc calls. */
#include <stddef.h>
#include <stdint.h>

void *loom_sim_memcpy(void *restrict dst, const void *restrict src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  for (size_t i = 0; i < n; i++) d[i] = s[i];
  return dst;
}

void *loom_sim_memset(void *dst, int value, size_t n) {
  unsigned char *d = dst;
  for (size_t i = 0; i < n; i++) d[i] = (unsigned char)value;
  return dst;
}
