"""Seeded random window layers (convolution, max/avg pooling with every option) in one PyTorch module:
loom's import + C equal PyTorch, or the layer is refused at import with its op and line."""

from __future__ import annotations

import numpy as np
import pytest

from tests.models.helpers import relative_error

torch = pytest.importorskip("torch")
nn = torch.nn

import loom.models  # noqa: E402


def _random_layer(rng: np.random.Generator, k: int, channels: int) -> nn.Module:
    kh, kw = (int(v) for v in rng.integers(1, 5, 2))
    stride = tuple(int(v) for v in rng.integers(1, 4, 2))
    kind = k % 3
    if kind == 0:
        groups = int(rng.choice([1, 2, channels]))
        return nn.Conv2d(channels, 2 * channels, (kh, kw), stride, tuple(int(v) for v in rng.integers(0, 3, 2)),
                         tuple(int(v) for v in rng.integers(1, 3, 2)), groups, bias=bool(rng.integers(0, 2)))
    padding = (int(rng.integers(0, kh // 2 + 1)), int(rng.integers(0, kw // 2 + 1)))
    if kind == 1:
        return nn.MaxPool2d((kh, kw), stride, padding, tuple(int(v) for v in rng.integers(1, 3, 2)),
                            ceil_mode=bool(rng.integers(0, 2)))
    return nn.AvgPool2d((kh, kw), stride, padding, ceil_mode=bool(rng.integers(0, 2)),
                        count_include_pad=bool(rng.integers(0, 2)))


class Branches(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.branches = nn.ModuleList(layers)

    def forward(self, x):
        return tuple(b(x) for b in self.branches)


def test_random_window_layers_match_pytorch():
    rng = np.random.default_rng(99)
    torch.manual_seed(0)
    x = torch.randn(2, 4, 11, 9)
    layers = []
    while len(layers) < 9:
        layer = _random_layer(rng, len(layers), 4).eval()
        try:
            with torch.no_grad():
                layer(x)
        except RuntimeError:  # PyTorch rejects this configuration too
            continue
        layers.append(layer)
    model = Branches(layers).eval()
    compiled = loom.models.compile(model, (x,))
    got = compiled(x.numpy())
    with torch.no_grad():
        want = model(x)
    for layer, g, w in zip(layers, got, want, strict=True):
        assert relative_error(g, w.numpy().astype(np.float64)) <= 1e-5, layer
