"""Fuzz ``compile_driver`` with mutated descriptions of the shipped accelerators.

Two kinds of inputs, both from a seeded generator:

* structural mutations (``mutate_tree``): any edit of the description; every stage pipeline and the
  C emitter run (``build=False``), and the outcome is a driver or a located LoomError, never an
  xDSL verifier error, an invalid IR or a Python exception;
* meaning-preserving variants of MatMul v1..v4 (another flow, other square tile sizes with buffers to
  match, coalescing, double buffering, no cache tiling): these are built, run on the simulator with
  small odd problem sizes and compared with numpy.

Bounded for CI; ``LOOM_FUZZ_SCALE`` multiplies the counts."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from xdsl.parser import Parser

from loom.dialects import context
from loom.driver.compile import compile_driver, stage_files
from tests.accel_flow.accel_flow_helpers import conv_module, matmul_module
from tests.fuzz.accel_mutator import FUZZ_SCALE, check_outcome, example, mutate_tree, short

SEEDS = {"matmul_v1.json": "matmul", "matmul_v2.json": "matmul", "matmul_v3.json": "matmul",
         "matmul_v4.json": "matmul", "conv2d.json": "conv"}


def _reads_back(drv) -> None:
    """Every stage file of an accepted description parses back (names and JSON survive printing)."""
    for name, text in stage_files(drv).items():
        try:
            Parser(context(), text).parse_module()
        except Exception as err:  # noqa: BLE001 - the assertion carries the stage
            raise AssertionError(f"stage {name} does not read back: {err}") from None


def _kernel(kind: str):
    return matmul_module() if kind == "matmul" else conv_module(1)


def test_mutated_descriptions_compile_or_fail_located(tmp_path):
    rng = random.Random(9007)
    compiled = failed = 0
    for i in range(30 * FUZZ_SCALE):
        name, kind = rng.choice(sorted(SEEDS.items()))
        data = mutate_tree(rng, example(name, rng.randrange(3) if name == "matmul_v3.json" else 0), edits=1)
        path = tmp_path / f"m{i}.json"
        path.write_text(json.dumps(data))
        drv = check_outcome(lambda: compile_driver(_kernel(kind), path, build=False),
                            lambda: short(data))
        if drv is not None and compiled < 3 * FUZZ_SCALE:
            _reads_back(drv)
        compiled += drv is not None
        failed += drv is None
    assert compiled >= 3 and failed >= 3, (compiled, failed)


def _variant(rng: random.Random) -> tuple[dict, str]:
    """A MatMul description that means the same computation: flow, tiles, buffers vary."""
    version = rng.choice([1, 2, 3, 4])
    data = example(f"matmul_v{version}.json")
    acc = data["accelerators"][0]
    flow = rng.choice(sorted(acc["opcode_flows"]))
    if version in (1, 2, 3):  # the model size is the m tile: keep tiles square
        t = rng.choice([4, 8])  # the shipped models take 4, 8 and 16
        acc["tile_sizes"] = {d: t for d in acc["tile_sizes"]}
        acc["buffers"] = {op: t * t for op in acc.get("buffers", {"A": 0, "B": 0, "C": 0})}
    return data, flow


@pytest.mark.sanitize
def test_meaning_preserving_variants_run_and_equal_numpy(tmp_path):
    rng = random.Random(9008)
    for i in range(3 * FUZZ_SCALE):
        data, flow = _variant(rng)
        path = tmp_path / f"v{i}.json"
        path.write_text(json.dumps(data))
        options = {"coalesce": rng.random() < 0.3, "cache_tiling": rng.random() < 0.7}
        options["double_buffer"] = options["coalesce"] and rng.random() < 0.5
        drv = check_outcome(lambda: compile_driver(matmul_module(), path, flow=flow, **options),
                            lambda: f"flow {flow} {options}\n{short(data)}")
        assert drv is not None, f"a valid variant was refused: flow {flow} {options}\n{short(data)}"
        M, N, K = (rng.choice([1, 3, 5, 7, 9, 11]) for _ in range(3))
        A = rng.randint(-9, 9) + np.arange(M * K, dtype=np.int32).reshape(M, K) % 7
        B = np.arange(K * N, dtype=np.int32).reshape(K, N) % 5 - 2
        C = np.full((M, N), 3, np.int32)
        want = C + A @ B
        drv(A, B, C)
        assert np.array_equal(C, want), f"{M}x{N}x{K} flow {flow} {options}\n{short(data)}"


def _random_flow(rng: random.Random, ids: list[str], depth: int) -> str:
    """A random nest of scopes over the map's ids: what a user might try for a new reuse pattern."""
    text = " ".join(rng.sample(ids, rng.randint(1, min(3, len(ids)))))
    for _ in range(depth - 1):
        before = " ".join(rng.sample(ids, rng.randint(0, 1)))
        after = " ".join(rng.sample(ids, rng.randint(0, 1)))
        text = " ".join(t for t in (before, f"({text})", after) if t)
    return f"({text})"


def test_generated_flows_permutations_and_regions_compile_or_fail_located(tmp_path):
    """Random flows (scopes, ids, loop orders, region operands) on MatMul v3 and the conv accelerator:
    the placement rules either accept them, and then every pass and the C emitter run, or say why."""
    rng = random.Random(9009)
    compiled = 0
    for i in range(100 * FUZZ_SCALE):
        name = rng.choice(["matmul_v3.json", "conv2d.json", "matmul_v4.json"])
        data = example(name)
        acc = data["accelerators"][0]
        ids = [e.split("=")[0].strip() for e in acc["opcode_map"].removeprefix("opcode_map<")[:-1].split("], ")]
        dims = list(acc["tile_sizes"])
        if rng.random() < 0.4:  # some dims taken whole
            for d in rng.sample(dims, rng.randint(1, 2)):
                acc["tile_sizes"][d] = "full"
            acc.pop("buffers", None)
        order = rng.sample(dims, len(dims))
        loops = sum(1 for d in order if acc["tile_sizes"][d] != "full")
        flow = {"flow": _random_flow(rng, ids, rng.randint(1, max(1, loops))),
                "permutation": f"({', '.join(dims)}) -> ({', '.join(order)})",
                "accumulate_on_cpu": rng.random() < 0.5}
        if rng.random() < 0.4:
            flow["region_operands"] = rng.sample([o["name"] for o in acc["operands"]], rng.randint(1, 2))
        acc["opcode_flows"] = {"F": flow}
        acc["selected_flow"] = "F"
        if rng.random() < 0.3:
            acc["init_opcodes"] = f"({rng.choice(ids)})"
        path = tmp_path / f"g{i}.json"
        path.write_text(json.dumps(data))
        kind = SEEDS[name]
        drv = check_outcome(lambda: compile_driver(_kernel(kind), path, build=False), lambda: short(data))
        if drv is not None and compiled < 2:  # the C of the first accepted ones must also compile
            assert compile_driver(_kernel(kind), path).compiled is not None
        compiled += drv is not None
    assert compiled >= 1
