"""`loom accel new` writes an accelerator that runs as written; `loom accel run/compile` take a user
kernel file with --dims for dynamic shapes (also --flow auto) on the example accelerators' models;
-o onto an existing file is a clear error."""

from __future__ import annotations

from loom.cli import main
from tests.models.kernels import MATVEC, generic

PY_KERNEL = """from loom import kernel, linalg, MemRef, I32, Dim
M, N, K = Dim("M"), Dim("N"), Dim("K")


@kernel
def mm(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B, C)
"""


def test_new_then_run_passes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["accel", "new", "my_accel", "-o", "acc"]) == 0
    assert (tmp_path / "acc" / "my_accel.json").is_file() and (tmp_path / "acc" / "my_accel_model.py").is_file()
    code = main(["accel", "run", "matmul", "--accel", "acc/my_accel.json", "--flow", "all", "--dims", "M=9,N=7,K=11"])
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("my_accel ")]
    assert code == 0 and sorted(r[1] for r in rows) == ["Cs", "Ns"] and all(r[-1] == "ok" for r in rows)
    (tmp_path / "mm.py").write_text(PY_KERNEL)
    assert main(["accel", "run", "mm.py:mm", "--accel", "acc/my_accel.json", "--dims", "m=9,n=7,k=11",
                 "--flow", "auto"]) == 0
    out = capsys.readouterr().out
    assert "--flow auto chose" in out and out.rstrip().endswith("ok")
    for argv, message in ((["my_accel", "-o", "acc"], "already exist; loom accel new does not overwrite"),
                          (["other", "-o", "file"], "-o: file is an existing file; -o takes a directory"),
                          (["9 lives"], "expected an accelerator name"),
                          (["cost"], "not '-', '*', 'cost' (assign= words), found 'cost'")):  # wrote an unloadable file
        (tmp_path / "file").write_text("x")
        assert main(["accel", "new", *argv]) != 0
        assert message in capsys.readouterr().err


def test_user_kernel_file_with_dims_also_with_flow_auto(tmp_path, capsys):
    kernel = tmp_path / "mv.mlir"
    kernel.write_text(generic("mv", *MATVEC))
    for flow in ("all", "auto"):
        code = main(["accel", "run", str(kernel), "--accel", "matvec.json", "--dims", "m=13,k=21", "--flow", flow])
        out = capsys.readouterr().out
        rows = [line.split() for line in out.splitlines() if line.startswith("mv_8 ")]
        assert code == 0 and rows and all(r[-1] == "ok" for r in rows), out
    assert "--flow auto chose" in out
    (tmp_path / "taken").write_text("x")
    assert main(["accel", "compile", str(kernel), "--accel", "matvec.json", "--dims", "m=13,k=21",
                 "-o", str(tmp_path / "taken")]) != 0
    assert "taken is an existing file; -o takes a directory" in capsys.readouterr().err
    assert main(["accel", "compile", str(kernel), "--accel", "matvec.json", "--flow", "auto", "--dims", "m=13,k=21",
                 "-o", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "driver.c").is_file()
