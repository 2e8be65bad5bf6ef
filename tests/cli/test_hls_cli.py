"""``loom hls``: print or write a kernel's HLS C++, optionally run its C simulation."""

from __future__ import annotations

from loom.cli import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_prints_the_cpp_with_example_sizes(capsys):
    code, out, _ = run_cli(capsys, "hls", "matmul_loops", "--ii", "2", "--type", "f32=ap_fixed<16,8>")
    assert code == 0
    assert "void matmul_loops(const ap_fixed<16, 8> A[" in out and "LOOM_PRAGMA(HLS PIPELINE II=2)" in out


def test_writes_the_files_and_runs_the_c_simulation(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "hls", "blur3x3", "-o", str(tmp_path), "--interface", "axis", "--csim")
    assert code == 0
    assert {p.name for p in tmp_path.iterdir()} == {"blur3x3.cpp", "blur3x3_tb.cpp", "loom_hls.h", "ap_int.h",
                                                   "ap_fixed.h", "hls_stream.h"}
    assert "vs the C backend: max relative error 0" in out


def test_bad_flags_are_one_line_errors(capsys):
    code, _, err = run_cli(capsys, "hls", "matmul_loops", "--type", "f32")
    assert code != 0 and "bad --type 'f32': expected MLIR=HLS" in err
    code, _, err = run_cli(capsys, "hls", "matmul_loops", "--type", "f32=float<8,23>")
    assert code != 0 and "not an HLS type" in err
    code, _, err = run_cli(capsys, "hls", "matmul_loops", "--dims", "M=0")
    assert code != 0 and "bad --dims entry 'M=0'" in err
    code, _, err = run_cli(capsys, "hls", "matmul_loops", "--dims", "Q=4")  # a dim the kernel does not name
    assert code != 0 and "matmul_loops has no dim Q (its dims: " in err and "--dims" in err
    code, _, err = run_cli(capsys, "hls", "matmul_loops", "--csim", "--type", "f32=ap_fixed<16,8>")
    assert code != 0 and "drop --type to check" in err


def test_an_ekl_kernel_refused_in_fixed_point_names_its_ekl_source_place(tmp_path, capsys):
    source = tmp_path / "square.ekl"
    source.write_text("kernel square(\n    x : f64[4],\n    y : out& f64[4]\n)\n{\n    out y[i] = x[i] * x[i];\n}\n")
    code, _, err = run_cli(capsys, "hls", str(source), "--type", "f64=ap_fixed<40,20>")
    assert code != 0 and f"{source}:6:21: in kernel 'square': * of ap_fixed<40, 20>" in err


def test_an_ekl_contraction_refused_in_fixed_point_names_its_statement(capsys):
    from pathlib import Path

    import loom

    source = Path(loom.__file__).parent / "examples" / "ekl" / "inverse_helmholtz.ekl"
    code, _, err = run_cli(capsys, "hls", str(source), "--type", "f64=ap_fixed<40,20>")
    assert code != 0 and f"{source}:11:5: in kernel 'inverse_helmholtz': * of" in err  # the first let's products


def test_csim_with_type_is_refused_before_any_file_is_written(tmp_path, capsys):
    folder = tmp_path / "out"
    code, _, err = run_cli(capsys, "hls", "matmul_loops", "-o", str(folder), "--csim", "--type", "f32=ap_fixed<16,8>")
    assert code != 0 and "drop --type to check" in err
    assert not folder.exists()


def test_every_built_in_example_runs_its_c_simulation(capsys):
    """scale_rows (a kernel calling a kernel) failed in loom-specialize-dims ('called inside the module');
    collatz_steps did not end: its testbench drew any int32, and a negative start never reaches 1. The
    testbench now draws each integer array from the example's own inputs' range."""
    from loom.examples.kernels import EXAMPLES
    for name in sorted(EXAMPLES):
        code, out, err = run_cli(capsys, "hls", name, "--csim")
        assert code == 0, (name, err)
        assert "vs the C backend: max relative error 0" in out, name
