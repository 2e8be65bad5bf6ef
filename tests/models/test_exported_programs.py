"""torch.export programs with dynamic dims (``torch.export.Dim``): compiled for the shapes the user
gives (``loom.models.compile(program, inputs)``, ``loom build FILE.pt2 --input-shape``). Without
shapes they are refused naming the input and the dims' ranges; they were compiled silently for the
example shape the program was traced with, or refused as an unsupported op ``sym_size.int``."""

from __future__ import annotations

import numpy as np
import pytest

from tests.models.helpers import relative_error

torch = pytest.importorskip("torch")
nn = torch.nn

import loom.models  # noqa: E402
from loom.build import build  # noqa: E402
from loom.errors import LoomError  # noqa: E402


class Attention(nn.Module):
    """Batch and sequence length both dynamic: the exported graph reads them with sym_size."""

    def __init__(self, width: int = 12, heads: int = 3):
        super().__init__()
        self.heads, self.qkv, self.norm = heads, nn.Linear(width, 3 * width), nn.LayerNorm(width)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-2, -1), -1)
        return self.norm(x + (a @ v).transpose(1, 2).reshape(b, t, d))


@pytest.fixture(scope="module")
def dynamic_program():
    """(model, program): exported once for the module (torch.export takes seconds; loom does not change it)."""
    torch.manual_seed(0)
    model = Attention().eval()
    dims = {0: torch.export.Dim("batch", min=1, max=8), 1: torch.export.Dim("tokens", min=2, max=32)}
    return model, torch.export.export(model, (torch.randn(2, 5, 12),), dynamic_shapes=(dims,))


def test_a_dynamic_program_compiles_for_the_given_shapes(dynamic_program):
    model, program = dynamic_program
    for shape in ((3, 7, 12), (1, 2, 12)):
        x = torch.randn(*shape)
        got = loom.models.compile(program, (x,))(x.numpy())
        with torch.no_grad():
            assert relative_error(got, model(x).numpy().astype(np.float64)) <= 1e-5


def test_a_dynamic_program_without_shapes_is_refused_with_the_ranges(dynamic_program):
    _, program = dynamic_program
    with pytest.raises(LoomError, match=r"input x has dynamic dims \[s\w+, s\w+, 12\] \(.*in \[1, 8\].*\): "
                                        r"loom compiles static shapes"):
        loom.models.compile(program)
    with pytest.raises(LoomError, match=r"cannot specialise .* \[\[9, 5, 12\]\].*Guard failed"):
        loom.models.compile(program, (torch.randn(9, 5, 12),))


def test_loom_build_takes_input_shapes_for_a_dynamic_pt2(tmp_path, dynamic_program):
    _, program = dynamic_program
    torch.export.save(program, str(tmp_path / "attention.pt2"))
    with pytest.raises(LoomError, match="input x has dynamic dims"):
        build(tmp_path / "attention.pt2", tmp_path / "refused")
    index = build(tmp_path / "attention.pt2", tmp_path / "out", input_shapes=((2, 3, 12),), target="c").index
    assert any("max relative error vs torch" in check for check in index["units"][0]["checks"])


def test_input_shapes_do_not_apply_to_a_static_pt2(tmp_path):
    model = nn.Linear(3, 2).eval()
    torch.export.save(torch.export.export(model, (torch.randn(4, 3),)), str(tmp_path / "linear.pt2"))
    with pytest.raises(LoomError, match="exported with static shapes: --input-shape does not apply"):
        build(tmp_path / "linear.pt2", tmp_path / "out", input_shapes=((5, 3),))
