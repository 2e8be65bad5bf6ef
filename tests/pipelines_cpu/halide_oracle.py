"""Shared set-up for tests that use real Halide (PyPI ``halide``) as the oracle.

Layout: ``hl.Buffer(ndarray)`` maps a numpy (H, W) array to Halide x = W, y = H, and
``np.asarray(f.realize([W, H]))`` gives (H, W) back: the same reversed-dimension layout as loom.
"""

import os

import pytest

if "libasan" in os.environ.get("LD_PRELOAD", ""):  # the sanitizer session
    pytest.skip("Halide throws C++ exceptions internally, which a preloaded ASan runtime cannot intercept",
                allow_module_level=True)
if os.environ.get("CI"):  # CI installs the halide extra: the oracle must really run there
    import halide as hl
else:
    hl = pytest.importorskip("halide")

__all__ = ["hl"]
