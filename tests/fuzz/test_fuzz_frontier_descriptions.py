"""Fuzz the loader and the generic model's flow check from the researchers' descriptions (signature
kernels, "full" and non-square tiles, quoted ids, list init_opcodes, opcode_semantics, file host
references inlined): a mutated description loads or fails located, and so does the generic model's
play of every flow with its opcodes' steps (``GenericModel.check``)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from loom.accel import load_description
from loom.runtime.generic_model import GenericModel
from tests.fuzz.accel_mutator import FUZZ_SCALE, check_outcome, mutate_tree, short

ACCEL_FLOW = Path(__file__).resolve().parents[1] / "accel_flow"


def _seeds() -> list[dict]:
    seeds = []
    for folder in ("frontier", "researcher"):
        for path in sorted((ACCEL_FLOW / folder).glob("*.json")):
            data = json.loads(path.read_text())
            if "accelerators" not in data:
                continue  # a host file
            if isinstance(data.get("cpu"), str):
                data["cpu"] = json.loads((path.parent / data["cpu"]).read_text())["cpu"]
            seeds.append(data)
    return seeds


def test_mutated_researcher_descriptions_load_and_check_or_fail_located():
    rng = random.Random(4242)
    seeds = _seeds()
    loaded = failed = checked = 0
    for _ in range(200 * FUZZ_SCALE):
        data = mutate_tree(rng, rng.choice(seeds))
        system = check_outcome(lambda: load_description(data), lambda: short(data))
        failed += system is None
        if system is None:
            continue
        loaded += 1
        for acc in system.accelerators:
            if acc.model is not None and acc.model.kind == "generic":
                check_outcome(lambda: GenericModel.check(acc), lambda: short(data))
                checked += 1
    assert loaded > 10 and failed > 30 and checked > 2, (loaded, failed, checked)
