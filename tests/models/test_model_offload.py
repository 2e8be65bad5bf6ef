"""Matrix products of a model offloaded to the MatMul v4 accelerator (simulated), equal to CPU-only."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import loom
from loom.errors import LoomError
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
    offloaded = compile_graph(graph, accelerators=[_f32_copy(tmp_path)], offload="always")
    want = cpu(ids.numpy())
    got = offloaded(ids.numpy(), profile=True)
    assert relative_error(got, want.astype(np.float64)) <= 1e-5
    rows = [r for r in layer_report(offloaded.last_profile) if r.device != "view"]
    on_accel = [r for r in rows if r.device == "v4_16"]
    # q, k, v, output, two FFN linears, and both attention products
    assert sorted(r.kind for r in on_accel) == ["batch_matmul"] * 2 + ["matmul"] * 6
    # each attention product layer: one call of a batch-loop driver (all heads in one DMA session)
    assert sorted(r.driver.batch_dims for r in offloaded.runners.values()) == [0] * 6 + [1] * 2
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
    offloaded = compile_graph(graph, accelerators=[_f32_copy(tmp_path, "conv2d.json"), _f32_copy(tmp_path)],
                              offload="always")
    got = offloaded(x.numpy(), profile=True)
    assert relative_error(got, cpu(x.numpy()).astype(np.float64)) <= 1e-5
    with torch.no_grad():
        assert relative_error(got, model(x).numpy().astype(np.float64)) <= 1e-5
    devices = [(r.kind, r.device) for r in layer_report(offloaded.last_profile) if r.device != "view"]
    # conv1 (padded, batch norm folded) and conv2 (stride 2) on the conv accelerator; the grouped one on
    # the CPU; the linear layer on v4
    assert devices == [("conv2d", "conv_os"), ("unary:relu", "cpu"), ("conv2d", "conv_os"),
                       ("grouped_conv2d", "cpu"), ("matmul", "v4_16")]
    # the plan models every runner (the when-faster decision's input): convolutions and products alike
    assert all(r.modelled_estimate_s > 0 for r in offloaded.runners.values())


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
    plain = compile_graph(graph, accelerators=[desc], offload="always")
    auto = compile_graph(graph, accelerators=[(desc, None, "auto")], offload="always")
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


def _with_timing(tmp: Path, timing: dict, name: str) -> str:
    """The f32 v4 description with ``timing`` constants on v4_16 (how fast the modelled accelerator is)."""
    data = json.loads(Path(_f32_copy(tmp)).read_text())
    next(a for a in data["accelerators"] if a["name"] == "v4_16")["timing"] = timing
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


def _linear_graph():
    torch.manual_seed(4)
    model = torch.nn.Linear(256, 256)
    x = torch.randn(128, 256)
    return model, x, loom.models.import_model(model, (x,))


def test_a_layer_the_model_says_loses_stays_on_the_cpu_with_the_reason(tmp_path):
    """DMA set-up of 10^9 cycles (5 s per transaction at 200 MHz): the modelled accelerator loses by
    orders of magnitude to the CPU's ~1 ms; the layer stays on the CPU, the plan and report say why."""
    from loom.models.compiler import compile_graph

    model, x, graph = _linear_graph()
    slow = _with_timing(tmp_path, {"dma_latency_cycles": 10 ** 9}, "slow")
    compiled = compile_graph(graph, accelerators=[slow])  # offload="when-faster" is the default
    assert not compiled.runners
    (index, why), = compiled.kept_on_cpu.items()
    assert graph.layers[index].kind == "matmul"
    modelled, cpu = (float(v) for v in re.fullmatch(r"kept on CPU: modelled (\S+) ms on v4_16 vs (\S+) ms on CPU",
                                                    why).groups())
    assert modelled > 1000 * cpu  # seconds against at most milliseconds
    assert any(r.startswith(f"layer {index} (matmul") and r.endswith(why) for r in compiled.offload_reasons)
    got = compiled(x.numpy(), profile=True)
    with torch.no_grad():
        assert relative_error(got, model(x).numpy().astype(np.float64)) <= 1e-5
    assert np.array_equal(got, compile_graph(graph)(x.numpy()))  # the CPU-only function ran
    row = next(r for r in layer_report(compiled.last_profile) if r.index == index)
    assert (row.device, row.note, row.modelled_ms) == ("cpu", why, None)


def test_a_layer_the_model_says_wins_is_offloaded(tmp_path):
    """A 10^6 MHz clock, 10^9 MACs per cycle, 64 Kib stream, no DMA set-up: the modelled time is the
    host's copies (~0.1 ms for this product's ~0.3 M words) against ~1 ms of CPU for 8.4 M MACs."""
    from loom.driver.autotune import calibrate
    from loom.models.compiler import compile_graph

    model, x, graph = _linear_graph()
    fast = _with_timing(tmp_path, {"clock_mhz": 1e6, "ops_per_cycle": 1e9, "stream_width_bits": 65536,
                                   "dma_latency_cycles": 0}, "fast")
    compiled = compile_graph(graph, accelerators=[fast])
    assert len(compiled.runners) == 1 and not compiled.kept_on_cpu, compiled.offload_reasons
    (index, runner), = compiled.runners.items()
    assert runner.modelled_estimate_s < runner.cpu_estimate_s
    # the estimate is the cost model's: host copies and calls (DMA and compute are ~free here)
    from loom.accel.description import load_description

    params = calibrate(load_description(fast).accelerator("v4_16"), fast)
    words = 128 * 256 + 256 * 256 + 128 * 256  # at least every operand once
    assert runner.modelled_estimate_s >= words * params.host_s_per_word
    got = compiled(x.numpy(), profile=True)
    with torch.no_grad():
        assert relative_error(got, model(x).numpy().astype(np.float64)) <= 1e-5
    row = next(r for r in layer_report(compiled.last_profile) if r.index == index)
    assert row.device == "v4_16" and row.modelled_ms > 0 and not row.note


def test_an_unknown_offload_policy_is_refused():
    model, x, _ = _linear_graph()
    with pytest.raises(LoomError, match=r"offload: expected one of 'always', 'when-faster', found 'sometimes'"):
        loom.models.compile(model, (x,), accelerators=[str(ACCELERATORS / "matmul_v4.json")], offload="sometimes")


def _compiled_functions(monkeypatch) -> list[set[str]]:
    """Spy on the C backend: the function names of every module compile_graph compiles."""
    import loom.backends.c

    seen, real = [], loom.backends.c.compile_module

    def spy(module, **kw):
        seen.append({op.sym_name.data for op in module.body.block.ops if hasattr(op, "sym_name")})
        return real(module, **kw)

    monkeypatch.setattr(loom.backends.c, "compile_module", spy)
    return seen


@pytest.mark.parametrize("slow", [True, False])
def test_a_padded_convolution_kept_on_the_cpu_compiles_no_pad_layer(tmp_path, monkeypatch, slow):
    """The pad layer an offloaded convolution needs is compiled only when the convolution is offloaded."""
    from loom.models.compiler import compile_graph

    torch.manual_seed(5)
    model = torch.nn.Conv2d(3, 4, 3, padding=1).eval()
    x = torch.randn(1, 3, 6, 6)
    graph = loom.models.import_model(model, (x,))
    data = json.loads(Path(_f32_copy(tmp_path, "conv2d.json")).read_text())
    if slow:  # 10^9 cycles of DMA set-up: the CPU wins
        data["accelerators"][0]["timing"] = {"dma_latency_cycles": 10 ** 9}
    desc = tmp_path / "conv.json"
    desc.write_text(json.dumps(data))
    seen = _compiled_functions(monkeypatch)
    compiled = compile_graph(graph, accelerators=[str(desc)], offload="when-faster" if slow else "always")
    compiled_names = set().union(*seen)
    if slow:
        assert not compiled.runners and len(compiled.kept_on_cpu) == 1
        assert not any(n.startswith("pad") for n in compiled_names), seen
    else:
        (runner,) = compiled.runners.values()
        assert runner.pad is not None and any(n.startswith("pad") for n in compiled_names), seen
    with torch.no_grad():
        assert relative_error(compiled(x.numpy()), model(x).numpy().astype(np.float64)) <= 1e-5
