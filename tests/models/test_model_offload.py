"""Matrix products of a model offloaded to the MatMul v4 accelerator (simulated), equal to CPU-only."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import loom
from tests.models.helpers import relative_error

torch = pytest.importorskip("torch")

import loom.models  # noqa: E402
from loom.examples.models import tiny_bert_encoder  # noqa: E402
from loom.models.report import layer_report  # noqa: E402

ACCELERATORS = Path(loom.__file__).parent / "examples" / "accelerators"


def _f32_v4(tmp: Path) -> str:
    """The shipped v4 takes i32; the same accelerator switched to f32 (the simulator models both)."""
    data = json.loads((ACCELERATORS / "matmul_v4.json").read_text())
    data["cpu"] = json.loads((ACCELERATORS / "pynq-z2.json").read_text())["cpu"]
    for acc in data["accelerators"]:
        acc["data_type"] = "f32"
    path = tmp / "matmul_v4_f32.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_encoder_matmuls_on_v4_equal_the_cpu(tmp_path):
    model = tiny_bert_encoder(seed=2, layers=1, hidden=48, heads=4, ffn=80, vocab=100, max_positions=32)
    ids = torch.randint(0, 100, (2, 12), generator=torch.Generator().manual_seed(3))
    graph = loom.models.import_model(model, (ids,))
    from loom.models.compiler import compile_graph

    cpu = compile_graph(graph)
    offloaded = compile_graph(graph, accelerators=[_f32_v4(tmp_path)])
    want = cpu(ids.numpy())
    got = offloaded(ids.numpy(), profile=True)
    assert relative_error(got, want.astype(np.float64)) <= 1e-5
    rows = [r for r in layer_report(offloaded.last_profile) if r.device != "view"]
    on_accel = [r for r in rows if r.device == "v4_16"]
    # q, k, v, output, two FFN linears, and both attention products
    assert sorted(r.kind for r in on_accel) == ["batch_matmul"] * 2 + ["matmul"] * 6
    assert all(r.modelled_ms and r.modelled_ms > 0 for r in on_accel)
    assert all(r.device == "cpu" for r in rows if not r.kind.endswith("matmul"))


def test_an_i32_accelerator_leaves_f32_layers_on_the_cpu():
    model = torch.nn.Linear(8, 4)
    compiled = loom.models.compile(model, (torch.randn(3, 8),), accelerators=[str(ACCELERATORS / "matmul_v4.json")])
    assert not compiled.runners
    assert any("data type mismatch" in r for r in compiled.offload_reasons)
