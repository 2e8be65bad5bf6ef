/* The selected accelerator model and the one adapter every model runs
 * through: a loom_model_vtable (the loom_model.h functions as pointers) made
 * into the runtime's loom_model. Shipped models (compiled-in copies, chosen
 * by id), user C models, prebuilt shared objects and Python callbacks differ
 * only in where the table's pointers come from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

typedef struct vtable_model {
  loom_model base;
  loom_model_vtable vt;
  void *state;
  int64_t macs_reported; /* MACs already given to the timing model */
  uint32_t first_word;   /* of the current send, for messages */
  char err[1024];
} vtable_model;

static loom_model_vtable g_vtable;
static int g_selected = 0;
static char g_name[64] = "";
static char *g_config = NULL;
static int64_t g_cycles = -1; /* of the last model destroyed or the current one */
static vtable_model *g_current = NULL;
static int g_arithmetic = 1; /* loom_sim_set_arithmetic */

/* Runtime error code of a model's non-zero return. */
static int error_code(int rc) {
  return rc >= LOOM_ERR_UNKNOWN_OPCODE && rc <= LOOM_ERR_MODEL ? rc : LOOM_ERR_MODEL;
}

static int report(vtable_model *m, int rc, const char *when) {
  const char *msg = m->err[0] ? m->err : "the model failed without a message";
  if (when)
    return loom_error(error_code(rc), "%s: %s (%s)", m->base.name, msg, when);
  if (strstr(msg, "send #"))
    return loom_error(error_code(rc), "%s: %s", m->base.name, msg);
  return loom_error(error_code(rc), "%s: %s (send #%lld, first word %u)", m->base.name, msg,
                    (long long)m->base.transfer_index, m->first_word);
}

static int vt_consume(loom_model *base, const uint32_t *words, int n) {
  vtable_model *m = (vtable_model *)base;
  m->err[0] = '\0';
  m->first_word = n > 0 ? words[0] : 0;
  const int64_t pending = m->vt.pending(m->state);
  int rc = m->vt.consume(m->state, words, n, m->err, (int)sizeof m->err);
  if (rc) return report(m, rc, NULL);
  if (m->vt.macs) { /* the compute this send triggered, on the timeline */
    int64_t macs = m->vt.macs(m->state);
    loom_timing_compute(macs - m->macs_reported);
    m->macs_reported = macs;
  }
  if (m->vt.pending(m->state) > pending) loom_timing_result(); /* after its computes */
  return LOOM_OK;
}

static int64_t vt_pending(loom_model *base) {
  vtable_model *m = (vtable_model *)base;
  return m->vt.pending(m->state);
}

static int vt_produce(loom_model *base, uint32_t *dst, int n) {
  vtable_model *m = (vtable_model *)base;
  m->err[0] = '\0';
  int rc = m->vt.produce(m->state, dst, n, m->err, (int)sizeof m->err);
  return rc ? report(m, rc, "while producing output") : LOOM_OK;
}

static int vt_check_idle(loom_model *base, const char *when) {
  vtable_model *m = (vtable_model *)base;
  if (!m->vt.idle) return LOOM_OK;
  m->err[0] = '\0';
  int rc = m->vt.idle(m->state, m->err, (int)sizeof m->err);
  return rc ? report(m, rc, when) : LOOM_OK;
}

static void vt_destroy(loom_model *base) {
  vtable_model *m = (vtable_model *)base;
  if (m->vt.cycles) g_cycles = m->vt.cycles(m->state);
  m->vt.destroy(m->state);
  if (g_current == m) g_current = NULL;
  free(m);
}

loom_model *loom_selected_model_create(void) {
  if (!g_selected) return NULL;
  vtable_model *m = calloc(1, sizeof *m);
  if (!m) {
    loom_error(LOOM_ERR_DEVICE, "%s: cannot allocate the model adapter", g_name);
    return NULL;
  }
  m->vt = g_vtable;
  snprintf(m->base.name, sizeof m->base.name, "%s", g_name);
  const char *config = g_config ? g_config : "{}";
  char *timing_only = NULL; /* the configuration with "arithmetic":0 first */
  if (!g_arithmetic && config[0] == '{' && (timing_only = malloc(strlen(config) + 32)))
    sprintf(timing_only, "{\"arithmetic\":0%s%s", config[1] == '}' ? "" : ",", config + 1);
  m->state = m->vt.create(timing_only ? timing_only : config, m->err, (int)sizeof m->err);
  free(timing_only);
  if (!m->state) {
    loom_error(LOOM_ERR_MODEL, "%s: the accelerator model could not be created: %s", g_name,
               m->err[0] ? m->err : "its create returned NULL");
    free(m);
    return NULL;
  }
  m->base.consume = vt_consume, m->base.pending_output = vt_pending;
  m->base.produce = vt_produce, m->base.check_idle = vt_check_idle;
  m->base.destroy = vt_destroy;
  g_current = m, g_cycles = -1;
  return &m->base;
}

int loom_sim_set_arithmetic(int on) {
  const int before = g_arithmetic;
  g_arithmetic = on != 0;
  return before;
}

int64_t loom_sim_model_cycles(void) {
  if (g_current && g_current->vt.cycles) return g_current->vt.cycles(g_current->state);
  return g_cycles;
}

int loom_sim_use_model_vtable(const loom_model_vtable *vt, const char *name, const char *config) {
  if (vt && (!vt->create || !vt->consume || !vt->pending || !vt->produce || !vt->destroy))
    return loom_error(LOOM_ERR_ARGUMENT, "loom_sim_use_model_vtable: %s lacks one of create, consume, "
                      "pending, produce, destroy", name ? name : "the model");
  char *copy = NULL;
  if (vt && config) { /* C11 has no strdup */
    size_t size = strlen(config) + 1;
    if (!(copy = malloc(size)))
      return loom_error(LOOM_ERR_DEVICE, "loom_sim_use_model_vtable: cannot copy the configuration");
    memcpy(copy, config, size);
  }
  free(g_config);
  g_config = copy;
  g_selected = vt != NULL;
  if (vt) g_vtable = *vt;
  snprintf(g_name, sizeof g_name, "%s", vt && name ? name : "");
  loom_selected_model_changed();
  return LOOM_OK;
}

/* ---- the shipped models by id (standalone C harnesses, older callers) ---- */
int loom_sim_use_model(int model_id, int size, int dtype) {
  if (model_id < LOOM_MODEL_NONE || model_id > LOOM_MODEL_CONV2D)
    return loom_error(LOOM_ERR_ARGUMENT, "loom_sim_use_model: unknown model id %d", model_id);
  if (model_id >= LOOM_MODEL_MATMUL_V1 && model_id <= LOOM_MODEL_MATMUL_V3 && size != 4 && size != 8 &&
      size != 16)
    return loom_error(LOOM_ERR_ARGUMENT, "loom_sim_use_model: MatMul v%d size %d (expected 4, 8 or 16)",
                      model_id, size);
  if (dtype != LOOM_DTYPE_I32 && dtype != LOOM_DTYPE_F32)
    return loom_error(LOOM_ERR_ARGUMENT, "loom_sim_use_model: dtype %d (expected 0 = i32, 1 = f32)", dtype);
  if (model_id == LOOM_MODEL_NONE) return loom_sim_use_model_vtable(NULL, NULL, NULL);
  const char *type = dtype == LOOM_DTYPE_F32 ? "f32" : "i32", *suffix = dtype ? "_f32" : "";
  char name[64], config[256];
  if (model_id == LOOM_MODEL_CONV2D) {
    snprintf(name, sizeof name, "conv2d%s", suffix);
    snprintf(config, sizeof config, "{\"name\":\"%s\",\"data_type\":\"%s\",\"model\":\"builtin:conv2d\"}",
             name, type);
    return loom_sim_use_model_vtable(&loom_builtin_conv_vtable, name, config);
  }
  if (model_id == LOOM_MODEL_MATMUL_V4) {
    snprintf(name, sizeof name, "matmul_v4%s", suffix);
    size = 16;
  } else {
    snprintf(name, sizeof name, "matmul_v%d_%d%s", model_id, size, suffix);
  }
  snprintf(config, sizeof config,
           "{\"name\":\"%s\",\"data_type\":\"%s\",\"model\":\"builtin:matmul_v%d\",\"tile\":[%d,%d,%d]}",
           name, type, model_id, size, size, size);
  return loom_sim_use_model_vtable(&loom_builtin_matmul_vtable, name, config);
}

int loom_model_id_from_name(const char *name) {
  static const struct { const char *name; int id; } table[] = {
      {"v1", LOOM_MODEL_MATMUL_V1},        {"matmul_v1", LOOM_MODEL_MATMUL_V1},
      {"v2", LOOM_MODEL_MATMUL_V2},        {"matmul_v2", LOOM_MODEL_MATMUL_V2},
      {"v3", LOOM_MODEL_MATMUL_V3},        {"matmul_v3", LOOM_MODEL_MATMUL_V3},
      {"v4", LOOM_MODEL_MATMUL_V4},        {"matmul_v4", LOOM_MODEL_MATMUL_V4},
      {"conv", LOOM_MODEL_CONV2D},         {"conv2d", LOOM_MODEL_CONV2D}};
  if (!name) return -1;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(name, table[i].name) == 0) return table[i].id;
  return -1;
}
