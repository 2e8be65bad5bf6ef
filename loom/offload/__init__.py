"""Kernels split between the CPU and accelerators: the parts of a frontend's kernel that match an
accelerator description run through its generated driver (``loom.driver``), the rest through the
CPU compiler (``loom.jit``). See ``loom.offload.ekl``."""
