"""EKL kernels whose contractions run on matmul accelerators.

    module = loom.ekl.load("inverse_helmholtz.ekl", types={"REAL": "f32"},
                           accelerators=["matmul_v4_f32.json"])   # your f32 matmul description: the shipped
                                                                  # matmul_v4.json with data_type "f32"
    kernel = module.inverse_helmholtz
    print(kernel.placement())      # which step runs where, and why
    kernel(S, D, u, v)             # same call as the CPU kernel

The kernel's lets (after the contraction order is chosen) are taken in order.
A let that is a plain contraction of two arrays (``loom.frontends.ekl.contraction``)
is a matrix product after reshaping; it is offloaded when a driver compiled for a
``linalg.matmul`` of its element type on dynamic shapes (one driver serves every
step of that type) matches one of the accelerators, tried in the order given.
Consecutive lets that are not offloaded compile together for the CPU as one
segment kernel (``loom.frontends.ekl.segments``). The host runs the steps in
order: operands are reshaped to matrices (views when the axes are already in
(M, K) / (K, N) order, else one transposing copy, counted in ``Step.copies``),
the result matrix is a view of the result array when its axes are (M, N).

An accelerator that does not match (another kernel, another data type) leaves
the step on the CPU with the reason; a description that cannot be read is a
LoomError, as everywhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from math import prod

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp
from xdsl.dialects.linalg import ops as linalg

from loom.accel.description import load_description
from loom.driver import compile_driver
from loom.errors import LoomError
from loom.frontends.ekl import form as F
from loom.frontends.ekl.contraction import MatmulForm, matmul_form
from loom.frontends.ekl.reference import check_congruence, extent_value
from loom.frontends.ekl.segments import Segment, segment
from loom.frontends.ekl.to_esn import scalar_type
from loom.jit.ekl import EklKernel, EklModule

# compile_driver's refusals that mean "this accelerator does not take this op": the step stays on the CPU
_NO_MATCH = ("no operation matches", "data type mismatch")


@dataclass(frozen=True)
class Target:
    """One accelerator to try: a description file and optionally one accelerator and flow of it."""

    description: str
    accelerator: str | None = None
    flow: str | None = None

    def __str__(self) -> str:
        return os.path.basename(self.description) + (f":{self.accelerator}" if self.accelerator else "")


def targets(accelerators, where: str = "accelerators") -> tuple[Target, ...]:
    """``accelerators``: paths, ``(path, accelerator)`` / ``(path, accelerator, flow)`` tuples or Targets;
    every description is read and validated now (a bad one is a located LoomError)."""
    if isinstance(accelerators, str | os.PathLike | Target):
        accelerators = [accelerators]
    result = []
    for k, item in enumerate(accelerators):
        if isinstance(item, Target):
            t = item
        elif isinstance(item, str | os.PathLike):
            t = Target(os.path.abspath(os.fspath(item)))
        elif isinstance(item, tuple) and 1 <= len(item) <= 3 and isinstance(item[0], str | os.PathLike):
            t = Target(os.path.abspath(os.fspath(item[0])), *item[1:])
        else:
            raise LoomError(f"expected a description path or (path, accelerator[, flow]), got {item!r}",
                            where=f"{where}[{k}]")
        if not os.path.isfile(t.description):
            # a name the command line's --accel finds among the shipped ones (this layer does not import them)
            raise LoomError(f"accelerator description not found: {t.description} (a path is read from the working "
                            "directory; the shipped descriptions are in loom.examples.ACCELERATORS_DIR, which the "
                            "command line's --accel finds by name)", where=f"{where}[{k}]")
        system = load_description(t.description)
        if t.accelerator is not None:
            system.accelerator(t.accelerator)  # a located error when the name is wrong
        result.append(t)
    return tuple(result)


def matmul_module(dtype: str) -> ModuleOp:
    """``C += A . B`` on dynamic ``dtype`` matrices: the op every offloaded step is."""
    t = MemRefType(scalar_type(dtype), [DYNAMIC_INDEX, DYNAMIC_INDEX])
    f = func.FuncOp("ekl_matmul", ([t, t, t], []))
    with ImplicitBuilder(f.body) as (a, b, c):
        linalg.MatmulOp([a, b], [c])
        func.ReturnOp()
    return ModuleOp([f])


@dataclass(eq=False)
class Step:
    """Lets run together on one device."""

    lets: list[F.Let]
    device: str  # "cpu" or the accelerator's name
    reason: str  # the matched matrix product, or why the lets stay on the CPU
    form: MatmulForm | None = None
    driver: object = None  # loom.driver.AccelDriver
    segment: Segment | None = None
    cpu: EklKernel | None = None
    copies: int = 0  # operand/result copies made by the last call (transposes the views could not avoid)

    @property
    def names(self) -> list[str]:
        return [let.target.name for let in self.lets]


@dataclass
class OffloadedKernel(EklKernel):
    """An EKL kernel whose matching contractions run on accelerators (module docstring)."""

    targets: tuple[Target, ...] = ()
    _steps: list[Step] | None = field(default=None, repr=False)
    _drivers: dict = field(default_factory=dict, repr=False)

    def _driver(self, dtype: str):
        """A driver for ``dtype`` matrix products on the first target that takes them, or the reasons none does."""
        if dtype not in self._drivers:
            reasons = []
            found = None
            for t in self.targets:
                try:
                    found = compile_driver(matmul_module(dtype), t.description, t.accelerator, t.flow)
                    break
                except LoomError as err:
                    if not any(err.message.startswith(s) for s in _NO_MATCH):
                        raise
                    reasons.append(f"{t}: {err.message}")
            self._drivers[dtype] = found if found is not None else "; ".join(reasons) or "no accelerator given"
        return self._drivers[dtype]

    def plan(self) -> list[Step]:
        """The steps, in order (compiles the drivers and CPU segments on first use)."""
        if self._steps is None:
            steps: list[Step] = []
            run: list[F.Let] = []
            reasons: list[str] = []
            lets = self.lowered_form.lets
            for k, let in enumerate(lets):
                form = matmul_form(let)
                driver = self._driver(let.target.dtype) if isinstance(form, MatmulForm) else None
                if isinstance(form, MatmulForm) and not isinstance(driver, str):
                    if run:
                        steps.append(self._cpu_step(run, lets[k:], reasons, len(steps)))
                        run, reasons = [], []
                    steps.append(Step([let], driver.accelerator.name, form.describe(), form, driver))
                else:
                    run.append(let)
                    reasons.append(f"{let.target.name}: {form if isinstance(form, str) else driver}")
            if run:
                steps.append(self._cpu_step(run, [], reasons, len(steps)))
            self._steps = steps
        return self._steps

    def _cpu_step(self, run: list[F.Let], later: list[F.Let], reasons: list[str], number: int) -> Step:
        seg = segment(self.lowered_form, run, later, f"{self.name}_step{number}")
        cpu = EklKernel(seg.kernel, factorized=False)
        cpu.compile()
        return Step(run, "cpu", "; ".join(reasons), segment=seg, cpu=cpu)

    @property
    def offloaded(self) -> int:
        """How many lets run on an accelerator."""
        return sum(len(s.lets) for s in self.plan() if s.device != "cpu")

    def placement(self) -> str:
        """One line per step: the lets, where they run and why."""
        return "\n".join(f"{', '.join(s.names)}: {s.device} ({s.reason})" for s in self.plan())

    def __call__(self, *args, **kwargs) -> None:
        named = self.arrays(args, kwargs)
        check_congruence(self.form, named)
        env: dict[int, np.ndarray] = {id(p): named[p.name] for p in self.form.params}
        env.update({id(c): c.value for c in self.lowered_form.consts})
        consts = [c.value for c in self.lowered_form.consts]
        for step in self.plan():
            for let in step.lets:
                if let.target.kind == "let":
                    shape = tuple(extent_value(e, named) for e in let.target.shape)
                    env[id(let.target)] = np.empty(shape, F.NP_DTYPES[let.target.dtype])
            if step.cpu is not None:
                assert step.segment is not None
                step.cpu.compile()(*[env[id(t)] for t in step.segment.arguments], *consts)
            else:
                step.copies = _run_matmul(step, env)


def _matrix(array: np.ndarray, perm: tuple[int, ...], split: int) -> tuple[np.ndarray, bool]:
    """``array`` with axes ``perm`` as a (first ``split`` axes) x (the rest) C-contiguous matrix, and
    whether that needed a copy."""
    t = array.transpose(perm)
    matrix = np.ascontiguousarray(t.reshape(prod(t.shape[:split]), prod(t.shape[split:])))
    return matrix, not np.shares_memory(matrix, array)


def _run_matmul(step: Step, env: dict[int, np.ndarray]) -> int:
    form = step.form
    assert form is not None
    a, a_copied = _matrix(env[id(form.a.tensor)], form.a_perm, len(form.m))
    b, b_copied = _matrix(env[id(form.b.tensor)], form.b_perm, len(form.k))
    out = env[id(form.let.target)]
    if form.output_is_view and out.flags.c_contiguous:
        c = out.reshape(a.shape[0], b.shape[1])
        c.fill(0)  # the driver accumulates: C += A . B
        out_copied = False
    else:
        c = np.zeros((a.shape[0], b.shape[1]), out.dtype)
        out_copied = True
    if c.size and a.shape[1]:
        step.driver(a, b, c)
    if out_copied:
        m_shape = [out.shape[form.let.bound.index(i)] for i in form.m]
        n_shape = [out.shape[form.let.bound.index(i)] for i in form.n]
        out[...] = c.reshape(m_shape + n_shape).transpose(form.output_perm)
    return a_copied + b_copied + out_copied


def offload(module: EklModule, accelerators) -> EklModule:
    """``module`` with every kernel replaced by one that offloads its matching contractions."""
    found = targets(accelerators)
    for name, kernel in list(module.kernels.items()):
        module.kernels[name] = OffloadedKernel(kernel.form, kernel.factorized, targets=found)
    return module
