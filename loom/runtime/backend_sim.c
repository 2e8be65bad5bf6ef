/* In-process simulator backend: malloc'd staging buffers; a send hands the
 * words to the accelerator model at once, a receive takes the words the
 * model produced. Transfers complete immediately (check_* returns 1). */
#include <stdlib.h>

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
} sim_backend;

static int sim_start_send(loom_backend *b, int length, int offset) {
  sim_backend *s = (sim_backend *)b;
  return loom_model_send(s->model, b->in_buf + offset, length);
}

static int sim_start_recv(loom_backend *b, int length, int offset) {
  sim_backend *s = (sim_backend *)b;
  return loom_model_recv(s->model, b->out_buf + offset, length);
}

static int sim_wait(loom_backend *b) {
  (void)b;
  return loom_dma_error_code();
}

static int sim_check(loom_backend *b) {
  (void)b;
  return loom_has_error() ? -loom_dma_error_code() : 1;
}

static int sim_finish(loom_backend *b) {
  sim_backend *s = (sim_backend *)b;
  return s->model ? s->model->check_idle(s->model, "at dma_free") : LOOM_OK;
}

static void sim_destroy(loom_backend *b) {
  sim_backend *s = (sim_backend *)b;
  if (s->model) s->model->destroy(s->model);
  free(b->in_buf);
  free(b->out_buf);
  free(s);
}

loom_backend *loom_sim_backend_create(int64_t in_words, int64_t out_words) {
  sim_backend *s = calloc(1, sizeof *s);
  uint32_t *in = calloc((size_t)in_words, 4), *out = calloc((size_t)out_words, 4);
  if (!s || !in || !out) {
    free(s), free(in), free(out);
    loom_error(LOOM_ERR_DEVICE, "dma_init: cannot allocate the simulator staging buffers");
    return NULL;
  }
  loom_backend *b = &s->base;
  b->name = "sim";
  b->in_buf = in, b->out_buf = out;
  b->in_words = in_words, b->out_words = out_words;
  b->start_send = sim_start_send, b->start_recv = sim_start_recv;
  b->wait_send = sim_wait, b->wait_recv = sim_wait;
  b->check_send = sim_check, b->check_recv = sim_check;
  b->finish = sim_finish, b->destroy = sim_destroy;
  s->model = loom_selected_model_create(); /* NULL: error at the first send */
  return b;
}

void loom_sim_backend_replace_model(loom_backend *b) {
  if (!b || b->destroy != sim_destroy) return;
  sim_backend *s = (sim_backend *)b;
  if (s->model) s->model->destroy(s->model);
  s->model = loom_selected_model_create();
}
