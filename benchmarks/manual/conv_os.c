/* Hand-written Conv2D driver for the output-stationary conv accelerator
 * (AXI4MLIR section IV-D; protocol in dma_runtime.h): the layer-specific
 * manual C driver that loom's generated driver is compared with.
 *
 * What a competent hand-tuner WOULD do (and this file does):
 *  - follow the accelerator's host protocol with one DMA transaction per
 *    instruction: [32, fHW], [16, iC] once; per output channel [1 + filter
 *    slice]; per output pixel [70 + input window]; then [8] and one receive of
 *    the oH x oW plane, added into the output with a tight loop;
 *  - stage straight into dma_in_buffer(): the filter slice is contiguous in
 *    FCHW, so one memcpy; the window is one memcpy per (channel, filter row)
 *    for long rows, inline word copies for short rows (fHW < 8: a libc call
 *    per 3-word row measured ~2x slower), a strided gather when fHW == 1;
 *  - hoist the window base pointer and the plane strides out of the loops;
 *  - check every runtime return code.
 * What it would NOT do:
 *  - tile the channels or the image for the CPU caches, reorder the loops per
 *    layer shape, or cache windows shared by neighbouring pixels;
 *  - merge instructions into one DMA transaction (e.g. 48 for both
 *    parameters, or several pixels per send) or double-buffer. */
#include <string.h>

#include "dma_runtime.h"
#include "manual_drivers.h"

#define DMA_ADDRESS 0x40400000u
#define IN_ADDRESS 0x16000000u
#define OUT_ADDRESS 0x16400000u
#define STAGING_WORDS 65536
#define CONV_OPERAND_WORDS 16384 /* the accelerator's filter / window buffers */
#define CONV_PLANE_WORDS 65536   /* its output plane buffer */
#define LONG_ROW 8               /* filter rows this long are copied with memcpy */

enum { OP_READ_FILTERS = 1, OP_SEND_OUTPUTS = 8, OP_SET_CHANNELS = 16, OP_SET_FILTER = 32,
       OP_WINDOW = 70 /* read inputs + compute + save */ };

static int send_words(int words) {
  int rc = dma_start_send(words, 0);
  return rc ? rc : dma_wait_send();
}

static int conv_os(int64_t batch, int64_t iC, int64_t H, int64_t W, int64_t oC, int64_t fHW,
                   int64_t stride, const uint32_t *in, const uint32_t *filters, uint32_t *out,
                   int f32) {
  if (batch < 0 || oC < 0 || iC < 1 || fHW < 1 || fHW > 64 || stride < 1 || H < fHW ||
      W < fHW || !in || !filters || !out)
    return LOOM_ERR_ARGUMENT;
  const int64_t oH = (H - fHW) / stride + 1, oW = (W - fHW) / stride + 1;
  const int64_t slice = iC * fHW * fHW, plane = oH * oW, in_plane = H * W;
  if (slice > CONV_OPERAND_WORDS || plane > CONV_PLANE_WORDS) return LOOM_ERR_ARGUMENT;
  if (batch == 0 || oC == 0) return LOOM_OK;
  const int f = (int)fHW;
  const size_t row_bytes = (size_t)f * 4;

  int rc = dma_init(DMA_ADDRESS, IN_ADDRESS, STAGING_WORDS, OUT_ADDRESS, STAGING_WORDS);
  if (rc) return rc;
  uint32_t *const buf = dma_in_buffer();
  const uint32_t *const res = dma_out_buffer();

  buf[0] = OP_SET_FILTER, buf[1] = (uint32_t)fHW;
  if ((rc = send_words(2))) goto done;
  buf[0] = OP_SET_CHANNELS, buf[1] = (uint32_t)iC;
  if ((rc = send_words(2))) goto done;

  for (int64_t n = 0; n < batch; n++) {
    const uint32_t *const image = in + n * iC * in_plane;
    for (int64_t oc = 0; oc < oC; oc++) {
      buf[0] = OP_READ_FILTERS;
      memcpy(buf + 1, filters + oc * slice, (size_t)slice * 4);
      if ((rc = send_words((int)(1 + slice)))) goto done;
      for (int64_t oh = 0; oh < oH; oh++) {
        const uint32_t *const row0 = image + oh * stride * W;
        for (int64_t ow = 0; ow < oW; ow++) {
          const uint32_t *const corner = row0 + ow * stride;
          uint32_t *p = buf;
          *p++ = OP_WINDOW;
          if (f == 1) {
            /* memcpy of one word: a plain load/store, no aliasing issue for f32 */
            for (int64_t c = 0; c < iC; c++) memcpy(p + c, corner + c * in_plane, 4);
            p += iC;
          } else {
            for (int64_t c = 0; c < iC; c++) {
              const uint32_t *src = corner + c * in_plane;
              if (f >= LONG_ROW)
                for (int fh = 0; fh < f; fh++, src += W, p += f) memcpy(p, src, row_bytes);
              else /* short rows: inline word copies beat a libc call (measured) */
                for (int fh = 0; fh < f; fh++, src += W, p += f)
                  for (int fw = 0; fw < f; fw++) memcpy(p + fw, src + fw, 4);
            }
          }
          if ((rc = send_words((int)(p - buf)))) goto done;
        }
      }
      buf[0] = OP_SEND_OUTPUTS;
      if ((rc = send_words(1))) goto done;
      if ((rc = dma_start_recv((int)plane, 0)) || (rc = dma_wait_recv())) goto done;
      uint32_t *const dst = out + (n * oC + oc) * plane;
      if (f32) {
        float *restrict d = (float *)dst;
        const float *restrict s = (const float *)res;
        for (int64_t i = 0; i < plane; i++) d[i] += s[i];
      } else {
        for (int64_t i = 0; i < plane; i++) dst[i] += res[i]; /* wraps like int32 */
      }
    }
  }
done:;
  const int free_rc = dma_free();
  return rc ? rc : free_rc;
}

int manual_conv_os(int64_t batch, int64_t iC, int64_t H, int64_t W, int64_t oC, int64_t fHW,
                   int64_t stride, const int32_t *in, const int32_t *filters, int32_t *out) {
  return conv_os(batch, iC, H, W, oC, fHW, stride, (const uint32_t *)in,
                 (const uint32_t *)filters, (uint32_t *)out, 0);
}

int manual_conv_os_f32(int64_t batch, int64_t iC, int64_t H, int64_t W, int64_t oC, int64_t fHW,
                       int64_t stride, const float *in, const float *filters, float *out) {
  return conv_os(batch, iC, H, W, oC, fHW, stride, (const uint32_t *)in,
                 (const uint32_t *)filters, (uint32_t *)out, 1);
}
