"""ResNet18 and the TinyBERT-shaped encoder (loom.examples.models) through loom, against PyTorch.

CI sizes keep every layer kind and the block structure (ResNet18 at a quarter width on 32x32 images;
the encoder at full hidden/heads/FFN width with one layer and 16 tokens); the full-size encoder
(4 layers, batch 2, sequence 128) is marked slow.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.models.helpers import relative_error

torch = pytest.importorskip("torch")

import loom.models  # noqa: E402
from loom.examples.models import resnet18, tiny_bert_encoder  # noqa: E402


def _compare(model, x) -> float:
    compiled = loom.models.compile(model, (x,))
    got = compiled(x.numpy(), profile=True)
    with torch.no_grad():
        want = model(x).numpy()
    assert compiled.last_profile and all(t.seconds >= 0 for t in compiled.last_profile)
    return relative_error(got, want.astype(np.float64))


def test_resnet18_matches_pytorch():
    torch.manual_seed(0)
    assert _compare(resnet18(seed=3, width=16, num_classes=10), torch.randn(1, 3, 32, 32)) <= 1e-4


def test_tiny_bert_layer_matches_pytorch():
    model = tiny_bert_encoder(seed=4, layers=1, vocab=1000, max_positions=64)
    ids = torch.randint(0, 1000, (2, 16), generator=torch.Generator().manual_seed(5))
    assert _compare(model, ids) <= 1e-4


@pytest.mark.slow
def test_tiny_bert_full_size_matches_pytorch():
    model = tiny_bert_encoder(seed=0)  # 4 layers, hidden 312, 12 heads, FFN 1200, vocabulary 30522
    ids = torch.randint(0, 30522, (2, 128), generator=torch.Generator().manual_seed(1))
    assert _compare(model, ids) <= 1e-4


def test_reference_models_have_the_published_shapes():
    assert sum(p.numel() for p in resnet18().parameters()) == 11_689_512  # torchvision's resnet18
    bert = tiny_bert_encoder()
    assert len(bert.layers) == 4 and bert.layers[0].attention.heads == 12
    assert bert.layers[0].intermediate.weight.shape == (1200, 312)


def test_profile_measures_with_the_given_clock():
    """``profile=True, clock=...``: each layer's time is the clock's difference around it (a fake clock
    that ticks 1 per read gives exactly 1 s per layer, views included)."""
    compiled = loom.models.compile(torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()), (torch.randn(2, 4),))
    ticks = iter(range(10 ** 6))
    compiled(np.ones((2, 4), np.float32), profile=True, clock=lambda: float(next(ticks)))
    assert compiled.last_profile and all(t.seconds == 1.0 for t in compiled.last_profile)
