"""A 4-stage image pipeline with one offloaded node (``loom dataflow run`` runs this file).

    frames --> brighten (C kernel) --> project (matmul, offloaded to the simulated
    v3_16 accelerator of matmul_v3.json) --> rectify (C kernel) --> collected

Each item is one 16x16 ``i32`` frame; ``reference(frames)`` is the same computation
in numpy.
"""

from __future__ import annotations

import numpy as np

from loom import I32, MemRef, kernel
from loom.dataflow import Accelerator, Graph, Process
from loom.examples.dataflow.listing1 import MATMUL_V3, mm

S = 16
FRAME = f"memref<{S}x{S}xi32>"


@kernel
def brighten(A: MemRef[(16, 16), I32], B: MemRef[(16, 16), I32]):
    for i in range(16):
        for j in range(16):
            B[i, j] = A[i, j] * 2 + 1


@kernel
def rectify(A: MemRef[(16, 16), I32], B: MemRef[(16, 16), I32]):
    for i in range(16):
        for j in range(16):
            v = A[i, j]
            if v < 0:
                v = 0
            B[i, j] = v


def weights(seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).integers(-3, 4, size=(S, S)).astype(np.int32)


def frames(n: int, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-20, 20, size=(S, S)).astype(np.int32) for _ in range(n)]


def reference(items: list[np.ndarray], w: np.ndarray) -> list[np.ndarray]:
    return [np.maximum((f.astype(np.int64) * 2 + 1) @ w, 0).astype(np.int32) for f in items]


def build(items: list[np.ndarray], w: np.ndarray, offloaded: bool = True, depth: int = 2) -> Graph:
    g = Graph("image_pipeline")
    raw, bright, projected, out = (g.channel(FRAME, depth=depth, name=n) for n in ("raw", "bright", "projected", "out"))

    def feed(port):
        for f in items:
            port.push(f)

    def project(run, frame):
        c = np.zeros((S, S), np.int32)
        run(frame, w, c)  # C += frame . w on the accelerator (or the CPU kernel when not offloaded)
        return c

    g.node(Process(feed), outputs=[raw], name="frames")
    g.node(brighten, inputs=[raw], outputs=[bright])
    g.node(Accelerator(mm, MATMUL_V3, "v3_16", "As", adapter=project), inputs=[bright], outputs=[projected],
           name="project", offloaded=offloaded)
    g.node(rectify, inputs=[projected], outputs=[out])
    g.output(out, "result")
    return g


def graph() -> Graph:
    """What ``loom dataflow run image_pipeline.py`` runs."""
    return build(frames(8), weights())
