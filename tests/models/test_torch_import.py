"""PyTorch modules through torch.export -> core ATen -> loom, against PyTorch itself."""

from __future__ import annotations

import math

import numpy as np
import pytest

from loom.errors import LoomError
from tests.models.helpers import relative_error

torch = pytest.importorskip("torch")
nn = torch.nn

import loom.models  # noqa: E402


class ConvZoo(nn.Module):
    """Convolutions and pools of every supported form, batch norm folded and not folded."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1, dilation=1)
        self.bn = nn.BatchNorm2d(8)
        self.grouped = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=4, bias=False)
        self.bn_after_add = nn.BatchNorm2d(8)
        self.conv1d = nn.Conv1d(8, 4, 3, padding=1)
        self.fc = nn.Linear(8 * 2 * 2, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = self.bn_after_add(self.grouped(y) + y)  # a batch norm that cannot be folded into a conv
        y = nn.functional.max_pool2d(y, 3, stride=2, padding=1, ceil_mode=True)
        z = nn.functional.avg_pool2d(y, 2, stride=1, padding=1, count_include_pad=False)
        z = nn.functional.adaptive_avg_pool2d(z, (2, 2))
        s = self.conv1d(y.flatten(2)).mean(dim=-1, keepdim=True)  # (N, 4, 1)
        return torch.sigmoid(self.fc(z.flatten(1))) + s.squeeze(-1).sum(dim=1, keepdim=True)


class AttentionZoo(nn.Module):
    """What a transformer encoder needs: embeddings, linear, batched matmul, softmax, layer norm, gelu."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 12)
        self.qkv = nn.Linear(12, 36)
        self.norm = nn.LayerNorm(12)
        self.ff = nn.Linear(12, 12)

    def forward(self, ids):
        x = self.embed(ids)
        q, k, v = self.qkv(x).view(*ids.shape, 3, 2, 6).permute(2, 0, 3, 1, 4).unbind(0)
        attn = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(6), dim=-1)
        ctx = (attn @ v).transpose(1, 2).reshape(*ids.shape, 12)
        x = self.norm(x + ctx)
        y = nn.functional.gelu(self.ff(x), approximate="tanh") - nn.functional.gelu(x)
        return torch.log_softmax(torch.clamp(y, -0.5, 0.5) * 3.0, dim=1), x[:, 1:4].tanh()


def _check(module, *inputs):
    module = module.eval()
    compiled = loom.models.compile(module, inputs)
    got = compiled(*[i.numpy() for i in inputs])
    with torch.no_grad():
        want = module(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        assert relative_error(g, w.numpy().astype(np.float64)) <= 1e-5
    return compiled


def test_convolutions_pools_and_batch_norms_match_pytorch():
    torch.manual_seed(0)
    module = ConvZoo()
    with torch.no_grad():  # non-trivial statistics, so folding really changes the weights
        for bn in (module.bn, module.bn_after_add):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)
    compiled = _check(module, torch.randn(2, 3, 16, 15))
    kinds = [layer.kind for layer in compiled.graph.layers]
    assert kinds.count("channel_affine") == 1  # the first batch norm was folded, the second was not


def test_attention_ops_match_pytorch():
    torch.manual_seed(1)
    compiled = _check(AttentionZoo(), torch.randint(0, 20, (2, 5)))
    with pytest.raises(LoomError, match="index 20 is out of range for a table of 20 rows"):
        compiled(np.full((2, 5), 20, np.int64))


class LogCumSumExp(nn.Module):  # (cumprod, the op this test used, is imported now)
    def forward(self, x):
        return torch.relu(x).logcumsumexp(0)  # the line the error must name


def test_unsupported_op_is_refused_at_import_with_its_source_line():
    with pytest.raises(LoomError) as info:
        loom.models.import_model(LogCumSumExp(), (torch.randn(4),))
    message = str(info.value)
    line = LogCumSumExp.forward.__code__.co_firstlineno + 1
    assert "unsupported PyTorch op logcumsumexp.default" in message
    assert f"test_torch_import.py:{line}" in message


def test_input_checks_name_the_input():
    compiled = loom.models.compile(nn.Linear(3, 2), (torch.randn(4, 3),))
    with pytest.raises(LoomError, match=r"input 0 \(input\): expected shape \(4, 3\)"):
        compiled(np.zeros((5, 3), np.float32))


def test_not_a_model_is_refused():
    with pytest.raises(LoomError, match="cannot import a dict"):
        loom.models.compile({}, ())
    with pytest.raises(LoomError, match="needs example_inputs"):
        loom.models.compile(nn.ReLU())
