"""`loom accel run` over several accelerators names the operands by the function's arguments (the linalg ops'
operands), the accelerator's names in parentheses: both matmul engines call every operand A, B, C, and before
this the report added the two ops' "A"s together. Bytes are computed here from the tiles and the C-stationary
flow: each A tile is sent once per n tile, each B tile once per m tile, C received once."""

from __future__ import annotations

from math import ceil
from pathlib import Path

import numpy as np
from xdsl.parser import Parser

from loom.cli import main
from loom.dialects import context
from loom.driver.compile import compile_driver
from loom.examples import ACCELERATORS_DIR

CHAIN = Path(__file__).resolve().parent / "multi" / "chain_renamed.mlir"
SYSTEM = ACCELERATORS_DIR / "systems" / "matmul_conv.json"


def cs_words(M: int, N: int, K: int, t: int) -> tuple[int, int, int]:
    """Words of A, B, C for a C-stationary t x t x t matmul engine (padded tiles)."""
    m, n, k = ceil(M / t), ceil(N / t), ceil(K / t)
    return m * k * t * t * n, k * n * t * t * m, m * n * t * t


def test_report_names_operands_by_argument_with_the_role_in_parentheses(capsys):
    x, wt, y1 = cs_words(12, 8, 20, 4)   # Y += X . Wt on v3_4
    y2, p, z = cs_words(12, 16, 8, 16)   # Z += Y . P on v3_16
    want = {"X": x, "Wt": wt, "Y": y1 + y2, "P": p, "Z": z}
    drv = compile_driver(Parser(context(), CHAIN.read_text()).parse_module(), SYSTEM, assign=("v3_4", "v3_16"))
    rng = np.random.default_rng(0)
    X, Wt, P = (rng.integers(-5, 5, s).astype(np.int32) for s in ((12, 20), (20, 8), (8, 16)))
    Y, Z = np.zeros((12, 8), np.int32), np.zeros((12, 16), np.int32)
    stats = drv(X, Wt, Y, P, Z)
    assert np.array_equal(Z, (X @ Wt) @ P)
    assert {n: s + r for n, (s, r) in stats.argument_words.items()} == want
    assert drv.expected_argument_words([X, Wt, Y, P, Z]) == stats.argument_words
    assert main(["accel", "run", str(CHAIN), "--accel", str(SYSTEM), "--assign", "v3_4,v3_16"]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    assert (f"X(A)={4 * x} Wt(B)={4 * wt} Y(C/A)={4 * (y1 + y2)} P(B)={4 * p} Z(C)={4 * z}") in row and "ok" in row


def test_an_argument_that_is_two_operands_is_counted_once_and_checks_ok(capsys):
    """`X . X`: the runtime tallies words per array, so X's are A's and B's together. The check compared
    role-keyed counts ({A: A+B} against {A, B}) and reported TRANSFERS DIFFER on a correct run."""
    a, b, c = cs_words(8, 8, 8, 4)
    assert main(["accel", "run", str(CHAIN.parent / "square_matmul.mlir"), "--accel", "matmul_v3.json",
                 "--name", "v3_4"]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    assert f"X(A/B)={4 * (a + b)} Y(C)={4 * c}" in row and row.rstrip().endswith("ok")
