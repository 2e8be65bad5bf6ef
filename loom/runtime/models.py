"""Behaviour models of accelerators: chosen by the description's ``"model"``, run through one interface.

Every model, whatever it is written in, reaches the C runtime as a ``loom_model_vtable``
(the ``loom_model.h`` functions as pointers, ``dma_runtime.h``) selected with
``loom_sim_use_model_vtable``: a C source compiled into its own cached shared object, a
prebuilt shared object (``load_shared_model``: an RTL simulation exporting the same
symbols), or a Python class behind ctypes callbacks (``loom.runtime.python_model``).

``MODEL_KINDS`` maps the kind of a ``"model"`` entry to its factory
``factory(spec, accelerator, base_dir) -> RuntimeModel``; ``register_model_kind`` adds one.
Shipped kinds: ``builtin`` (``loom/runtime/models/*.c``, each declaring the kernel it
computes), ``c``, ``python``, ``generic`` and ``verilator`` (a SystemVerilog design
Verilated into a shared object, ``loom.runtime.rtl.verilator_kind``). ``model_for(acc)``
resolves an accelerator's model, or raises a LoomError saying what to add.
"""

from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from loom.accel.description import AcceleratorDescription
from loom.accel.kernels import KernelSpec, named_kernel
from loom.accel.model_spec import ModelSpec
from loom.core import compile_cache
from loom.errors import LoomError

MODELS_DIR = Path(__file__).resolve().parent / "models"

# the loom_model.h functions as ctypes prototypes (state pointers are c_void_p)
CREATE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int)
CONSUME = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                           ctypes.c_int)
PENDING = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)
PRODUCE = CONSUME
DESTROY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
COUNTER = PENDING
IDLE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)


class ModelVTable(ctypes.Structure):
    """``loom_model_vtable`` of ``dma_runtime.h`` (same field order)."""

    _fields_ = [("create", CREATE), ("consume", CONSUME), ("pending", PENDING), ("produce", PRODUCE),
                ("destroy", DESTROY), ("macs", COUNTER), ("cycles", COUNTER), ("idle", IDLE)]


class RuntimeModel:
    """A model ready to run: its vtable, the name its errors carry and its configuration JSON.

    ``select(lib)`` makes it the simulated accelerator of a loaded runtime library; the
    object keeps alive whatever the vtable points into (a shared object, callbacks)."""

    def __init__(self, name: str, vtable: ModelVTable, config: dict[str, Any], keep: Any = None,
                 kernel: KernelSpec | None = None):
        self.name = name
        self.vtable = vtable
        self.config = config
        self.config_json = json.dumps(config, separators=(",", ":"))
        self.kernel = kernel  # the kernel the model computes, when it declares one
        self._keep = keep

    def select(self, lib: ctypes.CDLL) -> None:
        from loom.runtime.host import raise_on_error

        lib.loom_sim_use_model_vtable(ctypes.addressof(self.vtable), self.name.encode(), self.config_json.encode())
        raise_on_error(lib)
        _selected[id(lib)] = self  # the runtime holds our pointers until the next selection

    def __repr__(self) -> str:
        return f"<model {self.name}: {self.config.get('model')}>"


_selected: dict[int, RuntimeModel] = {}


def model_config(acc: AcceleratorDescription, model_text: str) -> dict[str, Any]:
    """What a model's create receives (flat keys first; ``loom_model_json.h`` relies on that order)."""
    return {
        "name": acc.name,
        "data_type": acc.data_type,
        "model": model_text,
        "dims": list(acc.dims),
        "tile": [t.nominal or 0 for t in acc.tiles.tiles],
        "description": {
            "kernel": acc.kernel.name,
            "iterator_types": list(acc.kernel.iterator_types),
            "body": acc.kernel.body,
            "operands": [{"name": o.name, "subscripts": [str(s) for s in o.subscripts], "output": o.is_output}
                         for o in acc.operands],
            "opcode_map": acc.opcode_map_text,
        },
    }


# ------------------------------------------------------------------------------ shared objects
def _symbol(lib: ctypes.CDLL, name: str, proto: Any, path: str, required: bool) -> Any:
    try:
        return ctypes.cast(getattr(lib, name), proto)
    except AttributeError:
        if required:
            raise LoomError(f"the model does not export {name} (see loom/runtime/loom_model.h)",
                            filename=path) from None
        return proto()  # NULL: not reported


def load_shared_model(so_path: str | Path, description: AcceleratorDescription, *,
                      model_text: str | None = None, kernel: KernelSpec | None = None) -> RuntimeModel:
    """A prebuilt shared object exporting the ``loom_model.h`` symbols, as a model of ``description``."""
    path = str(so_path)
    try:
        lib = ctypes.CDLL(path)
    except OSError as err:
        raise LoomError(f"cannot load the model's shared object: {err}", filename=path) from None
    vt = ModelVTable(
        _symbol(lib, "loom_model_create", CREATE, path, True), _symbol(lib, "loom_model_consume", CONSUME, path, True),
        _symbol(lib, "loom_model_pending", PENDING, path, True), _symbol(lib, "loom_model_produce", PRODUCE, path, True),
        _symbol(lib, "loom_model_destroy", DESTROY, path, True), _symbol(lib, "loom_model_macs", COUNTER, path, False),
        _symbol(lib, "loom_model_cycles", COUNTER, path, False), _symbol(lib, "loom_model_idle", IDLE, path, False))
    return RuntimeModel(description.name, vt, model_config(description, model_text or f"so:{path}"), keep=lib,
                        kernel=kernel)


def build_c_model(source: str | Path) -> Path:
    """A model's C file compiled into its own cached shared object (``loom.core.compile_cache``)."""
    from loom.runtime.build import RUNTIME_DIR, compile_flags, runtime_headers

    source = Path(source)
    if not source.is_file():
        raise LoomError("cannot read the C model: no such file", filename=str(source))
    return compile_cache.shared_object(std="c11", flags=compile_flags() + [f"-I{RUNTIME_DIR}"], files=[source.resolve()],
                                       depends=runtime_headers(), stem=f"model_{source.stem}-")


def compile_c_model(source: str | Path, description: AcceleratorDescription, *, model_text: str | None = None,
                    kernel: KernelSpec | None = None) -> RuntimeModel:
    """A user's (or a shipped) C model: compiled and cached, loaded side by side with other models."""
    return load_shared_model(build_c_model(source), description, model_text=model_text or f"c:{source}",
                             kernel=kernel)


# ------------------------------------------------------------------------------ the kinds
@dataclass(frozen=True)
class Builtin:
    """A shipped C model: its source under ``loom/runtime/models`` and the kernel it computes."""

    source: str
    kernel: str
    data_types: tuple[str, ...] = ("i32", "f32")


BUILTIN_MODELS: dict[str, Builtin] = {
    **{f"matmul_v{v}": Builtin("matmul.c", "matmul") for v in (1, 2, 3, 4)},
    "conv2d": Builtin("conv.c", "conv_2d_nchw_fchw"),
}


def _builtin(spec: ModelSpec, acc: AcceleratorDescription, base_dir: str | None) -> RuntimeModel:
    name = str(spec.argument)
    if name not in BUILTIN_MODELS:
        from loom.core.text import did_you_mean
        raise spec.fail(f"unknown built-in model {name!r}; expected one of {', '.join(BUILTIN_MODELS)}"
                        f"{did_you_mean(name, BUILTIN_MODELS)}")
    builtin = BUILTIN_MODELS[name]
    kernel, _ = named_kernel(builtin.kernel)
    check_kernel(acc, kernel, spec.text, spec)
    if acc.data_type not in builtin.data_types:
        raise spec.fail(f"model {spec.text} takes data types {', '.join(builtin.data_types)}, "
                        f"the accelerator has {acc.data_type}")
    if name in ("matmul_v1", "matmul_v2", "matmul_v3"):  # fixed square tiles, checked before running
        sizes = {t.size if t.kind == "fixed" else None for t in acc.tiles.tiles}
        if len(sizes) != 1 or sizes.pop() not in (4, 8, 16):
            raise spec.fail(f"model {spec.text} takes square fixed tiles of 4, 8 or 16; the accelerator's tile "
                            f"sizes are {', '.join(f'{t.dim}={t.size or t.kind}' for t in acc.tiles.tiles)}")
    return compile_c_model(MODELS_DIR / builtin.source, acc, model_text=spec.text, kernel=kernel)


def _c(spec: ModelSpec, acc: AcceleratorDescription, base_dir: str | None) -> RuntimeModel:
    path = spec.file()
    if not Path(path).is_file():
        raise spec.fail(f"the C model {spec.argument!r} does not exist (looked for {path})")
    return compile_c_model(path, acc, model_text=spec.text)


def _python(spec: ModelSpec, acc: AcceleratorDescription, base_dir: str | None) -> RuntimeModel:
    from loom.core.user_files import import_user_file
    from loom.runtime.python_model import python_model

    path = spec.file()
    class_name = str(spec.argument).rsplit(":", 1)[1]
    if not Path(path).is_file():
        raise spec.fail(f"the Python model file of {spec.argument!r} does not exist (looked for {path})")
    module = import_user_file(path)
    cls = getattr(module, class_name, None)
    if cls is None:
        names = [n for n, v in vars(module).items() if isinstance(v, type) and v.__module__ == module.__name__]
        raise spec.fail(f"{path} defines no class {class_name!r} (classes: {', '.join(names) or 'none'})")
    return python_model(cls, acc, model_text=spec.text)


def _generic(spec: ModelSpec, acc: AcceleratorDescription, base_dir: str | None) -> RuntimeModel:
    from loom.runtime.generic_model import GenericModel
    from loom.runtime.python_model import python_model

    GenericModel.check(acc)
    return python_model(GenericModel, acc, model_text="generic")


def _verilator(spec: ModelSpec, acc: AcceleratorDescription, base_dir: str | None) -> RuntimeModel:
    from loom.runtime.rtl import verilator_kind  # Verilator's tooling is looked for only when a description asks

    return verilator_kind(spec, acc, base_dir)


ModelFactory = Callable[[ModelSpec, AcceleratorDescription, "str | None"], RuntimeModel]
MODEL_KINDS: dict[str, ModelFactory] = {"builtin": _builtin, "c": _c, "python": _python, "generic": _generic}


def register_model_kind(kind: str, factory: ModelFactory) -> None:
    """Make ``"model": {kind: ...}`` (or ``"kind:..."``) resolve through ``factory``."""
    MODEL_KINDS[kind] = factory


register_model_kind("verilator", _verilator)  # RTL co-simulation (loom.runtime.rtl, the `rtl` extra)

MODEL_FORMS = ('"generic" (with "opcode_semantics")', '"builtin:NAME" (' + ", ".join(BUILTIN_MODELS) + ")",
               '{"python": "file.py:ClassName"}', '{"c": "file.c"}',
               '{"verilator": {"sources": ["design.sv"], "top": "NAME", "parameters": {...}}}')


def model_for(acc: AcceleratorDescription, override: Any = None) -> RuntimeModel:
    """The model of ``acc``: ``override`` (a RuntimeModel, a Python model class or instance) or the
    description's ``"model"``. No model is a LoomError saying what to add."""
    if override is not None:
        if isinstance(override, RuntimeModel):
            return override
        from loom.runtime.python_model import python_model
        return python_model(override, acc)
    spec = acc.model
    if spec is None:
        raise LoomError(f"no simulator model for accelerator {acc.name} (kernel {acc.kernel.name}): its description "
                        f"has no \"model\"; add \"model\": one of {', '.join(MODEL_FORMS)} to the accelerator "
                        "(paths relative to the description file), or pass model= to compile_driver",
                        where=acc.path("model"), filename=acc.filename)
    factory = MODEL_KINDS.get(spec.kind)
    if factory is None:
        from loom.core.text import did_you_mean
        raise spec.fail(f"unknown model kind {spec.kind!r}; known kinds: {', '.join(MODEL_KINDS)}"
                        f"{did_you_mean(spec.kind, MODEL_KINDS)}")
    base_dir = spec.base_dir
    return factory(spec, acc, base_dir)


def check_kernel(acc: AcceleratorDescription, kernel: KernelSpec, model_text: str, spec: ModelSpec | None = None) -> None:
    """Reject a description whose kernel (maps, iterators, body) differs from the one its model computes."""
    mine = acc.kernel
    problem = None
    if len(mine.dims) != len(kernel.dims) or mine.n_operands != kernel.n_operands:
        problem = f"{len(mine.dims)} loops and {mine.n_operands} operands, the model {len(kernel.dims)} and " \
                  f"{kernel.n_operands}"
    else:
        renamed = kernel.renamed(mine.dims)
        for k, (a, b) in enumerate(zip(mine.indexing_maps, renamed.indexing_maps)):
            if a.results != b.results:
                name = acc.operands[k].name
                problem = (f"operand {name} is indexed [{', '.join(map(str, a.results))}], the model's "
                           f"[{', '.join(map(str, b.results))}]")
                break
        else:
            if mine.iterator_types != renamed.iterator_types:
                problem = f"iterator types {list(mine.iterator_types)}, the model's {list(renamed.iterator_types)}"
            elif mine.body != kernel.body or mine.n_inputs != kernel.n_inputs:
                problem = f"body {mine.body} with {mine.n_inputs} inputs, the model's {kernel.body} with {kernel.n_inputs}"
    if problem:
        message = (f"accelerator {acc.name}'s kernel disagrees with its model {model_text} "
                   f"(which computes {kernel.name}): {problem}")
        raise spec.fail(message) if spec else LoomError(message, where=acc.path("kernel"), filename=acc.filename)
