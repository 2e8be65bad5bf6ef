"""Fuzz host (cpu / caches) description files: random chains of ``"cpu": "file.json"`` references
(cycles, self-references, missing files, folders, ``..`` paths, non-UTF-8 bytes, wrong shapes) with
mutated cache lists. Loading, and embedding the host into the IR attribute as ``compile_driver`` does,
succeed or raise a located LoomError."""

from __future__ import annotations

import json
import random

from loom.accel import load_description
from loom.passes.accel_ir import embed_description, read_description_file
from tests.fuzz.accel_mutator import FUZZ_SCALE, check_outcome, example, mutate_tree

HOST = json.loads(json.dumps(example("matmul_v3.json")["cpu"]))
NAMES = ["h0.json", "h1.json", "h2.json", "sub/h3.json", "../h4.json", "missing.json", "sub", "", ".", "main.json"]


def _host_value(rng: random.Random):
    if rng.random() < 0.5:
        return rng.choice(NAMES)
    return mutate_tree(rng, {"cpu": HOST}).get("cpu", 7) if rng.random() < 0.7 else HOST


def _write_files(rng: random.Random, root) -> None:
    (root / "sub").mkdir(parents=True, exist_ok=True)
    for name in NAMES[:5]:
        path = (root / name).resolve()
        kind = rng.randrange(8)
        if kind == 0:
            path.write_bytes(b'{"cpu": "\xff"}')
        elif kind == 1:
            path.write_text(json.dumps({"notes": "no cpu here"}))
        elif kind == 2:
            path.write_text("[1, 2]")
        elif kind == 3:
            path.write_text('{"cpu": "h0.json", "cpu": "h1.json"}')
        else:
            path.write_text(json.dumps({"cpu": _host_value(rng)}))


def test_host_reference_graphs_load_or_fail_located(tmp_path):
    rng = random.Random(9006)
    outcomes = set()
    for i in range(120 * FUZZ_SCALE):
        root = tmp_path / f"case{i}" / "d"
        _write_files(rng, root)
        main = example("matmul_v3.json")
        main["cpu"] = _host_value(rng)
        path = root / "main.json"
        path.write_text(json.dumps(main))
        files = {p.name: p.read_bytes()[:300] for p in root.parent.rglob("*.json")}
        system = check_outcome(lambda: load_description(path), lambda: f"main: {main['cpu']!r}\n{files}")
        outcomes.add(system is not None)
        if system is not None:  # what compile_driver puts into the IR: the same host, inlined
            _, raw = read_description_file(str(path))
            attr = embed_description(raw, str(path), system.accelerators[0].name)
            embedded = json.loads(attr.description.data)
            assert (system.host is None) == ("cpu" not in embedded)
            if system.host is not None:
                assert [c["name"] for c in embedded["cpu"]["caches"]] == [c.name for c in system.host.caches]
    assert outcomes == {True, False}
