"""HLS C++ of real kernels, built with g++ -Wall -Wextra -Werror against loom_hls.h and run by the
generated testbench; outputs are compared with numpy (or the frontend's own numpy reference)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from loom.backends.hls import emit_hls, simulate, csim_inputs
from loom.examples.kernels import blur3x3, conv2d_nchw_linalg, matmul_loops, stencil3x3_parallel
from tests.backends.hls.hls_helpers import function_pragmas, loop_pragmas
from tests.backends.hls.test_hls_header import to_fixed

pytestmark = pytest.mark.sanitize


@pytest.mark.parametrize("interface", ["m_axi", "axis"])
def test_python_matmul_equals_numpy(interface):
    program = emit_hls(matmul_loops.module, dims={"M": 12, "N": 10, "K": 24}, interface=interface)
    x = csim_inputs(program)
    run = simulate(program)
    # inputs are multiples of 1/64 in [-2, 2]: every f32 sum here is exact, so equality is exact too
    np.testing.assert_array_equal(run.arrays["Cm"], x["Cm"] + x["A"] @ x["B"])
    pragmas = function_pragmas(program.source, "matmul_loops")
    if interface == "m_axi":
        assert pragmas == ["INTERFACE m_axi port=A offset=slave bundle=gmem0 depth=288",
                           "INTERFACE m_axi port=B offset=slave bundle=gmem1 depth=240",
                           "INTERFACE m_axi port=Cm offset=slave bundle=gmem2 depth=120",
                           "INTERFACE s_axilite port=return"]
        assert "void matmul_loops(const float A[288], const float B[240], float Cm[120])" in program.source
    else:
        assert pragmas == ["INTERFACE axis port=A_in", "INTERFACE axis port=B_in", "INTERFACE axis port=Cm_in",
                           "INTERFACE axis port=Cm_out", "INTERFACE s_axilite port=return"]
    loops = loop_pragmas(program.source)
    kernel_loops = [(head, p) for head, p in loops if "intptr_t" in head]
    # i: left to the tool; j: pipelined (its k loop of 24 > 16 iterations is not unrolled)... k innermost
    assert [p for _, p in kernel_loops] == [[], [], ["PIPELINE II=1"]]
    assert "< 24;" in kernel_loops[2][0]


def test_small_inner_loops_unroll_inside_the_pipeline():
    program = emit_hls(matmul_loops.module, dims={"M": 4, "N": 20, "K": 3}, ii=2, unroll=1)
    loops = loop_pragmas(program.source)
    assert [p for _, p in loops] == [[], ["PIPELINE II=2"], ["UNROLL"]]  # k (3 iterations) unrolls into j
    program = emit_hls(matmul_loops.module, dims={"M": 4, "N": 4, "K": 3}, ii=2)
    loops = loop_pragmas(program.source)  # the whole 4x3 j/k nest (12 iterations) unrolls into i
    assert [p for _, p in loops] == [["PIPELINE II=2"], ["UNROLL"], ["UNROLL"]]
    program = emit_hls(matmul_loops.module, dims={"M": 4, "N": 4, "K": 3}, ii=None, unroll=2, full_unroll=0)
    assert [p for _, p in loop_pragmas(program.source)] == [[], [], ["PIPELINE", "UNROLL factor=2"]]


def test_fixed_point_matmul_matches_exact_model():
    program = emit_hls(matmul_loops.module, dims={"M": 5, "N": 6, "K": 7}, types={"f32": "ap_fixed<12,4,AP_RND,AP_SAT>"})
    assert "ap_fixed<12, 4, AP_RND, AP_SAT> Cm[30]" in program.source
    x = csim_inputs(program)
    run = simulate(program)
    fx = lambda v: to_fixed(v, "ap_fixed", 12, 4, "AP_RND", "AP_SAT")  # noqa: E731
    A = [[fx(Fraction(float(v))) for v in row] for row in x["A"]]
    B = [[fx(Fraction(float(v))) for v in row] for row in x["B"]]
    for i in range(5):
        for j in range(6):
            acc = fx(Fraction(float(x["Cm"][i, j])))
            for k in range(7):
                acc = fx(acc + fx(A[i][k] * B[k][j]))  # each SSA value is stored in the type
            assert Fraction(float(run.arrays["Cm"][i, j])) == acc, (i, j)


def test_blur_kernel_with_border_arm_equals_numpy():
    program = emit_hls(blur3x3.module, dims={"H": 9, "W": 11})
    x = csim_inputs(program)
    run = simulate(program)
    src = x["inp"]
    want = src.copy()
    for i in range(1, 8):
        for j in range(1, 10):
            s = src[i - 1, j - 1] + src[i - 1, j] + src[i - 1, j + 1]
            s = s + src[i, j - 1] + src[i, j] + src[i, j + 1]
            s = s + src[i + 1, j - 1] + src[i + 1, j] + src[i + 1, j + 1]
            want[i, j] = s / np.float32(9.0)
    np.testing.assert_array_equal(run.arrays["out"], want)


def test_parallel_3x3_stencil_equals_numpy():
    program = emit_hls(stencil3x3_parallel.module, dims={"H": 8, "W": 20})
    x = csim_inputs(program)
    run = simulate(program)
    a, want = x["A"].astype(np.float64), x["B"].copy()
    window = sum(a[1 + dy:7 + dy, 1 + dx:19 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1))
    np.testing.assert_allclose(run.arrays["B"][1:-1, 1:-1], window[:, :] * 0.1111111, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(run.arrays["B"][0], want[0])  # the border is left alone
    assert "#pragma omp" not in program.source
    # scf.parallel's j dimension (18 iterations: more than full_unroll) is the pipelined loop
    assert [p for _, p in loop_pragmas(program.source)] == [[], ["PIPELINE II=1"]]


def test_linalg_conv_equals_numpy():
    dims = {"NB": 1, "C": 2, "IH": 7, "IW": 6, "O": 3, "KH": 3, "KW": 2, "OH": 5, "OW": 5}
    program = emit_hls(conv2d_nchw_linalg.module, dims=dims)
    x = csim_inputs(program)
    run = simulate(program)
    inp, flt = x["I"].astype(np.float64), x["Fl"].astype(np.float64)
    want = x["Out"].astype(np.float64).copy()
    for ky in range(3):
        for kx in range(2):
            want += np.einsum("nchw,oc->nohw", inp[:, :, ky:ky + 5, kx:kx + 5], flt[:, :, ky, kx])
    np.testing.assert_allclose(run.arrays["Out"], want, rtol=1e-6, atol=1e-5)


def test_ekl_inverse_helmholtz_equals_its_numpy_reference():
    import loom.ekl
    from loom.examples.ekl_paths import EKL_EXAMPLES

    kernel = loom.ekl.load(EKL_EXAMPLES["inverse_helmholtz"]).kernel("inverse_helmholtz")
    program = emit_hls(kernel.ir("c"))
    x = csim_inputs(program)
    names = [p.name for p in kernel.form.params]
    by_name = {name: x[port.name] for name, port in zip(names, program.ports)}
    want = kernel.reference(**{p.name: by_name[p.name] for p in kernel.form.params if not p.is_output})
    run = simulate(program)
    out_port = program.ports[names.index("v")].name
    np.testing.assert_allclose(run.arrays[out_port], want["v"], rtol=1e-12, atol=1e-9)
    assert program.source.count("double buf") >= 2  # intermediates are local static arrays, no heap
    assert "malloc" not in program.source.split("loomh_max_idx")[-1]


def test_gaussian_pipeline_stage_equals_the_reference_evaluator():
    from loom.examples.pipelines import load_app
    from loom.frontends.pipeline import evaluate
    from loom.jit.pipeline import compile_cpu

    app = load_app("gaussian")
    size = (8, 8)
    cpu = app.build("cpu", tile=(8, 8))[0]
    shapes = {k: v.shape for k, v in app.make_inputs(size, np.random.default_rng(0)).items()}
    cpu_program = compile_cpu(cpu, shapes, tuple(app.output_shape(size)))
    program = emit_hls(cpu_program.lowered)
    x = csim_inputs(program)
    run = simulate(program)
    image = x[program.ports[0].name].view(np.uint8)
    want = evaluate(cpu, {"input": image}, tuple(app.output_shape(size)))
    np.testing.assert_array_equal(run.arrays[program.ports[1].name].view(np.uint8), want)
    # the 3x3 window unrolls inside the pipelined x loop; its buffers are partitioned for it
    pipelined = [p for _, p in loop_pragmas(program.source) if p and p[0].startswith("PIPELINE")]
    assert pipelined
    partitions = [line.strip() for line in program.source.splitlines() if "ARRAY_PARTITION" in line]
    assert any("complete dim=1" in p for p in partitions)  # the 3x3 weights: nine registers
    assert any("cyclic factor=13 dim=1" in p for p in partitions)  # the 10-wide image: 9 taps, 13 banks


def test_dataflow_node_kernel_equals_numpy():
    from loom.examples.dataflow.image_pipeline import brighten, rectify

    for node, reference in ((brighten, lambda a: a * 2 + 1), (rectify, lambda a: np.maximum(a, 0))):
        program = emit_hls(node.module)
        x = csim_inputs(program)
        run = simulate(program)
        np.testing.assert_array_equal(run.arrays["B"], reference(x["A"]))
