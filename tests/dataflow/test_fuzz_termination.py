"""1,000 random graphs terminate every time with the right result or a named error (no hang, no lost item)."""

import random
import time

import pytest

from loom.dataflow import DeadlockError, NodeError, run

from tests.dataflow.fuzz_graphs import random_case, ring_case

N_GRAPHS = 1000


def check_case(case):
    try:
        outputs, result = run(case.graph, timeout=20, verify=False)
        error = None
    except NodeError as e:
        outputs, result, error = None, None, e
    if error is not None:
        assert error.node in case.fail_nodes, f"unexpected failure: {error}"
        return "error"
    stats = {c.name: c for c in result.channels}
    for ch, s in stats.items():
        assert s.pushes == s.pulls + s.left, f"lost items on %{ch}: {s}"  # runtime's own accounting
        assert case.pushes.get(ch, 0) == s.pushes, f"%{ch}: nodes pushed {case.pushes.get(ch, 0)}, channel {s}"
    for out, ch in case.outputs.items():
        got, ref = outputs[out], case.reference[ch]
        assert got == ref[:len(got)], f"%{ch}: {got} is not a prefix of {ref}"
        assert len(got) == stats[ch].pulls
        if case.deterministic:
            assert got == ref, f"%{ch}: {got} != {ref}"
    for node, (chans, fail_at) in case.fail_nodes.items():  # it fails once every input delivered item fail_at
        assert min(stats[ch].pulls for ch in chans) <= fail_at, f"@{node} reached item {fail_at} but no error was raised"
    return "ok"


def test_fuzz_graphs_are_valid_ir():
    rng = random.Random(3)
    for i in range(20):
        random_case(rng, i).graph.module(verify=True)
        ring_case(rng, i)[0].module(verify=True)


def test_random_graphs_terminate_with_the_right_result_or_a_named_error():
    rng = random.Random(12)
    kinds = {"ok": 0, "error": 0, "deadlock": 0, "ring-ok": 0}
    t = time.perf_counter()
    for i in range(N_GRAPHS):
        if i % 5 == 4:
            g, deadlocks, names = ring_case(rng, i)
            if deadlocks:
                with pytest.raises(DeadlockError) as info:
                    run(g, verify=False)
                assert sorted(info.value.nodes) == sorted(names)
                kinds["deadlock"] += 1
            else:
                run(g, verify=False)
                kinds["ring-ok"] += 1
            continue
        kinds[check_case(random_case(rng, i))] += 1
    elapsed = time.perf_counter() - t
    assert all(kinds.values()), kinds  # every outcome was exercised
    assert elapsed < 60, f"{N_GRAPHS} graphs took {elapsed:.1f} s"
    print(f"{N_GRAPHS} graphs in {elapsed:.2f} s: {kinds}")
