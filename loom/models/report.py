"""The per-layer report of a profiled run: where each layer ran, its measured host time, its share."""

from __future__ import annotations

from dataclasses import dataclass

from loom.models.runtime import LayerTime


@dataclass
class LayerRow:
    index: int
    kind: str
    shape: tuple[int, ...]
    device: str
    milliseconds: float
    share: float  # of the whole run's measured time
    where: str
    modelled_ms: float | None = None  # accelerator timing model, offloaded layers only
    schedule: str = ""  # offloaded layers: flow, tiles, double buffering of the driver
    note: str = ""  # why a layer an accelerator takes ran on the CPU ("kept on CPU: modelled ... vs ...")


def layer_report(profile: list[LayerTime]) -> list[LayerRow]:
    total = sum(t.seconds for t in profile) or 1.0
    return [LayerRow(t.index, _kind(t), t.layer.output.shape, t.device, t.seconds * 1e3, t.seconds / total,
                     t.layer.where, None if t.modelled_s is None else t.modelled_s * 1e3, t.schedule, t.note)
            for t in profile]


def share_by_kind(profile: list[LayerTime]) -> dict[str, float]:
    """Measured time share per layer kind (e.g. how much of the run the matmuls take)."""
    total = sum(t.seconds for t in profile) or 1.0
    shares: dict[str, float] = {}
    for t in profile:
        shares[_kind(t)] = shares.get(_kind(t), 0.0) + t.seconds / total
    return dict(sorted(shares.items(), key=lambda kv: -kv[1]))


def _kind(t: LayerTime) -> str:
    op = t.layer.attrs.get("op") or t.layer.attrs.get("kind")
    return f"{t.layer.kind}:{op}" if op else t.layer.kind
