"""Recurrent layers (LSTM, GRU, RNN), unrolled over the static sequence length."""

from __future__ import annotations

import numpy as np

from loom.models.onnx_ops.node import Node, choice, text

# each kind's activations (f, g, h) per direction, ONNX's defaults, and the ones loom builds
_DEFAULT_ACTIVATIONS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"), "RNN": ("Tanh",)}
_ACTIVATIONS = {"Sigmoid": "sigmoid", "Tanh": "tanh", "Relu": "relu"}


def _activations(n: Node, kind: str, directions: int) -> list[tuple[str, ...]]:
    """The unary ops of each direction's activations (the ``activations`` attribute lists them direction by
    direction)."""
    per = len(_DEFAULT_ACTIVATIONS[kind])
    names = [text(a) for a in n.attrs.get("activations", [])] or list(_DEFAULT_ACTIVATIONS[kind]) * directions
    if len(names) != per * directions:
        raise n.error(f"activations {names}: {kind} takes {per} per direction, {per * directions} in all")
    for name in names:
        if name not in _ACTIVATIONS:
            raise n.error(f"activation {name!r} is not supported (supported: {', '.join(_ACTIVATIONS)})")
    return [tuple(_ACTIVATIONS[a] for a in names[d * per:(d + 1) * per]) for d in range(directions)]


def _recurrent(kind: str):
    """LSTM / GRU / RNN (torch.onnx's nn.LSTM / nn.GRU / nn.RNN), unrolled over the sequence (its length is the
    input's static shape): the input's projections for every step are one matrix product, then each step adds the
    hidden state's and applies the gates (ONNX's orders: LSTM i, o, f, c; GRU z, r, h; linear_before_reset as given).
    Directions
    forward, reverse, bidirectional; layout 0 or 1; activations Sigmoid, Tanh, Relu. Refused: sequence_lens,
    peepholes, clip, activations with parameters, input_forget."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]

    def build(n: Node):
        b = n.b
        x, w, r = n.tensor(0), n.tensor(1), n.tensor(2)
        bias = n.optional(3)
        layout = int(n.attrs.get("layout", 0))
        if len(n.inputs) > 4 and n.inputs[4] is not None:  # every sequence full length: nothing to mask
            lengths = n.const(4, "sequence_lens")
            if not np.all(lengths == x.shape[1 if layout else 0]):
                raise n.error(f"sequence_lens {lengths.tolist()} shorter than the sequence are not supported")
        if len(n.inputs) > 7 and n.inputs[7] is not None:
            raise n.error("peepholes (input P) are not supported")
        for attr in ("clip", "activation_alpha", "activation_beta"):
            if attr in n.attrs:
                raise n.error(f"the {attr} attribute is not supported (activations without parameters, no clip)")
        if int(n.attrs.get("input_forget", 0)):
            raise n.error("input_forget=1 is not supported")
        if layout:
            x = b.transpose(x, (1, 0, 2))  # (batch, seq, in) -> (seq, batch, in)
        steps, batch, features = x.shape
        directions, hidden = w.shape[0], r.shape[2]
        direction = choice(n, "direction", "forward", ("forward", "reverse", "bidirectional"))
        if directions != (2 if direction == "bidirectional" else 1) or w.shape[1] != gates * hidden:
            raise n.error(f"W {list(w.shape)} does not match {direction} {kind} of hidden size {hidden}")
        activations = _activations(n, kind, directions)
        states = []
        for k, what in ((5, "initial_h"), (6, "initial_c")):
            t = n.optional(k) if k < len(n.inputs) else None
            if t is not None and layout:
                t = b.transpose(t, (1, 0, 2))
            states.append(t)
        before_reset = bool(n.attrs.get("linear_before_reset", 0))
        ys, last_h, last_c = [], [], []
        for d in range(directions):
            wd, rd = (b.view(b.slice(t, 0, d, d + 1), t.shape[1:]) for t in (w, r))
            projected = b.matmul(b.view(x, (steps * batch, features)), b.transpose(wd, (1, 0)))
            if bias is not None:  # Wb + Rb, except GRU's Rbh where the reset gate scales it
                bd = b.view(b.slice(bias, 0, d, d + 1), (2 * gates * hidden,))
                wb, rb = b.slice(bd, 0, 0, gates * hidden), b.slice(bd, 0, gates * hidden, 2 * gates * hidden)
                projected = b.binary("add", projected, wb)
            projected = b.view(projected, (steps, batch, gates * hidden))
            h = states[0] and b.view(b.slice(states[0], 0, d, d + 1), (batch, hidden))
            c = states[1] and b.view(b.slice(states[1], 0, d, d + 1), (batch, hidden))
            zeros = b.constant(f"{n.proto.name or kind}_zeros", np.zeros((batch, hidden), x.dtype))
            h = zeros if h is None else h
            c = zeros if c is None else c
            order = range(steps - 1, -1, -1) if direction == "reverse" or d == 1 else range(steps)
            outs = {}
            f_, g_, h_ = (*activations[d], None, None)[:3]
            for t in order:
                xt = b.view(b.slice(projected, 0, t, t + 1), (batch, gates * hidden))
                hr = b.matmul(h, b.transpose(rd, (1, 0)))
                if bias is not None:
                    hr = b.binary("add", hr, rb)

                def gate(src, g):
                    return b.slice(src, 1, g * hidden, (g + 1) * hidden)

                if kind == "RNN":
                    h = b.unary(f_, b.binary("add", xt, hr))
                elif kind == "LSTM":
                    pre = b.binary("add", xt, hr)
                    i, o, f = (b.unary(f_, gate(pre, g)) for g in range(3))
                    c = b.binary("add", b.binary("mul", f, c), b.binary("mul", i, b.unary(g_, gate(pre, 3))))
                    h = b.binary("mul", o, b.unary(h_, c))
                else:
                    z, rr = (b.unary(f_, b.binary("add", gate(xt, g), gate(hr, g))) for g in range(2))
                    if before_reset:
                        candidate = b.binary("mul", rr, gate(hr, 2))
                    else:  # (r * h) @ Rh^T + Rbh
                        rh = b.slice(rd, 0, 2 * hidden, 3 * hidden)
                        candidate = b.matmul(b.binary("mul", rr, h), b.transpose(rh, (1, 0)))
                        if bias is not None:
                            candidate = b.binary("add", candidate, b.slice(rb, 0, 2 * hidden, 3 * hidden))
                    candidate = b.unary(g_, b.binary("add", gate(xt, 2), candidate))
                    h = b.binary("add", b.binary("mul", b.binary("sub", 1.0, z), candidate), b.binary("mul", z, h))
                outs[t] = b.view(h, (1, 1, batch, hidden))
            ys.append(b.concat([outs[t] for t in range(steps)], 0))
            last_h.append(b.view(h, (1, batch, hidden)))
            last_c.append(b.view(c, (1, batch, hidden)))
        y, yh, yc = b.concat(ys, 1), b.concat(last_h, 0), b.concat(last_c, 0)
        if layout:
            y, yh, yc = b.transpose(y, (2, 0, 1, 3)), b.transpose(yh, (1, 0, 2)), b.transpose(yc, (1, 0, 2))
        return (y, yh, yc) if kind == "LSTM" else (y, yh)
    return build


OPS = {"LSTM": _recurrent("LSTM"), "GRU": _recurrent("GRU"), "RNN": _recurrent("RNN")}
