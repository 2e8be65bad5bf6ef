/* Internal interfaces of the loom DMA runtime: error state, backends,
 * accelerator models. Not part of the ABI generated drivers see. */
#ifndef LOOM_RUNTIME_INTERNAL_H
#define LOOM_RUNTIME_INTERNAL_H

#include "dma_runtime.h"

#if defined(__GNUC__)
#define LOOM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LOOM_PRINTF(a, b)
#endif

/* Records the error if none is pending (the first error is the root cause);
 * returns `code` so callers can `return loom_error(...)`. */
int loom_error(int code, const char *fmt, ...) LOOM_PRINTF(2, 3);
int loom_has_error(void);

/* ---- accelerator models ---------------------------------------------- */
typedef struct loom_model loom_model;
struct loom_model {
  /* Words of one DMA send (one transfer, tlast after the last word). */
  int (*consume)(loom_model *m, const uint32_t *words, int n);
  /* Words waiting to be sent back to the host. */
  int64_t (*pending_output)(loom_model *m);
  /* Copy exactly n pending output words to dst (n checked by the caller). */
  int (*produce)(loom_model *m, uint32_t *dst, int n);
  /* Error if an instruction is half-read (called before receives / at free). */
  int (*check_idle)(loom_model *m, const char *when);
  void (*destroy)(loom_model *m);
  char name[32];
  int64_t transfer_index; /* sends seen, for messages */
};

/* Creates the model chosen by loom_sim_use_model[_vtable] (NULL + error if
 * none, or if its create fails). models.c. */
loom_model *loom_selected_model_create(void);
void loom_selected_model_changed(void); /* dma_runtime.c: recreate running models */
/* The shipped models compiled into the runtime (builtin_*.c), for the
 * model-id API; descriptions load the same sources as their own objects. */
extern const loom_model_vtable loom_builtin_matmul_vtable;
extern const loom_model_vtable loom_builtin_conv_vtable;

/* Common receive logic for the simulator and the fake DMA device. */
int loom_model_send(loom_model *m, const uint32_t *words, int n);
int loom_model_recv(loom_model *m, uint32_t *dst, int n);

/* ---- backends ---------------------------------------------------------- */
typedef struct loom_backend loom_backend;
struct loom_backend {
  const char *name;
  uint32_t *in_buf, *out_buf; /* staging buffers, set by the backend's init */
  int64_t in_words, out_words;
  int (*start_send)(loom_backend *b, int length, int offset);
  int (*wait_send)(loom_backend *b);
  int (*check_send)(loom_backend *b);
  int (*start_recv)(loom_backend *b, int length, int offset);
  int (*wait_recv)(loom_backend *b);
  int (*check_recv)(loom_backend *b);
  int (*finish)(loom_backend *b); /* end-of-run protocol check */
  /* Deliver a started send to the accelerator now (NULL: sends are delivered
   * at start). Called before a new send / receive is timed; before a receive
   * (for_recv) the send stays back while the accelerator has output pending. */
  int (*settle)(loom_backend *b, int for_recv);
  void (*destroy)(loom_backend *b);
};

loom_backend *loom_sim_backend_create(int64_t in_words, int64_t out_words);
loom_backend *loom_axi_backend_create(const loom_axi_platform *platform,
                                      uint64_t dma_address, uint64_t in_addr,
                                      int64_t in_words, uint64_t out_addr,
                                      int64_t out_words);
loom_backend *loom_trace_backend_wrap(loom_backend *inner);
loom_backend *loom_trace_backend_unwrap(loom_backend *b); /* frees the wrapper */
int loom_trace_backend_is(loom_backend *b);
/* The wrapped backend of a tracing backend; any other backend itself. */
loom_backend *loom_trace_backend_inner(loom_backend *b);
/* Replace the model of a simulator backend (no-op for other backends) or of
 * the fake DMA device. */
void loom_sim_backend_replace_model(loom_backend *b);
void loom_fake_axi_replace_model(void);


void loom_copy_configure_from_env(void); /* padded_copy.c, at dma_init */
/* Current staging windows (input: the half being filled), for the copy fast
 * paths; all zero without a backend or while an error is pending (so a fast
 * path that finds no room falls back on the checked path, which reports it).
 * Written only by dma_runtime.c. */
typedef struct loom_staging_window {
  uint32_t *in;
  int64_t in_words;
  uint32_t *out;
  int64_t out_words;
} loom_staging_window;
extern loom_staging_window loom_g_staging;

/* ---- timing model hooks (timing.c) --------------------------------------- */
/* Host-time accounting around every runtime call the driver makes, and around
 * the copy routines (time, or words x word cost, goes to host_copy). Inline
 * guards: without a timed run (LOOM_TIMING=off) they cost one load, not a call. */
extern int loom_timing_active; /* a run is on the timeline */
void loom_timing_enter_timed(void);
void loom_timing_leave_timed(void);
void loom_timing_copy_begin_timed(void);
void loom_timing_copy_end_timed(int64_t words);
static inline void loom_timing_enter(void) {
  if (loom_timing_active) loom_timing_enter_timed();
}
static inline void loom_timing_leave(void) {
  if (loom_timing_active) loom_timing_leave_timed();
}
static inline void loom_timing_copy_begin(void) {
  if (loom_timing_active) loom_timing_copy_begin_timed();
}
static inline void loom_timing_copy_end(int64_t words) {
  if (loom_timing_active) loom_timing_copy_end_timed(words);
}
/* A public copy routine moved `words` for the driver (direction 0: staged into the input,
 * 1: taken out of the output); words no routine covers were copied by the driver itself:
 * charged where it reports them (loom_timing_driver_copied), else at the next transfer, in
 * the deterministic mode (timing.c). */
void loom_timing_cover_timed(int direction, int64_t words);
static inline void loom_timing_cover(int direction, int64_t words) {
  if (loom_timing_active) loom_timing_cover_timed(direction, words);
}
/* Timeline events. */
void loom_timing_start_run(void); /* at the end of dma_init */
void loom_timing_end_run(void);   /* in dma_free: waits for all work */
void loom_timing_send(int64_t words);
void loom_timing_recv(int64_t words);
void loom_timing_wait_send(void);
void loom_timing_wait_recv(void);
/* Called by the models for every compute action (of the send being delivered). */
void loom_timing_compute(int64_t macs);
void loom_timing_result(void); /* a model's output became pending */

/* ---- deferred receive copies (padded_copy.c) ------------------------------ */
int loom_deferred_pending(void);
int loom_deferred_run(int count); /* the first count (< 0: all); keeps the rest */

#endif
