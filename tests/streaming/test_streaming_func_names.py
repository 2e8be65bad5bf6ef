"""A Func named 'odd-name' inside an accelerator reached isl through the ubuf IR's access maps as a syntax error
(an xDSL VerifyException with the whole module printed). The accelerator names its buffers, ports and isl tuples
after its Funcs, so such a name is refused at extraction, naming the Func; the CPU path still runs it."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, IterLevel, UInt8, Var, u8, u16
from loom.jit.pipeline import run_cpu
from loom.streaming import build_design


@pytest.mark.parametrize("name", ["odd-name", "two words", "ünï"])
def test_a_stage_whose_name_is_not_an_identifier_is_refused_by_name(name):
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    odd, out = Func(name), Func("out")
    odd[x, y] = u16(inp[x, y])
    out[x, y] = u8((odd[x, y] + odd[x + 1, y]) >> 1)
    out.iteration_order([IterLevel("CGRA", [(x, 4), (y, 3)]), IterLevel("host")]).accelerate("CGRA")
    out.create_memories([odd], out.get_looplevel("CGRA", x))
    with pytest.raises(LoomError, match=rf"Func '{name}': the accelerator names its buffers after their Funcs, and "
                                        rf"'{name}' is not an identifier"):
        build_design(out, (4, 3))
    img = np.arange(15, dtype=np.uint8).reshape(3, 5)
    want = ((img[:, :-1].astype(np.int64) + img[:, 1:]) >> 1).astype(np.uint8)
    np.testing.assert_array_equal(run_cpu(out, {"input": img}, (4, 3)), want)
