"""``loom build``: one input of each kind gives the documented folder; bad inputs get one-line errors."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from loom.build import BuildOptions, build, read_index
from loom.build.deploy import load_unit
from loom.dialects import context
from loom.errors import LoomError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "loom" / "examples"

USER_KERNELS = '''
from loom import kernel, linalg, MemRef, I32, F32, Dim
M, N, K = Dim("M"), Dim("N"), Dim("K")

@kernel
def mm(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B, C)

@kernel
def axpy(x: MemRef[(N,), F32], y: MemRef[(N,), F32]):
    for i in range(N):
        y[i] = 2.0 * x[i] + y[i]
'''

MLIR_FUNCTION = '''
func.func @add(%a: memref<6xi32>, %b: memref<6xi32>) {
  affine.for %i = 0 to 6 {
    %x = affine.load %a[%i] : memref<6xi32>
    %y = affine.load %b[%i] : memref<6xi32>
    %s = arith.addi %x, %y : i32
    affine.store %s, %b[%i] : memref<6xi32>
  }
  func.return
}
'''


def assert_documented_folder(out: Path, kind: str) -> dict:
    """index.json lists every file written (with its checksum) and nothing else; IR parses back."""
    index = read_index(out)
    assert index["input_kind"] == kind and (out / "INDEX.md").is_file() and (out / "variant.section").is_file()
    listed = {a["path"] for a in index["artifacts"]}
    written = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} - {"index.json", "INDEX.md",
                                                                                   "variant.section"}
    written = {p for p in written if not p.endswith("accelerator.json")}
    assert listed == written
    for artifact in index["artifacts"]:
        data = (out / artifact["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == artifact["sha256"] and len(data) == artifact["bytes"]
        if artifact["kind"] == "mlir":
            Parser(context(), data.decode(), artifact["path"]).parse_module().verify()
    return index


@pytest.mark.sanitize
def test_user_kernel_file_builds_every_kernel_and_the_library_computes(tmp_path):
    source = tmp_path / "kernels.py"
    source.write_text(USER_KERNELS)
    result = build(source, tmp_path / "out", dims={"M": 5, "N": 4, "K": 3})
    index = assert_documented_folder(result.folder, "kernel")
    assert {u["name"] for u in index["units"]} == {"mm", "axpy"}
    for unit in ("mm", "axpy"):
        for stage in ("ir/01-frontend.mlir", "ir/02-loops.mlir", "ir/03-lowered.mlir", f"c/{unit}.c", f"lib/{unit}.so"):
            assert (result.folder / unit / stage).is_file(), stage
    assert all("ok" in c for u in index["units"] for c in u["checks"])  # checked against mlir-runner
    rng = np.random.default_rng(1)
    a, b = rng.integers(-9, 9, (5, 3)).astype(np.int32), rng.integers(-9, 9, (3, 4)).astype(np.int32)
    c = np.zeros((5, 4), np.int32)
    load_unit(result.folder, "mm")(a, b, c)  # the built shared object, loaded without recompiling
    np.testing.assert_array_equal(c, a @ b)
    with pytest.raises(LoomError, match="shape|dim"):
        load_unit(result.folder, "mm")(a, a, c)  # the loaded library still checks its arguments


def test_selected_kernel_and_mlir_function(tmp_path):
    source = tmp_path / "kernels.py"
    source.write_text(USER_KERNELS)
    index = build(f"{source}:axpy", tmp_path / "one", dims={"N": 7}).index
    assert [u["name"] for u in index["units"]] == ["axpy"]
    mlir = tmp_path / "add.mlir"
    mlir.write_text(MLIR_FUNCTION)
    result = build(mlir, tmp_path / "mlir")
    assert_documented_folder(result.folder, "kernel")
    a, b = np.arange(6, dtype=np.int32), np.full(6, 10, np.int32)
    load_unit(result.folder, "add")(a, b)
    np.testing.assert_array_equal(b, np.arange(6) + 10)


def test_ekl_pipeline_and_dataflow_inputs(tmp_path):
    ekl = build(EXAMPLES / "ekl" / "inverse_helmholtz.ekl", tmp_path / "ekl").index
    assert_documented_folder(tmp_path / "ekl", "ekl")
    stages = [a["stage"] for a in ekl["artifacts"] if a["kind"] == "mlir"]
    assert stages == ["esn", "linalg", "loops", "lowered"]
    assert "max relative error vs numpy" in ekl["units"][0]["checks"][0]

    pipe = build("gaussian", tmp_path / "pipe", size=(12, 10)).index
    assert_documented_folder(tmp_path / "pipe", "pipeline")
    assert [c.endswith("bit-exact") for c in pipe["units"][0]["checks"]] == [True, True]
    ubuf = (tmp_path / "pipe" / "gaussian" / "ir" / "ubuf.mlir").read_text()
    assert "ubuf." in ubuf

    flow = build(EXAMPLES / "dataflow" / "listing1.py", tmp_path / "flow").index
    assert_documented_folder(tmp_path / "flow", "dataflow")
    assert flow["units"][0]["checks"] == ["graph ran: result 64"]  # 5 -> ... -> pow2 on the accelerator
    assert (tmp_path / "flow" / "listing1.pow2" / "driver" / "driver.c").is_file()
    section = json.loads((tmp_path / "flow" / "variant.section").read_text())
    assert section["variant"] == "accelerated"


def test_threads_do_not_change_the_artifacts(tmp_path):
    source = tmp_path / "kernels.py"
    source.write_text(USER_KERNELS)
    one = build(source, tmp_path / "t1", threads=1, check=False).index["artifacts"]
    two = build(source, tmp_path / "t2", threads=2, check=False).index["artifacts"]
    assert [(a["path"], a["sha256"]) for a in one] == [(a["path"], a["sha256"]) for a in two]


def test_rebuild_replaces_an_earlier_build_and_refuses_other_folders(tmp_path):
    out = tmp_path / "out"
    build("matmul_linalg", out, check=False)
    (out / "matmul_linalg" / "stale.txt").write_text("old")
    build("dot", out, check=False)
    assert not (out / "matmul_linalg").exists() and (out / "dot").is_dir()
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(LoomError, match="not empty"):
        build("dot", other)
    assert (other / "notes.txt").read_text() == "keep me"


def test_targets(tmp_path):
    index = build("matmul_linalg", tmp_path / "mlir", target="mlir").index
    assert {a["kind"] for a in index["artifacts"]} == {"mlir"}
    with pytest.raises(LoomError, match="--target driver needs"):
        BuildOptions(target="driver")
    with pytest.raises(LoomError, match="unknown target"):
        BuildOptions(target="verilog")


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "loom.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("args, message", [
    (["build", "no_such_thing"], "no such file or built-in example"),
    (["build", "notes.txt"], "cannot build a .txt file"),
    (["build", "empty.py"], "nothing to build in this Python file"),
    (["build", "broken.py"], "broken.py:2: ZeroDivisionError while importing it"),
    (["build", "matmul_linalg", "--dims", "M=x"], "bad --dims entry"),
    (["build", "matmul_linalg", "--accel", "missing.json"], "no such accelerator description"),
    (["build", "matmul_linalg", "-o", "taken"], "not empty"),
    (["build", "gaussian", "--size", "0x4"], "bad --size"),
])
def test_bad_inputs_get_one_line_errors(tmp_path, args, message):
    (tmp_path / "notes.txt").write_text("hi")
    (tmp_path / "empty.py").write_text("x = 1\n")
    (tmp_path / "broken.py").write_text("import math\nvalue = 1 / 0\n")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "f").write_text("")
    proc = _cli(*args, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_cli_build_and_version(tmp_path):
    proc = _cli("build", "dot", "-o", "gen", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "gen/INDEX.md" in proc.stdout and (tmp_path / "gen" / "dot" / "c" / "dot.c").is_file()
    import loom

    assert _cli("--version", cwd=tmp_path).stdout.strip() == f"loom {loom.__version__}"


def test_the_ekl_check_uses_each_outputs_own_tolerance(tmp_path):
    """The build's check takes each output's tolerance from ``kernel.tolerances`` (the bound ``loom ekl run``
    uses: the output's type and how many terms it accumulates, since the C kernel sums in order and numpy's
    reference pairwise) and names the output; a 100,000-term f32 sum passes it."""
    source = tmp_path / "sums.ekl"
    source.write_text("kernel total(a : f32[100000], s : out& f32[1]) {\n  out s[z] = <+ i< a[i];\n}\n")
    index = build(source, tmp_path / "out").index
    (check,) = index["units"][0]["checks"]
    assert "on s (tolerance 0.024)" in check  # 2 * eps(f32) * (100000 + 8)
