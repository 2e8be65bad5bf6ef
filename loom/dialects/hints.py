"""Discardable attributes loom puts on standard ops to guide a backend, and their names.

``loom.simd = N : i64`` on an innermost ``scf.for``: how the C backend's native mode vectorizes it (set by the
``scf-vector-hint`` pass and by a pipeline's ``vectorize(x, n)``; read by ``loom.backends.c.emit_control``)."""

SIMD_ATTR = "loom.simd"
