/* Copies between strided memref views (MLIR descriptors) and the staging
 * buffers. Every element is one 32-bit word. Rows whose innermost stride is
 * 1 move with memcpy (paper section IV-B); ranks 2 and 4 have their own loop
 * nests, ranks 1 and 3 are padded to rank 4 with leading unit dimensions. */
#include <string.h>

#include "runtime_internal.h"

int loom_staging_in(const char *who, int64_t words, int offset, uint32_t **dst);
int loom_staging_out(const char *who, int64_t words, int offset, const uint32_t **src);

enum copy_mode { PACK, UNPACK, ACC_I32, ACC_F32 };

typedef struct view {
  char *base; /* address of element (0, ..., 0) */
  intptr_t sizes[4], strides[4]; /* rank-4 normalised, strides in elements */
  int64_t count;
} view;

/* MLIR memref descriptor header; sizes then strides follow. */
typedef struct descriptor_head {
  void *allocated;
  void *aligned;
  intptr_t offset;
  intptr_t sizes_then_strides[];
} descriptor_head;

static int load_view(const char *who, int64_t rank, void *descriptor, view *v) {
  if (rank < 1 || rank > 4)
    return loom_error(LOOM_ERR_ARGUMENT, "%s: memref rank %lld (expected 1..4)", who,
                      (long long)rank);
  if (!descriptor) return loom_error(LOOM_ERR_ARGUMENT, "%s: NULL memref descriptor", who);
  const descriptor_head *d = descriptor;
  int pad = 4 - (int)rank;
  v->count = 1;
  for (int i = 0; i < 4; i++) {
    v->sizes[i] = i < pad ? 1 : d->sizes_then_strides[i - pad];
    v->strides[i] = i < pad ? 0 : d->sizes_then_strides[rank + i - pad];
    if (v->sizes[i] < 0)
      return loom_error(LOOM_ERR_ARGUMENT, "%s: negative memref size %lld in dimension %d",
                        who, (long long)v->sizes[i], i - pad);
    if (v->sizes[i] > 0 && v->count > 0x7fffffff / v->sizes[i]) /* no int64 overflow */
      return loom_error(LOOM_ERR_STAGING_OVERFLOW, "%s: memref has more than 2^31 elements",
                        who);
    v->count *= v->sizes[i];
  }
  if (v->count > 0 && !d->aligned)
    return loom_error(LOOM_ERR_ARGUMENT, "%s: memref descriptor with NULL data", who);
  v->base = (char *)d->aligned + (intptr_t)4 * d->offset;
  return LOOM_OK;
}

/* One row of n elements at `mem` (element stride `stride`) against n
 * consecutive staging words. */
static inline void row_op(int mode, char *mem, intptr_t stride, uint32_t *words, intptr_t n) {
  if (stride == 1 && mode == PACK) {
    memcpy(words, mem, (size_t)n * 4);
    return;
  }
  if (stride == 1 && mode == UNPACK) {
    memcpy(mem, words, (size_t)n * 4);
    return;
  }
  const intptr_t step = stride * 4;
  switch (mode) {
  case PACK:
    for (intptr_t j = 0; j < n; j++) memcpy(&words[j], mem + j * step, 4);
    break;
  case UNPACK:
    for (intptr_t j = 0; j < n; j++) memcpy(mem + j * step, &words[j], 4);
    break;
  case ACC_I32: /* unsigned add: wraps like the hardware, no signed overflow */
    for (intptr_t j = 0; j < n; j++) {
      uint32_t c;
      memcpy(&c, mem + j * step, 4);
      c += words[j];
      memcpy(mem + j * step, &c, 4);
    }
    break;
  case ACC_F32:
    for (intptr_t j = 0; j < n; j++) {
      float c, w;
      memcpy(&c, mem + j * step, 4);
      memcpy(&w, &words[j], 4);
      c += w;
      memcpy(mem + j * step, &c, 4);
    }
    break;
  }
}

static void walk_rank2(int mode, const view *v, uint32_t *words) {
  const intptr_t rows = v->sizes[2], cols = v->sizes[3];
  const intptr_t rstep = v->strides[2] * 4, cstride = v->strides[3];
  char *row = v->base;
  for (intptr_t i = 0; i < rows; i++, row += rstep, words += cols)
    row_op(mode, row, cstride, words, cols);
}

static void walk_rank4(int mode, const view *v, uint32_t *words) {
  const intptr_t n3 = v->sizes[3], s3 = v->strides[3];
  for (intptr_t i0 = 0; i0 < v->sizes[0]; i0++) {
    char *p0 = v->base + i0 * v->strides[0] * 4;
    for (intptr_t i1 = 0; i1 < v->sizes[1]; i1++) {
      char *p1 = p0 + i1 * v->strides[1] * 4;
      for (intptr_t i2 = 0; i2 < v->sizes[2]; i2++, words += n3)
        row_op(mode, p1 + i2 * v->strides[2] * 4, s3, words, n3);
    }
  }
}

/* True when the view is dense row-major: one memcpy moves it all. */
static int is_contiguous(const view *v) {
  intptr_t expect = 1;
  for (int i = 3; i >= 0; i--) {
    if (v->sizes[i] != 1 && v->strides[i] != expect) return 0;
    expect *= v->sizes[i];
  }
  return 1;
}

static void walk(int mode, int64_t rank, const view *v, uint32_t *words) {
  if (v->count == 0) return;
  if ((mode == PACK || mode == UNPACK) && is_contiguous(v)) {
    row_op(mode, v->base, 1, words, (intptr_t)v->count);
    return;
  }
  if (rank <= 2) walk_rank2(mode, v, words);
  else walk_rank4(mode, v, words);
}

static int copy_in_words(const char *who, int64_t rank, void *descriptor, int offset) {
  view v;
  uint32_t *dst;
  if (loom_has_error() || load_view(who, rank, descriptor, &v)) return -1;
  if (loom_staging_in(who, v.count, offset, &dst)) return -1;
  walk(PACK, rank, &v, dst);
  return offset + (int)v.count;
}

static int copy_out_words(const char *who, int mode, int64_t rank, void *descriptor, int offset) {
  view v;
  const uint32_t *src;
  if (loom_has_error() || load_view(who, rank, descriptor, &v)) return -1;
  if (loom_staging_out(who, v.count, offset, &src)) return -1;
  walk(mode, rank, &v, (uint32_t *)src); /* src is only read in these modes */
  return offset + (int)v.count;
}

/* The copies are host work on the timing model's timeline (host_copy). */
static int copy_in(const char *who, int64_t rank, void *descriptor, int offset) {
  loom_timing_copy_begin();
  int end = copy_in_words(who, rank, descriptor, offset);
  loom_timing_copy_end(end < 0 ? -1 : end - offset);
  loom_timing_cover(0, end < 0 ? 0 : end - offset);
  return end;
}

static int copy_out(const char *who, int mode, int64_t rank, void *descriptor, int offset) {
  loom_timing_copy_begin();
  int end = copy_out_words(who, mode, rank, descriptor, offset);
  loom_timing_copy_end(end < 0 ? -1 : end - offset);
  loom_timing_cover(1, end < 0 ? 0 : end - offset);
  return end;
}

int copy_to_inbuffer_f32(int64_t rank, void *d, int offset) {
  return copy_in("copy_to_inbuffer_f32", rank, d, offset);
}
int copy_to_inbuffer_i32(int64_t rank, void *d, int offset) {
  return copy_in("copy_to_inbuffer_i32", rank, d, offset);
}
int copy_from_outbuffer_f32(int64_t rank, void *d, int offset) {
  return copy_out("copy_from_outbuffer_f32", UNPACK, rank, d, offset);
}
int copy_from_outbuffer_i32(int64_t rank, void *d, int offset) {
  return copy_out("copy_from_outbuffer_i32", UNPACK, rank, d, offset);
}
int copy_from_outbuffer_acc_f32(int64_t rank, void *d, int offset) {
  return copy_out("copy_from_outbuffer_acc_f32", ACC_F32, rank, d, offset);
}
int copy_from_outbuffer_acc_i32(int64_t rank, void *d, int offset) {
  return copy_out("copy_from_outbuffer_acc_i32", ACC_I32, rank, d, offset);
}
