"""Tuning an accelerator driver: flow, flexible tile sizes and double buffering, by modelled time.

    objective = AccelObjective(kernel, "matmul_v4.json", "v4_16", [A, B, C])
    result = tune(objective, budget=40)

Each point compiles the driver, runs it on the simulated accelerator and takes the timing
model's total (``loom.driver.autotune.measured_seconds``); its output must equal the CPU
kernel's on the same inputs. Tiles that do not fit the accelerator's buffers are failed points.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loom.errors import LoomError
from loom.tune.space import Choice, Space


class AccelObjective:
    def __init__(self, kernel, description: str, accelerator: str | None, args: Sequence[np.ndarray],
                 *, double_buffer: Sequence[bool] = (False, True)):
        from loom.accel.description import load_description
        from loom.driver.autotune import tile_choices

        self.kernel, self.description = kernel, str(description)
        system = load_description(self.description)
        self.acc = system.accelerator(accelerator) if accelerator else system.accelerators[0]
        self.args = list(args)
        self.reference = [a.copy() for a in self.args]
        kernel(*self.reference)
        problem = self._problem()
        choices = {"flow": Choice(tuple(f.name for f in self.acc.flows))}
        for tile in self.acc.tiles.tiles:
            if tile.kind == "flexible":
                choices[f"tile_{tile.dim}"] = Choice(tuple(tile_choices(self.acc, tile.dim, problem[tile.dim])))
        choices["double_buffer"] = Choice(tuple(double_buffer))
        self.space = Space(choices)
        self.ir = str(getattr(kernel, "module", kernel))
        self.options = {"description": self.acc.name, "shapes": [list(a.shape) for a in self.args],
                        "dtypes": [str(a.dtype) for a in self.args]}

    def _problem(self) -> dict[str, int]:
        from loom.driver.compile import compile_driver

        flow = self.acc.flows[0].name
        return compile_driver(self.kernel, self.description, self.acc.name, flow).problem_dims(self.args)

    def evaluate(self, params: dict) -> tuple[float, str]:
        from loom.driver.autotune import measured_seconds
        from loom.driver.compile import compile_driver

        tiles = {k[len("tile_"):]: v for k, v in params.items() if k.startswith("tile_")}
        drv = compile_driver(self.kernel, self.description, self.acc.name, params["flow"],
                             tile_sizes=tiles or None, double_buffer=params["double_buffer"])
        arrays = [a.copy() for a in self.args]
        stats = drv(*arrays)
        for k, (got, want) in enumerate(zip(arrays, self.reference)):
            if not np.allclose(got, want, rtol=1e-4, atol=1e-3):
                raise LoomError(f"driver {params} changes argument {k}")
        return measured_seconds(stats, self.acc), f"{drv.summary.flow} {tiles} double_buffer={params['double_buffer']}"


# ------------------------------------------------------------------------------ sweep points
# Host costs of the deterministic host model used by design points: results do not depend on the
# machine or on its load, so a sweep gives the same figures on a local pool and on a cluster.
SWEEP_CALL_S = 1e-6   # per runtime call
SWEEP_WORD_S = 4e-9   # per 32-bit word copied by the host


def matmul_design_point(point: dict) -> dict:
    """One compile + simulate point of a matmul on an accelerator (a sweep function).

    ``point``: description, accelerator, flow, M, N, K, optional ``tile_<dim>`` and double_buffer.
    Returns the modelled time (deterministic host costs ``SWEEP_CALL_S``/``SWEEP_WORD_S``), the
    transfers, and the accelerator buffer words the tiles occupy (the resource axis of a Pareto
    front). Raises LoomError for points that cannot be built (e.g. tiles over the buffers)."""
    from loom.runtime.lock import RUNTIME_LOCK

    with RUNTIME_LOCK:  # compile and run one point at a time per process (thread executors take turns)
        return _design_point(point)


def _design_point(point: dict) -> dict:
    from xdsl.dialects.builtin import f32, i32

    from loom.accel.description import load_description
    from loom.driver.autotune import measured_seconds
    from loom.driver.compile import compile_driver
    from loom.frontends.kernel import linalg as L
    from loom.runtime.build import load_library
    from loom.runtime.timing import deterministic_host

    acc = load_description(point["description"]).accelerator(point["accelerator"])
    m, n, k = (int(point[d]) for d in ("M", "N", "K"))
    dtype = np.float32 if acc.data_type == "f32" else np.int32
    module = L.op_module("matmul", [(m, k), (k, n), (m, n)], f32 if dtype is np.float32 else i32, L.matmul)
    tiles = {key[len("tile_"):]: int(v) for key, v in point.items() if key.startswith("tile_")}
    drv = compile_driver(module, point["description"], acc.name, point["flow"], tile_sizes=tiles or None,
                         double_buffer=bool(point.get("double_buffer", False)))
    rng = np.random.default_rng(0)
    a, b = rng.integers(-4, 4, (m, k)).astype(dtype), rng.integers(-4, 4, (k, n)).astype(dtype)
    c = np.zeros((m, n), dtype)
    with deterministic_host(load_library(), call_s=SWEEP_CALL_S, word_s=SWEEP_WORD_S):
        stats = drv(a, b, c)
    if not np.array_equal(c, (a.astype(np.int64) @ b.astype(np.int64)).astype(dtype)):
        raise LoomError(f"wrong result for {point}")
    used = drv.summary.tile_sizes
    buffer_words = sum(int(np.prod([used.get(s, 1) or 1 for s in subs])) for subs in (("m", "k"), ("k", "n"), ("m", "n")))
    t = stats.transfers
    return {"modelled_s": measured_seconds(stats, acc), "transfers": t.sends + t.recvs,
            "words": t.words_sent + t.words_received, "buffer_words": buffer_words}
