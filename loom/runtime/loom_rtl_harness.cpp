// loom_model.h over a Verilated RTL accelerator: the words of each DMA send are
// pushed through the design's AXI-Stream slave port one per clock (waiting while
// s_axis_tready is low); words the design puts on its master port are collected
// as they appear (the S2MM side of the DMA engine) and handed to the host by
// produce. Every rising clock edge is counted (loom_model_cycles).
//
// The top module is Verilated with --prefix Vloom_rtl_top and must have the
// ports of docs/rtl.md: clk, rst, s_axis_{tdata,tvalid,tready,tlast},
// m_axis_{tdata,tvalid,tready,tlast}, status_error[7:0], status_word[31:0],
// status_busy, status_opcode[3:0], mac_count[63:0].
//
// Failing functions return a LOOM_ERR_* code of dma_runtime.h (the runtime
// reports it as the error code) with a message in err. Messages do not name the
// accelerator: the runtime prefixes the model's name (loom.runtime.rtl names it
// "<accelerator> (RTL)").
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <deque>

#include "Vloom_rtl_top.h"
#include "loom_model.h"
#include "verilated.h"

#define LOOM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// The LOOM_ERR_* codes of dma_runtime.h this harness reports.
enum { ERR_UNKNOWN_OPCODE = 1, ERR_TRANSFER_LENGTH = 2, ERR_STATE = 7, ERR_DEVICE = 8 };

// A design that neither takes a word nor settles within this many cycles is stuck.
const int64_t kStuckCycles = 1 << 20;
const int kResetCycles = 4;

struct RtlModel {
  VerilatedContext context;
  Vloom_rtl_top *top = nullptr;
  std::deque<uint32_t> output;  // words the design sent, not received by the host yet
  int64_t cycles = 0;           // rising edges after reset
  int64_t sends = 0;            // DMA sends seen, for messages
  int64_t send_words = 0;       // words of the current send (what the description's driver transfers)
  // Optional back-pressure for protocol tests: percent of cycles with
  // s_axis_tvalid / m_axis_tready low, from a xorshift generator.
  uint64_t rng = 0;
  int stall_percent = 0;
};

bool stall(RtlModel *m) {
  if (m->stall_percent <= 0) return false;
  m->rng ^= m->rng << 13, m->rng ^= m->rng >> 7, m->rng ^= m->rng << 17;
  return (int)(m->rng % 100) < m->stall_percent;
}

__attribute__((format(printf, 3, 4))) void fail(char *err, int err_len, const char *fmt, ...) {
  if (!err || err_len <= 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, (size_t)err_len, fmt, ap);
  va_end(ap);
}

// Combinational outputs for the current inputs, clock low.
void settle(RtlModel *m) {
  m->top->clk = 0;
  m->top->eval();
}

// One clock cycle: outputs are sampled before the rising edge (the handshakes
// that fire on it); returns whether the design took the input word.
bool cycle(RtlModel *m) {
  Vloom_rtl_top *t = m->top;
  settle(m);
  if (t->m_axis_tvalid && t->m_axis_tready) m->output.push_back(t->m_axis_tdata);
  const bool took = t->s_axis_tvalid && t->s_axis_tready;
  t->clk = 1;
  t->eval();
  m->cycles++;
  t->m_axis_tready = !stall(m);
  return took;
}

int check_status(RtlModel *m, char *err, int err_len, int64_t word) {
  const int code = m->top->status_error;
  if (!code) return 0;
  int rc = ERR_DEVICE;
  const long long send = (long long)m->sends, w = (long long)word;
  const long long detail = (long long)m->top->status_word;
  switch (code) {
  case 1:
    if (w > 0)  // inside a send, after whole blocks: the likely cause is a design tile smaller than the driver's
      fail(err, err_len,
           "unknown opcode %lld (send #%lld, word %lld); valid opcodes are 1..15; it came inside a transfer, so "
           "the words before it were read as complete operand blocks: if the design's tile parameter is smaller "
           "than the description's tile sizes, the rest of a block was read as the next instruction; declare it "
           "in the model's \"verilator\" entry as \"tile_sizes\": {\"PARAM\": [dims]} and loom refuses the "
           "mismatch before Verilator runs",
           detail, send, w);
    else
      fail(err, err_len, "unknown opcode %lld (send #%lld, word %lld); valid opcodes are 1..15",
           detail, send, w);
    rc = ERR_UNKNOWN_OPCODE;
    break;
  case 2:
    // the RTL fixes its block size (a parameter) and the driver's follows the description: name both
    // counts, and the key that compares them before Verilator runs
    fail(err, err_len,
         "tlast after %lld words of an operand block (send #%lld, word %lld): short transfer: the "
         "description's driver sent %lld words in send #%lld (one transfer) but the RTL expected more words "
         "in this operand block than the %lld it received; if the design's tile parameter differs from the "
         "description's tile sizes, declare it in the model's \"verilator\" entry as "
         "\"tile_sizes\": {\"PARAM\": [dims]} and loom refuses the mismatch before Verilator runs",
         detail, send, w, (long long)m->send_words, send, detail);
    rc = ERR_TRANSFER_LENGTH;
    break;
  case 3:
    fail(err, err_len, "compute before %s was loaded (send #%lld, word %lld)",
         (detail & 1) ? "B" : "A", send, w);
    rc = ERR_STATE;
    break;
  default:
    fail(err, err_len, "status_error %d, status_word %lld (send #%lld)", code, detail, send);
  }
  return rc;
}

}  // namespace

LOOM_EXPORT void *loom_model_create(const char * /*description_json: the design fixes its sizes*/, char *err,
                                    int err_len) {
  RtlModel *m = new (std::nothrow) RtlModel();
  if (!m) {
    if (err && err_len > 0) snprintf(err, (size_t)err_len, "cannot allocate the RTL model");
    return nullptr;
  }
  m->top = new (std::nothrow) Vloom_rtl_top(&m->context, "top");
  if (!m->top) {
    fail(err, err_len, "cannot allocate the Verilated design");
    delete m;
    return nullptr;
  }
  Vloom_rtl_top *t = m->top;
  t->s_axis_tvalid = 0, t->s_axis_tlast = 0, t->s_axis_tdata = 0, t->m_axis_tready = 1;
  t->rst = 1;
  for (int i = 0; i < kResetCycles; i++) cycle(m);
  t->rst = 0;
  m->cycles = 0;  // reset is not the accelerator's work
  m->output.clear();
  return m;
}

LOOM_EXPORT int loom_model_consume(void *state, const uint32_t *words, int64_t n, char *err,
                                   int err_len) {
  RtlModel *m = static_cast<RtlModel *>(state);
  Vloom_rtl_top *t = m->top;
  m->sends++;
  m->send_words = n;
  for (int64_t i = 0; i < n; i++) {
    int64_t waited = 0;
    while (stall(m)) {  // the DMA engine leaves a gap
      t->s_axis_tvalid = 0;
      cycle(m);
    }
    t->s_axis_tdata = words[i], t->s_axis_tvalid = 1, t->s_axis_tlast = i == n - 1;
    while (!cycle(m)) {
      if (int rc = check_status(m, err, err_len, i)) return rc;
      if (++waited > kStuckCycles) {
        fail(err, err_len, "s_axis_tready stayed low for %lld cycles at word %lld of send #%lld",
             (long long)waited, (long long)i, (long long)m->sends);
        return ERR_DEVICE;
      }
    }
    if (int rc = check_status(m, err, err_len, i)) return rc;
  }
  t->s_axis_tvalid = 0, t->s_axis_tlast = 0;
  // Run until the design waits for input again with nothing left to send
  // (computes and output streams that this send triggered are finished).
  for (int64_t waited = 0;; waited++) {
    settle(m);
    if (t->s_axis_tready && !t->m_axis_tvalid) break;
    if (waited > kStuckCycles) {
      fail(err, err_len, "the design did not return to idle within %lld cycles after send #%lld",
           (long long)waited, (long long)m->sends);
      return ERR_DEVICE;
    }
    cycle(m);
    if (int rc = check_status(m, err, err_len, n - 1)) return rc;
  }
  return 0;
}

LOOM_EXPORT int64_t loom_model_pending(void *state) {
  return (int64_t)static_cast<RtlModel *>(state)->output.size();
}

LOOM_EXPORT int loom_model_produce(void *state, uint32_t *dst, int64_t n, char *err, int err_len) {
  RtlModel *m = static_cast<RtlModel *>(state);
  if (n < 0 || (size_t)n > m->output.size()) {
    fail(err, err_len, "produce of %lld words but %lld are ready", (long long)n,
         (long long)m->output.size());
    return ERR_TRANSFER_LENGTH;
  }
  for (int64_t i = 0; i < n; i++) {
    dst[i] = m->output.front();
    m->output.pop_front();
  }
  return 0;
}

LOOM_EXPORT void loom_model_destroy(void *state) {
  RtlModel *m = static_cast<RtlModel *>(state);
  if (!m) return;
  if (m->top) {
    m->top->final();
    delete m->top;
  }
  delete m;
}

LOOM_EXPORT int64_t loom_model_macs(void *state) {
  return (int64_t)static_cast<RtlModel *>(state)->top->mac_count;
}

LOOM_EXPORT int64_t loom_model_cycles(void *state) {
  return static_cast<RtlModel *>(state)->cycles;
}

// Optional in loom_model.h: an instruction half-read (its operand blocks not all
// received) is an error before a receive and at dma_free.
LOOM_EXPORT int loom_model_idle(void *state, char *err, int err_len) {
  RtlModel *m = static_cast<RtlModel *>(state);
  settle(m);
  if (!m->top->status_busy) return 0;
  fail(err, err_len, "opcode %d is half-read: the design still waits for its operand words "
       "(after send #%lld)", (int)m->top->status_opcode, (long long)m->sends);
  return ERR_TRANSFER_LENGTH;
}

// Not part of loom_model.h: back-pressure for protocol tests (0 = none).
LOOM_EXPORT void loom_rtl_set_stalls(void *state, int percent, uint64_t seed) {
  RtlModel *m = static_cast<RtlModel *>(state);
  m->stall_percent = percent;
  m->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}
