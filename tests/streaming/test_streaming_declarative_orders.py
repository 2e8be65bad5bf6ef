"""Declarative schedules (iteration_order / accelerate / create_memories) whose loop orders the streaming
accelerator cannot run are refused at accelerate, naming the level and what to write; a channel listed in the
accelerated level is computed in space (the host loops over channel tiles), bit-exact against numpy."""

import numpy as np
import pytest

from loom.errors import LoomError
from loom.frontends.pipeline import Func, ImageParam, IterLevel, UInt8, Var, u8, u16
from loom.frontends.pipeline.evaluate import evaluate
from loom.streaming import Accelerator, SimulationStats, build_design, simulate

x, y, c = Var("x"), Var("y"), Var("c")


def blur(channels=False):
    """out = (in(x, y) + in(x + 1, y) + in(x, y + 1)) >> 2, per channel when ``channels``."""
    inp = ImageParam(UInt8, 3 if channels else 2, "input")
    at = (lambda f, dx, dy: f[x + dx, y + dy, c]) if channels else (lambda f, dx, dy: f[x + dx, y + dy])
    pt = (x, y, c) if channels else (x, y)
    hw, b, out = Func("hw_input"), Func("blur"), Func("output")
    hw[pt] = u16(at(inp, 0, 0))
    b[pt] = at(hw, 0, 0) + at(hw, 1, 0) + at(hw, 0, 1)
    out[pt] = u8(at(b, 0, 0) >> 2)
    return hw, b, out


def np_blur(img):
    p = img.astype(np.int64)
    return ((p[..., :-1, :-1] + p[..., :-1, 1:] + p[..., 1:, :-1]) >> 2).astype(np.uint8)


def test_host_level_listing_y_first_is_refused_at_accelerate():
    """The host level [y, x] put y_host inside x_host, the loop hw_accelerate runs at; the error blamed a split the
    user never wrote ("output.split(y, y_host, y_CGRA, 6) has no effect") when the design was built."""
    _, _, out = blur()
    out.iteration_order([IterLevel("CGRA", [(x, 8), (y, 6)]), IterLevel("host", [(y, None), (x, None)])])
    with pytest.raises(LoomError, match=r"Func 'output': accelerate: loop 'y_host' of level 'host' comes before "
                                        r"'x_host' in iteration_order.*list 'x' first in level 'host'"):
        out.accelerate("CGRA")


def test_accelerating_a_level_that_holds_inner_tiles_is_refused_at_accelerate():
    """accelerate('tile') over CGRA tiles inside it streams x_CGRA, y_CGRA, x_tile, y_tile, not x then y: the error
    blamed a reorder the user never wrote, when the design was built."""
    _, _, out = blur()
    out.iteration_order([IterLevel("CGRA", [(x, 4), (y, 3)]), IterLevel("tile", [(x, 2), (y, 2)]),
                         IterLevel("host")])
    with pytest.raises(LoomError, match=r"accelerate: level 'tile' holds the tiles of level\(s\) CGRA .* "
                                        r"accelerate\('CGRA'\) \(one invocation per 'CGRA' tile\)"):
        out.accelerate("tile")


def test_a_level_that_does_not_split_x_is_named_by_accelerate():
    _, _, out = blur()
    out.iteration_order([IterLevel("CGRA", [(y, 6)]), IterLevel("host")])
    with pytest.raises(LoomError, match=r"accelerate: level 'CGRA' does not split 'x' .* give level 'CGRA' a size "
                                        r"for 'x'"):
        out.accelerate("CGRA")


@pytest.mark.parametrize("c_tile", [3, 1])
def test_a_channel_listed_in_the_accelerated_level_is_computed_in_space(c_tile):
    """IterLevel("CGRA", [(x, 8), (y, 6), (c, n)]) left c_CGRA iterated in time, and the design failed with
    "Func 'blur': unsupported pattern (dimension change)". accelerate now unrolls c_CGRA: n channels per invocation,
    the host loops over the channel tiles (3 / n of them per x, y tile)."""
    hw, b, out = blur(channels=True)
    out.iteration_order([IterLevel("CGRA", [(x, 8), (y, 6), (c, c_tile)]), IterLevel("host")]).accelerate("CGRA")
    out.create_memories([hw, b], out.get_looplevel("CGRA", x))
    img = np.random.default_rng(11).integers(0, 256, (3, 13, 17), np.uint8)
    stats = SimulationStats()
    got = simulate(out, {"input": img}, (16, 12, 3), stats=stats)
    np.testing.assert_array_equal(got, np_blur(img))
    np.testing.assert_array_equal(evaluate(out, {"input": img}, (16, 12, 3)), np_blur(img))
    assert stats.tiles == 2 * 2 * (3 // c_tile)
    d = build_design(out, (8, 6, c_tile))
    assert d.capacities["hw_input"] == 9 * c_tile  # a row of 9 per channel: (x, y) is read with (x, y + 1)


def unsharp():
    """out = clamp(c + ((c - blur3x3(in)) * 3 >> 1), 0, 255) in i16, c = in(x + 1, y + 1); blur / 16."""
    from loom.frontends.pipeline import clamp, i16
    inp = ImageParam(UInt8, 2, "input")
    hw, bl, out = Func("hw_input"), Func("blur"), Func("output")
    hw[x, y] = i16(inp[x, y])
    w = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    bl[x, y] = sum(hw[x + i, y + j] * w[j][i] for j in range(3) for i in range(3)) >> 4
    out[x, y] = u8(clamp(hw[x + 1, y + 1] + ((hw[x + 1, y + 1] - bl[x, y]) * 3 >> 1), 0, 255))
    return hw, bl, out


def np_unsharp(img, w, h):
    p = img.astype(np.int64)
    k = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    bl = sum(k[j][i] * p[j:j + h, i:i + w] for j in range(3) for i in range(3)) >> 4
    c = p[1:h + 1, 1:w + 1]
    return np.clip(c + (((c - bl) * 3) >> 1), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("glb", [False, True])
@pytest.mark.parametrize("rate", [2, 4])
def test_stream_to_accelerator_takes_the_accelerators_output_rate(rate, glb):
    """out.output_rate(n) then hw.stream_to_accelerator(levels, looplevels) left the input copies at 1 pixel a cycle
    ("stages run at different rates ... hw_input_in_in=1"): only hw.output_rate(n) unrolled them. The copies now take
    the rate of the Func their loop levels belong to. By hand (tile 12x8, hw 14 wide): ceil(14 / n) steps a row,
    10 rows."""
    from loom.frontends.pipeline import LoopLevel
    hw, bl, out = unsharp()
    cgra = IterLevel("CGRA", [(x, 12), (y, 8)])
    levels = [cgra, IterLevel("GLB", [(x, 2), (y, 2)]), IterLevel("host")] if glb else [cgra, IterLevel("host")]
    out.output_rate(rate).iteration_order(levels).accelerate("GLB" if glb else "CGRA")
    out.create_memories([bl], out.get_looplevel("CGRA", x))
    names = ["CGRA", "GLB", "host"] if glb else ["CGRA", "host"]
    loops = [out.get_looplevel("CGRA", x)] + ([out.get_looplevel("GLB", x)] if glb else []) + [LoopLevel.root()]
    hw.stream_to_accelerator(names, loops)
    top = out.get_memory_level("host") if glb else out
    img = np.random.default_rng(12).integers(0, 256, (33, 50), np.uint8)
    np.testing.assert_array_equal(simulate(top, {"input": img}, (48, 31)), np_unsharp(img, 48, 31))
    d = build_design(Accelerator(top), (12, 8))
    assert d.latency == -(-14 // rate) * 10
    # n = 2: two rows of 14 and the other lane of the step holding (x + 2, y + 2); n = 4: the live count
    assert d.capacities["hw_input_in_in" if glb else "hw_input_in"] == {2: 2 * 14 + 2, 4: 32}[rate]


def test_create_memories_of_the_accelerated_func_itself_is_named():
    """Listing the output among its own memories failed inside compute_at with "'output' does not consume
    'output'"; create_memories now says what the list is for."""
    hw, b, out = blur()
    out.iteration_order([IterLevel("CGRA", [(x, 8), (y, 6)]), IterLevel("host")]).accelerate("CGRA")
    with pytest.raises(LoomError, match=r"Func 'output': create_memories: 'output' is the Func the memories are "
                                        r"computed in \(its loop 'x_host'\); list the Funcs it reads"):
        out.create_memories([hw, b, out], out.get_looplevel("CGRA", x))


@pytest.mark.parametrize("c_tile", [3, 1])
def test_a_channel_listed_in_the_fabric_level_under_a_glb_level(c_tile):
    """Output memory levels (CGRA, GLB, host) with c in the CGRA level: the GLB copy, which is the fabric's output,
    left c_CGRA in time ("Func 'blur': unsupported pattern (dimension change)"). accelerate now unrolls it: each
    fabric tile computes c_tile channels; 35x21 in GLB tiles of 16x12 (3 x 2 of them), each 2 x 2 fabric tiles of
    8x6 per channel tile."""
    from loom.frontends.pipeline import LoopLevel
    hw, b, out = blur(channels=True)
    out.output_rate(2).iteration_order([IterLevel("CGRA", [(x, 8), (y, 6), (c, c_tile)]),
                                        IterLevel("GLB", [(x, 2), (y, 2)]), IterLevel("host")]).accelerate("GLB")
    out.create_memories([b], out.get_looplevel("CGRA", x))
    hw.stream_to_accelerator(["CGRA", "GLB", "host"], [out.get_looplevel("CGRA", x), out.get_looplevel("GLB", x),
                                                       LoopLevel.root()])
    top = out.get_memory_level("host")
    img = np.random.default_rng(19).integers(0, 256, (3, 22, 36), np.uint8)
    stats = SimulationStats()
    np.testing.assert_array_equal(simulate(top, {"input": img}, (35, 21, 3), stats=stats), np_blur(img))
    assert stats.tiles == 3 * 2 * 2 * 2 * (3 // c_tile)


@pytest.mark.parametrize("glb", [False, True])
def test_an_output_rate_wider_than_the_fabric_tile_names_output_rate(glb):
    """output_rate(4) on a 2-wide CGRA level was refused as "unroll(x_CGRA, 4): ... more than the 2 iterations",
    an unroll the user never wrote; accelerate now names output_rate and the level."""
    hw, b, out = blur()
    cgra = IterLevel("CGRA", [(x, 2), (y, 6)])
    levels = [cgra, IterLevel("GLB", [(x, 2), (y, 1)]), IterLevel("host")] if glb else [cgra, IterLevel("host")]
    out.output_rate(4).iteration_order(levels)
    with pytest.raises(LoomError, match=r"Func 'output': accelerate: output_rate\(4\) computes 4 pixels a cycle, more "
                                        r"than the 2 of level 'CGRA' along 'x'; ask for at most 2"):
        out.accelerate("GLB" if glb else "CGRA")
