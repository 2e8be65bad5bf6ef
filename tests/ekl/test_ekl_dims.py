"""An EKL kernel's '?' extents are named dims (``loom.dims``), congruent ones sharing a name, so HLS can size
them: ``loom build --target hls`` takes the check's size (8, or the known extent a '?' must equal), ``--dims``
overrides. Before, every '?' kernel was refused by HLS ("HLS ports need static shapes") and ``--dims`` had no
dim to size ("its dims: none"). Values against numpy on the testbench's inputs."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.backends.hls import csim_inputs, emit_hls, simulate
from loom.build import build
from loom.dialects.dims import arg_dim_names
from loom.errors import LoomError

MATMUL = "kernel mm(A : f64[?, ?], B : f64[?, ?], C : out& f64[?, ?]) { out C[i, j] = <+ k< A[i, k] * B[k, j]; }"
KNOWN = "kernel s(a : f64[?], c : f64[4], y : out& f64[?]) { out y[i] = a[i] * c[i]; }"


def names(src):
    module = loom.ekl.load(src).kernel().ir("loops")
    [fn] = [op for op in module.walk() if op.name == "func.func"]
    return arg_dim_names(fn)


def test_congruent_extents_share_a_name():
    assert names(MATMUL) == [("A_0", "A_1"), ("A_1", "B_1"), ("A_0", "B_1")]
    assert loom.ekl.load(MATMUL).kernel().dim_sizes(8) == {"A_0": 8, "A_1": 8, "B_1": 8}
    assert loom.ekl.load(KNOWN).kernel().dim_sizes(8) == {"a_0": 4}  # congruent with c's 4
    assert names("kernel k(a : f64[3], y : out& f64[3]) { out y = a; }") == [None, None]


@pytest.mark.parametrize("dims,shapes", [({"A_0": 3, "A_1": 5, "B_1": 2}, ((3, 5), (5, 2)))])
def test_hls_of_a_dynamic_matmul_sized_by_dims(dims, shapes):
    program = emit_hls(loom.ekl.load(MATMUL).kernel().ir("loops"), dims=dims)
    x = csim_inputs(program)
    assert x["A"].shape == shapes[0] and x["B"].shape == shapes[1]
    np.testing.assert_array_equal(simulate(program).arrays["C"], x["A"] @ x["B"])


def test_the_cpu_kernel_still_checks_congruence():
    k = loom.ekl.load(MATMUL).kernel()
    c = np.zeros((3, 2))
    k(np.ones((3, 5)), np.ones((5, 2)), c)
    np.testing.assert_array_equal(c, np.full((3, 2), 5.0))
    with pytest.raises(LoomError, match="index 'k'"):
        k(np.ones((3, 5)), np.ones((4, 2)), c)


def test_loom_build_target_hls_sizes_dynamic_ekl_kernels(tmp_path):
    for src, unit in ((MATMUL, "mm"), (KNOWN, "s")):
        (tmp_path / f"{unit}.ekl").write_text(src)
        index = build(tmp_path / f"{unit}.ekl", tmp_path / unit, target="hls").index
        [record] = index["units"]
        assert record["checks"][-1].endswith("vs the C backend: max relative error 0")
    index = build(tmp_path / "mm.ekl", tmp_path / "mm2", target="hls", dims={"A_0": 2}).index
    assert "double A[16]" in (tmp_path / "mm2" / "mm" / "hls" / "mm.cpp").read_text()
    with pytest.raises(LoomError, match="its dims: A_0, A_1, B_1"):
        build(tmp_path / "mm.ekl", tmp_path / "mm3", target="hls", dims={"M": 2})
