/* Test support: a fake AXI DMA register file. Registers are plain memory;
 * the fake device reacts to writes of the length registers by moving words
 * between fake physical memory (the mapped staging buffers) and the
 * accelerator model chosen with loom_sim_use_model, then sets the idle bit
 * (or an error bit: DMAIntErr when the model rejects the transfer or the
 * channel is not running, DMADecErr for an address outside mapped memory).
 * A reset write self-clears, halts both channels and resets the model.
 * Every register access is logged for tests of the register sequence. */
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

#define FAKE_REGS 32 /* 0x00..0x7c */
#define FAKE_REGIONS 8
#define FAKE_LOG_MAX (1 << 20)

typedef struct fake_entry {
  int is_write;
  uint32_t offset, value;
} fake_entry;

typedef struct fake_region {
  uint64_t phys;
  size_t bytes;
  char *mem;
} fake_region;

static struct {
  uint32_t regs[FAKE_REGS];
  fake_region regions[FAKE_REGIONS];
  loom_model *model;
  char *held_mem; /* an MM2S transfer stalled behind pending output (back-pressure) */
  int held_words;
  fake_entry *log;
  int64_t log_count, log_capacity;
} g_fake;

static void log_access(int is_write, uint32_t offset, uint32_t value) {
  if (g_fake.log_count == g_fake.log_capacity && g_fake.log_capacity < FAKE_LOG_MAX) {
    int64_t cap = g_fake.log_capacity ? g_fake.log_capacity * 2 : 256;
    fake_entry *grown = realloc(g_fake.log, (size_t)cap * sizeof *grown);
    if (grown) g_fake.log = grown, g_fake.log_capacity = cap;
  }
  if (g_fake.log_count < g_fake.log_capacity)
    g_fake.log[g_fake.log_count++] = (fake_entry){is_write, offset, value};
}

void loom_fake_axi_replace_model(void) {
  if (g_fake.model) g_fake.model->destroy(g_fake.model);
  g_fake.model = NULL; /* recreated from the current selection on first use */
  g_fake.held_mem = NULL;
}

static loom_model *model(void) {
  if (!g_fake.model) g_fake.model = loom_selected_model_create();
  return g_fake.model;
}

static char *find_memory(uint64_t phys, size_t bytes) {
  for (int i = 0; i < FAKE_REGIONS; i++) {
    fake_region *r = &g_fake.regions[i];
    if (r->mem && phys >= r->phys && phys + bytes <= r->phys + r->bytes)
      return r->mem + (phys - r->phys);
  }
  return NULL;
}

/* A length write on one channel: run the whole transfer synchronously. */
static void transfer(uint32_t cr, uint32_t sr, uint32_t addr, uint32_t bytes, int to_device) {
  uint32_t *status = &g_fake.regs[sr / 4];
  if (!(g_fake.regs[cr / 4] & LOOM_AXI_CR_RUN) || bytes % 4) {
    *status |= 0x10 | LOOM_AXI_SR_HALTED; /* DMAIntErr */
    return;
  }
  const uint64_t phys = ((uint64_t)g_fake.regs[(addr + 4) / 4] << 32) | g_fake.regs[addr / 4];
  char *mem = find_memory(phys, bytes);
  if (!mem) {
    *status |= 0x40 | LOOM_AXI_SR_HALTED; /* DMADecErr */
    return;
  }
  *status &= ~LOOM_AXI_SR_IDLE; /* busy ... */
  if (to_device && model() && model()->pending_output(model()) > 0) {
    /* the accelerator's output has not drained: the stream stalls until a receive takes it */
    g_fake.held_mem = mem, g_fake.held_words = (int)(bytes / 4);
    return;
  }
  int rc = to_device ? loom_model_send(model(), (const uint32_t *)mem, (int)(bytes / 4))
                     : loom_model_recv(model(), (uint32_t *)mem, (int)(bytes / 4));
  if (rc) *status |= 0x10 | LOOM_AXI_SR_HALTED;
  else *status |= LOOM_AXI_SR_IDLE; /* ... and done */
  if (!to_device && !rc && g_fake.held_mem) { /* the stalled send streams on */
    uint32_t *mm2s = &g_fake.regs[LOOM_AXI_MM2S_SR / 4];
    rc = loom_model_send(model(), (const uint32_t *)g_fake.held_mem, g_fake.held_words);
    g_fake.held_mem = NULL;
    *mm2s |= rc ? 0x10 | LOOM_AXI_SR_HALTED : LOOM_AXI_SR_IDLE;
  }
}

static uint32_t fake_read(void *ctx, uint32_t off) {
  (void)ctx;
  const uint32_t v = off / 4 < FAKE_REGS ? g_fake.regs[off / 4] : 0;
  log_access(0, off, v);
  return v;
}

static void fake_write(void *ctx, uint32_t off, uint32_t v) {
  (void)ctx;
  log_access(1, off, v);
  if (off / 4 >= FAKE_REGS) return;
  const int is_cr = off == LOOM_AXI_MM2S_CR || off == LOOM_AXI_S2MM_CR;
  if (is_cr && (v & LOOM_AXI_CR_RESET)) { /* soft reset: both channels */
    g_fake.regs[LOOM_AXI_MM2S_CR / 4] = g_fake.regs[LOOM_AXI_S2MM_CR / 4] = 0;
    g_fake.regs[LOOM_AXI_MM2S_SR / 4] = g_fake.regs[LOOM_AXI_S2MM_SR / 4] = LOOM_AXI_SR_HALTED;
    loom_fake_axi_replace_model();
    return;
  }
  g_fake.regs[off / 4] = v;
  if (is_cr) {
    const uint32_t sr = off == LOOM_AXI_MM2S_CR ? LOOM_AXI_MM2S_SR : LOOM_AXI_S2MM_SR;
    uint32_t *status = &g_fake.regs[sr / 4];
    if (v & LOOM_AXI_CR_RUN) *status = (*status & ~LOOM_AXI_SR_HALTED) | LOOM_AXI_SR_IDLE;
    else *status = (*status & ~LOOM_AXI_SR_IDLE) | LOOM_AXI_SR_HALTED;
  } else if (off == LOOM_AXI_MM2S_LENGTH) {
    transfer(LOOM_AXI_MM2S_CR, LOOM_AXI_MM2S_SR, LOOM_AXI_MM2S_SA, v, 1);
  } else if (off == LOOM_AXI_S2MM_LENGTH) {
    transfer(LOOM_AXI_S2MM_CR, LOOM_AXI_S2MM_SR, LOOM_AXI_S2MM_DA, v, 0);
  }
}

static int fake_open(void *ctx, uint64_t dma_address) {
  (void)ctx, (void)dma_address;
  return LOOM_OK;
}

static void fake_close(void *ctx) { (void)ctx; }

static void *fake_map(void *ctx, uint64_t phys, size_t bytes) {
  (void)ctx;
  for (int i = 0; i < FAKE_REGIONS; i++) {
    fake_region *r = &g_fake.regions[i];
    if (!r->mem) {
      r->mem = calloc(bytes ? bytes : 1, 1);
      if (!r->mem) break;
      r->phys = phys, r->bytes = bytes;
      return r->mem;
    }
  }
  loom_error(LOOM_ERR_DEVICE, "fake AXI DMA: cannot map %zu bytes at 0x%llx", bytes,
             (unsigned long long)phys);
  return NULL;
}

static void fake_unmap(void *ctx, void *p, size_t bytes) {
  (void)ctx, (void)bytes;
  for (int i = 0; i < FAKE_REGIONS; i++)
    if (g_fake.regions[i].mem == p) {
      free(p);
      g_fake.regions[i].mem = NULL;
    }
}

const loom_axi_platform *loom_fake_axi_platform(void) {
  static const loom_axi_platform platform = {NULL, fake_open, fake_close, fake_read,
                                             fake_write, fake_map, fake_unmap};
  return &platform;
}

void loom_fake_axi_reset(void) {
  memset(g_fake.regs, 0, sizeof g_fake.regs);
  g_fake.regs[LOOM_AXI_MM2S_SR / 4] = g_fake.regs[LOOM_AXI_S2MM_SR / 4] = LOOM_AXI_SR_HALTED;
  g_fake.log_count = 0;
  loom_fake_axi_replace_model();
}

int64_t loom_fake_axi_log_count(void) { return g_fake.log_count; }

int loom_fake_axi_log_entry(int64_t index, int *is_write, uint32_t *offset, uint32_t *value) {
  if (index < 0 || index >= g_fake.log_count) return -1;
  if (is_write) *is_write = g_fake.log[index].is_write;
  if (offset) *offset = g_fake.log[index].offset;
  if (value) *value = g_fake.log[index].value;
  return 0;
}
