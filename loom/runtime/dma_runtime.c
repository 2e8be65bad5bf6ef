/* The runtime front: error state, backend selection, dma_* dispatch.
 * Copy routines live in memref_copy.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

/* ---- error state ------------------------------------------------------- */
static void sync_window(void);
static int g_error_code = LOOM_OK;
static char g_error_message[512];

int loom_error(int code, const char *fmt, ...) {
  if (g_error_code != LOOM_OK) return code; /* keep the root cause */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_error_message, sizeof g_error_message, fmt, ap);
  va_end(ap);
  g_error_code = code;
  sync_window(); /* fast paths now fall back and fail */
  return code;
}

int loom_has_error(void) { return g_error_code != LOOM_OK; }
const char *loom_dma_last_error(void) { return g_error_message; }
int loom_dma_error_code(void) { return g_error_code; }

void loom_dma_clear_error(void) {
  g_error_code = LOOM_OK;
  g_error_message[0] = '\0';
  sync_window();
}

/* ---- selection --------------------------------------------------------- */
static int g_backend_id = LOOM_BACKEND_SIM;
static int g_tracing = 0;
static loom_axi_platform g_axi_platform;
static int g_axi_platform_set = 0;
static loom_backend *g_backend = NULL;
static int g_double_buffer = 0; /* input staging split in two halves */
static int64_t g_in_base = 0;   /* start of the half the host fills now */
/* Late receives alternate the output staging halves when they fit: g_out_base is where the
 * last one started landing, g_out_read where the host's copies out read (0 but while the
 * copies of the previous receive run). */
static int64_t g_out_base = 0, g_out_read = 0;
/* The late receive requested (loom_dma_start_recv_late, or written in by the driver: dma_runtime.h),
 * not started yet; the deferred copies recorded before the request belong to earlier receives. */
static int32_t g_late[LOOM_RECV_REQUEST_WORDS];

/* Words of the input staging area the driver addresses (one half when double buffering). */
static int64_t in_capacity(void) {
  return g_double_buffer ? g_backend->in_words / 2 : g_backend->in_words;
}

/* The staging windows the copy fast paths read (runtime_internal.h); kept in
 * step with every change of backend, half or mode by sync_window(). */
loom_staging_window loom_g_staging;
static void sync_window(void) {
  if (!g_backend || g_error_code != LOOM_OK) { /* no window: the copies take the checked path */
    memset(&loom_g_staging, 0, sizeof loom_g_staging);
    g_late[LOOM_RECV_REQUEST_ROOM] = 0; /* a request takes the call, which reports it */
    return;
  }
  g_late[LOOM_RECV_REQUEST_ROOM] = (int32_t)g_backend->out_words;
  loom_g_staging.in = g_backend->in_buf + g_in_base;
  loom_g_staging.in_words = in_capacity();
  loom_g_staging.out = g_backend->out_buf + g_out_read;
  loom_g_staging.out_words = g_backend->out_words - g_out_read;
}
static int g_send_in_flight = 0, g_recv_in_flight = 0; /* started, not yet waited for */
int loom_dma_drain_recvs(void);
void loom_deferred_reset(void);
static int start_recv(int length, int offset);

int loom_dma_use_backend(int backend_id) {
  if (backend_id != LOOM_BACKEND_SIM && backend_id != LOOM_BACKEND_AXI)
    return loom_error(LOOM_ERR_ARGUMENT, "loom_dma_use_backend: unknown backend id %d "
                      "(expected 0 = simulator, 1 = AXI DMA)", backend_id);
  g_backend_id = backend_id;
  return LOOM_OK;
}

void loom_dma_use_axi_platform(const loom_axi_platform *platform) {
  if (platform) {
    g_axi_platform = *platform;
    g_axi_platform_set = 1;
  } else {
    g_axi_platform_set = 0;
  }
}

/* The selected model changed (models.c): a running simulator (or fake DMA
 * device) switches to it. */
void loom_selected_model_changed(void) {
  if (g_backend) loom_sim_backend_replace_model(loom_trace_backend_inner(g_backend));
  loom_fake_axi_replace_model();
}

/* ---- device hook (a driver over several accelerators) -------------------- */
static loom_device_hook g_device_hook;
static uint64_t g_device_address; /* of the session dma_init opened */

void loom_dma_set_device_hook(const loom_device_hook *hook) {
  if (hook) g_device_hook = *hook;
  else memset(&g_device_hook, 0, sizeof g_device_hook);
}

static void device_event(int event) {
  if (g_device_hook.event) g_device_hook.event(g_device_hook.ctx, g_device_address, event);
}

/* ---- init / free ------------------------------------------------------- */
static void destroy_backend(void) {
  if (g_backend) g_backend->destroy(g_backend);
  g_backend = NULL;
  sync_window();
}

int dma_init(uint64_t dma_address, uint64_t in_addr, int64_t in_size,
             uint64_t out_addr, int64_t out_size) {
  destroy_backend();
  loom_dma_clear_error();
  g_device_address = dma_address;
  device_event(LOOM_DEVICE_OPEN); /* selects this device's model before the backend creates it */
  if (in_size == 0) in_size = 65536;
  if (out_size == 0) out_size = 65536;
  if (in_size < 0 || out_size < 0 || in_size > (1 << 26) || out_size > (1 << 26))
    return loom_error(LOOM_ERR_ARGUMENT,
                      "dma_init: staging sizes %lld / %lld words (expected 1..%d)",
                      (long long)in_size, (long long)out_size, 1 << 26);
  loom_backend *b;
  if (g_backend_id == LOOM_BACKEND_SIM) {
    b = loom_sim_backend_create(in_size, out_size);
  } else {
    extern const loom_axi_platform *loom_devmem_platform(void);
    const loom_axi_platform *p = g_axi_platform_set ? &g_axi_platform : loom_devmem_platform();
    b = loom_axi_backend_create(p, dma_address, in_addr, in_size, out_addr, out_size);
  }
  if (!b) return loom_dma_error_code() ? loom_dma_error_code() : LOOM_ERR_DEVICE;
  g_backend = g_tracing ? loom_trace_backend_wrap(b) : b;
  g_double_buffer = 0, g_in_base = 0, g_out_base = g_out_read = 0;
  sync_window();
  g_send_in_flight = g_recv_in_flight = 0;
  g_late[LOOM_RECV_REQUEST_QUEUED] = 0;
  loom_copy_configure_from_env();
  loom_timing_start_run();
  return loom_dma_error_code();
}

int dma_free(void) {
  int rc = LOOM_OK;
  const int open = g_backend != NULL; /* a session to close (dma_free without one closes nothing) */
  loom_timing_enter();
  if (g_backend && !loom_has_error()) {
    /* transfers still in flight complete, then the deferred copies owed to the host run */
    if (g_send_in_flight) g_backend->wait_send(g_backend);
    if (g_recv_in_flight) g_backend->wait_recv(g_backend);
    g_recv_in_flight = 0;
    loom_dma_drain_recvs(); /* starts and waits for a late receive too */
    rc = g_backend->finish(g_backend);
  }
  g_send_in_flight = g_recv_in_flight = g_late[LOOM_RECV_REQUEST_QUEUED] = 0;
  loom_deferred_reset();
  loom_timing_end_run();
  destroy_backend();
  if (open) device_event(LOOM_DEVICE_CLOSED);
  return rc ? rc : loom_dma_error_code();
}

/* ---- double buffering ---------------------------------------------------- */
int loom_dma_set_double_buffering(int enabled) {
  if (!g_backend)
    return loom_error(LOOM_ERR_STATE, "loom_dma_set_double_buffering: called before dma_init");
  g_double_buffer = enabled != 0;
  g_in_base = 0;
  sync_window();
  return LOOM_OK;
}

uint32_t *dma_in_buffer(void) { return g_backend ? g_backend->in_buf : NULL; }
uint32_t *dma_out_buffer(void) { return g_backend ? g_backend->out_buf : NULL; }
int64_t dma_in_size(void) { return g_backend ? g_backend->in_words : 0; }
int64_t dma_out_size(void) { return g_backend ? g_backend->out_words : 0; }

/* Staging windows as rank-1 memref descriptors (MLIR layout), for drivers that
 * stage words inline (the dma-inline-copies pass): the input window is the half
 * being filled when double buffering. Without a backend, or while an error is
 * pending, the window is empty (size 0), so an inline copy's bounds check fails
 * and the driver takes the runtime call, which reports the error. */
typedef struct staging_descriptor {
  uint32_t *allocated, *aligned;
  intptr_t offset, size, stride;
} staging_descriptor;

static void fill_view(void *result, uint32_t *words, int64_t count) {
  staging_descriptor d = {words, words, 0, words ? (intptr_t)count : 0, 1};
  if (result) memcpy(result, &d, sizeof d);
}

/* one per element type: each is one MLIR function type (the words are the same) */
void loom_dma_in_view_i32(void *result) { fill_view(result, loom_g_staging.in, loom_g_staging.in_words); }
void loom_dma_in_view_f32(void *result) { fill_view(result, loom_g_staging.in, loom_g_staging.in_words); }
void loom_dma_out_view_i32(void *result) { fill_view(result, loom_g_staging.out, loom_g_staging.out_words); }
void loom_dma_out_view_f32(void *result) { fill_view(result, loom_g_staging.out, loom_g_staging.out_words); }
/* Double buffering: the whole input buffer (both halves; empty without a backend or while an
 * error is pending) and the word where the half being filled starts (it moves at every send). */
static void fill_buffer_view(void *result) {
  int usable = g_backend && g_error_code == LOOM_OK;
  fill_view(result, usable ? g_backend->in_buf : NULL, usable ? g_backend->in_words : 0);
}
void loom_dma_in_buffer_view_i32(void *result) { fill_buffer_view(result); }
void loom_dma_in_buffer_view_f32(void *result) { fill_buffer_view(result); }
int loom_dma_in_half_base(void) { return (int)g_in_base; }
int loom_dma_out_recv_base(void) { return (int)g_out_base; }
void loom_dma_recv_request_view_i32(void *result) {
  staging_descriptor d = {(uint32_t *)g_late, (uint32_t *)g_late, 0, LOOM_RECV_REQUEST_WORDS, 1};
  if (result) memcpy(result, &d, sizeof d);
}

/* ---- tracing switch ---------------------------------------------------- */
void loom_dma_set_tracing(int enabled) {
  g_tracing = enabled != 0;
  if (!g_backend) return;
  int wrapped = loom_trace_backend_is(g_backend);
  if (g_tracing && !wrapped) g_backend = loom_trace_backend_wrap(g_backend);
  if (!g_tracing && wrapped) g_backend = loom_trace_backend_unwrap(g_backend);
  sync_window();
}

/* ---- transfers --------------------------------------------------------- */
/* Common precondition of every data-moving call; returns 0 when usable. */
static int ready(const char *who) {
  if (loom_has_error()) return loom_dma_error_code();
  if (!g_backend) return loom_error(LOOM_ERR_STATE, "%s: called before dma_init", who);
  return LOOM_OK;
}

static int check_range(const char *who, int length, int offset, int64_t capacity,
                       const char *buffer) {
  if (length < 0 || offset < 0 || (int64_t)offset + length > capacity)
    return loom_error(LOOM_ERR_STAGING_OVERFLOW,
                      "%s: words [%d, %lld) outside the %s staging buffer of %lld words",
                      who, offset, (long long)offset + length, buffer, (long long)capacity);
  return LOOM_OK;
}

static const char *input_name(void) { return g_double_buffer ? "input (half)" : "input"; }

int write_literal(uint32_t word, int offset) {
  loom_timing_copy_begin();
  int rc = -1;
  if (offset >= 0 && offset < loom_g_staging.in_words) { /* the window: ready and in range */
    loom_g_staging.in[offset] = word;
    rc = offset + 1;
  } else if (!ready("write_literal") &&
      !check_range("write_literal", 1, offset, in_capacity(), input_name())) {
    g_backend->in_buf[g_in_base + offset] = word;
    rc = offset + 1;
  }
  loom_timing_copy_end(rc < 0 ? -1 : 1);
  loom_timing_cover(0, rc < 0 ? 0 : 1);
  return rc;
}

/* Every dma_* entry below is one host call on the timeline (enter/leave). */

/* Waits for the receive in flight (its words land in the output staging buffer). */
static int wait_recv_in_flight(void) {
  int rc = ready("dma_wait_recv");
  if (!rc && g_recv_in_flight) rc = g_backend->wait_recv(g_backend);
  if (g_recv_in_flight) loom_timing_wait_recv();
  g_recv_in_flight = 0;
  return rc;
}

/* The output side of the staging window after g_out_read changed (sync_window's, cheaper: the
 * deferred copies of every double-buffered step move it twice). */
static void sync_out_window(void) {
  if (!loom_g_staging.in) return sync_window(); /* no window (no backend or an error) */
  loom_g_staging.out = g_backend->out_buf + g_out_read;
  loom_g_staging.out_words = g_backend->out_words - g_out_read;
}

/* Runs the first `count` deferred copies (< 0: all), reading the output staging from `base`. */
static int run_copies(int count, int64_t base) {
  if (count == 0 || !loom_deferred_pending()) return loom_dma_error_code();
  g_out_read = base;
  sync_out_window();
  int rc = loom_deferred_run(count);
  g_out_read = 0;
  sync_out_window();
  return rc;
}

/* Starts the late receive, if one is queued, once the receive before it has landed: in the other
 * output half when both fit (the landed one's copies run after the start), else over the same
 * words (its copies run first). */
static int start_late_recv(void) {
  if (!g_late[LOOM_RECV_REQUEST_QUEUED]) return LOOM_OK;
  g_late[LOOM_RECV_REQUEST_QUEUED] = 0;
  const int length = g_late[LOOM_RECV_REQUEST_LENGTH], offset = g_late[LOOM_RECV_REQUEST_OFFSET];
  const int copies = g_late[LOOM_RECV_REQUEST_COPIES];
  int rc = wait_recv_in_flight();
  if (rc) return rc;
  const int64_t half = g_backend->out_words / 2, landed = g_out_base;
  if ((int64_t)offset + length > half) { /* one staging area: unpack, then receive over it */
    g_out_base = 0;
    rc = run_copies(copies, landed);
    return rc ? rc : start_recv(length, offset);
  }
  /* the other half: the receive streams while the host unpacks the one that landed */
  g_out_base = landed ? 0 : half;
  rc = start_recv(length, (int)g_out_base + offset);
  return rc ? rc : run_copies(copies, landed);
}

static int start_send(int length, int offset) {
  int rc = ready("dma_start_send");
  if (rc) return rc;
  if ((rc = check_range("dma_start_send", length, offset, in_capacity(), input_name())))
    return rc;
  /* the previous send reaches the accelerator first (its computes are timed) */
  if (g_backend->settle && (rc = g_backend->settle(g_backend, 0))) return rc;
  loom_timing_send(length);
  rc = g_backend->start_send(g_backend, length, (int)(g_in_base + offset));
  g_send_in_flight = rc == LOOM_OK;
  if (g_double_buffer) g_in_base = g_in_base ? 0 : g_backend->in_words / 2;
  sync_window();
  return rc ? rc : start_late_recv(); /* the send streams while the host sees to the receive */
}

int dma_start_send(int length, int offset) {
  loom_timing_enter();
  int rc = start_send(length, offset);
  loom_timing_leave();
  return rc;
}

int dma_wait_send(void) {
  loom_timing_enter();
  int rc = ready("dma_wait_send");
  if (!rc) rc = g_backend->wait_send(g_backend);
  g_send_in_flight = 0;
  loom_timing_wait_send();
  loom_timing_leave();
  return rc;
}

int dma_check_send(void) {
  loom_timing_enter();
  int rc = ready("dma_check_send");
  rc = rc ? -rc : g_backend->check_send(g_backend);
  if (rc == 1) { /* "done" means the transfer's end was reached */
    g_send_in_flight = 0;
    loom_timing_wait_send();
  }
  loom_timing_leave();
  return rc;
}

static int start_recv(int length, int offset) {
  int rc = ready("dma_start_recv");
  if (rc) return rc;
  if ((rc = check_range("dma_start_recv", length, offset, g_backend->out_words, "output")))
    return rc;
  if (g_backend->settle && (rc = g_backend->settle(g_backend, 1))) return rc;
  loom_timing_recv(length);
  rc = g_backend->start_recv(g_backend, length, offset);
  g_recv_in_flight = rc == LOOM_OK;
  return rc;
}

int dma_start_recv(int length, int offset) {
  loom_timing_enter();
  int rc = start_late_recv();
  g_out_base = 0; /* the driver addresses the whole staging buffer */
  if (!rc) rc = start_recv(length, offset);
  loom_timing_leave();
  return rc;
}

int loom_dma_start_recv_late(int length, int offset) {
  loom_timing_enter();
  int rc = start_late_recv(); /* one queued at a time */
  if (!rc) rc = ready("loom_dma_start_recv_late");
  if (!rc) rc = check_range("loom_dma_start_recv_late", length, offset, g_backend->out_words, "output");
  if (!rc) {
    g_late[LOOM_RECV_REQUEST_LENGTH] = length, g_late[LOOM_RECV_REQUEST_OFFSET] = offset;
    g_late[LOOM_RECV_REQUEST_COPIES] = loom_deferred_pending();
    g_late[LOOM_RECV_REQUEST_QUEUED] = 1;
  }
  loom_timing_leave();
  return rc;
}

int loom_dma_start_queued_recv(void) {
  loom_timing_enter();
  int rc = start_late_recv();
  loom_timing_leave();
  return rc;
}

int loom_dma_drain_recvs(void) {
  loom_timing_enter();
  int rc = start_late_recv();
  if (!rc) rc = wait_recv_in_flight();
  if (!rc) rc = run_copies(-1, g_out_base);
  loom_timing_leave();
  return rc ? rc : loom_dma_error_code();
}

int dma_wait_recv(void) {
  loom_timing_enter();
  int rc = start_late_recv();
  if (!rc) rc = ready("dma_wait_recv");
  if (!rc) rc = g_backend->wait_recv(g_backend);
  g_recv_in_flight = 0;
  loom_timing_wait_recv();
  loom_timing_leave();
  return rc;
}

int dma_check_recv(void) {
  loom_timing_enter();
  int rc = start_late_recv();
  if (!rc) rc = ready("dma_check_recv");
  rc = rc ? -rc : g_backend->check_recv(g_backend);
  if (rc == 1) {
    g_recv_in_flight = 0;
    loom_timing_wait_recv();
  }
  loom_timing_leave();
  return rc;
}

/* Used by memref_copy.c. */
int loom_staging_in(const char *who, int64_t words, int offset, uint32_t **dst) {
  if (ready(who)) return -1;
  if (words > 0x7fffffff || check_range(who, (int)words, offset, in_capacity(), input_name()))
    return -1;
  *dst = g_backend->in_buf + g_in_base + offset;
  return 0;
}

int loom_staging_out(const char *who, int64_t words, int offset, const uint32_t **src) {
  if (ready(who)) return -1;
  if (words > 0x7fffffff ||
      check_range(who, (int)words, offset, g_backend->out_words - g_out_read, "output"))
    return -1;
  *src = g_backend->out_buf + g_out_read + offset;
  return 0;
}
