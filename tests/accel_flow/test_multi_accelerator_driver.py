"""One driver over several accelerators (``loom.driver.devices``): each op of a function runs on the
accelerator it is assigned, on its own simulated device (model, timing, counters), the host computes the
ops no accelerator takes; results against numpy, each device's counters against its ops' analytic count.
The system is ``systems/matmul_conv.json``: v3_4, v3_16 and conv_os on three DMA engines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from loom.cli import main
from loom.dialects import context
from loom.driver.compile import compile_driver
from loom.errors import LoomError
from loom.examples import ACCELERATORS_DIR
from loom.examples.accel_kernels import conv_reference

MULTI = Path(__file__).resolve().parent / "multi"
SYSTEM = ACCELERATORS_DIR / "systems" / "matmul_conv.json"


def kernel(name: str):
    return Parser(context(), (MULTI / name).read_text()).parse_module()


def ints(rng, *shape):
    return rng.integers(-5, 5, shape).astype(np.int32)


def check_devices_against_analytic(drv, stats, arrays):
    """Every device's measured transfers equal its own ops' analytic count; the call's are their sum."""
    assert set(stats.devices) == set(drv.devices)
    for name, dev in stats.devices.items():
        assert dev.sessions == sum(s.accelerator == name for s in drv.summaries)
        assert dev.transfers == drv.expected_transfers(arrays, name), name
        assert dev.timing is not None and dev.timing.total_s > 0
        assert dev.timing.sends == dev.transfers.sends and dev.timing.recvs == dev.transfers.recvs
    assert stats.transfers == drv.expected_transfers(arrays)
    assert stats.transfers.sends == sum(d.transfers.sends for d in stats.devices.values())


@pytest.mark.sanitize
@pytest.mark.parametrize("options", [{}, {"coalesce": True}, {"double_buffer": True},
                                     {"coalesce": True, "double_buffer": True}], ids=str)
def test_conv_on_the_conv_engine_and_matmul_on_a_matmul_engine_in_one_function(options):
    drv = compile_driver(kernel("conv_then_matmul.mlir"), SYSTEM, **options)
    assert drv.devices == ("conv_os", "v3_4") and [s.accelerator for s in drv.summaries] == ["conv_os", "v3_4"]
    # each op's session opens its own DMA engine
    assert drv.c_source.count("dma_init(") >= 2
    rng = np.random.default_rng(1)
    I, W, O, A, B, C = ints(rng, 1, 2, 7, 7), ints(rng, 3, 2, 3, 3), ints(rng, 1, 3, 5, 5), \
        ints(rng, 12, 20), ints(rng, 20, 8), ints(rng, 12, 8)
    want_O, want_C = conv_reference(I, W, O, 1).astype(np.int32), C + A @ B
    stats = drv(I, W, O, A, B, C)
    assert np.array_equal(O, want_O) and np.array_equal(C, want_C)
    if options.get("coalesce"):  # each session sends its own words in fewer transactions
        assert {n: (d.transfers.sends, d.transfers.recvs) for n, d in stats.devices.items()} == \
            {"conv_os": (3, 3), "v3_4": (6, 6)}
        assert stats.transfers.words_sent == drv.expected_transfers([I, W, O, A, B, C]).words_sent
    else:
        check_devices_against_analytic(drv, stats, [I, W, O, A, B, C])
    assert stats.devices["conv_os"].transfers.operand_words_received == {"O": 3 * 5 * 5}
    # Cs receives C once per (m, n) tile, after the k loop: 3 x 2 tiles of 16 words
    assert stats.devices["v3_4"].transfers.operand_words_received == {"C": 12 * 8}


@pytest.mark.sanitize
def test_two_matmuls_of_different_shapes_go_to_the_engine_the_cost_model_prefers():
    drv = compile_driver(kernel("two_matmuls_4_48.mlir"), SYSTEM, assign="cost")
    # 4x4x4 fits v3_4's tile exactly (v3_16 would move 16x16 padded blocks); 48^3 is 27 v3_16 tiles
    # against 1728 of v3_4 (100-cycle DMA set-up each)
    assert [s.accelerator for s in drv.summaries] == ["v3_4", "v3_16"]
    rng = np.random.default_rng(2)
    A, B, C, D, E, F = ints(rng, 4, 4), ints(rng, 4, 4), ints(rng, 4, 4), ints(rng, 48, 48), ints(rng, 48, 48), \
        ints(rng, 48, 48)
    want_C, want_F = C + A @ B, F + D @ E
    arrays = [A, B, C, D, E, F]
    stats = drv(*arrays)
    assert np.array_equal(C, want_C) and np.array_equal(F, want_F)
    check_devices_against_analytic(drv, stats, arrays)
    big = stats.devices["v3_16"].transfers
    assert big.operand_words_received == {"C": 48 * 48}  # Cs: each 16x16 C tile once
    assert big.operand_words_sent == {"A": 27 * 256, "B": 27 * 256}
    # the same call on one engine (v3_4 for both) moves the 48^3 problem in 4x4 tiles
    one = compile_driver(kernel("two_matmuls_4_48.mlir"), SYSTEM, "v3_4")
    assert one.devices == ("v3_4",)
    single = one(A, B, C, D, E, F)
    assert single.devices == {} and single.transfers.sends > 10 * big.sends
    # the figures are per device: the timing model ran each device with its own constants
    assert stats.devices["v3_16"].timing.constants != stats.devices["v3_4"].timing.constants
    # and a device's constants can be changed alone (drv.timing by accelerator name)
    from dataclasses import replace

    from loom.accel.timing import timing_config
    drv.timing = {"v3_16": replace(timing_config(drv.accelerators[1]), dma_latency_cycles=0)}
    again = drv(A, B, C, D, E, F)
    assert again.devices["v3_16"].timing.setup_s == 0 < again.devices["v3_4"].timing.setup_s
    assert again.devices["v3_4"].timing.setup_s == stats.devices["v3_4"].timing.setup_s


def test_an_explicit_assignment_overrides_the_first_match():
    drv = compile_driver(kernel("two_matmuls_4_48.mlir"), SYSTEM, assign=["v3_16", "v3_4"], build=False)
    assert [s.accelerator for s in drv.summaries] == ["v3_16", "v3_4"]
    assert drv.devices == ("v3_16", "v3_4")


@pytest.mark.sanitize
def test_the_host_computes_the_op_between_two_accelerator_ops():
    drv = compile_driver(kernel("matmul_add_matmul.mlir"), SYSTEM, assign=["v3_4", "*", "v3_16"], host_ops=True)
    assert [n for n, _, _ in drv.stages][-1] == "host" and "linalg." not in drv.stage("host")
    rng = np.random.default_rng(3)
    A, B, T, bias, E, F = ints(rng, 12, 20), ints(rng, 20, 8), ints(rng, 12, 8), ints(rng, 12, 8), ints(rng, 8, 16), \
        ints(rng, 12, 16)
    want_T = T + A @ B
    want_F = F + (want_T + bias) @ E
    stats = drv(A, B, T, bias, E, F)
    assert np.array_equal(T, want_T) and np.array_equal(F, want_F)
    assert {n: d.sessions for n, d in stats.devices.items()} == {"v3_4": 1, "v3_16": 1}
    # v3_16 reads U, the function's own buffer: counted in its words, not under an argument
    assert stats.devices["v3_16"].transfers.operand_words_sent == {"B": 256}
    assert stats.devices["v3_4"].transfers == drv.summaries[0].expected_transfers({"m": 12, "n": 8, "k": 20})
    assert stats.devices["v3_16"].transfers.words_sent == \
        drv.summaries[1].expected_transfers({"m": 12, "n": 16, "k": 8}).words_sent


def test_an_op_no_accelerator_computes_is_refused_without_host_ops():
    with pytest.raises(LoomError, match=r"body add.*nor any other accelerator of the driver.*host_ops=True"):
        compile_driver(kernel("matmul_add_matmul.mlir"), SYSTEM, assign=["v3_4", "*", "v3_16"], build=False)
    with pytest.raises(LoomError, match=r"assign puts op 1 on the host \('-'\): compile with host_ops=True"):
        compile_driver(kernel("matmul_add_matmul.mlir"), SYSTEM, assign=["v3_4", "-", "v3_16"], build=False)


def _system_with(tmp_path, edit) -> Path:
    raw = json.loads(SYSTEM.read_text())
    raw["cpu"] = str(ACCELERATORS_DIR / "pynq-z2.json")
    edit(raw)
    path = tmp_path / "system.json"
    path.write_text(json.dumps(raw))
    return path


def test_two_accelerators_on_one_dma_engine_are_refused_at_the_json_path(tmp_path):
    def shared(raw):
        raw["accelerators"][1]["dma"]["dma_address"] = raw["accelerators"][0]["dma"]["dma_address"]
    path = _system_with(tmp_path, shared)
    with pytest.raises(LoomError, match=r"accelerators v3_4 and v3_16 both have dma_address 0x40400000") as err:
        compile_driver(kernel("two_matmuls_4_48.mlir"), path, assign=["v3_4", "v3_16"], build=False)
    assert err.value.where == "accelerators[1].dma.dma_address" and err.value.filename == str(path)
    # one accelerator of that file is still a driver
    compile_driver(kernel("two_matmuls_4_48.mlir"), path, "v3_16", build=False)


def test_a_duplicate_name_or_a_bad_reference_is_an_error_at_its_json_path(tmp_path):
    def duplicate(raw):
        raw["accelerators"][2]["name"] = "v3_4"
    with pytest.raises(LoomError, match=r"duplicate accelerator name 'v3_4' \(also accelerators\[0\]\)") as err:
        compile_driver(kernel("conv_then_matmul.mlir"), _system_with(tmp_path, duplicate), build=False)
    assert err.value.where == "accelerators[2].name"

    def missing_cpu(raw):
        raw["cpu"] = "no-such-host.json"
    with pytest.raises(LoomError, match=r"no such file") as err:
        compile_driver(kernel("conv_then_matmul.mlir"), _system_with(tmp_path, missing_cpu), build=False)
    assert err.value.where == "cpu"
    with pytest.raises(LoomError, match=r"entry 0: no accelerator 'v3_32'"):
        compile_driver(kernel("two_matmuls_4_48.mlir"), SYSTEM, assign=["v3_32", "v3_4"], build=False)
    with pytest.raises(LoomError, match=r"expected 'cost' or one entry per linalg.generic"):
        compile_driver(kernel("two_matmuls_4_48.mlir"), SYSTEM, assign="fastest", build=False)


def test_models_of_several_devices_are_given_by_name(tmp_path):
    with pytest.raises(LoomError, match="pass model as a mapping accelerator name -> model"):
        compile_driver(kernel("conv_then_matmul.mlir"), SYSTEM, model=object(), build=False)


def test_a_device_without_a_model_says_what_to_add_and_the_hook_is_removed(tmp_path):
    def no_model(raw):
        del raw["accelerators"][2]["model"]
    drv = compile_driver(kernel("conv_then_matmul.mlir"), _system_with(tmp_path, no_model))
    rng = np.random.default_rng(4)
    arrays = [ints(rng, 1, 2, 7, 7), ints(rng, 3, 2, 3, 3), ints(rng, 1, 3, 5, 5), ints(rng, 12, 20),
              ints(rng, 20, 8), ints(rng, 12, 8)]
    with pytest.raises(LoomError, match="conv_os.*model"):
        drv(*arrays)
    # the runtime is shared: a one-accelerator driver afterwards runs as ever
    one = compile_driver(kernel("two_matmuls_4_48.mlir"), SYSTEM, "v3_4")
    A, B, C = ints(rng, 4, 4), ints(rng, 4, 4), ints(rng, 4, 4)
    D, E, F = ints(rng, 48, 48), ints(rng, 48, 48), ints(rng, 48, 48)
    want = C + A @ B
    one(A, B, C, D, E, F)
    assert np.array_equal(C, want)


def test_cli_runs_and_compiles_a_system(tmp_path, capsys):
    rc = main(["accel", "run", str(MULTI / "matmul_add_matmul.mlir"), "--accel", "systems/matmul_conv.json",
               "--assign", "v3_4,-,v3_16", "--host-ops"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "device v3_4: 1 session(s)" in out and "device v3_16: 1 session(s)" in out
    assert "v3_4+v3_16" in out and " ok" in out
    rc = main(["accel", "compile", str(MULTI / "conv_then_matmul.mlir"), "--accel", "systems/matmul_conv.json",
               "-o", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert rc == 0
    summary = (tmp_path / "out" / "summary.txt").read_text()
    assert "devices: conv_os, v3_4" in summary and "op 1 on v3_4:" in summary
    assert "expected transfers on conv_os: 83 sends" in summary and "expected transfers on v3_4: 36 sends" in summary


def test_the_example_system_has_one_dma_engine_per_accelerator():
    raw = json.loads(SYSTEM.read_text())
    assert [a["name"] for a in raw["accelerators"]] == ["v3_4", "v3_16", "conv_os"]
    addresses = [a["dma"]["dma_address"] for a in raw["accelerators"]]
    assert len(set(addresses)) == 3  # one DMA engine each: the driver tells them apart by it


def test_every_stage_of_a_driver_over_several_accelerators_parses_back_and_continues():
    """The stages hand over nothing but the IR: from each stage file of a two-device driver with a host op,
    the rest of the pipelines give the same IR and the same C."""
    from loom.backends.c import emit_c
    from loom.driver.compile import stage_files
    from loom.passes import Pipeline

    drv = compile_driver(kernel("matmul_add_matmul.mlir"), SYSTEM, assign=["v3_16", "*", "v3_4"], host_ops=True,
                         coalesce=True, build=False)
    pipelines = [p for _, p, _ in drv.stages[1:]]
    for k, text in enumerate(stage_files(drv).values()):
        if drv.stages[k][0] not in ("annotated", "placed", "runtime"):  # two ops' plans; sessions; host op left
            continue
        module = Parser(context(), text).parse_module()
        for pipeline in pipelines[k:]:
            Pipeline.parse(pipeline).run(module)
        assert str(module) == drv.stages[-1][2] and emit_c(module) == drv.c_source, drv.stages[k][0]
