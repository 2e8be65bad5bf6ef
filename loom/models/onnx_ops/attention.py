"""Attention (opset 23): scaled dot-product attention over heads, as onnx's reference computes it; RotaryEmbedding
(below).

Q, K, V are (batch, heads, sequence, head size), or (batch, sequence, hidden) with q_num_heads / kv_num_heads;
past_key / past_value are concatenated before K / V (present_key / present_value are the concatenations). The
scale's square root multiplies Q and K each; softcap squashes the scores by softcap * tanh(s / softcap). The bias
added to the scores is the mask (bool: 0 where true, -inf where false; or float), padded with -inf up to the keys'
length, plus the causal mask (key j seen from query i when j <= i + the past's length). Fewer K / V heads than Q
heads (grouped-query attention) are repeated. The softmax of a row that the bias masks entirely is 0. The fourth
output is the scores (qk_matmul_output_mode 0, 1), with the bias (2) or after the softmax (3).
"""

from __future__ import annotations

import numpy as np

from loom.models.graph import FLOATS, Tensor
from loom.models.onnx_ops.node import Node


def _heads(n: Node, t: Tensor, heads: int, what: str) -> Tensor:
    """(batch, sequence, heads * size) -> (batch, heads, sequence, size)."""
    batch, length, hidden = t.shape
    if heads < 1 or hidden % heads:
        raise n.error(f"{what} has hidden size {hidden}, not divisible into {heads} heads")
    return n.b.transpose(n.b.view(t, (batch, length, heads, hidden // heads)), (0, 2, 1, 3))


def _bias(n: Node, dtype, queries: int, keys: int, past: int) -> Tensor | None:
    """The additive bias of the scores (0 where a key is seen, -inf where not), or None: the mask input (input 3),
    the causal mask, the sliding window (left / right_window_size) and, with nonpad_kv_seqlen (input 6, a run-time
    length per batch), the keys past each batch's length. A query i sits at i + offset among the keys: offset is the
    past's length, or the batch's length less the queries' with nonpad_kv_seqlen."""
    b, mask = n.b, n.optional(3)
    terms = []
    if mask is not None:
        if mask.dtype == np.bool_:
            mask = b.select(mask, 0.0, float("-inf"), dtype=dtype)
        elif mask.dtype != dtype:
            raise n.error(f"the mask is {mask.dtype}; a float mask must be the queries' dtype {dtype} (or bool)")
        missing = keys - mask.shape[-1]
        if missing < 0:
            raise n.error(f"the mask has {mask.shape[-1]} key positions, more than the {keys} keys")
        terms.append(b.pad(mask, [0] * len(mask.shape), [0] * (len(mask.shape) - 1) + [missing], float("-inf")))
    lengths = n.optional(6) if len(n.inputs) > 6 else None
    if lengths is not None and past:
        raise n.error("nonpad_kv_seqlen (input 6) cannot be combined with past_key / past_value")
    # a query i sees key j where sign * (j - i - offset) <= limit for each bound: the causal one (sign 1, limit 0)
    # and the window's sides (sign -1, limit left; sign 1, limit right)
    distance = np.arange(keys)[None, :] - np.arange(queries)[:, None]
    left, right = (int(n.attrs.get(a, -1)) for a in ("left_window_size", "right_window_size"))
    bounds = [(1, 0)] if int(n.attrs.get("is_causal", 0)) else []
    bounds += [(-1, left)] if left >= 0 else []
    bounds += [(1, right)] if right >= 0 else []
    for sign, limit in bounds:
        if lengths is None:  # the offset is the past's length, for every batch
            allowed = sign * (distance - past) <= limit
            terms.append(b.constant(f"{n.proto.name or 'attention'}_window", np.where(allowed, 0.0, -np.inf)
                                    .astype(dtype)))
        else:  # offset = length - queries: sign * (distance + queries) - limit <= sign * length, per batch
            given = b.constant("distance", (sign * (distance + queries) - limit).astype(np.int64))
            per_batch = b.view(b.binary("mul", lengths, sign), (lengths.shape[0], 1, 1, 1))
            terms.append(b.select(b.compare("le", given, per_batch), 0.0, float("-inf"), dtype=dtype))
    if lengths is not None:  # keys past the batch's length
        beyond = b.compare("lt", b.constant("keys", np.arange(keys)[None, None, None, :]),
                           b.view(lengths, (lengths.shape[0], 1, 1, 1)))
        terms.append(b.select(beyond, 0.0, float("-inf"), dtype=dtype))
    bias = None
    for term in terms:
        bias = term if bias is None else b.binary("add", bias, term)
    return bias


def _masked_softmax(n: Node, scores: Tensor, bias: Tensor) -> Tensor:
    """Softmax along the last axis that gives 0 (not NaN) on rows whose every score is -inf, and 0 on the rows the
    bias masks entirely."""
    b, last = n.b, len(scores.shape) - 1
    top = b.reduce("max", scores, [last], True)
    top = b.select(b.compare("eq", top, float("-inf")), 0.0, top)
    e = b.unary("exp", b.binary("sub", scores, top))
    total = b.reduce("sum", e, [last], True)
    total = b.select(b.compare("eq", total, 0.0), 1.0, total)
    p = b.binary("div", e, total)
    masked = b.reduce("max", bias, [len(bias.shape) - 1], True)
    return b.select(b.compare("eq", masked, float("-inf")), 0.0, p)


def _attention(n: Node):
    b = n.b
    q, k, v = n.tensor(0), n.tensor(1), n.tensor(2)
    if q.dtype not in FLOATS:
        raise n.error(f"Q is {q.dtype}; attention computes in float32 or float64")
    rank = len(q.shape)
    if rank == 3:
        if "q_num_heads" not in n.attrs or "kv_num_heads" not in n.attrs:
            raise n.error("3-d Q, K, V need the q_num_heads and kv_num_heads attributes")
        heads_q, heads_kv = int(n.attrs["q_num_heads"]), int(n.attrs["kv_num_heads"])
        q, k, v = _heads(n, q, heads_q, "Q"), _heads(n, k, heads_kv, "K"), _heads(n, v, heads_kv, "V")
    elif rank != 4 or len(k.shape) != 4 or len(v.shape) != 4:
        raise n.error(f"Q, K, V must all be 3-d or 4-d, got {list(q.shape)}, {list(k.shape)}, {list(v.shape)}")
    scale = n.attrs.get("scale")
    scale = 1.0 / np.sqrt(q.shape[3]) if scale is None else float(scale)
    root = float(np.asarray(np.sqrt(scale), q.dtype))  # (the reference scales Q and K by the root each)
    past_k, past_v = n.optional(4), n.optional(5)
    if (past_k is None) != (past_v is None):
        raise n.error("past_key and past_value must be given together")
    present_k = k if past_k is None else b.concat([past_k, k], 2)
    present_v = v if past_v is None else b.concat([past_v, v], 2)
    heads, kv_heads = q.shape[1], present_k.shape[1]
    keys, values = present_k, present_v
    if heads != kv_heads:
        if kv_heads < 1 or heads % kv_heads or present_v.shape[1] != kv_heads:
            raise n.error(f"{heads} query heads cannot share {kv_heads} key / {present_v.shape[1]} value heads")
        shared = np.repeat(np.arange(kv_heads), heads // kv_heads)
        keys, values = (b.take(t, shared, 1, n.op) for t in (present_k, present_v))
    scores = b.matmul(b.binary("mul", q, root), b.transpose(b.binary("mul", keys, root), (0, 1, 3, 2)))
    softcap = float(n.attrs.get("softcap", 0.0))
    if softcap > 0:
        scores = b.binary("mul", b.unary("tanh", b.binary("div", scores, softcap)), softcap)
    bias = _bias(n, q.dtype, q.shape[2], keys.shape[2], 0 if past_k is None else past_k.shape[2])
    biased = scores if bias is None else b.binary("add", scores, bias)
    weights = b.softmax(biased, len(biased.shape) - 1) if bias is None else _masked_softmax(n, biased, bias)
    y = b.matmul(weights, values)
    if rank == 3:
        y = b.view(b.transpose(y, (0, 2, 1, 3)), (y.shape[0], y.shape[2], y.shape[1] * y.shape[3]))
    mode = int(n.attrs.get("qk_matmul_output_mode", 0))
    if mode not in (0, 1, 2, 3):
        raise n.error(f"qk_matmul_output_mode={mode} is not one of 0, 1, 2, 3")
    return y, present_k, present_v, {2: biased, 3: weights}.get(mode, scores)


def _rotary_embedding(n: Node):
    """Rotates pairs of each head's first rotary_embedding_dim features by the cached angles of each token's
    position (cos_cache / sin_cache rows picked by position_ids, or given per token): halves (x1, x2) or, with
    ``interleaved``, even and odd features, to (x1 cos - x2 sin, x1 sin + x2 cos)."""
    b, x = n.b, n.tensor(0)
    cos, sin, ids = n.tensor(1), n.tensor(2), n.optional(3)
    rank = len(x.shape)
    if rank == 4:
        x = b.transpose(x, (0, 2, 1, 3))  # (batch, heads, sequence, size) -> (batch, sequence, heads, size)
    elif rank == 3:
        heads = int(n.attrs.get("num_heads", 0))
        if heads < 1 or x.shape[2] % heads:
            raise n.error(f"a 3-d input needs num_heads dividing its hidden size {x.shape[2]}, got {heads}")
        x = b.view(x, (*x.shape[:2], heads, x.shape[2] // heads))
    else:
        raise n.error(f"needs a 3-d or 4-d input, got {list(x.shape)}")
    batch, length, heads, size = x.shape
    rotated = int(n.attrs.get("rotary_embedding_dim", 0)) or size
    if rotated % 2 or rotated > size:
        raise n.error(f"rotary_embedding_dim {rotated} must be even and at most the head size {size}")
    if ids is not None:
        cos, sin = (b.take_positions(t, ids, 0, False, n.op) for t in (cos, sin))
    if cos.shape != (batch, length, rotated // 2) or sin.shape != cos.shape:
        raise n.error(f"the cos / sin caches give {list(cos.shape)} / {list(sin.shape)} per token, expected "
                      f"{[batch, length, rotated // 2]}")
    cos, sin = (b.view(t, (batch, length, 1, rotated // 2)) for t in (cos, sin))
    interleaved = bool(n.attrs.get("interleaved", 0))
    if interleaved:
        x1, x2 = b.slice(x, 3, 0, rotated, 2), b.slice(x, 3, 1, rotated, 2)
    else:
        x1, x2 = b.slice(x, 3, 0, rotated // 2), b.slice(x, 3, rotated // 2, rotated)
    real = b.binary("sub", b.binary("mul", cos, x1), b.binary("mul", sin, x2))
    imag = b.binary("add", b.binary("mul", sin, x1), b.binary("mul", cos, x2))
    if interleaved:
        pair = (batch, length, heads, rotated // 2, 1)
        y = b.view(b.concat([b.view(real, pair), b.view(imag, pair)], 4), (batch, length, heads, rotated))
    else:
        y = b.concat([real, imag], 3)
    if rotated < size:
        y = b.concat([y, b.slice(x, 3, rotated, size)], 3)
    return b.transpose(y, (0, 2, 1, 3)) if rank == 4 else b.view(y, (batch, length, heads * size))


OPS = {"Attention": _attention, "RotaryEmbedding": _rotary_embedding}
