"""The simulator's shared-object model glue (loom_sim_use_shared_model, model_shared.c): objects
that cannot be loaded or lack the loom_model.h symbols are LoomErrors naming the file and the symbol."""

from __future__ import annotations

import pytest

from loom.errors import LoomError
from loom.runtime.build import build_library, load_library
from loom.runtime.host import use_shared_model


def test_a_missing_object_is_a_loom_error(tmp_path):
    lib = load_library()
    with pytest.raises(LoomError, match=r"cannot load .*nothing\.so"):
        use_shared_model(lib, tmp_path / "nothing.so", "{}")


def test_an_object_without_the_model_symbols_is_a_loom_error():
    lib = load_library()
    runtime = build_library()  # a real shared object, but not a model
    with pytest.raises(LoomError, match=r"does not export loom_model_create \(see loom_model.h\)"):
        use_shared_model(lib, runtime, "{}")

