/* Padded tile copies and per-buffer transfer tallies (used by generated
 * accelerator drivers, see loom/accel/driver.py).
 *
 * A partial tile (problem size not a multiple of the accelerator tile) is
 * sent as a full tile: the view is written into the corner of a zero-filled
 * block of the padded shape, so the accelerator computes on zeros outside the
 * valid part; on receive only the valid corner of the padded block is taken
 * back. Padded dims p0..p3 give the block shape for the first `rank` dims; a
 * value <= 0 means "no padding on this dim" (the view's own size).
 *
 * Tallies: every padded copy adds the words it moved to a small table keyed
 * by the memref's `allocated` pointer, so a test can read how many words of
 * each operand (A, B, C, ...) crossed the DMA, independently of the driver.
 *
 * Paths (the copy specialisation, paper Fig. 12): a rank-2 view with unit
 * inner stride (the common generated tile) takes rows_fast_path (one memcpy,
 * or two AVX moves for 8/16-word rows, per row; a tight accumulate loop), an
 * unpadded rank-3/4 view takes nd_fast_path (contiguous dims merged, short
 * rows copied inline); everything else, and every error report, goes through
 * the general rank-4 path. loom_copy_use_memcpy(0) / LOOM_COPY_MEMCPY=off
 * turns the specialisation off: every word is then moved one by one.
 */
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <stdint.h>
#define LOOM_HAVE_AVX_ROWS 1
/* 8 words as one unaligned 256-bit vector (GCC vector extension: under target("avx") a load/store is one
 * vmovdqu, as with the intrinsics, without parsing <immintrin.h>, which was a third of this file's
 * compile time) */
typedef uint32_t loom_row8 __attribute__((vector_size(32), aligned(4), may_alias));
#endif

#include "runtime_internal.h"

int loom_staging_in(const char *who, int64_t words, int offset, uint32_t **dst);
int loom_staging_out(const char *who, int64_t words, int offset, const uint32_t **src);

enum { PAD_PACK, PAD_UNPACK, PAD_ACC_I32, PAD_ACC_F32 };
#define FAST_PATH_DECLINED (-2)

#define LOOM_TALLY_SLOTS 32
static struct {
  const void *base;
  int64_t sent, received;
} g_tally[LOOM_TALLY_SLOTS];

/* slot of the last update per direction: consecutive sends (receives) often
 * move the same operand */
static int g_tally_last[2];

static void tally(const void *base, int direction, int64_t words) {
  const int dir = direction != LOOM_TRACE_SEND;
  int i = g_tally_last[dir];
  if (g_tally[i].base != base) { /* find the memref's slot, or the first free one */
    for (i = 0; i < LOOM_TALLY_SLOTS && g_tally[i].base && g_tally[i].base != base; i++) {}
    if (i == LOOM_TALLY_SLOTS) return; /* table full: not tallied */
    g_tally[i].base = base;
    g_tally_last[dir] = i;
  }
  if (dir) g_tally[i].received += words;
  else g_tally[i].sent += words;
}

void loom_operand_tally_reset(void) {
  memset(g_tally, 0, sizeof g_tally);
  g_tally_last[0] = g_tally_last[1] = 0;
}

void loom_operand_tally_add(int64_t rank, void *descriptor, int direction, int64_t words) {
  (void)rank; /* every rank's descriptor starts with (allocated, aligned) */
  if (descriptor && words > 0)
    tally(((const void *const *)descriptor)[1], direction, words);
}

int64_t loom_operand_tally(const void *base, int direction) {
  for (int i = 0; i < LOOM_TALLY_SLOTS && g_tally[i].base; i++)
    if (g_tally[i].base == base)
      return direction == LOOM_TRACE_SEND ? g_tally[i].sent : g_tally[i].received;
  return 0;
}

typedef struct {
  void *allocated;
  void *aligned;
  intptr_t offset;
  intptr_t sizes_then_strides[];
} pad_descriptor;

/* The `words` staging words at `offset` a copy of `mode` writes (pack) or
 * reads (the unpack modes): the current window when it holds them, else the
 * checked path, which reports the error (NULL). */
static inline uint32_t *staging_words(const char *who, int mode, int64_t words, int offset) {
  if (mode == PAD_PACK) {
    if (offset >= 0 && offset + words <= loom_g_staging.in_words) return loom_g_staging.in + offset;
    uint32_t *dst;
    return loom_staging_in(who, words, offset, &dst) ? NULL : dst;
  }
  if (offset >= 0 && offset + words <= loom_g_staging.out_words) return loom_g_staging.out + offset;
  const uint32_t *src;
  return loom_staging_out(who, words, offset, &src) ? NULL : (uint32_t *)src; /* only read */
}

/* Rank-4 normalised view + padded block shape. Returns block words or -1. */
static int64_t pad_view(const char *who, int64_t rank, void *descriptor, const int64_t pads[4],
                        char **base, intptr_t sizes[4], intptr_t strides[4], intptr_t block[4]) {
  if (rank < 1 || rank > 4) {
    loom_error(LOOM_ERR_ARGUMENT, "%s: memref rank %lld (expected 1..4)", who, (long long)rank);
    return -1;
  }
  if (!descriptor) {
    loom_error(LOOM_ERR_ARGUMENT, "%s: NULL memref descriptor", who);
    return -1;
  }
  const pad_descriptor *d = descriptor;
  int lead = 4 - (int)rank;
  int64_t words = 1;
  for (int i = 0; i < 4; i++) {
    int k = i - lead;
    sizes[i] = i < lead ? 1 : d->sizes_then_strides[k];
    strides[i] = i < lead ? 0 : d->sizes_then_strides[rank + k];
    block[i] = (i < lead || pads[k] <= 0) ? sizes[i] : (intptr_t)pads[k];
    if (sizes[i] < 0 || sizes[i] > block[i]) {
      loom_error(LOOM_ERR_ARGUMENT, "%s: tile dim %d has size %lld, larger than its padded size %lld",
                 who, k, (long long)sizes[i], (long long)block[i]);
      return -1;
    }
    if (block[i] > 0 && words > 0x7fffffff / block[i]) {
      loom_error(LOOM_ERR_STAGING_OVERFLOW, "%s: padded tile has more than 2^31 words", who);
      return -1;
    }
    words *= block[i];
  }
  int64_t count = sizes[0] * sizes[1] * sizes[2] * sizes[3];
  if (count > 0 && !d->aligned) {
    loom_error(LOOM_ERR_ARGUMENT, "%s: memref descriptor with NULL data", who);
    return -1;
  }
  *base = (char *)d->aligned + (intptr_t)4 * d->offset;
  return words;
}

/* The memcpy copy specialisation (paper Fig. 12): on by default; off = every
 * word is moved one by one (loom_copy_use_memcpy(0) or LOOM_COPY_MEMCPY=off). */
static int g_use_memcpy = 1;
static int g_cpu_avx = -1; /* AVX row copies usable: -1 = not checked yet */
static int g_use_memcpy_api = 1;

int loom_copy_use_memcpy(int enabled) {
  g_use_memcpy = g_use_memcpy_api = enabled != 0;
  return LOOM_OK;
}

int loom_copy_memcpy_enabled(void) { return g_use_memcpy; }

/* At dma_init: the environment (if set) overrides the API setting for the run. */
void loom_copy_configure_from_env(void) {
  const char *v = getenv("LOOM_COPY_MEMCPY");
  if (v && (!strcmp(v, "off") || !strcmp(v, "0"))) g_use_memcpy = 0;
  else if (v && (!strcmp(v, "on") || !strcmp(v, "1"))) g_use_memcpy = 1;
  else g_use_memcpy = g_use_memcpy_api;
#ifdef LOOM_HAVE_AVX_ROWS
  if (g_cpu_avx < 0) {
    __builtin_cpu_init();
    g_cpu_avx = __builtin_cpu_supports("avx") ? 1 : 0;
  }
#endif
}

static void row(int mode, char *mem, intptr_t stride, uint32_t *words, intptr_t n) {
  if (stride == 1 && mode == PAD_PACK && g_use_memcpy) { memcpy(words, mem, (size_t)n * 4); return; }
  if (stride == 1 && mode == PAD_UNPACK && g_use_memcpy) { memcpy(mem, words, (size_t)n * 4); return; }
  for (intptr_t j = 0; j < n; j++) {
    char *p = mem + j * stride * 4;
    if (mode == PAD_PACK) memcpy(&words[j], p, 4);
    else if (mode == PAD_UNPACK) memcpy(p, &words[j], 4);
    else if (mode == PAD_ACC_I32) {
      uint32_t c;
      memcpy(&c, p, 4);
      c += words[j]; /* wraps like the hardware */
      memcpy(p, &c, 4);
    } else {
      float c, w;
      memcpy(&c, p, 4);
      memcpy(&w, &words[j], 4);
      c += w;
      memcpy(p, &c, 4);
    }
  }
}

static int padded_words(const char *who, int mode, int64_t rank, void *descriptor, int offset,
                        int64_t p0, int64_t p1, int64_t p2, int64_t p3);
static int g_deferred_count; /* deferred receives pending (see below) */

int loom_dma_drain_recvs(void); /* dma_runtime.c */
static int deferred_targets(const void *aligned);

/* The copies are host work on the timing model's timeline (host_copy). */
static int padded(const char *who, int mode, int64_t rank, void *descriptor, int offset,
                  int64_t p0, int64_t p1, int64_t p2, int64_t p3) {
  loom_timing_copy_begin();
  int end = padded_words(who, mode, rank, descriptor, offset, p0, p1, p2, p3);
  loom_timing_copy_end(end < 0 ? -1 : end - offset);
  return end;
}

static int padded_words(const char *who, int mode, int64_t rank, void *descriptor, int offset,
                        int64_t p0, int64_t p1, int64_t p2, int64_t p3) {
  const int64_t pads[4] = {p0, p1, p2, p3};
  char *base;
  intptr_t sizes[4], strides[4], block[4];
  if (loom_has_error()) return -1;
  int64_t words = pad_view(who, rank, descriptor, pads, &base, sizes, strides, block);
  if (words < 0) return -1;
  uint32_t *buf = staging_words(who, mode, words, offset);
  if (!buf) return -1;
  int full = sizes[0] == block[0] && sizes[1] == block[1] && sizes[2] == block[2] && sizes[3] == block[3];
  if (mode == PAD_PACK && !full) memset(buf, 0, (size_t)words * 4);
  for (intptr_t i0 = 0; i0 < sizes[0]; i0++)
    for (intptr_t i1 = 0; i1 < sizes[1]; i1++)
      for (intptr_t i2 = 0; i2 < sizes[2]; i2++) {
        char *mem = base + (i0 * strides[0] + i1 * strides[1] + i2 * strides[2]) * 4;
        uint32_t *w = buf + ((i0 * block[1] + i1) * block[2] + i2) * block[3];
        row(mode, mem, strides[3], w, sizes[3]);
      }
  tally(((const pad_descriptor *)descriptor)->aligned, mode == PAD_PACK ? LOOM_TRACE_SEND : LOOM_TRACE_RECV,
        words);
  return offset + (int)words;
}

/* ---- fast path: rank-2 tiles with contiguous rows --------------------------
 * The common case of a generated driver (a 2-D tile of a row-major matrix):
 * one memcpy per row (plus the row's padding tail), or a tight accumulate
 * loop, with the address arithmetic hoisted; no rank-4 normalisation, no
 * per-element bookkeeping (the tally is one update per call). Returns
 * FAST_PATH_DECLINED, before doing anything, when the view does not qualify
 * or an error is pending: the general path then handles it, including every
 * error report. */
#ifdef LOOM_HAVE_AVX_ROWS
/* Row copies specialised for the accelerators' tile widths (8 and 16 words =
 * one or two 256-bit vectors): inline vector moves instead of a memcpy call
 * per row (the copy specialisation, taken one step further than memcpy).
 * Used only when the CPU has AVX (checked once, at dma_init). */
__attribute__((target("avx"))) static uint32_t *pack_rows_avx(uint32_t *restrict buf,
                                                                const uint32_t *restrict mem,
                                                                intptr_t ld, intptr_t rows,
                                                                intptr_t cols) {
  if (cols == 8) {
    for (intptr_t r = rows; r; r--, mem += ld, buf += 8)
      *(loom_row8 *)(void *)buf = *(const loom_row8 *)(const void *)mem;
  } else { /* 16 */
    for (intptr_t r = rows; r; r--, mem += ld, buf += 16) {
      loom_row8 lo = *(const loom_row8 *)(const void *)mem;
      loom_row8 hi = *(const loom_row8 *)(const void *)(mem + 8);
      *(loom_row8 *)(void *)buf = lo;
      *(loom_row8 *)(void *)(buf + 8) = hi;
    }
  }
  return buf;
}
#endif

/* rows x cols words from mem (row stride ld) to buf (row stride pcols, the
 * tail of each row zeroed); returns the end of the last row. Its own function
 * so the loop keeps only a few values live across the memcpy calls. */
static __attribute__((noinline)) uint32_t *pack_rows(uint32_t *restrict buf,
                                                     const uint32_t *restrict mem, intptr_t ld,
                                                     intptr_t rows, intptr_t cols, intptr_t pcols) {
  const size_t row_bytes = (size_t)cols * 4;
  if (pcols == cols) {
    for (intptr_t r = rows; r; r--, mem += ld, buf += cols) memcpy(buf, mem, row_bytes);
    return buf;
  }
  const size_t tail_bytes = (size_t)(pcols - cols) * 4;
  for (intptr_t r = rows; r; r--, mem += ld, buf += pcols) {
    memcpy(buf, mem, row_bytes);
    memset(buf + cols, 0, tail_bytes);
  }
  return buf;
}


/* mem[r][c] += buf[r][c] for a rows x cols corner (row strides ld, pcols); own
 * functions, like pack_rows, so the loops keep few values live. */
static __attribute__((noinline)) void acc_rows_i32(uint32_t *restrict mem, const uint32_t *restrict buf,
                                                   intptr_t ld, intptr_t rows, intptr_t cols,
                                                   intptr_t pcols) {
  for (; rows; rows--, buf += pcols, mem += ld)
    for (intptr_t c = 0; c < cols; c++) mem[c] += buf[c]; /* wraps like the hardware */
}

static __attribute__((noinline)) void acc_rows_f32(float *restrict mem, const float *restrict buf,
                                                   intptr_t ld, intptr_t rows, intptr_t cols,
                                                   intptr_t pcols) {
  for (; rows; rows--, buf += pcols, mem += ld)
    for (intptr_t c = 0; c < cols; c++) mem[c] += buf[c];
}

/* A rank-2 view the row copies take: unit inner stride, no padding beyond 16-bit blocks, data.
 * One branch for the common case (a pending error empties the staging window, see staging_words). */
typedef struct rows_view { uint32_t *mem; intptr_t ld, rows, cols, prows, pcols; } rows_view;
static inline __attribute__((always_inline)) int rows_view_of(const pad_descriptor *d, int64_t p0, int64_t p1,
                                                             rows_view *v) {
  const intptr_t *ss = d->sizes_then_strides;
  v->rows = ss[0], v->cols = ss[1], v->ld = ss[2];
  v->prows = p0 > 0 ? (intptr_t)p0 : v->rows, v->pcols = p1 > 0 ? (intptr_t)p1 : v->cols;
  v->mem = d->aligned ? (uint32_t *)d->aligned + d->offset : NULL;
  return !((ss[3] != 1) | (v->rows <= 0) | (v->cols <= 0) | (v->ld < v->cols) | (v->rows > v->prows) |
           (v->cols > v->pcols) | (v->prows > 0xffff) | (v->pcols > 0xffff) | !d->aligned);
}

/* The copy of a rows_view (checked by rows_view_of, now or when a deferred copy was recorded) to or
 * from its prows x pcols block of the staging at `offset`; `aligned` names the memref for the tally. */
static inline __attribute__((always_inline)) int rows_copy(const char *who, int mode, const rows_view *v,
                                                          const void *aligned, int offset) {
  uint32_t *mem = v->mem;
  const intptr_t ld = v->ld, rows = v->rows, cols = v->cols, prows = v->prows, pcols = v->pcols;
  const int64_t words = (int64_t)prows * pcols;
  const size_t row_bytes = (size_t)cols * 4;
  loom_timing_copy_begin();
  int end = -1;
  uint32_t *buf = staging_words(who, mode, words, offset);
  if (!buf) goto done;
  if (mode == PAD_PACK) {
#ifdef LOOM_HAVE_AVX_ROWS
    if (pcols == cols && (cols == 8 || cols == 16) && g_cpu_avx > 0)
      buf = pack_rows_avx(buf, mem, ld, rows, cols);
    else
#endif
      buf = pack_rows(buf, mem, ld, rows, cols, pcols);
    if (rows < prows) memset(buf, 0, (size_t)(prows - rows) * (size_t)pcols * 4);
  } else if (mode == PAD_UNPACK) {
    for (intptr_t r = 0; r < rows; r++, buf += pcols, mem += ld) memcpy(mem, buf, row_bytes);
  } else if (mode == PAD_ACC_I32) {
    acc_rows_i32(mem, buf, ld, rows, cols, pcols);
  } else {
    acc_rows_f32((float *)(void *)mem, (const float *)(const void *)buf, ld, rows, cols, pcols);
  }
  tally(aligned, mode == PAD_PACK ? LOOM_TRACE_SEND : LOOM_TRACE_RECV, words);
  end = offset + (int)words;
done:
  loom_timing_copy_end(end < 0 ? -1 : words);
  return end;
}

static inline __attribute__((always_inline)) int rows_fast_path(const char *who, int mode,
                                                               const pad_descriptor *d, int offset,
                                                               int64_t p0, int64_t p1) {
  rows_view v;
  if (!rows_view_of(d, p0, p1, &v)) return FAST_PATH_DECLINED;
  return rows_copy(who, mode, &v, d->aligned, offset);
}

/* ---- fast path: unpadded rank-3/4 views with unit inner stride -------------
 * E.g. a convolution's input window (iC x fHW x fHW of an NCHW image) or filter
 * slice. Dims that are contiguous with the next one are merged first (a whole
 * filter slice becomes one memcpy); the remaining rows are copied with memcpy
 * when long, word by word inline when short (a libc call per 3-word row costs
 * more than the copy). Declines (FAST_PATH_DECLINED) anything padded or odd. */
#define SHORT_ROW 8
static int nd_fast_path(const char *who, int mode, int64_t rank, const pad_descriptor *d, int offset,
                        int64_t p0, int64_t p1, int64_t p2, int64_t p3) {
  const int64_t pads[4] = {p0, p1, p2, p3};
  const intptr_t *size = d->sizes_then_strides, *stride = d->sizes_then_strides + rank;
  if (stride[rank - 1] != 1 || !d->aligned || loom_has_error()) return FAST_PATH_DECLINED;
  int64_t words = 1;
  for (int i = 0; i < rank; i++) {
    if (size[i] <= 0 || (pads[i] > 0 && pads[i] != size[i])) return FAST_PATH_DECLINED;
    words *= size[i];
    if (words > 0x7fffffff) return FAST_PATH_DECLINED;
  }
  /* merge trailing contiguous dims into the row: len words per row */
  intptr_t len = size[rank - 1];
  int k = (int)rank - 2;
  while (k >= 0 && (stride[k] == len || size[k] == 1)) len *= size[k--];
  intptr_t n[3] = {1, 1, 1}, st[3] = {0, 0, 0}; /* the outer dims left, innermost last */
  for (int i = k, j = 2; i >= 0; i--, j--) n[j] = size[i], st[j] = stride[i];
  uint32_t *const mem0 = (uint32_t *)d->aligned + d->offset;
  loom_timing_copy_begin();
  int end = -1;
  uint32_t *buf = staging_words(who, mode, words, offset);
  if (!buf) goto done;
  for (intptr_t a = 0; a < n[0]; a++)
    for (intptr_t b = 0; b < n[1]; b++) {
      uint32_t *mem = mem0 + a * st[0] + b * st[1];
      for (intptr_t c = 0; c < n[2]; c++, mem += st[2], buf += len) {
        if (mode == PAD_PACK) {
          if (len >= SHORT_ROW) memcpy(buf, mem, (size_t)len * 4);
          else for (intptr_t w = 0; w < len; w++) buf[w] = mem[w];
        } else if (mode == PAD_UNPACK) {
          memcpy(mem, buf, (size_t)len * 4);
        } else if (mode == PAD_ACC_I32) {
          for (intptr_t w = 0; w < len; w++) mem[w] += buf[w]; /* wraps like the hardware */
        } else {
          float *fm = (float *)(void *)mem;
          const float *fb = (const float *)(const void *)buf;
          for (intptr_t w = 0; w < len; w++) fm[w] += fb[w];
        }
      }
    }
  tally(d->aligned, mode == PAD_PACK ? LOOM_TRACE_SEND : LOOM_TRACE_RECV, words);
  end = offset + (int)words;
done:
  loom_timing_copy_end(end < 0 ? -1 : words);
  return end;
}

/* Every padded copy: the fast path when it applies, else the general path. */
static inline int copy_paths(const char *who, int mode, int64_t rank, void *d, int offset,
                             int64_t p0, int64_t p1, int64_t p2, int64_t p3) {
  /* a send must see the values of deferred receives into the same memref */
  if (mode == PAD_PACK && g_deferred_count && d && deferred_targets(((const pad_descriptor *)d)->aligned))
    loom_dma_drain_recvs();
  if (d && g_use_memcpy) {
    int end = rank == 2 ? rows_fast_path(who, mode, d, offset, p0, p1)
              : rank == 3 || rank == 4 ? nd_fast_path(who, mode, rank, d, offset, p0, p1, p2, p3)
                                       : FAST_PATH_DECLINED;
    if (end != FAST_PATH_DECLINED) return end;
  }
  return padded(who, mode, rank, d, offset, p0, p1, p2, p3);
}

/* The driver's copy: the words it covers are the runtime's on the timeline (timing.c). */
static inline int copy_entry(const char *who, int mode, int64_t rank, void *d, int offset,
                             int64_t p0, int64_t p1, int64_t p2, int64_t p3) {
  int end = copy_paths(who, mode, rank, d, offset, p0, p1, p2, p3);
  loom_timing_cover(mode != PAD_PACK, end < 0 ? 0 : end - offset);
  return end;
}

/* The public entry points (dma_runtime.h): NAME calls IMPL with its own name
 * (for error messages) and its mode. */
#define PAD_ENTRY(name, impl, mode)                                                            \
  int name(int64_t rank, void *d, int offset, int64_t p0, int64_t p1, int64_t p2, int64_t p3) { \
    return impl(#name, mode, rank, d, offset, p0, p1, p2, p3);                                 \
  }
PAD_ENTRY(copy_to_inbuffer_padded_i32, copy_entry, PAD_PACK)
PAD_ENTRY(copy_to_inbuffer_padded_f32, copy_entry, PAD_PACK)
PAD_ENTRY(copy_from_outbuffer_padded_i32, copy_entry, PAD_UNPACK)
PAD_ENTRY(copy_from_outbuffer_padded_f32, copy_entry, PAD_UNPACK)
PAD_ENTRY(copy_from_outbuffer_padded_acc_i32, copy_entry, PAD_ACC_I32)
PAD_ENTRY(copy_from_outbuffer_padded_acc_f32, copy_entry, PAD_ACC_F32)

/* ---- deferred receives (double-buffered drivers) --------------------------
 * A deferred copy keeps a copy of the (stack-allocated) descriptor and runs at
 * the next drain, so the host can start the next transaction first. */
#define LOOM_DEFERRED_SLOTS 64
typedef struct deferred_copy {
  int mode, offset;
  int prepared;  /* a rank-2 row copy checked when recorded: runs from `rows` */
  rows_view rows;
  int64_t rank, pads[4];
  struct {
    void *allocated, *aligned;
    intptr_t offset, sizes_then_strides[8];
  } desc;
} deferred_copy;

static deferred_copy g_deferred[LOOM_DEFERRED_SLOTS];
void loom_deferred_reset(void) { g_deferred_count = 0; }

static int deferred_targets(const void *aligned) {
  for (int i = 0; i < g_deferred_count; i++)
    if (g_deferred[i].desc.aligned == aligned) return 1;
  return 0;
}

static int defer_copy(const char *who, int mode, int64_t rank, void *descriptor, int offset,
                      int64_t p0, int64_t p1, int64_t p2, int64_t p3) {
  const int64_t pads[4] = {p0, p1, p2, p3};
  if (loom_has_error()) return -1;
  const pad_descriptor *d = descriptor;
  /* a rank-2 row copy (the common tile) is checked once, here, and runs from its rows_view */
  rows_view rows;
  const int prepared = rank == 2 && d && g_use_memcpy && rows_view_of(d, p0, p1, &rows);
  int64_t words;
  if (prepared) {
    words = (int64_t)rows.prows * rows.pcols;
  } else { /* validate now, so errors name the call that caused them */
    char *base;
    intptr_t sizes[4], strides[4], block[4];
    if ((words = pad_view(who, rank, descriptor, pads, &base, sizes, strides, block)) < 0) return -1;
  }
  if (!staging_words(who, mode, words, offset)) return -1;
  if (g_deferred_count == LOOM_DEFERRED_SLOTS) {
    loom_error(LOOM_ERR_STATE, "%s: more than %d deferred receive copies pending (call "
               "loom_dma_drain_recvs)", who, LOOM_DEFERRED_SLOTS);
    return -1;
  }
  deferred_copy *c = &g_deferred[g_deferred_count++];
  c->mode = mode, c->offset = offset, c->prepared = prepared, c->desc.aligned = d->aligned;
  if (prepared) {
    c->rows = rows;
    return offset + (int)words;
  }
  c->rank = rank;
  memcpy(c->pads, pads, sizeof pads);
  c->desc.allocated = d->allocated, c->desc.offset = d->offset;
  memcpy(c->desc.sizes_then_strides, d->sizes_then_strides, (size_t)(2 * rank) * sizeof(intptr_t));
  return offset + (int)words;
}

/* Recording a deferred copy is one (cheap) runtime call on the timeline. */
static int defer(const char *who, int mode, int64_t rank, void *descriptor, int offset,
                 int64_t p0, int64_t p1, int64_t p2, int64_t p3) {
  loom_timing_enter();
  int end = defer_copy(who, mode, rank, descriptor, offset, p0, p1, p2, p3);
  loom_timing_cover(1, end < 0 ? 0 : end - offset); /* the drain copies them (charged then) */
  loom_timing_leave();
  return end;
}

int loom_deferred_pending(void) { return g_deferred_count; }

/* Runs the first `count` deferred copies (all when count < 0 or more than are pending), in call
 * order, and keeps the later ones (a receive not started yet: dma_runtime.c). */
int loom_deferred_run(int count) {
  static const char *names[] = {"", "copy_from_outbuffer_deferred",
                                "copy_from_outbuffer_deferred_acc_i32",
                                "copy_from_outbuffer_deferred_acc_f32"};
  if (count < 0 || count > g_deferred_count) count = g_deferred_count;
  loom_timing_enter();
  for (int i = 0; i < count && !loom_has_error(); i++) {
    deferred_copy *c = &g_deferred[i];
    if (c->prepared) {
      rows_copy(names[c->mode], c->mode, &c->rows, c->desc.aligned, c->offset);
      continue;
    }
    int end = c->rank == 2 && g_use_memcpy
                  ? rows_fast_path(names[c->mode], c->mode, (const pad_descriptor *)&c->desc,
                                   c->offset, c->pads[0], c->pads[1])
                  : FAST_PATH_DECLINED;
    if (end == FAST_PATH_DECLINED)
      padded(names[c->mode], c->mode, c->rank, &c->desc, c->offset, c->pads[0], c->pads[1],
             c->pads[2], c->pads[3]);
  }
  if (count < g_deferred_count)
    memmove(g_deferred, g_deferred + count, (size_t)(g_deferred_count - count) * sizeof g_deferred[0]);
  g_deferred_count -= count;
  loom_timing_leave();
  return loom_dma_error_code();
}

PAD_ENTRY(copy_from_outbuffer_deferred_i32, defer, PAD_UNPACK)
PAD_ENTRY(copy_from_outbuffer_deferred_f32, defer, PAD_UNPACK)
PAD_ENTRY(copy_from_outbuffer_deferred_acc_i32, defer, PAD_ACC_I32)
PAD_ENTRY(copy_from_outbuffer_deferred_acc_f32, defer, PAD_ACC_F32)
