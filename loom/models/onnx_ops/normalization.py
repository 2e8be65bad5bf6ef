"""Normalisations: batch (inference), layer, instance and Lp normalisation, softmax and log-softmax."""

from __future__ import annotations

import math

from loom.models.composite import lp_normalize
from loom.models.onnx_ops.node import Node


def _batch_norm(n: Node):
    if n.attrs.get("training_mode", 0):
        raise n.error("training_mode=1 is not supported (inference only)")
    x = n.tensor(0)
    params, eps = [n.tensor(k) for k in range(1, 5)], float(n.attrs.get("epsilon", 1e-5))
    if all(n.b.is_constant(t) for t in params):  # folded into one per-channel affine
        return n.b.batch_norm(x, *params, eps)
    # statistics or scales computed when the model runs: the reference's (x - mean) / sqrt(var + eps) * scale + bias
    b = n.b
    if len(x.shape) < 2 or any(t.shape != (x.shape[1],) for t in params):
        raise n.error(f"needs one scale, bias, mean and variance per channel of {list(x.shape)}, got "
                      f"{[list(t.shape) for t in params]}")
    scale, bias, mean, var = (b.view(t, (t.shape[0],) + (1,) * (len(x.shape) - 2)) for t in params)
    normal = b.binary("div", b.binary("sub", x, mean), b.unary("sqrt", b.binary("add", var, eps)))
    return b.binary("add", b.binary("mul", scale, normal), bias)


def _layer_norm(n: Node):
    x = n.tensor(0)
    axis = n.b.axis(n.op, int(n.attrs.get("axis", -1)), len(x.shape))
    eps = float(n.attrs.get("epsilon", 1e-5))
    y = n.b.layer_norm(x, len(x.shape) - axis, n.optional(1), n.optional(2), eps)
    wanted = [k < len(n.proto.output) and bool(n.proto.output[k]) for k in (1, 2)]
    if not any(wanted):
        return (y, None, None)
    # the statistics too (Mean, InvStdDev: the normalised axes kept as 1s), as the reference computes them
    b, axes = n.b, list(range(axis, len(x.shape)))
    mean = b.reduce("mean", x, axes, True)
    deviation = b.binary("sub", x, mean)
    variance = b.reduce("mean", b.binary("mul", deviation, deviation), axes, True)
    inverse = b.unary("reciprocal", b.unary("sqrt", b.binary("add", variance, eps))) if wanted[1] else None
    return (y, mean, inverse)


def _instance_norm(n: Node):
    x = n.tensor(0)
    return n.b.group_norm(x, x.shape[1] if len(x.shape) > 1 else 1, n.tensor(1), n.tensor(2),
                          float(n.attrs.get("epsilon", 1e-5)))


def _lp_normalization(n: Node):
    p = int(n.attrs.get("p", 2))
    if p not in (1, 2):
        raise n.error(f"p={p} is not an ONNX LpNormalization order (1 or 2)")
    return lp_normalize(n.b, n.tensor(0), p, int(n.attrs.get("axis", -1)))


def _softmax(log: bool):
    def build(n: Node):
        x = n.tensor(0)
        if n.opset >= 13:
            return n.b.softmax(x, int(n.attrs.get("axis", -1)), log)
        axis = n.b.axis(n.op, int(n.attrs.get("axis", 1)), len(x.shape))  # coerced to 2-d before opset 13
        rows = math.prod(x.shape[:axis])
        y = n.b.softmax(n.b.view(x, (rows, x.size // rows)), 1, log)
        return n.b.view(y, x.shape)
    return build


OPS = {
    "BatchNormalization": _batch_norm, "LayerNormalization": _layer_norm, "InstanceNormalization": _instance_norm,
    "LpNormalization": _lp_normalization, "Softmax": _softmax(False), "LogSoftmax": _softmax(True),
}
