"""ONNX Attention (opset 23/24), refused as an unsupported op before, in the forms a decoder uses, against onnx's
reference: grouped-query heads from 3-d projections with a KV cache (past_key / past_value), a causal mask, a
boolean padding mask shorter than the keys, softcap and the post-softmax scores; a batch of prompts of different
lengths (nonpad_kv_seqlen) with a sliding window; and a mismatched head count refused naming the node."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402

RNG = np.random.default_rng(5)


def _model(inputs, outputs, attrs, opset=23):
    """An Attention node of ``inputs`` (name, array); an empty name leaves that optional input out."""
    node = helper.make_node("Attention", [name for name, _ in inputs], outputs, name="attn", **attrs)
    types = {np.float32: TensorProto.FLOAT, np.bool_: TensorProto.BOOL, np.int64: TensorProto.INT64}
    graph = helper.make_graph([node], "a", [helper.make_tensor_value_info(k, types[v.dtype.type], v.shape)
                                            for k, v in inputs if k],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(inputs, outputs, attrs, opset=23):
    model = _model(inputs, outputs, attrs, opset)
    arrays = [v for k, v in inputs if k]
    want = ReferenceEvaluator(model).run(None, {k: v for k, v in inputs if k})
    got = loom.models.compile(model)(*arrays)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * float(np.abs(w).max()))


def test_grouped_query_decoder_step_with_cache_mask_and_softcap():
    batch, queries, past, heads, kv_heads, size = 2, 3, 4, 4, 2, 8
    f = np.float32
    inputs = [("q", RNG.standard_normal((batch, queries, heads * size)).astype(f)),
              ("k", RNG.standard_normal((batch, queries, kv_heads * size)).astype(f)),
              ("v", RNG.standard_normal((batch, queries, kv_heads * size)).astype(f)),
              ("mask", RNG.random((queries, past + 1)) > 0.3),  # (shorter than the 7 keys: padded as masked)
              ("past_k", RNG.standard_normal((batch, kv_heads, past, size)).astype(f)),
              ("past_v", RNG.standard_normal((batch, kv_heads, past, size)).astype(f))]
    _check(inputs, ["y", "present_k", "present_v", "scores"],
           {"q_num_heads": heads, "kv_num_heads": kv_heads, "is_causal": 1, "softcap": 2.0,
            "qk_matmul_output_mode": 3})


def test_batch_of_prompt_lengths_with_a_sliding_window():
    batch, heads, length, size = 3, 2, 6, 4
    qkv = [(name, RNG.standard_normal((batch, heads, length, size)).astype(np.float32)) for name in "qkv"]
    inputs = [*qkv, ("", None), ("", None), ("", None), ("lengths", np.array([6, 3, 5], np.int64))]
    _check(inputs, ["y"], {"is_causal": 1, "left_window_size": 2}, opset=24)


def test_heads_that_cannot_be_shared_are_refused_naming_the_node():
    q, kv = np.zeros((1, 3, 4, 8), np.float32), np.zeros((1, 2, 4, 8), np.float32)
    with pytest.raises(LoomError, match=r"node 0 'attn' \(Attention\).*3 query heads cannot share 2 key"):
        loom.models.compile(_model([("q", q), ("k", kv), ("v", kv)], ["y"], {}))


@pytest.mark.parametrize("interleaved, rotated", [(0, 0), (1, 4)])
def test_rotary_embedding_by_position_ids_equals_the_reference(interleaved, rotated):
    """RotaryEmbedding (opset 23; refused before) of 3-d projections, cos / sin rows picked by run-time ids."""
    x = RNG.standard_normal((2, 5, 2 * 8)).astype(np.float32)
    angles = np.arange(12)[:, None] * 0.1 * np.arange(1, 1 + (rotated or 8) // 2)[None]
    inits = {"cos": np.cos(angles).astype(np.float32), "sin": np.sin(angles).astype(np.float32)}
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "ids"], ["y"], num_heads=2,
                            interleaved=interleaved, rotary_embedding_dim=rotated)
    graph = helper.make_graph([node], "r", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                                            helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    ids = np.array([[0, 1, 2, 3, 4], [7, 8, 9, 10, 11]], np.int64)
    want = ReferenceEvaluator(model).run(None, {"x": x, "ids": ids})[0]
    np.testing.assert_allclose(loom.models.compile(model)(x, ids), want, rtol=1e-5, atol=1e-6)


def test_a_split_with_an_empty_part_concatenated_back():
    """Exporters split off 'the features not rotated', an empty part when all are: Split sizes [8, 0] were refused."""
    split = helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1)
    graph = helper.make_graph([split, helper.make_node("Neg", ["a"], ["na"]),
                               helper.make_node("Concat", ["na", "b"], ["y"], axis=1)], "s",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(np.array([8, 0], np.int64), "sizes")])
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    np.testing.assert_array_equal(loom.models.compile(model)(x), -x)
