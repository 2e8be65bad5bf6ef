"""Run a dfg graph: the entry function on the caller's thread, every instantiated node on its own.

    result = run_graph(module, entry="run_dfg", args=(5,), bindings={...}, timeout=None)
    result.values            # what the entry function returned
    result.channels          # ChannelStats per channel: pushes, pulls, items left at the end
    result.node_stats        # NodeStats per node: firings, CPU, time in kernel calls, blocked
    model_run(result)        # loom.dataflow.model: predicted items/s beside the measured rate

Threads (reused from ``workers``), not processes: nodes share the channels' Python objects, and the work worth
parallelising (``@loom.kernel``s compiled to C, accelerator drivers) runs in ctypes
calls, which release the GIL (``benchmarks/bench_dataflow.py`` measures the speedup
of a C-kernel pipeline over running its nodes one after another: 1.75-1.79x on 2 idle
cores, where two independent threads reach 1.91-1.97x). Operator bodies in
the IR are interpreted (xDSL's interpreter for arith/scf/math/func, loom's for dfg).

The entry function runs on the caller: its pushes and pulls block like any node's,
and when it returns its remaining channel ends close. ``run_graph`` then waits for
every node; a failure anywhere is raised here (``NodeError`` naming the node,
``DeadlockError`` with the cycle). ``timeout`` (seconds) bounds the whole run for
nodes that compute forever without touching a channel.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.math import MathFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Block, Operation

from loom.dataflow.bindings import NodeBody, prepare
from loom.dataflow.channels import Aborted, Broken, ChannelStats, Network, NodeError, NodeStats, Participant, Port
from loom.dataflow import workers
from loom.dataflow.items import as_result, batch_checker, ir_value, item_checker
from loom.dialects.dfg import ChannelOp, InstantiateOp, LoopOp, OperatorOp, PullOp, PushOp
from loom.errors import LoomError


_DIVISIONS = {"arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi", "arith.ceildivsi",
              "arith.ceildivui"}


@dataclass
class GraphRun:
    values: tuple
    channels: list[ChannelStats]
    nodes: list[str]
    seconds: float
    node_stats: list[NodeStats]  # per node: alive, blocked, firings (the caller's entry function excluded)

    def node(self, name: str) -> NodeStats:
        for n in self.node_stats:
            if n.name == name:
                return n
        raise LoomError(f"no node @{name} (has: {', '.join('@' + n.name for n in self.node_stats)})")

    def channel(self, name: str) -> ChannelStats:
        for c in self.channels:
            if c.name == name:
                return c
        raise LoomError(f"no channel %{name} (has: {', '.join(c.name for c in self.channels)})")


class _Body:
    """Interprets one region for one participant (the caller or a node with an IR body)."""

    def __init__(self, run: "_Run", p: Participant):
        self.run = run
        self.p = p
        self.interp = Interpreter(run.module)
        for fns in (ArithFunctions(), ScfFunctions(), MathFunctions(), FuncFunctions()):
            self.interp.register_implementations(fns)

    def block(self, block: Block, args=()) -> tuple | None:
        """Run ``block``; the values of a ``func.return`` if it has one."""
        it = self.interp
        it.set_values(zip(block.args, args))
        for op in block.ops:
            if isinstance(op, func.ReturnOp):
                return it.get_values(op.operands)
            it.set_values(zip(op.results, self.op(op, it.get_values(op.operands))))
        return None

    def op(self, op: Operation, args: tuple) -> tuple:
        if isinstance(op, PullOp):
            return (self._port(args[0], op).pull(),)
        if isinstance(op, PushOp):
            # IR arithmetic wraps and rounds; the channel refuses only Python's out-of-range values
            self._port(args[1], op).push(ir_value(args[0], op.operands[0].type))
            return ()
        if isinstance(op, LoopOp):
            return self._loop(op, args)
        if isinstance(op, ChannelOp):
            return self.run.new_channel(op, self.p)
        if isinstance(op, InstantiateOp):
            self.run.instantiate(op, args)
            return ()
        if isinstance(op, func.CallOp):
            return self._call(op, args)
        try:
            return tuple(self.interp.run_op(op, args))
        except (AssertionError, ArithmeticError) as error:  # xDSL's interpreter asserts on e.g. x / 0
            shown = ", ".join(str(a) for a in args)
            if op.name in _DIVISIONS and len(args) == 2 and args[1] == 0:
                raise LoomError(f"integer division by zero in {op.name} ({shown})", where=f"node @{self.p.name}") \
                    from None
            raise LoomError(f"{op.name} cannot be evaluated on ({shown}): {error or type(error).__name__}",
                            where=f"node @{self.p.name}") from None

    def _port(self, value, op: Operation) -> Port:
        if isinstance(value, Port):
            return value
        raise LoomError(f"{op.name}: operand is not a channel end", where=f"node @{self.p.name}")

    def _loop(self, op: LoopOp, args: tuple) -> tuple:
        ports = [a for a in args if isinstance(a, Port)]
        outer = self.p.watched
        self.p.watched = [port.channel for port in ports] or [c for c, _ in self.p.ends]
        net = self.p.network
        try:
            while True:
                with net.lock:
                    self.p.new_round()
                    net.raise_if_stopped(self.p)  # a broken channel ends the operator before the next round
                self.interp.push_scope("dfg.loop")
                try:
                    self.block(op.body.block)
                finally:
                    self.interp.pop_scope()
                self.p.rounds += 1
        finally:
            self.p.watched = outer

    def _call(self, op: func.CallOp, args: tuple) -> tuple:
        name = op.callee.root_reference.data
        callee = self.run.symbols.get(name)
        if isinstance(callee, func.FuncOp) and not callee.body.blocks:
            fn = self.run.bindings.get(name)
            if fn is None or not callable(fn):
                raise LoomError(f"func.call @{name}: @{name} is external; bind a Python function to it "
                                f"(bindings={{'{name}': ...}})", where=f"node @{self.p.name}")
            out = fn(*args)
            n = len(op.results)
            if n == 0:
                return ()
            values = out if n > 1 else (out,)
            if not isinstance(values, (tuple, list)) or len(values) != n:
                raise LoomError(f"func.call @{name}: the bound function returned {type(out).__name__}, expected a "
                                f"tuple of {n} results", where=f"node @{self.p.name}")
            # Python's values, checked as a Python node's pushes are (a 300 for an i8 result is refused, not wrapped)
            return tuple(check(v) if (check := item_checker(r.type, f"func.call @{name} result {k}")) else v
                         for k, (v, r) in enumerate(zip(values, op.results)))
        return tuple(self.interp.run_op(op, args))


class _Run:
    def __init__(self, module: ModuleOp, bindings: dict[str, Any]):
        self.module = module
        self.bindings = bindings
        self.symbols = {op.sym_name.data: op for op in module.ops if hasattr(op, "sym_name")}
        self.net = Network()
        self.names: dict[str, int] = {}
        self.prepared: dict[int, NodeBody] = {}

    # --------------------------------------------------------------- IR ops of the graph level
    def new_channel(self, op: ChannelOp, holder: Participant) -> tuple:
        hint = op.in_end.name_hint or op.out_end.name_hint or f"ch{len(self.net.channels)}"
        name = hint[:-3] if hint.endswith("_in") else hint[:-4] if hint.endswith("_out") else hint
        where = f"channel %{name}"
        ch = self.net.channel(name, op.capacity, item_checker(op.element_type, where),
                              batch_checker(op.element_type, where))
        self.net.hold(holder, ch, "reader")
        self.net.hold(holder, ch, "writer")
        return Port(ch, holder, "reader"), Port(ch, holder, "writer")

    def node_name(self, callee: str) -> str:
        k = self.names.get(callee, 0) + 1
        self.names[callee] = k
        return callee if k == 1 else f"{callee}#{k}"

    def prepare_all(self, entry: func.FuncOp) -> None:
        """Bind every instantiated external operator before anything runs (errors name the node)."""
        counts: dict[str, int] = {}
        for op in entry.walk():
            if not isinstance(op, InstantiateOp):
                continue
            callee = op.callee.root_reference.data
            counts[callee] = counts.get(callee, 0) + 1
            name = callee if counts[callee] == 1 else f"{callee}#{counts[callee]}"
            oper = self.symbols.get(callee)
            if not isinstance(oper, OperatorOp):
                raise LoomError(f"no dfg.operator @{callee}", where=f"node @{name}")
            if not oper.is_external:
                if op.is_offloaded and callee not in self.bindings:
                    raise LoomError("an offloaded node needs an Accelerator binding (its IR body runs on the "
                                    "host only)", where=f"node @{name}")
                if callee not in self.bindings:
                    continue
            if callee not in self.bindings:
                raise LoomError(f"dfg.operator @{callee} has no body and nothing is bound to it (pass "
                                f"bindings={{'{callee}': ...}})", where=f"node @{name}")
            self.prepared[id(op)] = prepare(self.bindings[callee], name, op.is_offloaded, oper.inputs,
                                            oper.outputs)

    def instantiate(self, op: InstantiateOp, args: tuple) -> None:
        callee = op.callee.root_reference.data
        name = self.node_name(callee)
        oper = self.symbols[callee]
        p = self.net.participant(name)
        n_in = len(op.inputs)
        ports = []
        for k, port in enumerate(args):
            role = "reader" if k < n_in else "writer"
            self.net.hold(p, port.channel, role)
            ports.append(Port(port.channel, p, role))
        body = self.prepared.get(id(op))
        if body is not None:
            target = lambda: body.run(p, ports[:n_in], ports[n_in:])  # noqa: E731
        else:
            def target():
                _Body(self, p).block(oper.body.block, ports)

        def main():
            p.begin()
            try:
                target()
            except (Broken, Aborted):
                pass
            except BaseException as e:  # noqa: BLE001 - any failure of user code stops the graph
                self.net.fail(NodeError(name, e))
            finally:
                self.net.finish(p)

        p.native = body is not None and body.native
        self.net.start(p)
        workers.submit(main)


def find_entry(module: ModuleOp, entry: str | None) -> func.FuncOp:
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    if entry is not None:
        for f in funcs:
            if f.sym_name.data == entry:
                return f
        raise LoomError(f"no function @{entry} with a body (has: {', '.join('@' + f.sym_name.data for f in funcs)})")
    graphs = [f for f in funcs if any(isinstance(o, InstantiateOp) for o in f.walk())]
    if len(graphs) != 1:
        raise LoomError(f"cannot choose the entry function: {len(graphs)} functions instantiate nodes "
                        f"({', '.join('@' + f.sym_name.data for f in graphs) or 'none'}); name one")
    return graphs[0]


def run_graph(module: ModuleOp, entry: str | None = None, args: tuple = (), bindings: dict | None = None,
              timeout: float | None = None, verify: bool = True) -> GraphRun:
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise LoomError(f"timeout must be a number of seconds > 0 (or None), got {timeout!r}")
    if verify:  # False only for a module that was just built and verified (Graph.module())
        try:
            module.verify()
        except Exception as e:  # noqa: BLE001 - xDSL's VerifyException (and others); its text dumps the module
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise LoomError(f"invalid dfg module: {first}", where="run_graph") from None
    fop = find_entry(module, entry)
    name = fop.sym_name.data
    params = fop.function_type.inputs.data
    if len(args) != len(params):
        raise LoomError(f"@{name} takes {len(params)} arguments, got {len(args)}", where=f"@{name}")
    args = tuple(item_checker(t, f"argument {k} of @{name}")(a) if item_checker(t, "") else a
                 for k, (t, a) in enumerate(zip(params, args)))
    run = _Run(module, dict(bindings or {}))
    run.prepare_all(fop)
    caller = run.net.participant(name)
    run.net.start(caller)
    start = time.perf_counter()
    values: tuple | None = None
    caller_error: LoomError | None = None
    try:
        values = _Body(run, caller).block(fop.body.block, args)
    except Aborted:
        pass
    except Broken as b:
        ch = b.args[0]
        caller_error = LoomError(f"channel %{ch.name} was closed by the node at its other end before @{name} "
                                 "could use it", where=f"@{name}")
    except LoomError as e:
        caller_error = e
    finally:
        run.net.finish(caller)
    if caller_error is not None:
        run.net.fail(caller_error)
    run.net.join(timeout)
    if run.net.error is not None:
        raise run.net.error
    results = tuple(as_result(v, t) for v, t in zip(values or (), fop.function_type.outputs.data))
    nodes = run.net.participants[1:]
    return GraphRun(results, [c.stats() for c in run.net.channels], [p.name for p in nodes],
                    time.perf_counter() - start, [p.stats() for p in nodes])


__all__ = ["run_graph", "GraphRun", "find_entry", "NodeError"]
