"""Random inputs of the example apps (8-bit pixels, the apps' ``UInt8`` image params)."""

import numpy as np


def u8_image(rng: np.random.Generator, shape) -> np.ndarray:
    """Uniform random 8-bit pixels of numpy ``shape`` (dims reversed: ``(h, w)`` or ``(c, h, w)``)."""
    return rng.integers(0, 256, shape, dtype=np.uint8)
