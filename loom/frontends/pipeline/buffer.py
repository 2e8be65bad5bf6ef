"""``Buffer``: an image with Halide's coordinate order over a numpy array in loom's layout.

Layout (the same as Halide's Python bindings): a Func or ImageParam ``f[x, y, c]`` is held in a
numpy array of shape ``(C, H, W)``, i.e. the dimensions reversed, so ``x`` is the contiguous
axis. ``Buffer(arr)`` wraps such an array without copying; ``buf[x, y, c]`` and
``buf.width / height / channels`` use Halide's order. Interleaved images (numpy ``(H, W, C)``,
as image libraries give them) go through ``Buffer.from_interleaved`` / ``to_interleaved``,
which transpose explicitly. ``np.asarray(buf)`` gives the array back.
"""

from __future__ import annotations

import numpy as np

from loom.errors import LoomError


_UNNAMED = 0  # Buffers without a name read in definitions: buffer_1, buffer_2, ...


class Buffer:
    def __init__(self, array, name: str | None = None):
        arr = array.array if isinstance(array, Buffer) else np.asarray(array)
        self.array = arr
        self.name = name

    @classmethod
    def from_interleaved(cls, hwc, name: str | None = None) -> "Buffer":
        """An (H, W, C) image as ``[x, y, c]`` (copied to loom's planar (C, H, W) layout)."""
        arr = np.asarray(hwc)
        if arr.ndim != 3:
            raise LoomError(f"from_interleaved takes an (H, W, C) array, got shape {arr.shape}",
                            where=f"Buffer '{name or '?'}'")
        return cls(np.ascontiguousarray(arr.transpose(2, 0, 1)), name)

    def to_interleaved(self) -> np.ndarray:
        if self.dimensions != 3:
            raise LoomError(f"to_interleaved needs a 3-d [x, y, c] buffer, this one has {self.dimensions}",
                            where=f"Buffer '{self.name or '?'}'")
        return np.ascontiguousarray(self.array.transpose(1, 2, 0))

    @property
    def dimensions(self) -> int:
        return self.array.ndim

    @property
    def extents(self) -> tuple[int, ...]:
        """Extents in Halide's order (x first)."""
        return tuple(reversed(self.array.shape))

    # as Halide's Buffer: 1 for a dimension the buffer lacks (a 0-d buffer, a realized 0-d Func, has none)
    width = property(lambda self: self.extents[0] if self.dimensions > 0 else 1)
    height = property(lambda self: self.extents[1] if self.dimensions > 1 else 1)
    channels = property(lambda self: self.extents[2] if self.dimensions > 2 else 1)

    @property
    def dtype(self):
        return self.array.dtype

    def __getitem__(self, coords):
        coords = coords if isinstance(coords, tuple) else (coords,)
        if len(coords) != self.dimensions:
            raise LoomError(f"indexed with {len(coords)} coordinates but has {self.dimensions} dimensions",
                            where=f"Buffer '{self.name or '?'}'")
        if all(isinstance(c, (int, np.integer)) for c in coords):
            return self.array[tuple(reversed(coords))]
        return self.as_input()[coords]  # read in a definition, as Halide's Buffer: an input bound to this array

    def as_input(self):
        """The ImageParam a definition reading this Buffer reads: bound to its array (``set``), named after
        the Buffer (or ``buffer_<n>``), so evaluate, the CPU path and the simulator take the array when the
        inputs do not name it."""
        if getattr(self, "_input", None) is None:
            from .func import ImageParam
            from .types import type_of_dtype

            global _UNNAMED
            if self.name is None:
                _UNNAMED += 1
            try:
                t = type_of_dtype(self.dtype)
            except KeyError:
                raise LoomError(f"a Buffer of {self.dtype} cannot be read in a definition: the language's types are "
                                "u8, u16, u32, u64, i8, i16, i32, i64, f32, f64 and bool (convert the array first)",
                                where=f"Buffer '{self.name or '?'}'") from None
            self._input = ImageParam(t, self.dimensions, self.name or f"buffer_{_UNNAMED}").set(self)
            self._input.from_buffer = True
        return self._input

    def set_min(self, mins):
        """Halide's ``Buffer.set_min``: loom's inputs start at 0 in every dimension, so a non-zero min is refused
        (read the input at shifted coordinates instead, e.g. ``inp[x - 10, y - 20]``)."""
        if any(m != 0 for m in mins):
            raise LoomError(f"set_min({list(mins)}): loom's input buffers start at 0 in every dimension; read the "
                            "input at shifted coordinates instead (inp[x - m0, y - m1])",
                            where=f"Buffer '{self.name or '?'}'", construct="set_min")
        return self

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)

    def __repr__(self):
        return f"Buffer({self.name or ''} {self.dtype} extents {list(self.extents)})"
