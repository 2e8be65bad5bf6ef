"""``loom tune``: ``--dims`` sizes a built-in kernel's arguments, and a dim the kernel lacks is refused;
``loom sweep`` refuses bad sizes, flows and output folders before it sweeps."""

from __future__ import annotations

import pytest

from loom.cli import main
from loom.cli.tune_commands import _arguments
from loom.errors import LoomError
from loom.examples.targets import resolve_kernel


def test_dims_size_a_built_in_kernels_arguments():
    kernel, example = resolve_kernel("matmul_linalg")
    a, b, c = _arguments(kernel, example, {"M": 24, "N": 16, "K": 8}, seed=0)
    assert (a.shape, b.shape, c.shape) == ((24, 8), (8, 16), (24, 16))
    a, b, c = _arguments(kernel, example, {"N": 16}, seed=0)  # the others keep the example's sizes
    default = example.make_args(__import__("numpy").random.default_rng(0), 1)
    assert (a.shape, b.shape, c.shape) == (default[0].shape, (default[1].shape[0], 16), (default[2].shape[0], 16))
    assert [x.shape for x in _arguments(kernel, example, {}, seed=0)] == [x.shape for x in default]


def test_a_dim_the_built_in_kernel_lacks_is_refused_naming_it():
    kernel, example = resolve_kernel("matmul_linalg")
    with pytest.raises(LoomError, match=r"kernel 'matmul_linalg' has no dim Q \(its dims: K, M, N\)"):
        _arguments(kernel, example, {"Q": 4}, seed=0)


def test_tune_cpu_cli_runs_at_the_given_dims_and_refuses_a_wrong_one(capsys, monkeypatch):
    import loom.tune

    seen = []
    real = loom.tune.CpuObjective

    def spy(kernel, call_args, **kw):
        seen.append([a.shape for a in call_args])
        return real(kernel, call_args, **kw)

    monkeypatch.setattr(loom.tune, "CpuObjective", spy)
    assert main(["tune", "cpu", "matmul_linalg", "--dims", "M=12,N=8,K=4", "--budget", "1", "--searcher", "random",
                 "--no-cache", "--repeats", "1"]) == 0
    assert seen == [[(12, 4), (4, 8), (12, 8)]]
    capsys.readouterr()
    assert main(["tune", "cpu", "dot", "--dims", "M=3"]) == 1
    err = capsys.readouterr().err
    assert "kernel 'dot' has no dim M (its dims: N)" in err and "--dims" in err and "Traceback" not in err


V4 = "loom/examples/accelerators/matmul_v4.json"


@pytest.mark.parametrize("extra, message", [
    (["--sizes", "0x4x4"], "bad size '0x4x4': M, N and K must be positive"),
    (["--flows", "Ns,bogus"], "v4_16 has no flow 'bogus' (its flows: "),
    (["-o", "/nonexistent-folder/x.csv"], "no folder /nonexistent-folder to write /nonexistent-folder/x.csv in"),
    (["--plot", "/nonexistent-folder/p.png"], "no folder /nonexistent-folder"),
])
def test_sweep_refuses_bad_arguments_before_sweeping(extra, message, capsys, tmp_path):
    from pathlib import Path

    import loom

    desc = str(Path(loom.__file__).parent.parent / V4)
    args = ["sweep", "matmul", "--accel", desc, "--name", "v4_16", "--executor", "serial",
            "-o", str(tmp_path / "s.csv"), *extra]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
    assert "points on" not in captured.out  # refused before any point ran


def test_sweep_result_to_csv_reports_an_unwritable_path(tmp_path):
    from loom.tune.sweeps import SweepResult

    with pytest.raises(LoomError, match=r"cannot write .*missing/x\.csv: No such file or directory"):
        SweepResult([{"a": 1}], 0.0, "serial").to_csv(tmp_path / "missing" / "x.csv")

