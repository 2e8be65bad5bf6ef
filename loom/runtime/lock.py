"""The DMA runtime is one instance per process (its staging buffers, model and timeline are
globals of the C library): a run holds ``RUNTIME_LOCK`` so that threads take turns."""

import threading

RUNTIME_LOCK = threading.RLock()
