"""Sweeps: the same results on every executor (Dask LocalCluster included), failures recorded,
CSV / Pareto front / plot, and clear errors for bad executors."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import pytest

from loom.errors import LoomError
from loom.tune import matmul_design_point, sweep

ROOT = Path(__file__).resolve().parents[2]
V4 = str(ROOT / "loom" / "examples" / "accelerators" / "matmul_v4.json")


def points(n: int) -> list[dict]:
    grid = itertools.product(("Ns", "As", "Bs", "Cs"), (16, 32), (16, 32), (16, 32), (False, True),
                             ((16, 16, 16), (32, 16, 48), (48, 32, 16), (32, 32, 32)))
    out = [{"description": V4, "accelerator": "v4_16", "flow": f, "M": m, "N": nn, "K": k, "tile_m": tm, "tile_n": tn,
            "tile_k": tk, "double_buffer": db} for f, tm, tn, tk, db, (m, nn, k) in grid]
    return out[:n]


def test_dask_local_cluster_gives_the_local_pools_results():
    pytest.importorskip("distributed")
    # every 7th grid point (37 of 256, each ~0.25 s twice): still every flow, tile size, double buffering and
    # shape, and 10 batches per executor, so the order check spans batches finished out of turn
    pts = points(256)[::7]
    for key in ("flow", "tile_m", "tile_n", "tile_k", "double_buffer", "M", "K"):
        assert {p[key] for p in pts} == {p[key] for p in points(256)}, key
    local = sweep(matmul_design_point, pts, executor="process", workers=2, progress=False)
    dask = sweep(matmul_design_point, pts, executor="dask-local", workers=2, progress=False)
    assert len(local.rows) == len(dask.rows) == len(pts)
    assert not local.failures
    assert local.rows == dask.rows  # deterministic host model: identical figures, same order


def test_a_failing_point_is_recorded_not_fatal(tmp_path):
    pts = points(6)
    pts[2] = {**pts[2], "flow": "Zs"}          # no such flow
    pts[4] = {**pts[4], "tile_m": 4096}        # tiles over the accelerator's buffers
    result = sweep(matmul_design_point, pts, executor="serial", progress=False)
    assert [r["error"] is None for r in result.rows] == [True, True, False, True, False, True]
    assert "Zs" in result.rows[2]["error"]
    path = result.to_csv(tmp_path / "s.csv")
    rows = list(csv.DictReader(open(path)))
    assert len(rows) == 6 and rows[2]["error"]


def test_pareto_front_and_plot(tmp_path):
    result = sweep(matmul_design_point, points(40), executor="thread", workers=2, progress=False)
    assert not result.failures, [f["error"] for f in result.failures]
    front = result.pareto("buffer_words", "modelled_s")
    assert front
    for row in result.rows:  # nothing dominates a front point
        for f in front:
            assert not (row["buffer_words"] <= f["buffer_words"] and row["modelled_s"] < f["modelled_s"]
                        and row["buffer_words"] < f["buffer_words"])
    pytest.importorskip("matplotlib")
    assert result.plot_pareto(tmp_path / "p.png", "buffer_words", "modelled_s").stat().st_size > 1000


def test_bad_executors(monkeypatch):
    import loom.tune.sweeps

    monkeypatch.setattr(loom.tune.sweeps, "CONNECT_TIMEOUT_S", 1.0)
    with pytest.raises(LoomError, match="unknown executor"):
        sweep(matmul_design_point, points(1), executor="mpi")
    pytest.importorskip("distributed")
    with pytest.raises(LoomError, match="cannot reach the Dask scheduler"):
        sweep(matmul_design_point, points(1), executor="dask://127.0.0.1:1", progress=False)
    with pytest.raises(LoomError, match="no points"):
        sweep(matmul_design_point, [])
