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
 * raises it on the host as a LoomError with the accelerator's name, and the
 * transaction number and first word when the message does not say "send #".
 * A return value among the LOOM_ERR_* codes of dma_runtime.h (1..9) is the
 * runtime error code reported; any other non-zero value reports
 * LOOM_ERR_MODEL.
 *
 * Required symbols: create, consume, pending, produce, destroy.
 * Optional symbols: loom_model_macs, loom_model_cycles, loom_model_idle
 * (looked up with dlsym; absent means "not reported").
 *
 * The same five functions, called through a table of function pointers
 * (loom_model_vtable in dma_runtime.h), drive every model: the shipped C
 * models (loom/runtime/models/), a user's C file, a prebuilt shared object
 * (an RTL simulation) and Python models (ctypes callbacks). */
#ifndef LOOM_MODEL_H
#define LOOM_MODEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Make a fresh accelerator (called at every dma_init). `description_json` is
 * the accelerator's configuration, NUL-terminated compact UTF-8 JSON with its
 * flat keys first: {"name":..,"data_type":"i32"|"f32","model":..,"dims":[..],
 * "tile":[nominal tile per dim, 0 = full],"description":{the validated
 * description entry}}, so one model source can serve several sizes
 * (loom_model_json.h reads it). Returns the model's state, or NULL with a
 * message in err. A flat key "arithmetic":0 (first, when present) asks for
 * a run that times the host alone: the model may skip computing its output
 * values but must consume, produce and report (macs, cycles) exactly as
 * usual; a model that ignores the key stays correct. */
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
