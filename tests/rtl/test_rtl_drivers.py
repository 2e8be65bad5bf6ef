"""Generated host drivers for every flow of matmul_rtl.json run on the Verilated RTL MatMul
(through the simulator backend) and equal numpy; the RTL's clock cycles are compared with the
timing model's prediction; a description's bad "model" is a located LoomError."""

from __future__ import annotations

import functools
import re
import json

import numpy as np
import pytest

from loom.accel import load_description
from loom.accel.timing import timing_config
from loom.driver import compile_driver
from loom.errors import LoomError
from loom.runtime.timing import predicted_accelerator_cycles
from tests.accel_flow.accel_flow_helpers import matmul_module
from tests.rtl.rtl_helpers import DESCRIPTION, model_so

FLOWS = [f.name for f in load_description(DESCRIPTION).accelerator("rtl_4").flows]


@functools.cache
def driver(accelerator: str, flow: str):
    return compile_driver(matmul_module(), DESCRIPTION, accelerator, flow)


def problem(rng, m, n, k):
    a = rng.integers(-1000, 1000, (m, k)).astype(np.int32)
    b = rng.integers(-1000, 1000, (k, n)).astype(np.int32)
    c = rng.integers(-1000, 1000, (m, n)).astype(np.int32)
    return a, b, c, c + a @ b


def test_the_description_has_the_four_v3_flows():
    assert sorted(FLOWS) == ["As", "Bs", "Cs", "Ns"]


@pytest.mark.sanitize
@pytest.mark.parametrize("flow", FLOWS)
def test_every_flow_on_rtl_equals_numpy(flow):
    model_so(4)  # skip / fail here when Verilator is missing
    drv = driver("rtl_4", flow)
    rng = np.random.default_rng(len(flow))
    for m, n, k in [(9, 7, 11), (4, 4, 4), (1, 13, 6)]:
        a, b, c, expected = problem(rng, m, n, k)
        run = drv(a, b, c)
        np.testing.assert_array_equal(c, expected)
        analytic = drv.summary.expected_transfers({"m": m, "n": n, "k": k})
        assert (run.transfers.sends, run.transfers.recvs) == (analytic.sends, analytic.recvs)
        assert run.transfers.words_sent == analytic.words_sent
        # the RTL's clock count against the timing model (stream beats + compute, no DMA set-up):
        # the design is a zero-bubble pipeline, so the two agree exactly
        predicted = predicted_accelerator_cycles(run.timing, timing_config(drv.accelerator))
        assert run.model_cycles is not None and run.model_cycles > 0
        assert run.model_cycles / predicted == pytest.approx(1.0, abs=0.01), (flow, m, n, k)
        assert run.timing.macs == -(-m // 4) * -(-n // 4) * -(-k // 4) * 64


def test_tile_8_accelerator_runs_its_stationary_flow():
    model_so(8)
    drv = driver("rtl_8", "Cs")
    a, b, c, expected = problem(np.random.default_rng(8), 17, 9, 20)
    run = drv(a, b, c)
    np.testing.assert_array_equal(c, expected)
    assert run.model_cycles == pytest.approx(
        predicted_accelerator_cycles(run.timing, timing_config(drv.accelerator)), abs=1)


def test_builtin_models_report_no_cycles():
    from tests.accel_flow.accel_flow_helpers import desc
    drv = compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_4", "Ns")
    a, b, c, expected = problem(np.random.default_rng(0), 5, 5, 5)
    assert drv(a, b, c).model_cycles is None
    np.testing.assert_array_equal(c, expected)


def _variant(tmp_path, model):
    raw = json.loads(DESCRIPTION.read_text())
    entry = raw["accelerators"][0]
    entry["model"] = model
    raw["accelerators"] = [entry]
    raw["cpu"] = str(DESCRIPTION.parent / "pynq-z2.json")
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(raw))
    (tmp_path / "rtl").mkdir(exist_ok=True)
    (tmp_path / "rtl" / "matmul_os.sv").write_text((DESCRIPTION.parent / "rtl" / "matmul_os.sv").read_text())
    return path


@pytest.mark.parametrize("model,message,where", [
    ({"verilog": "rtl/matmul_os.sv"}, r"unknown model kind 'verilog'.*did you mean 'verilator'", "accelerators[0].model"),
    ("verilator:rtl/missing.sv", r"RTL source 'rtl/missing.sv' of accelerator rtl_4 not found", "accelerators[0].model"),
    ({"verilator": {"sources": ["rtl/missing.sv"]}}, r"RTL source 'rtl/missing.sv' of accelerator rtl_4 not found",
     "accelerators[0].model.verilator.sources[0]"),
    ({"verilator": {"sources": []}}, r"expected at least one", "accelerators[0].model.verilator.sources"),
    ({"verilator": {"source": "rtl/matmul_os.sv"}}, r"unknown key 'source'", "accelerators[0].model.verilator.source"),
    ({"verilator": {"sources": "rtl/matmul_os.sv", "parameters": {"T": [4]}}}, r"expected an integer or a string",
     "accelerators[0].model.verilator.parameters.T"),
    ({"verilator": 4}, r"expected a Verilator model", "accelerators[0].model.verilator"),
])
def test_bad_model_specs_are_located_errors(tmp_path, model, message, where):
    # the model is resolved (and built) when the driver is compiled, before anything runs
    with pytest.raises(LoomError, match=message) as info:
        compile_driver(matmul_module(), _variant(tmp_path, model), "rtl_4", "Ns")
    assert info.value.where == where
    assert info.value.filename == str(tmp_path / "variant.json")


@pytest.mark.parametrize("model,message", [
    ("rtl/matmul_os.sv", r"expected \"generic\", \"builtin:NAME\" or .*found 'rtl/matmul_os.sv'"),
    ({}, r"expected an object with one key naming the model kind .*found 0 keys"),
    ({"verilator": "a.sv", "python": "b.py"}, r"expected an object with one key .* found 2 keys"),
    (4, r"expected a model"),
])
def test_model_key_shape_is_checked_when_loading(tmp_path, model, message):
    with pytest.raises(LoomError, match=message) as info:
        load_description(_variant(tmp_path, model))
    assert info.value.where == "accelerators[0].model"


def test_sources_may_be_one_string_and_the_top_defaults_to_its_stem(tmp_path):
    model_so(4)
    path = _variant(tmp_path, {"verilator": {"sources": "rtl/matmul_os.sv", "parameters": {"T": 4}}})
    drv = compile_driver(matmul_module(), path, "rtl_4", "Ns")
    a, b, c, expected = problem(np.random.default_rng(2), 6, 5, 7)
    drv(a, b, c)
    np.testing.assert_array_equal(c, expected)


def test_an_rtl_whose_tile_differs_from_the_description_fails_loudly(tmp_path):
    # without "tile_sizes" loom cannot know what T means: the first send fails, naming the transfer, both
    # counts and the key that would have refused it before Verilator ran
    model_so(8)
    path = _variant(tmp_path, {"verilator": {"sources": ["rtl/matmul_os.sv"], "top": "matmul_os",
                                             "parameters": {"T": 8}}})
    drv = compile_driver(matmul_module(), path, "rtl_4", "Ns")
    a, b, c, _ = problem(np.random.default_rng(3), 4, 4, 4)
    with pytest.raises(LoomError, match=r"rtl_4 \(RTL\): tlast after 32 words of an operand block \(send #1, "
                                        r"word 32\): short transfer: the description's driver sent 33 words in "
                                        r"send #1 \(one transfer\) but the RTL expected more words in this operand "
                                        r"block than the 32 it received; .*\"tile_sizes\": \{\"PARAM\": \[dims\]\} "
                                        r"and loom refuses the mismatch before Verilator runs"):
        drv(a, b, c)


def test_an_rtl_whose_tile_is_smaller_than_the_description_names_the_likely_cause(tmp_path):
    # T = 2 against tiles of 4: the design takes 4 words as a block and reads the 5th as an opcode
    model_so(2)
    path = _variant(tmp_path, {"verilator": {"sources": ["rtl/matmul_os.sv"], "top": "matmul_os",
                                             "parameters": {"T": 2}}})
    drv = compile_driver(matmul_module(), path, "rtl_4", "Ns")
    a, b, c, _ = problem(np.random.default_rng(3), 4, 4, 4)
    with pytest.raises(LoomError, match=r"rtl_4 \(RTL\): unknown opcode \d+ \(send #1, word [1-9]\d*\); valid opcodes "
                                        r"are 1..15; it came inside a transfer.*design's tile parameter is smaller "
                                        r"than the description's tile sizes.*\"tile_sizes\": \{\"PARAM\": \[dims\]\} "
                                        r"and loom refuses the mismatch before Verilator runs"):
        drv(a, b, c)


@pytest.mark.parametrize("spec,message", [
    ({"parameters": {"T": 2}}, r"RTL parameter T = 2 \(accelerators\[0\]\.model\.verilator\.parameters\.T\) but "
                               r"the description's tile size of 'm' is 4 \(accelerators\[0\]\.tile_sizes\.m\)"),
    ({"parameters": {"T": 8}}, r"RTL parameter T = 8 \(accelerators\[0\]\.model\.verilator\.parameters\.T\) but "
                               r"the description's tile size of 'm' is 4 \(accelerators\[0\]\.tile_sizes\.m\)"),
    ({"parameters": {"T": 4}, "tile_sizes": {"T": ["m", "n", "q"]}}, r"unknown dim 'q'; expected one of m, n, k"),
    ({"top": "matmul_os_8"}, r"RTL parameter T = 8 \(the default in module matmul_os_8\) but the description's "
                             r"tile size of 'm' is 4 \(accelerators\[0\]\.tile_sizes\.m\)"),
    ({"top": "matmul_os_expr"}, r"no integer default for parameter T in module matmul_os_expr's header"),
])
def test_a_tile_parameter_differing_from_the_description_is_named_before_building(tmp_path, spec, message,
                                                                                   monkeypatch):
    # "tile_sizes" says T sizes m, n and k: a mismatch is refused when the driver is compiled, before
    # Verilator runs, naming the parameter, both values and both JSON paths
    import loom.runtime.rtl as rtl

    def no_build(*args, **kwargs):
        raise AssertionError("built a design whose parameters contradict its description")
    monkeypatch.setattr(rtl, "build_rtl_model", no_build)
    model = {"sources": ["rtl/matmul_os.sv"], "top": "matmul_os", "tile_sizes": {"T": ["m", "n", "k"]}, **spec}
    path = _variant(tmp_path, {"verilator": model})
    text = (tmp_path / "rtl" / "matmul_os.sv").read_text()
    extra = text.replace("module matmul_os #(", "module matmul_os_8 #(").replace("parameter int T = 4",
                                                                                "parameter int T = 8")
    extra += text.replace("module matmul_os #(", "module matmul_os_expr #(").replace("parameter int T = 4",
                                                                                    "parameter int T = 2 * 2")
    (tmp_path / "rtl" / "matmul_os.sv").write_text(text + extra)
    with pytest.raises(LoomError, match=message) as info:
        compile_driver(matmul_module(), path, "rtl_4", "Ns")
    assert info.value.where == "accelerators[0].model.verilator.tile_sizes.T"
    assert info.value.filename == str(path)


def test_the_shipped_description_declares_its_tile_parameter():
    for acc in load_description(DESCRIPTION).accelerators:
        spec = acc.model.argument
        assert spec["tile_sizes"] == {"T": ["m", "n", "k"]} and spec["parameters"]["T"] == acc.tiles["m"].size


def test_cli_run_prints_rtl_cycles_and_the_ratio(capsys):
    from loom.cli import main

    model_so(4)
    code = main(["accel", "run", "matmul", "--accel", str(DESCRIPTION), "--name", "rtl_4", "--flow", "all",
                 "--dims", "M=9,N=7,K=11"])
    out = capsys.readouterr().out
    assert code == 0, out
    for flow in FLOWS:
        assert re.search(rf"rtl_4 {flow}: \d+ accelerator cycles, timing model \d+ \(ratio 1\.000\)", out), out
    assert out.count(" ok") >= 4


@pytest.mark.parametrize("model,valid", [
    ({"verilator": {"sources": ["rtl/matmul_os.sv"], "top": "matmul_os", "parameters": {"T": 4}}}, True),
    ({"verilator": "rtl/matmul_os.sv"}, True),
    ({"verilator": {"source": "rtl/matmul_os.sv"}}, False),
    ({"verilator": {"sources": []}}, False),
    ({"verilator": {"sources": "a.sv", "parameters": {"T": [4]}}}, False),
    ({"verilator": {"sources": "a.sv", "tile_sizes": {"T": ["m"]}}}, True),
    ({"verilator": {"sources": "a.sv", "tile_sizes": {"T": "m"}}}, False),
    ({"verilator": 4}, False),
])
def test_schema_knows_the_verilator_form(model, valid):
    from tests.accel.test_accel_description import SCHEMA, _schema_errors

    schema = json.loads(open(SCHEMA).read())
    raw = json.loads(DESCRIPTION.read_text())
    raw["accelerators"][0]["model"] = model
    assert (_schema_errors(raw, schema, schema) == []) == valid, _schema_errors(raw, schema, schema)
