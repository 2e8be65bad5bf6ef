"""The messner acceptance files (tests/ekl/messner, ISC-licensed, copied unchanged) end to end.

Both files parse, elaborate, lower (verified by upstream mlir-opt) and compile. inverse_helmholtz runs
against numpy.einsum. plugin_rrtmg_taumol_sw reads ``r_gas[i_g, x]`` with ``i_g`` up to 9 for a
7-row ``r_gas`` (its line 135): loom stops that with a located run-time error; with that one line
repaired, the whole kernel runs against an independent numpy implementation written here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import loom
from loom.errors import LoomError

MESSNER = Path(__file__).parent / "messner"
FILES = sorted(MESSNER.glob("*.ekl"))
RRTMG = MESSNER / "plugin_rrtmg_taumol_sw.ekl"
RANGES = {"T": (160.0, 340.0), "p": (100.0, 50000.0)}  # temperature and pressure inside the tables


def test_every_messner_file_elaborates_and_round_trips_as_esn():
    from xdsl.parser import Parser

    from loom.dialects import context

    assert len(FILES) == 2
    for path in FILES:
        module = loom.ekl.load(path)
        for kernel in module.kernels.values():
            text = str(kernel.ir("esn"))
            again = Parser(context(), text).parse_module()
            again.verify()
            assert str(again) == text


@pytest.mark.mlir
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_messner_file_lowers_to_ir_that_mlir_opt_verifies(path):
    from loom.oracle import verify

    kernel = loom.ekl.load(path).kernel()
    verify(kernel.ir("linalg"))
    verify(kernel.ir("c"))


@pytest.mark.sanitize
def test_messner_inverse_helmholtz_matches_einsum():
    kernel = loom.ekl.load(MESSNER / "inverse_helmholtz.ekl").inverse_helmholtz
    rng = np.random.default_rng(11)
    S, D, u = rng.random((11, 11)), rng.random((11, 11, 11)), rng.random((11, 11, 11))
    v = np.zeros((11, 11, 11))
    kernel(S, D, u, v)
    t = np.einsum("ia,jb,kc,abc->ijk", S, S, S, u)
    want = np.einsum("ai,bj,ck,abc->ijk", S, S, S, D * t)
    assert np.max(np.abs(v - want)) / np.max(np.abs(want)) < 1e-12


def _inputs(kernel, seed: int) -> dict[str, np.ndarray]:
    from loom.jit.ekl import random_arrays

    return random_arrays(kernel, 8, seed, RANGES)


@pytest.mark.sanitize
def test_messner_rrtmg_out_of_range_gather_is_located_at_its_line():
    kernel = loom.ekl.load(RRTMG).kernel()
    arrays = _inputs(kernel, 0)
    inputs = kernel.inputs(arrays)
    with pytest.raises(LoomError) as info:
        kernel(**arrays)
    assert (info.value.filename, info.value.line, info.value.column) == (str(RRTMG), 135, 23)
    assert "out of range" in info.value.message
    with pytest.raises(LoomError) as info:
        kernel.reference(**inputs)
    assert info.value.line == 135 and "'r_gas'" in info.value.message


def repaired_rrtmg(tmp_path: Path) -> Path:
    """Line 135 reads r_gas[i_g - N_g, x] (rows 1, 2 for i_g = 8, 9): every arm of u_scale in range."""
    text = RRTMG.read_text()
    bad = "if i_g > N_g then r_gas[i_g, x] else {"
    assert text.count(bad) == 1
    path = tmp_path / "rrtmg_repaired.ekl"
    path.write_text(text.replace(bad, "if i_g > N_g then r_gas[i_g - N_g, x] else {"))
    return path


C_BND_TO_FLAV = np.array([[0, 1, 0, 1, 0, 4, 4, 5, 4, 5, 4, 7, 6, 8], [0, 2, 0, 2, 3, 4, 0, 5, 4, 5, 6, 7, 6, 8]])
C_FLAV_TO_ABS = np.array([[1, 2], [1, 6], [6, 0], [2, 0], [1, 0], [1, 7], [3, 0], [2, 2], [3, 7]])
C_MINOR_LAY = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1,
                        0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1])
C_MINOR_SCALE = np.array([7, 7, 5, 9, 7, 7, 7, 5, 9, 5, 9, 5, 9, 5, 9, 5, 9, 5, 9, 7, 5, 9, 7, 5, 9, 7, 5, 9, 5, 9,
                          5, 9, 5, 9, 7, 8, 5, 9, 7, 7, 5, 9, 7, 5, 9, 7, 5, 9, 7, 8, 5, 9, 8])
C_MINOR_BND = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6,
                        7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 10, 10, 10, 10, 10])
C_MINOR_LIM = [(0, 9), (9, 11), (11, 15), (15, 17), (17, 19), (19, 25), (25, 30), (30, 34), (34, 42), (42, 48),
               (48, 53), (53, 53), (53, 53), (53, 53)]


def rrtmg_numpy(T, p, n_d, r_gas, eta_half_table, k_major, k_minor, k_rayleigh):
    """The repaired messner kernel by hand, in float32 like REAL (EKL's '-' and '*' chains associate to the
    right, kept here where rounding could tell; sums are compared with a tolerance)."""
    f32 = np.float32
    x, b_all, u_all = np.arange(60), np.arange(14), np.arange(53)
    T_prime = (T - f32(160)) / f32(15)
    j_T = np.trunc(T_prime).astype(np.int64)
    f = np.fmod(T_prime, f32(1))
    f_T = np.stack([1 - f, f], axis=1)  # [1, 0] + [-1, 1] * f
    p_prime = (np.log(p) - np.log(f32(1.01))) / f32(0.19991758436281484)
    i_layer = (p < f32(9948.43)).astype(np.int64)
    j_p = np.trunc(p_prime).astype(np.int64) + i_layer
    f = np.fmod(p_prime, f32(1))
    f_p = np.stack([1 - f, f], axis=1)

    i_flav = C_BND_TO_FLAV[i_layer]  # [x, b]
    g = C_FLAV_TO_ABS[i_flav]  # [x, b, pair]
    r_maj = np.where(g > 0, r_gas[np.maximum(g - 1, 0), x[:, None, None]], f32(1))
    eta_half = np.stack([eta_half_table[i_layer[:, None], i_flav, (j_T + d)[:, None]] for d in (0, 1)], axis=2)
    r_mix = r_maj[:, :, :1] + eta_half * r_maj[:, :, 1:]  # [x, b, dT]
    eta = np.where(r_mix > f32(2.0**-51), r_maj[:, :, :1] / r_mix, f32(0.5))
    eta_prime = eta * f32(8)
    j_eta = np.trunc(eta_prime).astype(np.int64)
    f = np.fmod(eta_prime, f32(1))
    f_eta = np.stack([np.ones_like(f), f], axis=3)  # [1, 0] + [0, 1] * f: [1, f]
    f_minor = f_T[:, None, :, None] * f_eta  # [x, b, dT, deta]
    f_major = f_minor[..., None] * f_p[:, None, None, None, :]  # [x, b, dT, deta, dp]
    f_mix = r_mix * n_d[:, None, None]

    tau_maj = np.zeros((60, 14, 16), f32)
    for dT in (0, 1):
        for de in (0, 1):
            for dp in (0, 1):
                k = k_major[b_all[None, :], (j_T + dT)[:, None], j_eta[:, :, dT] + de, (j_p + dp)[:, None], :]
                tau_maj += k * (f_major[:, :, dT, de, dp] * f_mix[:, :, dT])[..., None]

    u_layer = (i_layer[None, :] == C_MINOR_LAY[:, None]).astype(f32)
    rho = f32(0.01) * (p / T)
    u_density = np.where(C_MINOR_SCALE[:, None] != 0, rho[None, :], f32(0))
    i_g = C_MINOR_SCALE[:, None]
    u_scale = np.where(i_g > 7, r_gas[np.clip(i_g - 7, 0, 6), x[None, :]],
                       np.where(i_g < 7, 1 - r_gas[np.clip(i_g, 0, 6), x[None, :]], f32(0)))
    f_u = u_layer * (u_density * u_scale)
    u_tau = np.zeros((53, 60, 16), f32)
    for dT in (0, 1):
        for de in (0, 1):
            k = k_minor[u_all[:, None], (j_T + dT)[None, :], (j_eta[:, C_MINOR_BND, dT] + de).T, :]
            u_tau += k * (f_minor[:, C_MINOR_BND, dT, de].T * f_u)[..., None]
    tau_min = np.stack([u_tau[lo:hi].sum(axis=0) for lo, hi in C_MINOR_LIM])  # [b, x, G]

    n_wet = n_d * (1 + r_gas[0])
    tau_r = np.zeros((60, 14, 16), f32)
    for dT in (0, 1):
        for de in (0, 1):
            k = k_rayleigh[b_all[None, :], i_layer[:, None], (j_T + dT)[:, None], j_eta[:, :, dT] + de, :]
            tau_r += k * (f_minor[:, :, dT, de] * n_wet[:, None])[..., None]
    return tau_maj.transpose(1, 0, 2) + tau_min, tau_r.transpose(1, 0, 2)


@pytest.mark.sanitize
def test_repaired_messner_rrtmg_matches_hand_written_numpy(tmp_path):
    kernel = loom.ekl.load(repaired_rrtmg(tmp_path)).kernel()
    arrays = _inputs(kernel, 1)
    want_g, want_r = rrtmg_numpy(*(arrays[name] for name in ("T", "p", "n_d", "r_gas", "C_ETA_HALF", "C_K_MAJOR",
                                                              "C_K_MINOR", "C_K_RAYLEIGH")))
    kernel(**arrays)
    scale_g, scale_r = np.max(np.abs(want_g)), np.max(np.abs(want_r))
    assert scale_g > 0 and scale_r > 0
    assert np.max(np.abs(arrays["tau_g"] - want_g)) / scale_g < 1e-5
    assert np.max(np.abs(arrays["tau_r"] - want_r)) / scale_r < 1e-5


def test_cli_run_with_ranges_and_the_located_refusal(tmp_path, capsys):
    from loom.cli import main

    args = [f"--range={name}={lo:g}:{hi:g}" for name, (lo, hi) in RANGES.items()]
    assert main(["ekl", "run", str(repaired_rrtmg(tmp_path)), "--tolerance", "1e-5", *args]) == 0
    out = capsys.readouterr().out
    assert "output tau_g (14, 60, 16)" in out and "ok" in out
    assert main(["ekl", "run", str(RRTMG), *args]) == 1
    assert f"{RRTMG}:135:23" in capsys.readouterr().err
    assert main(["ekl", "run", str(RRTMG), "--range", "T=160"]) == 1
    assert "expected NAME=LO:HI" in capsys.readouterr().err
    assert main(["ekl", "run", str(RRTMG), "--range", "nope=0:1"]) == 1
    assert "has no parameter 'nope'" in capsys.readouterr().err
