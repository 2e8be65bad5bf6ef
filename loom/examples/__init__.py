"""Built-in examples shipped inside the package: kernels, accelerator descriptions, image-pipeline apps.

``ACCELERATORS_DIR`` holds the accelerator descriptions (``matmul_v1.json`` ... ``conv2d.json``,
the host ``pynq-z2.json``); ``PIPELINES_DIR`` the image-pipeline apps (one module each,
``loom.examples.pipelines.NAME``); ``kernels.EXAMPLES`` the Python kernels of ``loom list``;
``accel_kernels.BUILTINS`` the built-in kernels of ``loom accel``.
"""

from pathlib import Path

ACCELERATORS_DIR = Path(__file__).resolve().parent / "accelerators"
PIPELINES_DIR = Path(__file__).resolve().parent / "pipelines"

__all__ = ["ACCELERATORS_DIR", "PIPELINES_DIR"]
