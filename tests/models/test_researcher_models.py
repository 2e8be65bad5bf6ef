"""Small models a researcher brings, each through torch.export and through torch.onnx (the TorchScript exporter)
and compared with torch: an encoder block (nn.MultiheadAttention, LayerNorm, GELU), an LSTM and a GRU, a
depthwise-separable block with GroupNorm and SiLU, activations (SiLU, GELU tanh, Mish, hardswish, softplus, ELU,
CELU, softsign, ReLU6), a mixture of experts routed by top-k (einsum, gather), masked causal attention (key padding
and triangular masks), pooling variants (ceil mode, adaptive, LP pooling), a pixel shuffle, and an LLaMA-style block
(sinusoidal embedding, RMSNorm, SwiGLU, rotary halves). Each was refused somewhere before (Celu, Trilu, LSTM / GRU,
Einsum, TopK, GatherElements, DepthToSpace, sin / cos, ReduceL2 or an adaptive pool); a U-Net block is in
test_conv_transpose.py."""

from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import loom.models  # noqa: E402

nn, F = torch.nn, torch.nn.functional


class EncoderBlock(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 64), nn.GELU(), nn.Linear(64, d))

    def forward(self, x):
        y = self.n1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.ff(self.n2(x))


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm, self.gru = nn.LSTM(8, 16, batch_first=True), nn.GRU(16, 8, batch_first=True)

    def forward(self, x):
        return self.gru(self.lstm(x)[0])[0]


class DepthwiseSeparable(nn.Module):
    def __init__(self):
        super().__init__()
        self.dw, self.pw = nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.Conv2d(8, 16, 1)
        self.norm = nn.GroupNorm(4, 16)

    def forward(self, x):
        return F.silu(self.norm(self.pw(self.dw(x))))


class Activations(nn.Module):
    def forward(self, x):
        return (F.silu(x) + F.gelu(x, approximate="tanh") + F.mish(x) + F.hardswish(x) + F.softplus(x) + F.elu(x) +
                F.celu(x, 0.7) + F.softsign(x) + torch.tanh(x) * F.relu6(x))


class MixtureOfExperts(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate, self.experts = nn.Linear(8, 4), nn.Parameter(torch.randn(4, 8, 8))

    def forward(self, x):
        weights, chosen = torch.topk(self.gate(x).softmax(-1), 2, dim=-1)
        outs = torch.einsum("bi,eio->beo", x, self.experts)
        picked = torch.gather(outs, 1, chosen.unsqueeze(-1).expand(-1, -1, 8))
        return (picked * (weights / weights.sum(-1, keepdim=True)).unsqueeze(-1)).sum(1)


class MaskedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x, padding):
        causal = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1)
        return self.attn(x, x, x, key_padding_mask=padding, attn_mask=causal, need_weights=False)[0]


class Pools(nn.Module):
    def forward(self, x):
        return (F.avg_pool2d(x, 3, 2, ceil_mode=True), F.adaptive_avg_pool2d(x, 3), F.adaptive_max_pool2d(x, 3),
                F.max_pool2d(x, 3, 1, padding=1), F.lp_pool2d(x, 2, 3))


class PixelShuffle(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.shuffle = nn.Conv2d(4, 16, 3, padding=1), nn.PixelShuffle(2)

    def forward(self, x):
        return self.shuffle(self.conv(x))


class LlamaBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(16) + 0.5)
        self.w1, self.w3, self.w2 = nn.Linear(16, 32, bias=False), nn.Linear(16, 32, bias=False), nn.Linear(32, 16,
                                                                                                             bias=False)

    def forward(self, x, t):
        freqs = torch.exp(-math.log(10000) * torch.arange(8, dtype=torch.float32) / 8)
        angles = t[:, None].float() * freqs[None]
        x = x + torch.cat([torch.sin(angles), torch.cos(angles)], -1)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.scale
        rotated = x * torch.cos(angles).repeat(1, 2) + torch.cat([-x[..., 8:], x[..., :8]], -1) * torch.sin(
            angles).repeat(1, 2)
        return self.w2(F.silu(self.w1(rotated)) * self.w3(rotated))


MODELS = {
    "encoder": (EncoderBlock, lambda: (torch.randn(2, 10, 32),)),
    "recurrent": (Recurrent, lambda: (torch.randn(2, 4, 8),)),
    "depthwise": (DepthwiseSeparable, lambda: (torch.randn(1, 8, 10, 10),)),
    "activations": (Activations, lambda: (torch.randn(3, 20) * 3,)),
    "experts": (MixtureOfExperts, lambda: (torch.randn(3, 8),)),
    "masked_attention": (MaskedAttention, lambda: (torch.randn(2, 5, 16), torch.tensor([[False] * 4 + [True],
                                                                                          [False] * 5]))),
    "pools": (Pools, lambda: (torch.randn(1, 3, 9, 9),)),
    "pixel_shuffle": (PixelShuffle, lambda: (torch.randn(1, 4, 5, 5),)),
    "llama": (LlamaBlock, lambda: (torch.randn(5, 16), torch.tensor([0, 1, 5, 30, 99]))),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_researcher_model_equals_torch_through_export_and_onnx(name):
    torch.manual_seed(0)
    make, inputs = MODELS[name]
    module, args = make().eval(), inputs()
    with torch.no_grad():
        want = module(*args)
    want = [w.numpy() for w in (want if isinstance(want, tuple) else (want,))]
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, f, dynamo=False, opset_version=17)
    arrays = [a.numpy() for a in args]
    for source in (module, onnx.load_from_string(f.getvalue())):
        got = loom.models.compile(source, args if source is module else None)(*arrays)
        got = list(got) if isinstance(got, tuple) else [got]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            scale = max(float(np.abs(w).max()), 1e-6)
            assert float(np.abs(g - w).max()) <= 1e-5 * scale, (name, type(source).__name__)
