"""Fuzz the CLI: random argv over the real subcommands and flags, called in-process.

Only return codes are allowed (argparse's SystemExit for a malformed command line is fine);
any other exception is a raw traceback a user would see. Commands that would run for long
(accelerator runs of big problems, whole demos) are kept out by the grammar's small values."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.cli import main

ROOT = Path(__file__).resolve().parents[2]

ACCELS = ["loom/examples/accelerators/matmul_v3.json", "loom/examples/accelerators/conv2d.json",
          "loom/examples/accelerators/pynq-z2.json", "loom/examples/accelerators/nope.json", "README.md",
          "loom/examples/pipelines/cascade.py", ""]
VALUES = {
    "--accel": ACCELS,
    "--name": ["v3_16", "v3_4", "conv_os", "nope", ""],
    "--flow": ["As", "Ns", "Cs", "Os", "auto", "all", "zz", ""],
    "--dims": ["M=8,N=8,K=8", "M=8", "M=-1,N=2,K=2", "M=x", "Q=4", "M=0,N=0,K=0", ",", "=", "M=8,N=8,K=8,M=4"],
    "--dtype": ["i32", "f32", "f64"],
    "--size": ["8x8", "0x0", "8", "x", "-4x4", "4x-4", "300x1", "8x8x8", "", "axb"],
    "--schedule": ["cpu", "accel", "gpu"],
    "--unroll": ["1", "2", "0", "-1", "3", "x"],
    "--seed": ["0", "-1", "x"],
    "--scale": ["1", "0", "-1", "x"],
    "--stage": ["frontend", "loops", "lowered", "c", "asm"],
    "-o": ["{tmp}/out", "/proc/nope/out", ""],
}
FLAGS = ["--coalesce", "--double-buffer", "--no-mlir", "--all", "--locations", "--list", "--ir", "--help"]
TARGETS = ["matmul", "conv", "matmul_loops", "softmax_rows", "nope", "README.md", "README.md:k",
           "loom/examples/kernels.py:nope", "loom/examples/kernels.py", ":", "x.mlir", "{tmp}/k.mlir",
           "{tmp}/k.mlir:f", "{tmp}/k.mlir:g", "cascade", "gaussian", "pointwise", ""]
MLIR = "func.func @f(%a: memref<4xi32>, %d: i32) {\n  %c0 = arith.constant 0 : index\n" \
       "  %v = memref.load %a[%c0] : memref<4xi32>\n  %q = arith.divsi %v, %d : i32\n" \
       "  memref.store %q, %a[%c0] : memref<4xi32>\n  func.return\n}\n"


# per command: what it needs to get past argparse, and the flags it takes
COMMANDS = {
    ("ir",): (["target"], ["--stage", "--all", "--locations"]),
    ("run",): (["target"], ["--scale", "--dims", "--seed", "--no-mlir"]),
    ("list",): ([], []),
    ("accel", "compile"): (["target", "--accel"], ["--name", "--flow", "--dims", "--coalesce", "--double-buffer",
                                                    "--dtype", "-o"]),
    ("accel", "run"): (["target", "--accel", "--dims"], ["--name", "--flow", "--coalesce", "--double-buffer",
                                                          "--dtype", "--seed"]),
    ("pipeline",): (["app", "--size"], ["--list", "--schedule", "--unroll", "--seed", "--ir"]),
}
APPS = ["cascade", "gaussian", "pointwise", "unsharp", "harris", "gemm", "nope", ""]


@st.composite
def argv(draw):
    if draw(st.integers(0, 9)) == 0:  # now and then: anything at all
        return draw(st.lists(st.sampled_from(["ir", "run", "accel", "pipeline", "demo", "--help", "-o", "x",
                                              *FLAGS, *VALUES]), max_size=4))
    command = draw(st.sampled_from(sorted(COMMANDS)))
    required, optional = COMMANDS[command]
    out = list(command)
    for item in required:
        if item == "target":
            out.append(draw(st.sampled_from(TARGETS)))
        elif item == "app":
            out.append(draw(st.sampled_from(APPS)))
        else:
            out += [item, draw(st.sampled_from(VALUES[item]))]
    for flag in draw(st.lists(st.sampled_from(optional + ["--help"]), max_size=3, unique=True)) if optional else []:
        out += [flag, draw(st.sampled_from(VALUES[flag]))] if flag in VALUES else [flag]
    if command == ("accel", "compile") and "-o" not in out:
        out += ["-o", "{tmp}/out"]  # never the default accel_out/ in the working directory
    if command == ("accel", "run") and draw(st.booleans()):
        out[out.index("--dims") + 1] = "M=8,N=8,K=8"  # mostly small problems
    return out


def run_cli(args: list[str], tmp) -> int | None:
    """Run in ``tmp`` (an output path like ``-o ""`` must never land in the checkout), with the
    repository's files named by absolute path."""
    (tmp / "k.mlir").write_text(MLIR)
    args = [str(ROOT / a) if a.startswith(("loom/", "README.md")) else a.replace("{tmp}", str(tmp)) for a in args]
    sink = io.StringIO()
    with contextlib.chdir(tmp), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            return main(args)
        except SystemExit as exit_:  # argparse: usage error or --help
            return exit_.code if isinstance(exit_.code, int) else 2


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(args=argv())
def test_cli_only_returns_codes(tmp_path, args):
    code = run_cli(args, tmp_path)
    assert isinstance(code, int), (args, code)


def test_the_classes_the_fuzzer_found_are_errors_not_tracebacks(tmp_path):
    host_only = ["accel", "run", "matmul", "--accel", "loom/examples/accelerators/pynq-z2.json", "--dims",
                 "M=8,N=8,K=8"]
    assert run_cli(host_only, tmp_path) == 1
    assert run_cli(["run", "matmul_loops", "--scale", "-1"], tmp_path) == 2
    assert run_cli(["pipeline", "cascade", "--size", "8x8", "--seed", "-1"], tmp_path) == 2
    unwritable = ["accel", "compile", "matmul", "--accel", "loom/examples/accelerators/matmul_v3.json", "--name",
                  "v3_4", "--flow", "Ns", "-o", str(tmp_path / "file" / "sub")]
    (tmp_path / "file").write_text("not a directory")
    assert run_cli(unwritable, tmp_path) == 1
