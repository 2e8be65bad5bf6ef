"""Defect 5: `loom run|ir` accept .mlir files; a closed output pipe ends every command quietly."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ADD_MLIR = """
func.func @axpy(%x: memref<?xf32> {loom.dims = ["N"]}, %y: memref<?xf32> {loom.dims = ["N"]}, %a: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = memref.load %y[%i] : memref<?xf32>
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %p, %w : f32
    memref.store %s, %y[%i] : memref<?xf32>
  }
  func.return
}
"""


def loom(*argv: str, pipe_to_head: bool = False) -> subprocess.CompletedProcess:
    """``loom ARGV`` in a child process, run in a scratch folder (``accel compile`` writes accel_out/ there);
    repository paths in ARGV are made absolute."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = tuple(str(ROOT / a) if a.startswith("loom/") else a for a in argv)
    cmd = [sys.executable, "-m", "loom.cli", *argv]
    scratch = tempfile.mkdtemp(prefix="loom-cli-")
    if not pipe_to_head:
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=scratch)
    producer = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=scratch)
    first = producer.stdout.readline()  # like `| head -1`: read one line, then close the pipe
    producer.stdout.close()
    _, err = producer.communicate(timeout=300)
    return subprocess.CompletedProcess(cmd, producer.returncode, first.decode(), err.decode())


@pytest.fixture
def mlir_file(tmp_path):
    path = tmp_path / "axpy.mlir"
    path.write_text(ADD_MLIR)
    return path


@pytest.mark.mlir
def test_run_mlir_file_checks_against_mlir_runner(mlir_file):
    out = loom("run", f"{mlir_file}:axpy", "--dims", "N=100")
    assert out.returncode == 0, out.stderr
    row = [line for line in out.stdout.splitlines() if line.startswith("axpy")][0]
    assert row.split()[-2:] == ["exact", "ok"]  # vs mlir-runner, status
    assert "Traceback" not in out.stderr


def test_ir_of_mlir_file_at_every_stage(mlir_file):
    out = loom("ir", str(mlir_file), "--all")
    assert out.returncode == 0, out.stderr
    assert "scf.for" in out.stdout and "void loom_axpy(" in out.stdout


@pytest.mark.parametrize("text,message", [
    ("func.func @f(", "is not valid MLIR"),
    ("func.func @f() {\n  %0 = arith.addi %a, %a : i32\n  func.return\n}\n", "not valid MLIR"),
])
def test_bad_mlir_file_is_a_loom_error(tmp_path, text, message):
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    out = loom("run", str(path))
    assert out.returncode == 1 and message in out.stderr and "Traceback" not in out.stderr


def test_unknown_function_and_wrong_suffix(mlir_file, tmp_path):
    out = loom("run", f"{mlir_file}:nope")
    assert out.returncode == 1 and "no public function @nope (has: axpy)" in out.stderr
    other = tmp_path / "k.txt"
    other.write_text("x")
    out = loom("ir", f"{other}:k")
    assert out.returncode == 1 and "expected path/to/file.py:kernel_name" in out.stderr


@pytest.mark.parametrize("argv", [
    ["ir", "matmul_loops", "--all"], ["list"], ["--help"], ["pipeline", "--list"],
    ["accel", "compile", "matmul", "--accel", "loom/examples/accelerators/matmul_v3.json", "--name", "v3_16",
     "--flow", "As"],
])
def test_closed_pipe_ends_quietly(argv):
    out = loom(*argv, pipe_to_head=True)
    assert out.stdout  # it did print a first line
    assert out.returncode in (0, 141), out.stderr
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr


UNNAMED_MLIR = ADD_MLIR.replace(' {loom.dims = ["N"]}', "")


@pytest.mark.sanitize
def test_mlir_function_without_dim_names_is_bounds_checked(tmp_path):
    """Without loom.dims nothing says x and y must have one length: the function is compiled with
    bounds checks, so a short y is a LoomError at the access, never a write past its end."""
    import numpy as np

    from loom.errors import LoomError
    from loom.jit.mlir_function import load_mlir_target

    path = tmp_path / "unnamed.mlir"
    path.write_text(UNNAMED_MLIR)
    fn = load_mlir_target(path, "axpy")
    assert fn.unnamed_dynamic_dims
    x, y = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    fn(x, y, np.float32(2))
    np.testing.assert_array_equal(y, 2 * np.arange(8) + 1)
    with pytest.raises(LoomError):
        fn(np.arange(64, dtype=np.float32), np.ones(3, np.float32), np.float32(2))
    named = tmp_path / "named.mlir"
    named.write_text(ADD_MLIR)
    assert not load_mlir_target(named, "axpy").unnamed_dynamic_dims
