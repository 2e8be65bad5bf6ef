"""EKL kernels with scalar parameters (``alpha : f32``, ``n : index``) through the random-input entry points."""

from __future__ import annotations

import numpy as np

import loom.ekl
from loom.cli import main
from loom.jit.ekl import random_arrays

SRC = """kernel sc(n : index, s : f64, x : f64[8], y : out& f64[8], t : out& f64) {
    out y[i] = x[i] * s + (n !> f64);
    out t = <+ i< x[i];
}"""


def test_random_scalars_are_0d_arrays_the_kernel_takes():
    """random_arrays made numpy scalars of them, which the kernel refuses (it takes 0-d arrays), so
    'loom ekl run' and 'loom build' failed on every kernel with a scalar input."""
    k = loom.ekl.load(SRC).kernel()
    arrays = random_arrays(k, 8, 0)
    assert all(isinstance(arrays[n], np.ndarray) and arrays[n].shape == () for n in ("n", "s", "t"))
    k(**arrays)
    np.testing.assert_allclose(arrays["y"], arrays["x"] * arrays["s"] + float(arrays["n"]), rtol=1e-15)
    np.testing.assert_allclose(arrays["t"], arrays["x"].sum(), rtol=1e-14)


def test_cli_run_of_a_kernel_with_scalars(tmp_path, capsys):
    f = tmp_path / "sc.ekl"
    f.write_text(SRC)
    assert main(["ekl", "run", str(f)]) == 0
    assert capsys.readouterr().out.strip().endswith("ok")
