/* Staging helpers shared by the hand-written drivers: what a driver author
 * keeps next to their loops, not a descriptor library. Bare pointers into the
 * DMA staging buffers, row memcpys, one transfer per instruction or (when
 * coalescing) one per run of instructions before a receive, and optional
 * double buffering that mirrors the runtime's (loom_dma_set_double_buffering:
 * the input staging buffer splits in two halves and every dma_start_send
 * switches half; a receive starts only after the next send started, in the
 * other half of the output staging buffer, and is added one step late: the
 * order loom_dma_start_recv_late gives generated drivers, written out here
 * with the plain dma_start_recv / dma_wait_recv calls).
 *
 * Header-only (static functions) so each driver file stays one translation
 * unit; every function returns 0 or a runtime error code. */
#ifndef LOOM_MANUAL_STAGING_H
#define LOOM_MANUAL_STAGING_H

#include <string.h>

#include "dma_runtime.h"

#define MANUAL_DMA_ADDRESS 0x40400000u
#define MANUAL_IN_ADDRESS 0x16000000u
#define MANUAL_OUT_ADDRESS 0x16400000u
#define MANUAL_STAGING_WORDS 65536

/* The input side: where the next instruction goes and when it leaves. */
typedef struct outbox {
  uint32_t *base;   /* dma_in_buffer() */
  int capacity;     /* words of one transaction (half the buffer when double buffering) */
  int half;         /* which half the host fills now (double buffering) */
  int fill;         /* words staged for the next transaction */
  int open;         /* words of the instruction being staged (reserved, not yet ended) */
  int coalesce, double_buffer;
  int send_in_flight;
  struct inbox *ib; /* its receives start after a send (double buffering) */
} outbox;

/* A received tile whose accumulation into the destination waits (double buffering). */
typedef struct pending_tile {
  uint32_t *dst;
  int64_t ld;
  int rows, cols, pcols, words;
  int valid;
  int base; /* where in the output staging buffer it lands */
} pending_tile;

typedef struct inbox inbox;
static int inbox_start_queued(inbox *ib);

struct inbox {
  const uint32_t *out; /* dma_out_buffer() */
  int f32;
  int last_base;        /* output half of the last receive started (double buffering) */
  pending_tile pending; /* started, not yet added */
  pending_tile queued;  /* requested, starts after the next send (double buffering) */
};

/* dma_init with staging buffers of `words` words each (the description's), then the double-buffer
 * switch; fills both sides. Double buffering assumes MANUAL_STAGING_WORDS (inbox_start_queued). */
static int staging_open_words(outbox *ob, inbox *ib, int coalesce, int double_buffer, int f32, int words) {
  int rc = dma_init(MANUAL_DMA_ADDRESS, MANUAL_IN_ADDRESS, words, MANUAL_OUT_ADDRESS, words);
  if (!rc && double_buffer) rc = loom_dma_set_double_buffering(1);
  memset(ob, 0, sizeof *ob);
  memset(ib, 0, sizeof *ib);
  ob->base = dma_in_buffer();
  ob->capacity = double_buffer ? words / 2 : words;
  ob->coalesce = coalesce, ob->double_buffer = double_buffer, ob->ib = ib;
  ib->out = dma_out_buffer(), ib->f32 = f32;
  return rc;
}

/* The paper's board: 65536-word staging buffers (matmul_v*.json, conv2d.json). */
static int staging_open(outbox *ob, inbox *ib, int coalesce, int double_buffer, int f32) {
  return staging_open_words(ob, ib, coalesce, double_buffer, f32, MANUAL_STAGING_WORDS);
}

static uint32_t *staging_half(const outbox *ob) { return ob->base + (ob->half ? ob->capacity : 0); }

/* Send what is staged: wait for the previous send first when double
 * buffering (one MM2S channel) and switch half; otherwise send and wait. */
static int outbox_flush(outbox *ob) {
  if (!ob->fill) return LOOM_OK;
  int rc;
  if (ob->double_buffer) {
    if (ob->send_in_flight && (rc = dma_wait_send())) return rc;
    if ((rc = dma_start_send(ob->fill, 0))) return rc;
    ob->send_in_flight = 1, ob->half ^= 1;
    if ((rc = inbox_start_queued(ob->ib))) return rc; /* the send streams meanwhile */
  } else if ((rc = dma_start_send(ob->fill, 0)) || (rc = dma_wait_send())) {
    return rc;
  }
  ob->fill = 0;
  return LOOM_OK;
}

/* Room for one instruction of `words` words; *at receives where to write it.
 * Without coalescing every instruction is its own transaction. */
static int outbox_reserve(outbox *ob, int words, uint32_t **at) {
  int rc;
  if (ob->fill && (!ob->coalesce || ob->fill + words > ob->capacity) && (rc = outbox_flush(ob)))
    return rc;
  if (words > ob->capacity) return LOOM_ERR_ARGUMENT;
  *at = staging_half(ob) + ob->fill;
  ob->fill += words;
  ob->open = words;
  return LOOM_OK;
}

/* Instruction staged: its words are reported to the timing model here, where the
 * copy happened (as generated drivers do), and it leaves now unless
 * instructions are being coalesced. */
static int outbox_end(outbox *ob) {
  loom_timing_driver_copied(LOOM_TRACE_SEND, ob->open);
  ob->open = 0;
  return ob->coalesce ? LOOM_OK : outbox_flush(ob);
}

/* C[rows x cols] (row stride ldc) += tile (row stride pcols); unsigned words
 * so int32 wraps without undefined behaviour. */
static void accumulate_i32(uint32_t *restrict C, int64_t ldc, const uint32_t *restrict tile,
                           int rows, int cols, int pcols) {
  for (int r = 0; r < rows; r++, C += ldc, tile += pcols)
    for (int c = 0; c < cols; c++) C[c] += tile[c];
}

static void accumulate_f32(float *restrict C, int64_t ldc, const float *restrict tile, int rows,
                           int cols, int pcols) {
  for (int r = 0; r < rows; r++, C += ldc, tile += pcols)
    for (int c = 0; c < cols; c++) C[c] += tile[c];
}

/* Unpack a received tile, then report its words to the timing model (as generated drivers do). */
static void accumulate(const inbox *ib, const pending_tile *t) {
  if (ib->f32)
    accumulate_f32((float *)t->dst, t->ld, (const float *)(ib->out + t->base), t->rows, t->cols, t->pcols);
  else
    accumulate_i32(t->dst, t->ld, ib->out + t->base, t->rows, t->cols, t->pcols);
  loom_timing_driver_copied(LOOM_TRACE_RECV, t->words);
}

/* Finish the receive in flight (double buffering) and add it into its destination. */
static int inbox_drain(inbox *ib) {
  if (!ib->pending.valid) return LOOM_OK;
  int rc = dma_wait_recv();
  if (rc) return rc;
  ib->pending.valid = 0;
  accumulate(ib, &ib->pending);
  return LOOM_OK;
}

/* Start the requested receive once the one in flight has landed: in the other output half when both
 * fit (the landed tile is added while the new one streams), else over the same words (added first). */
static int inbox_start_queued(inbox *ib) {
  if (!ib->queued.valid) return LOOM_OK;
  pending_tile t = ib->queued;
  ib->queued.valid = 0;
  const int half = MANUAL_STAGING_WORDS / 2;
  int rc = ib->pending.valid ? dma_wait_recv() : LOOM_OK;
  if (rc) return rc;
  if (t.words > half) {
    if (ib->pending.valid) accumulate(ib, &ib->pending);
    ib->pending.valid = 0;
    t.base = ib->last_base = 0;
    if ((rc = dma_start_recv(t.words, 0))) return rc;
    ib->pending = t;
    return LOOM_OK;
  }
  t.base = ib->last_base = ib->last_base ? 0 : half;
  if ((rc = dma_start_recv(t.words, t.base))) return rc;
  if (ib->pending.valid) accumulate(ib, &ib->pending);
  ib->pending = t;
  return LOOM_OK;
}

/* Receive a tile (row stride pcols, rows x cols of it useful) and add it
 * into dst (row stride ld): sends staged so far leave first. Double
 * buffering: this one is requested; it starts after the next send (the
 * previous one then lands and is added) and is added one step later. */
static int receive_accumulate(outbox *ob, inbox *ib, uint32_t *dst, int64_t ld, int rows, int cols,
                              int pcols, int words) {
  int rc = outbox_flush(ob);
  if (rc) return rc;
  const pending_tile t = {dst, ld, rows, cols, pcols, words, 1, 0};
  if (ob->double_buffer) { /* one request at a time: an earlier one starts now */
    if ((rc = inbox_start_queued(ib))) return rc;
    ib->queued = t;
    loom_timing_driver_deferred(LOOM_TRACE_RECV, words); /* added after the next one starts */
    return LOOM_OK;
  }
  if ((rc = dma_start_recv(words, 0)) || (rc = dma_wait_recv())) return rc;
  accumulate(ib, &t);
  return LOOM_OK;
}

/* Everything staged is sent, everything received is added; then dma_free.
 * Returns the first error (rc, else the closing one). */
static int staging_close(outbox *ob, inbox *ib, int rc) {
  if (!rc) rc = outbox_flush(ob);
  if (!rc && ob->send_in_flight) rc = dma_wait_send();
  if (!rc) rc = inbox_start_queued(ib);
  if (!rc) rc = inbox_drain(ib);
  const int free_rc = dma_free();
  return rc ? rc : free_rc;
}

#endif
