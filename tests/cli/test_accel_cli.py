"""`loom accel run --flow all`: every (accelerator, flow) pair of a description file, each checked."""

from pathlib import Path

from loom.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "loom" / "examples" / "accelerators"


def test_flow_all_without_name_covers_every_accelerator(capsys):
    code = main(["accel", "run", "matmul", "--accel", str(EXAMPLES / "matmul_v2.json"), "--flow", "all",
                 "--dims", "M=40,N=24,K=20"])
    out = capsys.readouterr().out
    assert code == 0
    rows = [line.split() for line in out.splitlines() if line.startswith("v2_")]
    assert sorted((r[0], r[1]) for r in rows) == sorted(
        (f"v2_{s}", f) for s in (4, 8, 16) for f in ("Ns", "As", "Bs"))
    assert all(r[-1] == "ok" for r in rows)


def test_flow_all_with_name_covers_its_flows(capsys):
    code = main(["accel", "run", "matmul", "--accel", str(EXAMPLES / "matmul_v3.json"), "--name", "v3_8",
                 "--flow", "all", "--dims", "M=24,N=16,K=40"])
    out = capsys.readouterr().out
    assert code == 0
    assert sorted(line.split()[1] for line in out.splitlines() if line.startswith("v3_8")) == ["As", "Bs", "Cs", "Ns"]
