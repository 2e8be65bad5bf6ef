/* Virtual timeline of a run (the system timing model of dma_runtime.h).
 *
 * Time is kept in integer picoseconds so that a run's figures are exact sums
 * of cycles and host costs. The host is one sequential actor; the MM2S and
 * S2MM channels and the accelerator are resources that are busy until a
 * time. Events come from the runtime front (dma_runtime.c), the copy
 * routines and the models; nothing here touches data. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime_internal.h"

#define PS_PER_S 1e12

static struct {
  double clock_hz, ops_per_cycle;
  int64_t width_bits, latency_cycles;
  int deterministic;
  int64_t call_ps, word_ps;
  int recv_overlaps_send; /* 0: one transfer at a time on the DMA (MM2S and S2MM exclusive) */
  double host_scale;      /* host time multiplier: a slower host CPU than this machine's */
  int input_buffers;      /* input banks: a send streams while up to this many - 1 computes run */
  int output_buffers;     /* result banks: a result's computes start once the result this many
                             back has been received */
} g_cfg = {200e6, 112.0, 32, 100, 0, 0, 0, 1, 1.0, 1, 1};

/* a run is on the timeline (runtime_internal.h: the inline hooks test it) */
int loom_timing_active;

/* LOOM_TIMING_TRACE=1: every timeline event on stderr (host position and resources, ps), to
 * compare where two drivers spend host time. */
static int g_trace;
#define TRACE(...) (g_trace ? trace_event(__VA_ARGS__) : (void)0)

static struct {
  int depth;
  int64_t mark_ns, copy_ns, enter_ns; /* monotonic clock when host code resumed / a copy began /
                                         the outermost runtime call was entered */
  int64_t host_owed_ns, copy_owed_ns; /* <= 0: intervals measured below their cost (measured_less) */
  int64_t host_now;            /* host's position on the timeline */
  int64_t send_free, recv_free, accel_free, last_send_end;
  /* end times of the last LOOM_MAX_INPUT_BUFFERS computes, the newest at (computes - 1) % max */
  int64_t compute_end[LOOM_MAX_INPUT_BUFFERS];
  int64_t computes;
  /* results the accelerator produced (its output became pending), and the end times of the last
   * LOOM_MAX_OUTPUT_BUFFERS receives, receive r at r % max (receive r takes result r) */
  int64_t results;
  int64_t recv_end[LOOM_MAX_OUTPUT_BUFFERS];
  int64_t compute_stall;
  int64_t host_copy, host_other, dma, compute, wait;
  int64_t send_dma, recv_dma, send_stall, recv_stall, setup;
  int64_t sends, recvs, words_sent, words_received, macs;
  int64_t total;
  /* deterministic mode: words the host must have copied (sent; received and waited for) and
   * words a runtime copy routine or loom_timing_driver_copied covered; the rest was copied by
   * the driver's own code, unreported */
  int64_t owed[2], covered[2], recv_unwaited;
  int64_t deferred[2]; /* covered by loom_timing_driver_deferred, not yet reported copied */
} g_t;

static void trace_event(const char *event, int64_t arg) {
  fprintf(stderr, "timing %-10s %8lld host %10lld send %10lld recv %10lld accel %10lld\n", event,
          (long long)arg, (long long)g_t.host_now, (long long)g_t.send_free, (long long)g_t.recv_free,
          (long long)g_t.accel_free);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* What the instrumentation itself adds to a measured interval. A copy interval runs from
 * the read in the enter hook to the read in the copy's end hook; a host interval from the
 * read in the leave hook to the read in the next call's enter hook. Each holds about one
 * clock read (20-80 ns on a shared VM) and the hooks' own code around it, and a host
 * interval also a return and a call. Their costs are the medians of empty copy calls run
 * back to back through the real hooks (calibrate_hooks; a bare read pair, used before,
 * left ~20 ns per boundary charged to the driver), calibrated at every run's start since
 * they drift with the machine's load, and taken off every interval. The hooks read the
 * clock once per call boundary: a copy call reuses its entry read as the copy's start and
 * its end read as the start of the next host interval. */
enum { CALIBRATION_PAIRS = 255 };
static int64_t g_clock_ns = -1, g_copy_ns = -1, g_boundary_ns = -1;

/* The median of the CALIBRATION_PAIRS values of d (reordered): Hoare's selection, linear on
 * average (sorting them with qsort took half of a run's calibration: 85 -> 42 us per dma_init). */
static int64_t median_of(int64_t *d) {
  const int k = CALIBRATION_PAIRS / 2;
  int lo = 0, hi = CALIBRATION_PAIRS - 1;
  while (lo < hi) {
    const int64_t pivot = d[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (d[i] < pivot) i++;
      while (d[j] > pivot) j--;
      if (i <= j) {
        const int64_t t = d[i];
        d[i++] = d[j];
        d[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return d[k];
}

/* A bare clock read pair: reported (loom_timing_clock_read_s) as the clock's own scale. */
static void calibrate_clock(void) {
  int64_t d[CALIBRATION_PAIRS];
  for (int i = 0; i < CALIBRATION_PAIRS; i++) {
    const int64_t a = now_ns();
    d[i] = now_ns() - a;
  }
  g_clock_ns = median_of(d);
}

static double ns_to_s(int64_t ns) { return ns < 0 ? 0.0 : ns * 1e-9; }
double loom_timing_clock_read_s(void) { return ns_to_s(g_clock_ns); }
double loom_timing_boundary_s(void) { return ns_to_s(g_boundary_ns); }
double loom_timing_empty_copy_s(void) { return ns_to_s(g_copy_ns); }

/* A measured interval less the calibrated cost (ns). An interval shorter than the cost
 * (the median) owes the difference to the next ones of its kind instead of counting as 0:
 * clamping each interval alone would charge the jitter's upper half on every call. */
static int64_t measured_less(int64_t t0, int64_t t1, int64_t cost, int64_t *owed) {
  const int64_t d = t1 - t0 - cost + *owed;
  *owed = d < 0 ? d : 0;
  return d > 0 ? d : 0;
}

/* No libm: the harness executables link without -lm. */
static int64_t round_ps(double x) { return (int64_t)(x + 0.5); }
static int64_t ceil_pos(double x) {
  int64_t c = (int64_t)x;
  return (double)c < x ? c + 1 : c;
}
static int64_t cycle_ps(void) { return round_ps(PS_PER_S / g_cfg.clock_hz); }

int loom_timing_configure(double clock_hz, double ops_per_cycle, int width_bits, int latency_cycles) {
  if (!(clock_hz > 0) || !(ops_per_cycle > 0) || width_bits <= 0 || width_bits % 32 ||
      latency_cycles < 0)
    return loom_error(LOOM_ERR_ARGUMENT,
                      "loom_timing_configure: clock %g Hz, %g ops/cycle, width %d bits, latency %d "
                      "cycles (expected clock > 0, ops > 0, width a positive multiple of 32, "
                      "latency >= 0)", clock_hz, ops_per_cycle, width_bits, latency_cycles);
  g_cfg.clock_hz = clock_hz, g_cfg.ops_per_cycle = ops_per_cycle;
  g_cfg.width_bits = width_bits, g_cfg.latency_cycles = latency_cycles;
  return LOOM_OK;
}

int loom_timing_set_host_model(int deterministic, double call_s, double word_s) {
  if (call_s < 0 || word_s < 0)
    return loom_error(LOOM_ERR_ARGUMENT, "loom_timing_set_host_model: negative cost (%g s per "
                      "call, %g s per word)", call_s, word_s);
  g_cfg.deterministic = deterministic != 0;
  g_cfg.call_ps = round_ps(call_s * PS_PER_S);
  g_cfg.word_ps = round_ps(word_s * PS_PER_S);
  return LOOM_OK;
}

int loom_timing_configure_system(int recv_overlaps_send, double host_scale) {
  if (!(host_scale > 0) || (recv_overlaps_send != 0 && recv_overlaps_send != 1))
    return loom_error(LOOM_ERR_ARGUMENT, "loom_timing_configure_system: receive overlap %d, host "
                      "scale %g (expected overlap 0 or 1 and a scale > 0)", recv_overlaps_send,
                      host_scale);
  g_cfg.recv_overlaps_send = recv_overlaps_send;
  g_cfg.host_scale = host_scale;
  return LOOM_OK;
}

int loom_timing_set_input_buffers(int input_buffers) {
  if (input_buffers < 1 || input_buffers > LOOM_MAX_INPUT_BUFFERS)
    return loom_error(LOOM_ERR_ARGUMENT, "loom_timing_set_input_buffers: %d input buffers (expected "
                      "1 to %d)", input_buffers, LOOM_MAX_INPUT_BUFFERS);
  g_cfg.input_buffers = input_buffers;
  return LOOM_OK;
}

int loom_timing_set_output_buffers(int output_buffers) {
  if (output_buffers < 1 || output_buffers > LOOM_MAX_OUTPUT_BUFFERS)
    return loom_error(LOOM_ERR_ARGUMENT, "loom_timing_set_output_buffers: %d output buffers "
                      "(expected 1 to %d)", output_buffers, LOOM_MAX_OUTPUT_BUFFERS);
  g_cfg.output_buffers = output_buffers;
  return LOOM_OK;
}

/* ---- host time ----------------------------------------------------------- */
static int64_t scaled(int64_t ps) {
  return g_cfg.host_scale == 1.0 ? ps : round_ps((double)ps * g_cfg.host_scale);
}

static void host_advance_other(int64_t ps) {
  ps = scaled(ps);
  g_t.host_other += ps;
  g_t.host_now += ps;
}

void loom_timing_enter_timed(void) {
  if (!loom_timing_active) return;
  if (g_t.depth++ == 0) {
    if (g_cfg.deterministic) {
      host_advance_other(g_cfg.call_ps);
    } else {
      g_t.enter_ns = now_ns();
      host_advance_other(
          measured_less(g_t.mark_ns, g_t.enter_ns, g_boundary_ns, &g_t.host_owed_ns) * 1000);
    }
    TRACE("call", 0);
  }
}

/* Leaving the outermost call: host code resumes at clock time t (read now if t < 0). */
static void leave_at(int64_t t) {
  if (!loom_timing_active || g_t.depth == 0) return;
  if (--g_t.depth == 0 && !g_cfg.deterministic) g_t.mark_ns = t >= 0 ? t : now_ns();
}

void loom_timing_leave_timed(void) { leave_at(-1); }

void loom_timing_copy_begin_timed(void) {
  if (!loom_timing_active) return;
  const int outermost = g_t.depth == 0;
  loom_timing_enter_timed();
  if (!g_cfg.deterministic) g_t.copy_ns = outermost ? g_t.enter_ns : now_ns();
}

void loom_timing_copy_end_timed(int64_t words) {
  if (!loom_timing_active) return;
  const int64_t t = g_cfg.deterministic ? -1 : now_ns();
  int64_t ps = g_cfg.deterministic ? words * g_cfg.word_ps
                                    : measured_less(g_t.copy_ns, t, g_copy_ns, &g_t.copy_owed_ns) * 1000;
  if (words < 0) ps = 0; /* failed copy */
  ps = scaled(ps);
  g_t.host_copy += ps;
  g_t.host_now += ps;
  TRACE("copy", words);
  leave_at(t);
}

/* Words a runtime copy routine moved (direction 0: into the input staging, 1: out of the
 * output staging), charged by loom_timing_copy_end; see settle_driver_copies. */
void loom_timing_cover_timed(int direction, int64_t words) {
  if (loom_timing_active && words > 0) g_t.covered[direction != 0] += words;
}

/* Words the driver's own code just staged or unpacked (dma_runtime.h): in the deterministic
 * mode they cost word_s each here, where the copy happened (a double-buffered driver stages
 * the next tile while a send is in flight, before dma_wait_send), and are covered so that
 * settle_driver_copies does not charge them again. Measured mode: the clock sees the copy. */
void loom_timing_driver_copied(int direction, int64_t words) {
  if (!loom_timing_active || !g_cfg.deterministic || words <= 0) return;
  const int d = direction != 0;
  int64_t ps = scaled(words * g_cfg.word_ps);
  g_t.host_copy += ps;
  g_t.host_now += ps;
  const int64_t early = g_t.deferred[d] < words ? g_t.deferred[d] : words;
  g_t.deferred[d] -= early;
  g_t.covered[d] += words - early;
  TRACE(d ? "unpacked" : "staged", words);
}

/* Words the driver will unpack itself later (a late receive it adds after the next one
 * started): covered now, as copy_from_outbuffer_deferred_* covers its words when recorded, so
 * that the next transfer does not charge them; loom_timing_driver_copied charges them. */
void loom_timing_driver_deferred(int direction, int64_t words) {
  if (!loom_timing_active || !g_cfg.deterministic || words <= 0) return;
  g_t.covered[direction != 0] += words;
  g_t.deferred[direction != 0] += words;
  TRACE("deferred", words);
}

/* Deterministic mode: words staged or unpacked by the driver's own code without
 * loom_timing_driver_copied cost word_s each, like the runtime's copies. They are charged
 * when the runtime next sees the host (a send, a receive, the end of the run), before the
 * event: every word a send carries was staged before it, and a received block is unpacked
 * before the next transfer starts (or before dma_free: every received word is taken to be
 * unpacked once). */
static void settle_driver_copies(int directions) {
  if (!g_cfg.deterministic) return; /* measured mode: the clock saw those copies */
  for (int d = 0; d < directions; d++) {
    int64_t debt = g_t.owed[d] - g_t.covered[d];
    if (debt > 0) {
      int64_t ps = scaled(debt * g_cfg.word_ps);
      g_t.host_copy += ps;
      g_t.host_now += ps;
      g_t.covered[d] = g_t.owed[d];
      TRACE(d ? "settle-out" : "settle-in", debt);
    }
  }
}

/* ---- timeline events ------------------------------------------------------ */
/* An empty runtime copy call, as the driver makes one: kept out of line so that the
 * boundary between two of them holds a return and a call, like the driver's. */
__attribute__((noinline)) static void empty_copy_call(void) {
  loom_timing_copy_begin_timed();
  loom_timing_copy_end_timed(0);
}

/* The instrumentation's cost in the measured mode, with the real hooks: empty copy calls
 * back to back, each copy interval (entry read to end read) and each host interval (end
 * read to the next entry read) measured raw (the deterministic mode reads no clock in the
 * hooks, and the subtracted costs are 0 meanwhile). Leaves the timeline cleared. */
static void calibrate_hooks(void) {
  const int deterministic = g_cfg.deterministic;
  int64_t copy[CALIBRATION_PAIRS], boundary[CALIBRATION_PAIRS];
  g_cfg.deterministic = 0, g_trace = 0, g_copy_ns = g_boundary_ns = 0;
  empty_copy_call();
  for (int i = 0; i < CALIBRATION_PAIRS; i++) {
    const int64_t end = g_t.mark_ns;
    empty_copy_call();
    boundary[i] = g_t.enter_ns - end;
    copy[i] = g_t.mark_ns - g_t.copy_ns;
  }
  g_copy_ns = median_of(copy), g_boundary_ns = median_of(boundary);
  g_cfg.deterministic = deterministic;
  memset(&g_t, 0, sizeof g_t);
}

void loom_timing_start_run(void) {
  memset(&g_t, 0, sizeof g_t);
  loom_timing_active = 0;
  /* LOOM_TIMING=off: no timeline and no clock reads (e.g. instruction-count runs) */
  const char *env = getenv("LOOM_TIMING");
  if (env && strcmp(env, "off") == 0) return;
  calibrate_clock(); /* also in the deterministic mode, which may be left mid-run */
  loom_timing_active = 1;
  calibrate_hooks();
  g_t.mark_ns = now_ns();
  g_trace = getenv("LOOM_TIMING_TRACE") != NULL;
}

static void wait_until(int64_t t) {
  if (t > g_t.host_now) {
    g_t.wait += t - g_t.host_now;
    g_t.host_now = t;
  }
}

void loom_timing_end_run(void) {
  if (!loom_timing_active) return;
  settle_driver_copies(2);
  wait_until(max64(max64(g_t.send_free, g_t.recv_free), g_t.accel_free));
  g_t.total = g_t.host_now;
  TRACE("end", 0);
  loom_timing_active = 0;
  g_t.depth = 0;
}

static int64_t transfer_ps(int64_t words) {
  const int64_t per_cycle = g_cfg.width_bits / 32;
  g_t.setup += g_cfg.latency_cycles * cycle_ps();
  return (g_cfg.latency_cycles + (words + per_cycle - 1) / per_cycle) * cycle_ps();
}

/* When the accelerator has an input bank free: with one bank, once it is idle (the stream
 * stalls while it computes); with n banks, once the n-th most recent compute has ended
 * (the n - 1 newer ones may still run: their data sit in the other banks). */
static int64_t input_bank_free(void) {
  const int64_t n = g_cfg.input_buffers;
  if (n <= 1 || g_t.computes < n) return n <= 1 ? g_t.accel_free : 0;
  return g_t.compute_end[(g_t.computes - n) % LOOM_MAX_INPUT_BUFFERS];
}

void loom_timing_send(int64_t words) {
  if (!loom_timing_active) return;
  g_t.owed[0] += words;
  settle_driver_copies(2);
  int64_t ready = max64(g_t.host_now, g_t.send_free);
  if (!g_cfg.recv_overlaps_send) ready = max64(ready, g_t.recv_free);
  int64_t start = max64(ready, input_bank_free());
  int64_t d = transfer_ps(words);
  g_t.send_free = g_t.last_send_end = start + d;
  g_t.send_stall += start - ready;
  g_t.send_dma += d;
  g_t.dma += d;
  g_t.sends++;
  g_t.words_sent += words;
  TRACE("send", words);
}

/* When the bank the current result accumulates in is free: with n output banks, once the
 * result n back has been received. A receive the host has not issued yet cannot delay the
 * compute (the timeline does not know it): the models hold one pending result, and drivers
 * issue its receive before the send that starts the next result. */
static int64_t output_bank_free(void) {
  const int64_t q = g_t.results - g_cfg.output_buffers;
  if (q < 0 || g_t.recvs <= q || g_t.recvs - q > LOOM_MAX_OUTPUT_BUFFERS) return 0;
  return g_t.recv_end[q % LOOM_MAX_OUTPUT_BUFFERS];
}

void loom_timing_compute(int64_t macs) {
  if (!loom_timing_active || macs <= 0) return;
  int64_t cycles = ceil_pos((double)macs / g_cfg.ops_per_cycle);
  const int64_t ready = max64(g_t.last_send_end, g_t.accel_free);
  int64_t start = max64(ready, output_bank_free());
  g_t.compute_stall += start - ready;
  int64_t d = cycles * cycle_ps();
  g_t.accel_free = start + d;
  g_t.compute_end[g_t.computes++ % LOOM_MAX_INPUT_BUFFERS] = g_t.accel_free;
  g_t.compute += d;
  g_t.macs += macs;
  TRACE("compute", macs);
}

void loom_timing_recv(int64_t words) {
  if (!loom_timing_active) return;
  settle_driver_copies(2);
  g_t.recv_unwaited = words;
  int64_t ready = max64(g_t.host_now, g_t.recv_free);
  if (!g_cfg.recv_overlaps_send) ready = max64(ready, g_t.send_free);
  int64_t start = max64(ready, g_t.accel_free);
  int64_t d = transfer_ps(words);
  g_t.recv_free = start + d;
  g_t.recv_end[g_t.recvs % LOOM_MAX_OUTPUT_BUFFERS] = g_t.recv_free;
  g_t.recv_stall += start - ready;
  g_t.recv_dma += d;
  g_t.dma += d;
  g_t.recvs++;
  g_t.words_received += words;
  TRACE("recv", words);
}

/* The accelerator's output became pending: the computes after this belong to the next result. */
void loom_timing_result(void) {
  if (loom_timing_active) g_t.results++;
}

void loom_timing_wait_send(void) {
  if (!loom_timing_active) return;
  wait_until(g_t.send_free);
  TRACE("wait-send", 0);
}

void loom_timing_wait_recv(void) {
  if (!loom_timing_active) return;
  wait_until(g_t.recv_free);
  g_t.owed[1] += g_t.recv_unwaited; /* the host unpacks them from now on */
  g_t.recv_unwaited = 0;
  TRACE("wait-recv", 0);
}

void loom_timing_get_report(loom_timing_report *out) {
  if (!out) return;
  const int64_t total = loom_timing_active ? g_t.host_now : g_t.total;
  out->total_s = total / PS_PER_S;
  out->host_copy_s = g_t.host_copy / PS_PER_S;
  out->host_other_s = g_t.host_other / PS_PER_S;
  out->dma_s = g_t.dma / PS_PER_S;
  out->compute_s = g_t.compute / PS_PER_S;
  out->wait_s = g_t.wait / PS_PER_S;
  out->sends = g_t.sends, out->recvs = g_t.recvs;
  out->words_sent = g_t.words_sent, out->words_received = g_t.words_received;
  out->macs = g_t.macs;
  out->send_dma_s = g_t.send_dma / PS_PER_S, out->recv_dma_s = g_t.recv_dma / PS_PER_S;
  out->send_stall_s = g_t.send_stall / PS_PER_S, out->recv_stall_s = g_t.recv_stall / PS_PER_S;
  out->setup_s = g_t.setup / PS_PER_S;
  out->compute_stall_s = g_t.compute_stall / PS_PER_S;
}
