/* Hand-written Conv2D driver for the output-stationary conv accelerator
 * (AXI4MLIR section IV-D; protocol in dma_runtime.h): the layer-specific
 * manual C driver that loom's generated driver is compared with.
 *
 * What a competent hand-tuner WOULD do (and this file does):
 *  - follow the accelerator's host protocol with one DMA transaction per
 *    instruction: [32, fHW], [16, iC] once; per output channel [1 + filter
 *    slice]; per output pixel [70 + input window]; then [8] and one receive of
 *    the oH x oW plane, added into the output with a tight loop;
 *  - stage straight into the DMA input buffer: the filter slice is contiguous
 *    in FCHW, so one memcpy; the window is one memcpy per (channel, filter row)
 *    for long rows, inline word copies for short rows (fHW < 8: a libc call
 *    per 3-word row measured ~2x slower), a strided gather when fHW == 1;
 *  - hoist the window base pointer and the plane strides out of the loops;
 *  - check every runtime return code;
 *  - with MANUAL_COALESCE, one send per run of instructions up to the next
 *    receive (parameters together; filter slice, every window and [8] of an
 *    output channel in as few transfers as the staging buffer allows), as
 *    loom's accel-coalesce does; with MANUAL_DOUBLE_BUFFER, fill one staging
 *    half while the other is sent and add each plane one channel late, as
 *    loom's double_buffer=True does (manual_staging.h).
 * What it would NOT do: tile the channels or the image for the CPU caches,
 * reorder the loops per layer shape, or cache windows shared by neighbouring
 * pixels. */
#include "manual_drivers.h"
#include "manual_staging.h"

#define CONV_OPERAND_WORDS 16384 /* the accelerator's filter / window buffers */
#define CONV_PLANE_WORDS 65536   /* its output plane buffer */
#define LONG_ROW 8               /* filter rows this long are copied with memcpy */

enum { OP_READ_FILTERS = 1, OP_SEND_OUTPUTS = 8, OP_SET_CHANNELS = 16, OP_SET_FILTER = 32,
       OP_WINDOW = 70 /* read inputs + compute + save */ };

/* Stage an opcode and its parameter word (or none when param < 0). */
static int stage_words(outbox *ob, uint32_t opcode, int64_t param) {
  uint32_t *p;
  int rc = outbox_reserve(ob, param < 0 ? 1 : 2, &p);
  if (rc) return rc;
  p[0] = opcode;
  if (param >= 0) p[1] = (uint32_t)param;
  return outbox_end(ob);
}

/* The input window under the output pixel at `corner`, [iC][f][f], after its opcode. */
static void pack_window(uint32_t *restrict p, const uint32_t *restrict corner, int64_t iC, int f,
                        int64_t W, int64_t in_plane) {
  const size_t row_bytes = (size_t)f * 4;
  if (f == 1) {
    /* memcpy of one word: a plain load/store, no aliasing issue for f32 */
    for (int64_t c = 0; c < iC; c++) memcpy(p + c, corner + c * in_plane, 4);
    return;
  }
  for (int64_t c = 0; c < iC; c++) {
    const uint32_t *src = corner + c * in_plane;
    if (f >= LONG_ROW)
      for (int fh = 0; fh < f; fh++, src += W, p += f) memcpy(p, src, row_bytes);
    else /* short rows: inline word copies beat a libc call (measured) */
      for (int fh = 0; fh < f; fh++, src += W, p += f)
        for (int fw = 0; fw < f; fw++) memcpy(p + fw, src + fw, 4);
  }
}

int manual_conv(int options, int64_t batch, int64_t iC, int64_t H, int64_t W, int64_t oC,
                int64_t fHW, int64_t stride, const void *in_v, const void *filters_v, void *out_v,
                int f32) {
  const uint32_t *in = in_v, *filters = filters_v;
  uint32_t *out = out_v;
  if (batch < 0 || oC < 0 || iC < 1 || fHW < 1 || fHW > 64 || stride < 1 || H < fHW ||
      W < fHW || !in || !filters || !out || (options & ~(MANUAL_COALESCE | MANUAL_DOUBLE_BUFFER)))
    return LOOM_ERR_ARGUMENT;
  const int64_t oH = (H - fHW) / stride + 1, oW = (W - fHW) / stride + 1;
  const int64_t slice = iC * fHW * fHW, plane = oH * oW, in_plane = H * W;
  if (slice > CONV_OPERAND_WORDS || plane > CONV_PLANE_WORDS) return LOOM_ERR_ARGUMENT;
  if (batch == 0 || oC == 0) return LOOM_OK;
  const int f = (int)fHW;

  outbox ob;
  inbox ib;
  int rc = staging_open(&ob, &ib, (options & MANUAL_COALESCE) != 0,
                        (options & MANUAL_DOUBLE_BUFFER) != 0, f32);
  if (!rc) rc = stage_words(&ob, OP_SET_FILTER, fHW);
  if (!rc) rc = stage_words(&ob, OP_SET_CHANNELS, iC);
  for (int64_t n = 0; n < batch && !rc; n++) {
    const uint32_t *const image = in + n * iC * in_plane;
    for (int64_t oc = 0; oc < oC && !rc; oc++) {
      uint32_t *p;
      if ((rc = outbox_reserve(&ob, (int)(1 + slice), &p))) break;
      p[0] = OP_READ_FILTERS;
      memcpy(p + 1, filters + oc * slice, (size_t)slice * 4);
      if ((rc = outbox_end(&ob))) break;
      for (int64_t oh = 0; oh < oH && !rc; oh++) {
        const uint32_t *const row0 = image + oh * stride * W;
        for (int64_t ow = 0; ow < oW && !rc; ow++) {
          if ((rc = outbox_reserve(&ob, (int)(1 + slice), &p))) break;
          p[0] = OP_WINDOW;
          pack_window(p + 1, row0 + ow * stride, iC, f, W, in_plane);
          rc = outbox_end(&ob);
        }
      }
      if (!rc) rc = stage_words(&ob, OP_SEND_OUTPUTS, -1);
      if (!rc)
        rc = receive_accumulate(&ob, &ib, out + (n * oC + oc) * plane, plane, 1, (int)plane,
                                (int)plane, (int)plane);
    }
  }
  return staging_close(&ob, &ib, rc);
}

int manual_conv_os(int64_t batch, int64_t iC, int64_t H, int64_t W, int64_t oC, int64_t fHW,
                   int64_t stride, const int32_t *in, const int32_t *filters, int32_t *out) {
  return manual_conv(0, batch, iC, H, W, oC, fHW, stride, in, filters, out, 0);
}

int manual_conv_os_f32(int64_t batch, int64_t iC, int64_t H, int64_t W, int64_t oC, int64_t fHW,
                       int64_t stride, const float *in, const float *filters, float *out) {
  return manual_conv(0, batch, iC, H, W, oC, fHW, stride, in, filters, out, 1);
}
