"""laplacian_pyramid: the finest band of a Laplacian pyramid (down-sample, up-sample, subtract), in i16.

down(x, y) = (in(2x, 2y) + in(2x+1, 2y) + in(2x, 2y+1) + in(2x+1, 2y+1)) / 4, the next coarser level;
up(x, y) = down(x / 2, y / 2) (nearest neighbour, floor division); the band keeps the detail the coarser
level lost: output = u8(clamp(in - up + 128, 0, 255)). Input w x h u8 (w, h even) -> output w x h u8.
``build("accel", tile)`` buffers hw_input and down: down runs on its own time grid (every other cycle of
every other row), the output reads it at ``x / 2`` (a quasi-affine access) and hw_input at ``x``.
"""

from loom.frontends.pipeline import Func, ImageParam, UInt8, Var, clamp, i16, u8, u16
from loom.frontends.pipeline.recipes import compute_in_tiles, schedule_app, stream_through_accelerator
from loom.examples.pipelines._inputs import image_inputs

BIAS = 128  # the band is signed; the u8 output centres it


def algorithm():
    x, y = Var("x"), Var("y")
    inp = ImageParam(UInt8, 2, "input")
    hw_input = Func("hw_input")
    hw_input[x, y] = u16(inp[x, y])
    down = Func("down")
    down[x, y] = (hw_input[2 * x, 2 * y] + hw_input[2 * x + 1, 2 * y] + hw_input[2 * x, 2 * y + 1]
                  + hw_input[2 * x + 1, 2 * y + 1]) / 4
    up = Func("up")
    up[x, y] = down[x / 2, y / 2]
    output = Func("output")
    output[x, y] = u8(clamp(i16(hw_input[x, y]) - i16(up[x, y]) + BIAS, 0, 255))
    return dict(x=x, y=y, input=inp, hw_input=hw_input, down=down, up=up, output=output)


def cpu_schedule(a, tile=(16, 16)):
    compute_in_tiles(a["output"], tile, [a["down"]])


def accel_schedule(a, tile=(64, 64)):
    stream_through_accelerator(a["output"], tile, buffered=[a["hw_input"], a["down"]])


def build(schedule="accel", tile=(64, 64)):
    return schedule_app(algorithm(), schedule, cpu_schedule, accel_schedule, tile=tile)


def input_shape(size):
    w, h = size
    return (h + h % 2, w + w % 2)  # down reads (2x + 1, 2y + 1) for x < ceil(w / 2)


make_inputs = image_inputs(input_shape)


def output_shape(size):
    return tuple(size)


if __name__ == "__main__":  # the design, its simulation and the CPU run, checked: ``loom pipeline laplacian_pyramid``
    from loom.cli import main

    raise SystemExit(main(["pipeline", "laplacian_pyramid", "--size", "64x64"]))
