"""The `loom` command for kernels: list, ir, run; errors printed as file:line without a traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from loom.cli import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_names_every_example(capsys):
    from loom.examples.kernels import EXAMPLES

    code, out, _ = run_cli(capsys, "list")
    assert code == 0
    for name in EXAMPLES:
        assert name in out


def test_ir_stages_show_the_lowering(capsys):
    code, out, _ = run_cli(capsys, "ir", "matmul_linalg", "--all")
    assert code == 0
    frontend, loops = out.split("// ===== stage: loops =====")[0], out.split("// ===== stage: loops =====")[1]
    assert "linalg.matmul" in frontend
    assert "linalg." not in loops.split("// ===== stage: lowered")[0]
    assert "scf.for" in loops
    assert "loom_matmul_linalg(" in out.split("// ===== stage: c =====")[1]


def test_ir_locations_point_at_the_example_source(capsys):
    import inspect

    from loom.examples import kernels

    code, out, _ = run_cli(capsys, "ir", "dot", "--locations")
    assert code == 0
    lines, first = inspect.getsourcelines(kernels.dot.py_function)
    body_line = first + next(i for i, text in enumerate(lines) if "acc = acc + x[i] * y[i]" in text)
    assert f'kernels.py":{body_line}:' in out


@pytest.mark.mlir
def test_run_builtin_checks_numpy_and_mlir(capsys):
    code, out, _ = run_cli(capsys, "run", "softmax_rows", "--scale", "2")
    assert code == 0
    row = [line for line in out.splitlines() if line.startswith("softmax_rows")][0]
    assert row.split()[-1] == "ok"


def test_run_user_file_needs_dims(tmp_path, capsys):
    source = tmp_path / "user_kernels.py"
    source.write_text(textwrap.dedent("""
        from loom import kernel, MemRef, F32, Dim
        M = Dim("M")

        @kernel
        def saxpy(x: MemRef[(M,), F32], y: MemRef[(M,), F32], a: F32):
            for i in range(M):
                y[i] = a * x[i] + y[i]
    """))
    code, _, err = run_cli(capsys, "run", f"{source}:saxpy", "--no-mlir")
    assert code == 1
    assert "--dims M=SIZE" in err
    code, out, _ = run_cli(capsys, "run", f"{source}:saxpy", "--dims", "M=33", "--no-mlir")
    assert code == 0 and "saxpy" in out


def test_bad_kernel_error_is_located_without_traceback(tmp_path):
    source = tmp_path / "bad_kernels.py"
    source.write_text(textwrap.dedent("""
        from loom import kernel, MemRef, F32, I32

        @kernel
        def mixes(x: MemRef[(4,), F32], n: I32):
            x[0] = x[1] + n
    """))
    proc = subprocess.run([sys.executable, "-m", "loom.cli", "ir", f"{source}:mixes"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert f"{source}:6" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_target_lists_examples(capsys):
    code, _, err = run_cli(capsys, "ir", "no_such_kernel")
    assert code == 1
    assert "matmul_loops" in err
