"""The words one invocation of a streaming design's RTL takes and gives: per stream the words it sends in firing
order (lanes within a step, an idle lane of a partial block sends 0), the tile's origin for the kernels that read
their coordinates, and the output's words in firing order with the mask of its live lanes. Shared by the
Verilator co-simulation (``loom.jit.streaming_rtl``) and the self-checking testbench (``verilog_testbench``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .verilog import RtlDesign


@dataclass
class InvocationWords:
    streams: list  # per stream of ``rtl.streams``: uint64 words, n_steps * lanes
    mins: list  # per (stage, dim) of each stage's ``mins_used``: the tile's origin coordinate
    output: np.ndarray | None  # the output's words in firing order (None: not known yet)
    live: np.ndarray  # which of the output's words are points of the domain (not an idle lane)


class WordOrder:
    """Where each word a stream sends or the output emits sits in the stage's buffer (computed once a design)."""

    def __init__(self, rtl: RtlDesign):
        self.rtl = rtl
        self.index = {name: _storage_index(rtl.stages[name]) for name in [*rtl.streams, rtl.output]}

    def invocation(self, buffers: dict, with_output: bool = False) -> InvocationWords:
        """The words of the invocation whose stage values are ``buffers`` (name -> Realization)."""
        rtl, streams = self.rtl, []
        for name in rtl.streams:
            live, index = self.index[name]
            w = np.zeros(len(live), np.uint64)  # an idle lane's word is 0
            w[live] = as_words(buffers[name].array[index], rtl.stages[name].width)
            streams.append(w)
        mins = [int(buffers[name].mins[k]) for name, rs in rtl.stages.items() for k in rs.mins_used]
        live, index = self.index[rtl.output]
        output = None
        if with_output:
            output = np.zeros(len(live), np.uint64)
            output[live] = as_words(buffers[rtl.output].array[index], rtl.stages[rtl.output].width)
        return InvocationWords(streams, mins, output, live)

    def image(self, words: np.ndarray, like: np.ndarray) -> np.ndarray:
        """The output's values over its domain from the words it emitted (``like``: its shape and dtype)."""
        live, index = self.index[self.rtl.output]
        image = np.zeros(like.shape, like.dtype)
        image[index] = from_words(words[live], like.dtype)
        return image


def _storage_index(rs) -> tuple:
    """(which words are points of the domain, their storage index): an idle lane of a partial block is not."""
    pts = rs.write_points()
    live = rs.valid(pts)
    return live, tuple(pts[live, k] for k in reversed(range(pts.shape[1])))


def as_words(values: np.ndarray, width: int) -> np.ndarray:
    """Values as the ``width``-bit words the RTL carries (two's complement for signed types)."""
    v = np.asarray(values)
    if v.dtype == np.bool_:
        return v.astype(np.uint64)
    bits = v.view(f"u{v.dtype.itemsize}") if v.dtype.kind in "if" else v
    return bits.astype(np.uint64) & np.uint64((1 << width) - 1)


def from_words(words: np.ndarray, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return (words & 1).astype(bool)
    return (words & np.uint64((1 << (8 * dtype.itemsize)) - 1)).astype(f"u{dtype.itemsize}").view(dtype)


__all__ = ["InvocationWords", "WordOrder", "as_words", "from_words"]
