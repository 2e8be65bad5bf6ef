/* In-process simulator backend: malloc'd staging buffers and an accelerator
 * model. Transfers behave like a DMA engine's, so overlap is visible:
 *  - a started send is only read from the staging buffer when it is
 *    delivered: at dma_wait_send / dma_check_send, before the next send or
 *    receive starts, and at dma_free. A driver that overwrites staging words
 *    of a send still in flight therefore sends the overwritten words, as on
 *    the board;
 *  - a started receive takes the model's output at once (the accelerator
 *    streams it out), but the words land in the output staging buffer only
 *    at dma_wait_recv / dma_check_recv (or the next receive / dma_free).
 *    The send in flight reaches the model first unless output is already
 *    pending (the accelerator drains its output before it reads on).
 * Which instruction the accelerator works on is decided by this order; when
 * it happens in time is the timing model's business (timing.c). */
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

int loom_model_send(loom_model *m, const uint32_t *words, int n) {
  if (!m)
    return loom_error(LOOM_ERR_STATE, "dma_start_send: no accelerator model selected "
                      "(call loom_sim_use_model before sending)");
  m->transfer_index++;
  return m->consume(m, words, n);
}

int loom_model_recv(loom_model *m, uint32_t *dst, int n) {
  if (!m)
    return loom_error(LOOM_ERR_STATE, "dma_start_recv: no accelerator model selected");
  int rc = m->check_idle(m, "before a receive");
  if (rc) return rc;
  int64_t pending = m->pending_output(m);
  if (pending == 0)
    return loom_error(LOOM_ERR_NOTHING_TO_RECV,
                      "%s: receive of %d words but the accelerator has nothing to send back "
                      "(after send #%lld)", m->name, n, (long long)m->transfer_index);
  if (pending != n)
    return loom_error(LOOM_ERR_TRANSFER_LENGTH,
                      "%s: receive of %d words but the accelerator sends %lld words",
                      m->name, n, (long long)pending);
  return m->produce(m, dst, n);
}

typedef struct sim_backend {
  loom_backend base;
  loom_model *model;
  int send_pending, send_offset, send_length;
  int recv_pending, recv_offset, recv_length;
  uint32_t *recv_words; /* output streamed out, not landed yet (out_words) */
} sim_backend;

/* The send in flight reaches the accelerator. */
static int sim_settle(loom_backend *b) {
  sim_backend *s = (sim_backend *)b;
  if (!s->send_pending) return loom_dma_error_code();
  s->send_pending = 0;
  if (loom_has_error()) return loom_dma_error_code();
  return loom_model_send(s->model, b->in_buf + s->send_offset, s->send_length);
}

/* The receive in flight lands in the output staging buffer. */
static int sim_land(loom_backend *b) {
  sim_backend *s = (sim_backend *)b;
  if (!s->recv_pending) return loom_dma_error_code();
  s->recv_pending = 0;
  if (loom_has_error()) return loom_dma_error_code();
  memcpy(b->out_buf + s->recv_offset, s->recv_words, (size_t)s->recv_length * 4);
  return LOOM_OK;
}

/* Output already pending is received before the send in flight reaches the accelerator: the
 * accelerator stalls that stream until its output has drained (AXI-Stream back-pressure), so a
 * driver may start the next send before it receives the previous result. */
static int sim_settle_hook(loom_backend *b, int for_recv) {
  sim_backend *s = (sim_backend *)b;
  if (for_recv && s->model && s->model->pending_output(s->model) > 0) return loom_dma_error_code();
  return sim_settle(b);
}

static int sim_start_send(loom_backend *b, int length, int offset) {
  sim_backend *s = (sim_backend *)b;
  int rc = sim_settle(b);
  if (rc) return rc;
  s->send_pending = 1, s->send_offset = offset, s->send_length = length;
  return LOOM_OK;
}

static int sim_start_recv(loom_backend *b, int length, int offset) {
  sim_backend *s = (sim_backend *)b;
  int rc;
  if ((rc = sim_settle_hook(b, 1)) || (rc = sim_land(b))) return rc;
  if ((rc = loom_model_recv(s->model, s->recv_words, length))) return rc;
  s->recv_pending = 1, s->recv_offset = offset, s->recv_length = length;
  return LOOM_OK;
}

static int sim_wait_send(loom_backend *b) { return sim_settle(b); }
static int sim_wait_recv(loom_backend *b) { return sim_land(b); }

static int sim_check_send(loom_backend *b) {
  int rc = sim_settle(b);
  return rc ? -rc : 1;
}

static int sim_check_recv(loom_backend *b) {
  int rc = sim_land(b);
  return rc ? -rc : 1;
}

static int sim_finish(loom_backend *b) {
  sim_backend *s = (sim_backend *)b;
  int rc;
  if ((rc = sim_settle(b)) || (rc = sim_land(b))) return rc;
  return s->model ? s->model->check_idle(s->model, "at dma_free") : LOOM_OK;
}

static void sim_destroy(loom_backend *b) {
  sim_backend *s = (sim_backend *)b;
  if (s->model) s->model->destroy(s->model);
  free(b->in_buf);
  free(b->out_buf);
  free(s->recv_words);
  free(s);
}

loom_backend *loom_sim_backend_create(int64_t in_words, int64_t out_words) {
  sim_backend *s = calloc(1, sizeof *s);
  uint32_t *in = calloc((size_t)in_words, 4), *out = calloc((size_t)out_words, 4);
  uint32_t *landing = calloc((size_t)out_words, 4);
  if (!s || !in || !out || !landing) {
    free(s), free(in), free(out), free(landing);
    loom_error(LOOM_ERR_DEVICE, "dma_init: cannot allocate the simulator staging buffers");
    return NULL;
  }
  loom_backend *b = &s->base;
  b->name = "sim";
  b->in_buf = in, b->out_buf = out;
  b->in_words = in_words, b->out_words = out_words;
  b->start_send = sim_start_send, b->start_recv = sim_start_recv;
  b->wait_send = sim_wait_send, b->wait_recv = sim_wait_recv;
  b->check_send = sim_check_send, b->check_recv = sim_check_recv;
  b->finish = sim_finish, b->destroy = sim_destroy, b->settle = sim_settle_hook;
  s->recv_words = landing;
  s->model = loom_selected_model_create(); /* NULL: error at the first send */
  return b;
}

void loom_sim_backend_replace_model(loom_backend *b) {
  if (!b || b->destroy != sim_destroy) return;
  sim_backend *s = (sim_backend *)b;
  if (s->model) s->model->destroy(s->model);
  s->model = loom_selected_model_create();
  s->send_pending = s->recv_pending = 0; /* transfers in flight went to the old model */
}
