"""Random dataflow graphs with an independent reference, for the termination fuzzer.

A graph is sources (fixed lists), item-wise nodes (value = 2 * sum(inputs) + id,
the same value pushed to every output), some of which exit early (after ``limit``
items) or raise at item ``fail_at``, and one collector per open channel. The
reference computes each channel's sequence as if nothing were cut short by a
downstream shutdown; a run must deliver a prefix of it on every channel, exactly
it when the graph is an in-tree without early exits or failures, and a failure
only from a node that reached its failing item. Rings (``ring_case``) deadlock
exactly when a node pushes more items than the channel depth.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from loom.dataflow import Graph, Process


@dataclass
class Case:
    graph: Graph
    reference: dict[str, list]            # channel name -> the full sequence
    outputs: dict[str, str]               # output name -> channel name
    fail_nodes: dict[str, tuple[list[str], int]] = field(default_factory=dict)  # node -> (an input channel, fail_at)
    deterministic: bool = True
    pushes: dict[str, int] = field(default_factory=dict)  # counted by the nodes themselves


def _count(case: Case, ch: str) -> None:
    case.pushes[ch] = case.pushes.get(ch, 0) + 1


def random_case(rng: random.Random, index: int) -> Case:
    g = Graph(f"fuzz{index}")
    case = Case(g, {}, {})
    pool: list = []  # open channels: (ChannelRef, reference sequence)

    def new_channel(seq):
        ch = g.channel("i64", depth=rng.randint(1, 3), name=f"c{len(g.channels)}")
        case.reference[ch.name] = seq
        pool.append((ch, seq))
        return ch

    for s in range(rng.randint(1, 2)):
        values = [100 * s + k for k in range(rng.randint(0, 6))]
        ch = new_channel(values)

        def source(out, values=values, name=ch.name):
            for v in values:
                out.push(v)
                _count(case, name)

        g.node(Process(source), outputs=[ch], name=f"src{s}")
    for n in range(rng.randint(1, 4)):
        rng.shuffle(pool)
        k_in = min(len(pool), rng.randint(1, 2))
        ins = [pool.pop() for _ in range(k_in)]
        length = min(len(seq) for _, seq in ins)
        seq = [2 * sum(vals) + n for vals in zip(*(s for _, s in ins))][:length]
        kind = rng.choices(["map", "early", "fail"], [6, 1, 1])[0]
        limit = rng.randint(0, 4) if kind == "early" else None
        fail_at = rng.randint(0, 4) if kind == "fail" else None
        if limit is not None:
            seq = seq[:limit]
            case.deterministic = False
        if fail_at is not None:
            seq = seq[:fail_at]
            case.deterministic = False
        k_out = rng.randint(1, 2)
        if k_out > 1:
            case.deterministic = False
        outs = [new_channel(list(seq)) for _ in range(k_out)]
        name = f"n{n}"
        if fail_at is not None:
            case.fail_nodes[name] = ([c.name for c, _ in ins], fail_at)

        def body(*ports, k_in=k_in, n=n, limit=limit, fail_at=fail_at, outs=outs):
            inputs, outputs = ports[:k_in], ports[k_in:]
            done = 0
            while limit is None or done < limit:
                vals = [p.pull() for p in inputs]
                if fail_at is not None and done == fail_at:
                    raise RuntimeError(f"injected failure at item {done}")
                v = 2 * sum(vals) + n
                for p, ch in zip(outputs, outs):
                    p.push(v)
                    _count(case, ch.name)
                done += 1

        g.node(Process(body), inputs=[c for c, _ in ins], outputs=outs, name=name)
    for ch, _ in pool:
        case.outputs[g.output(ch, ch.name)] = ch.name
    case.outputs = {name: name for name in g.outputs.values()}
    return case


def ring_case(rng: random.Random, index: int) -> tuple[Graph, bool, list[str]]:
    """k nodes in a ring, each pushes m items then pulls m; deadlocks iff m > depth."""
    g = Graph(f"ring_graph{index}")
    k, depth, m = rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 4)
    chans = [g.channel("i32", depth=depth, name=f"r{j}") for j in range(k)]
    names = []
    for j in range(k):
        def body(inp, out, m=m):
            for v in range(m):
                out.push(v)
            for _ in range(m):
                inp.pull()

        names.append(g.node(Process(body), inputs=[chans[j - 1]], outputs=[chans[j]], name=f"ring{j}"))
    return g, m > depth, names
