"""Every ```python block of README.md and docs/*.md runs, so documentation examples cannot rot.

Blocks of one file run in order in one namespace (README's second block uses the first's Dims). A block that is a
fragment of a longer text gets the names its prose defines from PRELUDE (keyed by file and the block's first line);
a new fragment without one fails with a NameError here, not silently in a reader's hands.
"""

import pathlib
import re
import runpy

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

PRELUDE = {
    # the driver example's prose: int32 operands of any size
    ("README.md", "from loom import kernel, linalg"): """
import numpy as np
A = np.arange(40 * 24, dtype=np.int32).reshape(40, 24) % 7
B = np.arange(24 * 20, dtype=np.int32).reshape(24, 20) % 5
C = np.zeros((40, 20), np.int32)
""",
    # the declarative schedule's context: a gradient pipeline with those names (harris's first stages)
    ("pipelines.md", "cgra = lp.IterLevel"): """
import loom.frontends.pipeline as lp
x, y = lp.Var("x"), lp.Var("y")
inp = lp.ImageParam(lp.UInt8, 2, "input")
hw_input = lp.Func("hw_input"); hw_input[x, y] = lp.i16(inp[x, y])
grad_x = lp.Func("grad_x"); grad_x[x, y] = hw_input[x + 2, y + 1] - hw_input[x, y + 1]
out = lp.Func("out"); out[x, y] = lp.u8(lp.clamp(grad_x[x, y], 0, 255))
""",
    # the RTL driver's context: the README's int32 matmul through linalg
    ("rtl.md", "drv = compile_driver(kernel"): """
import numpy as np
from loom import kernel as _k, linalg, MemRef, I32, Dim
from loom.driver import compile_driver
from loom.runtime.timing import predicted_accelerator_cycles
from loom.accel.timing import timing_config
M, N, K = Dim("M"), Dim("N"), Dim("K")
@_k
def kernel(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    linalg.matmul(A, B, C)
A = np.arange(8 * 12, dtype=np.int32).reshape(8, 12) % 5
B = np.arange(12 * 4, dtype=np.int32).reshape(12, 4) % 3
C = np.zeros((8, 4), np.int32)
""",
}

# what a block leaves behind that the prose claims; checked after it ran
AFTER = {
    ("pipelines.md", "cgra = lp.IterLevel"): """
from loom.streaming import build_design, simulate
img = np.random.default_rng(0).integers(0, 256, (64, 126), dtype=np.uint8)
got = simulate(out, {"input": img}, (124, 62), design=build_design(out, (62, 62)))
g = img[1:63, 2:126].astype(np.int16) - img[1:63, 0:124].astype(np.int16)
np.testing.assert_array_equal(got, np.clip(g, 0, 255).astype(np.uint8))
""",
    ("README.md", "from loom import kernel, linalg"): "np.testing.assert_array_equal(C, A @ B)",
    ("rtl.md", "drv = compile_driver(kernel"): "np.testing.assert_array_equal(C, A @ B)",
}


def blocks(path):
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), re.S | re.M)


@pytest.mark.parametrize("path", [f for f in FILES if blocks(f)], ids=lambda p: p.name)
def test_python_blocks_run(path, tmp_path, monkeypatch):
    # one script in a file: @kernel reads its function's source, which exec'd strings do not have
    monkeypatch.chdir(ROOT)  # blocks name files relative to the repository
    parts = ["import numpy as np"]
    for code in blocks(path):
        start = next((k for f, k in {**PRELUDE, **AFTER} if f == path.name and code.startswith(k)), None)
        parts += [PRELUDE.get((path.name, start), ""), code, AFTER.get((path.name, start), "")]
    script = tmp_path / f"example_{path.stem}.py"
    script.write_text("\n".join(parts))
    runpy.run_path(str(script), run_name="__doc_example__")


def test_every_prelude_names_a_block():
    """A renamed or removed block would leave its prelude unused (and the new block unchecked)."""
    firsts = {(f.name, b.splitlines()[0]) for f in FILES for b in blocks(f)}
    for f, start in {**PRELUDE, **AFTER}:
        assert any(n == f and line.startswith(start) for n, line in firsts), (f, start)
