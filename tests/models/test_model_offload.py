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


def _f32_copy(tmp: Path, source: str = "matmul_v4.json") -> str:
    """The shipped descriptions take i32; the same accelerator switched to f32 (the simulator models both)."""
    data = json.loads((ACCELERATORS / source).read_text())
    data["cpu"] = json.loads((ACCELERATORS / "pynq-z2.json").read_text())["cpu"]
    for acc in data["accelerators"]:
        acc["data_type"] = "f32"
    path = tmp / source.replace(".json", "_f32.json")
    path.write_text(json.dumps(data))
    return str(path)


def test_encoder_matmuls_on_v4_equal_the_cpu(tmp_path):
    model = tiny_bert_encoder(seed=2, layers=1, hidden=48, heads=4, ffn=80, vocab=100, max_positions=32)
    ids = torch.randint(0, 100, (2, 12), generator=torch.Generator().manual_seed(3))
    graph = loom.models.import_model(model, (ids,))
    from loom.models.compiler import compile_graph

    cpu = compile_graph(graph)
    offloaded = compile_graph(graph, accelerators=[_f32_copy(tmp_path)])
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


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, stride=2, bias=False)
        self.depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.fc = torch.nn.Linear(8 * 3 * 3, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv1(x)))
        y = self.depthwise(self.conv2(y))
        return self.fc(y.flatten(1))


def test_convolutions_on_the_conv_accelerator_and_linear_on_v4(tmp_path):
    torch.manual_seed(0)
    model = SmallCnn().eval()
    x = torch.randn(1, 3, 8, 8)
    graph = loom.models.import_model(model, (x,))
    from loom.models.compiler import compile_graph

    cpu = compile_graph(graph)
    offloaded = compile_graph(graph, accelerators=[_f32_copy(tmp_path, "conv2d.json"), _f32_copy(tmp_path)])
    got = offloaded(x.numpy(), profile=True)
    assert relative_error(got, cpu(x.numpy()).astype(np.float64)) <= 1e-5
    with torch.no_grad():
        assert relative_error(got, model(x).numpy().astype(np.float64)) <= 1e-5
    devices = [(r.kind, r.device) for r in layer_report(offloaded.last_profile) if r.device != "view"]
    # conv1 (padded, batch norm folded) and conv2 (stride 2) on the conv accelerator; the grouped one on
    # the CPU; the linear layer on v4
    assert devices == [("conv2d", "conv_os"), ("unary:relu", "cpu"), ("conv2d", "conv_os"),
                       ("grouped_conv2d", "cpu"), ("matmul", "v4_16")]


def test_flow_auto_picks_a_driver_per_product_shape(tmp_path):
    """(path, None, "auto"): each distinct product shape gets its own --flow auto driver; results equal
    the CPU's and, host time deterministic, no layer is modelled slower than with the selected flow."""
    from loom.models.compiler import compile_graph
    from loom.runtime.build import load_library
    from loom.runtime.timing import deterministic_host

    model = tiny_bert_encoder(seed=2, layers=1, hidden=48, heads=4, ffn=80, vocab=100, max_positions=32)
    ids = torch.randint(0, 100, (2, 12), generator=torch.Generator().manual_seed(3))
    graph = loom.models.import_model(model, (ids,))
    desc = _f32_copy(tmp_path)
    want = compile_graph(graph)(ids.numpy())
    plain = compile_graph(graph, accelerators=[desc])
    auto = compile_graph(graph, accelerators=[(desc, None, "auto")])
    assert set(auto.runners) == set(plain.runners)
    with deterministic_host(load_library(), call_s=100e-9, word_s=1e-9):
        got = auto(ids.numpy(), profile=True)
        modelled_auto = {k: r.modelled_s for k, r in auto.runners.items()}
        plain(ids.numpy())
        modelled_plain = {k: r.modelled_s for k, r in plain.runners.items()}
    assert relative_error(got, want.astype(np.float64)) <= 1e-5
    shapes = {tuple(t.shape for t in graph.layers[k].inputs[:2]) for k in auto.runners}
    drivers = {id(r.driver) for r in auto.runners.values()}
    assert len(drivers) == len({(s[0][-2:], s[1][-2:]) for s in shapes}) > 1  # one per distinct product
    assert all(modelled_auto[k] <= 1.001 * modelled_plain[k] for k in auto.runners), (modelled_auto, modelled_plain)
    assert sum(modelled_auto.values()) < sum(modelled_plain.values())
    assert all(r.schedule for r in auto.runners.values())
    report = {r.index: r for r in layer_report(auto.last_profile)}
    assert all(report[k].schedule == auto.runners[k].schedule for k in auto.runners)
