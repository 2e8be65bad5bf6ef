"""`loom demo`: every part runs, checks its results and says so; a bad part name is a clear error."""

from loom.cli import main


def test_demo_accel_part_checks_every_case(capsys):
    code = main(["demo", "accel"])
    out = capsys.readouterr().out
    assert code == 0
    assert "9/9 ok" in out
    assert "1 of 1 parts correct" in out


def test_demo_kernels_part(capsys):
    code = main(["demo", "kernels", "--no-mlir"])
    out = capsys.readouterr().out
    assert code == 0
    from loom.examples.kernels import EXAMPLES

    assert f"{len(EXAMPLES)} of {len(EXAMPLES)} kernels correct" in out


def test_demo_unknown_part(capsys):
    assert main(["demo", "nonsense"]) == 1
    assert "expected some of accel, kernels, pipelines" in capsys.readouterr().err


def test_demo_pipelines_part_reproduces_cascade(capsys):
    code = main(["demo", "pipelines"])
    out = capsys.readouterr().out
    assert code == 0
    cascade = next(line for line in out.splitlines() if line.startswith("cascade"))
    # thesis Table 4.1: hw_input 130 + conv1 126 buffer words, latency 4096
    assert cascade.split()[2:4] == ["256", "4096"]
    assert "8/8 apps bit-exact" in out
