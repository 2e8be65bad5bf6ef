"""What a kernel target names: a built-in example, ``path/file.py:kernel`` or ``path/file.mlir[:func]``.

The one resolver of kernel targets, used by ``loom ir|run``, ``loom accel`` and ``loom build``.
"""

from __future__ import annotations

from pathlib import Path

from loom.core.user_files import import_user_file, is_file
from loom.errors import LoomError


def resolve_kernel(target: str):
    """``(kernel, example or None)``: a built-in example's kernel with its example, or the user's
    ``@loom.kernel`` / the public function of a ``.mlir`` file."""
    from loom.examples.kernels import EXAMPLES

    if target in EXAMPLES:
        return EXAMPLES[target].kernel, EXAMPLES[target]
    if ":" not in target and not target.endswith(".mlir"):
        raise LoomError(f"unknown kernel '{target}': expected a built-in example ({', '.join(sorted(EXAMPLES))}) "
                        "or path/to/file.py:kernel_name")
    path_text, name = target.rsplit(":", 1) if ":" in target else (target, None)
    path = Path(path_text)
    if not is_file(path):
        raise LoomError(f"no such file: {path}")
    if path.suffix == ".mlir":
        from loom.jit.mlir_function import load_mlir_target

        return load_mlir_target(path, name or None), None
    if path.suffix != ".py" or not name:
        raise LoomError(f"expected path/to/file.py:kernel_name or path/to/file.mlir[:func], got '{target}'")
    return user_kernel(path, name), None


def user_kernels(path: Path) -> dict:
    """Every ``@loom.kernel`` defined at the top level of the Python file ``path``, by name."""
    from loom.jit import Kernel

    module = import_user_file(path)
    return {name: value for name, value in vars(module).items() if isinstance(value, Kernel)}


def user_kernel(path: Path, name: str):
    kernels = user_kernels(path)
    if name not in kernels:
        raise LoomError(f"{path} has no @loom.kernel named '{name}' (kernels there: {', '.join(kernels) or 'none'})")
    return kernels[name]
