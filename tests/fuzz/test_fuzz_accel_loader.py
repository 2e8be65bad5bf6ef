"""Fuzz the accelerator description loader: JSON text and decoded JSON in, a validated description
or a located LoomError out (``tests/fuzz/accel_mutator.py`` holds the mutator and the contract).

Bounded for CI (a few seconds); ``LOOM_FUZZ_SCALE=50`` runs fifty times as many inputs."""

from __future__ import annotations

import json
import random

from loom.accel import load_description
from tests.fuzz.accel_mutator import FUZZ_SCALE, check_outcome, mutate_text, mutate_tree, seeds, short


def _load_text(tmp_path, text):
    path = tmp_path / "fuzz.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return load_description(path)


def test_structural_mutations_load_or_fail_located(tmp_path):
    rng = random.Random(9004)
    loaded = failed = 0
    for i in range(300 * FUZZ_SCALE):
        data = mutate_tree(rng, rng.choice(seeds()))
        text = json.dumps(data)
        # the same input through both doors: a file (text) and an already-decoded dict
        from_file = check_outcome(lambda: _load_text(tmp_path, text), lambda: short(text))
        from_dict = check_outcome(lambda: load_description(data), lambda: short(text))
        assert (from_file is None) == (from_dict is None), f"file and dict disagree on:\n{short(text)}"
        loaded += from_file is not None
        failed += from_file is None
    # the mutator must exercise both outcomes, or it is not testing much
    assert loaded > 10 and failed > 100, (loaded, failed)


def test_text_mutations_load_or_fail_located(tmp_path):
    rng = random.Random(9005)
    texts = [json.dumps(s, indent=rng.choice([None, 2])) for s in seeds()]
    outcomes = set()
    for _ in range(300 * FUZZ_SCALE):
        text = mutate_text(rng, rng.choice(texts))
        outcomes.add(check_outcome(lambda: _load_text(tmp_path, text), lambda: short(text)) is None)
    assert outcomes == {True, False}
