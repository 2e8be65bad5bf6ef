/* The ABI of an accelerator behaviour model written in C (or C++ with
 * extern "C"), as loom's simulator backend drives it.
 *
 * A model sees exactly what the accelerator sees on its AXI-Stream ports:
 * each DMA send arrives as one packet of 32-bit words (tlast after the last
 * word); the words the accelerator produces wait in the model until the host
 * receives them. loom compiles a model's source file into its own shared
 * object (cached like every compiled artifact) and loads these symbols from
 * it, so several models can be loaded side by side.
 *
 * Errors: a function that fails writes a one-line message (no newline) into
 * `err` (at most err_len bytes, NUL-terminated) and returns non-zero; loom
 * raises it on the host as a LoomError naming the accelerator, the transaction
 * number and the opcode being executed.
 *
 * Required symbols: create, consume, pending, produce, destroy.
 * Optional symbols: loom_model_macs, loom_model_cycles, loom_model_idle
 * (looked up with dlsym; absent means "not reported"). */
#ifndef LOOM_MODEL_H
#define LOOM_MODEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Make a fresh accelerator. `description_json` is the accelerator's canonical
 * description (the JSON object loom validated: name, kernel, opcodes, tiles,
 * dtype...), NUL-terminated UTF-8, so one model source can serve several sizes.
 * Returns the model's state, or NULL with a message in err. */
void *loom_model_create(const char *description_json, char *err, int err_len);

/* One DMA send transaction: n words (n >= 1). Returns 0, or non-zero with a
 * message in err. */
int loom_model_consume(void *state, const uint32_t *words, int64_t n, char *err,
                       int err_len);

/* Output words the accelerator has ready for the host. */
int64_t loom_model_pending(void *state);

/* Hand the next n ready output words to the host (0 < n <= pending). Returns
 * 0, or non-zero with a message in err. */
int loom_model_produce(void *state, uint32_t *dst, int64_t n, char *err, int err_len);

/* Release everything create allocated. */
void loom_model_destroy(void *state);

/* Optional: multiply-accumulates done since create (the timing model's
 * compute term); optional: accelerator clock cycles since create (a
 * cycle-accurate or RTL model reports them). */
int64_t loom_model_macs(void *state);
int64_t loom_model_cycles(void *state);
/* Optional: 0 when no instruction is half-read, else non-zero with a message
 * in err (called before every receive and at dma_free). */
int loom_model_idle(void *state, char *err, int err_len);

#ifdef __cplusplus
}
#endif

#endif
