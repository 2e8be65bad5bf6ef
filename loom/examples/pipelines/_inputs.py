"""Random inputs of the example apps (8-bit pixels, the apps' ``UInt8`` image params)."""

from collections.abc import Callable

import numpy as np


def u8_image(rng: np.random.Generator, shape) -> np.ndarray:
    """Uniform random 8-bit pixels of numpy ``shape`` (dims reversed: ``(h, w)`` or ``(c, h, w)``)."""
    return rng.integers(0, 256, shape, dtype=np.uint8)


def image_inputs(input_shape: Callable[[tuple], tuple]) -> Callable:
    """``make_inputs`` of an app whose one input is the 8-bit image ``input`` of numpy shape ``input_shape(size)``."""

    def make_inputs(size, rng: np.random.Generator) -> dict:
        return {"input": u8_image(rng, input_shape(size))}

    return make_inputs
