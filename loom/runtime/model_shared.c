/* A behaviour model loaded from a shared object that implements loom_model.h
 * (an RTL model built by loom.runtime.rtl, or any prebuilt model). The object
 * is dlopen'ed once per selection and never closed (Verilated designs keep
 * static state); each simulator run creates a fresh instance from it.
 *
 * Glue until the model loader of issue 9 lands: selected with
 * loom_sim_use_shared_model (dma_runtime.c), everything else is here. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "loom_model.h"
#include "runtime_internal.h"

typedef struct shared_functions {
  void *(*create)(const char *, char *, int);
  int (*consume)(void *, const uint32_t *, int64_t, char *, int);
  int64_t (*pending)(void *);
  int (*produce)(void *, uint32_t *, int64_t, char *, int);
  void (*destroy)(void *);
  int64_t (*macs)(void *);   /* optional */
  int64_t (*cycles)(void *); /* optional */
  int (*idle)(void *, char *, int); /* optional */
} shared_functions;

typedef struct shared_model {
  loom_model base;
  void *state;
  shared_functions fns; /* of the object it was created from */
  int64_t macs_reported; /* MACs already handed to the timing model */
} shared_model;

static shared_functions g_fns; /* of the object selected last */
static char *g_json;
static shared_model *g_live;       /* the instance a backend holds, if any */
static int64_t g_last_cycles = -1; /* cycles of the last instance destroyed */

#define MSG 512

/* A model's non-zero return: a LOOM_ERR_* code is reported as such, anything else as a state error. */
static int model_failed(int rc, const char *err, const char *what) {
  const int code = rc >= LOOM_ERR_UNKNOWN_OPCODE && rc <= LOOM_ERR_ARGUMENT ? rc : LOOM_ERR_STATE;
  return loom_error(code, "%s", err[0] ? err : what);
}

static int shared_consume(loom_model *base, const uint32_t *words, int n) {
  shared_model *m = (shared_model *)base;
  char err[MSG] = "";
  int rc = m->fns.consume(m->state, words, n, err, MSG);
  if (rc) return model_failed(rc, err, "model consume failed");
  if (m->fns.macs) { /* the compute this send triggered, for the timing model */
    int64_t macs = m->fns.macs(m->state);
    loom_timing_compute(macs - m->macs_reported);
    m->macs_reported = macs;
  }
  return LOOM_OK;
}

static int64_t shared_pending(loom_model *base) {
  shared_model *m = (shared_model *)base;
  return m->fns.pending(m->state);
}

static int shared_produce(loom_model *base, uint32_t *dst, int n) {
  shared_model *m = (shared_model *)base;
  char err[MSG] = "";
  int rc = m->fns.produce(m->state, dst, n, err, MSG);
  if (rc) return model_failed(rc, err, "model produce failed");
  return LOOM_OK;
}

/* A half-read instruction before a receive or at dma_free (optional loom_model_idle). */
static int shared_check_idle(loom_model *base, const char *when) {
  shared_model *m = (shared_model *)base;
  if (!m->fns.idle) return LOOM_OK;
  char err[MSG] = "";
  int rc = m->fns.idle(m->state, err, MSG);
  if (!rc) return LOOM_OK;
  const int code = rc >= LOOM_ERR_UNKNOWN_OPCODE && rc <= LOOM_ERR_ARGUMENT ? rc : LOOM_ERR_STATE;
  return loom_error(code, "%s (%s)", err[0] ? err : "the model is not idle", when);
}

static void shared_destroy(loom_model *base) {
  shared_model *m = (shared_model *)base;
  if (m->fns.cycles) g_last_cycles = m->fns.cycles(m->state);
  m->fns.destroy(m->state);
  if (g_live == m) g_live = NULL;
  free(m);
}

loom_model *loom_shared_model_create(void) {
  if (!g_fns.create) return NULL;
  shared_model *m = calloc(1, sizeof *m);
  if (!m) {
    loom_error(LOOM_ERR_DEVICE, "cannot allocate a shared-object model");
    return NULL;
  }
  char err[MSG] = "";
  m->fns = g_fns;
  m->state = g_fns.create(g_json, err, MSG);
  if (!m->state) {
    loom_error(LOOM_ERR_STATE, "%s", err[0] ? err : "the model's loom_model_create failed");
    free(m);
    return NULL;
  }
  strncpy(m->base.name, "shared", sizeof m->base.name - 1);
  m->base.consume = shared_consume, m->base.pending_output = shared_pending;
  m->base.produce = shared_produce, m->base.check_idle = shared_check_idle;
  m->base.destroy = shared_destroy;
  g_live = m;
  g_last_cycles = -1;
  return &m->base;
}

int loom_shared_model_load(const char *so_path, const char *description_json) {
  if (!so_path || !description_json)
    return loom_error(LOOM_ERR_ARGUMENT, "loom_sim_use_shared_model: NULL path or description");
  void *h = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    return loom_error(LOOM_ERR_ARGUMENT, "loom_sim_use_shared_model: cannot load %s: %s", so_path,
                      why ? why : "dlopen failed");
  }
  shared_functions f;
  static const char *required[] = {"loom_model_create", "loom_model_consume", "loom_model_pending",
                                   "loom_model_produce", "loom_model_destroy"};
  void *sym[5];
  for (int i = 0; i < 5; i++)
    if (!(sym[i] = dlsym(h, required[i])))
      return loom_error(LOOM_ERR_ARGUMENT,
                        "loom_sim_use_shared_model: %s does not export %s (see loom_model.h)", so_path,
                        required[i]);
  /* POSIX: function pointers round-trip through void * (dlsym's contract) */
  memcpy(&f.create, &sym[0], sizeof sym[0]), memcpy(&f.consume, &sym[1], sizeof sym[1]);
  memcpy(&f.pending, &sym[2], sizeof sym[2]), memcpy(&f.produce, &sym[3], sizeof sym[3]);
  memcpy(&f.destroy, &sym[4], sizeof sym[4]);
  void *macs = dlsym(h, "loom_model_macs"), *cycles = dlsym(h, "loom_model_cycles");
  void *idle = dlsym(h, "loom_model_idle");
  memcpy(&f.macs, &macs, sizeof macs), memcpy(&f.cycles, &cycles, sizeof cycles);
  memcpy(&f.idle, &idle, sizeof idle);
  char *json = strdup(description_json);
  if (!json) return loom_error(LOOM_ERR_DEVICE, "loom_sim_use_shared_model: out of memory");
  free(g_json);
  g_json = json;
  g_fns = f;
  return LOOM_OK;
}

int64_t loom_sim_model_cycles(void) {
  if (g_live) return g_live->fns.cycles ? g_live->fns.cycles(g_live->state) : -1;
  return g_last_cycles;
}
