"""The onnx wheel's backend test models (pytorch-converted, pytorch-operator, simple): each one either
runs and equals its stored outputs, or is refused at import with a LoomError naming the op.

CI runs a fixed sample (every model of ops loom supports would take minutes to compile on 2 cores);
``benchmarks/bench_onnx_conformance.py`` runs them all and prints the counts (120 pass, 20 refused,
0 mismatches at the time of writing).
"""

from __future__ import annotations

import pytest

onnx = pytest.importorskip("onnx")

from loom.models.onnx_conformance import backend_cases, run_case  # noqa: E402

# a sample: supported models of different layer kinds, and refusals of different reasons
RUNS = ["test_Conv2d_depthwise_padded", "test_MaxPool2d_stride_padding_dilation", "test_AvgPool2d_stride",
        "test_BatchNorm2d_momentum_eval", "test_PReLU_2d_multiparam", "test_log_softmax_dim3", "test_Embedding",
        "test_operator_addmm", "test_operator_concat2", "test_ZeroPad2d", "test_operator_reduced_mean_keepdim",
        "test_Linear", "test_SELU", "test_Softplus", "test_GLU",
        "test_operator_add_broadcast",  # (float64: refused for its input dtype before float64 was computed)
        "test_ConvTranspose2d", "test_ReflectionPad2d",  # (refused before transposed convolutions, reflect padding)
        "test_operator_repeat",  # (Tile)
        "test_MaxPool3d", "test_Conv3d", "test_AvgPool3d",  # (refused before 3-d convolution and pooling)
        "test_expand_shape_model4"]  # (an Expand's shape as a model input: refused before examples gave it)
REFUSED = {"test_sequence_model1": "SequenceEmpty",
           "test_strnorm_model_monday_empty_output": "StringNormalizer"}


def _cases():
    by_name = {c.name: c for c in backend_cases()}
    missing = [n for n in [*RUNS, *REFUSED] if n not in by_name]
    assert not missing, f"the onnx wheel no longer ships {missing}"
    return by_name


def test_sample_runs_or_is_refused_with_the_op_named():
    by_name = _cases()
    results = {n: run_case(by_name[n]) for n in [*RUNS, *REFUSED]}
    counts = {s: sum(r.status == s for r in results.values()) for s in ("pass", "refused", "mismatch", "error")}
    failures = {n: r.message for n, r in results.items() if r.status in ("mismatch", "error")}
    assert not failures, failures
    assert counts == {"pass": len(RUNS), "refused": len(REFUSED), "mismatch": 0, "error": 0}, counts
    for name, op in REFUSED.items():
        assert f"({op})" in results[name].message or f"{op} " in results[name].message, results[name].message


def test_every_shipped_model_is_accounted_for():
    """Import alone (no compile) over all shipped models: each is importable or refused by name."""
    from loom.errors import LoomError
    from loom.models.onnx_import import import_onnx

    imported = refused = 0
    for case in backend_cases():
        try:
            import_onnx(case / "model.onnx")
            imported += 1
        except LoomError as error:
            assert " node " in str(error) or " input " in str(error), str(error)
            refused += 1
    assert imported >= 80 and imported + refused == len(backend_cases())


def test_generated_node_cases_of_a_sample_of_ops():
    """onnx's per-op node cases (generated in memory): gemm, slice, gather, expand, flatten."""
    from loom.models.onnx_conformance import node_cases, run_node_case

    results = [run_node_case(c) for c in node_cases(("gemm", "slice", "gather", "expand", "flatten"))]
    failures = {r.name: r.message for r in results if r.status in ("mismatch", "error")}
    assert not failures, failures
    passed = [r.name for r in results if r.status == "pass"]
    assert len(passed) >= 20 and "test_gemm_default_scalar_bias" in passed  # a 0-d input stays 0-d
    for r in results:
        if r.status == "refused":
            assert " node 0 " in r.message or " input " in r.message, r.message


def test_generated_node_cases_of_the_logical_ops_all_pass():
    """Not / And / Or / Xor (bool inputs) and Where: refused before loom had bool tensors; the modules named after
    Python keywords ("and_") are found again when imported earlier in the process."""
    from loom.models.onnx_conformance import node_cases, run_node_case

    for _ in range(2):
        results = [run_node_case(c) for c in node_cases(("not_", "and_", "or_", "xor", "where"))]
        assert len(results) == 3 + 8 * 3 + 2
        assert all(r.status == "pass" for r in results), {r.name: r.message for r in results if r.status != "pass"}
