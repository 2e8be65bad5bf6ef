"""Normalisations: batch (inference), layer, instance and Lp normalisation, softmax and log-softmax."""

from __future__ import annotations

import math

import numpy as np

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


def _hardmax(n: Node):
    """1 at the first maximum along the axis, 0 elsewhere (coerced to 2-d before opset 13, as Softmax)."""
    x, b = n.tensor(0), n.b
    axis = b.axis(n.op, int(n.attrs.get("axis", -1 if n.opset >= 13 else 1)), len(x.shape))
    shape = x.shape
    if n.opset < 13:
        rows = math.prod(shape[:axis])
        x, axis = b.view(x, (rows, x.size // rows)), 1
    top = b.arg_reduce("argmax", x, axis, True)
    positions = np.arange(x.shape[axis]).reshape([-1 if k == axis else 1 for k in range(len(x.shape))])
    y = b.select(b.compare("eq", top, b.constant(f"{n.proto.name or 'hardmax'}_positions", positions)), 1.0, 0.0,
                 dtype=x.dtype)
    return b.view(y, shape)


def _normalized_axes(n: Node, x, axes) -> list[int]:
    return sorted({n.b.axis(n.op, int(a), len(x.shape)) for a in axes})


def _rms_normalization(n: Node):
    """x / sqrt(mean(x^2) + epsilon) * scale over the axes from ``axis`` on (the reference's order)."""
    x, b = n.tensor(0), n.b
    axes = list(range(b.axis(n.op, int(n.attrs.get("axis", -1)), len(x.shape)), len(x.shape)))
    mean = b.reduce("mean", b.binary("mul", x, x), axes, True)
    rms = b.unary("sqrt", b.binary("add", mean, float(n.attrs.get("epsilon", 1e-5))))
    return b.binary("mul", b.binary("mul", x, b.unary("reciprocal", rms)), n.tensor(1))


def _mean_variance_normalization(n: Node):
    """(x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over ``axes`` (default N, H, W): the specification's function."""
    x, b = n.tensor(0), n.b
    axes = _normalized_axes(n, x, n.ints("axes", [0, 2, 3]))
    mean = b.reduce("mean", x, axes, True)
    variance = b.binary("sub", b.reduce("mean", b.binary("mul", x, x), axes, True), b.binary("mul", mean, mean))
    return b.binary("div", b.binary("sub", x, mean), b.binary("add", b.unary("sqrt", variance), 1e-9))


def _group_normalization(n: Node):
    """Each sample's channel groups normalised, then scaled and shifted per channel (opset 21) or per group
    (opset 18: each group's value for each of its channels)."""
    x, b = n.tensor(0), n.b
    groups = int(n.attrs["num_groups"])
    scale, bias = n.tensor(1), n.tensor(2)
    if n.opset < 21 and len(x.shape) > 1 and groups and x.shape[1] % groups == 0:
        per_group = np.arange(x.shape[1]) // (x.shape[1] // groups)
        scale, bias = (b.take(t, per_group, 0, n.op) if t.shape == (groups,) else t for t in (scale, bias))
    return b.group_norm(x, groups, scale, bias, float(n.attrs.get("epsilon", 1e-5)))


OPS = {
    "BatchNormalization": _batch_norm, "LayerNormalization": _layer_norm, "InstanceNormalization": _instance_norm,
    "LpNormalization": _lp_normalization, "Softmax": _softmax(False), "LogSoftmax": _softmax(True),
    "Hardmax": _hardmax, "RMSNormalization": _rms_normalization,
    "MeanVarianceNormalization": _mean_variance_normalization, "GroupNormalization": _group_normalization,
}
