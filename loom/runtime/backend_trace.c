/* Tracing backend: wraps another backend and records every transaction
 * (direction, length in words, first word) plus running counters. The
 * records and counters are global so they survive dma_free and can be read
 * from Python after a driver ran. */
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

#define TRACE_MAX_RECORDS (1 << 20)

typedef struct trace_record {
  int direction, length;
  uint32_t first_word;
} trace_record;

static loom_trace_counters g_counters;
static trace_record *g_records;
static int64_t g_record_count, g_record_capacity;
static int g_operand_bytes = 4;

typedef struct trace_backend {
  loom_backend base;
  loom_backend *inner;
  int recv_length, recv_offset; /* completed in wait_recv: data is there then */
  int recv_pending;
} trace_backend;

static void record(int direction, int length, uint32_t first_word) {
  if (g_record_count == g_record_capacity && g_record_capacity < TRACE_MAX_RECORDS) {
    int64_t cap = g_record_capacity ? g_record_capacity * 2 : 256;
    trace_record *grown = realloc(g_records, (size_t)cap * sizeof *grown);
    if (grown) g_records = grown, g_record_capacity = cap;
  }
  if (g_record_count < g_record_capacity)
    g_records[g_record_count++] = (trace_record){direction, length, first_word};
}

static int t_start_send(loom_backend *b, int length, int offset) {
  trace_backend *t = (trace_backend *)b;
  g_counters.sends++;
  g_counters.words_sent += length;
  g_counters.bytes_sent += (int64_t)length * g_operand_bytes;
  record(LOOM_TRACE_SEND, length, length > 0 ? b->in_buf[offset] : 0);
  return t->inner->start_send(t->inner, length, offset);
}

static int t_start_recv(loom_backend *b, int length, int offset) {
  trace_backend *t = (trace_backend *)b;
  g_counters.recvs++;
  g_counters.words_received += length;
  g_counters.bytes_received += (int64_t)length * g_operand_bytes;
  int rc = t->inner->start_recv(t->inner, length, offset);
  /* the first received word is known once the data landed; the simulator
   * delivers at start, a real DMA by the end of the wait */
  record(LOOM_TRACE_RECV, length, (rc == LOOM_OK && length > 0) ? b->out_buf[offset] : 0);
  t->recv_pending = rc == LOOM_OK && length > 0;
  t->recv_length = length, t->recv_offset = offset;
  return rc;
}

static int t_wait_send(loom_backend *b) {
  trace_backend *t = (trace_backend *)b;
  return t->inner->wait_send(t->inner);
}

static int t_wait_recv(loom_backend *b) {
  trace_backend *t = (trace_backend *)b;
  int rc = t->inner->wait_recv(t->inner);
  if (rc == LOOM_OK && t->recv_pending && g_record_count > 0 &&
      g_records[g_record_count - 1].direction == LOOM_TRACE_RECV)
    g_records[g_record_count - 1].first_word = b->out_buf[t->recv_offset];
  t->recv_pending = 0;
  return rc;
}

static int t_check_send(loom_backend *b) {
  trace_backend *t = (trace_backend *)b;
  return t->inner->check_send(t->inner);
}

static int t_check_recv(loom_backend *b) {
  trace_backend *t = (trace_backend *)b;
  return t->inner->check_recv(t->inner);
}

static int t_settle(loom_backend *b, int for_recv) {
  trace_backend *t = (trace_backend *)b;
  return t->inner->settle(t->inner, for_recv);
}

static int t_finish(loom_backend *b) {
  trace_backend *t = (trace_backend *)b;
  return t->inner->finish(t->inner);
}

static void t_destroy(loom_backend *b) {
  trace_backend *t = (trace_backend *)b;
  t->inner->destroy(t->inner);
  free(t);
}

int loom_trace_backend_is(loom_backend *b) { return b && b->destroy == t_destroy; }

loom_backend *loom_trace_backend_inner(loom_backend *b) {
  return loom_trace_backend_is(b) ? ((trace_backend *)b)->inner : b;
}

loom_backend *loom_trace_backend_wrap(loom_backend *inner) {
  trace_backend *t = calloc(1, sizeof *t);
  if (!t) return inner; /* tracing is best effort; the run still works */
  t->inner = inner;
  loom_backend *b = &t->base;
  *b = *inner; /* share the staging buffers */
  b->name = "trace";
  b->start_send = t_start_send, b->start_recv = t_start_recv;
  b->wait_send = t_wait_send, b->wait_recv = t_wait_recv;
  b->check_send = t_check_send, b->check_recv = t_check_recv;
  b->finish = t_finish, b->destroy = t_destroy;
  b->settle = inner->settle ? t_settle : NULL;
  return b;
}

loom_backend *loom_trace_backend_unwrap(loom_backend *b) {
  if (!loom_trace_backend_is(b)) return b;
  loom_backend *inner = ((trace_backend *)b)->inner;
  free(b);
  return inner;
}

void loom_trace_set_operand_bytes(int bytes) { g_operand_bytes = bytes > 0 ? bytes : 4; }
void loom_trace_get_counters(loom_trace_counters *out) {
  if (out) *out = g_counters;
}

void loom_trace_reset(void) {
  memset(&g_counters, 0, sizeof g_counters);
  g_record_count = 0;
}

int64_t loom_trace_record_count(void) { return g_record_count; }

int loom_trace_record(int64_t index, int *direction, int *length, uint32_t *first_word) {
  if (index < 0 || index >= g_record_count) return -1;
  if (direction) *direction = g_records[index].direction;
  if (length) *length = g_records[index].length;
  if (first_word) *first_word = g_records[index].first_word;
  return 0;
}
