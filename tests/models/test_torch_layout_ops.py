"""torch.cat, F.pad (constant), x[i] (select) and chunk/split (split_with_sizes) in user models: the
graph builder has concat, pad and slice, and these ATen ops map onto them (they were refused at import)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.models.helpers import relative_error

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

import loom.models  # noqa: E402
from loom.errors import LoomError  # noqa: E402


class Layout(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Conv2d(4, 3, 1), nn.Conv2d(4, 5, 3, padding=1)

    def forward(self, x):
        joined = torch.cat([self.a(x), self.b(x)], 1)        # channels 3 + 5
        padded = F.pad(joined, (1, 2, 0, 1), value=0.5)       # last axis 1|2, the one before 0|1
        first, second = padded.chunk(2, dim=-1)              # split_with_sizes
        picked = padded[:, -1]                               # select with a negative index
        return torch.cat((first * torch.sigmoid(second), first), dim=-3), picked, padded[0, 2, 1]


def test_cat_pad_select_and_chunk_match_pytorch():
    torch.manual_seed(0)
    model = Layout().eval()
    x = torch.randn(2, 4, 5, 5)
    compiled = loom.models.compile(model, (x,))
    got = compiled(x.numpy())
    with torch.no_grad():
        want = model(x)
    for g, w in zip(got, want, strict=True):
        assert relative_error(g, w.numpy().astype(np.float64)) <= 1e-5


def test_int32_cat_and_pad_stay_exact():
    class IntLayout(nn.Module):
        def forward(self, x):
            return F.pad(torch.cat([x, x * 2], 0), (2, 0), value=-3)

    x = torch.randint(-50, 50, (3, 4), dtype=torch.int32)
    got = loom.models.compile(IntLayout(), (x,))(x.numpy())
    np.testing.assert_array_equal(got, IntLayout()(x).numpy())


def test_cropping_pad_is_refused_naming_the_op():
    class Crop(nn.Module):
        def forward(self, x):
            return F.pad(x, (-1, 1))

    with pytest.raises(LoomError, match="pad: needs one non-negative pad"):
        loom.models.import_model(Crop(), (torch.randn(2, 5),))
