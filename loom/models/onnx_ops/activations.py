"""Activation functions, as compositions of the builder's element-wise layers where ONNX defines them so."""

from __future__ import annotations

import numpy as np

from loom.models.onnx_ops.node import Node


def _leaky_relu(n: Node):
    return n.b.leaky_relu(n.tensor(0), float(n.attrs.get("alpha", 0.01)))


def _prelu(n: Node):
    x, slope = n.tensor(0), n.tensor(1)
    if len(slope.shape) == 1 and len(x.shape) > 2 and slope.shape[0] == x.shape[1] != x.shape[-1]:
        slope = n.b.view(slope, (slope.shape[0],) + (1,) * (len(x.shape) - 2))  # per channel (PyTorch's)
    return n.b.leaky_relu(x, slope)


def _elu(n: Node):
    return n.b.elu(n.tensor(0), float(n.attrs.get("alpha", 1.0)))


def _selu(n: Node):
    alpha = float(n.attrs.get("alpha", 1.67326319217681884765625))
    gamma = float(n.attrs.get("gamma", 1.05070102214813232421875))
    return n.b.binary("mul", n.b.elu(n.tensor(0), alpha), gamma)  # onnx's order: (alpha * expm1(x)) * gamma


def _softplus(n: Node):
    return n.b.softplus(n.tensor(0))


def _softsign(n: Node):
    x = n.tensor(0)
    return n.b.binary("div", x, n.b.binary("add", n.b.unary("abs", x), 1.0))


def _hard_sigmoid(n: Node):
    alpha, beta = float(n.attrs.get("alpha", 0.2)), float(n.attrs.get("beta", 0.5))
    return n.b.hard_sigmoid(n.tensor(0), alpha, beta)


def _clip(n: Node):
    """max(x, min) then min(., max); from opset 11 the bounds are inputs: numbers when known at import, else
    one-element tensors computed when the model runs."""
    if n.opset < 11:
        lo, hi = n.attrs.get("min"), n.attrs.get("max")
    else:
        lo, hi = (_bound(n, k) for k in (1, 2))
    return n.b.clamp(n.tensor(0), lo, hi)


def _bound(n: Node, k: int):
    v = n.inputs[k] if k < len(n.inputs) else None
    if v is None:
        return None
    if isinstance(v, np.ndarray) or n.b.is_constant(v):
        return float(n.const(k, "bound").reshape(-1)[0])
    if v.size != 1:
        raise n.error(f"input {k} has shape {list(v.shape)}: a bound is one value")
    return n.tensor(k)


def _gelu(n: Node):
    return n.b.unary("gelu_tanh" if n.attrs.get("approximate", b"none") in (b"tanh", "tanh") else "gelu",
                     n.tensor(0))


def _celu(n: Node):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)): an elu of x / alpha scaled by alpha."""
    alpha = float(n.attrs.get("alpha", 1.0))
    return n.b.elu(n.tensor(0), alpha, 1.0, 1.0 / alpha)


def _mish(n: Node):
    x = n.tensor(0)
    return n.b.binary("mul", x, n.b.unary("tanh", n.b.softplus(x)))


def _shrink(n: Node):
    """x + bias where x < -lambd, x - bias where x > lambd, else 0."""
    x, lambd, bias = n.tensor(0), float(n.attrs.get("lambd", 0.5)), float(n.attrs.get("bias", 0.0))
    b = n.b
    low = b.select(b.compare("lt", x, -lambd), b.binary("add", x, bias), 0.0, dtype=x.dtype)
    return b.select(b.compare("gt", x, lambd), b.binary("sub", x, bias), low)


def _thresholded_relu(n: Node):
    x = n.tensor(0)
    return n.b.select(n.b.compare("gt", x, float(n.attrs.get("alpha", 1.0))), x, 0.0)


def _swish(n: Node):
    """x * sigmoid(alpha * x)."""
    x = n.tensor(0)
    return n.b.binary("mul", x, n.b.unary("sigmoid", n.b.binary("mul", x, float(n.attrs.get("alpha", 1.0)))))


OPS = {
    "Gelu": _gelu, "LeakyRelu": _leaky_relu, "PRelu": _prelu, "Elu": _elu, "Selu": _selu, "Softplus": _softplus,
    "Softsign": _softsign, "HardSigmoid": _hard_sigmoid, "HardSwish": lambda n: n.b.hardswish(n.tensor(0)),
    "Clip": _clip, "Celu": _celu, "Mish": _mish, "Shrink": _shrink, "ThresholdedRelu": _thresholded_relu,
    "Swish": _swish,
}
