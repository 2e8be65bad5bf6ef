"""The loom DMA runtime: C sources (dma_runtime.h is the ABI generated drivers
call), accelerator behaviour models (``loom.runtime.models``: chosen by a description's
``"model"``, run through the loom_model.h vtable), and the Python helpers that build and load them."""

from loom.runtime.build import build_library, load_library, runtime_library, runtime_sources
from loom.runtime.host import memcpy_copies, raise_on_error, timing_report, trace_counters, trace_records, use_model
from loom.runtime.memref import descriptor_pointer, memref_descriptor

__all__ = [
    "build_library",
    "load_library",
    "runtime_library",
    "runtime_sources",
    "memref_descriptor",
    "descriptor_pointer",
    "use_model",
    "raise_on_error",
    "trace_counters",
    "trace_records",
    "timing_report",
    "memcpy_copies",
]
