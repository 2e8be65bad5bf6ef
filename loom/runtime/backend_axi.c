/* Linux AXI DMA backend (Xilinx AXI DMA, simple/direct register mode,
 * PG021). Every register access goes through a loom_axi_platform so tests
 * can substitute a fake register file; the default platform maps /dev/mem.
 *
 * Register sequence:
 *   init:  MM2S_CR = RESET, poll MM2S_CR until RESET clears; same for S2MM.
 *   send:  read MM2S_SR (must be halted or idle, no error bits);
 *          MM2S_CR = RUN; MM2S_SA = in_phys + 4*offset; MM2S_LENGTH = 4*length
 *          (the length write starts the transfer).
 *   wait:  poll MM2S_SR until IDLE (error bits -> error, poll limit -> timeout).
 *   recv:  the same on S2MM_SR / S2MM_CR / S2MM_DA / S2MM_LENGTH.
 *   free:  MM2S_CR = 0, S2MM_CR = 0 (halt). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime_internal.h"

static uint64_t g_poll_limit = 100000000ull;
void loom_axi_set_poll_limit(uint64_t polls) { g_poll_limit = polls ? polls : 1; }

typedef struct axi_backend {
  loom_backend base;
  loom_axi_platform p;
  int opened;
  uint64_t in_phys, out_phys;
  size_t in_bytes, out_bytes;
} axi_backend;

typedef struct channel {
  const char *name;
  uint32_t cr, sr, addr, length;
} channel;

static const channel MM2S = {"MM2S", LOOM_AXI_MM2S_CR, LOOM_AXI_MM2S_SR, LOOM_AXI_MM2S_SA,
                             LOOM_AXI_MM2S_LENGTH};
static const channel S2MM = {"S2MM", LOOM_AXI_S2MM_CR, LOOM_AXI_S2MM_SR, LOOM_AXI_S2MM_DA,
                             LOOM_AXI_S2MM_LENGTH};

static uint32_t rd(axi_backend *a, uint32_t off) { return a->p.reg_read(a->p.ctx, off); }
static void wr(axi_backend *a, uint32_t off, uint32_t v) { a->p.reg_write(a->p.ctx, off, v); }

static int status_error(const channel *c, uint32_t sr) {
  return loom_error(LOOM_ERR_DEVICE, "AXI DMA %s status 0x%08x reports%s%s%s", c->name, sr,
                    (sr & 0x10) ? " DMAIntErr" : "", (sr & 0x20) ? " DMASlvErr" : "",
                    (sr & 0x40) ? " DMADecErr" : "");
}

static int reset_channel(axi_backend *a, const channel *c) {
  wr(a, c->cr, LOOM_AXI_CR_RESET);
  for (uint64_t i = 0; i < g_poll_limit; i++)
    if (!(rd(a, c->cr) & LOOM_AXI_CR_RESET)) return LOOM_OK;
  return loom_error(LOOM_ERR_DEVICE, "AXI DMA %s reset did not complete after %llu polls",
                    c->name, (unsigned long long)g_poll_limit);
}

static int start(axi_backend *a, const channel *c, uint64_t phys, int length) {
  if (length == 0) return LOOM_OK; /* the engine rejects zero-length transfers */
  if ((int64_t)length * 4 >= (1 << 26))
    return loom_error(LOOM_ERR_ARGUMENT, "AXI DMA %s: %d words exceed the 26-bit length register",
                      c->name, length);
  const uint32_t sr = rd(a, c->sr);
  if (sr & LOOM_AXI_SR_ERR_MASK) return status_error(c, sr);
  if (!(sr & (LOOM_AXI_SR_HALTED | LOOM_AXI_SR_IDLE)))
    return loom_error(LOOM_ERR_STATE, "AXI DMA %s: transfer started while the previous one "
                      "is still running (missing dma_wait)", c->name);
  wr(a, c->cr, LOOM_AXI_CR_RUN);
  if (phys >> 32) wr(a, c->addr + 4, (uint32_t)(phys >> 32)); /* MSB address register */
  wr(a, c->addr, (uint32_t)phys);
  wr(a, c->length, (uint32_t)length * 4);
  return LOOM_OK;
}

static int wait_idle(axi_backend *a, const channel *c) {
  for (uint64_t i = 0; i < g_poll_limit; i++) {
    const uint32_t sr = rd(a, c->sr);
    if (sr & LOOM_AXI_SR_ERR_MASK) return status_error(c, sr);
    if (sr & (LOOM_AXI_SR_IDLE | LOOM_AXI_SR_HALTED)) return loom_dma_error_code();
  }
  return loom_error(LOOM_ERR_DEVICE, "AXI DMA %s: transfer not idle after %llu polls (timeout)",
                    c->name, (unsigned long long)g_poll_limit);
}

static int check(axi_backend *a, const channel *c) {
  const uint32_t sr = rd(a, c->sr);
  if (sr & LOOM_AXI_SR_ERR_MASK) return -status_error(c, sr);
  return (sr & (LOOM_AXI_SR_IDLE | LOOM_AXI_SR_HALTED)) ? 1 : 0;
}

static int axi_start_send(loom_backend *b, int length, int offset) {
  axi_backend *a = (axi_backend *)b;
  return start(a, &MM2S, a->in_phys + (uint64_t)offset * 4, length);
}
static int axi_start_recv(loom_backend *b, int length, int offset) {
  axi_backend *a = (axi_backend *)b;
  return start(a, &S2MM, a->out_phys + (uint64_t)offset * 4, length);
}
static int axi_wait_send(loom_backend *b) { return wait_idle((axi_backend *)b, &MM2S); }
static int axi_wait_recv(loom_backend *b) { return wait_idle((axi_backend *)b, &S2MM); }
static int axi_check_send(loom_backend *b) { return check((axi_backend *)b, &MM2S); }
static int axi_check_recv(loom_backend *b) { return check((axi_backend *)b, &S2MM); }
static int axi_finish(loom_backend *b) {
  (void)b;
  return LOOM_OK;
}

static void axi_destroy(loom_backend *b) {
  axi_backend *a = (axi_backend *)b;
  if (a->opened) {
    wr(a, MM2S.cr, 0);
    wr(a, S2MM.cr, 0);
  }
  if (b->in_buf) a->p.unmap(a->p.ctx, b->in_buf, a->in_bytes);
  if (b->out_buf) a->p.unmap(a->p.ctx, b->out_buf, a->out_bytes);
  if (a->opened && a->p.close) a->p.close(a->p.ctx);
  free(a);
}

loom_backend *loom_axi_backend_create(const loom_axi_platform *platform, uint64_t dma_address,
                                      uint64_t in_addr, int64_t in_words, uint64_t out_addr,
                                      int64_t out_words) {
  axi_backend *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  loom_backend *b = &a->base;
  a->p = *platform;
  a->in_phys = in_addr, a->out_phys = out_addr;
  a->in_bytes = (size_t)in_words * 4, a->out_bytes = (size_t)out_words * 4;
  b->name = "axi";
  b->in_words = in_words, b->out_words = out_words;
  b->start_send = axi_start_send, b->start_recv = axi_start_recv;
  b->wait_send = axi_wait_send, b->wait_recv = axi_wait_recv;
  b->check_send = axi_check_send, b->check_recv = axi_check_recv;
  b->finish = axi_finish, b->destroy = axi_destroy;
  if (a->p.open(a->p.ctx, dma_address) != LOOM_OK) {
    axi_destroy(b);
    return NULL;
  }
  a->opened = 1;
  b->in_buf = a->p.map(a->p.ctx, in_addr, a->in_bytes);
  b->out_buf = b->in_buf ? a->p.map(a->p.ctx, out_addr, a->out_bytes) : NULL;
  if (!b->in_buf || !b->out_buf || reset_channel(a, &MM2S) || reset_channel(a, &S2MM)) {
    loom_error(LOOM_ERR_DEVICE, "dma_init: cannot map the AXI DMA staging buffers");
    axi_destroy(b);
    return NULL;
  }
  return b;
}

/* ---- the /dev/mem platform -------------------------------------------- */
typedef struct devmem {
  int fd;
  volatile uint32_t *regs;
} devmem;

#define DEVMEM_REG_BYTES 0x10000

static int devmem_allowed(void) {
#if defined(__arm__) || defined(__aarch64__)
  return 1;
#else
  /* mapping physical memory on a workstation is never what a test wants */
  const char *env = getenv("LOOM_ALLOW_DEVMEM");
  return env && strcmp(env, "1") == 0;
#endif
}

static int devmem_open(void *ctx, uint64_t dma_address) {
  devmem *d = ctx;
  if (!devmem_allowed())
    return loom_error(LOOM_ERR_DEVICE, "AXI DMA backend: /dev/mem access is only enabled on ARM "
                      "boards (set LOOM_ALLOW_DEVMEM=1 to force it)");
  d->fd = open("/dev/mem", O_RDWR | O_SYNC);
  if (d->fd < 0)
    return loom_error(LOOM_ERR_DEVICE, "AXI DMA backend: cannot open /dev/mem: %s",
                      strerror(errno));
  void *p = mmap(NULL, DEVMEM_REG_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd,
                 (off_t)dma_address);
  if (p == MAP_FAILED) {
    close(d->fd);
    d->fd = -1;
    return loom_error(LOOM_ERR_DEVICE, "AXI DMA backend: cannot map registers at 0x%llx: %s",
                      (unsigned long long)dma_address, strerror(errno));
  }
  d->regs = p;
  return LOOM_OK;
}

static void devmem_close(void *ctx) {
  devmem *d = ctx;
  if (d->regs) munmap((void *)d->regs, DEVMEM_REG_BYTES);
  if (d->fd >= 0) close(d->fd);
  d->regs = NULL, d->fd = -1;
}

static uint32_t devmem_read(void *ctx, uint32_t off) { return ((devmem *)ctx)->regs[off / 4]; }
static void devmem_write(void *ctx, uint32_t off, uint32_t v) {
  ((devmem *)ctx)->regs[off / 4] = v;
}

static void *devmem_map(void *ctx, uint64_t phys, size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ((devmem *)ctx)->fd,
                 (off_t)phys);
  if (p == MAP_FAILED) {
    loom_error(LOOM_ERR_DEVICE, "AXI DMA backend: cannot map %zu bytes at 0x%llx: %s", bytes,
               (unsigned long long)phys, strerror(errno));
    return NULL;
  }
  return p;
}

static void devmem_unmap(void *ctx, void *p, size_t bytes) {
  (void)ctx;
  munmap(p, bytes);
}

const loom_axi_platform *loom_devmem_platform(void) {
  static devmem state = {-1, NULL};
  static const loom_axi_platform platform = {&state, devmem_open, devmem_close, devmem_read,
                                             devmem_write, devmem_map, devmem_unmap};
  return &platform;
}
