/* The shipped matmul model (models/matmul.c, a loom_model.h model) compiled into
 * the runtime under names of its own, for loom_sim_use_model's ids. A
 * description's "builtin:..." model loads the same source as its own object. */
#define loom_model_create loom_builtin_matmul_create
#define loom_model_consume loom_builtin_matmul_consume
#define loom_model_pending loom_builtin_matmul_pending
#define loom_model_produce loom_builtin_matmul_produce
#define loom_model_destroy loom_builtin_matmul_destroy
#define loom_model_macs loom_builtin_matmul_macs
#define loom_model_cycles loom_builtin_matmul_cycles
#define loom_model_idle loom_builtin_matmul_idle
#include "models/matmul.c"

#include "runtime_internal.h"

const loom_model_vtable loom_builtin_matmul_vtable = {
    loom_model_create, loom_model_consume, loom_model_pending, loom_model_produce,
    loom_model_destroy, loom_model_macs, NULL, loom_model_idle};
