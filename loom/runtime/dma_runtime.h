/* loom DMA runtime: the C ABI that generated host drivers call.
 *
 * One runtime instance per process (like the AXI4MLIR library): dma_init()
 * sets up a backend and its two staging buffers, the copy routines pack
 * strided memref views into the input staging buffer / unpack the output
 * staging buffer, and dma_start_send / dma_start_recv move words between the
 * staging buffers and the accelerator.
 *
 * Units: every length, size and offset below counts 32-bit WORDS, never bytes.
 *
 * Errors never hang or crash: the first error is recorded (code + message,
 * naming the opcode and word index for protocol errors) and every later
 * data-moving call becomes a no-op returning an error until
 * loom_dma_clear_error() or the next dma_init(). Calls returning an offset
 * return -1 on error. A generated driver checks loom_dma_error_code() (or
 * loom_dma_last_error()) and returns that code.
 *
 * Backends (choose before dma_init with loom_dma_use_backend):
 *   LOOM_BACKEND_SIM  in-process simulator: malloc'd staging buffers, the
 *                     words go to the accelerator model chosen with
 *                     loom_sim_use_model().
 *   LOOM_BACKEND_AXI  Xilinx AXI DMA (simple mode) on a Linux board, via
 *                     /dev/mem, or via any loom_axi_platform (a fake register
 *                     file in tests) set with loom_dma_use_axi_platform().
 * Tracing (loom_dma_set_tracing(1)) wraps either backend and records every
 * transaction.
 *
 * Accelerator data layouts (all row-major, one element per word):
 *   MatMul v1..v4: a tile of A is M x K, B is K x N, C is returned M x N.
 *   v1 (no opcodes):      A words, B words -> C = A.B is sent back.
 *   v2 opcode bits:       0 read A, 1 read B, 2 compute C = A.B and send C.
 *   v3 opcode bits:       0 read A, 1 read B, 2 C += A.B, 3 send C then clear.
 *   v4: every instruction is two words: the v3 opcode, then an extension word
 *       with tile M in bits 9..0, N in 19..10, K in 29..20 (each a multiple of
 *       16, 16..1008); M*K, K*N, M*N <= 4096 words (per-operand buffers).
 *   Within one opcode the actions run in bit order: read A, read B, compute,
 *   send. An operand block must lie inside one DMA transfer (a transfer that
 *   ends inside a block is a short transfer).
 *   Conv2D (output stationary), opcode bits:
 *     4 set channels: the next word is iC;  5 set filter size: the next word
 *     is fHW (square fHW x fHW filters); these parameter words follow the
 *     opcode word (iC first when both bits are set);
 *     0 read filters: iC*fHW*fHW words, layout [iC][fH][fW] (one output
 *       channel's filter slice);
 *     1 read inputs: iC*fHW*fHW words, the input window, same layout;
 *     2 compute: acc = sum(filter * window);
 *     6 save output: append acc to the output plane buffer;
 *     3 send outputs: send every saved value (oH*oW words for a full plane,
 *       in save order = row-major over (oh, ow)) and clear the buffer.
 *     Order within one opcode: parameters, read filters, read inputs,
 *     compute, save, send. Host flow: 32,fHW; 16,iC; per output channel
 *     1 + filter slice; per output pixel 70 + window; then 8 and receive.
 */
#ifndef LOOM_DMA_RUNTIME_H
#define LOOM_DMA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

/* The public API (every function below) is exported from the runtime shared
 * library, which is built with -fvisibility=hidden: internal helpers stay
 * private to it. */
#if defined(__GNUC__)
#define LOOM_API __attribute__((visibility("default")))
#else
#define LOOM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- error codes ------------------------------------------------------- */
enum loom_dma_error {
  LOOM_OK = 0,
  LOOM_ERR_UNKNOWN_OPCODE = 1,   /* opcode word with bits the model lacks */
  LOOM_ERR_TRANSFER_LENGTH = 2,  /* more/fewer words than the opcode implies */
  LOOM_ERR_STAGING_OVERFLOW = 3, /* offset/length outside a staging buffer */
  LOOM_ERR_ACCEL_OVERFLOW = 4,   /* accelerator buffer capacity exceeded */
  LOOM_ERR_NOTHING_TO_RECV = 5,  /* receive while the accelerator has no output */
  LOOM_ERR_TILE_CONSTRAINT = 6,  /* v4 extension word / conv parameter invalid */
  LOOM_ERR_STATE = 7,            /* not initialised, compute before load, ... */
  LOOM_ERR_DEVICE = 8,           /* DMA engine error bits, timeout, mmap failure */
  LOOM_ERR_ARGUMENT = 9,         /* bad rank, bad backend/model id, ... */
  LOOM_ERR_MODEL = 10            /* a model failed with a code of its own */
};

/* Message of the first error since init/clear ("" when none). */
LOOM_API const char *loom_dma_last_error(void);
LOOM_API int loom_dma_error_code(void);
LOOM_API void loom_dma_clear_error(void);

/* ---- backend and model selection -------------------------------------- */
enum loom_dma_backend_id { LOOM_BACKEND_SIM = 0, LOOM_BACKEND_AXI = 1 };
enum loom_model_id {
  LOOM_MODEL_NONE = 0,
  LOOM_MODEL_MATMUL_V1 = 1,
  LOOM_MODEL_MATMUL_V2 = 2,
  LOOM_MODEL_MATMUL_V3 = 3,
  LOOM_MODEL_MATMUL_V4 = 4,
  LOOM_MODEL_CONV2D = 5
};
enum loom_dtype { LOOM_DTYPE_I32 = 0, LOOM_DTYPE_F32 = 1 };

LOOM_API int loom_dma_use_backend(int backend_id);
/* Simulator: choose the accelerator model. size = 4, 8 or 16 for MatMul
 * v1..v3 (ignored by v4 and conv). May be called before or after dma_init;
 * after init it replaces (resets) the current model. LOOM_MODEL_NONE
 * deselects (sends then fail with an error). */
LOOM_API int loom_sim_use_model(int model_id, int size, int dtype);
/* Model id from a name: "v1".."v4", "matmul_v1".., "conv", "conv2d"; -1 if unknown. */
LOOM_API int loom_model_id_from_name(const char *name);

/* The functions of a behaviour model (the loom_model.h ABI, see there), as
 * pointers: a model compiled into its own shared object, a prebuilt one (RTL
 * simulation) or Python callbacks all run through this one table; the shipped
 * models too (loom_sim_use_model fills it with their compiled-in copies).
 * macs, cycles and idle may be NULL. */
typedef struct loom_model_vtable {
  void *(*create)(const char *config_json, char *err, int err_len);
  int (*consume)(void *state, const uint32_t *words, int64_t n, char *err, int err_len);
  int64_t (*pending)(void *state);
  int (*produce)(void *state, uint32_t *dst, int64_t n, char *err, int err_len);
  void (*destroy)(void *state);
  int64_t (*macs)(void *state);
  int64_t (*cycles)(void *state);
  int (*idle)(void *state, char *err, int err_len);
} loom_model_vtable;

/* Simulator: choose the model by its function table (copied), the name its
 * errors carry and the configuration JSON its create receives (copied).
 * Like loom_sim_use_model: before or after dma_init (after: the model is
 * recreated). NULL vtable deselects. */
LOOM_API int loom_sim_use_model_vtable(const loom_model_vtable *vtable, const char *name,
                                       const char *config_json);
/* Simulator: whether models created from now on (at each dma_init) compute
 * values (1, the default) or only move words (0: the configuration JSON gets
 * "arithmetic":0 first, see loom_model.h). For timing host code alone: the
 * same words and transactions flow, the model's multiply-accumulates are
 * skipped, so its results are meaningless. Returns the previous setting. */
LOOM_API int loom_sim_set_arithmetic(int on);
/* Accelerator cycles the current model reports (loom_model_cycles), -1 when
 * it reports none or no model runs. */
LOOM_API int64_t loom_sim_model_cycles(void);

/* Several accelerators behind one driver (each op of a function on its own
 * device): the simulator runs one backend and one selected model at a time,
 * and a driver opens one DMA session per offloaded op, with that device's
 * dma_address. The hook lets the host pick, at each dma_init, the model and
 * timing constants of the device at that address, and read the device's
 * counters at each dma_free. event: LOOM_DEVICE_OPEN at the start of
 * dma_init (before its backend and model are created), LOOM_DEVICE_CLOSED at
 * the end of dma_free (the model destroyed, the run's timing report final).
 * LOOM_DEVICE_CLOSED only when a session was open. The struct is copied; NULL
 * removes the hook (the default: nothing called). */
enum loom_device_event { LOOM_DEVICE_OPEN = 0, LOOM_DEVICE_CLOSED = 1 };
typedef struct loom_device_hook {
  void *ctx;
  void (*event)(void *ctx, uint64_t dma_address, int event);
} loom_device_hook;
LOOM_API void loom_dma_set_device_hook(const loom_device_hook *hook);

/* Register access used by the AXI backend; the default talks to /dev/mem. */
typedef struct loom_axi_platform {
  void *ctx;
  /* Attach to the DMA engine whose registers are at physical dma_address;
   * returns 0, or an error code after recording the error. */
  int (*open)(void *ctx, uint64_t dma_address);
  void (*close)(void *ctx);
  uint32_t (*reg_read)(void *ctx, uint32_t offset);
  void (*reg_write)(void *ctx, uint32_t offset, uint32_t value);
  /* Map `bytes` of physical memory at `phys` (staging buffers); NULL on failure. */
  void *(*map)(void *ctx, uint64_t phys, size_t bytes);
  void (*unmap)(void *ctx, void *ptr, size_t bytes);
} loom_axi_platform;

/* NULL restores the /dev/mem platform. The struct is copied. */
LOOM_API void loom_dma_use_axi_platform(const loom_axi_platform *platform);
/* Max status polls before a wait reports a timeout (default 100000000). */
LOOM_API void loom_axi_set_poll_limit(uint64_t polls);

/* AXI DMA register map (byte offsets) and bits, from Xilinx PG021. */
#define LOOM_AXI_MM2S_CR 0x00u
#define LOOM_AXI_MM2S_SR 0x04u
#define LOOM_AXI_MM2S_SA 0x18u
#define LOOM_AXI_MM2S_LENGTH 0x28u
#define LOOM_AXI_S2MM_CR 0x30u
#define LOOM_AXI_S2MM_SR 0x34u
#define LOOM_AXI_S2MM_DA 0x48u
#define LOOM_AXI_S2MM_LENGTH 0x58u
#define LOOM_AXI_CR_RUN 0x1u
#define LOOM_AXI_CR_RESET 0x4u
#define LOOM_AXI_CR_IOC_IRQ_EN 0x1000u
#define LOOM_AXI_CR_ERR_IRQ_EN 0x4000u
#define LOOM_AXI_SR_HALTED 0x1u
#define LOOM_AXI_SR_IDLE 0x2u
#define LOOM_AXI_SR_ERR_MASK 0x70u /* DMAIntErr | DMASlvErr | DMADecErr */

/* ---- the DMA runtime (paper API) -------------------------------------- */
/* Sizes in words (0 = 65536). Returns 0 or an error code. */
LOOM_API int dma_init(uint64_t dma_address, uint64_t in_addr, int64_t in_size,
             uint64_t out_addr, int64_t out_size);
/* Reports (and returns) an error if the model holds a half-read instruction. */
LOOM_API int dma_free(void);

/* Staging buffers (words) for drivers that pack data themselves. */
LOOM_API uint32_t *dma_in_buffer(void);
LOOM_API uint32_t *dma_out_buffer(void);
LOOM_API int64_t dma_in_size(void);
LOOM_API int64_t dma_out_size(void);
/* The current staging windows as rank-1 memref descriptors ({ptr, ptr, 0,
 * {words}, {1}}, MLIR layout, written to *result): what drivers that stage words
 * themselves (the dma-inline-copies pass) index. The input window is the half
 * being filled when double buffering; the size is 0 without a backend or while
 * an error is pending. */
LOOM_API void loom_dma_in_view_i32(void *result);
LOOM_API void loom_dma_in_view_f32(void *result);
LOOM_API void loom_dma_out_view_i32(void *result);
LOOM_API void loom_dma_out_view_f32(void *result);
/* Double buffering: the whole input staging buffer as such a descriptor (both halves; size 0
 * without a backend or while an error is pending), and the word where the half being filled
 * starts (0 or in_size / 2; it changes with every dma_start_send). */
LOOM_API void loom_dma_in_buffer_view_i32(void *result);
LOOM_API void loom_dma_in_buffer_view_f32(void *result);
LOOM_API int loom_dma_in_half_base(void);
/* The word of the output staging buffer where the last receive started landing (0, or
 * out_size / 2 for a late receive in the second half): a driver that adds a late receive's
 * tile itself reads it there once the receive after it has started. */
LOOM_API int loom_dma_out_recv_base(void);

/* Memref descriptors have MLIR's layout for any rank R:
 *   { T *allocated; T *aligned; intptr_t offset; intptr_t sizes[R]; intptr_t strides[R]; }
 * rank is 1..4 (element (i0..iR-1) is aligned[offset + sum(i_d*strides_d)]).
 * Each returns the offset just past the copied words, or -1 on error. */
LOOM_API int copy_to_inbuffer_f32(int64_t rank, void *descriptor, int offset);
LOOM_API int copy_to_inbuffer_i32(int64_t rank, void *descriptor, int offset);
LOOM_API int copy_from_outbuffer_f32(int64_t rank, void *descriptor, int offset);
LOOM_API int copy_from_outbuffer_i32(int64_t rank, void *descriptor, int offset);
/* C += received tile (recv mode "accumulate"); i32 addition wraps. */
LOOM_API int copy_from_outbuffer_acc_f32(int64_t rank, void *descriptor, int offset);
LOOM_API int copy_from_outbuffer_acc_i32(int64_t rank, void *descriptor, int offset);
/* Padded tiles (padded_copy.c): the view goes into the corner of a block of
 * shape (p0..p[rank-1]) (a pad <= 0 = the view's own size); sends zero-fill
 * the rest of the block, receives take back only the view's corner. Return the
 * offset just past the whole block. Each call also adds the block's words to a
 * tally keyed by the memref's data pointer (per-operand transfer counts). */
LOOM_API int copy_to_inbuffer_padded_i32(int64_t rank, void *descriptor, int offset, int64_t p0, int64_t p1,
                                int64_t p2, int64_t p3);
LOOM_API int copy_to_inbuffer_padded_f32(int64_t rank, void *descriptor, int offset, int64_t p0, int64_t p1,
                                int64_t p2, int64_t p3);
LOOM_API int copy_from_outbuffer_padded_i32(int64_t rank, void *descriptor, int offset, int64_t p0, int64_t p1,
                                   int64_t p2, int64_t p3);
LOOM_API int copy_from_outbuffer_padded_f32(int64_t rank, void *descriptor, int offset, int64_t p0, int64_t p1,
                                   int64_t p2, int64_t p3);
LOOM_API int copy_from_outbuffer_padded_acc_i32(int64_t rank, void *descriptor, int offset, int64_t p0,
                                       int64_t p1, int64_t p2, int64_t p3);
LOOM_API int copy_from_outbuffer_padded_acc_f32(int64_t rank, void *descriptor, int offset, int64_t p0,
                                       int64_t p1, int64_t p2, int64_t p3);
/* Words moved by padded copies of the memref whose data starts at `base`
 * (direction LOOM_TRACE_SEND / LOOM_TRACE_RECV), and a reset. */
LOOM_API int64_t loom_operand_tally(const void *base, int direction);
LOOM_API void loom_operand_tally_reset(void);
/* Adds words to the tally of the memref (rank, descriptor) (its data pointer):
 * what a driver that copies tiles inline (dma-inline-copies) moved itself. */
LOOM_API void loom_operand_tally_add(int64_t rank, void *descriptor, int direction, int64_t words);
/* The memcpy copy specialisation of the padded copies (paper Fig. 12): with
 * it (default), rows with unit stride move with one memcpy each and rank-2
 * tiles take a fast path; without it every word is moved one by one. The
 * environment variable LOOM_COPY_MEMCPY=off|on (read at dma_init) overrides
 * the setting for a run. Returns 0. */
LOOM_API int loom_copy_use_memcpy(int enabled);
LOOM_API int loom_copy_memcpy_enabled(void);
/* One literal word (opcode, send_dim / send_idx value). Returns offset + 1. */
LOOM_API int write_literal(uint32_t word, int offset);

/* Send in_buffer[offset, offset+length) / receive length words into
 * out_buffer[offset, ...). Return 0 or an error code. */
LOOM_API int dma_start_send(int length, int offset);
LOOM_API int dma_wait_send(void);
LOOM_API int dma_start_recv(int length, int offset);
LOOM_API int dma_wait_recv(void);
/* 1 = transfer done, 0 = still running, negative = -(error code). */
LOOM_API int dma_check_send(void);
LOOM_API int dma_check_recv(void);

/* ---- tracing ----------------------------------------------------------- */
enum loom_trace_direction { LOOM_TRACE_SEND = 0, LOOM_TRACE_RECV = 1 };
typedef struct loom_trace_counters {
  int64_t sends, recvs;             /* transactions */
  int64_t words_sent, words_received;
  int64_t bytes_sent, bytes_received; /* words x operand bytes (default 4) */
} loom_trace_counters;

/* Wraps the backend (now, if initialised, else at dma_init). 0 unwraps. */
LOOM_API void loom_dma_set_tracing(int enabled);
/* Bytes each word stands for in the byte counters (e.g. 1 for int8 data). */
LOOM_API void loom_trace_set_operand_bytes(int bytes);
LOOM_API void loom_trace_get_counters(loom_trace_counters *out);
LOOM_API void loom_trace_reset(void);
LOOM_API int64_t loom_trace_record_count(void);
/* Record i: direction, length in words, first word (the opcode for sends;
 * for receives the first word received). Returns 0, or -1 if out of range.
 * At most 1<<20 records are kept; counters always count everything. */
LOOM_API int loom_trace_record(int64_t index, int *direction, int *length,
                      uint32_t *first_word);

/* ---- double buffering -------------------------------------------------- */
/* After dma_init: split the input staging buffer in two halves. Offsets of
 * write_literal / copy_to_inbuffer* / dma_start_send are then relative to the
 * current half (capacity in_size / 2), and every dma_start_send switches to
 * the other half, so the host can fill the next transaction while the last
 * one is in flight. The driver must dma_wait_send() before the next
 * dma_start_send (one MM2S channel). dma_init switches it off again. */
LOOM_API int loom_dma_set_double_buffering(int enabled);
/* Deferred receives: like copy_from_outbuffer_padded[_acc]_<t>, but the copy
 * out of the output staging buffer only happens at the next
 * loom_dma_drain_recvs() (also run by dma_free and before any send that reads
 * the same memref), so it can overlap the next transaction. The descriptor is
 * copied; the memref's data must stay alive until the drain. */
LOOM_API int copy_from_outbuffer_deferred_i32(int64_t rank, void *descriptor, int offset, int64_t p0,
                                     int64_t p1, int64_t p2, int64_t p3);
LOOM_API int copy_from_outbuffer_deferred_f32(int64_t rank, void *descriptor, int offset, int64_t p0,
                                     int64_t p1, int64_t p2, int64_t p3);
LOOM_API int copy_from_outbuffer_deferred_acc_i32(int64_t rank, void *descriptor, int offset, int64_t p0,
                                         int64_t p1, int64_t p2, int64_t p3);
LOOM_API int copy_from_outbuffer_deferred_acc_f32(int64_t rank, void *descriptor, int offset, int64_t p0,
                                         int64_t p1, int64_t p2, int64_t p3);
/* Starts a late receive, waits for the receive in flight and runs the deferred copies (in call
 * order); 0 or an error code. */
LOOM_API int loom_dma_drain_recvs(void);
/* A receive started after the next dma_start_send has started its send (or at the next
 * dma_start_recv, dma_wait_recv, dma_check_recv, loom_dma_start_recv_late, drain or dma_free):
 * the host issues send i + 1 before it waits for receive i - 1, so a send, a compute and a
 * receive are in flight at once. Starting it first waits for the receive in flight and runs
 * the deferred copies recorded before this request. Checks the range now; 0 or an error code. */
LOOM_API int loom_dma_start_recv_late(int length, int offset);
/* The request slot loom_dma_start_recv_late fills, as int32 words (a rank-1 memref<5xi32>
 * descriptor written to *result): a driver that holds no deferred copy in the runtime (it adds its
 * tiles itself) may request without the call, as a hand-written driver notes its next receive in
 * its own struct: when QUEUED is 0 and 0 <= offset, offset + length <= ROOM, it writes LENGTH,
 * OFFSET, COPIES = 0, then QUEUED = 1; the runtime starts it where it would start a requested one
 * (the next dma_start_send, ...). Otherwise it calls loom_dma_start_recv_late (which starts the one
 * queued, or reports the error). ROOM is the output staging size, 0 without a backend or while an
 * error is pending; drivers only read it. */
enum {
  LOOM_RECV_REQUEST_QUEUED, LOOM_RECV_REQUEST_LENGTH, LOOM_RECV_REQUEST_OFFSET,
  LOOM_RECV_REQUEST_COPIES, LOOM_RECV_REQUEST_ROOM, LOOM_RECV_REQUEST_WORDS
};
LOOM_API void loom_dma_recv_request_view_i32(void *result);
/* Starts the queued late receive now, if there is one (after waiting for the one in flight and
 * running the copies recorded before it), without waiting for it: a driver that adds the tile
 * before it itself does so while it streams. 0 or an error code. */
LOOM_API int loom_dma_start_queued_recv(void);

/* ---- timing model (virtual timeline, timing.c) -------------------------- */
/* Every run between dma_init and dma_free is also played on a virtual
 * timeline (picosecond integers, so figures are exact):
 *  - host time advances by the host time between runtime calls ("other")
 *    and inside the copy routines ("copy"): measured with a monotonic clock,
 *    less the instrumentation's own cost (loom_timing_boundary_s per host
 *    interval, loom_timing_clock_read_s per copy),
 *    or, in the deterministic mode, call_s per runtime call and word_s per
 *    word copied (literals count one word);
 *  - a send starts at max(issue, MM2S free, accelerator idle) (with n input
 *    buffers: the end of the n-th most recent compute) and occupies
 *    the MM2S channel for latency + ceil(words / (width / 32)) cycles;
 *  - each compute an opcode triggers takes ceil(MACs / ops_per_cycle)
 *    cycles, starting when its send has arrived, the accelerator is idle and
 *    its result has a free output bank (loom_timing_set_output_buffers);
 *  - a receive starts at max(issue, S2MM free, accelerator idle) and takes
 *    latency + ceil(words / (width / 32)) cycles;
 *  - dma_wait_* / dma_check_* advance host time to the transfer's end and
 *    dma_free to the end of all work: that is "waiting".
 * The environment variable LOOM_TIMING=off (read at dma_init) disables the
 * timeline and its clock reads (instruction-count runs under valgrind).
 * total = host_copy + host_other + wait; dma and compute are busy times
 * (they overlap with host time when transfers are non-blocking). */
typedef struct loom_timing_report {
  double total_s, host_copy_s, host_other_s, dma_s, compute_s, wait_s;
  int64_t sends, recvs, words_sent, words_received, macs;
  /* dma_s split by channel; stalls: a send issued on a free channel that waited for a
   * free input buffer, a receive that waited for the accelerator's compute;
   * setup_s: the per-transaction DMA set-up part of dma_s */
  double send_dma_s, recv_dma_s, send_stall_s, recv_stall_s, setup_s;
  /* computes that waited for a free output bank (the result output_buffers back received) */
  double compute_stall_s;
} loom_timing_report;

/* clock_hz > 0, ops_per_cycle > 0, width_bits a positive multiple of 32,
 * latency_cycles >= 0. Returns 0 or LOOM_ERR_ARGUMENT. Defaults: 200 MHz,
 * 112 ops/cycle, 32 bits, 100 cycles. Kept across dma_init. */
LOOM_API int loom_timing_configure(double clock_hz, double ops_per_cycle, int width_bits,
                          int latency_cycles);
/* recv_overlaps_send = 1 (default): the MM2S and S2MM channels run at the same
 * time (a receive may overlap the next send); 0: one transfer at a time.
 * host_scale > 0 (default 1) multiplies every host interval, measured or
 * deterministic: 10 models a host CPU ten times slower than this one.
 * Returns 0 or LOOM_ERR_ARGUMENT. Kept across dma_init. */
LOOM_API int loom_timing_configure_system(int recv_overlaps_send, double host_scale);
/* The accelerator's input banks (default 1). 1: a send starts only when the
 * accelerator is idle (it does not read its stream while computing); n: a
 * send may stream while up to n - 1 computes of earlier sends still run (it
 * waits for the end of the n-th most recent compute). 1 to
 * LOOM_MAX_INPUT_BUFFERS; returns 0 or LOOM_ERR_ARGUMENT. Kept across dma_init. */
#define LOOM_MAX_INPUT_BUFFERS 8
LOOM_API int loom_timing_set_input_buffers(int input_buffers);
/* The accelerator's result banks (default 1). 1: the computes of a result start only once the
 * previous result has been received (its bank drained); n: once the result n back has been
 * received, so the next results compute while earlier ones drain. A result is the output a
 * model makes pending (one receive takes it). 1 to LOOM_MAX_OUTPUT_BUFFERS; returns 0 or
 * LOOM_ERR_ARGUMENT. Kept across dma_init. */
#define LOOM_MAX_OUTPUT_BUFFERS 8
LOOM_API int loom_timing_set_output_buffers(int output_buffers);
/* deterministic = 1: host time is call_s per call + word_s per word copied;
 * 0: measured with CLOCK_MONOTONIC. Kept across dma_init. */
LOOM_API int loom_timing_set_host_model(int deterministic, double call_s, double word_s);
/* A driver that stages or unpacks words with its own code (not the copy
 * routines) reports them right after the copy: direction LOOM_TRACE_SEND
 * (staged into the input buffer) or LOOM_TRACE_RECV (taken out of the output
 * buffer). Deterministic mode: word_s per word, charged at that point of the
 * timeline (e.g. before the dma_wait_send a double-buffered driver overlaps
 * it with); words no one reports are charged at the next send, receive or
 * dma_free. Measured mode, or no run on the timeline: nothing (the clock
 * sees the copy). */
LOOM_API void loom_timing_driver_copied(int direction, int64_t words);
/* Words of a receive the driver records now and unpacks itself later, after
 * another transfer started (a late receive added inline): they are not
 * charged at that transfer, only where loom_timing_driver_copied reports
 * them. Deterministic mode only, as above. */
LOOM_API void loom_timing_driver_deferred(int direction, int64_t words);
/* The report of the current run, or of the last run after dma_free. */
LOOM_API void loom_timing_get_report(loom_timing_report *out);
/* The measured mode's instrumentation cost, calibrated at dma_init, 0 before any
 * calibration: seconds one clock read adds to a measured copy (median of
 * back-to-back reads), and seconds an empty host interval between two runtime
 * calls measures (median of the leave and enter hooks run back to back). */
LOOM_API double loom_timing_clock_read_s(void);
LOOM_API double loom_timing_boundary_s(void);
LOOM_API double loom_timing_empty_copy_s(void);

/* ---- test support: a fake AXI DMA register file ----------------------- */
/* A platform whose registers are plain memory and whose "device" reacts to
 * length writes by moving words between fake physical memory and the
 * accelerator model chosen with loom_sim_use_model (idle bits set, error
 * bits on model errors). Every register access is logged. */
LOOM_API const loom_axi_platform *loom_fake_axi_platform(void);
LOOM_API void loom_fake_axi_reset(void);
LOOM_API int64_t loom_fake_axi_log_count(void);
/* Entry i: is_write (1/0), register offset, value. 0, or -1 if out of range. */
LOOM_API int loom_fake_axi_log_entry(int64_t index, int *is_write, uint32_t *offset,
                            uint32_t *value);

#ifdef __cplusplus
}
#endif
#endif
