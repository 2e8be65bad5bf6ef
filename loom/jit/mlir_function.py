"""A function of a textual MLIR module as a kernel (``loom ir|run|build FILE.mlir[:func]``).

``MlirFunction`` offers what the kernel commands use of a ``@loom.kernel``
(``.module``, ``.name``, ``.compile()``, calling it, random arguments), so a
``.mlir`` function is lowered, compiled, run and checked against mlir-runner
exactly like a Python kernel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import ParseError

from loom.jit.random_inputs import random_array
from loom.errors import LoomError

DEFAULT_DIM = 16  # size of a dynamic dim not given with --dims


def parse_context():
    """The context .mlir files are parsed with (loom's: every xDSL dialect and loom's own)."""
    from loom.dialects import context

    return context()


def parse_mlir_file(path: Path) -> ModuleOp:
    from xdsl.parser import Parser

    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise LoomError(f"cannot read {path}: {error}") from None
    try:
        module = Parser(parse_context(), text, str(path)).parse_module()
        module.verify()
    except ParseError as error:
        raise LoomError(f"{path} is not valid MLIR: {str(error).strip()}", filename=str(path)) from None
    except Exception as error:  # xDSL's verifier raises VerifyException (and others) for bad IR
        raise LoomError(f"{path} does not verify: {type(error).__name__}: {str(error).strip()[:500]}",
                        filename=str(path)) from None
    return module


def has_unnamed_dynamic_dims(func: FuncOp) -> bool:
    """Whether some dynamic extent of a memref argument of ``func`` has no ``loom.dims`` name."""
    from loom.dialects.dims import arg_dim_names

    names = arg_dim_names(func)
    for k, ty in enumerate(func.function_type.inputs.data):
        if isinstance(ty, MemRefType):
            axis_names = names[k] or (None,) * len(ty.get_shape())
            if any(d < 0 and not n for d, n in zip(ty.get_shape(), axis_names)):
                return True
    return False


class MlirFunction:
    """One public func.func of a parsed module (whole module kept: it may call private functions)."""

    def __init__(self, path: Path, module: ModuleOp, name: str):
        self.path = path
        self.module = module
        self.name = name
        self.func = next(f for f in module.body.block.ops if isinstance(f, FuncOp) and f.sym_name.data == name)
        self._compiled = None

    @property
    def unnamed_dynamic_dims(self) -> bool:
        """Whether some dynamic extent of a memref argument has no ``loom.dims`` name: then loom
        cannot tell which extents must agree between arguments, and compiles with bounds checks."""
        return has_unnamed_dynamic_dims(self.func)

    def compile(self):
        if self._compiled is None:
            from loom.backends.c import compile_module
            from loom.passes.recipes import lower_to_c

            checked = True if self.unnamed_dynamic_dims else None
            # data-placed indices checked as a Python kernel's are (loom.backends.c.gathers)
            self._compiled = compile_module(lower_to_c(self.module), checked=checked,
                                            check_gathers=True).function(self.name)
        return self._compiled

    def __call__(self, *args):
        return self.compile()(*args)

    def random_arguments(self, values: dict[str, int], rng: np.random.Generator) -> list:
        """Arrays for memref arguments (dynamic dims from ``values`` by their ``loom.dims`` name, else
        DEFAULT_DIM), random scalars (index scalars 0: they are usually positions)."""
        from loom.backends.c.c_types import memref_info, scalar_type
        from loom.dialects.dims import arg_dim_names

        names = arg_dim_names(self.func)
        args: list = []
        for k, ty in enumerate(self.func.function_type.inputs.data):
            where = f"argument {k} of @{self.name}"
            if isinstance(ty, MemRefType):
                info = memref_info(ty, where)
                axis_names = names[k] or (None,) * info.rank
                shape = tuple(d if d is not None else values.get(n or "", DEFAULT_DIM)
                              for d, n in zip(info.shape, axis_names))
                args.append(random_array(rng, info.elem.np_dtype, shape))
            else:
                st = scalar_type(ty, where)
                args.append(st.np_dtype.type(0) if st.mlir == "index" else random_array(rng, st.np_dtype, ())[()])
        return args


def public_functions(module: ModuleOp) -> list[str]:
    """Names of the module's public functions that have a body."""
    return [f.sym_name.data for f in module.body.block.ops
            if isinstance(f, FuncOp) and f.body.blocks and (f.sym_visibility is None
                                                            or f.sym_visibility.data == "public")]


def load_mlir_target(path: Path, name: str | None) -> MlirFunction:
    module = parse_mlir_file(path)
    public = public_functions(module)
    if name is None:
        if len(public) != 1:
            raise LoomError(f"{path} has {len(public)} public functions ({', '.join(public) or 'none'}): "
                            f"name one as {path}:FUNC", filename=str(path))
        name = public[0]
    if name not in public:
        raise LoomError(f"{path} has no public function @{name} (has: {', '.join(public) or 'none'})",
                        filename=str(path))
    return MlirFunction(path, module, name)

