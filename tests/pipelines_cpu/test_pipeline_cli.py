"""``loom pipeline``: design table, offsets, latency, simulation and CPU runs checked; errors are LoomErrors."""

import pytest

from loom.cli import main


def test_list_names_every_app(capsys):
    assert main(["pipeline", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("cascade", "gaussian", "harris", "unsharp", "camera_pipeline", "conv_layer", "gemm", "pointwise"):
        assert name in out


@pytest.mark.sanitize
def test_cascade_design_and_runs(capsys):
    assert main(["pipeline", "cascade", "--size", "64x64"]) == 0
    out = capsys.readouterr().out
    w_in = 64 + 4  # the input row, with the two 3x3 halos
    d1 = 2 * w_in + 2  # first 3x3 stage: two rows and two pixels later
    assert f"{d1} + {w_in}y + x" in out and f"{2 * d1} + {w_in}y + x" in out
    assert f"stage start offsets (cycles): input 0, hw_input 0, conv1 {d1}, output {2 * d1}" in out
    latency = 2 * d1 + w_in * 63 + 63 + 1
    assert f"latency: {latency} cycles" in out
    assert "capacities: input 0, hw_input 138, conv1 134, output 0" in out
    assert out.count("yes (bit-exact)") == 3


@pytest.mark.sanitize
def test_two_pixels_per_cycle_on_odd_size(capsys):
    assert main(["pipeline", "gaussian", "--size", "33x17", "--unroll", "2", "--schedule", "accel"]) == 0
    out = capsys.readouterr().out
    row = (33 + 2 + 1) // 2  # 35 input pixels per row at 2 per cycle
    assert f"output {2 * row + 1}" in out
    assert f"latency: {2 * row + 1 + row * 16 + 16 + 1} cycles" in out
    assert out.count("yes (bit-exact)") == 3


@pytest.mark.parametrize("argv,message", [
    (["pipeline", "nope"], "unknown pipeline app 'nope': expected one of camera_pipeline, cascade"),
    (["pipeline", "harris", "--size", "3x0"], "bad --size '3x0': expected WxH"),
    (["pipeline", "harris", "--size", "big"], "bad --size 'big'"),
    (["pipeline", "gemm", "--unroll", "2"], "app 'gemm' has no n-pixels-per-cycle schedule"),
    (["pipeline", "gaussian", "--unroll", "0"], "--unroll: expected a count >= 1"),
    (["pipeline"], "give an app name"),
])
def test_errors(capsys, argv, message):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_thesis_table_4_1_numbers_from_the_command(capsys):
    # cascade on a 64x64 input (60x60 output): hw_input 130, conv1 126, offsets 130 / 260, latency 4096
    assert main(["pipeline", "cascade", "--size", "60x60"]) == 0
    out = capsys.readouterr().out
    assert "capacities: input 0, hw_input 130, conv1 126, output 0" in out
    assert "conv1 130, output 260" in out and "latency: 4096 cycles" in out
    assert "0 <= x <= 61 and 0 <= y <= 61" in out and "130 + 64y + x" in out
