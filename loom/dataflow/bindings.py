"""Implementations of body-less ``dfg.operator``s, bound by symbol name at run time.

    Process(fn)        fn(*input_ports, *output_ports) pulls and pushes itself; when it
                       returns the node ends and its channels close (sources, sinks,
                       stateful nodes). Not looping unless fn loops.
    Map(fn)            looping, item-wise: pull one item from every input, push
                       fn(*items) (a tuple for several outputs), until a channel breaks
    an EKL kernel      looping like a @loom.kernel: read parameters from the inputs, written
                       ones pushed (``loom.dataflow.ekl_nodes``)
    a @loom.kernel     looping like Map, compiled to C (the call releases the GIL): the
                       kernel's first parameters take the input items, the remaining
                       memref parameters are fresh output arrays (shapes from the output
                       channels' static memref types); a kernel with a result and one
                       output channel pushes the result
    Accelerator(...)   a kernel with an accelerator description: an ``offloaded``
                       instantiation runs it through the generated host driver
                       (``loom.driver.compile_driver``) on the described (simulated)
                       accelerator; a plain one runs the same kernel compiled to C. So
                       toggling ``offloaded`` in the IR switches between HW and SW.
    a plain callable   is a Map.

Bindings also name environment functions: ``func.call @f`` to a body-less
``func.func @f`` calls ``bindings["f"](*args)``.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import Attribute

from loom.dataflow.channels import Broken, Participant, Port
from loom.dataflow.ekl_nodes import accelerated_lets, ekl_call, is_ekl_kernel
from loom.dataflow.items import zeros_for
from loom.errors import LoomError
from loom.runtime.lock import RUNTIME_LOCK


@dataclass(frozen=True)
class Process:
    fn: Callable[..., Any]


@dataclass(frozen=True)
class Map:
    fn: Callable[..., Any]


@dataclass(frozen=True)
class Accelerator:
    """``kernel`` (linalg on memrefs) run by ``accelerator``/``flow`` of ``description``.

    ``adapter(run, *items) -> outputs`` turns channel items into the kernel's arrays
    (``run(*arrays)`` calls the driver or the CPU kernel, in place); without one the
    items are the leading arrays and zero outputs are allocated from the channel types.
    """

    kernel: Any
    description: str
    accelerator: str
    flow: str
    adapter: Callable[..., Any] | None = None




def _is_kernel(obj) -> bool:
    return hasattr(obj, "compile") and hasattr(obj, "check_args") and hasattr(obj, "signature")


class NodeBody:
    """A prepared implementation: ``run(participant, input_ports, output_ports)``."""

    looping = False
    native = False  # its work runs in C calls that release the GIL (kernels, accelerator drivers)

    def run(self, p: Participant, ins: Sequence[Port], outs: Sequence[Port]) -> None:
        raise NotImplementedError


class _ProcessBody(NodeBody):
    def __init__(self, fn, name: str):
        self.fn = fn
        self.name = name

    def run(self, p, ins, outs):
        result = self.fn(*ins, *outs)
        if inspect.isgenerator(result) or inspect.isasyncgen(result) or inspect.iscoroutine(result):
            result.close()
            # calling a generator function runs none of its body: the node would end having done nothing
            raise LoomError(f"the Process function {getattr(self.fn, '__name__', '')!r} returned a "
                            f"{type(result).__name__} instead of running: a Process pushes its items itself "
                            "(out.push(item)) rather than yielding them", where=f"node @{self.name}")


class _MapBody(NodeBody):
    """Pull one item per input, call, push every output; repeat until a channel breaks."""

    looping = True

    def __init__(self, call: Callable[..., Any], n_outputs: int, name: str, native: bool = False):
        self.call = call
        self.n_outputs = n_outputs
        self.name = name
        self.native = native

    def run(self, p, ins, outs):
        p.watched = [port.channel for port in (*ins, *outs)]
        clock = time.thread_time
        while True:
            p.new_round()
            items = [port.pull() for port in ins]
            if self.native and (p.rounds < 8 or p.rounds % 32 == 0):
                # CPU time in the call: the GIL-free share of the node (throughput model). Sampled: reading a
                # thread's CPU clock around every call slowed a 4-node C pipeline by about 5%
                t = clock()
                result = self.call(*items)
                p.native_seconds += clock() - t
                p.native_samples += 1
            else:
                result = self.call(*items)
            if self.n_outputs == 0:
                pass
            elif self.n_outputs == 1:
                outs[0].push(result)
            else:
                if not isinstance(result, (tuple, list)) or len(result) != self.n_outputs:
                    raise LoomError(f"expected {self.n_outputs} results (one per output channel), got "
                                    f"{type(result).__name__}", where=f"node @{self.name}")
                for port, item in zip(outs, result):
                    port.push(item)
            p.rounds += 1
            if not ins:  # a source map would never block on input: it still stops when an output breaks
                with p.network.lock:
                    p.network.raise_if_stopped(p)


def _check_ports(kernel, in_types: Sequence[Attribute], out_types: Sequence[Attribute], where: str,
                 results: bool = True) -> int:
    """Before the run: the node's channels fit the kernel's parameters (inputs first, then the arrays it
    writes; with ``results``, a returned value may feed the one output channel). The number of output arrays."""
    n_in = len(in_types)
    n_params = len(kernel.signature.params)
    n_out_arrays = n_params - n_in
    if n_out_arrays < 0:
        raise LoomError(f"kernel '{kernel.name}' takes {n_params} parameters but the node has {n_in} inputs",
                        where=where)
    returns = results and bool(kernel.result_types)
    if n_out_arrays != len(out_types) and not (returns and n_out_arrays == 0 and len(out_types) == 1):
        raise LoomError(f"kernel '{kernel.name}' has {n_out_arrays} output parameters after the {n_in} inputs "
                        f"but the node has {len(out_types)} output channels", where=where)
    channels = [*(("input", k, t) for k, t in enumerate(in_types)),
                *(("output", k, t) for k, t in enumerate(out_types) if n_out_arrays)]
    for param, (side, k, channel) in zip(kernel.signature.params, channels):
        if not _carries(channel, param.xdsl_type):  # before the run, not when the first item arrives
            raise LoomError(f"{side} channel {k} carries {channel} but kernel '{kernel.name}' parameter "
                            f"'{param.name}' is {param.xdsl_type}", where=where)
        if side == "output" and isinstance(channel, MemRefType) and DYNAMIC_INDEX in channel.get_shape():
            raise LoomError(f"output channel {k} carries {channel}: the node allocates each item the kernel "
                            f"writes ('{param.name}'), which needs a static shape", where=where)
    if returns and not n_out_arrays and kernel.result_types[0] != out_types[0]:
        raise LoomError(f"kernel '{kernel.name}' returns {kernel.result_types[0]} but output channel 0 carries "
                        f"{out_types[0]}", where=where)
    return n_out_arrays


def _kernel_call(kernel, in_types: Sequence[Attribute], out_types: Sequence[Attribute], name: str
                 ) -> Callable[..., Any]:
    compiled = kernel.compile()  # before any thread starts: compile errors name the node early
    where = f"node @{name}"
    n_out_arrays = _check_ports(kernel, in_types, out_types, where)

    def call(*items):
        outs = [zeros_for(t, where) for t in out_types] if n_out_arrays else []
        result = compiled(*kernel.check_args([*items, *outs]))
        if not n_out_arrays:
            return result
        return outs[0] if len(outs) == 1 else tuple(outs)

    return call


def _accelerator_call(acc: Accelerator, offloaded: bool, in_types, out_types, name: str):
    where = f"node @{name}"
    if acc.adapter is None:  # the items are the kernel's arrays: checked before anything runs, as a kernel node's
        if _is_kernel(acc.kernel):
            _check_ports(acc.kernel, in_types, out_types, where, results=False)
    else:
        _check_arity(acc.adapter, 1 + len(in_types), f"the driver's run function and {len(in_types)} item(s), one "
                     "per input channel of the node", name)
    if offloaded:
        from loom.driver import compile_driver

        try:
            driver = compile_driver(acc.kernel, acc.description, acc.accelerator, acc.flow)
        except LoomError as e:
            raise LoomError(f"cannot offload: {e}", where=where) from None

        def run(*arrays):
            with RUNTIME_LOCK:
                driver(*arrays)
    else:
        compiled = acc.kernel.compile()

        def run(*arrays):
            compiled(*acc.kernel.check_args(list(arrays)))

    if acc.adapter is not None:
        return lambda *items: acc.adapter(run, *items)

    def call(*items):
        outs = [zeros_for(t, where) for t in out_types]
        run(*items, *outs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    return call


def _carries(channel: Attribute, param: Attribute) -> bool:
    """Whether items of a channel of type ``channel`` fit a kernel parameter of type ``param`` (a dynamic
    extent on either side matches any)."""
    if not isinstance(channel, MemRefType) or not isinstance(param, MemRefType):
        return channel == param
    if channel.element_type != param.element_type or channel.get_num_dims() != param.get_num_dims():
        return False
    return all(c == p or DYNAMIC_INDEX in (c, p) for c, p in zip(channel.get_shape(), param.get_shape()))


def _check_arity(fn, n: int, what: str, name: str) -> None:
    """Before anything runs: ``fn`` must accept ``n`` positional arguments (else every node of the graph
    started and the first call failed with a TypeError naming a lambda, not the node's ports)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins and C callables without a signature: checked when called
        return
    try:
        sig.bind(*range(n))
    except TypeError:
        label = getattr(fn, "__qualname__", type(fn).__name__)
        raise LoomError(f"{label}{sig} cannot take {what}", where=f"node @{name}") from None


def prepare(binding: Any, name: str, offloaded: bool, in_types, out_types) -> NodeBody:
    """The runnable body of node ``name`` from what the user bound to its operator."""
    n_in, n_out = len(in_types), len(out_types)
    if offloaded and not isinstance(binding, Accelerator):
        accelerated = accelerated_lets(binding)  # an EKL kernel loaded with accelerators=[...] offloads itself
        if accelerated is None:
            raise LoomError(f"the node is offloaded but its implementation is a {type(binding).__name__}; bind an "
                            "Accelerator(kernel, description, accelerator, flow), or an EKL kernel loaded with "
                            "accelerators=[...]", where=f"node @{name}")
        if not accelerated:
            raise LoomError(f"the node is offloaded but no step of EKL kernel '{binding.name}' runs on an "
                            f"accelerator: {binding.placement()}", where=f"node @{name}")
    if isinstance(binding, Process):
        _check_arity(binding.fn, n_in + n_out, f"the node's {n_in + n_out} ports ({n_in} input, {n_out} output), "
                     "which a Process gets as arguments", name)
        return _ProcessBody(binding.fn, name)
    if isinstance(binding, Accelerator):
        return _MapBody(_accelerator_call(binding, offloaded, in_types, out_types, name), n_out, name, native=True)
    if _is_kernel(binding):
        return _MapBody(_kernel_call(binding, in_types, out_types, name), n_out, name, native=True)
    if is_ekl_kernel(binding):  # callable too: it must not fall through to a Map of its arrays
        return _MapBody(ekl_call(binding, in_types, out_types, name), n_out, name, native=True)
    if isinstance(binding, Map) or callable(binding):
        fn = binding.fn if isinstance(binding, Map) else binding
        _check_arity(fn, n_in, f"{n_in} item{'s' if n_in != 1 else ''}, one per input channel of the node", name)
        return _MapBody(fn, n_out, name)
    raise LoomError(f"cannot run a {type(binding).__name__} as a node (expected a function, Process, Map, "
                    "@loom.kernel, EKL kernel or Accelerator)", where=f"node @{name}")


__all__ = ["Process", "Map", "Accelerator", "Broken", "prepare", "NodeBody"]
