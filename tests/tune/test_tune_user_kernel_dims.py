"""``loom tune`` on a user's kernel (FILE.py:KERNEL, FILE.mlir): a --dims name the kernel does not have
is refused naming its dims, as for built-in kernels (it was ignored, and the kernel tuned at sizes
that were not asked for)."""

from __future__ import annotations

import pytest

from loom.cli import main
from loom.cli.tune_commands import _arguments
from loom.errors import LoomError
from loom.examples.targets import resolve_kernel

USER_KERNEL = ("from loom import kernel, linalg, MemRef, F32, Dim\n"
               "M, N, K = Dim('M'), Dim('N'), Dim('K')\n\n"
               "@kernel\n"
               "def mm(A: MemRef[(M, K), F32], B: MemRef[(K, N), F32], C: MemRef[(M, N), F32]):\n"
               "    linalg.matmul(A, B, C)\n")


def test_a_dim_the_user_kernel_lacks_is_refused_naming_it(tmp_path):
    (tmp_path / "k.py").write_text(USER_KERNEL)
    kernel, example = resolve_kernel(f"{tmp_path / 'k.py'}:mm")
    a, b, c = _arguments(kernel, example, {"M": 7, "N": 13, "K": 1}, seed=0)
    assert (a.shape, b.shape, c.shape) == ((7, 1), (1, 13), (7, 13))
    with pytest.raises(LoomError, match=r"--dims: kernel 'mm' has no dim Q \(its dims: K, M, N\)"):
        _arguments(kernel, example, {"M": 7, "N": 13, "K": 1, "Q": 3}, seed=0)


def test_tune_cli_refuses_an_unknown_dim_of_a_user_kernel(tmp_path, capsys):
    (tmp_path / "k.py").write_text(USER_KERNEL)
    assert main(["tune", "cpu", f"{tmp_path / 'k.py'}:mm", "--dims", "M=7,N=13,K=1,m=7", "--budget", "1"]) == 1
    err = capsys.readouterr().err
    assert "kernel 'mm' has no dim m (its dims: K, M, N)" in err and "Traceback" not in err


def test_tune_cli_says_a_kernel_without_loops_has_none_to_tune(tmp_path, capsys):
    """It said to "lower linalg to loops first", which the tuner already does."""
    (tmp_path / "k.py").write_text("from loom import kernel, MemRef, F32\n\n"
                                   "@kernel\n"
                                   "def scale0(A: MemRef[(4,), F32], B: MemRef[(4,), F32]):\n"
                                   "    B[0] = A[0] * 2.0\n")
    assert main(["tune", "cpu", f"{tmp_path / 'k.py'}:scale0", "--budget", "1"]) == 1
    err = capsys.readouterr().err
    assert "@scale0 has no loops to tune" in err and "lower linalg" not in err and "Traceback" not in err
