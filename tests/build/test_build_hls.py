"""``loom build --target hls``: the HLS files of every unit kind, listed in the index, C simulation checked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from loom.build import build
from loom.errors import LoomError
from tests.build.test_build import assert_documented_folder

EXAMPLES = Path(__file__).resolve().parents[2] / "loom" / "examples"
HLS_FILES = {"hls/loom_hls.h", "hls/ap_int.h", "hls/ap_fixed.h", "hls/hls_stream.h"}


def hls_files(index: dict, unit: str) -> set[str]:
    return {a["path"][len(unit) + 1:] for a in index["artifacts"] if a["unit"] == unit}


@pytest.mark.sanitize
def test_kernel_and_pipeline_units_write_and_check_hls(tmp_path):
    index = build("matmul_loops", tmp_path / "k", target="hls").index
    assert_documented_folder(tmp_path / "k", "kernel")
    assert hls_files(index, "matmul_loops") == HLS_FILES | {"hls/matmul_loops.cpp", "hls/matmul_loops_tb.cpp"}
    assert index["units"][0]["checks"] == [
        "HLS C simulation (g++ -Wall -Wextra -Werror, loom_hls.h) vs the C backend: max relative error 0"]
    kinds = {a["path"].rsplit("/", 1)[-1]: a["kind"] for a in index["artifacts"]}
    assert kinds["matmul_loops.cpp"] == "hls" and kinds["matmul_loops_tb.cpp"] == "testbench"

    index = build("gaussian", tmp_path / "p", target="hls", size=(10, 6)).index
    assert_documented_folder(tmp_path / "p", "pipeline")
    assert "hls/gaussian.cpp" in hls_files(index, "gaussian")
    assert index["units"][0]["checks"][-1].endswith("max relative error 0")


def test_ekl_and_dataflow_units(tmp_path):
    index = build(EXAMPLES / "ekl" / "inverse_helmholtz.ekl", tmp_path / "e", target="hls", check=False).index
    assert "hls/inverse_helmholtz.cpp" in hls_files(index, "inverse_helmholtz")
    flow = build(EXAMPLES / "dataflow" / "image_pipeline.py", tmp_path / "f", target="hls", check=False).index
    units = {u["name"]: u for u in flow["units"]}
    assert "hls/rectify.cpp" in hls_files(flow, "image_pipeline.rectify")
    # the offloaded matmul node has dynamic dims: a note, not a failed graph
    assert any("no HLS C++" in note and "sizes of M, K" in note for note in units["image_pipeline.project"]["notes"])


def test_all_target_writes_hls_without_simulating(tmp_path):
    index = build("blur3x3", tmp_path / "a", check=True).index
    unit = index["units"][0]
    assert "hls/blur3x3.cpp" in hls_files(index, "blur3x3")
    assert "HLS C simulation not run (loom build --target hls runs it)" in unit["notes"]


def test_hls_target_of_an_unsized_kernel_is_a_one_line_error(tmp_path):
    source = tmp_path / "k.mlir"
    source.write_text("""func.func @k(%a: memref<?xf32>) {
  func.return
}
""")
    with pytest.raises(LoomError, match=r"argument 0 \(a\) has a dynamic or strided shape"):
        build(source, tmp_path / "out", target="hls")
    done = subprocess.run([sys.executable, "-m", "loom.cli", "build", str(source), "-o", str(tmp_path / "o2"),
                           "--target", "hls"], capture_output=True, text=True)
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1
    assert "HLS ports need static shapes" in done.stderr


def test_hls_target_refuses_a_dim_the_kernel_lacks(tmp_path):
    with pytest.raises(LoomError, match=r"has no dim Q \(its dims: K, M, N\)"):
        build("matmul_loops", tmp_path / "q", target="hls", dims={"Q": 3}, check=False)


def test_the_hls_check_sees_nan_and_infinity_differences():
    """NaN - NaN and inf - inf are NaN, which max() swallowed: a NaN against a number passed as error 0 (the HLS
    check, loom build's EKL check and loom ekl run share this comparison)."""
    import math

    import numpy as np

    from loom.core.compare import relative_difference

    nan, inf = math.nan, math.inf
    assert relative_difference(np.array([1.0, nan, -inf]), np.array([1.0, nan, -inf])) == 0.0
    assert relative_difference(np.array([2.0, 4.5]), np.array([2.0, 4.0])) == 0.5 / 4.0
    for got, want in (([1.0, nan], [1.0, 2.0]), ([1.0, 2.0], [1.0, nan]), ([inf, 1.0], [-inf, 1.0]),
                      ([inf, 1.0], [3.0, 1.0]), ([nan], [inf])):
        assert relative_difference(np.array(got), np.array(want)) == inf, (got, want)
