"""A torch model defined in a user's ``.py`` file (``loom model run model.py``).

The file provides the model as a function or an ``nn.Module`` subclass callable without arguments:
``--model NAME`` picks one; otherwise a function named ``model`` is used, else the file's only such
``nn.Module`` subclass. Errors in the file are ``file:line`` LoomErrors (``loom.core.user_files``).
"""

from __future__ import annotations

import inspect
from pathlib import Path

from loom.core.user_files import import_user_file, run_user_code
from loom.errors import LoomError


def load_torch_model(path: str | Path, name: str | None = None):
    import torch

    module = import_user_file(path)
    if name is None:
        if callable(getattr(module, "model", None)):
            name = "model"
        else:
            classes = [n for n, v in vars(module).items() if inspect.isclass(v) and issubclass(v, torch.nn.Module)
                       and v.__module__ == module.__name__]
            if len(classes) != 1:
                raise LoomError(f"define a function `model()` returning the torch module, or name one with "
                                f"--model (nn.Module classes here: {', '.join(classes) or 'none'})",
                                filename=str(path))
            name = classes[0]
    factory = getattr(module, name, None)
    if not callable(factory):
        raise LoomError(f"{name!r} is not a function or class in this file", filename=str(path))
    model = run_user_code(factory, path, f"calling {name}()")
    if not isinstance(model, torch.nn.Module):
        raise LoomError(f"{name}() returned a {type(model).__name__}, not a torch.nn.Module", filename=str(path))
    return model.eval()
