"""EKL contractions offloaded to a matmul accelerator (simulated) through the AXI driver flow."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import loom
from loom.errors import LoomError
from loom.examples.ekl_paths import EKL_EXAMPLES
from loom.frontends.ekl.contraction import MatmulForm, matmul_form
from loom.frontends.ekl.elaborate import elaborate
from loom.frontends.ekl.parser import parse

ACCELERATORS = Path(loom.__file__).parent / "examples" / "accelerators"


def f32_copy(tmp: Path, source: str) -> str:
    """The shipped descriptions take i32; the same accelerators switched to f32 (the simulator models both)."""
    data = json.loads((ACCELERATORS / source).read_text())
    data["cpu"] = json.loads((ACCELERATORS / "pynq-z2.json").read_text())["cpu"]
    for acc in data["accelerators"]:
        acc["data_type"] = "f32"
    path = tmp / source.replace(".json", "_f32.json")
    path.write_text(json.dumps(data))
    return str(path)


@pytest.fixture(scope="module")
def v4_f32(tmp_path_factory) -> str:
    return f32_copy(tmp_path_factory.mktemp("desc"), "matmul_v4.json")


HELMHOLTZ = EKL_EXAMPLES["inverse_helmholtz"]


def helmholtz_inputs(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.random(s).astype(np.float32) for s in ((n, n), (n, n, n), (n, n, n))]


def relative(got, want):
    return float(np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want)))


@pytest.mark.sanitize
def test_inverse_helmholtz_f32_contractions_run_on_the_accelerator(v4_f32):
    kernel = loom.ekl.load(HELMHOLTZ, types={"REAL": "f32"}, accelerators=[v4_f32]).inverse_helmholtz
    steps = kernel.plan()
    # six pairwise contractions (three per S-sandwich) on v4_16; the point-wise D * t on the CPU
    assert kernel.offloaded == 6
    assert [s.device for s in steps] == ["v4_16"] * 3 + ["cpu"] + ["v4_16"] * 3
    assert "not a sum reduction" in steps[3].reason
    S, D, u = helmholtz_inputs(11)
    v = np.zeros((11,) * 3, np.float32)
    kernel(S, D, u, v)
    cpu = loom.ekl.load(HELMHOLTZ, types={"REAL": "f32"}).inverse_helmholtz
    w = np.zeros_like(v)
    cpu(S, D, u, w)
    assert relative(v, w) < 1e-5
    S64, D64, u64 = (x.astype(np.float64) for x in (S, D, u))
    want = np.einsum("ai,bj,ck,abc->ijk", S64, S64, S64, D64 * np.einsum("ia,jb,kc,abc->ijk", S64, S64, S64, u64))
    assert relative(v, want) < 1e-5
    # the accelerator did the work: every offloaded step moved data through the DMA runtime
    assert all(s.driver.last_run.transfers.words_sent > 0 for s in steps if s.device != "cpu")
    # the last contraction reads v_c4[c, i, j] as (M=(i, j), K=c): one transposing copy; S[c, k] is a view
    assert steps[-1].copies == 1


def test_dynamic_sizes_use_one_driver(v4_f32):
    text = HELMHOLTZ.read_text().replace("11", "?")
    kernel = loom.ekl.load(text, types={"REAL": "f32"}, accelerators=[v4_f32]).inverse_helmholtz
    for n in (5, 20):
        S, D, u = helmholtz_inputs(n, seed=n)
        v = np.zeros((n,) * 3, np.float32)
        kernel(S, D, u, v)
        want = kernel.reference(S, D, u, v=np.empty_like(v))["v"]
        assert relative(v, want) < 1e-5
    assert len({id(s.driver) for s in kernel.plan() if s.driver is not None}) == 1


def test_mismatched_data_type_stays_on_the_cpu(v4_f32):
    # f64 kernel on an f32 accelerator, f32 kernel on the shipped i32 one: nothing offloaded, reasons given
    for types, desc in (({"REAL": "f64"}, v4_f32), ({"REAL": "f32"}, str(ACCELERATORS / "matmul_v4.json"))):
        kernel = loom.ekl.load(HELMHOLTZ, types=types, accelerators=[desc]).inverse_helmholtz
        assert kernel.offloaded == 0
        assert [s.device for s in kernel.plan()] == ["cpu"]
        assert "data type mismatch" in kernel.placement()
        dtype = np.float64 if types["REAL"] == "f64" else np.float32
        S, D, u = (x.astype(dtype) for x in helmholtz_inputs(11))
        v = np.zeros((11,) * 3, dtype)
        kernel(S, D, u, v)
        assert relative(v, kernel.reference(S, D, u)["v"]) < 1e-5


def test_conv_accelerator_does_not_match_then_matmul_does(v4_f32, tmp_path):
    conv = f32_copy(tmp_path, "conv2d.json")
    kernel = loom.ekl.load(HELMHOLTZ, types={"REAL": "f32"}, accelerators=[conv, v4_f32]).inverse_helmholtz
    assert kernel.offloaded == 6


MIXED = """
kernel mixed(A : f32[?, 3, 4], B : f32[5, 4, 3], x : f32[5], y : out& f32[5, ?], z : out& f32[?, 3, 5])
{
    let P[i, n] = <+ j, k< A[i, j, k] * B[n, k, j];
    out y[n, i] = P[i, n] * x[n];
    out z[i, j, n] = <+ k< B[n, k, j] * A[i, j, k];
}
"""


def test_cpu_segments_between_offloaded_steps(v4_f32):
    """P: a matrix product over two reduction indices (K = (j, k), B transposed by copy); y: point-wise
    on the CPU, reading P from the accelerator; z: j is in both operands (a batch index): CPU."""
    kernel = loom.ekl.load(MIXED, accelerators=[v4_f32]).mixed
    assert [(s.names, s.device) for s in kernel.plan()] == [(["P"], "v4_16"), (["y", "z"], "cpu")]
    assert "batch" in kernel.placement()
    rng = np.random.default_rng(1)
    A, B, x = rng.random((6, 3, 4), np.float32), rng.random((5, 4, 3), np.float32), rng.random(5, np.float32)
    y, z = np.zeros((5, 6), np.float32), np.zeros((6, 3, 5), np.float32)
    kernel(A, B, x, y, z)
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    assert relative(y, np.einsum("ijk,nkj->ni", A64, B64) * x[:, None]) < 1e-5
    assert relative(z, np.einsum("nkj,ijk->ijn", B64, A64)) < 1e-5


def test_result_in_other_axis_order_is_copied_back(v4_f32):
    text = """kernel t(A : f32[6, 4], B : f32[4, 5, 3], C : out& f32[5, 6, 3])
              { out C[n, m, q] = <+ k< A[m, k] * B[k, n, q]; }"""
    kernel = loom.ekl.load(text, accelerators=[v4_f32]).t
    form = kernel.plan()[0].form
    assert kernel.offloaded == 1 and not form.output_is_view
    rng = np.random.default_rng(2)
    A, B = rng.random((6, 4), np.float32), rng.random((4, 5, 3), np.float32)
    C = np.zeros((5, 6, 3), np.float32)
    kernel(A, B, C)
    assert relative(C, np.einsum("mk,knq->nmq", A.astype(np.float64), B.astype(np.float64))) < 1e-5


def test_rrtmg_gathers_stay_on_the_cpu(v4_f32):
    kernel = loom.ekl.load(EKL_EXAMPLES["rrtmg_major"], types={"REAL": "f32"}, accelerators=[v4_f32]).rrtmg_major
    assert kernel.offloaded == 0
    assert "gather" in kernel.placement()
    rng = np.random.default_rng(3)
    T, p, eta, n_d = (rng.random(64).astype(np.float32) for _ in range(4))
    k = rng.random((14, 9, 9, 16)).astype(np.float32)
    tau = np.zeros((64, 16), np.float32)
    kernel(T, p, eta, n_d, k, tau)
    assert relative(tau, kernel.reference(T, p, eta, n_d, k)["tau"]) < 1e-5


@pytest.mark.parametrize("body, reason", [
    ("out y[i] = <max k< A[i, k] * B[k];", "not a sum reduction"),
    ("out y[i] = <+ k< A[i, k] * B[k] * B[k];", "3 factors"),
    ("out y[i] = <+ k< A[i, k] + B[k];", "two arrays"),
    ("out y[i] = <+ k< A[i, k] * A[k, k];", "repeats an index"),
])
def test_matmul_form_reasons(body, reason):
    text = f"kernel r(A : f32[4, 4], B : f32[4], y : out& f32[4]) {{ {body} }}"
    [kernel] = elaborate(parse(text, "<t>"))
    form = matmul_form(kernel.lets[-1])
    assert isinstance(form, str) and reason in form


def test_matrix_vector_is_a_matmul_with_one_column():
    [kernel] = elaborate(parse("kernel mv(A : f32[4, 3], x : f32[3], y : out& f32[4]) "
                               "{ out y[i] = <+ k< A[i, k] * x[k]; }", "<t>"))
    form = matmul_form(kernel.lets[0])
    assert isinstance(form, MatmulForm)
    assert [i.name for i in form.m] == ["i"] and form.n == () and [i.name for i in form.k] == ["k"]


def test_bad_accelerator_arguments_are_located(tmp_path):
    with pytest.raises(LoomError, match=r"accelerators\[0\].*not found"):
        loom.ekl.load(HELMHOLTZ, accelerators=[str(tmp_path / "missing.json")])
    with pytest.raises(LoomError, match=r"accelerators\[0\]"):
        loom.ekl.load(HELMHOLTZ, accelerators=[42])
    with pytest.raises(LoomError, match="no accelerator named 'v9'"):
        loom.ekl.load(HELMHOLTZ, accelerators=[(str(ACCELERATORS / "matmul_v4.json"), "v9")])


def test_a_shipped_description_named_without_its_folder_is_pointed_at(tmp_path, monkeypatch):
    """`--accel matmul_v3.json` finds the shipped file by name; the Python API resolves paths from the working
    directory, so the same name was just 'not found'. The message now says where the shipped one is."""
    monkeypatch.chdir(tmp_path)
    src = "kernel mm(A : f32[4, 6], B : f32[6, 5], C : out& f32[4, 5]) { out C[i, j] = <+ k< A[i, k] * B[k, j]; }"
    with pytest.raises(LoomError, match=r"accelerators\[0\]: accelerator description not found: .*matmul_v3.json "
                                        r"\(a path is read from the working directory; the shipped descriptions are "
                                        r"in loom.examples.ACCELERATORS_DIR"):
        loom.ekl.load(src, accelerators=["matmul_v3.json"])
