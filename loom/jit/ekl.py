"""EKL kernels compiled for the CPU and callable on numpy arrays.

    module = loom.ekl.load(text_or_path)          # parse + elaborate every kernel
    module.inverse_helmholtz(S, D, u, v)          # outputs are passed as arrays (out&)
    module.kernel("k").reference(S, D, u)         # numpy reference (einsum), independent of the C

Pipeline: EKL -> esn form (``loom.frontends.ekl``) -> contraction order chosen
(``factorize``) -> esn dialect -> ``convert-esn-to-linalg`` -> ``lower_to_c`` ->
C backend. Kernels that gather (subscripts computed from looked-up indices)
compile in checked mode: an out-of-range gather raises a LoomError located at
the EKL subscript instead of reading outside the array. Dynamic extents are
checked congruent (esn's rule) before every call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from loom.core.user_files import is_file
from loom.errors import LoomError
from loom.frontends.ekl import form as F
from loom.frontends.ekl.elaborate import elaborate
from loom.frontends.ekl.factorize import factorize, flops
from loom.frontends.ekl.parser import parse
from loom.frontends.ekl.reference import check_congruence, evaluate, extent_value
from loom.frontends.ekl.to_esn import build_module

STAGES = ("esn", "linalg", "loops", "c")


def _read(text_or_path) -> tuple[str, str]:
    if isinstance(text_or_path, Path) or (isinstance(text_or_path, str) and "\n" not in text_or_path
                                            and text_or_path.endswith(".ekl")):
        path = Path(text_or_path)
        if not is_file(path):
            raise LoomError(f"EKL file not found: {path}", filename=str(path))
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise LoomError(f"cannot read EKL file {path}: {exc}", filename=str(path)) from None
    return str(text_or_path), "<ekl>"


def to_linalg(esn_module: ModuleOp) -> ModuleOp:
    from loom.passes import Pipeline

    return Pipeline.parse("convert-esn-to-linalg").run(esn_module.clone())


@dataclass
class EklKernel:
    """One compiled EKL kernel. Call it with the kernel's parameters in order (inputs and out& arrays,
    then static imports); outputs are written in place."""

    form: F.Kernel
    factorized: bool = True
    _compiled: object = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.form.name

    @cached_property
    def lowered_form(self) -> F.Kernel:
        return factorize(self.form) if self.factorized else self.form

    @property
    def flops(self) -> int:
        """Floating-point operations of one call, a dynamic extent counted as 16."""
        return flops(self.lowered_form)

    def dim_sizes(self, size: int) -> dict[str, int]:
        """A size for every named '?' extent (``loom.dims`` of ``ir``): the known extent it is congruent with,
        else ``size`` (``loom build`` sizes HLS ports with these, ``--dims`` overriding)."""
        from loom.frontends.ekl.to_esn import dim_classes

        return {name: size if known is None else known for name, known in dim_classes(self.lowered_form).values()}

    def flops_for(self, arrays: dict[str, np.ndarray]) -> int:
        """Floating-point operations of one call on ``arrays`` (their shapes give the '?' extents)."""
        return flops(self.lowered_form, lambda index: extent_value(index.extent, arrays))

    def ir(self, stage: str = "esn", *, consts_as_globals: bool = False) -> ModuleOp:
        """The kernel's module at ``stage`` (esn, linalg, loops, c). Constant arrays are trailing arguments
        (``__call__`` passes them), or with ``consts_as_globals`` constant globals (ROMs in HLS C++)."""
        from loom.passes.recipes import lower_to_c, lower_to_loops

        if stage not in STAGES:
            raise LoomError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}", where="--stage")
        module = build_module([self.lowered_form], consts_as_globals)
        if stage == "esn":
            return module
        module = self._linalg(module)
        if stage == "linalg":
            return module
        return lower_to_loops(module) if stage == "loops" else lower_to_c(module)

    def _linalg(self, module: ModuleOp) -> ModuleOp:
        from xdsl.utils.exceptions import PassFailedException

        try:
            return to_linalg(module)
        except PassFailedException as failure:
            raise LoomError(str(failure), where=f"kernel {self.name}") from None

    def compile(self):
        if self._compiled is None:
            from loom.backends.c import compile_module

            checked = self.form.has_gathers or None
            self._compiled = compile_module(self.ir("c"), checked=checked).function(self.name)
        return self._compiled

    def arrays(self, args, kwargs) -> dict[str, np.ndarray]:
        """The arguments by parameter name, each checked against its declaration; a bad one is a LoomError
        at the kernel's or the parameter's place in the EKL source, saying what was expected (the C
        runtime's own checks only know argument numbers of the generated function)."""
        params = self.form.params
        where = self.form.loc
        if len(args) > len(params):
            raise where.error(f"kernel {self.name} takes {len(params)} arrays "
                              f"({', '.join(p.name for p in params)}), got {len(args)}")
        named = dict(zip((p.name for p in params), args))
        for key, value in kwargs.items():
            if key not in {p.name for p in params}:
                raise where.error(f"kernel {self.name} has no parameter '{key}' "
                                  f"(parameters: {', '.join(p.name for p in params)})")
            if key in named:
                raise where.error(f"kernel {self.name}: argument '{key}' given both by position and by name")
            named[key] = value
        missing = [p.name for p in params if p.name not in named]
        if missing:
            raise where.error(f"kernel {self.name}: missing argument(s) {', '.join(missing)}")
        for p in params:
            if not p.shape and not p.is_output:
                named[p.name] = scalar_argument(p, named[p.name], self.name)
            self._check_argument(p, named[p.name])
        # the generated loops write an output while still reading the other arguments (a transpose, a
        # matmul): an output sharing memory with another argument would be silently wrong
        for k, p in enumerate(params):
            for q in params[k + 1:]:
                if (p.is_output or q.is_output) and np.may_share_memory(named[p.name], named[q.name]):
                    out, other = (p, q) if p.is_output else (q, p)
                    raise out.loc.error(f"argument '{out.name}' of kernel {self.name} shares memory with "
                                        f"'{other.name}': expected separate arrays, since the kernel writes "
                                        f"'{out.name}' while it uses '{other.name}' (an inout& parameter "
                                        "is the way to update an array in place)")
        return named

    def _check_argument(self, p: F.Tensor, value) -> None:
        declared = f"{p.dtype}[{', '.join(str(e) if isinstance(e, int) else '?' for e in p.shape)}]"
        expected = f"argument '{p.name}' of kernel {self.name}: expected a {'writable ' if p.is_output else ''}" \
                   f"C-contiguous numpy array of {np.dtype(F.NP_DTYPES[p.dtype]).name} for {declared}"
        if not isinstance(value, np.ndarray):
            raise p.loc.error(f"{expected}, got a {type(value).__name__} (not an ndarray)")
        if value.ndim != len(p.shape):
            raise p.loc.error(f"{expected}, got rank {value.ndim} (shape {value.shape})")
        for axis, extent in enumerate(p.shape):
            if isinstance(extent, int) and value.shape[axis] != extent:
                raise p.loc.error(f"{expected}, got shape {value.shape} (axis {axis} must be {extent})")
        if value.dtype != F.NP_DTYPES[p.dtype]:
            raise p.loc.error(f"{expected}, got {value.dtype} (convert with .astype)")
        if not value.flags.c_contiguous and value.size > 1:
            raise p.loc.error(f"{expected}, got a strided view (use np.ascontiguousarray)")
        if p.is_output and not value.flags.writeable:
            raise p.loc.error(f"{expected}, got a read-only array")

    def __call__(self, *args, **kwargs) -> None:
        named = self.arrays(args, kwargs)
        check_congruence(self.form, named)
        fn = self.compile()
        fn(*[named[p.name] for p in self.form.params], *[c.value for c in self.lowered_form.consts])

    def reference(self, *args, **kwargs) -> dict[str, np.ndarray]:
        """The outputs computed by numpy from the elaborated form (not from the generated code)."""
        named = {p.name: a for p, a in zip(self.form.params, args)}
        named.update(kwargs)
        for p in self.form.params:  # scalars given as numbers, as the compiled kernel takes them
            if not p.shape and not p.is_output and p.name in named:
                named[p.name] = scalar_argument(p, named[p.name], self.name)
        return evaluate(self.form, named)

    def tolerances(self, arrays: dict[str, np.ndarray]) -> dict[str, float]:
        """The relative error (max |got - want| / max |want|) to accept per output when the compiled kernel
        is checked against ``reference`` (``loom ekl run``): ``2 * eps * (n + 8)``, at least 1e-12. ``eps``
        is that of the least precise float type the kernel computes in (f64 when it has none), ``n`` the
        number of terms one element of the output accumulates: a let's reduction extents multiplied, summed
        over the lets the output depends on. The C kernel reduces in loop order in the reduction's own type
        (a sequential sum of n terms is within about n * eps of the exact one, relative to the sum of the
        magnitudes), numpy's reference sums pairwise; 8 covers the element-wise operations."""
        form = self.lowered_form
        float_types = {t.dtype for t in form.params} | {let.target.dtype for let in form.lets}
        float_types |= {x.dtype for let in form.lets for x in F.walk(let.body)}
        eps = max((float(np.finfo(F.NP_DTYPES[d]).eps) for d in float_types if d in ("f32", "f64")),
                  default=float(np.finfo(np.float64).eps))
        producers: dict[int, list[F.Let]] = {}
        for let in form.lets:
            producers.setdefault(id(let.target), []).append(let)

        def terms(tensor: F.Tensor, seen: set[int]) -> int:
            if id(tensor) in seen:
                return 0
            seen.add(id(tensor))
            total = 0
            for let in producers.get(id(tensor), []):
                if let.reductions:
                    total += int(np.prod([extent_value(r.extent, arrays) for r in let.reductions]))
                total += sum(terms(r.tensor, seen) for r in F.reads(let.body))
            return total

        return {t.name: max(1e-12, 2 * eps * (terms(t, set()) + 8)) for t in form.outputs}

    def inputs(self, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Copies of the arrays the kernel reads (inputs and inout&), taken before a call overwrites them:
        what ``reference`` needs."""
        return {p.name: np.array(arrays[p.name]) for p in self.form.params if not p.is_output or p.is_inout}

    def output_shapes(self, arrays: dict[str, np.ndarray]) -> dict[str, tuple[int, ...]]:
        return {t.name: tuple(extent_value(e, arrays) for e in t.shape) for t in self.form.outputs}


def scalar_argument(p: F.Tensor, value, kernel: str):
    """A read-only scalar parameter (``nu : f64``) also takes a Python or numpy scalar of its kind, as a
    0-d array of its dtype: a float for f32/f64 (finite ones must stay finite), an integer for index and
    the integer types (within their range), a bool for bool. Anything else is passed on to be refused."""
    if isinstance(value, np.ndarray) or not np.isscalar(value):
        return value
    dtype = np.dtype(F.NP_DTYPES[p.dtype])
    where = f"argument '{p.name}' of kernel {kernel}"
    spelled = "bool" if p.dtype == "i1" else p.dtype  # as the EKL source names it
    is_bool = isinstance(value, (bool, np.bool_))
    if dtype == np.bool_:
        if not is_bool:
            raise p.loc.error(f"{where}: expected a bool for {spelled}, got {value!r}")
        return np.array(value, dtype)
    if is_bool:
        raise p.loc.error(f"{where}: expected a number for {spelled}, got the bool {value!r}")
    if np.issubdtype(dtype, np.floating):
        if not isinstance(value, (int, float, np.integer, np.floating)):
            return value
        with np.errstate(over="ignore"):
            converted = np.array(value, dtype)
        if np.isinf(converted) and np.isfinite(float(value)):
            raise p.loc.error(f"{where}: {value!r} is outside the range of {spelled} (it would be infinite)")
        return converted
    if not isinstance(value, (int, np.integer)):
        raise p.loc.error(f"{where}: expected an integer for {spelled}, got {value!r}")
    info = np.iinfo(dtype)
    if not info.min <= int(value) <= info.max:
        raise p.loc.error(f"{where}: {value!r} does not fit in {spelled} ([{info.min}, {info.max}])")
    return np.array(int(value), dtype)


def random_arrays(kernel, size: int, seed: int, ranges: dict[str, tuple[float, float]] | None = None
                  ) -> dict[str, np.ndarray]:
    """Uniform [0, 1) floats and random 0/1 indices for every parameter read (inputs, inout&); out& zeroed.
    ``ranges`` draws the named parameters from [lo, hi) instead (index-valued inputs that must stay in a
    table's range: ``{"j": (0, 12)}``); a name that is no parameter is a LoomError."""
    if size < 0:
        raise LoomError(f"size {size}: the size of a dynamic extent cannot be negative", where="size")
    ranges = dict(ranges or {})
    names = {p.name for p in kernel.form.params}
    for name in ranges:
        if name not in names:
            raise LoomError(f"--range {name}: kernel {kernel.name} has no parameter '{name}' "
                            f"(parameters: {', '.join(sorted(names))})", where="--range")
    rng = np.random.default_rng(seed)
    arrays = {}
    extents = congruent_extents(kernel.form, size)
    for p in kernel.form.params:
        shape = tuple(e if isinstance(e, int) else extents[e] for e in p.shape)
        dtype = F.NP_DTYPES[p.dtype]
        lo, hi = ranges.get(p.name, (0.0, 1.0) if np.issubdtype(dtype, np.floating) else (0, 2))
        if p.is_output and not p.is_inout:
            arrays[p.name] = np.zeros(shape, dtype)
        elif np.issubdtype(dtype, np.floating):  # (asarray: a scalar parameter is a 0-d array, not a numpy scalar)
            arrays[p.name] = np.asarray(lo + (hi - lo) * rng.random(shape), dtype=dtype)
        else:
            arrays[p.name] = np.asarray(rng.integers(int(lo), int(hi), shape), dtype=dtype)
    return arrays


def congruent_extents(form: F.Kernel, size: int) -> dict[F.Dim, int]:
    """A size for every '?' extent that the kernel's congruence checks accept: a '?' checked against a
    known extent (``a : f64[?]`` indexed beside ``c : f64[4]``) takes it, the others ``size``."""
    parent: dict[F.Extent, F.Extent] = {}

    def root(e: F.Extent) -> F.Extent:
        while parent.get(e, e) != e:
            e = parent[e]
        return e

    for check in form.checks:
        a, b = root(check.first), root(check.second)
        if a != b:  # a known extent is its class's root
            if isinstance(a, int):
                parent[b] = a
            else:
                parent[a] = b
    dims = {e for p in form.params for e in p.shape if isinstance(e, F.Dim)}
    return {d: r if isinstance(r := root(d), int) else size for d in dims}


def parse_range(text: str) -> tuple[str, tuple[float, float]]:
    """``NAME=LO:HI`` (a half-open range) -> ``(NAME, (LO, HI))``; malformed text is a LoomError."""
    name, eq, bounds = text.partition("=")
    lo, colon, hi = bounds.partition(":")
    try:
        if not (eq and colon and name.strip()):
            raise ValueError
        low, high = float(lo), float(hi)
    except ValueError:
        raise LoomError(f"--range {text!r}: expected NAME=LO:HI (e.g. j_T=0:13)", where="--range") from None
    if not low < high:
        raise LoomError(f"--range {text!r}: LO must be below HI (the range is [LO, HI))", where="--range")
    return name.strip(), (low, high)


class EklModule:
    """Every kernel of one EKL source, as attributes (``module.NAME``) and by ``kernel(name)``."""

    def __init__(self, kernels: list[F.Kernel], filename: str, factorized: bool = True):
        self.filename = filename
        self.kernels = {k.name: EklKernel(k, factorized) for k in kernels}

    def kernel(self, name: str | None = None) -> EklKernel:
        if not self.kernels:
            # an EKL source may hold only types and constants (messner's grammar accepts even an empty
            # file), so loading it is no error; asking it for a kernel is
            raise NoKernelError(f"{f'no kernel {name!r}: ' if name else ''}the source defines no kernel "
                            "(expected 'kernel NAME(parameters) { ... }')", filename=self.filename)
        if name is None:
            if len(self.kernels) != 1:
                raise LoomError(f"{self.filename} defines kernels {', '.join(self.kernels)}; name one of them "
                                "(Python: module.kernel(NAME); loom ekl run/ir/explore: --kernel NAME; loom hls: "
                                "FILE.ekl:NAME)", filename=self.filename)
            return next(iter(self.kernels.values()))
        if name not in self.kernels:
            raise NoKernelError(f"no kernel '{name}' in {self.filename} (kernels: {', '.join(self.kernels)})",
                            filename=self.filename)
        return self.kernels[name]

    def __getattr__(self, name: str) -> EklKernel:
        kernels = self.__dict__.get("kernels")
        if kernels is None or name.startswith("_"):
            raise AttributeError(name)
        return self.kernel(name)


class NoKernelError(LoomError, AttributeError):
    """``module.NAME`` for a kernel the source does not define: a LoomError saying which kernels there are,
    and an AttributeError, so ``hasattr`` and ``getattr(module, NAME, default)`` keep working."""


def load(text_or_path, *, types: dict[str, str] | None = None, factorized: bool = True) -> EklModule:
    """Parse and elaborate EKL source (a string or a ``.ekl`` path). ``types`` rebinds type aliases
    (``{"REAL": "f32"}``), the EKL way of making scalar types parameters."""
    text, filename = _read(text_or_path)
    return EklModule(elaborate(parse(text, filename), types), filename, factorized)
